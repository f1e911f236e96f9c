/* index_add on the CPU (contract in core/backend.h).
 *
 * out is outer x size x inner and src outer x m x inner around dim, both
 * contiguous. The m source slices are first grouped by the slice of out
 * they add to, in the order of index (a stable counting sort, which also
 * finds a bad index), so that each slice of out is summed by one thread
 * over its own list: no scratch of out's size, no two threads on one
 * element, and every element's sum in index order whatever the threads.
 * Floats accumulate in double, a block of columns at a time, in runs of
 * ML_INDEX_ADD_RUN slices whose sums add in order, and are rounded once
 * into out; integers accumulate in int64 and wrap. */
#include <stdlib.h>

#include "cpu.h"
#include "strided.h"

/* Columns accumulated at a time, in a block on the stack. */
#define COLS 256

typedef struct {
  const ml_array *out, *src;
  int64_t outer, size, m, inner;
  const int64_t *start, *order; /* slice r adds src slices order[start[r]..start[r+1]) */
} add_job;

static void add_float(const add_job *j, int64_t o, int64_t r) {
  int f32 = j->out->dtype == ML_FLOAT32;
  const int64_t *list = j->order + j->start[r], count = j->start[r + 1] - j->start[r];
  double acc[COLS], run[COLS];
  for (int64_t c0 = 0; c0 < j->inner; c0 += COLS) {
    int64_t w = j->inner - c0 < COLS ? j->inner - c0 : COLS;
    for (int64_t c = 0; c < w; c++) acc[c] = 0;
    /* runs of ML_INDEX_ADD_RUN slices, each summed on its own, then added
     * in order (backend.h) */
    for (int64_t t0 = 0; t0 < count; t0 += ML_INDEX_ADD_RUN) {
      int64_t t1 = count - t0 < ML_INDEX_ADD_RUN ? count : t0 + ML_INDEX_ADD_RUN;
      for (int64_t c = 0; c < w; c++) run[c] = 0;
      for (int64_t t = t0; t < t1; t++) {
        int64_t at = (o * j->m + list[t]) * j->inner + c0;
        if (f32) {
          const float *s = (const float *)ml_array_data(j->src) + at;
          for (int64_t c = 0; c < w; c++) run[c] += s[c];
        } else {
          const double *s = (const double *)ml_array_data(j->src) + at;
          for (int64_t c = 0; c < w; c++) run[c] += s[c];
        }
      }
      for (int64_t c = 0; c < w; c++) acc[c] += run[c];
    }
    int64_t at = (o * j->size + r) * j->inner + c0;
    if (f32) {
      float *d = (float *)ml_array_data(j->out) + at;
      for (int64_t c = 0; c < w; c++) d[c] = (float)(d[c] + acc[c]);
    } else {
      double *d = (double *)ml_array_data(j->out) + at;
      for (int64_t c = 0; c < w; c++) d[c] += acc[c];
    }
  }
}

static int64_t load_int(const void *p, int64_t i, ml_dtype t) {
  switch (t) {
    case ML_UINT8: return ((const uint8_t *)p)[i];
    case ML_INT32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
  }
}

static void store_int(void *p, int64_t i, ml_dtype t, uint64_t v) {
  switch (t) {
    case ML_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case ML_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)v; break;
    default: ((int64_t *)p)[i] = (int64_t)v; break;
  }
}

static void add_int(const add_job *j, int64_t o, int64_t r) {
  ml_dtype t = j->out->dtype;
  const int64_t *list = j->order + j->start[r], count = j->start[r + 1] - j->start[r];
  const void *src = ml_array_data(j->src);
  void *out = ml_array_data(j->out);
  for (int64_t c = 0; c < j->inner; c++) {
    int64_t at = (o * j->size + r) * j->inner + c;
    uint64_t acc = (uint64_t)load_int(out, at, t);
    for (int64_t k = 0; k < count; k++)
      acc += (uint64_t)load_int(src, (o * j->m + list[k]) * j->inner + c, t);
    store_int(out, at, t, acc);
  }
}

static void add_part(void *ctx, int64_t begin, int64_t end) {
  const add_job *j = ctx;
  int fl = ml_dtype_is_float(j->out->dtype);
  for (int64_t q = begin; q < end; q++) {
    int64_t o = q / j->size, r = q % j->size;
    if (j->start[r + 1] == j->start[r]) continue;
    if (fl)
      add_float(j, o, r);
    else
      add_int(j, o, r);
  }
}

int cpu_index_add(const ml_array *out, int dim, const ml_array *index,
                  const ml_array *src) {
  add_job j = {out, src, 1, out->shape[dim], src->shape[dim], 1, NULL, NULL};
  for (int k = 0; k < dim; k++) j.outer *= out->shape[k];
  for (int k = dim + 1; k < out->ndim; k++) j.inner *= out->shape[k];
  const int64_t *ix = ml_array_data(index);
  size_t m = (size_t)(j.m ? j.m : 1), size = (size_t)j.size;
  int64_t *start = calloc(size + 1, sizeof *start);
  int64_t *next = malloc((size ? size : 1) * sizeof *next);
  int64_t *rows = malloc(m * sizeof *rows), *order = malloc(m * sizeof *order);
  int rc = ML_OK;
  if (!start || !next || !rows || !order)
    rc = ml_fail(ML_ENOMEM, "index_add: out of memory for %lld indices",
                 (long long)j.m);
  for (int64_t i = 0; !rc && i < j.m; i++) {
    uint64_t r = ml_index_base0(ix[i], j.size);
    if (r >= (uint64_t)j.size)
      rc = ml_fail(ML_EINVAL, "index_add: index %lld is out of bounds for dimension %d with size %lld",
                   (long long)ix[i], dim + 1, (long long)j.size);
    rows[i] = (int64_t)r;
    if (!rc) start[r + 1]++;
  }
  if (!rc) {
    for (int64_t r = 0; r < j.size; r++) {
      start[r + 1] += start[r];
      next[r] = start[r];
    }
    for (int64_t i = 0; i < j.m; i++) order[next[rows[i]]++] = i;
    j.start = start;
    j.order = order;
    cpu_split(cpu_threads_for(j.outer * j.m * j.inner, CPU_PARALLEL_MIN), j.outer * j.size,
              add_part, &j);
  }
  free(start);
  free(next);
  free(rows);
  free(order);
  return rc;
}
