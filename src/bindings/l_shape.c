/* Shapes: reshape view t transpose permute squeeze unsqueeze expand narrow
 * select flatten split flip (methods and module functions), and the module
 * functions cat and stack, which take a Lua list of arrays. Everything but
 * reshape, flatten (of a view that needs a copy), cat and stack returns a
 * view sharing x's storage. Dimensions and indices are 1-based; negative
 * ones count from the end. */
#include "../core/shape.h"
#include "../core/view.h"
#include "l_array.h"

/* A shape whose entries may be -1 (inferred, or kept by expand): integers
 * from first to last, or a single table at first. Returns ndim. */
static int check_sizes(lua_State *L, int first, int last, int64_t *shape,
                       const char *op) {
  int table = first <= last && lua_type(L, first) == LUA_TTABLE;
  int n = table ? (int)lua_rawlen(L, first) : last - first + 1;
  if (n < 0) n = 0;
  if (n > ML_MAX_DIMS)
    luaL_error(L, "%s: arrays have at most %d dimensions", op, ML_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    if (table) lua_rawgeti(L, first, i + 1);
    int ok;
    lua_Integer v = lua_tointegerx(L, table ? -1 : first + i, &ok);
    if (!ok) luaL_error(L, "%s: sizes must be integers", op);
    if (v < -1) luaL_error(L, "%s: invalid size %I", op, v);
    if (table) lua_pop(L, 1);
    shape[i] = v;
  }
  return n;
}

/* The 1-based (or negative) index at idx into a dimension of size n, as a
 * 0-based one; `end_ok` also accepts n + 1 (one past the end). */
static int64_t check_index(lua_State *L, int idx, int64_t n, int dim,
                           int end_ok, const char *op) {
  lua_Integer i = luaL_checkinteger(L, idx);
  int64_t r = i > 0 ? i - 1 : i + n;
  if (i == 0 || r < 0 || r > n || (r == n && !end_ok))
    luaL_error(L, "%s: index %I out of bounds for dimension %d of size %I", op,
               i, dim + 1, (lua_Integer)n);
  return r;
}

static int reshape_like(lua_State *L, const char *op,
                        int (*fn)(const char *, ml_array *, const ml_array *,
                                  int, const int64_t *)) {
  ml_array *a = l_checkarray(L, 1);
  int64_t shape[ML_MAX_DIMS];
  int ndim = check_sizes(L, 2, lua_gettop(L), shape, op);
  ml_array *r = l_newarray(L);
  l_check(L, fn(op, r, a, ndim, shape));
  return 1;
}

static int l_reshape(lua_State *L) { return reshape_like(L, "reshape", ml_reshape); }
static int l_view(lua_State *L) { return reshape_like(L, "view", ml_view); }

static int l_t(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (a->ndim > 2)
    return luaL_error(L, "t: expects at most 2 dimensions, got %d", a->ndim);
  ml_array *r = l_newarray(L);
  ml_array_share(r, a);
  if (a->ndim == 2) l_check(L, ml_view_transpose(r, r, 0, 1));
  return 1;
}

static int l_transpose(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int d0 = l_checkdim(L, 2, a->ndim, "transpose");
  int d1 = l_checkdim(L, 3, a->ndim, "transpose");
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_transpose(r, a, d0, d1));
  return 1;
}

static int l_permute(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int table = lua_type(L, 2) == LUA_TTABLE;
  int n = table ? (int)lua_rawlen(L, 2) : lua_gettop(L) - 1;
  if (n != a->ndim)
    return luaL_error(L, "permute: expected %d dimensions, got %d", a->ndim, n);
  int perm[ML_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    if (table) lua_rawgeti(L, 2, i + 1);
    perm[i] = l_checkdim(L, table ? -1 : i + 2, a->ndim, "permute");
    if (table) lua_pop(L, 1);
  }
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_permute("permute", r, a, perm));
  return 1;
}

/* flip(x [, {dims=}]): every dimension reversed, or those of dims (one
 * dimension or a list of them), as a view with negative strides. */
static int l_flip(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int opts = lua_gettop(L) >= 2 && !lua_isnil(L, 2) ? 2 : 0;
  l_checkoptions(L, opts, "flip");
  int flip[ML_MAX_DIMS] = {0};
  if (opts) lua_getfield(L, opts, "dims");
  if (!opts || lua_isnil(L, -1)) {
    for (int d = 0; d < a->ndim; d++) flip[d] = 1;
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    int top = lua_gettop(L), n = (int)lua_rawlen(L, top);
    for (int i = 1; i <= n; i++) {
      lua_rawgeti(L, top, i);
      int d = l_checkdim(L, -1, a->ndim, "flip");
      if (flip[d]++)
        return luaL_error(L, "flip: dimension %d repeated in dims", d + 1);
      lua_pop(L, 1);
    }
  } else {
    flip[l_checkdim(L, -1, a->ndim, "flip")] = 1;
  }
  ml_array *r = l_newarray(L);
  ml_array_share(r, a);
  for (int d = 0; d < a->ndim; d++)
    if (flip[d]) l_check(L, ml_view_flip(r, r, d));
  return 1;
}

static int l_squeeze(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int d = lua_isnoneornil(L, 2) ? -1 : l_checkdim(L, 2, a->ndim, "squeeze");
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_squeeze(r, a, d));
  return 1;
}

static int l_unsqueeze(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int d = l_checkdim(L, 2, a->ndim + 1, "unsqueeze");
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_unsqueeze(r, a, d));
  return 1;
}

static int l_expand(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int64_t shape[ML_MAX_DIMS];
  int ndim = check_sizes(L, 2, lua_gettop(L), shape, "expand");
  for (int i = 0; i < ndim; i++) {
    if (shape[i] != -1) continue;
    int ad = i - (ndim - a->ndim);
    if (ad < 0)
      return luaL_error(L, "expand: -1 is not allowed for the new dimension %d", i + 1);
    shape[i] = a->shape[ad];
  }
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_expand("expand", r, a, ndim, shape));
  return 1;
}

static int l_narrow(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int d = l_checkdim(L, 2, a->ndim, "narrow");
  int64_t start = check_index(L, 3, a->shape[d], d, 1, "narrow");
  lua_Integer length = luaL_checkinteger(L, 4);
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_narrow("narrow", r, a, d, start, length));
  return 1;
}

static int l_select(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int d = l_checkdim(L, 2, a->ndim, "select");
  int64_t i = check_index(L, 3, a->shape[d], d, 0, "select");
  ml_array *r = l_newarray(L);
  l_check(L, ml_view_select("select", r, a, d, i));
  return 1;
}

static int l_flatten(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  int start = 0, end = a->ndim - 1;
  if (a->ndim > 0) {
    if (!lua_isnoneornil(L, 2)) start = l_checkdim(L, 2, a->ndim, "flatten");
    if (!lua_isnoneornil(L, 3)) end = l_checkdim(L, 3, a->ndim, "flatten");
  }
  ml_array *r = l_newarray(L);
  l_check(L, ml_flatten(r, a, start, end));
  return 1;
}

/* The arrays of the list at idx, in a scratch userdata pushed on the stack
 * (the list keeps them referenced). */
static const ml_array **list_arrays(lua_State *L, int idx, const char *op,
                                    int *n) {
  luaL_checktype(L, idx, LUA_TTABLE);
  *n = (int)lua_rawlen(L, idx);
  const ml_array **v = lua_newuserdatauv(L, (size_t)(*n ? *n : 1) * sizeof *v, 0);
  for (int i = 0; i < *n; i++) {
    lua_rawgeti(L, idx, i + 1);
    ml_array *a = l_testarray(L, -1);
    if (!a)
      luaL_error(L, "%s: element %d of the list is not an array", op, i + 1);
    if (!a->storage)
      luaL_error(L, "%s: array %d of the list was freed", op, i + 1);
    v[i] = a;
    lua_pop(L, 1);
  }
  return v;
}

static int l_cat(lua_State *L) {
  int n;
  lua_settop(L, 2);
  const ml_array **v = list_arrays(L, 1, "cat", &n);
  int d = 0;
  if (n > 0 && v[0]->ndim > 0 && !lua_isnoneornil(L, 2))
    d = l_checkdim(L, 2, v[0]->ndim, "cat");
  ml_array *r = l_newarray(L);
  l_check(L, ml_cat(r, n, v, d));
  return 1;
}

static int l_stack(lua_State *L) {
  int n;
  lua_settop(L, 2);
  const ml_array **v = list_arrays(L, 1, "stack", &n);
  int d = 0;
  if (n > 0 && !lua_isnoneornil(L, 2))
    d = l_checkdim(L, 2, v[0]->ndim + 1, "stack");
  ml_array *r = l_newarray(L);
  l_check(L, ml_stack(r, n, v, d));
  return 1;
}

/* split(x, size or {sizes}, [dim]): a list of views; a single size gives
 * pieces of that size, the last one smaller when it does not divide. */
#define MAX_PIECES (1 << 24)
static int l_split(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (a->ndim == 0) return luaL_error(L, "split: cannot split a 0-d array");
  int d = lua_isnoneornil(L, 3) ? 0 : l_checkdim(L, 3, a->ndim, "split");
  int64_t len = a->shape[d], n;
  int64_t *sizes;
  if (lua_type(L, 2) == LUA_TTABLE) {
    n = (int64_t)lua_rawlen(L, 2);
    if (n > MAX_PIECES) return luaL_error(L, "split: too many pieces (%I)", (lua_Integer)n);
    sizes = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *sizes, 0);
    for (int64_t i = 0; i < n; i++) {
      lua_rawgeti(L, 2, i + 1);
      int ok;
      sizes[i] = lua_tointegerx(L, -1, &ok);
      if (!ok) return luaL_error(L, "split: sizes must be integers");
      lua_pop(L, 1);
    }
  } else {
    lua_Integer s = luaL_checkinteger(L, 2);
    if (s <= 0) return luaL_error(L, "split: split size must be positive, got %I", s);
    n = len == 0 ? 1 : (len - 1) / s + 1;
    if (n > MAX_PIECES) return luaL_error(L, "split: too many pieces (%I)", (lua_Integer)n);
    sizes = lua_newuserdatauv(L, (size_t)n * sizeof *sizes, 0);
    for (int64_t i = 0; i < n; i++) sizes[i] = i + 1 < n ? s : len - s * (n - 1);
  }
  ml_array **outs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *outs, 0);
  lua_createtable(L, (int)n, 0);
  for (int64_t i = 0; i < n; i++) {
    outs[i] = l_newarray(L);
    lua_rawseti(L, -2, i + 1);
  }
  l_check(L, ml_split(outs, a, d, (int)n, sizes));
  return 1;
}

void l_open_shape(lua_State *L, int module, int methods) {
  static const luaL_Reg fns[] = {
      {"reshape", l_reshape},     {"view", l_view},
      {"t", l_t},                 {"transpose", l_transpose},
      {"permute", l_permute},     {"squeeze", l_squeeze},
      {"unsqueeze", l_unsqueeze}, {"expand", l_expand},
      {"narrow", l_narrow},       {"select", l_select},
      {"flatten", l_flatten},     {"split", l_split},
      {"flip", l_flip},
      {NULL, NULL}};
  static const luaL_Reg lists[] = {{"cat", l_cat}, {"stack", l_stack}, {NULL, NULL}};
  l_setfuncs(L, module, fns);
  l_setfuncs(L, methods, fns);
  l_setfuncs(L, module, lists);
}
