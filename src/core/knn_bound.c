/* The fast keys of the kNN search (core/knn.c): their per-row terms and
 * their error bound, the argument that lets knn_refine settle a query.
 *
 * Error bound. With u the dtype's unit roundoff, a dot product of length d
 * summed in any order errs by at most g_d sum |q_i r_i| <= g_d |q| |r|,
 * g_d = d u / (1 - d u) (Higham, Accuracy and Stability of Numerical
 * Algorithms, 3.1; fused multiply-adds only help). A squared norm computed
 * as the square of a norm has relative error at most g_(d+3), and forming
 * (|q|^2 + |r|^2) - 2 q.r rounds twice more quantities at most
 * (|q| + |r|)^2: the fast Euclidean key errs by at most
 * g_(d+5) (|q| + |r|)^2. The cosine key 1 - (q.r) s t, s and t the
 * inverse norms (relative error g_d / 2 + 2u each), errs by at most
 * g_(2d+8); -q.r by g_d |q| |r|. Underflow (or flushing to zero) adds at
 * most the smallest normal number h per operation, scaled by s t for the
 * cosine. With R and Rmin the largest and the smallest nonzero reference
 * norm, doubling the relative part to cover second-order terms, the
 * rounding of the norms and of the exact keys (which err by at most
 * d 2^-53 times the same scale):
 *   bound = 2 (2d + 8) u M + (8d + 32) h N
 *   Euclidean: M = (|q| + R)^2, N = 1;  cosine: M = 1, N = 1 / (|q| Rmin);
 *   inner product: M = |q| R, N = 1;
 * valid while (2d + 8) u <= 1/2 (d < 2^21 in float32, 2^20 with TF32's
 * 2u; past that the bound exceeds every key's range) and nothing
 * overflows, so the bound is +inf when (|q| + R)^2 exceeds a quarter of
 * the dtype's largest number.
 *
 * TF32 (a backend with tensor cores, float32, opts->tf32): the inputs of
 * the products are rounded to 10-bit mantissas, by rounding or truncation,
 * so each product errs by at most e = 2^-9 + 2^-20 relative, and the sums
 * may truncate, so u counts twice for them. The dot product then errs by
 * at most (e + g_d(2u)) sum |q_i r_i|: e adds at most 2 e |q| R to the
 * Euclidean key, e to the cosine's and e |q| R to the inner product's;
 * with the same doubling,
 *   bound = 2 (2d + 8) 2u M + 2 e P + (8d + 32) h N,
 *   P = 2 |q| R (Euclidean), 1 (cosine), |q| R (inner product).
 * The first pass ranks with TF32, this bound and 2k + SLACK_TF32 (knn.c)
 * candidates (the wider bound needs a wider margin); the queries it leaves
 * unsettled go round again in full float32 with the tighter bound.
 *
 * Split TF32 (the filtered pass on such a backend): x = hi + lo + t with
 * hi, lo the truncations to TF32 of x and x - hi, so |x - hi| < 2^-10 |x|
 * and |t| < 2^-10 |x - hi|; hi hi' + hi lo' + lo hi' (exact products)
 * misses lo lo', hi t', t hi' and three smaller terms, less than
 * 3.01 2^-20 |x x'|: e = 2^-18. Its sums add 3d terms whose magnitudes
 * total at most (1 + 2^-9) sum |q_i r_i|, which counting 4d terms
 * instead of d covers:
 *   bound = 2 (8d + 8) 2u M + 2 e P + (32d + 32) h N.
 * The tensor cores may also sum the Euclidean key itself, as
 * -2 (q.r - |q|^2 / 2 - |r|^2 / 2): 3d + 1 terms of total magnitude at
 * most M / 2 (to first order), so with the norms' errors the key errs by
 * at most about (7d + 6) u M, well inside the bound's first term. */
#include "knn_bound.h"

#include <float.h>
#include <math.h>

#include "copy.h"
#include "elementwise.h"
#include "index.h"
#include "reduce.h"

/* Reads a 0-d array as a double. */
static int read_double(const ml_array *a, double *out) {
  ml_scalar v;
  int rc = ml_read_element(a, 0, &v);
  if (!rc) *out = ml_scalar_to_double(v);
  return rc;
}

int ml_knn_norm_range(const ml_array *rn, ml_knn_metric metric, double *rmax,
                      double *rmin) {
  ml_array zero = {0}, r = {0}, tmp = {0};
  *rmax = 0;
  *rmin = INFINITY;
  int rc = ml_reduce(ML_MAX, &tmp, rn, -1, 0, 0);
  if (!rc) rc = read_double(&tmp, rmax);
  ml_array_release(&tmp);
  if (!rc && metric == ML_KNN_COSINE) {
    rc = ml_binary_scalar(ML_LE, &zero, rn, ml_scalar_int(0), 0);
    if (!rc) rc = ml_masked_fill(&r, rn, &zero, ml_scalar_float(INFINITY));
    if (!rc) rc = ml_reduce(ML_MIN, &tmp, &r, -1, 0, 0);
    if (!rc) rc = read_double(&tmp, rmin);
  }
  ml_array_release(&zero);
  ml_array_release(&r);
  ml_array_release(&tmp);
  return rc;
}

int ml_knn_error_bounds(ml_array *bound, ml_knn_metric metric,
                        const ml_array *qn, double rmax, double rmin, int64_t d,
                        ml_knn_dot dot) {
  int f32 = qn->dtype == ML_FLOAT32;
  double u = f32 ? 0x1p-24 : 0x1p-53, h = f32 ? FLT_MIN : DBL_MIN;
  double big = (f32 ? FLT_MAX : DBL_MAX) / 4;
  double terms = dot == ML_KNN_DOT_SPLIT_TF32 ? 4 * (double)d : (double)d;
  double rel = 2 * (2 * terms + 8) * (dot == ML_KNN_DOT_DTYPE ? u : 2 * u);
  double per = dot == ML_KNN_DOT_TF32 ? 0x1p-9 + 0x1p-20 : dot == ML_KNN_DOT_SPLIT_TF32 ? 0x1p-18 : 0;
  double tf = 2 * per, abs = (8 * terms + 32) * h;
  ml_array q = {0}, s = {0}, sq = {0}, e = {0}, e2 = {0}, e3 = {0}, over = {0};
  int rc = ml_astype(&q, qn, ML_FLOAT64);
  if (!rc) rc = ml_binary_scalar(ML_ADD, &s, &q, ml_scalar_float(rmax), 0);
  if (!rc) rc = ml_binary(ML_MUL, &sq, &s, &s);
  switch (metric) {
    case ML_KNN_COSINE: /* rel + tf + (abs / Rmin) / |q| */
      if (!rc) rc = ml_binary_scalar(ML_DIV, &e2, &q, ml_scalar_float(abs / rmin), 1);
      if (!rc)
        rc = ml_binary_scalar(ML_ADD, &e, &e2, ml_scalar_float(rel + tf), 0);
      break;
    case ML_KNN_IP: /* (rel + tf) R |q| + abs */
      if (!rc)
        rc = ml_binary_scalar(ML_MUL, &e2, &q,
                              ml_scalar_float((rel + tf) * rmax), 0);
      if (!rc) rc = ml_binary_scalar(ML_ADD, &e, &e2, ml_scalar_float(abs), 0);
      break;
    default: /* rel (|q| + R)^2 + tf 2 R |q| + abs */
      if (!rc)
        rc = ml_binary_scalar(ML_MUL, &e2, &q, ml_scalar_float(tf * 2 * rmax),
                              0);
      if (!rc) rc = ml_binary_scalar(ML_ADD, &e3, &e2, ml_scalar_float(abs), 0);
      ml_array_release(&e2);
      if (!rc) rc = ml_binary_scalar(ML_MUL, &e2, &sq, ml_scalar_float(rel), 0);
      if (!rc) rc = ml_binary(ML_ADD, &e, &e2, &e3);
      break;
  }
  if (!rc) rc = ml_binary_scalar(ML_GT, &over, &sq, ml_scalar_float(big), 0);
  if (!rc) rc = ml_masked_fill(bound, &e, &over, ml_scalar_float(INFINITY));
  ml_array *all[] = {&q, &s, &sq, &e, &e2, &e3, &over};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) ml_array_release(all[i]);
  return rc;
}

int ml_knn_aux_terms(ml_array *out, ml_knn_metric metric, const ml_array *x) {
  if (metric == ML_KNN_IP) return ML_OK;
  if (metric != ML_KNN_COSINE) return ml_binary(ML_MUL, out, x, x);
  ml_array inv = {0}, zero = {0};
  int rc = ml_binary_scalar(ML_DIV, &inv, x, ml_scalar_int(1), 1);
  if (!rc) rc = ml_binary_scalar(ML_EQ, &zero, x, ml_scalar_int(0), 0);
  if (!rc) rc = ml_masked_fill(out, &inv, &zero, ml_scalar_int(0));
  ml_array_release(&inv);
  ml_array_release(&zero);
  return rc;
}
