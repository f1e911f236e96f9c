#include "matmul.h"

#include <string.h>

#include "backend.h"
#include "copy.h"
#include "status.h"
#include "view.h"

/* How BLAS can read a rows x cols matrix whose elements lie sr and sc
 * apart: row-major (trans 0: element (i, j) at i * ld + j) or as the
 * row-major storage of its transpose (trans 1: at j * ld + i). The stride
 * of an extent-1 dimension is irrelevant. Returns 0 when neither fits. */
static int blas_layout(int64_t rows, int64_t cols, int64_t sr, int64_t sc,
                       int *trans, int64_t *ld) {
  int64_t min_r = cols > 1 ? cols : 1, min_c = rows > 1 ? rows : 1;
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= min_r)) {
    *trans = 0;
    *ld = rows == 1 ? min_r : sr;
    return 1;
  }
  if ((rows == 1 || sr == 1) && (cols == 1 || sc >= min_c)) {
    *trans = 1;
    *ld = cols == 1 ? min_c : sc;
    return 1;
  }
  return 0;
}

/* The layout of the last two dimensions of x (at least 2-D). */
static int matrix_layout(const ml_array *x, int *trans, int64_t *ld) {
  int d = x->ndim - 2;
  return blas_layout(x->shape[d], x->shape[d + 1], x->strides[d],
                     x->strides[d + 1], trans, ld);
}

/* x as dtype t, shared when it already is; a 1-D x gains a dimension of
 * size 1 at `at` (0: a row, 1: a column); then made contiguous unless
 * BLAS can read it as it is. */
static int prepare(ml_array *out, const ml_array *x, ml_dtype t, int at) {
  ml_array r = {0}, c = {0};
  int rc = ML_OK, trans;
  int64_t ld;
  if (x->dtype != t)
    rc = ml_astype(&r, x, t);
  else
    ml_array_share(&r, x);
  if (!rc && r.ndim == 1) rc = ml_view_unsqueeze(&r, &r, at);
  if (!rc && !matrix_layout(&r, &trans, &ld)) {
    rc = ml_clone(&c, &r);
    ml_array_release(&r);
    ml_array_move(&r, &c);
  }
  return ml_array_commit(out, &r, rc);
}

/* Runs C = A B for the expanded operands (batch dims nb, then the matrix
 * dims) through the backend. The innermost batch dimensions that every
 * operand steps through with one nonnegative stride go to the backend as
 * one batch (cuBLAS takes no negative batch stride); the remaining outer
 * ones are looped over here. */
static int run_gemm(const ml_array *A, const ml_array *B, const ml_array *C) {
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(C), &be);
  if (rc) return rc;
  int nb = C->ndim - 2;
  ml_gemm g = {0};
  g.dtype = C->dtype;
  g.device = ml_array_device(C);
  g.m = C->shape[nb];
  g.n = C->shape[nb + 1];
  g.k = A->shape[nb + 1];
  matrix_layout(A, &g.trans_a, &g.lda);
  matrix_layout(B, &g.trans_b, &g.ldb);
  g.ldc = g.n;
  g.batch = 1;
  g.stride_c = g.m * g.n;
  int outer = nb - 1;
  for (; outer >= 0; outer--) {
    int64_t s = C->shape[outer];
    const int64_t sa = A->strides[outer], sb = B->strides[outer],
                  sc = C->strides[outer];
    if (s == 1) continue;
    if (sa < 0 || sb < 0) break; /* a flipped batch: one product a step */
    if (g.batch == 1) {
      g.stride_a = sa;
      g.stride_b = sb;
      g.stride_c = sc;
    } else if (sa != g.stride_a * g.batch || sb != g.stride_b * g.batch ||
               sc != g.stride_c * g.batch) {
      break;
    }
    g.batch *= s;
  }
  /* Outer dimensions 0..outer, in C order. */
  int64_t idx[ML_MAX_DIMS] = {0}, count = 1;
  for (int d = 0; d <= outer; d++) count *= C->shape[d];
  size_t es = ml_dtype_size(C->dtype);
  for (int64_t it = 0; it < count && !rc; it++) {
    int64_t oa = 0, ob = 0, oc = 0;
    for (int d = 0; d <= outer; d++) {
      oa += idx[d] * A->strides[d];
      ob += idx[d] * B->strides[d];
      oc += idx[d] * C->strides[d];
    }
    g.a = (const char *)ml_array_data(A) + oa * (int64_t)es;
    g.b = (const char *)ml_array_data(B) + ob * (int64_t)es;
    g.c = (char *)ml_array_data(C) + oc * (int64_t)es;
    rc = be->gemm(&g);
    for (int d = outer; d >= 0 && ++idx[d] == C->shape[d]; d--) idx[d] = 0;
  }
  return rc;
}

int ml_matmul(const char *op, ml_array *out, const ml_array *a,
              const ml_array *b) {
  char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
  int rc = ml_check_same_device(op, a, b);
  if (rc) return rc;
  if (a->ndim == 0 || b->ndim == 0)
    return ml_fail(ML_EINVAL, "%s: expects arrays of at least 1 dimension, got shapes %s and %s",
                   op, ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                   ml_shape_str(b->ndim, b->shape, b2, sizeof b2));
  int64_t k = a->shape[a->ndim - 1];
  int64_t kb = b->shape[b->ndim == 1 ? 0 : b->ndim - 2];
  if (k != kb)
    return ml_fail(ML_EINVAL, "%s: shapes %s and %s are not aligned (%lld != %lld)",
                   op, ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                   ml_shape_str(b->ndim, b->shape, b2, sizeof b2),
                   (long long)k, (long long)kb);
  int na = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
  int nb;
  int64_t shape[ML_MAX_DIMS];
  if (ml_broadcast_shape(op, na, a->shape, nbb, b->shape, &nb, shape))
    return ml_fail(ML_EINVAL, "%s: shapes %s and %s do not broadcast in the batch dimensions",
                   op, ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                   ml_shape_str(b->ndim, b->shape, b2, sizeof b2));
  int64_t m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2];
  int64_t n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
  ml_dtype t = ml_dtype_promote(a->dtype, b->dtype);

  ml_array A = {0}, B = {0}, C = {0};
  shape[nb] = m;
  shape[nb + 1] = n;
  rc = ml_array_empty(&C, t, nb + 2, shape, ml_array_device(a));
  if (!rc && ml_array_numel(&C) > 0) {
    if (k == 0) {
      rc = ml_fill(op, &C, ml_scalar_int(0));
    } else {
      rc = prepare(&A, a, t, 0);
      if (!rc) rc = prepare(&B, b, t, 1);
      shape[nb + 1] = k;
      if (!rc) rc = ml_view_expand(op, &A, &A, nb + 2, shape);
      shape[nb] = k;
      shape[nb + 1] = n;
      if (!rc) rc = ml_view_expand(op, &B, &B, nb + 2, shape);
      if (!rc) rc = run_gemm(&A, &B, &C);
    }
  }
  /* Drop the dimensions that 1-D operands gained. */
  int nout = nb;
  memcpy(shape, C.shape, (size_t)nb * sizeof *shape);
  if (a->ndim > 1) shape[nout++] = m;
  if (b->ndim > 1) shape[nout++] = n;
  if (!rc) rc = ml_view_reshape(op, &C, &C, nout, shape);
  ml_array_release(&A);
  ml_array_release(&B);
  return ml_array_commit(out, &C, rc);
}

/* ML_OK when a and b have the ranks op expects ("two 2-D arrays"). */
static int check_ranks(const char *op, const ml_array *a, int na,
                       const ml_array *b, int nb, const char *expects) {
  char b1[ML_SHAPE_STR_MAX], b2[ML_SHAPE_STR_MAX];
  if (a->ndim == na && b->ndim == nb) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: expects %s, got shapes %s and %s", op, expects,
                 ml_shape_str(a->ndim, a->shape, b1, sizeof b1),
                 ml_shape_str(b->ndim, b->shape, b2, sizeof b2));
}

int ml_mm(ml_array *out, const ml_array *a, const ml_array *b) {
  int rc = check_ranks("mm", a, 2, b, 2, "two 2-D arrays");
  return rc ? rc : ml_matmul("mm", out, a, b);
}

int ml_mv(ml_array *out, const ml_array *a, const ml_array *b) {
  int rc = check_ranks("mv", a, 2, b, 1, "a 2-D and a 1-D array");
  return rc ? rc : ml_matmul("mv", out, a, b);
}

int ml_dot(ml_array *out, const ml_array *a, const ml_array *b) {
  int rc = check_ranks("dot", a, 1, b, 1, "two 1-D arrays");
  return rc ? rc : ml_matmul("dot", out, a, b);
}

int ml_outer(ml_array *out, const ml_array *a, const ml_array *b) {
  int rc = check_ranks("outer", a, 1, b, 1, "two 1-D arrays");
  if (rc) return rc;
  ml_array col = {0}, row = {0};
  ml_view_unsqueeze(&col, a, 1);
  ml_view_unsqueeze(&row, b, 0);
  rc = ml_matmul("outer", out, &col, &row);
  ml_array_release(&col);
  ml_array_release(&row);
  return rc;
}
