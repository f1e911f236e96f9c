/* searchsorted, histogram and bincount: checks, contiguous operands of
 * one dtype, the result array, dispatch. */
#include "count.h"

#include <float.h>
#include <string.h>

#include "backend.h"
#include "copy.h"
#include "status.h"

int ml_searchsorted(ml_array *out, const ml_array *a, const ml_array *v,
                    int right) {
  char sa[ML_SHAPE_STR_MAX];
  const ml_backend *be;
  int rc = ml_check_same_device("searchsorted", a, v);
  if (!rc) rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  if (a->ndim != 1)
    return ml_fail(ML_EINVAL, "searchsorted: a must be 1-D, not %s",
                   ml_shape_str(a->ndim, a->shape, sa, sizeof sa));
  ml_dtype t = ml_dtype_promote(a->dtype, v->dtype);
  ml_array ca = {0}, cv = {0}, r = {0};
  rc = ml_contiguous_as(&ca, a, t);
  if (!rc) rc = ml_contiguous_as(&cv, v, t);
  if (!rc) rc = ml_array_empty(&r, ML_INT64, v->ndim, v->shape,
                               ml_array_device(v));
  if (!rc && ml_array_numel(v) > 0) rc = be->searchsorted(&r, &ca, &cv, right);
  ml_array_release(&ca);
  ml_array_release(&cv);
  return ml_array_commit(out, &r, rc);
}

int ml_histogram(ml_array *out, const ml_array *a, const ml_array *weights,
                 const ml_array *edges, double denom) {
  char sa[ML_SHAPE_STR_MAX], sw[ML_SHAPE_STR_MAX];
  const ml_backend *be;
  int rc = ml_check_same_device("histogram", a, edges);
  if (!rc && weights) rc = ml_check_same_device("histogram", a, weights);
  if (!rc) rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  ml_dtype t = ml_dtype_is_float(a->dtype) ? a->dtype : ML_FLOAT64;
  if (edges->ndim != 1 || edges->shape[0] < 2 || edges->dtype != t)
    return ml_fail(ML_EINVAL, "histogram: edges must be 1-D %s with at "
                   "least 2 values, not %s %s", ml_dtype_name(t),
                   ml_dtype_name(edges->dtype),
                   ml_shape_str(edges->ndim, edges->shape, sa, sizeof sa));
  if (weights && (weights->ndim != a->ndim ||
                  ml_array_numel(weights) != ml_array_numel(a) ||
                  memcmp(weights->shape, a->shape,
                         sizeof *a->shape * (size_t)a->ndim)))
    return ml_fail(ML_EINVAL, "histogram: weights of shape %s do not match "
                   "the input's %s",
                   ml_shape_str(weights->ndim, weights->shape, sw, sizeof sw),
                   ml_shape_str(a->ndim, a->shape, sa, sizeof sa));
  if (!(denom > 0))
    return ml_fail(ML_EINVAL, "histogram: the range's width %g is not "
                   "positive", denom);
  /* histogram_bin.h's arithmetic in t: x - lo must not overflow (a margin
   * for the edges' rounding), nor the width round to 0 */
  double widest = t == ML_FLOAT32 ? FLT_MAX * (1 - 0x1p-20) : DBL_MAX * (1 - 0x1p-49);
  if (!(denom <= widest))
    return ml_fail(ML_EINVAL, "histogram: the range's width %g is too wide "
                   "for %s (at most %g)", denom, ml_dtype_name(t), widest);
  if (t == ML_FLOAT32 && (float)denom == 0)
    return ml_fail(ML_EINVAL, "histogram: the range's width %g is too narrow "
                   "for float32", denom);
  int64_t nbins = edges->shape[0] - 1;
  ml_array ca = {0}, ce = {0}, cw = {0}, r = {0};
  rc = ml_contiguous_as(&ca, a, t);
  if (!rc) rc = ml_contiguous(&ce, edges);
  if (!rc && weights) rc = ml_contiguous_as(&cw, weights, ML_FLOAT64);
  if (!rc) rc = ml_array_empty(&r, weights ? ML_FLOAT64 : ML_INT64, 1, &nbins,
                               ml_array_device(a));
  if (!rc) rc = be->histogram(&r, &ca, weights ? &cw : NULL, &ce, denom);
  ml_array_release(&ca);
  ml_array_release(&ce);
  ml_array_release(&cw);
  return ml_array_commit(out, &r, rc);
}

int ml_bincount(ml_array *out, const ml_array *a, int64_t lo, int64_t nbins) {
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  if (ml_dtype_is_float(a->dtype))
    return ml_fail(ML_EINVAL, "bincount: x must hold integers, not %s",
                   ml_dtype_name(a->dtype));
  if (nbins < 0)
    return ml_fail(ML_EINVAL, "bincount: %lld bins", (long long)nbins);
  ml_array ca = {0}, r = {0};
  rc = ml_contiguous(&ca, a);
  if (!rc) rc = ml_array_empty(&r, ML_INT64, 1, &nbins, ml_array_device(a));
  if (!rc) rc = be->bincount(&r, &ca, lo);
  ml_array_release(&ca);
  return ml_array_commit(out, &r, rc);
}
