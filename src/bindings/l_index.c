/* Indexing, masks and sorting: index_select index_add gather scatter
 * masked_select
 * masked_fill nonzero argwhere sort argsort topk searchsorted. Index
 * arguments may be arrays, integers or tables of integers (1-based,
 * negative from the end); masks arrays or tables of booleans or 0/1.
 * moonlab/stats.lua builds histogram, bincount and unique over two more
 * primitives that are no public functions, the counts of equal bins and
 * of integers, which this file leaves in
 * package.loaded["moonlab.count_core"]. */
#include <string.h>

#include "../core/count.h"
#include "../core/copy.h"
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
  if (!l_optbool(L, opts, "stable", 1))
    luaL_error(L, "%s: stable = false is not offered (every sort is stable)", op);
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

/* The option side at opts, one of "left" and "right" (default
 * "left"): whether it is "right". */
static int optside(lua_State *L, int opts) {
  if (!opts || lua_getfield(L, opts, "side") == LUA_TNIL) {
    if (opts) lua_pop(L, 1);
    return 0;
  }
  const char *side = lua_tostring(L, -1);
  if (strcmp(side, "left") && strcmp(side, "right"))
    luaL_error(L, "searchsorted: side must be \"left\" or \"right\", "
               "not \"%s\"", side);
  lua_pop(L, 1);
  return side[0] == 'r';
}

/* searchsorted(a, v [, {side="left", sorter=}]) -> int64 array of v's
 * shape (an integer for a number v): NumPy's insertion points + 1. */
static int l_searchsorted(lua_State *L) {
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  if (last != 2)
    return luaL_error(L, "searchsorted: expected (a, v [, {side=..., "
                      "sorter=...}])");
  l_checkoptions(L, opts, "searchsorted");
  ml_array *a = l_toarray(L, 1, NULL);
  int scalar = lua_type(L, 2) == LUA_TNUMBER;
  ml_array *v = l_toarray(L, 2, ml_dtype_is_float(a->dtype) ? a : NULL);
  int right = optside(L, opts);
  if (opts && lua_getfield(L, opts, "sorter") != LUA_TNIL) {
    ml_array *sorter = check_index(L, lua_gettop(L), a);
    if (a->ndim != 1)
      return luaL_error(L, "searchsorted: a must be 1-D, not %dD", a->ndim);
    ml_array *sorted = l_newarray(L);
    l_check(L, ml_index_select(sorted, a, 0, sorter));
    a = sorted;
  }
  ml_array *r = l_newarray(L);
  l_check(L, ml_searchsorted(r, a, v, right));
  if (scalar) {
    ml_scalar s;
    l_check(L, ml_read_element(r, 0, &s));
    l_pushscalar(L, s);
  }
  return 1;
}

/* count_core.histogram(x, edges, denom [, weights]) -> the counts (int64)
 * or weight sums (float64) of x over the equal bins of edges. */
static int l_histogram_counts(lua_State *L) {
  ml_array *a = l_checkarray(L, 1), *edges = l_checkarray(L, 2);
  double denom = luaL_checknumber(L, 3);
  ml_array *w = lua_isnoneornil(L, 4) ? NULL : l_checkarray(L, 4);
  ml_array *r = l_newarray(L);
  l_check(L, ml_histogram(r, a, w, edges, denom));
  return 1;
}

/* count_core.bincount(x, lo, nbins) -> the int64 counts of x's integers
 * v in slot v - lo + 1, lo <= v < lo + nbins. */
static int l_bincount_counts(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  lua_Integer lo = luaL_checkinteger(L, 2), nbins = luaL_checkinteger(L, 3);
  ml_array *r = l_newarray(L);
  l_check(L, ml_bincount(r, a, lo, nbins));
  return 1;
}

void l_open_index(lua_State *L, int module, int methods) {
  static const luaL_Reg fns[] = {
      {"index_select", l_index_select}, {"index_add", l_index_add}, {"gather", l_gather},
      {"scatter", l_scatter},           {"masked_select", l_masked_select},
      {"masked_fill", l_masked_fill},   {"nonzero", l_nonzero},
      {"argwhere", l_argwhere},         {"sort", l_sort},
      {"argsort", l_argsort},           {"topk", l_topk},
      {"searchsorted", l_searchsorted}, {NULL, NULL}};
  static const luaL_Reg internal[] = {{"histogram", l_histogram_counts},
                                      {"bincount", l_bincount_counts},
                                      {NULL, NULL}};
  l_setfuncs(L, module, fns);
  l_setfuncs(L, methods, fns);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_newtable(L);
  l_setfuncs(L, -1, internal);
  lua_setfield(L, -2, "moonlab.count_core");
  lua_pop(L, 1);
}
