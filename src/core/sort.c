/* Sort and top-k work on rows: the core moves dim last (a view), makes the
 * rows contiguous, lets the backend order each row, and moves the results
 * back into a's dimension order as contiguous arrays. */
#include "sort.h"

#include <string.h>

#include "backend.h"
#include "copy.h"
#include "status.h"
#include "view.h"

/* perm moves dimension d last; inv undoes it. */
static void last_perm(int ndim, int d, int *perm, int *inv) {
  int k = 0;
  for (int i = 0; i < ndim; i++)
    if (i != d) perm[k++] = i;
  perm[k] = d;
  for (int i = 0; i < ndim; i++) inv[perm[i]] = i;
}

/* r: rows (dim last) back in the original order of dimensions. */
static int restore(const char *op, const ml_array *rows, const int *inv,
                   ml_array *r) {
  ml_array p = {0};
  int rc = ml_view_permute(op, &p, rows, inv);
  if (!rc) rc = ml_contiguous(r, &p);
  ml_array_release(&p);
  return rc;
}

/* Puts the k entries of each row of v and ix in their original order
 * (ascending ix), in place of v and ix. */
static int by_position(const ml_backend *be, ml_array *v, ml_array *ix) {
  ml_array pos = {0}, order = {0}, vals = {0};
  int last = v->ndim - 1;
  int rc = ml_array_empty_like(&pos, ix, ML_INT64);
  if (!rc) rc = ml_array_empty_like(&order, ix, ML_INT64);
  if (!rc) rc = ml_array_empty_like(&vals, v, v->dtype);
  if (!rc) rc = be->sort(&pos, &order, ix, 0);
  if (!rc) rc = be->gather(&vals, v, last, &order);
  if (!rc) {
    ml_array_release(v);
    ml_array_release(ix);
    ml_array_move(v, &vals);
    ml_array_move(ix, &pos);
  }
  ml_array_release(&pos);
  ml_array_release(&order);
  ml_array_release(&vals);
  return rc;
}

/* The first k of each row along d, by the backend's topk or sort (flag:
 * largest or descending). */
static int by_rows(const char *op, int topk, ml_array *values,
                   ml_array *indices, const ml_array *a, int d, int64_t k,
                   int flag, int sorted) {
  const ml_backend *be;
  int perm[ML_MAX_DIMS], inv[ML_MAX_DIMS];
  last_perm(a->ndim, d, perm, inv);
  ml_array p = {0}, c = {0}, v = {0}, ix = {0}, rv = {0}, ri = {0};
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (!rc) rc = ml_view_permute(op, &p, a, perm);
  if (!rc) rc = ml_contiguous(&c, &p);
  int64_t shape[ML_MAX_DIMS];
  memcpy(shape, c.shape, sizeof shape);
  shape[a->ndim - 1] = k;
  ml_device dev = ml_array_device(a);
  if (!rc) rc = ml_array_empty(&v, a->dtype, a->ndim, shape, dev);
  if (!rc) rc = ml_array_empty(&ix, ML_INT64, a->ndim, shape, dev);
  if (!rc)
    rc = topk ? be->topk(&v, &ix, &c, k, flag) : be->sort(&v, &ix, &c, flag);
  if (!rc && !sorted) rc = by_position(be, &v, &ix);
  if (!rc) rc = restore(op, &v, inv, &rv);
  if (!rc) rc = restore(op, &ix, inv, &ri);
  ml_array_release(&p);
  ml_array_release(&c);
  ml_array_release(&v);
  ml_array_release(&ix);
  if (rc) {
    ml_array_release(&rv);
    ml_array_release(&ri);
    return rc;
  }
  ml_array_release(values);
  ml_array_release(indices);
  ml_array_move(values, &rv);
  ml_array_move(indices, &ri);
  return ML_OK;
}

int ml_sort(ml_array *values, ml_array *indices, const ml_array *a, int dim,
            int descending) {
  int d;
  int rc = ml_norm_dim("sort", dim, a->ndim, &d);
  if (rc) return rc;
  return by_rows("sort", 0, values, indices, a, d, a->shape[d], descending, 1);
}

int ml_topk(ml_array *values, ml_array *indices, const ml_array *a, int64_t k,
            int dim, int largest, int sorted) {
  int d;
  int rc = ml_norm_dim("topk", dim, a->ndim, &d);
  if (rc) return rc;
  if (k < 0) return ml_fail(ML_EINVAL, "topk: k = %lld is negative", (long long)k);
  if (k > a->shape[d])
    return ml_fail(ML_EINVAL, "topk: k = %lld exceeds the %lld elements of dimension %d",
                   (long long)k, (long long)a->shape[d], d + 1);
  return by_rows("topk", 1, values, indices, a, d, k, largest, sorted);
}
