/* Filters (core/filter.h): ml.convolve and ml.correlate (scipy.signal's),
 * ml.window_sum, and the C half of the ml.ndimage namespace: correlate,
 * convolve, correlate1d, convolve1d, uniform_filter1d. moonlab/ndimage.lua
 * adds the filters built on them (gaussian_filter, uniform_filter, sobel)
 * over one more primitive that is no public function, the separable
 * passes, which this file leaves in package.loaded["moonlab.ndimage_core"]
 * for it. */
#include <string.h>

#include "../core/filter.h"
#include "l_array.h"

/* Raises the core's error: as it is when it names an operation (op's
 * own, or "cuda: ..."), else prefixed with op. */
static void check(lua_State *L, int rc, const char *op) {
  if (!rc) return;
  const char *msg = ml_last_error();
  const char *colon = strstr(msg, ": ");
  if (colon && !memchr(msg, ' ', (size_t)(colon - msg)))
    luaL_error(L, "%s", msg);
  luaL_error(L, "%s: %s", op, msg);
}

/* The index of the options table after n positional arguments (0: none),
 * checked against the help entry name. */
static int options(lua_State *L, int n, const char *name) {
  int opts = lua_isnoneornil(L, n + 1) ? 0 : n + 1;
  l_checkoptions(L, opts, name);
  return opts;
}

static double optnumber(lua_State *L, int opts, const char *key, double dflt) {
  double v = dflt;
  if (opts && lua_getfield(L, opts, key) != LUA_TNIL) v = lua_tonumber(L, -1);
  if (opts) lua_pop(L, 1);
  return v;
}

/* A mode name at the top of the stack, popped. */
static ml_filter_mode tomode(lua_State *L, const char *name) {
  ml_filter_mode m;
  const char *s = lua_tostring(L, -1);
  if (!s || !ml_filter_mode_parse(s, &m))
    luaL_error(L, "%s: unknown mode '%s' (reflect, constant, nearest, mirror or wrap)",
               name, s ? s : luaL_typename(L, -1));
  lua_pop(L, 1);
  return m;
}

static ml_filter_mode optmode(lua_State *L, int opts, const char *name,
                              ml_filter_mode dflt) {
  if (!opts || lua_getfield(L, opts, "mode") == LUA_TNIL) {
    if (opts) lua_pop(L, 1);
    return dflt;
  }
  return tomode(L, name);
}

/* The origin option: one integer for every dimension, or a table of nd. */
static void optorigin(lua_State *L, int opts, const char *name, int nd,
                      int64_t *origin) {
  for (int d = 0; d < nd; d++) origin[d] = 0;
  if (!opts || lua_getfield(L, opts, "origin") == LUA_TNIL) {
    if (opts) lua_pop(L, 1);
    return;
  }
  int ok = 1;
  if (lua_istable(L, -1)) {
    if ((int)luaL_len(L, -1) != nd)
      luaL_error(L, "%s: origin must have one entry for each of the %d dimensions, not %d",
                 name, nd, (int)luaL_len(L, -1));
    for (int d = 0; d < nd && ok; d++) {
      lua_rawgeti(L, -1, d + 1);
      origin[d] = lua_tointegerx(L, -1, &ok);
      lua_pop(L, 1);
    }
  } else {
    int64_t o = lua_tointegerx(L, -1, &ok);
    for (int d = 0; d < nd; d++) origin[d] = o;
  }
  if (!ok) luaL_error(L, "%s: origin must be an integer or a table of integers", name);
  lua_pop(L, 1);
}

/* The axis option (1-based, negative from the end), 0-based. */
static int optaxis(lua_State *L, int opts, const char *name, int nd) {
  if (!opts || lua_getfield(L, opts, "axis") == LUA_TNIL) {
    if (opts) lua_pop(L, 1);
    if (nd < 1) luaL_error(L, "%s: expects an array of 1 or more dimensions, got a scalar", name);
    return nd - 1;
  }
  int axis = l_checkdim(L, lua_gettop(L), nd, name);
  lua_pop(L, 1);
  return axis;
}

/* signal ----------------------------------------------------------------- */

static int signal(lua_State *L, const char *name, int convolve) {
  int opts = options(L, 2, name);
  ml_array *x = l_toarray(L, 1, NULL);
  ml_array *w = l_toarray(L, 2, x);
  ml_signal_size size = ML_SIGNAL_FULL;
  ml_filter_mode boundary = ML_FILTER_CONSTANT;
  if (opts && lua_getfield(L, opts, "mode") != LUA_TNIL) {
    const char *s = lua_tostring(L, -1);
    if (!ml_signal_size_parse(s, &size))
      luaL_error(L, "%s: unknown mode '%s' (full, same or valid)", name, s);
  }
  if (opts) lua_pop(L, 1);
  if (opts && lua_getfield(L, opts, "boundary") != LUA_TNIL) {
    const char *s = lua_tostring(L, -1);
    if (!ml_signal_boundary_parse(s, &boundary))
      luaL_error(L, "%s: unknown boundary '%s' (fill, symm or wrap)", name, s);
  }
  if (opts) lua_pop(L, 1);
  double fill = optnumber(L, opts, "fillvalue", 0);
  ml_array *r = l_newarray(L);
  check(L, ml_signal_correlate(name, r, x, w, size, boundary, fill, convolve),
        name);
  return 1;
}

static int l_convolve(lua_State *L) { return signal(L, "convolve", 1); }
static int l_correlate(lua_State *L) { return signal(L, "correlate", 0); }

static int l_window_sum(lua_State *L) {
  const char *name = "window_sum";
  int opts = options(L, 2, name);
  ml_array *x = l_toarray(L, 1, NULL);
  lua_Integer radius = luaL_checkinteger(L, 2);
  if (radius < 0) luaL_error(L, "%s: radius must be 0 or more, not %d", name, (int)radius);
  int axis = optaxis(L, opts, name, x->ndim);
  ml_filter_mode mode = optmode(L, opts, name, ML_FILTER_CONSTANT);
  double cval = optnumber(L, opts, "cval", 0);
  ml_array *r = l_newarray(L);
  check(L,
        ml_moving_sum(name, r, x, axis, 2 * radius + 1, -radius, 1, mode,
                      cval, 0),
        name);
  return 1;
}

/* ndimage ---------------------------------------------------------------- */

static int nd_filter(lua_State *L, const char *name, int convolve) {
  int opts = options(L, 2, name);
  ml_array *x = l_toarray(L, 1, NULL);
  ml_array *w = l_toarray(L, 2, x);
  int64_t origin[ML_MAX_DIMS];
  optorigin(L, opts, name, x->ndim, origin);
  ml_filter_mode mode = optmode(L, opts, name, ML_FILTER_REFLECT);
  double cval = optnumber(L, opts, "cval", 0);
  int fft = -1;
  if (opts && lua_getfield(L, opts, "fft") != LUA_TNIL) fft = lua_toboolean(L, -1);
  if (opts) lua_pop(L, 1);
  ml_array *r = l_newarray(L);
  check(L, ml_ndimage_correlate(name, r, x, w, mode, cval, origin, convolve, fft),
        name);
  return 1;
}

static int l_nd_correlate(lua_State *L) {
  return nd_filter(L, "ndimage.correlate", 0);
}
static int l_nd_convolve(lua_State *L) {
  return nd_filter(L, "ndimage.convolve", 1);
}

static int nd_filter1d(lua_State *L, const char *name, int convolve) {
  int opts = options(L, 2, name);
  ml_array *x = l_toarray(L, 1, NULL);
  ml_array *w = l_toarray(L, 2, x);
  int axis = optaxis(L, opts, name, x->ndim);
  const ml_array *masks[ML_MAX_DIMS] = {NULL};
  int64_t origin[ML_MAX_DIMS] = {0};
  ml_filter_mode modes[ML_MAX_DIMS] = {ML_FILTER_REFLECT};
  masks[axis] = w;
  origin[axis] = l_optinteger(L, opts, "origin", 0);
  modes[axis] = optmode(L, opts, name, ML_FILTER_REFLECT);
  double cval = optnumber(L, opts, "cval", 0);
  ml_array *r = l_newarray(L);
  check(L,
        ml_ndimage_separable(name, r, x, masks, origin, modes, cval,
                             convolve),
        name);
  return 1;
}

static int l_nd_correlate1d(lua_State *L) {
  return nd_filter1d(L, "ndimage.correlate1d", 0);
}
static int l_nd_convolve1d(lua_State *L) {
  return nd_filter1d(L, "ndimage.convolve1d", 1);
}

static int l_nd_uniform_filter1d(lua_State *L) {
  const char *name = "ndimage.uniform_filter1d";
  int opts = options(L, 2, name);
  ml_array *x = l_toarray(L, 1, NULL);
  lua_Integer size = luaL_checkinteger(L, 2);
  if (size < 1) luaL_error(L, "%s: size must be 1 or more, not %d", name, (int)size);
  int axis = optaxis(L, opts, name, x->ndim);
  lua_Integer origin = l_optinteger(L, opts, "origin", 0);
  if (origin < -(size / 2) || origin > (size - 1) / 2)
    luaL_error(L, "%s: origin %d is out of range for size %d (%d..%d)", name,
               (int)origin, (int)size, (int)-(size / 2), (int)((size - 1) / 2));
  ml_filter_mode mode = optmode(L, opts, name, ML_FILTER_REFLECT);
  double cval = optnumber(L, opts, "cval", 0);
  ml_array *r = l_newarray(L);
  check(L, ml_moving_sum(name, r, x, axis, size, -(size / 2) - origin,
                         (double)size, mode, cval, 1),
        name);
  return 1;
}

/* separable(name, x, masks, origins, modes, cval): the passes of
 * ml_ndimage_separable, for moonlab/ndimage.lua, which has checked the
 * arguments' types: masks, origins and modes are tables of x:dim()
 * entries, a mask false where an axis has no pass. */
static int l_separable(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  ml_array *x = l_checkarray(L, 2);
  int nd = x->ndim;
  if (nd > ML_MAX_DIMS) nd = ML_MAX_DIMS;
  const ml_array *masks[ML_MAX_DIMS] = {NULL};
  int64_t origin[ML_MAX_DIMS] = {0};
  ml_filter_mode modes[ML_MAX_DIMS] = {ML_FILTER_REFLECT};
  for (int d = 0; d < nd; d++) {
    lua_rawgeti(L, 3, d + 1);
    masks[d] = lua_toboolean(L, -1) ? l_checkarray(L, -1) : NULL;
    lua_pop(L, 1); /* the table keeps the mask referenced */
    lua_rawgeti(L, 4, d + 1);
    origin[d] = lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_rawgeti(L, 5, d + 1);
    modes[d] = tomode(L, name);
  }
  double cval = luaL_checknumber(L, 6);
  ml_array *r = l_newarray(L);
  check(L, ml_ndimage_separable(name, r, x, masks, origin, modes, cval, 0),
        name);
  return 1;
}

void l_open_filter(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg funcs[] = {{"convolve", l_convolve},
                                   {"correlate", l_correlate},
                                   {"window_sum", l_window_sum},
                                   {NULL, NULL}};
  static const luaL_Reg ndimage[] = {
      {"correlate", l_nd_correlate},
      {"convolve", l_nd_convolve},
      {"correlate1d", l_nd_correlate1d},
      {"convolve1d", l_nd_convolve1d},
      {"uniform_filter1d", l_nd_uniform_filter1d},
      {NULL, NULL}};
  static const luaL_Reg internal[] = {{"separable", l_separable}, {NULL, NULL}};
  l_setfuncs(L, module, funcs);
  lua_newtable(L);
  l_setfuncs(L, -1, ndimage);
  lua_setfield(L, module, "ndimage");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_newtable(L);
  l_setfuncs(L, -1, internal);
  lua_setfield(L, -2, "moonlab.ndimage_core");
  lua_pop(L, 1);
}
