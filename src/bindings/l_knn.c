/* k nearest neighbours: knn(queries, refs, k [, {metric=, exclude_self=,
 * budget=, tf32=, method=}]) -> dist, index. */
#include <string.h>

#include "../core/knn.h"
#include "l_array.h"

static ml_knn_metric check_metric(lua_State *L, int opts) {
  ml_knn_metric metric = ML_KNN_EUCLIDEAN;
  if (opts && lua_getfield(L, opts, "metric") != LUA_TNIL) {
    const char *name = lua_tostring(L, -1);
    if (!name || !ml_knn_metric_parse(name, &metric))
      luaL_error(L, "knn: unknown metric '%s' (euclidean, sqeuclidean, cosine, ip or hamming)",
                 name ? name : luaL_typename(L, -1));
  }
  if (opts) lua_pop(L, 1);
  return metric;
}

static ml_knn_method check_method(lua_State *L, int opts) {
  ml_knn_method method = ML_KNN_AUTO;
  if (opts && lua_getfield(L, opts, "method") != LUA_TNIL) {
    const char *name = lua_tostring(L, -1);
    if (!name || !ml_knn_method_parse(name, &method))
      luaL_error(L, "knn: unknown method '%s' (auto, filter, tile or bounded)",
                 name ? name : luaL_typename(L, -1));
  }
  if (opts) lua_pop(L, 1);
  return method;
}

/* The metric "hamming" goes to moonlab/binary.lua's knn (packed codes). */
static int is_hamming(lua_State *L, int opts) {
  if (!opts) return 0;
  lua_getfield(L, opts, "metric");
  const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  int yes = strcmp(name, "hamming") == 0;
  lua_pop(L, 1);
  return yes;
}

/* knn(queries, refs, k [, opts]): the k nearest rows of refs to each row
 * of queries; see core/knn.h. */
static int l_knn(lua_State *L) {
  if (lua_gettop(L) == 4 && lua_isnil(L, 4)) lua_settop(L, 3);
  int top = lua_gettop(L);
  int opts = top == 4 && lua_istable(L, 4) && !l_testarray(L, 4) ? 4 : 0;
  if (top == 4 && is_hamming(L, opts)) {
    l_checkoptions(L, opts, "knn");
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "moonlab.binary");
    lua_getfield(L, -1, "knn");
    for (int i = 1; i <= 4; i++) lua_pushvalue(L, i);
    lua_call(L, 4, 2);
    return 2;
  }
  if (top - (opts != 0) != 3)
    return luaL_error(L, "knn: expected (queries, refs, k [, {metric=..., exclude_self=..., budget=..., tf32=..., method=...}])");
  l_checkoptions(L, opts, "knn");
  ml_array *q = l_toarray(L, 1, NULL);
  ml_array *r = l_toarray(L, 2, NULL);
  lua_Integer k = luaL_checkinteger(L, 3);
  ml_knn_opts o = {check_metric(L, opts), l_optbool(L, opts, "exclude_self", 0),
                   l_optinteger(L, opts, "budget", ML_KNN_BUDGET),
                   l_optbool(L, opts, "tf32", 1), check_method(L, opts)};
  ml_array *dist = l_newarray(L), *index = l_newarray(L);
  l_check(L, ml_knn(dist, index, q, r, k, &o));
  return 2;
}

void l_open_knn(lua_State *L, int module, int methods) {
  static const luaL_Reg fns[] = {{"knn", l_knn}, {NULL, NULL}};
  l_setfuncs(L, module, fns);
  l_setfuncs(L, methods, fns);
}
