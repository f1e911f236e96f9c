#include "index.h"

#include <string.h>

#include "backend.h"
#include "copy.h"
#include "elementwise.h"
#include "reduce.h"
#include "scalar_math.h"
#include "shape.h"
#include "status.h"
#include "view.h"

/* a in dtype t: shared when it already is, else converted. */
static int in_dtype(const ml_array *a, ml_dtype t, ml_array *out) {
  if (a->dtype != t) return ml_astype(out, a, t);
  ml_array_share(out, a);
  return ML_OK;
}

/* index as int64, or an error for floats. */
static int as_index(const char *op, const ml_array *index, ml_array *out) {
  if (ml_dtype_is_float(index->dtype))
    return ml_fail(ML_EINVAL, "%s: indices must be integers, got %s", op,
                   ml_dtype_name(index->dtype));
  return in_dtype(index, ML_INT64, out);
}

/* The dimension, the backend, and that every operand is on a's device. */
static int prepare(const char *op, const ml_array *a, int dim, int *d,
                   const ml_array *other, const ml_backend **be) {
  int rc = ml_check_same_device(op, a, other);
  if (!rc) rc = ml_norm_dim(op, dim, a->ndim, d);
  if (!rc) rc = ml_backend_get(ml_array_device(a), be);
  return rc;
}

/* The 1-D int64 index of index_select and index_put, as a view in *ix. */
static int vector_index(const char *op, const ml_array *index, ml_array *ix) {
  char b[ML_SHAPE_STR_MAX];
  if (index->ndim > 1)
    return ml_fail(ML_EINVAL, "%s: index must be 1-D, got shape %s", op,
                   ml_shape_str(index->ndim, index->shape, b, sizeof b));
  int rc = as_index(op, index, ix);
  if (!rc && ix->ndim == 0) {
    ix->ndim = 1;
    ix->shape[0] = 1;
    ix->strides[0] = 1;
  }
  return rc;
}

/* The check that no backend makes where the result has no elements (a is
 * empty outside d) and so no entry of the 1-D index ix is read: each must
 * still be in range for size, else the backends' error. Reads ix on the
 * host; the cost is that of the index only. */
static int check_unread(const char *op, const ml_array *ix, int d,
                        int64_t size) {
  ml_array host = {0};
  int rc = ml_to_device(&host, ix, ml_cpu());
  const int64_t *p = rc ? NULL : ml_array_data(&host);
  for (int64_t i = 0; !rc && i < host.shape[0]; i++) {
    int64_t v = p[i * host.strides[0]];
    if (ml_index_base0(v, size) >= (uint64_t)size)
      rc = ml_fail(ML_EINVAL, "%s: index %lld is out of bounds for dimension "
                   "%d with size %lld", op, (long long)v, d + 1,
                   (long long)size);
  }
  ml_array_release(&host);
  return rc;
}

int ml_index_select(ml_array *out, const ml_array *a, int dim,
                    const ml_array *index) {
  const char *op = "index_select";
  const ml_backend *be;
  int d;
  int rc = prepare(op, a, dim, &d, index, &be);
  if (rc) return rc;
  ml_array ix = {0}, r = {0};
  rc = vector_index(op, index, &ix);
  if (!rc) {
    int64_t shape[ML_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    shape[d] = ix.shape[0];
    rc = ml_array_empty(&r, a->dtype, a->ndim, shape, ml_array_device(a));
  }
  if (!rc && ml_array_numel(&r) == 0)
    rc = check_unread(op, &ix, d, a->shape[d]);
  if (!rc) rc = be->index_select(&r, a, d, &ix);
  ml_array_release(&ix);
  return ml_array_commit(out, &r, rc);
}

int ml_index_add(ml_array *out, const ml_array *a, int dim,
                 const ml_array *index, const ml_array *src) {
  const char *op = "index_add";
  char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
  const ml_backend *be;
  int d;
  int rc = prepare(op, a, dim, &d, index, &be);
  if (!rc) rc = ml_check_same_device(op, a, src);
  if (rc) return rc;
  ml_array ix = {0}, s = {0}, r = {0};
  rc = vector_index(op, index, &ix);
  if (!rc) {
    int fits = src->ndim == a->ndim;
    for (int k = 0; fits && k < a->ndim; k++)
      fits = src->shape[k] == (k == d ? ix.shape[0] : a->shape[k]);
    if (!fits)
      rc = ml_fail(ML_EINVAL, "%s: src of shape %s does not fit an array of shape %s "
                   "with %lld indices along dimension %d", op,
                   ml_shape_str(src->ndim, src->shape, b1, sizeof b1),
                   ml_shape_str(a->ndim, a->shape, b2, sizeof b2),
                   (long long)ix.shape[0], d + 1);
  }
  if (!rc) rc = ml_clone(&r, a);
  if (!rc)
    rc = src->dtype == a->dtype ? ml_contiguous(&s, src) : ml_astype(&s, src, a->dtype);
  if (!rc && ml_array_numel(&s) == 0)
    rc = check_unread(op, &ix, d, a->shape[d]);
  else if (!rc) {
    ml_array ic = {0};
    rc = ml_contiguous(&ic, &ix);
    if (!rc) rc = be->index_add(&r, d, &ic, &s);
    ml_array_release(&ic);
  }
  ml_array_release(&ix);
  ml_array_release(&s);
  return ml_array_commit(out, &r, rc);
}

/* index must have a's dimensions and fit inside a outside dim. */
static int check_fits(const char *op, const ml_array *a, int d,
                      const ml_array *index) {
  char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
  int ok = index->ndim == a->ndim;
  for (int k = 0; ok && k < a->ndim; k++)
    ok = k == d || index->shape[k] <= a->shape[k];
  if (ok) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: index of shape %s does not fit an array of shape %s outside dimension %d",
                 op, ml_shape_str(index->ndim, index->shape, b1, sizeof b1),
                 ml_shape_str(a->ndim, a->shape, b2, sizeof b2), d + 1);
}

int ml_gather(ml_array *out, const ml_array *a, int dim,
              const ml_array *index) {
  const char *op = "gather";
  const ml_backend *be;
  int d;
  int rc = prepare(op, a, dim, &d, index, &be);
  if (!rc) rc = check_fits(op, a, d, index);
  if (rc) return rc;
  ml_array ix = {0}, r = {0};
  rc = as_index(op, index, &ix);
  if (!rc)
    rc = ml_array_empty(&r, a->dtype, ix.ndim, ix.shape, ml_array_device(a));
  if (!rc) {
    ml_array in = *a; /* borrowed: a cut to index's shape outside d */
    for (int k = 0; k < a->ndim; k++)
      if (k != d) in.shape[k] = ix.shape[k];
    rc = be->gather(&r, &in, d, &ix);
  }
  ml_array_release(&ix);
  return ml_array_commit(out, &r, rc);
}

/* src as an array of shape (ndim, shape) in dtype t, in *s: the leading
 * block of a larger src (Torch's scatter) or src broadcast. */
static int shape_src(const char *op, const ml_array *src, ml_dtype t,
                     int ndim, const int64_t *shape, ml_array *s) {
  ml_array conv = {0};
  int rc = in_dtype(src, t, &conv);
  if (rc) return rc;
  int larger = conv.ndim == ndim;
  for (int k = 0; larger && k < ndim; k++) larger = conv.shape[k] >= shape[k];
  if (larger) {
    ml_array_move(s, &conv);
    memcpy(s->shape, shape, (size_t)ndim * sizeof *shape);
  } else {
    rc = ml_view_expand(op, s, &conv, ndim, shape);
  }
  ml_array_release(&conv);
  return rc;
}

int ml_scatter(ml_array *out, const ml_array *a, int dim,
               const ml_array *index, const ml_array *src) {
  const char *op = "scatter";
  const ml_backend *be;
  int d;
  int rc = prepare(op, a, dim, &d, index, &be);
  if (!rc) rc = ml_check_same_device(op, a, src);
  if (!rc) rc = check_fits(op, a, d, index);
  if (rc) return rc;
  ml_array ix = {0}, s = {0}, r = {0};
  rc = as_index(op, index, &ix);
  if (!rc) rc = shape_src(op, src, a->dtype, ix.ndim, ix.shape, &s);
  if (!rc) rc = ml_clone(&r, a);
  if (!rc) rc = be->scatter(&r, d, &ix, &s);
  ml_array_release(&ix);
  ml_array_release(&s);
  return ml_array_commit(out, &r, rc);
}

/* mask (uint8) broadcast to a's shape, as a view in *m. */
static int expand_mask(const char *op, const ml_array *a, const ml_array *mask,
                       ml_array *m) {
  int rc = ml_check_same_device(op, a, mask);
  if (rc) return rc;
  if (mask->dtype != ML_UINT8)
    return ml_fail(ML_EINVAL, "%s: mask must be uint8, got %s", op,
                   ml_dtype_name(mask->dtype));
  return ml_view_expand(op, m, mask, a->ndim, a->shape);
}

/* The number of nonzero elements of mask, counted on its device: only the
 * count is read back, not the mask. */
static int mask_count(const ml_array *mask, int64_t *count) {
  ml_array nonzero = {0}, total = {0};
  int rc = ml_binary_scalar(ML_NE, &nonzero, mask, ml_scalar_int(0), 0);
  if (!rc) rc = ml_reduce(ML_SUM, &total, &nonzero, -1, 0, 0);
  ml_scalar c = ml_scalar_int(0);
  if (!rc) rc = ml_read_element(&total, 0, &c);
  ml_array_release(&nonzero);
  ml_array_release(&total);
  *count = c.i;
  return rc;
}

int ml_masked_select(ml_array *out, const ml_array *a, const ml_array *mask) {
  const char *op = "masked_select";
  const ml_backend *be;
  ml_array m = {0}, r = {0};
  int64_t count = 0;
  int rc = expand_mask(op, a, mask, &m);
  if (!rc) rc = ml_backend_get(ml_array_device(a), &be);
  if (!rc) rc = mask_count(&m, &count);
  if (!rc) rc = ml_array_empty(&r, a->dtype, 1, &count, ml_array_device(a));
  if (!rc) rc = be->masked_select(&r, a, &m);
  ml_array_release(&m);
  return ml_array_commit(out, &r, rc);
}

/* r: a new array = mask ? v : a, v (of a's dtype) broadcast to a. */
static int blend(const char *op, const ml_array *a, const ml_array *mask,
                 const ml_array *v, ml_array *r) {
  const ml_backend *be;
  ml_array m = {0}, ve = {0};
  int rc = expand_mask(op, a, mask, &m);
  if (!rc) rc = ml_check_same_device(op, a, v);
  if (!rc) rc = ml_view_expand(op, &ve, v, a->ndim, a->shape);
  if (!rc) rc = ml_backend_get(ml_array_device(a), &be);
  if (!rc) rc = ml_array_empty_like(r, a, a->dtype);
  if (!rc) {
    rc = be->where(r, &m, &ve, a);
    if (rc) ml_array_release(r);
  }
  ml_array_release(&m);
  ml_array_release(&ve);
  return rc;
}

int ml_masked_fill(ml_array *out, const ml_array *a, const ml_array *mask,
                   ml_scalar value) {
  const char *op = "masked_fill";
  ml_array v = {0}, r = {0};
  int rc = ml_scalar_check_store(op, value, a->dtype);
  if (!rc) rc = ml_full(&v, a->dtype, 0, NULL, ml_array_device(a), value);
  if (!rc) rc = blend(op, a, mask, &v, &r);
  ml_array_release(&v);
  return ml_array_commit(out, &r, rc);
}

/* out: the 1-based C-order positions (1-D int64) of the nonzero elements
 * of a (any dtype and strides; NaN is nonzero), found on a's device. */
static int positions(const char *op, const ml_array *a, ml_array *out) {
  const ml_backend *be;
  int64_t n = ml_array_numel(a);
  ml_array nz = {0}, all = {0}, shaped = {0};
  const ml_array *m = a;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (!rc && a->dtype != ML_UINT8) {
    rc = ml_binary_scalar(ML_NE, &nz, a, ml_scalar_int(0), 0);
    m = &nz;
  }
  if (!rc) rc = ml_array_empty(&all, ML_INT64, 1, &n, ml_array_device(a));
  if (!rc) rc = be->iota(&all, ml_scalar_int(1), ml_scalar_int(1));
  if (!rc) rc = ml_view_reshape(op, &shaped, &all, a->ndim, a->shape);
  if (!rc) rc = ml_masked_select(out, &shaped, m);
  ml_array_release(&nz);
  ml_array_release(&all);
  ml_array_release(&shaped);
  return rc;
}

/* r: a contiguous copy of dst whose elements under the mask m (dst's
 * shape) take src's values in C order, src broadcast to their count. */
static int assign_in_order(const char *op, const ml_array *dst,
                           const ml_array *m, const ml_array *src,
                           ml_array *r) {
  int64_t n = ml_array_numel(dst);
  ml_array pos = {0}, flat = {0};
  int rc = positions(op, m, &pos);
  if (!rc) rc = ml_clone(r, dst);
  if (!rc) rc = ml_view_reshape(op, &flat, r, 1, &n);
  if (!rc) rc = ml_index_put(&flat, 0, &pos, src);
  ml_array_release(&pos);
  ml_array_release(&flat);
  return rc;
}

int ml_masked_assign(const ml_array *dst, const ml_array *mask,
                     const ml_array *src) {
  const char *op = "index";
  ml_array v = {0}, m = {0}, r = {0};
  int rc = ml_check_same_device(op, dst, src);
  int lead = 0; /* src's leading size-1 dimensions, dropped as NumPy does */
  while (lead < src->ndim - 1 && src->shape[lead] == 1) lead++;
  if (!rc && ml_array_numel(src) == 1) {
    rc = ml_view_reshape(op, &v, src, 0, NULL);
    if (!rc) rc = in_dtype(&v, dst->dtype, &r);
    ml_array_release(&v);
    if (!rc) ml_array_move(&v, &r);
    if (!rc) rc = blend(op, dst, mask, &v, &r);
  } else if (!rc) {
    rc = ml_view_reshape(op, &v, src, src->ndim - lead, src->shape + lead);
    if (!rc) rc = expand_mask(op, dst, mask, &m);
    if (!rc) rc = assign_in_order(op, dst, &m, &v, &r);
  }
  if (!rc) rc = ml_copy(op, dst, &r);
  ml_array_release(&v);
  ml_array_release(&m);
  ml_array_release(&r);
  return rc;
}

int ml_index_put(const ml_array *dst, int dim, const ml_array *index,
                 const ml_array *src) {
  const char *op = "index";
  const ml_backend *be;
  int d;
  int rc = prepare(op, dst, dim, &d, index, &be);
  if (!rc) rc = ml_check_same_device(op, dst, src);
  if (rc) return rc;
  ml_array own = {0}, ix = {0}, v = {0}, s = {0};
  /* an index or src in dst's own storage would change under the writes */
  if (index->storage == dst->storage) {
    rc = ml_clone(&own, index);
    index = &own;
  }
  if (!rc) rc = vector_index(op, index, &ix);
  if (!rc)
    rc = src->storage == dst->storage ? ml_astype(&v, src, dst->dtype)
                                      : in_dtype(src, dst->dtype, &v);
  int64_t shape[ML_MAX_DIMS];
  memcpy(shape, dst->shape, sizeof shape);
  if (!rc) {
    shape[d] = ix.shape[0];
    rc = ml_view_expand(op, &s, &v, dst->ndim, shape);
  }
  if (!rc && ml_array_numel(&s) == 0)
    rc = check_unread(op, &ix, d, dst->shape[d]);
  if (!rc) {
    ml_array iv = ix; /* borrowed: the index laid along d */
    iv.ndim = dst->ndim;
    memcpy(iv.shape, shape, sizeof iv.shape);
    memset(iv.strides, 0, sizeof iv.strides);
    iv.strides[d] = ix.strides[0];
    rc = be->scatter(dst, d, &iv, &s);
  }
  ml_array_release(&own);
  ml_array_release(&ix);
  ml_array_release(&v);
  ml_array_release(&s);
  return rc;
}

int ml_nonzero(ml_array *out, const ml_array *a) {
  const char *op = "nonzero";
  ml_array pos = {0}, q = {0}, r = {0};
  int rc = positions(op, a, &pos);
  if (!rc) rc = ml_binary_scalar(ML_SUB, &q, &pos, ml_scalar_int(1), 0);
  int64_t shape[2] = {a->ndim, rc ? 0 : q.shape[0]}, stride = 1;
  if (!rc) rc = ml_array_empty(&r, ML_INT64, 2, shape, ml_array_device(a));
  /* the index along d of position q: (q // stride) % size + 1, stride
   * being the product of the sizes after d */
  for (int d = a->ndim - 1; !rc && d >= 0; d--) {
    ml_array t1 = {0}, t2 = {0}, t3 = {0}, row = {0};
    rc = ml_binary_scalar(ML_IDIV, &t1, &q, ml_scalar_int(stride), 0);
    if (!rc) rc = ml_binary_scalar(ML_MOD, &t2, &t1,
                                   ml_scalar_int(a->shape[d]), 0);
    if (!rc) rc = ml_binary_scalar(ML_ADD, &t3, &t2, ml_scalar_int(1), 0);
    if (!rc) rc = ml_view_select(op, &row, &r, 0, d);
    if (!rc) rc = ml_copy(op, &row, &t3);
    ml_array *tmp[] = {&t1, &t2, &t3, &row};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
      ml_array_release(tmp[i]);
    stride *= a->shape[d];
  }
  ml_array_release(&pos);
  ml_array_release(&q);
  return ml_array_commit(out, &r, rc);
}

int ml_argwhere(ml_array *out, const ml_array *a) {
  ml_array idx = {0}, t = {0};
  int rc = ml_nonzero(&idx, a);
  if (!rc) rc = ml_view_transpose(&t, &idx, 0, 1);
  if (!rc) rc = ml_clone(out, &t);
  ml_array_release(&idx);
  ml_array_release(&t);
  return rc;
}

/* Whether mask's shape is a's first k < a->ndim sizes: x[mask] then picks
 * slices, as NumPy. *merged: a's shape with those k sizes multiplied into
 * one (1 for a 0-d mask). */
static int picks_slices(const ml_array *a, const ml_array *mask,
                        int64_t *merged) {
  int k = mask->ndim;
  if (k >= a->ndim) return 0;
  merged[0] = 1;
  for (int d = 0; d < k; d++) {
    if (mask->shape[d] != a->shape[d]) return 0;
    merged[0] *= a->shape[d];
  }
  for (int d = k; d < a->ndim; d++) merged[d - k + 1] = a->shape[d];
  return 1;
}

int ml_mask_get(ml_array *out, const ml_array *a, const ml_array *mask) {
  const char *op = "index";
  int64_t merged[ML_MAX_DIMS];
  int rc = ml_check_same_device(op, a, mask);
  if (rc || !picks_slices(a, mask, merged))
    return rc ? rc : ml_masked_select(out, a, mask);
  ml_array pos = {0}, flat = {0};
  rc = positions(op, mask, &pos);
  if (!rc)
    rc = ml_reshape(op, &flat, a, a->ndim - mask->ndim + 1, merged);
  if (!rc) rc = ml_index_select(out, &flat, 0, &pos);
  ml_array_release(&pos);
  ml_array_release(&flat);
  return rc;
}

int ml_mask_put(const ml_array *dst, const ml_array *mask,
                const ml_array *src) {
  const char *op = "index";
  int64_t merged[ML_MAX_DIMS];
  int rc = ml_check_same_device(op, dst, mask);
  if (rc || !picks_slices(dst, mask, merged))
    return rc ? rc : ml_masked_assign(dst, mask, src);
  int n = dst->ndim - mask->ndim + 1;
  ml_array pos = {0}, flat = {0}, c = {0};
  rc = positions(op, mask, &pos);
  /* through a view of dst when its leading dimensions merge, else
   * through a contiguous copy written back */
  if (!rc && ml_view_reshape(op, &flat, dst, n, merged) != ML_OK) {
    rc = ml_clone(&c, dst);
    if (!rc) rc = ml_view_reshape(op, &flat, &c, n, merged);
  }
  if (!rc) rc = ml_index_put(&flat, 0, &pos, src);
  if (!rc && c.storage) rc = ml_copy(op, dst, &c);
  ml_array_release(&pos);
  ml_array_release(&flat);
  ml_array_release(&c);
  return rc;
}
