/* x[key] and x[key] = v for keys that are not names:
 *   x[i]            the element of a 1-D array; else the view x:select(1, i)
 *   x[{i, j, ...}]  specs per dimension: an integer selects (dropping the
 *                   dimension), {} takes it whole, {a} keeps index a, {a, b}
 *                   the range a..b (inclusive; empty when b = a - 1),
 *                   {a, b, step} every step-th of a..b; the remaining
 *                   dimensions are whole. As many integers as dimensions
 *                   name one element (a Lua number); anything else is a
 *                   view sharing x's storage.
 *   x[mask]         uint8 mask, a copy: one whose shape is a prefix of x's
 *                   picks slices as NumPy (a 1-D mask over the rows picks
 *                   rows); any other broadcasts as masked_select
 *   x[idx]          integer array: index_select along dimension 1, a copy
 * Indices are 1-based; negative ones count from the end (-1 is the last).
 * Assignment through a view fills it with a number or copies an array or
 * table into it (broadcasting); x[mask] = v sets the elements where mask
 * is true to v's values in order (or all to one value), as NumPy does;
 * x[idx] = v writes the picked slices. */
#include "../core/copy.h"
#include "../core/index.h"
#include "../core/view.h"
#include "l_array.h"

typedef enum { SUB_VIEW, SUB_ELEMENT, SUB_MASK, SUB_INDEX } sub_kind;

/* Raises a core error as indexing's: x[k] runs index_select,
 * masked_select or scatter underneath, but the user wrote x[k]. */
static void check(lua_State *L, int rc) {
  if (rc) l_raise_as(L, "index");
}

/* A 1-based (or negative) index i into a dimension (dim: 1-based, for
 * messages) of the given size, as a 0-based one. */
static int64_t norm_index(lua_State *L, lua_Integer i, int dim, int64_t size) {
  int64_t j = i < 0 ? i + size + 1 : i;
  if (j < 1 || j > size)
    luaL_error(L, "index: index %I is out of bounds for dimension %d with "
               "size %I", (LUAI_UACINT)i, dim, (LUAI_UACINT)size);
  return j - 1;
}

static lua_Integer check_integer(lua_State *L, int idx) {
  int ok = 0;
  lua_Integer i = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
  if (!ok) {
    if (lua_type(L, idx) == LUA_TNUMBER)
      luaL_error(L, "index: %s is not an integer", lua_tostring(L, idx));
    luaL_error(L, "index: expected an integer, got %s", luaL_typename(L, idx));
  }
  return i;
}

/* Applies the range spec at the top of the stack (a table of 0 to 3
 * integers) to dimension d of v, the original dimension dim. */
static void apply_range(lua_State *L, ml_array *v, int d, int dim) {
  int spec = lua_gettop(L);
  lua_Integer n = (lua_Integer)lua_rawlen(L, spec), b[3] = {0, 0, 1};
  if (n > 3)
    luaL_error(L, "index: a range has at most 3 entries (first, last, step), got %I",
               (LUAI_UACINT)n);
  for (int k = 0; k < n; k++) {
    lua_rawgeti(L, spec, k + 1);
    b[k] = check_integer(L, -1);
    lua_pop(L, 1);
  }
  int64_t size = v->shape[d];
  if (n == 0) return;
  if (n == 1) {
    check(L, ml_view_narrow("index", v, v, d, norm_index(L, b[0], dim, size),
                            1));
    return;
  }
  int64_t first = b[0] < 0 ? b[0] + size + 1 : b[0];
  int64_t last = b[1] < 0 ? b[1] + size + 1 : b[1];
  if (b[2] <= 0)
    luaL_error(L, "index: step must be positive, got %I", (LUAI_UACINT)b[2]);
  if (first < 1 || first > size + 1 || last < 0 || last > size)
    luaL_error(L, "index: range %I..%I is out of bounds for dimension %d "
               "with size %I", (LUAI_UACINT)b[0], (LUAI_UACINT)b[1], dim,
               (LUAI_UACINT)size);
  int64_t count = last >= first ? (last - first) / b[2] + 1 : 0;
  check(L, ml_view_stride("index", v, v, d, count ? first - 1 : 0, count,
                          b[2]));
}

/* Resolves the key at 2 against a: a view in *v (borrowed: it holds no
 * reference of its own, a at 1 keeps the storage alive) or, for
 * SUB_MASK and SUB_INDEX, the key array itself. */
static sub_kind resolve(lua_State *L, const ml_array *a, ml_array *v) {
  *v = *a;
  int kt = lua_type(L, 2);
  if (kt == LUA_TNUMBER) {
    if (a->ndim == 0) luaL_error(L, "index: a 0-d array cannot be indexed by a number");
    int64_t i = norm_index(L, check_integer(L, 2), 1, a->shape[0]);
    check(L, ml_view_select("index", v, v, 0, i));
    return a->ndim == 1 ? SUB_ELEMENT : SUB_VIEW;
  }
  if (kt == LUA_TUSERDATA && l_testarray(L, 2))
    return l_checkarray(L, 2)->dtype == ML_UINT8 ? SUB_MASK : SUB_INDEX;
  if (kt != LUA_TTABLE)
    luaL_error(L, "index: invalid key of type %s", luaL_typename(L, 2));
  int n = (int)lua_rawlen(L, 2), d = 0, selected = 0;
  if (n > a->ndim)
    luaL_error(L, "index: %d indices for an array of %d dimension%s", n, a->ndim,
               a->ndim == 1 ? "" : "s");
  for (int k = 1; k <= n; k++) {
    int t = lua_rawgeti(L, 2, k);
    if (t == LUA_TNUMBER) {
      int64_t i = norm_index(L, check_integer(L, -1), k, v->shape[d]);
      check(L, ml_view_select("index", v, v, d, i));
      selected++;
    } else if (t == LUA_TTABLE) {
      apply_range(L, v, d++, k);
    } else {
      luaL_error(L, "index: entry %d must be an integer or a table, got %s", k,
                 luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  return selected == a->ndim && a->ndim > 0 ? SUB_ELEMENT : SUB_VIEW;
}

int l_subscript_get(lua_State *L) {
  ml_array *a = l_checkarray(L, 1), v;
  ml_array *r;
  ml_scalar s;
  switch (resolve(L, a, &v)) {
    case SUB_ELEMENT:
      check(L, ml_read_element(&v, 0, &s));
      l_pushscalar(L, s);
      return 1;
    case SUB_VIEW:
      r = l_newarray(L);
      ml_array_share(r, &v);
      return 1;
    case SUB_MASK:
      r = l_newarray(L);
      check(L, ml_mask_get(r, a, l_checkarray(L, 2)));
      return 1;
    default:
      r = l_newarray(L);
      check(L, ml_index_select(r, a, 0, l_checkarray(L, 2)));
      return 1;
  }
}

int l_subscript_set(lua_State *L) {
  ml_array *a = l_checkarray(L, 1), v;
  sub_kind kind = resolve(L, a, &v);
  int vt = lua_type(L, 3);
  if ((vt == LUA_TNUMBER || vt == LUA_TBOOLEAN) &&
      (kind == SUB_VIEW || kind == SUB_ELEMENT)) {
    check(L, ml_fill("index", &v, l_checkscalar(L, 3)));
    return 0;
  }
  ml_array *src = l_tosource(L, 3, a);
  if (kind == SUB_MASK)
    check(L, ml_mask_put(a, l_checkarray(L, 2), src));
  else if (kind == SUB_INDEX)
    check(L, ml_index_put(a, 0, l_checkarray(L, 2), src));
  else
    check(L, ml_copy("index", &v, src));
  return 0;
}
