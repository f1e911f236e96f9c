/* Printing arrays: tostring(x) and the print options it follows,
 * ml.set_printoptions{precision=, threshold=, edgeitems=, linewidth=,
 * sci_mode=} and ml.get_printoptions() (see core/format.h).
 *
 * As NumPy's set_printoptions, an option left out keeps its value, except
 * sci_mode, which as in PyTorch is automatic unless given (true forces the
 * scientific format, false forbids it). math.huge stands for "no limit" in
 * threshold and linewidth. A bad option raises and changes nothing. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/copy.h"
#include "../core/format.h"
#include "l_array.h"

static ml_print_options options = ML_PRINT_DEFAULTS;

int l_array_tostring(lua_State *L) {
  ml_array *a = l_testarray(L, 1);
  if (!a) return luaL_typeerror(L, 1, ML_ARRAY_MT);
  if (!a->storage) {
    lua_pushliteral(L, "[freed array]");
    return 1;
  }
  ml_array *host = l_newarray(L);
  l_check(L, ml_to_device(host, a, ml_cpu()));
  char *s;
  l_check(L, ml_format(host, ml_array_device(a), &options, &s));
  lua_pushstring(L, s);
  free(s);
  return 1;
}

/* The integer option `name` on top of the stack, in [lo, hi]; with
 * unlimited, math.huge too, which gives INT64_MAX. what: the rule, for
 * the message. */
static int64_t check_count(lua_State *L, const char *name, int64_t lo,
                           int64_t hi, int unlimited, const char *what) {
  if (lua_type(L, -1) != LUA_TNUMBER)
    return luaL_error(L, "set_printoptions: %s must be %s (got %s)", name,
                      what, luaL_typename(L, -1));
  int isint;
  lua_Integer v = lua_tointegerx(L, -1, &isint);
  if (isint && v >= lo && v <= hi) return v;
  if (unlimited && lua_tonumber(L, -1) == HUGE_VAL) return INT64_MAX;
  return luaL_error(L, "set_printoptions: %s must be %s (got %s)", name, what,
                    luaL_tolstring(L, -1, NULL));
}

static int set_printoptions(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  l_checkoptions(L, 1, "set_printoptions");
  ml_print_options o = options;
  if (lua_getfield(L, 1, "precision") != LUA_TNIL)
    o.precision = (int)check_count(L, "precision", 0, ML_FORMAT_PRECISION_MAX,
                                   0, "an integer from 0 to 50");
  if (lua_getfield(L, 1, "threshold") != LUA_TNIL)
    o.threshold = check_count(L, "threshold", 0, INT64_MAX, 1,
                              "a nonnegative integer or math.huge");
  if (lua_getfield(L, 1, "edgeitems") != LUA_TNIL)
    o.edgeitems = check_count(L, "edgeitems", 0, INT_MAX, 0,
                              "a nonnegative integer");
  if (lua_getfield(L, 1, "linewidth") != LUA_TNIL)
    o.linewidth = check_count(L, "linewidth", 1, INT64_MAX, 1,
                              "a positive integer or math.huge");
  switch (lua_getfield(L, 1, "sci_mode")) {
    case LUA_TNIL: o.sci_mode = ML_SCI_AUTO; break;
    case LUA_TBOOLEAN:
      o.sci_mode = lua_toboolean(L, -1) ? ML_SCI_ALWAYS : ML_SCI_NEVER;
      break;
    default:
      return luaL_error(L, "set_printoptions: sci_mode must be true, false "
                        "or nil (got %s)", luaL_typename(L, -1));
  }
  options = o;
  return 0;
}

static void push_count(lua_State *L, int64_t v) {
  if (v == INT64_MAX)
    lua_pushnumber(L, HUGE_VAL);
  else
    lua_pushinteger(L, (lua_Integer)v);
}

static int get_printoptions(lua_State *L) {
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, options.precision);
  lua_setfield(L, -2, "precision");
  push_count(L, options.threshold);
  lua_setfield(L, -2, "threshold");
  push_count(L, options.edgeitems);
  lua_setfield(L, -2, "edgeitems");
  push_count(L, options.linewidth);
  lua_setfield(L, -2, "linewidth");
  if (options.sci_mode != ML_SCI_AUTO) {
    lua_pushboolean(L, options.sci_mode == ML_SCI_ALWAYS);
    lua_setfield(L, -2, "sci_mode");
  }
  return 1;
}

void l_open_format(lua_State *L, int module) {
  static const luaL_Reg funcs[] = {{"set_printoptions", set_printoptions},
                                   {"get_printoptions", get_printoptions},
                                   {NULL, NULL}};
  l_setfuncs(L, module, funcs);
}
