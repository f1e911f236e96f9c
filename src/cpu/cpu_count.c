/* Counting on the CPU: searchsorted's binary searches and the counts of
 * histogram's equal bins.
 *
 * searchsorted compares order keys (core/order_key.h), so NaN is larger
 * than every number, as in NumPy; OpenMP splits the searched values.
 * histogram puts each element in the bin of core/histogram_bin.h; each
 * thread counts a fixed share of the elements into a private histogram,
 * and the private histograms are added in thread order. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* The order key of element i of p, of dtype t. */
static uint64_t key_at(const void *p, ml_dtype t, int64_t i) {
  switch (t) {
    case ML_UINT8: return ml_order_key_u8(((const uint8_t *)p)[i]);
    case ML_INT32: return ml_order_key_i32(((const int32_t *)p)[i]);
    case ML_INT64: return ml_order_key_i64(((const int64_t *)p)[i]);
    case ML_FLOAT32: return ml_order_key_f32(((const float *)p)[i]);
    default: return ml_order_key_f64(((const double *)p)[i]);
  }
}

int cpu_searchsorted(const ml_array *out, const ml_array *a,
                     const ml_array *v, int right) {
  int64_t n = ml_array_numel(a), m = ml_array_numel(v);
  const void *pa = ml_array_data(a), *pv = ml_array_data(v);
  int64_t *o = ml_array_data(out);
  ml_dtype t = a->dtype;
  int threads = cpu_threads_for(m * 8, CPU_PARALLEL_MIN);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t j = 0; j < m; j++) {
    uint64_t k = key_at(pv, t, j);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      uint64_t km = key_at(pa, t, mid);
      if (right ? km <= k : km < k)
        lo = mid + 1;
      else
        hi = mid;
    }
    o[j] = lo + 1;
  }
  return ML_OK;
}

/* Adds elements [i0, i1) of in to the nbins counts c (int64) or sums s
 * (double, from weights w). */
static void count_range(const ml_array *in, const double *w,
                        const void *edges, int64_t nbins, double denom,
                        int64_t i0, int64_t i1, int64_t *c, double *s) {
  const void *p = ml_array_data(in);
  for (int64_t i = i0; i < i1; i++) {
    int64_t b;
    if (in->dtype == ML_FLOAT32)
      b = ml_histogram_bin_f32(((const float *)p)[i], edges, nbins,
                               (float)denom);
    else
      b = ml_histogram_bin_f64(((const double *)p)[i], edges, nbins, denom);
    if (b < 0) continue;
    if (w)
      s[b] += w[i];
    else
      c[b]++;
  }
}

int cpu_histogram(const ml_array *out, const ml_array *in,
                  const ml_array *weights, const ml_array *edges,
                  double denom) {
  int64_t n = ml_array_numel(in), nbins = ml_array_numel(out);
  const double *w = weights ? ml_array_data(weights) : NULL;
  const void *e = ml_array_data(edges);
  int threads = cpu_threads_for(n, CPU_PARALLEL_MIN);
  /* a private histogram per thread but the first, which counts into out */
  char *priv = NULL;
  if (threads > 1) {
    priv = calloc((size_t)(threads - 1) * (size_t)nbins, 8);
    if (!priv) threads = 1;
  }
  memset(ml_array_data(out), 0, (size_t)nbins * 8);
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    char *mine = t == 0 ? ml_array_data(out)
                        : priv + (size_t)(t - 1) * (size_t)nbins * 8;
    int64_t i0 = n * t / nt, i1 = n * (t + 1) / nt;
    count_range(in, w, e, nbins, denom, i0, i1, (int64_t *)mine,
                (double *)mine);
  }
  for (int t = 1; t < threads; t++) {
    const char *p = priv + (size_t)(t - 1) * (size_t)nbins * 8;
    for (int64_t b = 0; b < nbins; b++) {
      if (w)
        ((double *)ml_array_data(out))[b] += ((const double *)p)[b];
      else
        ((int64_t *)ml_array_data(out))[b] += ((const int64_t *)p)[b];
    }
  }
  free(priv);
  return ML_OK;
}
