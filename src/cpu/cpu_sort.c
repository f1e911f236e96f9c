/* Sort and top-k on the CPU, one row (the last dimension) at a time, over
 * the pairs of select.h: each value becomes its order key (inverted for
 * descending order and the k largest, so NaN comes first there) paired
 * with its position. Sort merge-sorts the row's pairs. Top-k streams the
 * row through a buffer of pairs that beat the k-th best kept so far (a
 * threshold, one comparison per element), keeping the k best by
 * quickselect whenever the buffer fills, and sorts them at the end.
 * OpenMP splits the rows; each row is serial. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "select.h"
#include "strided.h"

/* Pairs a top-k buffer holds beyond 3k: room to stream between selections. */
#define TOPK_SLACK 64

/* Keys a top-k row computes at a time, before it selects among them. */
#define KEY_BLOCK 256

/* keys[j] = the order key of row[i0 + j] ^ flip, j < m: one loop a dtype. */
static void row_keys(const char *row, int64_t i0, int64_t m, ml_dtype t,
                     uint64_t flip, uint64_t *keys) {
  switch (t) {
    case ML_UINT8: {
      const uint8_t *x = (const uint8_t *)row + i0;
      for (int64_t j = 0; j < m; j++) keys[j] = ml_order_key_u8(x[j]) ^ flip;
      break;
    }
    case ML_INT32: {
      const int32_t *x = (const int32_t *)row + i0;
      for (int64_t j = 0; j < m; j++) keys[j] = ml_order_key_i32(x[j]) ^ flip;
      break;
    }
    case ML_INT64: {
      const int64_t *x = (const int64_t *)row + i0;
      for (int64_t j = 0; j < m; j++) keys[j] = ml_order_key_i64(x[j]) ^ flip;
      break;
    }
    case ML_FLOAT32: {
      const float *x = (const float *)row + i0;
      for (int64_t j = 0; j < m; j++) keys[j] = ml_order_key_f32(x[j]) ^ flip;
      break;
    }
    default: {
      const double *x = (const double *)row + i0;
      for (int64_t j = 0; j < m; j++) keys[j] = ml_order_key_f64(x[j]) ^ flip;
      break;
    }
  }
}

/* The first k pairs of the row's order into p[0..k), in order; p holds
 * cap pairs and tmp k (a full sort: cap = n, tmp n). */
static void order_row(const char *row, int64_t n, int64_t k, ml_dtype t,
                      uint64_t flip, cpu_pair *p, int64_t cap, cpu_pair *tmp) {
  uint64_t keys[KEY_BLOCK];
  int64_t used = 0;
  uint64_t worst = UINT64_MAX; /* no pair is kept out before the first keep */
  for (int64_t i0 = 0; i0 < n; i0 += KEY_BLOCK) {
    int64_t m = n - i0 < KEY_BLOCK ? n - i0 : KEY_BLOCK;
    row_keys(row, i0, m, t, flip, keys);
    if (k == n) {
      for (int64_t j = 0; j < m; j++) p[i0 + j] = (cpu_pair){keys[j], i0 + j};
      continue;
    }
    for (int64_t j = 0; j < m; j++) {
      /* a later equal key is never before: once k pairs are kept, only
       * keys below the worst kept can enter */
      if (keys[j] >= worst && used >= k) continue;
      p[used++] = (cpu_pair){keys[j], i0 + j};
      if (used == cap) {
        worst = cpu_pairs_keep(p, used, k);
        used = k;
      }
    }
  }
  if (k == n)
    cpu_pairs_sort(p, tmp, n);
  else
    cpu_pairs_smallest(p, tmp, used, k);
}

static void write_row(char *vals, int64_t *idx, const char *row,
                      const cpu_pair *p, int64_t k, size_t esize) {
  for (int64_t j = 0; j < k; j++) {
    idx[j] = p[j].pos + 1;
    memcpy(vals + j * (int64_t)esize, row + p[j].pos * (int64_t)esize, esize);
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
  int64_t cap = k == n ? n : 3 * k + TOPK_SLACK;
  if (cap > n) cap = n;
  size_t esize = ml_dtype_size(in->dtype);
  const char *src = ml_array_data(in);
  char *vals = ml_array_data(values);
  int64_t *idx = ml_array_data(indices);
  uint64_t flip = invert ? UINT64_MAX : 0;
  int threads = cpu_threads_for(rows * n, CPU_PARALLEL_MIN), failed = 0;
  if (threads > rows) threads = (int)rows;
#pragma omp parallel num_threads(threads)
  {
    cpu_pair *buf = malloc((size_t)(cap + k) * sizeof *buf);
    if (!buf) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
      if (!buf || ml_interrupt_pending()) continue;
      const char *row = src + r * n * (int64_t)esize;
      order_row(row, n, k, in->dtype, flip, buf, cap, buf + cap);
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
