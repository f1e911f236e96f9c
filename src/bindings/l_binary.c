/* ml.binary's primitives over packed words (core/binary.h), which are no
 * public functions: moonlab/binary.lua keeps the packed arrays' logical
 * length and dimension, checks the arguments and calls these, left in
 * package.loaded["moonlab.binary_core"]. Dimensions here are 0-based and
 * normalised. */
#include "../core/binary.h"
#include "l_array.h"

/* pack(x, dim) -> words */
static int l_pack(lua_State *L) {
  ml_array *x = l_checkarray(L, 1);
  int dim = (int)luaL_checkinteger(L, 2);
  ml_array *r = l_newarray(L);
  l_check(L, ml_binary_pack(r, x, dim));
  return 1;
}

/* unpack(words, bits, dtype, dim) -> array of ±1 */
static int l_unpack(lua_State *L) {
  ml_array *w = l_checkarray(L, 1);
  lua_Integer bits = luaL_checkinteger(L, 2);
  ml_dtype t = l_checkdtype(L, 3);
  int dim = (int)luaL_checkinteger(L, 4);
  ml_array *r = l_newarray(L);
  l_check(L, ml_binary_unpack(r, w, bits, t, dim));
  return 1;
}

/* mm(a, b, bits, hamming, op) -> int32 products or distances */
static int l_mm(lua_State *L) {
  ml_array *a = l_checkarray(L, 1), *b = l_checkarray(L, 2);
  lua_Integer bits = luaL_checkinteger(L, 3);
  int hamming = lua_toboolean(L, 4);
  const char *op = luaL_checkstring(L, 5);
  ml_array *r = l_newarray(L);
  l_check(L, ml_binary_mm(op, r, a, b, bits, hamming));
  return 1;
}

/* knn(queries, refs, bits, k, op) -> dist, index */
static int l_knn(lua_State *L) {
  ml_array *q = l_checkarray(L, 1), *r = l_checkarray(L, 2);
  lua_Integer bits = luaL_checkinteger(L, 3), k = luaL_checkinteger(L, 4);
  const char *op = luaL_checkstring(L, 5);
  ml_array *dist = l_newarray(L), *index = l_newarray(L);
  l_check(L, ml_binary_knn(op, dist, index, q, r, bits, k));
  return 2;
}

/* peak(device) -> the device's AND-popcount ops a second */
static int l_peak(lua_State *L) {
  ml_device dev = l_checkdevice(L, 1);
  double ops = 0;
  l_check(L, ml_binary_peak(dev, &ops));
  lua_pushnumber(L, ops);
  return 1;
}

void l_open_binary(lua_State *L) {
  static const luaL_Reg internal[] = {{"pack", l_pack},
                                      {"unpack", l_unpack},
                                      {"mm", l_mm},
                                      {"knn", l_knn},
                                      {"peak", l_peak},
                                      {NULL, NULL}};
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_newtable(L);
  l_setfuncs(L, -1, internal);
  lua_setfield(L, -2, "moonlab.binary_core");
  lua_pop(L, 1);
}
