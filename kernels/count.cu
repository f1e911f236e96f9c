/* searchsorted, histogram's equal bins and bincount.
 *
 * CPU reference: src/cpu/cpu_count.c. searchsorted: a thread per searched
 * value, a binary search over the order keys (core/order_key.h) of the
 * sorted array. histogram: every element goes to the bin of
 * core/histogram_bin.h, as on the CPU (bins_of: mostly found by a
 * multiplication, not the division). With at most SHARED_BINS bins
 * (SHARED_WBINS with weights) each block keeps a private histogram and the
 * edges in shared memory, counts its grid-stride share of the elements
 * (16-byte loads, several in flight a thread) with shared-memory atomics
 * (32-bit counts: a block sees fewer than 2^32 elements) and adds its
 * nonzero bins to out with one global atomic each; more bins count
 * straight into out with global atomics. bincount likewise, its slots in
 * place of the bins. Counts are exact; weighted sums are double atomics,
 * in no fixed order. */
#include <float.h>

#include "launch.cuh"
#include "map.cuh"
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

/* Calls f(in[i], i) for the thread's grid-stride share of in[0, n): U
 * 16-byte loads in flight a thread before any call where in is aligned
 * (at 8 blocks an SM that keeps enough bytes in flight for the memory's
 * bandwidth), then the elements past the last whole vector. */
template <class T, class F>
__device__ __forceinline__ void each_element(const T *in, int64_t n, F f) {
  constexpr int V = 16 / sizeof(T), U = 4;
  const int64_t nv = (uintptr_t)in % 16 == 0 ? n / V : 0;
  const int64_t vstep = (int64_t)gridDim.x * blockDim.x * U;
  const Vec<T, V> *p = reinterpret_cast<const Vec<T, V> *>(in);
  for (int64_t g = (int64_t)blockIdx.x * blockDim.x * U + threadIdx.x; g < nv; g += vstep) {
    Vec<T, V> v[U];
#pragma unroll
    for (int u = 0; u < U; u++)
      if (g + u * blockDim.x < nv) v[u] = p[g + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int64_t j = g + u * blockDim.x;
      if (j >= nv) continue;
#pragma unroll
      for (int e = 0; e < V; e++) f(v[u].v[e], j * V + e);
    }
  }
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = nv * V + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    f(in[i], i);
}

/* ---- histogram ---- */

/* The bin of x among equal bins: histogram_bin.h's, which divides as
 * NumPy does, or, where the range allows, the same bin from a
 * multiplication. Both estimates are within one bin of
 * the bin that the edges hold x in, and one test against the edges moves
 * an estimate there; so both give NumPy's bin. The fast estimate rounds
 * f = (x - lo) * (nbins / (hi - lo)) to an integer k by adding 1.5 *
 * 2^(mantissa bits) (no conversion instruction); r = f - k is exact, and
 * further than gamma from the nearest integer, f is further from every
 * edge than the errors of f (its roundings) and of the edges (rounded
 * from a linear spacing) together, so only the rare x within gamma of an
 * edge reads the edges. gamma is at least twice that bound; a range too
 * narrow for its magnitude (gamma of 1/4 or more), or one whose scale
 * overflows, takes the division. */
template <class T> struct bin_rule;

template <> struct bin_rule<float> {
  static constexpr double unit = 0x1p-24, largest = FLT_MAX; /* the unit roundoff */
  static constexpr float magic = 12582912.0f; /* 1.5 * 2^23 */
  static __device__ __forceinline__ int round_bits(float m) {
    return __float_as_int(m) - __float_as_int(magic);
  }
  static __device__ __forceinline__ int64_t exact(float x, const float *e, int64_t nb, float lo,
                                                  float hi, float denom) {
    return ml_histogram_bin_f32(x, e, nb, lo, hi, denom);
  }
};

template <> struct bin_rule<double> {
  static constexpr double unit = 0x1p-53, largest = DBL_MAX;
  static constexpr double magic = 6755399441055744.0; /* 1.5 * 2^52 */
  static __device__ __forceinline__ int round_bits(double m) {
    return __double2loint(m) - __double2loint(magic);
  }
  static __device__ __forceinline__ int64_t exact(double x, const double *e, int64_t nb,
                                                  double lo, double hi, double denom) {
    return ml_histogram_bin_f64(x, e, nb, lo, hi, denom);
  }
};

template <class T> struct bins_of {
  const T *e; /* nb + 1 edges */
  int64_t nb;
  T lo, hi, denom, scale, gamma;
  bool fast;

  __device__ bins_of(const T *edges, int64_t nbins, T d)
      : e(edges), nb(nbins), lo(edges[0]), hi(edges[nbins]), denom(d) {
    const double u = bin_rule<T>::unit;
    const double w = (double)hi - (double)lo, m = fmax(fabs((double)lo), fabs((double)hi));
    const double g = 4 * u * (4 * m * (double)nb / w + 4 * ((double)nb + 1));
    fast = nb <= (1 << 20) && g < 0.25 && (double)nb / w <= bin_rule<T>::largest;
    scale = (T)((double)nb / w);
    gamma = (T)g;
  }

  __device__ __forceinline__ int64_t operator()(T x) const {
    if (!fast) return bin_rule<T>::exact(x, e, nb, lo, hi, denom);
    if (!(x >= lo && x <= hi)) return -1;
    const T f = (x - lo) * scale, m = f + bin_rule<T>::magic, r = f - (m - bin_rule<T>::magic);
    int i = bin_rule<T>::round_bits(m) - (r < 0);
    i = min(max(i, 0), (int)nb - 1);
    if (fabs(r) <= gamma) {
      if (x < e[i])
        i--;
      else if (i != nb - 1 && x >= e[i + 1])
        i++;
    }
    return i;
  }
};

/* Block-private histogram: dynamic shared memory holds the nbins + 1
 * edges, then nbins counts (unsigned) or sums (double, W: weights w). */
template <class T, bool W>
__global__ void __launch_bounds__(BLOCK)
    hist_shared(const T *in, int64_t n, const double *w, const T *edges, int64_t nbins,
                T denom, unsigned long long *counts, double *sums) {
  extern __shared__ double smem[];
  double *ssum = smem;
  unsigned *scount = (unsigned *)smem;
  T *se = W ? (T *)(smem + nbins) : (T *)(scount + nbins + (nbins & 1));
  for (int64_t b = threadIdx.x; b < nbins; b += blockDim.x) {
    if (W)
      ssum[b] = 0;
    else
      scount[b] = 0;
  }
  for (int64_t b = threadIdx.x; b <= nbins; b += blockDim.x) se[b] = edges[b];
  __syncthreads();
  const bins_of<T> bin(se, nbins, denom);
  each_element(in, n, [&](T x, int64_t i) {
    const int64_t b = bin(x);
    if (b < 0) return;
    if (W)
      atomicAdd(&ssum[b], w[i]);
    else
      atomicAdd(&scount[b], 1u);
  });
  __syncthreads();
  for (int64_t b = threadIdx.x; b < nbins; b += blockDim.x) {
    if (W) {
      if (ssum[b] != 0) atomicAdd(&sums[b], ssum[b]);
    } else if (scount[b]) {
      atomicAdd(&counts[b], (unsigned long long)scount[b]);
    }
  }
}

/* Many bins: global atomics straight into out. */
template <class T>
__global__ void __launch_bounds__(BLOCK)
    hist_global(const T *in, int64_t n, const double *w, const T *edges, int64_t nbins,
                T denom, unsigned long long *counts, double *sums) {
  const bins_of<T> bin(edges, nbins, denom);
  each_element(in, n, [&](T x, int64_t i) {
    const int64_t b = bin(x);
    if (b < 0) return;
    if (w)
      atomicAdd(&sums[b], w[i]);
    else
      atomicAdd(&counts[b], 1ull);
  });
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
    if (w)
      return cuda_launch<hist_shared<T, true>>(d, grid_for(n, BLOCK, d, 8), BLOCK, smem,
                                               "histogram", array_ptr<T>(in), n, w, e, nbins,
                                               (T)denom, c, s);
    return cuda_launch<hist_shared<T, false>>(d, grid_for(n, BLOCK, d, 8), BLOCK, smem,
                                              "histogram", array_ptr<T>(in), n, w, e, nbins,
                                              (T)denom, c, s);
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

/* ---- bincount ---- */

/* The slot of integer v from lo, or -1 (unsigned: values below lo wrap
 * past nbins). */
template <class T> __device__ __forceinline__ int64_t unit_bin(T v, int64_t lo, int64_t nbins) {
  const uint64_t b = (uint64_t)(int64_t)v - (uint64_t)lo;
  return b < (uint64_t)nbins ? (int64_t)b : -1;
}

/* At most SHARED_BINS slots: block-private 32-bit counts in shared
 * memory, added to out with one global atomic a nonzero slot. */
template <class T>
__global__ void __launch_bounds__(BLOCK)
    bins_shared(const T *in, int64_t n, int64_t lo, int64_t nbins, unsigned long long *counts) {
  extern __shared__ unsigned scount[];
  for (int64_t b = threadIdx.x; b < nbins; b += blockDim.x) scount[b] = 0;
  __syncthreads();
  each_element(in, n, [&](T x, int64_t) {
    const int64_t b = unit_bin(x, lo, nbins);
    if (b >= 0) atomicAdd(&scount[b], 1u);
  });
  __syncthreads();
  for (int64_t b = threadIdx.x; b < nbins; b += blockDim.x)
    if (scount[b]) atomicAdd(&counts[b], (unsigned long long)scount[b]);
}

/* More slots: global atomics straight into out. */
template <class T>
__global__ void __launch_bounds__(BLOCK)
    bins_global(const T *in, int64_t n, int64_t lo, int64_t nbins, unsigned long long *counts) {
  each_element(in, n, [&](T x, int64_t) {
    const int64_t b = unit_bin(x, lo, nbins);
    if (b >= 0) atomicAdd(&counts[b], 1ull);
  });
}

template <class T>
static int bins_typed(cuda_dev *d, const ml_array *out, const ml_array *in, int64_t lo) {
  const int64_t n = ml_array_numel(in), nbins = ml_array_numel(out);
  const T *p = array_ptr<const T>(in);
  unsigned long long *c = array_ptr<unsigned long long>(out);
  if (nbins <= SHARED_BINS)
    return cuda_launch<bins_shared<T>>(d, grid_for(n, BLOCK, d, 8), BLOCK,
                                       (size_t)nbins * sizeof(unsigned), "bincount", p, n, lo,
                                       nbins, c);
  return cuda_launch<bins_global<T>>(d, grid_for(n, BLOCK, d, 8), BLOCK, 0, "bincount", p, n,
                                     lo, nbins, c);
}

extern "C" int cuda_bincount(const ml_array *out, const ml_array *in, int64_t lo) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (!rc)
    rc = cuda_check(cudaMemsetAsync(ml_array_data(out), 0, ml_array_nbytes(out), d->stream),
                    "bincount");
  if (rc || ml_array_numel(in) == 0 || ml_array_numel(out) == 0) return rc;
  switch (in->dtype) {
    case ML_UINT8: return bins_typed<uint8_t>(d, out, in, lo);
    case ML_INT32: return bins_typed<int32_t>(d, out, in, lo);
    default: return bins_typed<int64_t>(d, out, in, lo);
  }
}
