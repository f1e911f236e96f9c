/* Indexing, masks and sorting: index_select index_add gather scatter
 * masked_select
 * masked_fill nonzero argwhere sort argsort topk. Index arguments may be
 * arrays, integers or tables of integers (1-based, negative from the end);
 * masks arrays or tables of booleans or 0/1. */
#include "../core/index.h"
#include "../core/sort.h"
#include "../core/view.h"
#include "l_array.h"

/* The index argument at idx as an array (an empty table is an empty int64
 * index rather than a float64 array). */
static ml_array *check_index(lua_State *L, int idx, const ml_array *a) {
  if (lua_type(L, idx) == LUA_TTABLE && !l_testarray(L, idx) &&
      lua_rawlen(L, idx) == 0) {
    int64_t zero = 0;
    ml_array *r = l_newarray(L);
    l_check(L, ml_array_empty(r, ML_INT64, 1, &zero, ml_array_device(a)));
    lua_replace(L, idx);
    return r;
  }
  return l_toarray(L, idx, a);
}

/* The mask argument at idx: an array, or a table made uint8. */
static ml_array *check_mask(lua_State *L, int idx, const ml_array *a) {
  if (lua_type(L, idx) == LUA_TTABLE && !l_testarray(L, idx)) {
    ml_array *r = l_newarray(L);
    l_array_from_table(L, idx, ML_UINT8, ml_array_device(a), r);
    lua_replace(L, idx);
    return r;
  }
  return l_checkarray(L, idx);
}

static int l_index_select(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int dim = l_checkdim(L, 2, a->ndim, "index_select");
  ml_array *index = check_index(L, 3, a);
  ml_array *r = l_newarray(L);
  l_check(L, ml_index_select(r, a, dim, index));
  return 1;
}

/* index_add(x, dim, index, src): a copy of x with src's slices added. */
static int l_index_add(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int dim = l_checkdim(L, 2, a->ndim, "index_add");
  ml_array *index = check_index(L, 3, a);
  ml_array *src = l_toarray(L, 4, a);
  ml_array *r = l_newarray(L);
  l_check(L, ml_index_add(r, a, dim, index, src));
  return 1;
}

static int l_gather(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int dim = l_checkdim(L, 2, a->ndim, "gather");
  ml_array *index = check_index(L, 3, a);
  ml_array *r = l_newarray(L);
  l_check(L, ml_gather(r, a, dim, index));
  return 1;
}

static int l_scatter(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int dim = l_checkdim(L, 2, a->ndim, "scatter");
  ml_array *index = check_index(L, 3, a);
  ml_array *src = l_tosource(L, 4, a);
  ml_array *r = l_newarray(L);
  l_check(L, ml_scatter(r, a, dim, index, src));
  return 1;
}

static int l_masked_select(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  ml_array *mask = check_mask(L, 2, a);
  ml_array *r = l_newarray(L);
  l_check(L, ml_masked_select(r, a, mask));
  return 1;
}

static int l_masked_fill(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  ml_array *mask = check_mask(L, 2, a);
  ml_scalar v = l_checkscalar(L, 3);
  ml_array *r = l_newarray(L);
  l_check(L, ml_masked_fill(r, a, mask, v));
  return 1;
}

/* nonzero(x) -> one int64 array per dimension of x: the 1-based indices
 * along it of x's nonzero elements, in C order (NumPy's nonzero). */
static int l_nonzero(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  if (a->ndim == 0)
    return luaL_error(L, "nonzero: a 0-d array has no dimensions to index "
                      "(argwhere takes one)");
  ml_array *idx = l_newarray(L);
  l_check(L, ml_nonzero(idx, a));
  for (int d = 0; d < a->ndim; d++)
    l_check(L, ml_view_select("nonzero", l_newarray(L), idx, 0, d));
  return a->ndim;
}

/* argwhere(x) -> int64 count x ndim: a row of 1-based indices per nonzero
 * element of x, in C order (NumPy's argwhere). */
static int l_argwhere(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  l_check(L, ml_argwhere(l_newarray(L), a));
  return 1;
}

/* The optional dimension at idx (default: the last), 0-based. */
static int optdim(lua_State *L, int idx, int last, const ml_array *a,
                  const char *op) {
  if (idx <= last && !lua_isnil(L, idx)) return l_checkdim(L, idx, a->ndim, op);
  int d;
  l_check(L, ml_norm_dim(op, -1, a->ndim, &d));
  return d;
}

/* Values and indices sorted along dim, for sort and argsort. */
static void push_sorted(lua_State *L, const char *op) {
  ml_array *a = l_checkarray(L, 1);
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  if (last > 2) luaL_error(L, "%s: expected (x [, dim] [, {descending=...}])", op);
  l_checkoptions(L, opts, op);
  int dim = optdim(L, 2, last, a, op);
  int descending = l_optbool(L, opts, "descending", 0);
  ml_array *values = l_newarray(L), *indices = l_newarray(L);
  l_check(L, ml_sort(values, indices, a, dim, descending));
}

/* sort(x [, dim] [, {descending=false}]) -> values, indices */
static int l_sort(lua_State *L) {
  push_sorted(L, "sort");
  return 2;
}

/* argsort(x [, dim] [, {descending=false}]) -> indices */
static int l_argsort(lua_State *L) {
  push_sorted(L, "argsort");
  return 1;
}

/* topk(x, k [, dim] [, {largest=true, sorted=true}]) -> values, indices */
static int l_topk(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  if (last > 3)
    return luaL_error(L, "topk: expected (x, k [, dim] [, {largest=..., sorted=...}])");
  l_checkoptions(L, opts, "topk");
  lua_Integer k = luaL_checkinteger(L, 2);
  int dim = optdim(L, 3, last, a, "topk");
  int largest = l_optbool(L, opts, "largest", 1);
  int sorted = l_optbool(L, opts, "sorted", 1);
  ml_array *values = l_newarray(L), *indices = l_newarray(L);
  l_check(L, ml_topk(values, indices, a, k, dim, largest, sorted));
  return 2;
}

void l_open_index(lua_State *L, int module, int methods) {
  static const luaL_Reg fns[] = {
      {"index_select", l_index_select}, {"index_add", l_index_add}, {"gather", l_gather},
      {"scatter", l_scatter},           {"masked_select", l_masked_select},
      {"masked_fill", l_masked_fill},   {"nonzero", l_nonzero},
      {"argwhere", l_argwhere},         {"sort", l_sort},
      {"argsort", l_argsort},           {"topk", l_topk},
      {NULL, NULL}};
  l_setfuncs(L, module, fns);
  l_setfuncs(L, methods, fns);
}
