/* The convolution of deep learning, PyTorch's conv1d and conv2d:
 * conv1d(x, w [, opts]) and conv2d(x, w [, opts]) with opts stride,
 * padding, dilation, groups, bias and tf32 (core/conv.h). */
#include <string.h>

#include "../core/conv.h"
#include "l_array.h"

/* Option name of the options table at opts, an integer or a table of dims
 * of them (PyTorch's int or tuple), into v[0 .. dims - 1]; v keeps its
 * values when the option is absent. */
static void sizes_option(lua_State *L, int opts, const char *op,
                         const char *name, int dims, int64_t *v) {
  if (!opts || lua_getfield(L, opts, name) == LUA_TNIL) {
    if (opts) lua_pop(L, 1);
    return;
  }
  int top = lua_gettop(L), ok;
  if (lua_type(L, top) == LUA_TNUMBER) {
    lua_Integer n = lua_tointegerx(L, top, &ok);
    if (!ok)
      luaL_error(L, "%s: %s must be an integer, got %s", op, name,
                 lua_tostring(L, top));
    for (int i = 0; i < dims; i++) v[i] = n;
  } else {
    lua_Integer len = luaL_len(L, top);
    if (len != dims)
      luaL_error(L, "%s: %s must be an integer or a table of %d integer%s, "
                 "got a table of %d", op, name, dims, dims == 1 ? "" : "s",
                 (int)len);
    for (int i = 0; i < dims; i++) {
      lua_geti(L, top, i + 1);
      v[i] = lua_tointegerx(L, -1, &ok);
      if (!ok)
        luaL_error(L, "%s: %s must hold integers, got %s", op, name,
                   luaL_tolstring(L, -1, NULL));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
}

/* padding: sizes, "valid" or "same". */
static ml_conv_padding padding_option(lua_State *L, int opts, const char *op,
                                      int dims, int64_t *v) {
  ml_conv_padding mode = ML_CONV_PAD_EXPLICIT;
  if (opts && lua_getfield(L, opts, "padding") == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    if (strcmp(s, "valid") == 0)
      mode = ML_CONV_PAD_VALID;
    else if (strcmp(s, "same") == 0)
      mode = ML_CONV_PAD_SAME;
    else
      luaL_error(L, "%s: padding must be \"valid\", \"same\" or sizes, not "
                 "\"%s\"", op, s);
  }
  if (opts) lua_pop(L, 1);
  if (mode == ML_CONV_PAD_EXPLICIT)
    sizes_option(L, opts, op, "padding", dims, v);
  return mode;
}

static int convolution(lua_State *L, int dims) {
  const char *op = dims == 1 ? "conv1d" : "conv2d";
  if (lua_gettop(L) > 3)
    return luaL_error(L, "%s: expected (x, w [, opts]), got %d arguments",
                      op, lua_gettop(L));
  int opts = lua_isnoneornil(L, 3) ? 0 : 3;
  l_checkoptions(L, opts, op);
  ml_array *x = l_toarray(L, 1, NULL);
  ml_array *w = l_toarray(L, 2, NULL);
  ml_conv_opts o = {dims, {1, 1}, {0, 0}, {1, 1}, ML_CONV_PAD_EXPLICIT, 1,
                    NULL, 0};
  sizes_option(L, opts, op, "stride", dims, o.stride);
  o.mode = padding_option(L, opts, op, dims, o.padding);
  sizes_option(L, opts, op, "dilation", dims, o.dilation);
  o.groups = l_optinteger(L, opts, "groups", 1);
  o.tf32 = l_optbool(L, opts, "tf32", 0);
  if (opts && lua_getfield(L, opts, "bias") != LUA_TNIL)
    o.bias = l_checkarray(L, -1); /* stays on the stack, referenced */
  l_check(L, ml_conv(l_newarray(L), x, w, &o));
  return 1;
}

static int l_conv1d(lua_State *L) { return convolution(L, 1); }
static int l_conv2d(lua_State *L) { return convolution(L, 2); }

void l_open_conv(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg fns[] = {
      {"conv1d", l_conv1d}, {"conv2d", l_conv2d}, {NULL, NULL}};
  l_setfuncs(L, module, fns);
}
