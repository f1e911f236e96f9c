#include "reduce.h"

#include "backend.h"
#include "copy.h"
#include "status.h"
#include "view.h"

/* Whether op computes in floating point (integer inputs become float64). */
static int wants_float(ml_redop op) {
  switch (op) {
    case ML_MEAN: case ML_VAR: case ML_STD: case ML_NORM1: case ML_NORM2:
    case ML_NORMINF: case ML_LOGSUMEXP:
      return 1;
    default:
      return 0;
  }
}

static ml_dtype result_dtype(ml_redop op, ml_dtype t) {
  switch (op) {
    case ML_SUM: case ML_PROD: return ml_dtype_is_float(t) ? t : ML_INT64;
    case ML_ARGMIN: case ML_ARGMAX: return ML_INT64;
    case ML_ANY: case ML_ALL: return ML_UINT8;
    default: return t;
  }
}

/* dim: 0-based, or -1 for all of a. */
static int check_dim(const char *name, const ml_array *a, int dim) {
  if (dim >= -1 && dim < a->ndim) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: dimension %d out of range for %d dimension%s",
                 name, dim + 1, a->ndim, a->ndim == 1 ? "" : "s");
}

/* MIN, MAX, ARGMIN, ARGMAX have no value over nothing. */
static int check_nonempty(ml_redop op, const ml_array *a, int dim) {
  if (op != ML_MIN && op != ML_MAX && op != ML_ARGMIN && op != ML_ARGMAX)
    return ML_OK;
  int64_t n = dim < 0 ? ml_array_numel(a) : a->shape[dim];
  if (n > 0) return ML_OK;
  const char *what = op == ML_MIN || op == ML_ARGMIN ? "minimum" : "maximum";
  char b[ML_SHAPE_STR_MAX];
  ml_shape_str(a->ndim, a->shape, b, sizeof b);
  if (dim < 0)
    return ml_fail(ML_EINVAL, "%s: empty array of shape %s has no %s",
                   ml_redop_name(op), b, what);
  return ml_fail(ML_EINVAL, "%s: dimension %d of shape %s is empty and has no %s",
                 ml_redop_name(op), dim + 1, b, what);
}

/* in: a with the scanned or reduced dimension last (dim -1: a flattened,
 * copied first unless contiguous). */
static int move_last(const char *name, ml_array *in, const ml_array *a,
                     int dim) {
  if (dim < 0) {
    ml_array c = {0};
    int64_t n = ml_array_numel(a);
    int rc = ml_contiguous(&c, a);
    if (!rc) rc = ml_view_reshape(name, in, &c, 1, &n);
    ml_array_release(&c);
    return rc;
  }
  int perm[ML_MAX_DIMS], k = 0;
  for (int d = 0; d < a->ndim; d++)
    if (d != dim) perm[k++] = d;
  perm[k] = dim;
  return ml_view_permute(name, in, a, perm);
}

int ml_reduce(ml_redop op, ml_array *out, const ml_array *a, int dim,
              int keepdim, int64_t ddof) {
  const char *name = ml_redop_name(op);
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  rc = check_dim(name, a, dim);
  if (rc) return rc;
  rc = check_nonempty(op, a, dim);
  if (rc) return rc;
  ml_array src = {0}, in = {0}, r = {0};
  if (wants_float(op) && !ml_dtype_is_float(a->dtype))
    rc = ml_astype(&src, a, ML_FLOAT64);
  else
    ml_array_share(&src, a);
  if (!rc) rc = move_last(name, &in, &src, dim);
  if (!rc) rc = ml_array_empty(&r, result_dtype(op, src.dtype), in.ndim - 1,
                               in.shape, ml_array_device(a));
  if (!rc) rc = be->reduce(op, &r, &in, ddof);
  if (!rc && keepdim) {
    if (dim < 0) {
      int64_t ones[ML_MAX_DIMS];
      for (int d = 0; d < a->ndim; d++) ones[d] = 1;
      rc = ml_view_reshape(name, &r, &r, a->ndim, ones);
    } else {
      rc = ml_view_unsqueeze(&r, &r, dim);
    }
  }
  ml_array_release(&in);
  ml_array_release(&src);
  return ml_array_commit(out, &r, rc);
}

/* Running sums (prod: products) of a along dim, as ml_cumsum. */
static int cumulate(ml_array *out, const ml_array *a, int dim, int prod) {
  const char *name = prod ? "cumprod" : "cumsum";
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  rc = check_dim(name, a, dim);
  if (rc) return rc;
  ml_dtype t = ml_dtype_is_float(a->dtype) ? a->dtype : ML_INT64;
  ml_array in = {0}, r = {0}, rv = {0};
  rc = move_last(name, &in, a, dim);
  if (!rc) {
    if (dim < 0)
      rc = ml_array_empty(&r, t, 1, in.shape, ml_array_device(a));
    else
      rc = ml_array_empty(&r, t, a->ndim, a->shape, ml_array_device(a));
  }
  if (!rc) rc = move_last(name, &rv, &r, dim < 0 ? 0 : dim);
  if (!rc) rc = prod ? be->cumprod(&rv, &in) : be->cumsum(&rv, &in);
  ml_array_release(&rv);
  ml_array_release(&in);
  return ml_array_commit(out, &r, rc);
}

int ml_cumsum(ml_array *out, const ml_array *a, int dim) {
  return cumulate(out, a, dim, 0);
}

int ml_cumprod(ml_array *out, const ml_array *a, int dim) {
  return cumulate(out, a, dim, 1);
}

/* dim back in place of the last dimension of r (move_last's inverse). */
static int move_back(const char *name, ml_array *out, const ml_array *r,
                     int dim) {
  int perm[ML_MAX_DIMS], nd = r->ndim;
  for (int d = 0; d < nd; d++)
    perm[d] = d < dim ? d : d == dim ? nd - 1 : d - 1;
  ml_array v = {0};
  int rc = ml_view_permute(name, &v, r, perm);
  if (!rc) rc = ml_contiguous(out, &v);
  ml_array_release(&v);
  return rc;
}

int ml_softmax(ml_array *out, ml_array *lse, const ml_array *a, int dim,
               int logs) {
  const char *name = logs ? "log_softmax" : "softmax";
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  int64_t one = 1;
  ml_array src = {0}, mv = {0}, in = {0}, r = {0}, l = {0}, res = {0};
  if (!ml_dtype_is_float(a->dtype))
    rc = ml_astype(&src, a, ML_FLOAT64);
  else
    ml_array_share(&src, a);
  if (!rc && a->ndim == 0) rc = ml_view_reshape(name, &src, &src, 1, &one);
  if (!rc) rc = check_dim(name, &src, dim < 0 ? src.ndim - 1 : dim);
  int d = dim < 0 ? src.ndim - 1 : dim;
  if (!rc) rc = move_last(name, &mv, &src, d);
  if (!rc) rc = ml_contiguous(&in, &mv);
  if (!rc) rc = ml_array_empty(&r, in.dtype, in.ndim, in.shape,
                               ml_array_device(a));
  if (!rc) rc = ml_array_empty(&l, in.dtype, in.ndim - 1, in.shape,
                               ml_array_device(a));
  if (!rc) rc = be->softmax(&r, &l, &in, logs);
  if (!rc && d != src.ndim - 1) rc = move_back(name, &res, &r, d);
  else if (!rc) ml_array_share(&res, &r);
  if (!rc) rc = ml_view_unsqueeze(&l, &l, d);
  if (!rc && a->ndim == 0) rc = ml_view_reshape(name, &res, &res, 0, NULL);
  if (!rc && a->ndim == 0) rc = ml_view_reshape(name, &l, &l, 0, NULL);
  ml_array_release(&src);
  ml_array_release(&mv);
  ml_array_release(&in);
  ml_array_release(&r);
  if (!rc && lse) {
    ml_array_release(lse);
    ml_array_move(lse, &l);
  }
  ml_array_release(&l);
  return ml_array_commit(out, &res, rc);
}
