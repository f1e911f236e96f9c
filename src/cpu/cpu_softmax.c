/* Softmax and log-softmax along the last dimension, on the CPU (backend.h's
 * softmax entry). A row at a time, threads over rows; the row's sum runs
 * in order, so the bits do not depend on the thread count. kernels/
 * softmax.cu takes the same steps (its sums in a fixed tree). */
#include <math.h>

#include "cpu.h"
#include "strided.h"

static void row_f32(const float *x, float *y, float *lse, int64_t n,
                    int logs) {
  float c = -INFINITY;
  int nan = 0;
  for (int64_t j = 0; j < n; j++) {
    nan |= x[j] != x[j];
    if (x[j] > c) c = x[j];
  }
  if (nan) c = NAN;
  double s = 0;
  for (int64_t j = 0; j < n; j++) s += expf(x[j] - c);
  float l = (float)(isfinite(c) ? (double)c + log(s) : c);
  for (int64_t j = 0; j < n; j++) y[j] = logs ? x[j] - l : expf(x[j] - l);
  *lse = l;
}

static void row_f64(const double *x, double *y, double *lse, int64_t n,
                    int logs) {
  double c = -INFINITY;
  int nan = 0;
  for (int64_t j = 0; j < n; j++) {
    nan |= x[j] != x[j];
    if (x[j] > c) c = x[j];
  }
  if (nan) c = NAN;
  double s = 0;
  for (int64_t j = 0; j < n; j++) s += exp(x[j] - c);
  double l = isfinite(c) ? c + log(s) : c;
  for (int64_t j = 0; j < n; j++) y[j] = logs ? x[j] - l : exp(x[j] - l);
  *lse = l;
}

int cpu_softmax(const ml_array *out, const ml_array *lse, const ml_array *in,
                int logs) {
  int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1;
  int64_t rows = n ? ml_array_numel(in) / n : ml_array_numel(lse);
  int threads = cpu_threads_for(ml_array_numel(in), CPU_PARALLEL_MIN);
  int f32 = in->dtype == ML_FLOAT32;
  const char *x = ml_array_data(in);
  char *y = ml_array_data(out), *l = ml_array_data(lse);
  size_t e = ml_dtype_size(in->dtype);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < rows; i++) {
    size_t at = (size_t)(i * n) * e;
    if (f32)
      row_f32((const float *)(x + at), (float *)(y + at), (float *)l + i, n,
              logs);
    else
      row_f64((const double *)(x + at), (double *)(y + at), (double *)l + i,
              n, logs);
  }
  return ML_OK;
}
