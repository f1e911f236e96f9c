/* ±1 matrices packed into words: checks, result arrays and dispatch to
 * the backend's binary area (contracts in binary_backend.h). The backends
 * see contiguous 2-D and 3-D arrays only: the core moves the packed
 * dimension last, and flattens the leading ones into rows or a batch. */
#include "binary.h"

#include <stddef.h>
#include <string.h>

#include "copy.h"
#include "status.h"
#include "view.h"

static const char *const binary_entries[] = {"pack", "unpack", "mm", "knn",
                                             "peak"};
#define NENTRIES (sizeof binary_entries / sizeof *binary_entries)
_Static_assert(offsetof(ml_binary_backend, pack) +
                       NENTRIES * sizeof(void (*)(void)) ==
                   sizeof(ml_binary_backend),
               "binary_entries names every function of ml_binary_backend");

static ml_backend_area binary_area = {"binary", binary_entries, NENTRIES,
                                      offsetof(ml_binary_backend, pack),
                                      {NULL}};

int ml_binary_backend_register(ml_device_kind kind,
                               const ml_binary_backend *t) {
  return ml_backend_area_register(&binary_area, kind, t);
}

int ml_binary_backend_get(ml_device device, const ml_binary_backend **out) {
  return ml_backend_area_get(&binary_area, device, (const void **)out);
}

/* The product of shape[lo..hi). */
static int64_t prod(const int64_t *shape, int lo, int hi) {
  int64_t p = 1;
  for (int d = lo; d < hi; d++) p *= shape[d];
  return p;
}

/* v: a contiguous view of a (shared, or a copy) as rows x cols. */
static int as_matrix(const char *op, ml_array *v, const ml_array *a,
                     int64_t rows, int64_t cols) {
  ml_array c = {0};
  int rc = ml_contiguous(&c, a);
  int64_t shape[2] = {rows, cols};
  if (!rc) rc = ml_view_reshape(op, v, &c, 2, shape);
  ml_array_release(&c);
  return rc;
}

int ml_binary_pack(ml_array *out, const ml_array *x, int dim) {
  const char *op = "binary.pack";
  char s[ML_SHAPE_STR_MAX];
  if (x->ndim == 0 || x->shape[dim] == 0)
    return ml_fail(ML_EINVAL, "%s: cannot pack %s along an empty dimension",
                   op, ml_shape_str(x->ndim, x->shape, s, sizeof s));
  const ml_binary_backend *b;
  int rc = ml_binary_backend_get(ml_array_device(x), &b);
  if (rc) return rc;
  int nd = x->ndim, perm[ML_MAX_DIMS];
  for (int d = 0, j = 0; d < nd; d++)
    if (d != dim) perm[j++] = d;
  perm[nd - 1] = dim;
  int64_t len = x->shape[dim], rows = ml_array_numel(x) / len;
  ml_array t = {0}, f = {0}, m = {0}, r = {0};
  rc = ml_view_permute(op, &t, x, perm);
  if (!rc && !ml_dtype_is_float(t.dtype)) rc = ml_astype(&f, &t, ML_FLOAT64);
  if (!rc) rc = as_matrix(op, &m, f.storage ? &f : &t, rows, len);
  int64_t shape[ML_MAX_DIMS];
  for (int d = 0; d < nd - 1; d++) shape[d] = t.shape[d];
  shape[nd - 1] = ML_BINARY_WORDS(len);
  if (!rc) rc = ml_array_empty(&r, ML_INT32, nd, shape, ml_array_device(x));
  if (!rc && rows > 0) {
    ml_array rv = {0};
    int64_t s2[2] = {rows, shape[nd - 1]};
    rc = ml_view_reshape(op, &rv, &r, 2, s2);
    if (!rc) rc = b->pack(&rv, &m);
    ml_array_release(&rv);
  }
  ml_array_release(&t);
  ml_array_release(&f);
  ml_array_release(&m);
  return ml_array_commit(out, &r, rc);
}

/* Checks that words (at least 1-D, int32) hold rows of bits signs. */
static int check_words(const char *op, const char *what, const ml_array *w,
                       int64_t bits) {
  char s[ML_SHAPE_STR_MAX];
  if (w->dtype != ML_INT32 || w->ndim == 0)
    return ml_fail(ML_EINVAL, "%s: %s must be int32 words of packed rows, "
                   "not %s %s", op, what, ml_dtype_name(w->dtype),
                   ml_shape_str(w->ndim, w->shape, s, sizeof s));
  if (bits < 1 || w->shape[w->ndim - 1] != ML_BINARY_WORDS(bits))
    return ml_fail(ML_EINVAL, "%s: %s has %lld words a row, rows of %lld "
                   "bits need %lld", op, what,
                   (long long)w->shape[w->ndim - 1], (long long)bits,
                   (long long)(bits < 1 ? 0 : ML_BINARY_WORDS(bits)));
  return ML_OK;
}

int ml_binary_unpack(ml_array *out, const ml_array *words, int64_t bits,
                     ml_dtype t, int dim) {
  const char *op = "binary.unpack";
  int rc = check_words(op, "the packed array", words, bits);
  if (!rc && t == ML_UINT8)
    rc = ml_fail(ML_EINVAL, "%s: dtype uint8 cannot hold -1", op);
  const ml_binary_backend *b;
  if (!rc) rc = ml_binary_backend_get(ml_array_device(words), &b);
  if (rc) return rc;
  int nd = words->ndim;
  int64_t w = words->shape[nd - 1], rows = prod(words->shape, 0, nd - 1);
  int64_t shape[ML_MAX_DIMS];
  memcpy(shape, words->shape, sizeof shape);
  shape[nd - 1] = bits;
  ml_array m = {0}, r = {0}, rv = {0}, v = {0};
  rc = as_matrix(op, &m, words, rows, w);
  if (!rc) rc = ml_array_empty(&r, t, nd, shape, ml_array_device(words));
  int64_t s2[2] = {rows, bits};
  if (!rc && rows > 0) rc = ml_view_reshape(op, &rv, &r, 2, s2);
  if (!rc && rows > 0) rc = b->unpack(&rv, &m);
  /* the bits from the last place to dim */
  int perm[ML_MAX_DIMS];
  for (int d = 0, j = 0; d < nd; d++) perm[d] = d == dim ? nd - 1 : j++;
  if (!rc) rc = ml_view_permute(op, &v, &r, perm);
  ml_array_release(&m);
  ml_array_release(&rv);
  ml_array_release(&r);
  return ml_array_commit(out, &v, rc);
}

int ml_binary_mm(const char *op, ml_array *out, const ml_array *a,
                 const ml_array *b, int64_t bits, int hamming) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  int rc = ml_check_same_device(op, a, b);
  if (!rc) rc = check_words(op, "the first operand", a, bits);
  if (!rc) rc = check_words(op, "the second operand", b, bits);
  if (rc) return rc;
  int nd = a->ndim < 2 ? 2 : a->ndim;
  int same = a->ndim == b->ndim;
  for (int d = 0; same && d < a->ndim - 2; d++)
    same = a->shape[d] == b->shape[d];
  if (!same)
    return ml_fail(ML_EINVAL, "%s: packed operands %s and %s: their batch "
                   "dimensions differ", op,
                   ml_shape_str(a->ndim, a->shape, s1, sizeof s1),
                   ml_shape_str(b->ndim, b->shape, s2, sizeof s2));
  const ml_binary_backend *be;
  rc = ml_binary_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  int64_t w = a->shape[a->ndim - 1];
  int64_t m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1;
  int64_t n = b->ndim >= 2 ? b->shape[b->ndim - 2] : 1;
  int64_t batch = prod(a->shape, 0, a->ndim - 2 > 0 ? a->ndim - 2 : 0);
  int64_t shape[ML_MAX_DIMS];
  for (int d = 0; d < nd - 2; d++) shape[d] = a->shape[d];
  shape[nd - 2] = m;
  shape[nd - 1] = n;
  ml_array ac = {0}, bc = {0}, av = {0}, bv = {0}, r = {0}, rv = {0};
  int64_t sa[3] = {batch, m, w}, sb[3] = {batch, n, w}, so[3] = {batch, m, n};
  rc = ml_contiguous(&ac, a);
  if (!rc) rc = ml_contiguous(&bc, b);
  if (!rc) rc = ml_view_reshape(op, &av, &ac, 3, sa);
  if (!rc) rc = ml_view_reshape(op, &bv, &bc, 3, sb);
  if (!rc) rc = ml_array_empty(&r, ML_INT32, a->ndim < 2 ? 2 : nd, shape,
                               ml_array_device(a));
  if (!rc) rc = ml_view_reshape(op, &rv, &r, 3, so);
  if (!rc && batch * m * n > 0) {
    ml_binary_mm_desc p = {&av, &bv, &rv, bits, hamming};
    rc = be->mm(&p);
  }
  ml_array_release(&ac);
  ml_array_release(&bc);
  ml_array_release(&av);
  ml_array_release(&bv);
  ml_array_release(&rv);
  return ml_array_commit(out, &r, rc);
}

int ml_binary_knn(const char *op, ml_array *dist, ml_array *index,
                  const ml_array *queries, const ml_array *refs,
                  int64_t bits, int64_t k) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  int rc = ml_check_same_device(op, queries, refs);
  if (!rc) rc = check_words(op, "the packed queries", queries, bits);
  if (!rc) rc = check_words(op, "the packed references", refs, bits);
  if (rc) return rc;
  if (queries->ndim != 2 || refs->ndim != 2)
    return ml_fail(ML_EINVAL, "%s: packed queries %s and references %s must "
                   "be rows of codes (2-D)", op,
                   ml_shape_str(queries->ndim, queries->shape, s1, sizeof s1),
                   ml_shape_str(refs->ndim, refs->shape, s2, sizeof s2));
  int64_t m = queries->shape[0], n = refs->shape[0];
  if (k < 1 || k > n)
    return ml_fail(ML_EINVAL, "%s: k = %lld is not in 1..%lld (the "
                   "reference codes)", op, (long long)k, (long long)n);
  const ml_binary_backend *be;
  rc = ml_binary_backend_get(ml_array_device(queries), &be);
  if (rc) return rc;
  ml_array qc = {0}, rc_ = {0}, d = {0}, ix = {0};
  int64_t shape[2] = {m, k};
  rc = ml_contiguous(&qc, queries);
  if (!rc) rc = ml_contiguous(&rc_, refs);
  if (!rc) rc = ml_array_empty(&d, ML_INT32, 2, shape,
                               ml_array_device(queries));
  if (!rc) rc = ml_array_empty(&ix, ML_INT64, 2, shape,
                               ml_array_device(queries));
  if (!rc && m > 0) {
    ml_binary_knn_desc p = {&qc, &rc_, k, &d, &ix};
    rc = be->knn(&p);
  }
  ml_array_release(&qc);
  ml_array_release(&rc_);
  if (rc) {
    ml_array_release(&ix);
    return ml_array_commit(dist, &d, rc);
  }
  ml_array_commit(dist, &d, rc);
  return ml_array_commit(index, &ix, rc);
}

int ml_binary_peak(ml_device device, double *ops) {
  const ml_binary_backend *be;
  int rc = ml_binary_backend_get(device, &be);
  return rc ? rc : be->peak(device, ops);
}
