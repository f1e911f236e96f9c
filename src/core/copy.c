#include "copy.h"

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "status.h"
#include "view.h"

/* Whether the memory spans of two views on one storage intersect. */
static int may_overlap(const ml_array *a, const ml_array *b) {
  if (a->storage != b->storage) return 0;
  int64_t lo[2], hi[2];
  const ml_array *v[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    lo[k] = hi[k] = v[k]->offset * (int64_t)ml_dtype_size(v[k]->dtype);
    for (int d = 0; d < v[k]->ndim; d++) {
      int64_t span = (v[k]->shape[d] - 1) * v[k]->strides[d] *
                     (int64_t)ml_dtype_size(v[k]->dtype);
      if (v[k]->shape[d] == 0) return 0;
      if (span < 0) lo[k] += span; else hi[k] += span;
    }
    hi[k] += (int64_t)ml_dtype_size(v[k]->dtype);
  }
  return lo[0] < hi[1] && lo[1] < hi[0];
}

int ml_copy(const char *op, const ml_array *dst, const ml_array *src) {
  int rc = ml_check_same_device(op, dst, src);
  if (rc) return rc;
  /* Leading size-1 dimensions of src beyond dst's rank are dropped, as
   * NumPy does: x[1] = y[{{2}}] writes a 1x3 row into a row of 3. */
  ml_array s = *src;
  while (s.ndim > dst->ndim && s.shape[0] == 1) {
    s.ndim--;
    memmove(s.shape, s.shape + 1, (size_t)s.ndim * sizeof *s.shape);
    memmove(s.strides, s.strides + 1, (size_t)s.ndim * sizeof *s.strides);
  }
  ml_array b = {0}, tmp = {0};
  rc = ml_view_expand(op, &b, &s, dst->ndim, dst->shape);
  if (rc) return rc;
  const ml_backend *be;
  rc = ml_backend_get(ml_array_device(dst), &be);
  if (!rc && may_overlap(dst, &b)) {
    rc = ml_clone(&tmp, &b);
    if (!rc) {
      ml_array_release(&b);
      rc = ml_view_expand(op, &b, &tmp, dst->ndim, dst->shape);
    }
  }
  if (!rc) rc = be->copy(dst, &b);
  ml_array_release(&b);
  ml_array_release(&tmp);
  return rc;
}

int ml_astype(ml_array *out, const ml_array *a, ml_dtype t) {
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  ml_array r;
  rc = ml_array_empty_like(&r, a, t);
  if (rc) return rc;
  rc = be->copy(&r, a);
  return ml_array_commit(out, &r, rc);
}

int ml_clone(ml_array *out, const ml_array *a) { return ml_astype(out, a, a->dtype); }

int ml_contiguous(ml_array *out, const ml_array *a) {
  if (ml_array_is_contiguous(a)) {
    ml_array_share(out, a);
    return ML_OK;
  }
  return ml_clone(out, a);
}

int ml_contiguous_as(ml_array *out, const ml_array *a, ml_dtype t) {
  return a->dtype == t ? ml_contiguous(out, a) : ml_astype(out, a, t);
}

int ml_retype(ml_array *a, ml_dtype t) {
  ml_array r = {0};
  int rc = ml_astype(&r, a, t);
  if (rc) return rc;
  ml_array_release(a);
  *a = r;
  return ML_OK;
}

int ml_fill(const char *op, const ml_array *dst, ml_scalar v) {
  const ml_backend *be;
  int rc = ml_scalar_check_store(op, v, dst->dtype);
  if (!rc) rc = ml_backend_get(ml_array_device(dst), &be);
  return rc ? rc : be->fill(dst, v);
}

int ml_full(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
            ml_device device, ml_scalar v) {
  ml_array r;
  int rc = ml_scalar_check_store(NULL, v, t);
  if (!rc) rc = ml_array_empty(&r, t, ndim, shape, device);
  if (rc) return rc;
  rc = ml_fill("full", &r, v);
  return ml_array_commit(out, &r, rc);
}

int ml_from_host(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
                 ml_device device, const void *host) {
  const ml_backend *be;
  int rc = ml_backend_get(device, &be);
  if (rc) return rc;
  ml_array r;
  rc = ml_array_empty(&r, t, ndim, shape, device);
  if (rc) return rc;
  rc = be->upload(&r, host);
  return ml_array_commit(out, &r, rc);
}

int ml_to_device(ml_array *out, const ml_array *a, ml_device device) {
  ml_device from = ml_array_device(a);
  if (ml_device_equal(from, device)) {
    ml_array_share(out, a);
    return ML_OK;
  }
  const ml_backend *src_be;
  int rc = ml_backend_get(from, &src_be);
  if (rc) return rc;
  size_t n = ml_array_nbytes(a);
  void *host = malloc(n ? n : 1);
  if (!host)
    return ml_fail(ML_ENOMEM, "out of host memory staging %zu bytes", n);
  rc = src_be->download(host, a);
  if (!rc) rc = ml_from_host(out, a->dtype, a->ndim, a->shape, device, host);
  free(host);
  return rc;
}

int ml_read_element(const ml_array *a, int64_t i, ml_scalar *out) {
  int64_t idx[ML_MAX_DIMS];
  for (int d = a->ndim - 1; d >= 0; d--) {
    idx[d] = i % a->shape[d];
    i /= a->shape[d];
  }
  ml_array one = *a;
  for (int d = 0; d < a->ndim; d++) {
    one.offset += idx[d] * a->strides[d];
    one.shape[d] = 1;
  }
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  unsigned char buf[8];
  rc = be->download(buf, &one);
  if (rc) return rc;
  *out = ml_scalar_load(buf, a->dtype);
  return ML_OK;
}
