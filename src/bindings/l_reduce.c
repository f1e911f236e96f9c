/* Reductions: sum mean prod min max argmin argmax var std norm logsumexp
 * any all, cumsum and cumprod; each a module function and a method.
 *
 *   x:sum()                  every element; returns a Lua value: a number
 *                            (an integer for integer results such as int64
 *                            sums and argmax), a boolean for any/all
 *   x:sum(dim)               dimension dim (1-based, negative from the end);
 *                            an array without that dimension
 *   x:sum(dim, {keepdim=true})   the same, keeping it with size 1
 *   x:sum({keepdim=true})    every element, as an array of x's rank with
 *                            every dimension of size 1
 *   x:max(dim), x:min(dim)   two arrays: the values and their int64 1-based
 *                            indices (Torch); x:max() is a number
 *   ml.sum(x, ...)           the same as x:sum(...), for every function
 *                            here; x may also be a nested table
 *   x:argmax(), x:argmin()   the 1-based flat index (C order) of the first
 *                            extreme; with dim, int64 1-based indices
 *   x:var(...), x:std(...)   option {ddof=0}: divides by n - ddof (NumPy's
 *                            default 0); NaN when n - ddof <= 0
 *   x:norm(...)              option {p=2}: 2 (Frobenius over everything),
 *                            1 (sum of |x|) or math.huge (max of |x|)
 *   x:logsumexp(...)         log(sum(exp(x))), shifted by the maximum
 *   x:cumsum(dim)            running sums along dim, x's shape; without dim
 *                            a 1-D array scans its only dimension and an N-D
 *                            one is flattened first (NumPy)
 *   x:cumprod(dim)           running products, as cumsum
 *   x:softmax([dim])         exp(x - logsumexp) along dim (default the last),
 *   x:log_softmax([dim])     or x - logsumexp; x's shape, then as a second
 *                            result the logsumexp along dim, kept with size 1
 *
 * dtypes: sum, prod, cumsum and cumprod of integers give int64; mean, var, std,
 * norm and logsumexp of integers give float64; floats keep their dtype
 * (float32 accumulates in double); min and max keep the dtype; any and all
 * give uint8 arrays (booleans when the result is a Lua value).
 * Empty inputs: sum 0, prod 1, mean/var/std NaN, logsumexp -inf, norm 0,
 * any false, all true; min, max, argmin and argmax raise "max: empty array
 * of shape 0x3 has no maximum" or "max: dimension 2 of shape 3x0 is empty
 * and has no maximum". NaN propagates through min/max (and argmin/argmax
 * point at the first NaN), as in NumPy. Results do not depend on the
 * number of threads. */
#include <math.h>

#include "../core/copy.h"
#include "../core/reduce.h"
#include "l_array.h"

typedef struct {
  ml_array *a;
  int dim;     /* 0-based, or -1 for every element */
  int keepdim;
  int opts;    /* stack index of the options table, or 0 */
} red_args;

/* (x [, dim] [, opts]): dim may be nil. */
static red_args check_args(lua_State *L, const char *name) {
  red_args r;
  r.a = l_toarray(L, 1, NULL);
  int last = l_lastpositional(L);
  r.opts = last < lua_gettop(L) ? lua_gettop(L) : 0;
  l_checkoptions(L, r.opts, name);
  r.dim = last >= 2 && !lua_isnil(L, 2) ? l_checkdim(L, 2, r.a->ndim, name) : -1;
  r.keepdim = l_optbool(L, r.opts, "keepdim", 0);
  return r;
}

/* Leaves the result of a full reduction without keepdim as a Lua value. */
static int push_result(lua_State *L, const red_args *r, ml_redop op,
                       const ml_array *res) {
  if (r->dim >= 0 || r->keepdim) return 1;
  ml_scalar s;
  l_check(L, ml_read_element(res, 0, &s));
  if (op == ML_ANY || op == ML_ALL)
    lua_pushboolean(L, s.i != 0);
  else
    l_pushscalar(L, s);
  return 1;
}

static int reduce(lua_State *L, ml_redop op, int64_t ddof) {
  const char *name = ml_redop_name(op);
  red_args r = check_args(L, name);
  ml_array *res = l_newarray(L);
  l_check(L, ml_reduce(op, res, r.a, r.dim, r.keepdim, ddof));
  return push_result(L, &r, op, res);
}

/* Values, then indices when a dimension is given. */
static int extreme(lua_State *L, ml_redop vop, ml_redop iop) {
  red_args r = check_args(L, ml_redop_name(vop));
  ml_array *v = l_newarray(L);
  l_check(L, ml_reduce(vop, v, r.a, r.dim, r.keepdim, 0));
  if (r.dim < 0) return push_result(L, &r, vop, v);
  ml_array *idx = l_newarray(L);
  l_check(L, ml_reduce(iop, idx, r.a, r.dim, r.keepdim, 0));
  return 2;
}

static int l_sum(lua_State *L) { return reduce(L, ML_SUM, 0); }
static int l_prod(lua_State *L) { return reduce(L, ML_PROD, 0); }
static int l_mean(lua_State *L) { return reduce(L, ML_MEAN, 0); }
static int l_argmin(lua_State *L) { return reduce(L, ML_ARGMIN, 0); }
static int l_argmax(lua_State *L) { return reduce(L, ML_ARGMAX, 0); }
static int l_logsumexp(lua_State *L) { return reduce(L, ML_LOGSUMEXP, 0); }
static int l_any(lua_State *L) { return reduce(L, ML_ANY, 0); }
static int l_all(lua_State *L) { return reduce(L, ML_ALL, 0); }
static int l_min(lua_State *L) { return extreme(L, ML_MIN, ML_ARGMIN); }
static int l_max(lua_State *L) { return extreme(L, ML_MAX, ML_ARGMAX); }

static int with_ddof(lua_State *L, ml_redop op) {
  int top = lua_gettop(L), opts = top > 1 && l_isoptions(L, top) ? top : 0;
  l_checkoptions(L, opts, ml_redop_name(op));
  return reduce(L, op, l_optinteger(L, opts, "ddof", 0));
}

static int l_var(lua_State *L) { return with_ddof(L, ML_VAR); }
static int l_std(lua_State *L) { return with_ddof(L, ML_STD); }

static int l_norm(lua_State *L) {
  int top = lua_gettop(L), opts = top > 1 && l_isoptions(L, top) ? top : 0;
  l_checkoptions(L, opts, "norm");
  ml_redop op = ML_NORM2;
  if (opts && lua_getfield(L, opts, "p") != LUA_TNIL) {
    lua_Number p = lua_tonumber(L, -1);
    if (p == 1)
      op = ML_NORM1;
    else if (p == HUGE_VAL)
      op = ML_NORMINF;
    else if (p != 2)
      return luaL_error(L, "norm: p must be 1, 2 or math.huge, not %s",
                        luaL_tolstring(L, -1, NULL));
  }
  if (opts) lua_pop(L, 1);
  return reduce(L, op, 0);
}

static int l_cumsum(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  int dim = lua_isnoneornil(L, 2) ? -1 : l_checkdim(L, 2, a->ndim, "cumsum");
  ml_array *r = l_newarray(L);
  l_check(L, ml_cumsum(r, a, dim));
  return 1;
}

static int l_cumprod(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  int dim = lua_isnoneornil(L, 2) ? -1 : l_checkdim(L, 2, a->ndim, "cumprod");
  ml_array *r = l_newarray(L);
  l_check(L, ml_cumprod(r, a, dim));
  return 1;
}

static int softmax(lua_State *L, int logs) {
  const char *name = logs ? "log_softmax" : "softmax";
  ml_array *a = l_toarray(L, 1, NULL);
  int nd = a->ndim ? a->ndim : 1;
  int dim = lua_isnoneornil(L, 2) ? -1 : l_checkdim(L, 2, nd, name);
  if (lua_gettop(L) > 2) return luaL_error(L, "%s: takes (x [, dim])", name);
  ml_array *r = l_newarray(L), *lse = l_newarray(L);
  l_check(L, ml_softmax(r, lse, a, dim, logs));
  return 2;
}

static int l_softmax(lua_State *L) { return softmax(L, 0); }
static int l_log_softmax(lua_State *L) { return softmax(L, 1); }

void l_open_reduce(lua_State *L, int module, int methods) {
  static const luaL_Reg fns[] = {
      {"sum", l_sum},         {"mean", l_mean},     {"prod", l_prod},
      {"min", l_min},         {"max", l_max},       {"argmin", l_argmin},
      {"argmax", l_argmax},   {"var", l_var},       {"std", l_std},
      {"norm", l_norm},       {"logsumexp", l_logsumexp},
      {"cumsum", l_cumsum},   {"cumprod", l_cumprod},
      {"any", l_any},         {"all", l_all},
      {"softmax", l_softmax}, {"log_softmax", l_log_softmax},
      {NULL, NULL}};
  l_setfuncs(L, module, fns);
  l_setfuncs(L, methods, fns);
}
