/* Constructors, conversions and moves: zeros ones full empty eye arange
 * linspace array *_like, and the methods astype totable item to cpu cuda
 * clone contiguous fill copy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/backend.h"
#include "../core/copy.h"
#include "l_array.h"

typedef struct {
  int ndim;
  int64_t shape[ML_MAX_DIMS];
  int all_int;
} table_info;

/* Finds the shape of a nested table from its first elements. */
static void table_shape(lua_State *L, int idx, table_info *ti) {
  ti->ndim = 0;
  ti->all_int = 1;
  lua_pushvalue(L, idx);
  while (lua_type(L, -1) == LUA_TTABLE) {
    if (ti->ndim == ML_MAX_DIMS)
      luaL_error(L, "%s: nested deeper than %d levels", l_opname(L),
                 ML_MAX_DIMS);
    ti->shape[ti->ndim++] = (int64_t)lua_rawlen(L, -1);
    if (lua_rawlen(L, -1) == 0) break;
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

/* Reads the numbers of the nested table at idx (depth d) into buf,
 * checking that every row has the expected length; *all_int is cleared
 * by a float. */
static void table_fill(lua_State *L, int idx, const table_info *ti, int d,
                       int64_t *pos, ml_scalar *buf, int *all_int) {
  if (lua_type(L, idx) != LUA_TTABLE || (int64_t)lua_rawlen(L, idx) != ti->shape[d])
    luaL_error(L, "%s: ragged nested table (expected %I elements at depth %d)",
               l_opname(L), (LUAI_UACINT)ti->shape[d], d + 1);
  for (int64_t i = 1; i <= ti->shape[d]; i++) {
    lua_rawgeti(L, idx, i);
    if (d + 1 < ti->ndim) {
      table_fill(L, lua_gettop(L), ti, d + 1, pos, buf, all_int);
    } else {
      int t = lua_type(L, -1);
      if (t != LUA_TBOOLEAN && t != LUA_TNUMBER)
        luaL_error(L, "%s: expected numbers, found %s", l_opname(L),
                   luaL_typename(L, -1));
      buf[*pos] = l_checkscalar(L, -1);
      if (!buf[*pos].is_int) *all_int = 0;
      (*pos)++;
    }
    lua_pop(L, 1);
  }
}

void l_array_from_table(lua_State *L, int idx, int dtype, ml_device device,
                        ml_array *out) {
  table_info ti;
  table_shape(L, idx, &ti);
  int64_t n = 1;
  for (int d = 0; d < ti.ndim; d++) n *= ti.shape[d];
  /* Lua-managed scratch, so that a raise inside never leaks it. */
  ml_scalar *buf = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *buf, 0);
  int64_t pos = 0;
  int all_int = 1;
  if (n > 0) table_fill(L, idx, &ti, 0, &pos, buf, &all_int);
  ml_dtype t = dtype == ML_NDTYPES ? (all_int && n > 0 ? ML_INT64 : ml_default_dtype())
                                   : (ml_dtype)dtype;
  void *host = lua_newuserdatauv(L, (size_t)(n ? n : 1) * ml_dtype_size(t), 0);
  size_t sz = ml_dtype_size(t);
  for (int64_t i = 0; i < n; i++) {
    if (!ml_scalar_storable(buf[i], t))
      l_check(L, ml_scalar_check_store(NULL, buf[i], t));
    ml_scalar_store((char *)host + i * (int64_t)sz, t, buf[i]);
  }
  l_check(L, ml_from_host(out, t, ti.ndim, ti.shape, device, host));
  lua_pop(L, 2);
}

/* ---- constructors ---- */

static int new_filled(lua_State *L, const char *op, ml_scalar *value) {
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, opts, op);
  int64_t shape[ML_MAX_DIMS];
  int ndim = l_checkshape(L, 1, last, shape, op);
  ml_dtype t = l_optdtype(L, opts, ml_default_dtype());
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  if (value)
    l_check(L, ml_full(r, t, ndim, shape, dev, *value));
  else
    l_check(L, ml_array_empty(r, t, ndim, shape, dev));
  return 1;
}

static int l_zeros(lua_State *L) {
  ml_scalar z = ml_scalar_int(0);
  return new_filled(L, "zeros", &z);
}

static int l_ones(lua_State *L) {
  ml_scalar one = ml_scalar_int(1);
  return new_filled(L, "ones", &one);
}

static int l_empty(lua_State *L) { return new_filled(L, "empty", NULL); }

/* full(shape..., value [, opts]): an integer value gives int64 unless a
 * dtype is named, as in NumPy. */
static int l_full(lua_State *L) {
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, opts, "full");
  if (last < 1) return luaL_error(L, "full: expected a shape and a value");
  ml_scalar v = l_checkscalar(L, last);
  int64_t shape[ML_MAX_DIMS];
  int ndim = l_checkshape(L, 1, last - 1, shape, "full");
  ml_dtype t = l_optdtype(L, opts, v.is_int ? ML_INT64 : ml_default_dtype());
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  l_check(L, ml_full(r, t, ndim, shape, dev, v));
  return 1;
}

static int l_eye(lua_State *L) {
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, opts, "eye");
  lua_Integer n = luaL_checkinteger(L, 1);
  lua_Integer m = last >= 2 ? luaL_checkinteger(L, 2) : n;
  if (n < 0 || m < 0)
    return luaL_error(L, "eye: negative size %Ix%I", (LUAI_UACINT)n,
                      (LUAI_UACINT)m);
  int64_t shape[2] = {n, m};
  ml_dtype t = l_optdtype(L, opts, ml_default_dtype());
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  l_check(L, ml_full(r, t, 2, shape, dev, ml_scalar_int(0)));
  ml_array diag = *r; /* the diagonal as a strided 1-D view */
  diag.ndim = 1;
  diag.shape[0] = n < m ? n : m;
  diag.strides[0] = m + 1;
  l_check(L, ml_fill("eye", &diag, ml_scalar_int(1)));
  return 1;
}

/* A new 1-D array of n values start + i * step, which must be storable in
 * an integer dtype t: the values lie between the first and the last. */
static int new_range(lua_State *L, ml_dtype t, ml_device dev, int64_t n,
                     ml_scalar start, ml_scalar step) {
  if (n > 0 && !ml_dtype_is_float(t)) {
    double a = ml_scalar_to_double(start), h = ml_scalar_to_double(step);
    ml_scalar last = ml_scalar_float(a + (double)(n - 1) * h);
    if (start.is_int && step.is_int) /* wrapping, as cpu_iota computes */
      last = ml_scalar_int((int64_t)((uint64_t)start.i +
                                     (uint64_t)(n - 1) * (uint64_t)step.i));
    l_check(L, ml_scalar_check_store(NULL, start, t));
    l_check(L, ml_scalar_check_store(NULL, last, t));
  }
  int64_t shape[1] = {n};
  ml_array *r = l_newarray(L);
  l_check(L, ml_array_empty(r, t, 1, shape, dev));
  const ml_backend *be;
  l_check(L, ml_backend_get(dev, &be));
  l_check(L, be->iota(r, start, step));
  return 1;
}

/* arange(stop), arange(start, stop [, step]): stop excluded, as in NumPy;
 * int64 when every argument is an integer. */
static int l_arange(lua_State *L) {
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, opts, "arange");
  if (last < 1 || last > 3) return luaL_error(L, "arange: expected 1 to 3 numbers");
  ml_scalar a = ml_scalar_int(0), b, h = ml_scalar_int(1);
  if (last == 1) {
    b = l_checkscalar(L, 1);
  } else {
    a = l_checkscalar(L, 1);
    b = l_checkscalar(L, 2);
    if (last == 3) h = l_checkscalar(L, 3);
  }
  int ints = a.is_int && b.is_int && h.is_int;
  ml_dtype t = l_optdtype(L, opts, ints ? ML_INT64 : ml_default_dtype());
  double step = ml_scalar_to_double(h);
  if (step == 0 || isnan(step)) return luaL_error(L, "arange: step must be nonzero");
  int64_t n = 0;
  if (ints) {
    /* In unsigned arithmetic: the span of two int64s may not fit one. */
    int up = h.i > 0;
    if (up ? b.i > a.i : b.i < a.i) {
      uint64_t span = up ? (uint64_t)b.i - (uint64_t)a.i
                         : (uint64_t)a.i - (uint64_t)b.i;
      uint64_t by = up ? (uint64_t)h.i : -(uint64_t)h.i;
      uint64_t count = (span - 1) / by + 1;
      n = count > INT64_MAX ? INT64_MAX : (int64_t)count;
    }
  } else {
    double count = ceil((ml_scalar_to_double(b) - ml_scalar_to_double(a)) / step);
    if (isnan(count))
      return luaL_error(L, "arange: the range has no length (NaN bound or step)");
    if (count > 0) n = count < 0x1p62 ? (int64_t)count : INT64_MAX;
  }
  return new_range(L, t, l_optdevice(L, opts, ml_default_device()), n, a, h);
}

static int l_linspace(lua_State *L) {
  int last = l_lastpositional(L), opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, opts, "linspace");
  double a = luaL_checknumber(L, 1), b = luaL_checknumber(L, 2);
  lua_Integer n = last >= 3 ? luaL_checkinteger(L, 3) : 50;
  if (n < 0)
    return luaL_error(L, "linspace: negative number of points %I",
                      (LUAI_UACINT)n);
  ml_dtype t = l_optdtype(L, opts, ml_default_dtype());
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  double step = n > 1 ? (b - a) / (double)(n - 1) : 0;
  new_range(L, t, dev, n, ml_scalar_float(a), ml_scalar_float(step));
  if (n > 1) { /* the last point exactly b, as NumPy guarantees */
    ml_array *r = l_checkarray(L, -1), last_el = *r;
    last_el.offset = n - 1;
    last_el.shape[0] = 1;
    l_check(L, ml_fill("linspace", &last_el, ml_scalar_float(b)));
  }
  return 1;
}

static int l_array(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int opts = lua_gettop(L) >= 2 ? 2 : 0;
  l_checkoptions(L, opts, "array");
  int t = ML_NDTYPES;
  if (opts) {
    lua_getfield(L, opts, "dtype");
    if (!lua_isnil(L, -1)) t = l_checkdtype(L, -1);
    lua_pop(L, 1);
  }
  ml_device dev = l_optdevice(L, opts, ml_default_device());
  ml_array *r = l_newarray(L);
  l_array_from_table(L, 1, t, dev, r);
  return 1;
}

static int new_like(lua_State *L, const char *op, ml_scalar *value) {
  ml_array *a = l_checkarray(L, 1);
  int opts = lua_gettop(L) >= 2 && lua_type(L, lua_gettop(L)) == LUA_TTABLE ? lua_gettop(L) : 0;
  l_checkoptions(L, opts, op);
  ml_dtype t = l_optdtype(L, opts, a->dtype);
  ml_device dev = l_optdevice(L, opts, ml_array_device(a));
  ml_array *r = l_newarray(L);
  if (value)
    l_check(L, ml_full(r, t, a->ndim, a->shape, dev, *value));
  else
    l_check(L, ml_array_empty(r, t, a->ndim, a->shape, dev));
  return 1;
}

static int l_zeros_like(lua_State *L) {
  ml_scalar z = ml_scalar_int(0);
  return new_like(L, "zeros_like", &z);
}

static int l_ones_like(lua_State *L) {
  ml_scalar one = ml_scalar_int(1);
  return new_like(L, "ones_like", &one);
}

static int l_empty_like(lua_State *L) {
  return new_like(L, "empty_like", NULL);
}

static int l_full_like(lua_State *L) {
  ml_scalar v = l_checkscalar(L, 2);
  lua_remove(L, 2);
  return new_like(L, "full_like", &v);
}

/* ---- conversions ---- */

static int l_astype(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  ml_dtype t = l_checkdtype(L, 2);
  ml_array *r = l_newarray(L);
  l_check(L, ml_astype(r, a, t));
  return 1;
}

static void push_nested(lua_State *L, const ml_array *a, const char *host,
                        int d, int64_t *pos) {
  size_t sz = ml_dtype_size(a->dtype);
  if (d == a->ndim) {
    l_pushscalar(L, ml_scalar_load(host + *pos * (int64_t)sz, a->dtype));
    (*pos)++;
    return;
  }
  luaL_checkstack(L, 4, "totable: nesting too deep");
  lua_createtable(L, (int)a->shape[d], 0);
  for (int64_t i = 0; i < a->shape[d]; i++) {
    push_nested(L, a, host, d + 1, pos);
    lua_rawseti(L, -2, i + 1);
  }
}

static int l_totable(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  void *host = lua_newuserdatauv(L, ml_array_nbytes(a) + 1, 0);
  const ml_backend *be;
  l_check(L, ml_backend_get(ml_array_device(a), &be));
  l_check(L, be->download(host, a));
  int64_t pos = 0;
  push_nested(L, a, host, 0, &pos);
  return 1;
}

static int l_item(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (ml_array_numel(a) != 1) {
    char b[ML_SHAPE_STR_MAX];
    return luaL_error(L, "item: array of shape %s has %I elements, not 1",
                      ml_shape_str(a->ndim, a->shape, b, sizeof b),
                      (LUAI_UACINT)ml_array_numel(a));
  }
  ml_scalar s;
  l_check(L, ml_read_element(a, 0, &s));
  l_pushscalar(L, s);
  return 1;
}

static int move_to(lua_State *L, ml_device d) {
  ml_array *a = l_checkarray(L, 1);
  ml_array *r = l_newarray(L);
  l_check(L, ml_to_device(r, a, d));
  return 1;
}

static int l_to(lua_State *L) {
  l_checkarray(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING) {
    ml_dtype t;
    if (ml_dtype_parse(lua_tostring(L, 2), &t)) return l_astype(L);
  }
  return move_to(L, l_checkdevice(L, 2));
}

static int l_cpu(lua_State *L) { return move_to(L, ml_cpu()); }

static int l_cuda(lua_State *L) {
  ml_device d = {ML_CUDA, (int)luaL_optinteger(L, 2, 0)};
  return move_to(L, d);
}

static int l_clone(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  ml_array *r = l_newarray(L);
  l_check(L, ml_clone(r, a));
  return 1;
}

static int l_contiguous(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  if (ml_array_is_contiguous(a)) {
    lua_settop(L, 1);
    return 1;
  }
  ml_array *r = l_newarray(L);
  l_check(L, ml_clone(r, a));
  return 1;
}

/* x:fill(v) and x:copy(src) write into x and return it, as in Torch7. */
static int l_fill(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  l_check(L, ml_fill("fill", a, l_checkscalar(L, 2)));
  lua_settop(L, 1);
  return 1;
}

static int l_copy(lua_State *L) {
  ml_array *a = l_checkarray(L, 1);
  ml_array *src = l_tosource(L, 2, a);
  l_check(L, ml_copy("copy", a, src));
  lua_settop(L, 1);
  return 1;
}

void l_open_construct(lua_State *L, int module, int methods) {
  static const luaL_Reg module_only[] = {
      {"zeros", l_zeros},       {"ones", l_ones},
      {"empty", l_empty},       {"full", l_full},
      {"eye", l_eye},           {"arange", l_arange},
      {"linspace", l_linspace}, {"array", l_array},
      {"zeros_like", l_zeros_like}, {"ones_like", l_ones_like},
      {"empty_like", l_empty_like}, {"full_like", l_full_like},
      {NULL, NULL}};
  static const luaL_Reg both[] = {
      {"astype", l_astype}, {"totable", l_totable}, {"item", l_item},
      {"to", l_to},         {"cpu", l_cpu},         {"cuda", l_cuda},
      {"clone", l_clone},   {"contiguous", l_contiguous},
      {"fill", l_fill},     {"copy", l_copy},       {NULL, NULL}};
  l_setfuncs(L, module, module_only);
  l_setfuncs(L, module, both);
  l_setfuncs(L, methods, both);
}
