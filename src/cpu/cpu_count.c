/* Counting on the CPU: searchsorted's binary searches, the counts of
 * histogram's equal bins and bincount's.
 *
 * searchsorted compares order keys (core/order_key.h), so NaN is larger
 * than every number, as in NumPy; OpenMP splits the searched values.
 * histogram puts each element in the bin of core/histogram_bin.h,
 * bincount each integer v in bin v - lo; each thread counts a fixed share
 * of the elements into a private histogram, and the private histograms
 * are added in thread order. */
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

/* What histogram counts: contiguous in, weights w (or NULL), the edges
 * and denom of histogram_bin.h. */
typedef struct {
  const ml_array *in;
  const double *w;
  const void *edges;
  int64_t nbins;
  double denom;
} hist_job;

/* Adds elements [i0, i1) of a hist_job's input to the nbins int64 counts
 * (or double sums, with weights) at acc. */
static void count_hist(const void *job, int64_t i0, int64_t i1, void *acc) {
  const hist_job *h = job;
  const void *p = ml_array_data(h->in);
  const float *e32 = h->edges;
  const double *e64 = h->edges;
  int64_t nbins = h->nbins, *c = acc;
  double *s = acc;
  for (int64_t i = i0; i < i1; i++) {
    int64_t b;
    if (h->in->dtype == ML_FLOAT32)
      b = ml_histogram_bin_f32(((const float *)p)[i], e32, nbins, e32[0],
                               e32[nbins], (float)h->denom);
    else
      b = ml_histogram_bin_f64(((const double *)p)[i], e64, nbins, e64[0],
                               e64[nbins], h->denom);
    if (b < 0) continue;
    if (h->w)
      s[b] += h->w[i];
    else
      c[b]++;
  }
}

/* What bincount counts: contiguous integer in, from lo, nbins bins. */
typedef struct {
  const ml_array *in;
  int64_t lo, nbins;
} bin_job;

/* The value of element i of integer p, of dtype t. */
static int64_t int_at(const void *p, ml_dtype t, int64_t i) {
  switch (t) {
    case ML_UINT8: return ((const uint8_t *)p)[i];
    case ML_INT32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
  }
}

static void count_bins(const void *job, int64_t i0, int64_t i1, void *acc) {
  const bin_job *j = job;
  const void *p = ml_array_data(j->in);
  int64_t *c = acc;
  for (int64_t i = i0; i < i1; i++) {
    /* unsigned: values below lo wrap past nbins */
    uint64_t b = (uint64_t)int_at(p, j->in->dtype, i) - (uint64_t)j->lo;
    if (b < (uint64_t)j->nbins) c[b]++;
  }
}

/* Runs count over n elements in threads, each a fixed share into a
 * private array of nbins int64 counts (or double sums) but the first,
 * which counts into out; then adds the private arrays in thread order. */
static void count_parallel(const ml_array *out, int64_t n, int sums,
                           void (*count)(const void *, int64_t, int64_t, void *),
                           const void *job) {
  int64_t nbins = ml_array_numel(out);
  int threads = cpu_threads_for(n, CPU_PARALLEL_MIN);
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
    count(job, n * t / nt, n * (t + 1) / nt, mine);
  }
  for (int t = 1; t < threads; t++) {
    const char *p = priv + (size_t)(t - 1) * (size_t)nbins * 8;
    for (int64_t b = 0; b < nbins; b++) {
      if (sums)
        ((double *)ml_array_data(out))[b] += ((const double *)p)[b];
      else
        ((int64_t *)ml_array_data(out))[b] += ((const int64_t *)p)[b];
    }
  }
  free(priv);
}

int cpu_histogram(const ml_array *out, const ml_array *in,
                  const ml_array *weights, const ml_array *edges,
                  double denom) {
  hist_job h = {in, weights ? ml_array_data(weights) : NULL,
                ml_array_data(edges), ml_array_numel(out), denom};
  count_parallel(out, ml_array_numel(in), weights != NULL, count_hist, &h);
  return ML_OK;
}

int cpu_bincount(const ml_array *out, const ml_array *in, int64_t lo) {
  bin_job j = {in, lo, ml_array_numel(out)};
  count_parallel(out, ml_array_numel(in), 0, count_bins, &j);
  return ML_OK;
}
