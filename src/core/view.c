#include "view.h"

#include <string.h>

#include "status.h"

int ml_norm_dim(const char *op, int64_t dim0, int ndim_ext, int *out) {
  int64_t d = dim0 < 0 ? dim0 + ndim_ext : dim0;
  if (d < 0 || d >= ndim_ext || ndim_ext == 0)
    return ml_fail(ML_EINVAL, "%s: dimension %lld out of range for %d dimension%s",
                   op, (long long)(dim0 < 0 ? dim0 : dim0 + 1), ndim_ext,
                   ndim_ext == 1 ? "" : "s");
  *out = (int)d;
  return ML_OK;
}

/* Copies a into out (sharing storage) unless they are the same struct. */
static void begin_view(ml_array *out, const ml_array *a) {
  if (out != a) {
    ml_array tmp;
    ml_array_share(&tmp, a);
    ml_array_release(out);
    *out = tmp;
  }
}

int ml_view_narrow(const char *op, ml_array *out, const ml_array *a, int dim,
                   int64_t start, int64_t length) {
  if (start < 0 || length < 0 || start > a->shape[dim] ||
      length > a->shape[dim] - start) /* start + length may overflow */
    return ml_fail(ML_EINVAL, "%s: range %lld..%lld out of bounds for dimension %d of size %lld",
                   op, (long long)start + 1,
                   (long long)(length > INT64_MAX - start ? INT64_MAX : start + length),
                   dim + 1, (long long)a->shape[dim]);
  begin_view(out, a);
  out->offset += start * out->strides[dim];
  out->shape[dim] = length;
  return ML_OK;
}

int ml_view_select(const char *op, ml_array *out, const ml_array *a, int dim,
                   int64_t i) {
  if (i < 0 || i >= a->shape[dim])
    return ml_fail(ML_EINVAL, "%s: index %lld out of bounds for dimension %d of size %lld",
                   op, (long long)i + 1, dim + 1, (long long)a->shape[dim]);
  begin_view(out, a);
  out->offset += i * out->strides[dim];
  for (int d = dim; d + 1 < out->ndim; d++) {
    out->shape[d] = out->shape[d + 1];
    out->strides[d] = out->strides[d + 1];
  }
  out->ndim--;
  return ML_OK;
}

int ml_view_stride(const char *op, ml_array *out, const ml_array *a, int dim,
                   int64_t start, int64_t count, int64_t step) {
  if (step <= 0 || start < 0 || count < 0 ||
      (count > 0 && (start >= a->shape[dim] ||
                     count - 1 > (a->shape[dim] - 1 - start) / step)))
    return ml_fail(ML_EINVAL, "%s: slice out of bounds for dimension %d of size %lld",
                   op, dim + 1, (long long)a->shape[dim]);
  begin_view(out, a);
  out->offset += start * out->strides[dim];
  out->shape[dim] = count;
  if (count > 1) out->strides[dim] *= step; /* else any step, any stride */
  return ML_OK;
}

int ml_view_transpose(ml_array *out, const ml_array *a, int d0, int d1) {
  begin_view(out, a);
  int64_t t = out->shape[d0];
  out->shape[d0] = out->shape[d1];
  out->shape[d1] = t;
  t = out->strides[d0];
  out->strides[d0] = out->strides[d1];
  out->strides[d1] = t;
  return ML_OK;
}

int ml_view_flip(ml_array *out, const ml_array *a, int dim) {
  begin_view(out, a);
  if (out->shape[dim] > 1) {
    out->offset += (out->shape[dim] - 1) * out->strides[dim];
    out->strides[dim] = -out->strides[dim];
  }
  return ML_OK;
}

int ml_view_permute(const char *op, ml_array *out, const ml_array *a,
                    const int *perm) {
  int seen[ML_MAX_DIMS] = {0};
  for (int d = 0; d < a->ndim; d++) {
    if (perm[d] < 0 || perm[d] >= a->ndim || seen[perm[d]]++)
      return ml_fail(ML_EINVAL, "%s: the dimensions do not form a permutation of 1..%d",
                     op, a->ndim);
  }
  int64_t shape[ML_MAX_DIMS], strides[ML_MAX_DIMS];
  for (int d = 0; d < a->ndim; d++) {
    shape[d] = a->shape[perm[d]];
    strides[d] = a->strides[perm[d]];
  }
  begin_view(out, a);
  memcpy(out->shape, shape, sizeof shape);
  memcpy(out->strides, strides, sizeof strides);
  return ML_OK;
}

int ml_view_unsqueeze(ml_array *out, const ml_array *a, int dim) {
  if (a->ndim >= ML_MAX_DIMS)
    return ml_fail(ML_EINVAL, "unsqueeze: arrays have at most %d dimensions", ML_MAX_DIMS);
  begin_view(out, a);
  for (int d = out->ndim; d > dim; d--) {
    out->shape[d] = out->shape[d - 1];
    out->strides[d] = out->strides[d - 1];
  }
  out->shape[dim] = 1;
  out->strides[dim] =
      dim < out->ndim ? out->strides[dim + 1] * out->shape[dim + 1] : 1;
  out->ndim++;
  return ML_OK;
}

int ml_view_squeeze(ml_array *out, const ml_array *a, int dim) {
  begin_view(out, a);
  int k = 0;
  for (int d = 0; d < out->ndim; d++) {
    int drop = out->shape[d] == 1 && (dim < 0 || d == dim);
    if (drop) continue;
    out->shape[k] = out->shape[d];
    out->strides[k] = out->strides[d];
    k++;
  }
  out->ndim = k;
  return ML_OK;
}

int ml_broadcast_shape(const char *op, int na, const int64_t *sa, int nb,
                       const int64_t *sb, int *nout, int64_t *out) {
  int n = na > nb ? na : nb;
  int64_t res[ML_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int64_t x = i < na ? sa[na - 1 - i] : 1, y = i < nb ? sb[nb - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
      return ml_fail(ML_EINVAL, "%s: shapes %s and %s do not broadcast", op,
                     ml_shape_str(na, sa, b1, sizeof b1),
                     ml_shape_str(nb, sb, b2, sizeof b2));
    }
    res[n - 1 - i] = x == 1 ? y : x;
  }
  memcpy(out, res, (size_t)n * sizeof *res);
  *nout = n;
  return ML_OK;
}

int ml_view_expand(const char *op, ml_array *out, const ml_array *a, int ndim,
                   const int64_t *shape) {
  char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
  if (ndim < a->ndim || ndim > ML_MAX_DIMS)
    return ml_fail(ML_EINVAL, "%s: cannot expand shape %s to %s", op,
                   ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                   ml_shape_str(ndim, shape, b2, sizeof b2));
  /* The view allocates nothing, so nothing else bounds its size: the
   * product of its nonzero sizes (its element count, and the bound of
   * its C-order strides) must stay an int64. */
  int64_t span = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] > 0 && span > INT64_MAX / shape[i])
      return ml_fail(ML_EINVAL, "%s: shape %s is too large", op,
                     ml_shape_str(ndim, shape, b2, sizeof b2));
    if (shape[i] > 0) span *= shape[i];
  }
  int64_t strides[ML_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    int ad = a->ndim - ndim + i;
    if (ad < 0) {
      strides[i] = 0;
      continue;
    }
    if (a->shape[ad] == shape[i])
      strides[i] = a->strides[ad];
    else if (a->shape[ad] == 1)
      strides[i] = 0;
    else
      return ml_fail(ML_EINVAL, "%s: cannot expand shape %s to %s", op,
                     ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                     ml_shape_str(ndim, shape, b2, sizeof b2));
  }
  begin_view(out, a);
  out->ndim = ndim;
  memcpy(out->shape, shape, (size_t)ndim * sizeof *shape);
  memcpy(out->strides, strides, (size_t)ndim * sizeof *strides);
  return ML_OK;
}

int ml_infer_shape(const char *op, int64_t numel, int ndim, int64_t *shape) {
  int infer = -1;
  int64_t known = 1, span = 1; /* span: of the nonzero sizes, kept an int64 */
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == -1) {
      if (infer >= 0) return ml_fail(ML_EINVAL, "%s: only one dimension can be -1", op);
      infer = d;
    } else if (shape[d] < 0) {
      return ml_fail(ML_EINVAL, "%s: negative dimension %lld", op, (long long)shape[d]);
    } else if (shape[d] > 0 && span > INT64_MAX / shape[d]) {
      char b[ML_SHAPE_STR_MAX];
      return ml_fail(ML_EINVAL, "%s: cannot reshape %lld elements into shape %s", op,
                     (long long)numel, ml_shape_str(ndim, shape, b, sizeof b));
    } else {
      known *= shape[d];
      if (shape[d] > 0) span *= shape[d];
    }
  }
  if (infer >= 0 && known > 0 && numel % known == 0) {
    shape[infer] = numel / known;
    known *= shape[infer];
  }
  if (known != numel || (infer >= 0 && known == 0 && numel != 0)) {
    char b[ML_SHAPE_STR_MAX];
    return ml_fail(ML_EINVAL, "%s: cannot reshape %lld elements into shape %s", op,
                   (long long)numel, ml_shape_str(ndim, shape, b, sizeof b));
  }
  if (infer >= 0 && known == 0) shape[infer] = 0;
  return ML_OK;
}

/* Walks a's dimensions and the new ones together, matching groups of equal
 * size; within each group of a the strides must be contiguous (NumPy's
 * attempt_nocopy_reshape). Size-1 dimensions of a are dropped first: their
 * strides are arbitrary and they belong to no group. */
int ml_view_reshape(const char *op, ml_array *out, const ml_array *a, int ndim,
                    const int64_t *shape) {
  int64_t strides[ML_MAX_DIMS], nnew = 1;
  int64_t numel = ml_array_numel(a);
  int negative = 0;
  for (int d = 0; d < ndim; d++) {
    nnew *= shape[d];
    negative |= shape[d] < 0;
  }
  if (ndim < 0 || ndim > ML_MAX_DIMS || negative || nnew != numel) {
    char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
    return ml_fail(ML_EINVAL, "%s: cannot view shape %s as %s", op,
                   ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                   ml_shape_str(ndim < 0 ? 0 : ndim, shape, b2, sizeof b2));
  }
  if (numel == 0 || ml_array_is_contiguous(a)) {
    ml_contiguous_strides(ndim, shape, strides);
  } else {
    int64_t odims[ML_MAX_DIMS], ostrides[ML_MAX_DIMS];
    int on = 0;
    for (int d = 0; d < a->ndim; d++)
      if (a->shape[d] != 1) {
        odims[on] = a->shape[d];
        ostrides[on++] = a->strides[d];
      }
    /* numel > 0 and the products agree, so a group never runs out of
     * dimensions on either side before its sizes match. */
    int oi = 0, ni = 0;
    while (ni < ndim && oi < on) {
      int oj = oi + 1, nj = ni + 1;
      int64_t np = shape[ni], op_ = odims[oi];
      while (np != op_) {
        if (np < op_)
          np *= shape[nj++];
        else
          op_ *= odims[oj++];
      }
      for (int k = oi; k < oj - 1; k++)
        if (ostrides[k] != odims[k + 1] * ostrides[k + 1])
          return ml_fail(ML_EINVAL, "%s: this non-contiguous view cannot be reshaped without a copy; use reshape or contiguous", op);
      strides[nj - 1] = ostrides[oj - 1];
      for (int k = nj - 1; k > ni; k--) strides[k - 1] = strides[k] * shape[k];
      ni = nj;
      oi = oj;
    }
    for (int k = ni; k < ndim; k++) strides[k] = 1; /* trailing size-1 dims */
  }
  ml_array tmp;
  ml_array_share(&tmp, a);
  tmp.ndim = ndim;
  memcpy(tmp.shape, shape, (size_t)ndim * sizeof *shape);
  memcpy(tmp.strides, strides, (size_t)ndim * sizeof *strides);
  if (out != a) ml_array_release(out);
  else ml_storage_release(tmp.storage);
  *out = tmp;
  return ML_OK;
}
