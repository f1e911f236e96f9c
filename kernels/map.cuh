/* The elementwise engine: maps out = f(inputs...) over one output and one
 * to three inputs, a flat kernel (16-byte loads and stores when every
 * operand is contiguous or one element) or a strided one; copy.cu and
 * elementwise.cu instantiate it, and elementwise_batch.cuh runs its flat
 * case for small operations. */
#ifndef ML_CUDA_MAP_CUH
#define ML_CUDA_MAP_CUH

#include "iter.cuh"
#include "launch.cuh"

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

/* Runs map m over the iteration it of n elements (out is operand 0). */
template <class M>
static int map_launch(cuda_dev *d, const Iter<M::N> &it, int64_t n, const M &m,
                      const char *op) {
  if (n <= 0) return ML_OK;
  const int threads = 256;
  if (iter_all_flat<M::N>(it)) {
    constexpr int V = 16 / M::size;
    if (V > 1 && m.aligned(V))
      return cuda_launch<map_flat<V, M>>(d, grid_for(n / V + 1, threads, d), threads, 0, op, n,
                                         m);
    return cuda_launch<map_flat<1, M>>(d, grid_for(n, threads, d), threads, 0, op, n, m);
  }
  if (n < INT32_MAX)
    return cuda_launch<map_strided<M, uint32_t>>(d, grid_for(n, threads, d), threads, 0, op, it,
                                            (uint32_t)n, m);
  return cuda_launch<map_strided<M, uint64_t>>(d, grid_for(n, threads, d), threads, 0, op, it,
                                          (uint64_t)n, m);
}

#endif
