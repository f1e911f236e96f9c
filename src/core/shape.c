#include "shape.h"

#include <string.h>

#include "copy.h"
#include "status.h"
#include "view.h"

/* Copies the user's shape and resolves its -1. */
static int resolve_shape(const char *op, const ml_array *a, int ndim,
                         const int64_t *shape, int64_t *resolved) {
  if (ndim < 0 || ndim > ML_MAX_DIMS)
    return ml_fail(ML_EINVAL, "%s: arrays have at most %d dimensions", op, ML_MAX_DIMS);
  memcpy(resolved, shape, (size_t)ndim * sizeof *shape);
  return ml_infer_shape(op, ml_array_numel(a), ndim, resolved);
}

int ml_reshape(const char *op, ml_array *out, const ml_array *a, int ndim,
               const int64_t *shape) {
  int64_t s[ML_MAX_DIMS];
  int rc = resolve_shape(op, a, ndim, shape, s);
  if (rc) return rc;
  if (ml_view_reshape(op, out, a, ndim, s) == ML_OK) return ML_OK;
  /* Not expressible as a view: the copy is C-contiguous, so it is. */
  ml_array c = {0};
  rc = ml_clone(&c, a);
  if (!rc) rc = ml_view_reshape(op, &c, &c, ndim, s);
  return ml_array_commit(out, &c, rc);
}

int ml_view(const char *op, ml_array *out, const ml_array *a, int ndim,
            const int64_t *shape) {
  int64_t s[ML_MAX_DIMS];
  int rc = resolve_shape(op, a, ndim, shape, s);
  return rc ? rc : ml_view_reshape(op, out, a, ndim, s);
}

int ml_flatten(ml_array *out, const ml_array *a, int start, int end) {
  int64_t s[ML_MAX_DIMS];
  int n = 0;
  if (a->ndim == 0) {
    s[n++] = 1;
  } else {
    if (start < 0 || end >= a->ndim || start > end)
      return ml_fail(ML_EINVAL, "flatten: start dimension %d is after end dimension %d",
                     start + 1, end + 1);
    int64_t merged = 1;
    for (int d = 0; d < start; d++) s[n++] = a->shape[d];
    for (int d = start; d <= end; d++) merged *= a->shape[d];
    s[n++] = merged;
    for (int d = end + 1; d < a->ndim; d++) s[n++] = a->shape[d];
  }
  return ml_reshape("flatten", out, a, n, s);
}

/* The common dtype and device of a list; checks the list is usable. */
static int check_list(const char *op, int n, const ml_array *const *arrays,
                      ml_dtype *dtype) {
  if (n < 1) return ml_fail(ML_EINVAL, "%s: expects a non-empty list of arrays", op);
  const ml_array *a0 = arrays[0];
  *dtype = a0->dtype;
  for (int i = 0; i < n; i++) {
    const ml_array *a = arrays[i];
    int rc = ml_check_same_device(op, a0, a);
    if (rc) return rc;
    if (a->ndim != a0->ndim)
      return ml_fail(ML_EINVAL, "%s: array %d has %d dimension%s, expected %d", op,
                     i + 1, a->ndim, a->ndim == 1 ? "" : "s", a0->ndim);
    *dtype = ml_dtype_promote(*dtype, a->dtype);
  }
  return ML_OK;
}

int ml_cat(ml_array *out, int n, const ml_array *const *arrays, int dim) {
  ml_dtype t;
  int rc = check_list("cat", n, arrays, &t);
  if (rc) return rc;
  const ml_array *a0 = arrays[0];
  if (a0->ndim == 0)
    return ml_fail(ML_EINVAL, "cat: 0-d arrays cannot be concatenated; use stack");
  if (dim < 0 || dim >= a0->ndim)
    return ml_fail(ML_EINVAL, "cat: dimension %d out of range for %d dimension%s",
                   dim + 1, a0->ndim, a0->ndim == 1 ? "" : "s");
  int64_t shape[ML_MAX_DIMS];
  memcpy(shape, a0->shape, sizeof shape);
  shape[dim] = 0;
  for (int i = 0; i < n; i++) {
    const ml_array *a = arrays[i];
    for (int d = 0; d < a->ndim; d++)
      if (d != dim && a->shape[d] != a0->shape[d]) {
        char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
        return ml_fail(ML_EINVAL, "cat: array %d has shape %s, expected %s except in dimension %d",
                       i + 1, ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                       ml_shape_str(a0->ndim, a0->shape, b2, sizeof b2), dim + 1);
      }
    shape[dim] += a->shape[dim];
  }
  ml_array r = {0}, part = {0};
  rc = ml_array_empty(&r, t, a0->ndim, shape, ml_array_device(a0));
  int64_t at = 0;
  for (int i = 0; i < n && !rc; i++) {
    const ml_array *a = arrays[i];
    rc = ml_view_narrow("cat", &part, &r, dim, at, a->shape[dim]);
    if (!rc && ml_array_numel(a) > 0) rc = ml_copy("cat", &part, a);
    at += a->shape[dim];
  }
  ml_array_release(&part);
  return ml_array_commit(out, &r, rc);
}

int ml_stack(ml_array *out, int n, const ml_array *const *arrays, int dim) {
  ml_dtype t;
  int rc = check_list("stack", n, arrays, &t);
  if (rc) return rc;
  const ml_array *a0 = arrays[0];
  if (a0->ndim >= ML_MAX_DIMS)
    return ml_fail(ML_EINVAL, "stack: arrays have at most %d dimensions", ML_MAX_DIMS);
  if (dim < 0 || dim > a0->ndim)
    return ml_fail(ML_EINVAL, "stack: dimension %d out of range for %d dimension%s",
                   dim + 1, a0->ndim + 1, a0->ndim == 0 ? "" : "s");
  for (int i = 1; i < n; i++) {
    const ml_array *a = arrays[i];
    if (memcmp(a->shape, a0->shape, (size_t)a0->ndim * sizeof *a0->shape)) {
      char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
      return ml_fail(ML_EINVAL, "stack: array %d has shape %s, expected %s", i + 1,
                     ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                     ml_shape_str(a0->ndim, a0->shape, b2, sizeof b2));
    }
  }
  int64_t shape[ML_MAX_DIMS];
  for (int d = 0, k = 0; d <= a0->ndim; d++)
    shape[d] = d == dim ? n : a0->shape[k++];
  ml_array r = {0}, part = {0};
  rc = ml_array_empty(&r, t, a0->ndim + 1, shape, ml_array_device(a0));
  for (int i = 0; i < n && !rc && ml_array_numel(&r) > 0; i++) {
    rc = ml_view_select("stack", &part, &r, dim, i);
    if (!rc) rc = ml_copy("stack", &part, arrays[i]);
  }
  ml_array_release(&part);
  return ml_array_commit(out, &r, rc);
}

int ml_split(ml_array *const *outs, const ml_array *a, int dim, int n,
             const int64_t *sizes) {
  if (dim < 0 || dim >= a->ndim)
    return ml_fail(ML_EINVAL, "split: dimension %d out of range for %d dimension%s",
                   dim + 1, a->ndim, a->ndim == 1 ? "" : "s");
  int64_t total = 0;
  for (int i = 0; i < n; i++)
    if (sizes[i] < 0)
      return ml_fail(ML_EINVAL, "split: negative size %lld", (long long)sizes[i]);
  for (int i = 0; i < n; i++) {
    if (sizes[i] > a->shape[dim] - total) /* also keeps total from overflowing */
      return ml_fail(ML_EINVAL, "split: sizes add up to more than the size %lld of dimension %d",
                     (long long)a->shape[dim], dim + 1);
    total += sizes[i];
  }
  if (total != a->shape[dim])
    return ml_fail(ML_EINVAL, "split: sizes add up to %lld but dimension %d has size %lld",
                   (long long)total, dim + 1, (long long)a->shape[dim]);
  int64_t at = 0;
  for (int i = 0; i < n; i++) {
    int rc = ml_view_narrow("split", outs[i], a, dim, at, sizes[i]);
    if (rc) return rc;
    at += sizes[i];
  }
  return ML_OK;
}
