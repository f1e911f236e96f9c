/* searchsorted and histogram's equal bins.
 *
 * CPU reference: src/cpu/cpu_count.c. searchsorted: a thread per searched
 * value, a binary search over the order keys (core/order_key.h) of the
 * sorted array. histogram: every element goes to the bin of
 * core/histogram_bin.h, as on the CPU. With at most SHARED_BINS bins
 * (SHARED_WBINS with weights) each block keeps a private histogram and the
 * edges in shared memory, counts its grid-stride share of the elements
 * with shared-memory atomics (32-bit counts: a block sees fewer than 2^32
 * elements) and adds its nonzero bins to out with one global atomic each;
 * more bins count straight into out with global atomics. Counts are
 * exact; weighted sums are double atomics, in no fixed order. */
#include "launch.cuh"
#include "select.cuh"

#define BLOCK 256
#define SHARED_BINS 8192
#define SHARED_WBINS 4096

/* ---- searchsorted ---- */

template <class T>
__global__ void search_keys(const T *a, int64_t n, const T *v, int64_t m, int right,
                            int64_t *out) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += step) {
    key_type<T> k = ml_order_key(v[j]);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      key_type<T> km = ml_order_key(a[mid]);
      if (right ? km <= k : km < k)
        lo = mid + 1;
      else
        hi = mid;
    }
    out[j] = lo + 1;
  }
}

template <class T>
static int search_typed(cuda_dev *d, const ml_array *out, const ml_array *a,
                        const ml_array *v, int right) {
  int64_t m = ml_array_numel(v);
  return cuda_launch<search_keys<T>>(d, grid_for(m, BLOCK, d), BLOCK, 0, "searchsorted",
                                     array_ptr<T>(a), ml_array_numel(a), array_ptr<T>(v), m,
                                     right, array_ptr<int64_t>(out));
}

extern "C" int cuda_searchsorted(const ml_array *out, const ml_array *a, const ml_array *v,
                                 int right) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(v), &d);
  if (rc || ml_array_numel(v) == 0) return rc;
  switch (v->dtype) {
    case ML_UINT8: return search_typed<uint8_t>(d, out, a, v, right);
    case ML_INT32: return search_typed<int32_t>(d, out, a, v, right);
    case ML_INT64: return search_typed<int64_t>(d, out, a, v, right);
    case ML_FLOAT32: return search_typed<float>(d, out, a, v, right);
    default: return search_typed<double>(d, out, a, v, right);
  }
}

/* ---- histogram ---- */

__device__ __forceinline__ int64_t bin_of(float x, const float *e, int64_t nb, float denom) {
  return ml_histogram_bin_f32(x, e, nb, denom);
}

__device__ __forceinline__ int64_t bin_of(double x, const double *e, int64_t nb,
                                          double denom) {
  return ml_histogram_bin_f64(x, e, nb, denom);
}

/* Block-private histogram: dynamic shared memory holds the nbins + 1
 * edges, then nbins counts (unsigned, w NULL) or sums (double). */
template <class T>
__global__ void __launch_bounds__(BLOCK)
    hist_shared(const T *in, int64_t n, const double *w, const T *edges, int64_t nbins,
                T denom, unsigned long long *counts, double *sums) {
  extern __shared__ double smem[];
  double *ssum = smem;
  unsigned *scount = (unsigned *)smem;
  T *se = w ? (T *)(smem + nbins) : (T *)(scount + nbins + (nbins & 1));
  for (int64_t b = threadIdx.x; b < nbins; b += blockDim.x) {
    if (w)
      ssum[b] = 0;
    else
      scount[b] = 0;
  }
  for (int64_t b = threadIdx.x; b <= nbins; b += blockDim.x) se[b] = edges[b];
  __syncthreads();
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t b = bin_of(in[i], se, nbins, denom);
    if (b < 0) continue;
    if (w)
      atomicAdd(&ssum[b], w[i]);
    else
      atomicAdd(&scount[b], 1u);
  }
  __syncthreads();
  for (int64_t b = threadIdx.x; b < nbins; b += blockDim.x) {
    if (w) {
      if (ssum[b] != 0) atomicAdd(&sums[b], ssum[b]);
    } else if (scount[b]) {
      atomicAdd(&counts[b], (unsigned long long)scount[b]);
    }
  }
}

/* Many bins: global atomics straight into out. */
template <class T>
__global__ void hist_global(const T *in, int64_t n, const double *w, const T *edges,
                            int64_t nbins, T denom, unsigned long long *counts,
                            double *sums) {
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t b = bin_of(in[i], edges, nbins, denom);
    if (b < 0) continue;
    if (w)
      atomicAdd(&sums[b], w[i]);
    else
      atomicAdd(&counts[b], 1ull);
  }
}

template <class T>
static int hist_typed(cuda_dev *d, const ml_array *out, const ml_array *in,
                      const ml_array *weights, const ml_array *edges, double denom) {
  int64_t n = ml_array_numel(in), nbins = ml_array_numel(out);
  const double *w = weights ? array_ptr<double>(weights) : nullptr;
  unsigned long long *c = weights ? nullptr : array_ptr<unsigned long long>(out);
  double *s = weights ? array_ptr<double>(out) : nullptr;
  const T *e = array_ptr<T>(edges);
  if (nbins <= (weights ? SHARED_WBINS : SHARED_BINS)) {
    size_t smem = weights ? (size_t)nbins * sizeof(double)
                          : (size_t)(nbins + (nbins & 1)) * sizeof(unsigned);
    smem += (size_t)(nbins + 1) * sizeof(T);
    return cuda_launch<hist_shared<T>>(d, grid_for(n, BLOCK, d, 4), BLOCK, smem, "histogram",
                                       array_ptr<T>(in), n, w, e, nbins, (T)denom, c, s);
  }
  return cuda_launch<hist_global<T>>(d, grid_for(n, BLOCK, d), BLOCK, 0, "histogram",
                                     array_ptr<T>(in), n, w, e, nbins, (T)denom, c, s);
}

extern "C" int cuda_histogram(const ml_array *out, const ml_array *in, const ml_array *weights,
                              const ml_array *edges, double denom) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (!rc)
    rc = cuda_check(cudaMemsetAsync(ml_array_data(out), 0, ml_array_nbytes(out), d->stream),
                    "histogram");
  if (rc || ml_array_numel(in) == 0) return rc;
  if (in->dtype == ML_FLOAT32) return hist_typed<float>(d, out, in, weights, edges, denom);
  return hist_typed<double>(d, out, in, weights, edges, denom);
}
