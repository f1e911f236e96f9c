/* The array userdata: its metatable, lifetime, properties, and the argument
 * helpers shared by every binding area. */
#include "l_array.h"

#include <string.h>

#include "../core/copy.h"
#include "../core/view.h"

/* The metatable is also kept in the registry under this address: a lookup
 * by pointer skips the string cache that luaL_testudata goes through,
 * which is a tenth of the cost of a tiny operation. */
static const char array_mt_key = 0;

/* The address of the metatable of the state that opened moonlab last
 * (NULL once that state is closed): comparing with it skips even the
 * registry lookup, another tenth; other states' arrays take the lookup. */
static const void *array_mt;

ml_array *l_testarray(lua_State *L, int idx) {
  void *p = lua_touserdata(L, idx);
  if (!p || !lua_getmetatable(L, idx)) return NULL;
  int same = lua_topointer(L, -1) == array_mt;
  if (!same) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &array_mt_key);
    same = lua_rawequal(L, -1, -2);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return same ? p : NULL;
}

/* __gc of the sentinel that holds its state's metatable address: the
 * state is closing, and the metatable will be freed. */
static int forget_metatable(lua_State *L) {
  const void **mt = lua_touserdata(L, 1);
  if (array_mt == *mt) array_mt = NULL;
  return 0;
}

ml_array *l_checkarray(lua_State *L, int idx) {
  ml_array *a = l_testarray(L, idx);
  if (!a) luaL_typeerror(L, idx, ML_ARRAY_MT);
  if (!a->storage) luaL_argerror(L, idx, "array was freed");
  return a;
}

ml_array *l_newarray(lua_State *L) {
  ml_array *a = lua_newuserdatauv(L, sizeof *a, 0);
  a->storage = NULL;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &array_mt_key);
  lua_setmetatable(L, -2);
  return a;
}

/* The string key under which the table on top holds the value at fidx,
 * or NULL; pops the table. */
static const char *key_of(lua_State *L, int fidx) {
  const char *found = NULL;
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (!found && lua_next(L, -2)) {
      if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fidx))
        found = lua_tostring(L, -2);
      lua_pop(L, 1);
    }
    if (found) lua_pop(L, 1); /* the key lua_next left */
  }
  lua_pop(L, 1);
  return found;
}

const char *l_opname(lua_State *L) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "nf", &ar)) return "moonlab";
  /* a local or an upvalue names an alias (local z = ml.zeros): look the
   * function up, as for a call without a name (pcall(ml.zeros, ...)) */
  int alias = !ar.name || strcmp(ar.namewhat, "local") == 0 ||
              strcmp(ar.namewhat, "upvalue") == 0;
  const char *name = alias ? NULL : ar.name;
  int f = lua_gettop(L);
  if (!name) {
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "moonlab");
    lua_remove(L, -2);
    name = key_of(L, f);
  }
  if (!name && lua_rawgetp(L, LUA_REGISTRYINDEX, &array_mt_key) == LUA_TTABLE) {
    lua_getfield(L, -1, "methods");
    lua_remove(L, -2);
    name = key_of(L, f);
  } else if (!name) {
    lua_pop(L, 1);
  }
  lua_pop(L, 1); /* the function */
  if (!name) name = ar.name;
  /* x[k] = v runs as the metamethod "newindex": to the user it is x[k] */
  if (name && strcmp(ar.namewhat, "metamethod") == 0 &&
      strcmp(name, "newindex") == 0)
    name = "index";
  return name ? name : "moonlab";
}

/* Whether msg starts with a name and a colon ("add: ..."), as the core's
 * messages do but for a few low-level ones. */
static int names_op(const char *msg) {
  const char *colon = strstr(msg, ": ");
  return colon && colon > msg && !memchr(msg, ' ', (size_t)(colon - msg));
}

int l_raise(lua_State *L, int status) {
  (void)status;
  const char *msg = ml_last_error();
  if (names_op(msg)) return luaL_error(L, "%s", msg);
  return luaL_error(L, "%s: %s", l_opname(L), msg);
}

int l_raise_as(lua_State *L, const char *op) {
  const char *msg = ml_last_error();
  if (names_op(msg)) msg = strstr(msg, ": ") + 2;
  return luaL_error(L, "%s: %s", op, msg);
}

ml_scalar l_checkscalar(lua_State *L, int idx) {
  if (lua_isinteger(L, idx)) return ml_scalar_int(lua_tointeger(L, idx));
  if (lua_type(L, idx) == LUA_TBOOLEAN) return ml_scalar_int(lua_toboolean(L, idx));
  return ml_scalar_float(luaL_checknumber(L, idx));
}

void l_pushscalar(lua_State *L, ml_scalar s) {
  if (s.is_int)
    lua_pushinteger(L, s.i);
  else
    lua_pushnumber(L, s.f);
}

ml_array *l_toarray(lua_State *L, int idx, const ml_array *like) {
  idx = lua_absindex(L, idx);
  ml_array *a = l_testarray(L, idx);
  if (a) {
    if (!a->storage) luaL_argerror(L, idx, "array was freed");
    return a;
  }
  ml_device dev = like ? ml_array_device(like) : ml_default_device();
  if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TBOOLEAN) {
    ml_scalar s = l_checkscalar(L, idx);
    ml_dtype t = like ? ml_dtype_with_scalar(like->dtype, s)
                      : (s.is_int ? ML_INT64 : ml_default_dtype());
    a = l_newarray(L);
    l_check(L, ml_full(a, t, 0, NULL, dev, s));
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    a = l_newarray(L);
    l_array_from_table(L, idx, ML_NDTYPES, dev, a);
  } else {
    luaL_typeerror(L, idx, "array, number or table");
  }
  lua_replace(L, idx);
  return l_testarray(L, idx);
}

ml_array *l_tosource(lua_State *L, int idx, const ml_array *dst) {
  idx = lua_absindex(L, idx);
  int t = lua_type(L, idx);
  if (t != LUA_TNUMBER && t != LUA_TBOOLEAN && t != LUA_TTABLE)
    return l_toarray(L, idx, dst);
  ml_array *a = l_newarray(L);
  if (t == LUA_TTABLE)
    l_array_from_table(L, idx, dst->dtype, ml_array_device(dst), a);
  else
    l_check(L, ml_full(a, dst->dtype, 0, NULL, ml_array_device(dst),
                       l_checkscalar(L, idx)));
  lua_replace(L, idx);
  return l_testarray(L, idx);
}

int l_isoptions(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE || l_testarray(L, idx)) return 0;
  int has_first = lua_rawgeti(L, idx, 1) != LUA_TNIL;
  lua_pop(L, 1);
  if (has_first) return 0;
  lua_pushnil(L);
  if (!lua_next(L, idx)) return 0; /* {} is an empty shape, not options */
  lua_pop(L, 2);
  return 1;
}

int l_lastpositional(lua_State *L) {
  int top = lua_gettop(L);
  if (top > 0 && l_isoptions(L, top)) return top - 1;
  /* Alone, {} is an empty shape; after other arguments, empty options
   * (such as {dtype = nil}). */
  if (top > 1 && lua_type(L, top) == LUA_TTABLE && !l_testarray(L, top) &&
      lua_rawlen(L, top) == 0)
    return top - 1;
  return top;
}

static int optfield(lua_State *L, int opts, const char *name) {
  if (opts == 0 || lua_type(L, opts) != LUA_TTABLE) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  return lua_getfield(L, opts, name);
}

ml_dtype l_checkdtype(lua_State *L, int idx) {
  const char *name = luaL_checkstring(L, idx);
  ml_dtype t;
  if (!ml_dtype_parse(name, &t))
    luaL_error(L,
               "%s: unknown dtype '%s' (float32, float64, int32, int64, uint8)",
               l_opname(L), name);
  return t;
}

ml_device l_checkdevice(lua_State *L, int idx) {
  const char *name = luaL_checkstring(L, idx);
  ml_device d;
  if (!ml_device_parse(name, &d))
    luaL_error(L, "%s: unknown device '%s' (cpu, cuda, cuda:N)", l_opname(L),
               name);
  return d;
}

ml_dtype l_optdtype(lua_State *L, int opts, ml_dtype dflt) {
  ml_dtype t = dflt;
  if (optfield(L, opts, "dtype") != LUA_TNIL) t = l_checkdtype(L, -1);
  lua_pop(L, 1);
  return t;
}

ml_device l_optdevice(lua_State *L, int opts, ml_device dflt) {
  ml_device d = dflt;
  if (optfield(L, opts, "device") != LUA_TNIL) d = l_checkdevice(L, -1);
  lua_pop(L, 1);
  return d;
}

int l_optbool(lua_State *L, int opts, const char *name, int dflt) {
  int v = dflt;
  if (optfield(L, opts, name) != LUA_TNIL) v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

lua_Integer l_optinteger(lua_State *L, int opts, const char *name,
                         lua_Integer dflt) {
  lua_Integer v = dflt;
  if (optfield(L, opts, name) != LUA_TNIL) {
    int ok;
    v = lua_tointegerx(L, -1, &ok);
    if (!ok)
      luaL_error(L, "%s: option '%s' must be an integer", l_opname(L), name);
  }
  lua_pop(L, 1);
  return v;
}

static int64_t shape_entry(lua_State *L, int idx, const char *op) {
  int ok;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) luaL_error(L, "%s: shape entries must be integers", op);
  if (v < 0)
    luaL_error(L, "%s: negative dimension %I in shape", op, (LUAI_UACINT)v);
  return v;
}

int l_checkshape(lua_State *L, int first, int last, int64_t *shape,
                 const char *op) {
  int n = 0;
  if (first <= last && lua_type(L, first) == LUA_TTABLE) {
    n = (int)lua_rawlen(L, first);
    if (n > ML_MAX_DIMS) luaL_error(L, "%s: arrays have at most %d dimensions", op, ML_MAX_DIMS);
    for (int i = 0; i < n; i++) {
      lua_rawgeti(L, first, i + 1);
      shape[i] = shape_entry(L, -1, op);
      lua_pop(L, 1);
    }
    return n;
  }
  for (int i = first; i <= last; i++) {
    if (n == ML_MAX_DIMS) luaL_error(L, "%s: arrays have at most %d dimensions", op, ML_MAX_DIMS);
    shape[n++] = shape_entry(L, i, op);
  }
  return n;
}

int l_checkdim(lua_State *L, int idx, int ndim_ext, const char *op) {
  lua_Integer d = luaL_checkinteger(L, idx);
  if (d == 0) luaL_error(L, "%s: dimensions are 1-based (got 0)", op);
  int out;
  l_check(L, ml_norm_dim(op, d > 0 ? d - 1 : d, ndim_ext, &out));
  return out;
}

void l_pushshape(lua_State *L, const ml_array *a) {
  lua_createtable(L, a->ndim, 0);
  for (int d = 0; d < a->ndim; d++) {
    lua_pushinteger(L, a->shape[d]);
    lua_rawseti(L, -2, d + 1);
  }
}

void l_setfuncs(lua_State *L, int idx, const luaL_Reg *fns) {
  idx = lua_absindex(L, idx);
  for (; fns->name; fns++) {
    lua_pushcfunction(L, fns->func);
    lua_setfield(L, idx, fns->name);
  }
}

/* ---- metamethods ---- */

static int array_gc(lua_State *L) {
  ml_array *a = l_testarray(L, 1);
  if (!a) return luaL_typeerror(L, 1, ML_ARRAY_MT);
  ml_array_release(a);
  return 0;
}

/* The properties that x.name serves besides the methods. */
enum { PROP_SHAPE, PROP_DTYPE, PROP_NDIM, PROP_DEVICE, NPROPS };
static const char *const property_names[NPROPS] = {
    [PROP_SHAPE] = "shape", [PROP_DTYPE] = "dtype", [PROP_NDIM] = "ndim",
    [PROP_DEVICE] = "device"};

static int push_property(lua_State *L, const ml_array *a, const char *key) {
  char buf[ML_DEVICE_NAME_MAX];
  int p = 0;
  while (p < NPROPS && strcmp(key, property_names[p]) != 0) p++;
  switch (p) {
    case PROP_SHAPE: l_pushshape(L, a); break;
    case PROP_DTYPE: lua_pushstring(L, ml_dtype_name(a->dtype)); break;
    case PROP_NDIM: lua_pushinteger(L, a->ndim); break;
    case PROP_DEVICE:
      lua_pushstring(L, ml_device_name(ml_array_device(a), buf));
      break;
    default: return 0;
  }
  return 1;
}

/* x.name: a method, else a property; anything else is a subscript. */
static int array_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    ml_array *a = l_testarray(L, 1);
    if (a && a->storage && push_property(L, a, lua_tostring(L, 2))) return 1;
    lua_pushnil(L);
    return 1;
  }
  return l_subscript_get(L);
}

static int array_newindex(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING)
    return luaL_error(L, "cannot set field '%s' of an array", lua_tostring(L, 2));
  return l_subscript_set(L);
}

static int array_len(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (a->ndim == 0) return luaL_error(L, "len: a 0-d array has no length");
  lua_pushinteger(L, a->shape[0]);
  return 1;
}

static int array_size(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (lua_isnoneornil(L, 2)) {
    l_pushshape(L, a);
    return 1;
  }
  int d = l_checkdim(L, 2, a->ndim, "size");
  lua_pushinteger(L, a->shape[d]);
  return 1;
}

static int array_stride(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (lua_isnoneornil(L, 2)) {
    lua_createtable(L, a->ndim, 0);
    for (int d = 0; d < a->ndim; d++) {
      lua_pushinteger(L, a->strides[d]);
      lua_rawseti(L, -2, d + 1);
    }
    return 1;
  }
  int d = l_checkdim(L, 2, a->ndim, "stride");
  lua_pushinteger(L, a->strides[d]);
  return 1;
}

static int array_numel(lua_State *L) {
  lua_pushinteger(L, ml_array_numel(l_checkarray(L, 1)));
  return 1;
}

static int array_dim(lua_State *L) {
  lua_pushinteger(L, l_checkarray(L, 1)->ndim);
  return 1;
}

static int array_is_contiguous(lua_State *L) {
  lua_pushboolean(L, ml_array_is_contiguous(l_checkarray(L, 1)));
  return 1;
}

static int is_array(lua_State *L) {
  lua_pushboolean(L, l_testarray(L, 1) != NULL);
  return 1;
}

void l_open_array(lua_State *L, int module, int methods) {
  static const luaL_Reg array_methods[] = {
      {"free", array_gc},     {"size", array_size},
      {"stride", array_stride}, {"numel", array_numel},
      {"dim", array_dim},       {"is_contiguous", array_is_contiguous},
      {NULL, NULL}};
  static const luaL_Reg module_funcs[] = {{"is_array", is_array}, {NULL, NULL}};
  l_setfuncs(L, methods, array_methods);
  l_setfuncs(L, module, array_methods);
  l_setfuncs(L, module, module_funcs);
  l_open_format(L, module);
  luaL_getmetatable(L, ML_ARRAY_MT);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &array_mt_key);
  array_mt = lua_topointer(L, -1);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &array_mt) == LUA_TNIL) {
    const void **sentinel = lua_newuserdatauv(L, sizeof *sentinel, 0);
    *sentinel = array_mt;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, forget_metatable);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &array_mt);
  }
  lua_pop(L, 1);
  static const luaL_Reg meta[] = {{"__gc", array_gc},
                                  {"__close", array_gc},
                                  {"__newindex", array_newindex},
                                  {"__len", array_len},
                                  {"__tostring", l_array_tostring},
                                  {NULL, NULL}};
  l_setfuncs(L, -1, meta);
  lua_pushvalue(L, methods);
  lua_pushcclosure(L, array_index, 1);
  lua_setfield(L, -2, "__index");
  /* For the shell's tab completion: the names x.name serves. */
  lua_pushvalue(L, methods);
  lua_setfield(L, -2, "methods");
  lua_createtable(L, 0, NPROPS);
  for (int p = 0; p < NPROPS; p++) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, property_names[p]);
  }
  lua_setfield(L, -2, "fields");
  lua_pop(L, 1);
}
