/* Shared by the .cu files of the CUDA backend (C++ only): per-device state,
 * error checks, scratch memory, strided iteration and the elementwise
 * engine (map) that copy.cu and elementwise.cu instantiate.
 *
 * Every array an entry receives lives on one device (the core checked);
 * its work is queued on that device's one stream and nothing waits for it
 * except downloads, reads of values, and the launchers that must learn a
 * result on the host (index bounds, selection counts). */
#ifndef ML_CUDA_COMMON_CUH
#define ML_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <stdint.h>

#include <type_traits>

#include "cuda.h"
#include "cuda_ops.h"

/* A whole warp, for the *_sync intrinsics. */
#define FULL 0xFFFFFFFFu

/* ---- devices ---- */

typedef struct cuda_dev {
  int ready, index;
  cudaStream_t stream;
  int sms;
  /* Two pinned staging buffers used in turn by uploads and downloads;
   * an event marks when the copy that last used each one is done. */
  char *stage[2];
  cudaEvent_t stage_done[2];
  /* A device word the index kernels set on a bad index, and its pinned
   * host mirror. */
  unsigned long long *flag, *flag_host;
  void *blas; /* cublasHandle_t, made on the first gemm */
  /* Small elementwise operations queued on the host (elementwise_batch.cuh)
   * and how many: they reach the stream as one launch. */
  struct cuda_batch *batch;
  int queued;
} cuda_dev;

#define CUDA_STAGE_BYTES ((size_t)8 << 20)

/* Devices of this machine (set once by cuda_backend_init). */
extern int cuda_ndevices;

/* Makes device i current and returns its state, set up on first use.
 * Every entry but the elementwise ones calls it before it queues work, and
 * it first launches the operations that wait in any device's batch, which
 * keeps the order of work as the host issued it. */
int cuda_enter(int device, cuda_dev **out);

/* cuda_enter without launching the batches: for the elementwise entries,
 * which add to the batch (or launch it before they queue work). */
int cuda_enter_batching(int device, cuda_dev **out);

/* Launches the operations waiting in d's batch (d current), if any. */
int cuda_batch_launch(cuda_dev *d);

/* The number of devices whose batch holds operations. */
extern int cuda_batched_devices;

/* The caching allocator's setup for n devices (alloc.cu). */
int cuda_pools_init(int n);

/* "cuda: <error string> in <op>" (ML_EDEVICE; ML_ENOMEM for allocations). */
int cuda_error(cudaError_t e, const char *op);
static inline int cuda_check(cudaError_t e, const char *op) {
  return e == cudaSuccess ? ML_OK : cuda_error(e, op);
}
/* After a kernel launch: a bad configuration, or an earlier kernel's fault. */
static inline int cuda_launched(const char *op) {
  return cuda_check(cudaGetLastError(), op);
}

/* ---- launches through the driver ----
 * The elementwise kernels, whose launch is most of the time of a tiny
 * operation, go straight to the driver's cuLaunchKernel (found once through
 * the runtime, which links no libcuda), with the kernel's handle looked up
 * once: the runtime's launch repeats that lookup every time, and then needs
 * cudaGetLastError for its errors. */
extern PFN_cuLaunchKernel_v4000 cuda_driver_launch;

/* "cuda: <error string> in <op>" for a driver error (ML_EDEVICE). */
int cuda_driver_error(CUresult r, const char *op);

template <class T> struct same_type {
  using type = T;
};

/* Launches kernel (handle *k, looked up on first use) on d's stream with
 * args converted to the kernel's parameter types. */
template <class... P>
static int launch_with(cudaKernel_t *k, void (*kernel)(P...), cuda_dev *d, unsigned grid,
                       unsigned block, const char *op, typename same_type<P>::type... args) {
  if (!*k) {
    int rc = cuda_check(cudaGetKernel(k, (const void *)kernel), op);
    if (rc) return rc;
  }
  void *params[] = {&args...};
  CUresult r = cuda_driver_launch((CUfunction)*k, grid, 1, 1, block, 1, 1, 0,
                                  (CUstream)d->stream, params, nullptr);
  return r == CUDA_SUCCESS ? ML_OK : cuda_driver_error(r, op);
}

/* launch_kernel<kernel>(d, grid, block, op, args...): one handle per kernel. */
template <auto K, class... A>
static int launch_kernel(cuda_dev *d, unsigned grid, unsigned block, const char *op, A... args) {
  static cudaKernel_t k;
  return launch_with(&k, K, d, grid, block, op, args...);
}

static inline int array_device(const ml_array *a) {
  return a->storage->device.index;
}

template <class T> static inline T *array_ptr(const ml_array *a) {
  return (T *)ml_array_data(a);
}

/* Device memory for the length of one launcher, from the caching
 * allocator; given back when it goes out of scope. Stream order makes the
 * early return safe: later work on the stream runs after the kernels that
 * use it. */
struct cuda_scratch {
  int device = 0;
  void *ptr = nullptr;
  size_t nbytes = 0;
  cuda_scratch() = default;
  cuda_scratch(const cuda_scratch &) = delete;
  cuda_scratch &operator=(const cuda_scratch &) = delete;
  ~cuda_scratch() {
    if (ptr) cuda_free(device, ptr, nbytes);
  }
  int get(int dev, size_t n, const char *op) {
    device = dev;
    nbytes = n;
    if (n == 0) return ML_OK;
    if (cuda_alloc(dev, n, &ptr) == ML_OK) return ML_OK;
    ptr = nullptr;
    return ml_fail(ML_ENOMEM, "cuda: out of memory allocating %zu bytes of scratch for %s on cuda:%d",
                   n, op, dev);
  }
  template <class T> T *as() const { return (T *)ptr; }
};

/* a's data when a is contiguous, else a contiguous copy of a made in tmp
 * (copy.cu). */
int cuda_contiguous(cuda_dev *d, const ml_array *a, cuda_scratch &tmp, const void **data);

/* Blocks for n items of `threads` threads each, grid-stride beyond
 * `per_sm` blocks per multiprocessor. */
static inline unsigned grid_for(int64_t n, int threads, const cuda_dev *d,
                                int per_sm = 32) {
  int64_t b = (n + threads - 1) / threads, cap = (int64_t)d->sms * per_sm;
  if (b > cap) b = cap;
  return b < 1 ? 1u : (unsigned)b;
}

/* ml_scalar_to_int64's rule: NaN to 0, saturating, else truncation. */
__device__ __forceinline__ int64_t float_to_int64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* ---- order keys ----
 * Unsigned integers in the order of the values (cpu_sort.c's order):
 * integers with the sign bit flipped; floats by their bits with negatives
 * inverted, -0 as +0 and NaN as the largest key. Sorting and selecting by
 * (key, position) is then a strict total order, the same on both backends
 * (sort.cu, knn.cu). */
template <class T>
using key_type = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;

__device__ __forceinline__ uint32_t sort_key(uint8_t x) { return x; }
__device__ __forceinline__ uint32_t sort_key(int32_t x) { return (uint32_t)x ^ 0x80000000u; }
__device__ __forceinline__ uint64_t sort_key(int64_t x) {
  return (uint64_t)x ^ 0x8000000000000000ull;
}
__device__ __forceinline__ uint32_t sort_key(float x) {
  if (x != x) return 0xFFFFFFFFu;
  uint32_t u = x == 0 ? 0u : __float_as_uint(x);
  return (u >> 31) ? ~u : u | 0x80000000u;
}
__device__ __forceinline__ uint64_t sort_key(double x) {
  if (x != x) return 0xFFFFFFFFFFFFFFFFull;
  uint64_t u = x == 0 ? 0ull : (uint64_t)__double_as_longlong(x);
  return (u >> 63) ? ~u : u | 0x8000000000000000ull;
}

/* The float (double) value of a float (double) key: +0 for -0, NaN for
 * the largest key. */
__device__ __forceinline__ float key_value(uint32_t k) {
  return __uint_as_float((k >> 31) ? k & 0x7FFFFFFFu : ~k);
}
__device__ __forceinline__ double key_value(uint64_t k) {
  return __longlong_as_double((long long)((k >> 63) ? k & 0x7FFFFFFFFFFFFFFFull : ~k));
}

/* ---- strided iteration ---- */

/* N operands of one shape: sizes, and each operand's strides in elements,
 * after coalescing (size-1 dimensions dropped; a dimension merged into the
 * next when every operand steps over it as over the whole next one). */
template <int N> struct Iter {
  int ndim;
  int64_t size[ML_MAX_DIMS];
  int64_t stride[N][ML_MAX_DIMS];
};

/* From dimensions [0, ndim) of shape and each operand's strides. */
template <int N>
static Iter<N> iter_make(int ndim, const int64_t *shape,
                         const int64_t *const *strides) {
  Iter<N> it;
  it.ndim = 0;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 1) continue;
    int k = it.ndim;
    if (k > 0) {
      bool merge = true;
      for (int j = 0; j < N && merge; j++)
        merge = it.stride[j][k - 1] == strides[j][d] * shape[d];
      if (merge) {
        it.size[k - 1] *= shape[d];
        for (int j = 0; j < N; j++) it.stride[j][k - 1] = strides[j][d];
        continue;
      }
    }
    it.size[k] = shape[d];
    for (int j = 0; j < N; j++) it.stride[j][k] = strides[j][d];
    it.ndim++;
  }
  return it;
}

/* Over ops[0]'s shape (all operands have it). */
template <int N> static Iter<N> iter_of(const ml_array *const *ops) {
  const int64_t *strides[N];
  for (int j = 0; j < N; j++) strides[j] = ops[j]->strides;
  return iter_make<N>(ops[0]->ndim, ops[0]->shape, strides);
}

/* Whether operand j walks the flattened index with step 1 (or 0: one
 * element for all). */
template <int N> static bool iter_flat(const Iter<N> &it, int j, int64_t step) {
  return it.ndim == 0 || (it.ndim == 1 && it.stride[j][0] == step);
}

/* The offsets of the N operands at flattened index i (C order). Idx is
 * uint32_t when the iteration has under 2^31 elements: 32-bit divisions. */
template <int N, class Idx>
__device__ __forceinline__ void iter_offsets(const Iter<N> &it, Idx i,
                                             int64_t (&off)[N]) {
#pragma unroll
  for (int j = 0; j < N; j++) off[j] = 0;
#pragma unroll
  for (int d = ML_MAX_DIMS - 1; d >= 0; d--) {
    if (d < it.ndim) {
      Idx c = i;
      if (d > 0) {
        Idx size = (Idx)it.size[d], q = i / size;
        c = i - q * size;
        i = q;
      }
#pragma unroll
      for (int j = 0; j < N; j++) off[j] += (int64_t)c * it.stride[j][d];
    }
  }
}

/* ---- the elementwise engine ---- */

template <class T, int V> struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

/* An input: array data (p, offset applied) stepping `step` in the flat
 * path (1, or 0 for one element broadcast), or a value (p == NULL). */
template <class T> struct In {
  const T *p;
  T value;
  int step;
  __device__ __forceinline__ T at(int64_t off) const {
    return p ? p[off] : value;
  }
  __device__ __forceinline__ T flat(int64_t i) const {
    return p ? p[i * step] : value;
  }
  template <int V>
  __device__ __forceinline__ void load(int64_t i, T (&r)[V]) const {
    if (p && step) {
      Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(p + i);
#pragma unroll
      for (int e = 0; e < V; e++) r[e] = v.v[e];
    } else {
      T x = p ? p[0] : value;
#pragma unroll
      for (int e = 0; e < V; e++) r[e] = x;
    }
  }
  bool aligned(int bytes) const {
    return !p || !step || (uintptr_t)p % (uintptr_t)bytes == 0;
  }
};

template <class T> static In<T> in_array(const ml_array *a, int64_t step) {
  In<T> r;
  r.p = array_ptr<T>(a);
  r.value = T();
  r.step = (int)step;
  return r;
}

template <class T> static In<T> in_value(T v) {
  In<T> r;
  r.p = nullptr;
  r.value = v;
  r.step = 0;
  return r;
}

template <class O, int V>
__device__ __forceinline__ void store_vec(O *p, const O (&r)[V]) {
  Vec<O, V> v;
#pragma unroll
  for (int e = 0; e < V; e++) v.v[e] = r[e];
  *reinterpret_cast<Vec<O, V> *>(p) = v;
}

/* The maps: out = f(inputs...), one output and one to three inputs. Each
 * has at(off) for the strided kernel (off[0] the output's), one(i) and
 * vec<V>(i) for the flat one. */
template <class F, class O, class A> struct Map1 {
  static constexpr int N = 2;
  static constexpr int size = sizeof(O) > sizeof(A) ? sizeof(O) : sizeof(A);
  O *o;
  In<A> a;
  F f;
  __device__ __forceinline__ void at(const int64_t (&off)[N]) const {
    o[off[0]] = f(a.at(off[1]));
  }
  __device__ __forceinline__ void one(int64_t i) const { o[i] = f(a.flat(i)); }
  template <int V> __device__ __forceinline__ void vec(int64_t i) const {
    A x[V];
    O r[V];
    a.template load<V>(i, x);
#pragma unroll
    for (int e = 0; e < V; e++) r[e] = f(x[e]);
    store_vec<O, V>(o + i, r);
  }
  bool aligned(int v) const {
    return (uintptr_t)o % (uintptr_t)(v * sizeof(O)) == 0 &&
           a.aligned(v * (int)sizeof(A));
  }
};

template <class F, class O, class A, class B> struct Map2 {
  static constexpr int N = 3;
  static constexpr int ab = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
  static constexpr int size = sizeof(O) > ab ? sizeof(O) : ab;
  O *o;
  In<A> a;
  In<B> b;
  F f;
  __device__ __forceinline__ void at(const int64_t (&off)[N]) const {
    o[off[0]] = f(a.at(off[1]), b.at(off[2]));
  }
  __device__ __forceinline__ void one(int64_t i) const {
    o[i] = f(a.flat(i), b.flat(i));
  }
  template <int V> __device__ __forceinline__ void vec(int64_t i) const {
    A x[V];
    B y[V];
    O r[V];
    a.template load<V>(i, x);
    b.template load<V>(i, y);
#pragma unroll
    for (int e = 0; e < V; e++) r[e] = f(x[e], y[e]);
    store_vec<O, V>(o + i, r);
  }
  bool aligned(int v) const {
    return (uintptr_t)o % (uintptr_t)(v * sizeof(O)) == 0 &&
           a.aligned(v * (int)sizeof(A)) && b.aligned(v * (int)sizeof(B));
  }
};

template <class F, class O, class A, class B, class C> struct Map3 {
  static constexpr int N = 4;
  static constexpr int ab = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
  static constexpr int abc = ab > (int)sizeof(C) ? ab : (int)sizeof(C);
  static constexpr int size = (int)sizeof(O) > abc ? (int)sizeof(O) : abc;
  O *o;
  In<A> a;
  In<B> b;
  In<C> c;
  F f;
  __device__ __forceinline__ void at(const int64_t (&off)[N]) const {
    o[off[0]] = f(a.at(off[1]), b.at(off[2]), c.at(off[3]));
  }
  __device__ __forceinline__ void one(int64_t i) const {
    o[i] = f(a.flat(i), b.flat(i), c.flat(i));
  }
  template <int V> __device__ __forceinline__ void vec(int64_t i) const {
    A x[V];
    B y[V];
    C z[V];
    O r[V];
    a.template load<V>(i, x);
    b.template load<V>(i, y);
    c.template load<V>(i, z);
#pragma unroll
    for (int e = 0; e < V; e++) r[e] = f(x[e], y[e], z[e]);
    store_vec<O, V>(o + i, r);
  }
  bool aligned(int v) const {
    return (uintptr_t)o % (uintptr_t)(v * sizeof(O)) == 0 &&
           a.aligned(v * (int)sizeof(A)) && b.aligned(v * (int)sizeof(B)) &&
           c.aligned(v * (int)sizeof(C));
  }
};

/* Strided: one thread per element (grid-stride), offsets from the
 * flattened index. Shapes: anything up to 8 dimensions after coalescing. */
template <class M, class Idx>
__global__ void map_strided(Iter<M::N> it, Idx n, M m) {
  Idx step = (Idx)gridDim.x * blockDim.x;
  for (Idx i = (Idx)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[M::N];
    iter_offsets<M::N, Idx>(it, i, off);
    m.at(off);
  }
}

/* Flat: every operand contiguous or a single element; each thread takes
 * V elements at a time with 16-byte loads and stores (V = 1 when some
 * pointer is not aligned), the n % V last ones one each. */
template <int V, class M> __global__ void map_flat(int64_t n, M m) {
  int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t step = (int64_t)gridDim.x * blockDim.x, nv = n / V;
  for (int64_t v = tid; v < nv; v += step) m.template vec<V>(v * V);
  if (V > 1 && tid < n - nv * V) m.one(nv * V + tid);
}

/* Whether every operand of `it` is contiguous (the output) or contiguous
 * or a single element (the inputs): map_flat's case. */
template <int N> static bool iter_all_flat(const Iter<N> &it) {
  bool flat = iter_flat(it, 0, 1);
  for (int j = 1; j < N && flat; j++) flat = iter_flat(it, j, 1) || iter_flat(it, j, 0);
  return flat;
}

/* Runs map m over the iteration it of n elements (out is operand 0). */
template <class M>
static int map_launch(cuda_dev *d, const Iter<M::N> &it, int64_t n, const M &m,
                      const char *op) {
  if (n <= 0) return ML_OK;
  const int threads = 256;
  if (iter_all_flat<M::N>(it)) {
    constexpr int V = 16 / M::size;
    if (V > 1 && m.aligned(V))
      return launch_kernel<map_flat<V, M>>(d, grid_for(n / V + 1, threads, d), threads, op, n, m);
    return launch_kernel<map_flat<1, M>>(d, grid_for(n, threads, d), threads, op, n, m);
  }
  if (n < INT32_MAX)
    return launch_kernel<map_strided<M, uint32_t>>(d, grid_for(n, threads, d), threads, op, it,
                                            (uint32_t)n, m);
  return launch_kernel<map_strided<M, uint64_t>>(d, grid_for(n, threads, d), threads, op, it,
                                          (uint64_t)n, m);
}

/* The step of input j in the flat path (meaningful only when flat). */
template <int N> static int64_t iter_step(const Iter<N> &it, int j) {
  return it.ndim == 1 ? it.stride[j][0] : 0;
}

#endif
