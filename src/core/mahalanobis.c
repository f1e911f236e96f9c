/* Squared Mahalanobis distances through the Cholesky factors of the
 * precisions (ml.linalg.mahalanobis), the quadratic term of a Gaussian
 * mixture's log densities: validation, dtypes and the means' products;
 * the backend's linalg area computes the distances (its mahalanobis
 * entry, linalg_backend.h). */
#include "copy.h"
#include "linalg.h"
#include "linalg_backend.h"
#include "matmul.h"
#include "shape.h"
#include "status.h"

static int check_shapes(const char *op, const ml_array *x, const ml_array *mu,
                        const ml_array *p) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX], s3[ML_SHAPE_STR_MAX];
  int ok = x->ndim == 2 && mu->ndim == 2 && p->ndim == 3;
  if (ok) {
    int64_t d = x->shape[1], k = mu->shape[0];
    ok = mu->shape[1] == d && p->shape[0] == k && p->shape[1] == d && p->shape[2] == d;
  }
  if (ok) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: expects x (n x d), mu (K x d) and p (K x d x d), got shapes %s, %s and %s",
                 op, ml_shape_str(x->ndim, x->shape, s1, sizeof s1),
                 ml_shape_str(mu->ndim, mu->shape, s2, sizeof s2),
                 ml_shape_str(p->ndim, p->shape, s3, sizeof s3));
}

/* p's upper triangles, float64, contiguous: the lower ones zeroed (the
 * row-major upper triangle is the column-major lower one). */
static int upper_factors(ml_array *out, const ml_array *p, const ml_linalg_backend *lb) {
  int rc = ml_astype(out, p, ML_FLOAT64);
  int64_t d = p->shape[1];
  if (rc || ml_array_numel(out) == 0) return rc;
  ml_matrices m = {ML_FLOAT64, ml_array_device(out), d, d, p->shape[0],
                   ml_array_data(out), d, d * d};
  return lb->triangle(&m, 0);
}

/* c = mu_k P_k for each k (K x d, contiguous: a view of matmul's new
 * result): a batch of 1 x d by d x d products. */
static int mean_products(ml_array *out, const ml_array *mu, const ml_array *pu) {
  const char *op = "linalg.mahalanobis";
  int64_t k = mu->shape[0], d = mu->shape[1];
  int64_t rows[3] = {k, 1, d}, flat[2] = {k, d};
  ml_array m3 = {0}, prod = {0};
  int rc = ml_reshape(op, &m3, mu, 3, rows);
  if (!rc) rc = ml_matmul(op, &prod, &m3, pu);
  if (!rc) rc = ml_reshape(op, out, &prod, 2, flat);
  ml_array_release(&m3);
  ml_array_release(&prod);
  return rc;
}

int ml_mahalanobis(ml_array *out, const ml_array *x, const ml_array *mu, const ml_array *p) {
  const char *op = "linalg.mahalanobis";
  const ml_linalg_backend *lb;
  int rc = check_shapes(op, x, mu, p);
  if (!rc) rc = ml_check_same_device(op, x, mu);
  if (!rc) rc = ml_check_same_device(op, x, p);
  if (!rc) rc = ml_linalg_backend_get(ml_array_device(x), &lb);
  if (rc) return rc;
  int single = x->dtype == ML_FLOAT32 && mu->dtype == ML_FLOAT32 && p->dtype == ML_FLOAT32;
  int64_t n = x->shape[0], k = mu->shape[0], d = x->shape[1];
  int64_t shape[2] = {n, k};
  ml_array r = {0}, xc = {0}, muc = {0}, pu = {0}, c = {0};
  rc = ml_array_empty(&r, ML_FLOAT64, 2, shape, ml_array_device(x));
  if (!rc && n * k > 0 && d == 0) rc = ml_fill(op, &r, ml_scalar_int(0));
  if (!rc && n * k > 0 && d > 0) {
    rc = ml_contiguous_as(&xc, x, ML_FLOAT64);
    if (!rc) rc = ml_contiguous_as(&muc, mu, ML_FLOAT64);
    if (!rc) rc = upper_factors(&pu, p, lb);
    if (!rc) rc = mean_products(&c, &muc, &pu);
    if (!rc) rc = lb->mahalanobis(&r, &xc, &pu, &c);
  }
  ml_array_release(&xc);
  ml_array_release(&muc);
  ml_array_release(&pu);
  ml_array_release(&c);
  if (!rc && single) rc = ml_retype(&r, ML_FLOAT32);
  return ml_array_commit(out, &r, rc);
}
