/* The weighted scatters of ml.linalg.gram(x, w): x^T diag(w_k) x for each
 * row w_k of the weights, the M-step of a Gaussian mixture and numpy.cov's
 * weighted products: validation and dtypes; the backend's linalg area
 * computes them (its weighted_gram entry, linalg_backend.h). */
#include "copy.h"
#include "linalg.h"
#include "linalg_backend.h"
#include "shape.h"
#include "status.h"
#include "view.h"

static int check_shapes(const char *op, const ml_array *x, const ml_array *w) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  if (x->ndim != 2)
    return ml_fail(ML_EINVAL, "%s: x must be a matrix (n x d), got shape %s", op,
                   ml_shape_str(x->ndim, x->shape, s1, sizeof s1));
  int64_t n = x->shape[0];
  if ((w->ndim == 1 || w->ndim == 2) && w->shape[w->ndim - 1] == n) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: weights of shape %s do not fit x of shape %s (expected K x %lld or %lld)",
                 op, ml_shape_str(w->ndim, w->shape, s1, sizeof s1),
                 ml_shape_str(x->ndim, x->shape, s2, sizeof s2), (long long)n, (long long)n);
}

int ml_gram_weighted(ml_array *out, const ml_array *x, const ml_array *w) {
  const char *op = "linalg.gram";
  const ml_linalg_backend *lb;
  int rc = check_shapes(op, x, w);
  if (!rc) rc = ml_check_same_device(op, x, w);
  if (!rc) rc = ml_linalg_backend_get(ml_array_device(x), &lb);
  if (rc) return rc;
  int single = x->dtype == ML_FLOAT32 && w->dtype == ML_FLOAT32;
  int64_t n = x->shape[0], d = x->shape[1], k = w->ndim == 2 ? w->shape[0] : 1;
  int64_t shape[3] = {k, d, d}, rows[2] = {k, n};
  ml_array r = {0}, xc = {0}, wc = {0}, w2 = {0};
  rc = ml_array_empty(&r, ML_FLOAT64, 3, shape, ml_array_device(x));
  if (!rc && ml_array_numel(&r) > 0 && n == 0) rc = ml_fill(op, &r, ml_scalar_int(0));
  if (!rc && ml_array_numel(&r) > 0 && n > 0) {
    rc = ml_contiguous_as(&xc, x, ML_FLOAT64);
    if (!rc) rc = ml_contiguous_as(&wc, w, ML_FLOAT64);
    if (!rc) rc = ml_view_reshape(op, &w2, &wc, 2, rows);
    if (!rc) rc = lb->weighted_gram(&r, &xc, &w2);
  }
  ml_array_release(&xc);
  ml_array_release(&wc);
  ml_array_release(&w2);
  if (!rc && single) rc = ml_retype(&r, ML_FLOAT32);
  if (!rc && w->ndim == 1) rc = ml_view_reshape(op, &r, &r, 2, shape + 1);
  return ml_array_commit(out, &r, rc);
}
