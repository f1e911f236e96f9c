/* The ml.linalg namespace, its C half: factorisations and solvers
 * (core/linalg.h). moonlab/linalg.lua adds the compositions (lstsq, norm,
 * and ml.cov). Functions of one matrix return numbers where NumPy returns
 * scalars (det and slogdet of a single matrix); everything else returns
 * arrays. */
#include <ctype.h>
#include <string.h>

#include "../core/copy.h"
#include "../core/linalg.h"
#include "l_array.h"

/* The index of the options table after n positional arguments (0: none),
 * checked against the help entry name. */
static int options(lua_State *L, int n, const char *name) {
  int opts = lua_isnoneornil(L, n + 1) ? 0 : n + 1;
  l_checkoptions(L, opts, name);
  return opts;
}

/* The triangle an UPLO option names, numpy's "L" or "U" (either case):
 * 1 for the upper one. */
static int check_uplo(lua_State *L, int opts, const char *name) {
  int upper = 0;
  if (opts && lua_getfield(L, opts, "UPLO") != LUA_TNIL) {
    const char *s = lua_tostring(L, -1);
    if (s && strlen(s) == 1 && toupper((unsigned char)*s) == 'U')
      upper = 1;
    else if (!s || strlen(s) != 1 || toupper((unsigned char)*s) != 'L')
      luaL_error(L, "%s: UPLO must be \"L\" or \"U\", not \"%s\"", name, s);
  }
  if (opts) lua_pop(L, 1);
  return upper;
}

/* Pushes a 0-d result as a number, any other as the array it is. */
static void push_scalar_or_array(lua_State *L, int idx) {
  ml_array *a = l_checkarray(L, idx);
  if (a->ndim == 0) {
    ml_scalar s;
    l_check(L, ml_read_element(a, 0, &s));
    l_pushscalar(L, s);
  } else {
    lua_pushvalue(L, idx);
  }
}

static int l_cholesky(lua_State *L) {
  int opts = options(L, 1, "linalg.cholesky");
  ml_array *a = l_toarray(L, 1, NULL);
  int upper = l_optbool(L, opts, "upper", 0);
  int check = l_optbool(L, opts, "check", 1);
  l_check(L, ml_cholesky(l_newarray(L), a, upper, check));
  return 1;
}

static int l_solve_triangular(lua_State *L) {
  int opts = options(L, 2, "linalg.solve_triangular");
  ml_array *a = l_toarray(L, 1, NULL);
  ml_array *b = l_toarray(L, 2, a);
  ml_triangular how = {!l_optbool(L, opts, "lower", 0),
                       l_optbool(L, opts, "trans", 0),
                       l_optbool(L, opts, "left", 1),
                       l_optbool(L, opts, "unit_diagonal", 0)};
  l_check(L, ml_solve_triangular(l_newarray(L), a, b, &how));
  return 1;
}

static int l_inv_triangular(lua_State *L) {
  int opts = options(L, 1, "linalg.inv_triangular");
  ml_array *a = l_toarray(L, 1, NULL);
  int upper = !l_optbool(L, opts, "lower", 0);
  int unit = l_optbool(L, opts, "unit_diagonal", 0);
  int check = l_optbool(L, opts, "check", 1);
  l_check(L, ml_inv_triangular(l_newarray(L), a, upper, unit, check));
  return 1;
}

static int l_cholesky_solve(lua_State *L) {
  int opts = options(L, 2, "linalg.cholesky_solve");
  ml_array *b = l_toarray(L, 1, NULL);
  ml_array *l = l_toarray(L, 2, b);
  int upper = l_optbool(L, opts, "upper", 0);
  l_check(L, ml_cholesky_solve(l_newarray(L), b, l, upper));
  return 1;
}

/* gram(x [, w]): x^T x, or the scatters x^T diag(w_k) x. */
static int l_gram(lua_State *L) {
  ml_array *x = l_toarray(L, 1, NULL);
  if (lua_isnoneornil(L, 2)) {
    l_check(L, ml_gram(l_newarray(L), x));
  } else {
    ml_array *w = l_toarray(L, 2, x);
    l_check(L, ml_gram_weighted(l_newarray(L), x, w));
  }
  return 1;
}

static int l_mahalanobis(lua_State *L) {
  ml_array *x = l_toarray(L, 1, NULL);
  ml_array *mu = l_toarray(L, 2, x);
  ml_array *p = l_toarray(L, 3, x);
  l_check(L, ml_mahalanobis(l_newarray(L), x, mu, p));
  return 1;
}

static int eigen(lua_State *L, const char *name, int vectors) {
  int opts = options(L, 1, name);
  ml_array *a = l_toarray(L, 1, NULL);
  int upper = check_uplo(L, opts, name);
  ml_array *w = l_newarray(L), *v = vectors ? l_newarray(L) : NULL;
  l_check(L, ml_eigh(name, w, v, a, upper));
  return vectors ? 2 : 1;
}

static int l_eigh(lua_State *L) { return eigen(L, "linalg.eigh", 1); }
static int l_eigvalsh(lua_State *L) { return eigen(L, "linalg.eigvalsh", 0); }

static int l_solve(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  ml_array *b = l_toarray(L, 2, a);
  l_check(L, ml_solve(l_newarray(L), a, b));
  return 1;
}

static int l_inv(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  l_check(L, ml_inv(l_newarray(L), a));
  return 1;
}

static int l_det(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  l_check(L, ml_det(l_newarray(L), a));
  push_scalar_or_array(L, -1);
  return 1;
}

static int l_slogdet(lua_State *L) {
  ml_array *a = l_toarray(L, 1, NULL);
  ml_array *sign = l_newarray(L), *logabs = l_newarray(L);
  int top = lua_gettop(L);
  l_check(L, ml_slogdet(sign, logabs, a));
  push_scalar_or_array(L, top - 1);
  push_scalar_or_array(L, top);
  return 2;
}

static int l_qr(lua_State *L) {
  int opts = options(L, 1, "linalg.qr");
  ml_array *a = l_toarray(L, 1, NULL);
  const char *mode = "reduced";
  if (opts && lua_getfield(L, opts, "mode") != LUA_TNIL) mode = lua_tostring(L, -1);
  int complete = strcmp(mode, "complete") == 0, r_only = strcmp(mode, "r") == 0;
  if (!complete && !r_only && strcmp(mode, "reduced") != 0)
    return luaL_error(L, "linalg.qr: unknown mode '%s' (reduced, complete or r)", mode);
  ml_array *q = r_only ? NULL : l_newarray(L), *r = l_newarray(L);
  l_check(L, ml_qr(q, r, a, complete));
  return r_only ? 1 : 2;
}

static int l_svd(lua_State *L) {
  int opts = options(L, 1, "linalg.svd");
  ml_array *a = l_toarray(L, 1, NULL);
  int full = l_optbool(L, opts, "full_matrices", 1);
  int uv = l_optbool(L, opts, "compute_uv", 1);
  ml_array *u = uv ? l_newarray(L) : NULL, *s = l_newarray(L);
  ml_array *vh = uv ? l_newarray(L) : NULL;
  l_check(L, ml_svd(u, s, vh, a, full));
  return uv ? 3 : 1;
}

void l_open_linalg(lua_State *L, int module, int methods) {
  (void)methods;
  static const luaL_Reg funcs[] = {{"cholesky", l_cholesky},
                                   {"solve_triangular", l_solve_triangular},
                                   {"inv_triangular", l_inv_triangular},
                                   {"cholesky_solve", l_cholesky_solve},
                                   {"gram", l_gram},
                                   {"mahalanobis", l_mahalanobis},
                                   {"eigh", l_eigh},
                                   {"eigvalsh", l_eigvalsh},
                                   {"solve", l_solve},
                                   {"inv", l_inv},
                                   {"det", l_det},
                                   {"slogdet", l_slogdet},
                                   {"qr", l_qr},
                                   {"svd", l_svd},
                                   {NULL, NULL}};
  lua_newtable(L);
  l_setfuncs(L, -1, funcs);
  lua_setfield(L, module, "linalg");
}
