/* Sort and top-k on the CPU, one row (the last dimension) at a time.
 *
 * Each value becomes an unsigned 64-bit key in the order of the values:
 * integers with the sign bit flipped; floats by their bits with negatives
 * inverted, -0 taken as +0 and NaN as the largest key, above +inf.
 * Descending order (and the k largest) inverts the keys, so NaN comes first
 * there. Entries are then ordered by (key, position): a strict total order
 * in which equal values keep their original order in both directions, so
 * every algorithm gives the same answer. Sort uses a merge sort; top-k keeps
 * a heap of the k best when k is small against the row, else sorts the row.
 * OpenMP splits the rows; each row is serial. */
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

typedef struct {
  uint64_t key;
  int64_t pos;
} entry;

/* Insertion-sorted runs before the merge passes. */
#define RUN 16

static inline int before(entry a, entry b) {
  return a.key < b.key || (a.key == b.key && a.pos < b.pos);
}

static inline uint64_t float_key(double v) {
  if (v != v) return UINT64_MAX;
  if (v == 0) v = 0; /* -0 sorts with +0 */
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u >> 63 ? ~u : u | (uint64_t)1 << 63;
}

static inline uint64_t key_at(const char *row, int64_t i, ml_dtype t) {
  const uint64_t sign = (uint64_t)1 << 63;
  switch (t) {
    case ML_UINT8: return ((const uint8_t *)row)[i];
    case ML_INT32: return (uint64_t)(int64_t)((const int32_t *)row)[i] ^ sign;
    case ML_INT64: return (uint64_t)((const int64_t *)row)[i] ^ sign;
    case ML_FLOAT32: return float_key(((const float *)row)[i]);
    default: return float_key(((const double *)row)[i]);
  }
}

static void merge(const entry *a, int64_t na, const entry *b, int64_t nb,
                  entry *out) {
  int64_t i = 0, j = 0, k = 0;
  while (i < na && j < nb) out[k++] = before(b[j], a[i]) ? b[j++] : a[i++];
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
}

/* Sorts e[0..n) by before(); tmp holds n entries of scratch. */
static void sort_entries(entry *e, entry *tmp, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += RUN) {
    int64_t hi = lo + RUN < n ? lo + RUN : n;
    for (int64_t i = lo + 1; i < hi; i++) {
      entry x = e[i];
      int64_t j = i;
      for (; j > lo && before(x, e[j - 1]); j--) e[j] = e[j - 1];
      e[j] = x;
    }
  }
  entry *src = e, *dst = tmp;
  for (int64_t w = RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);
    }
    entry *t = src;
    src = dst;
    dst = t;
  }
  if (src != e) memcpy(e, src, (size_t)n * sizeof *e);
}

/* Restores the max-heap (by before) of h[0..k) below i. */
static void sift_down(entry *h, int64_t k, int64_t i) {
  entry x = h[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= k) break;
    if (c + 1 < k && before(h[c], h[c + 1])) c++;
    if (!before(x, h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* The first k entries of the row's order into e[0..k), in order; e and
 * tmp hold k entries each (heap) or n each (full sort). */
static void order_row(const char *row, int64_t n, int64_t k, ml_dtype t,
                      uint64_t flip, int heap, entry *e, entry *tmp) {
  if (!heap) {
    for (int64_t i = 0; i < n; i++) e[i] = (entry){key_at(row, i, t) ^ flip, i};
    sort_entries(e, tmp, n);
    return;
  }
  for (int64_t i = 0; i < k; i++) e[i] = (entry){key_at(row, i, t) ^ flip, i};
  for (int64_t i = k / 2; i-- > 0;) sift_down(e, k, i);
  for (int64_t i = k; i < n; i++) {
    uint64_t key = key_at(row, i, t) ^ flip;
    if (key < e[0].key) { /* an equal key comes later: never before */
      e[0] = (entry){key, i};
      sift_down(e, k, 0);
    }
  }
  sort_entries(e, tmp, k);
}

static void write_row(char *vals, int64_t *idx, const char *row,
                      const entry *e, int64_t k, size_t esize) {
  for (int64_t j = 0; j < k; j++) idx[j] = e[j].pos + 1;
  if (esize == 1) {
    uint8_t *v = (uint8_t *)vals;
    for (int64_t j = 0; j < k; j++) v[j] = ((const uint8_t *)row)[e[j].pos];
  } else if (esize == 4) {
    uint32_t *v = (uint32_t *)vals;
    for (int64_t j = 0; j < k; j++) v[j] = ((const uint32_t *)row)[e[j].pos];
  } else {
    uint64_t *v = (uint64_t *)vals;
    for (int64_t j = 0; j < k; j++) v[j] = ((const uint64_t *)row)[e[j].pos];
  }
}

/* The first k of each row of contiguous in, in order, into contiguous
 * values and indices of rows x k. */
static int first_k(const char *op, const ml_array *values,
                   const ml_array *indices, const ml_array *in, int64_t k,
                   int invert) {
  int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1;
  int64_t rows = n ? ml_array_numel(in) / n : 0;
  if (rows == 0 || k == 0) return ML_OK;
  int heap = k < n / 8;
  int64_t need = heap ? k : n;
  size_t esize = ml_dtype_size(in->dtype);
  const char *src = ml_array_data(in);
  char *vals = ml_array_data(values);
  int64_t *idx = ml_array_data(indices);
  uint64_t flip = invert ? UINT64_MAX : 0;
  int threads = cpu_threads_for(rows * n, CPU_PARALLEL_MIN), failed = 0;
  if (threads > rows) threads = (int)rows;
#pragma omp parallel num_threads(threads)
  {
    entry *buf = malloc(2 * (size_t)need * sizeof *buf);
    if (!buf) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
      if (!buf || ml_interrupt_pending()) continue;
      const char *row = src + r * n * (int64_t)esize;
      order_row(row, n, k, in->dtype, flip, heap, buf, buf + need);
      write_row(vals + r * k * (int64_t)esize, idx + r * k, row, buf, k, esize);
    }
    free(buf);
  }
  if (failed)
    return ml_fail(ML_ENOMEM, "%s: out of memory for rows of %lld elements", op,
                   (long long)n);
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "%s: interrupted", op);
  return ML_OK;
}

int cpu_sort(const ml_array *values, const ml_array *indices,
             const ml_array *in, int descending) {
  int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1;
  return first_k("sort", values, indices, in, n, descending);
}

int cpu_topk(const ml_array *values, const ml_array *indices,
             const ml_array *in, int64_t k, int largest) {
  return first_k("topk", values, indices, in, k, largest);
}
