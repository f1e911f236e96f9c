/* Softmax and log-softmax along the last dimension (backend.h's softmax
 * entry). CPU reference: src/cpu/cpu_softmax.c, whose steps these are: the
 * row's maximum (NaN when an element is NaN), the sum in double of the
 * exponentials shifted by it, lse, then the outputs. A group of threads a
 * row, a warp for rows up to WARP_ROW elements and a block beyond, with
 * 16-byte loads where the rows allow; a row that fits the group's
 * registers (REG_VECS loads a thread: 1024 float32 for a warp, 8192 for
 * a block) is read from memory once and written once (softmax_rows_reg),
 * a longer one is read three times, from memory once and then mostly from
 * the caches (softmax_rows). The sums are a fixed tree
 * (a butterfly over the lanes, then the warps in order), so the bits are
 * the same on every run. */
#include <math.h>

#include "launch.cuh"
#include "map.cuh"
#include "warp.cuh"

#define SM_BLOCK 256
#define WARP_ROW 4096

__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }

/* The group's maximum of the lanes' c, NaN when a lane saw a NaN; the
 * same value in every thread. */
template <class T, int G>
__device__ T group_max(T c, bool nan, T *redv, int *redn) {
  for (int o = 16; o > 0; o >>= 1) {
    T v = __shfl_xor_sync(FULL, c, o);
    c = v > c ? v : c;
  }
  nan = __any_sync(FULL, nan);
  if (G > 32) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) redv[w] = c, redn[w] = nan;
    __syncthreads();
    c = redv[0], nan = redn[0];
    for (int i = 1; i < G / 32; i++) c = redv[i] > c ? redv[i] : c, nan |= redn[i];
    __syncthreads();
  }
  return nan ? (T)NAN : c;
}

template <int G> __device__ double group_sum(double s, double *red) {
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
  if (G > 32) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) red[w] = s;
    __syncthreads();
    s = red[0];
    for (int i = 1; i < G / 32; i++) s += red[i];
    __syncthreads();
  }
  return s;
}

/* Rows of n elements, G threads a row, V elements a load. */
template <class T, int G, int V>
__global__ void __launch_bounds__(SM_BLOCK)
    softmax_rows(const T *in, T *out, T *lse, int64_t rows, int64_t n, int logs) {
  __shared__ double red[SM_BLOCK / 32];
  __shared__ T redv[SM_BLOCK / 32];
  __shared__ int redn[SM_BLOCK / 32];
  constexpr int PER = SM_BLOCK / G;
  const int tid = threadIdx.x % G;
  for (int64_t r = (int64_t)blockIdx.x * PER + threadIdx.x / G; r < rows;
       r += (int64_t)gridDim.x * PER) {
    const T *x = in + r * n;
    T *y = out + r * n;
    T c = -INFINITY;
    bool nan = false;
    for (int64_t j = (int64_t)tid * V; j < n; j += (int64_t)G * V) {
      Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(x + j);
#pragma unroll
      for (int e = 0; e < V; e++) {
        nan |= v.v[e] != v.v[e];
        c = v.v[e] > c ? v.v[e] : c;
      }
    }
    c = group_max<T, G>(c, nan, redv, redn);
    double s = 0;
    for (int64_t j = (int64_t)tid * V; j < n; j += (int64_t)G * V) {
      Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(x + j);
#pragma unroll
      for (int e = 0; e < V; e++) s += (double)sm_exp(v.v[e] - c);
    }
    s = group_sum<G>(s, red);
    const T l = (T)(isfinite((double)c) ? (double)c + log(s) : (double)c);
    for (int64_t j = (int64_t)tid * V; j < n; j += (int64_t)G * V) {
      Vec<T, V> v = *reinterpret_cast<const Vec<T, V> *>(x + j);
#pragma unroll
      for (int e = 0; e < V; e++) v.v[e] = logs ? v.v[e] - l : sm_exp(v.v[e] - l);
      *reinterpret_cast<Vec<T, V> *>(y + j) = v;
    }
    if (tid == 0) lse[r] = l;
  }
}

/* Rows of up to G V REG_VECS elements, G threads a row with the row in
 * registers: read from memory once, written once. The same operations in
 * the same order as softmax_rows with the same G. */
#define REG_VECS 8

template <class T, int G, int V>
__global__ void __launch_bounds__(SM_BLOCK)
    softmax_rows_reg(const T *in, T *out, T *lse, int64_t rows, int64_t n, int logs) {
  __shared__ double red[SM_BLOCK / 32];
  __shared__ T redv[SM_BLOCK / 32];
  __shared__ int redn[SM_BLOCK / 32];
  constexpr int PER = SM_BLOCK / G;
  const int tid = threadIdx.x % G;
  for (int64_t r = (int64_t)blockIdx.x * PER + threadIdx.x / G; r < rows;
       r += (int64_t)gridDim.x * PER) {
    const T *x = in + r * n;
    T *y = out + r * n;
    Vec<T, V> v[REG_VECS];
    T c = -INFINITY;
    bool nan = false;
#pragma unroll
    for (int q = 0; q < REG_VECS; q++) {
      const int64_t j = ((int64_t)q * G + tid) * V;
      if (j < n) v[q] = *reinterpret_cast<const Vec<T, V> *>(x + j);
    }
#pragma unroll
    for (int q = 0; q < REG_VECS; q++) {
      if (((int64_t)q * G + tid) * V >= n) continue;
#pragma unroll
      for (int e = 0; e < V; e++) {
        nan |= v[q].v[e] != v[q].v[e];
        c = v[q].v[e] > c ? v[q].v[e] : c;
      }
    }
    c = group_max<T, G>(c, nan, redv, redn);
    double s = 0;
#pragma unroll
    for (int q = 0; q < REG_VECS; q++) {
      if (((int64_t)q * G + tid) * V >= n) continue;
#pragma unroll
      for (int e = 0; e < V; e++) s += (double)sm_exp(v[q].v[e] - c);
    }
    s = group_sum<G>(s, red);
    const T l = (T)(isfinite((double)c) ? (double)c + log(s) : (double)c);
#pragma unroll
    for (int q = 0; q < REG_VECS; q++) {
      const int64_t j = ((int64_t)q * G + tid) * V;
      if (j >= n) continue;
#pragma unroll
      for (int e = 0; e < V; e++) v[q].v[e] = logs ? v[q].v[e] - l : sm_exp(v[q].v[e] - l);
      *reinterpret_cast<Vec<T, V> *>(y + j) = v[q];
    }
    if (tid == 0) lse[r] = l;
  }
}

template <class T, int G>
static int launch_group(cuda_dev *d, const T *in, T *out, T *lse, int64_t rows, int64_t n,
                        int logs) {
  constexpr int V = 16 / sizeof(T);
  unsigned grid = blocks_for(rows, SM_BLOCK / G);
  bool vec = n % V == 0 && (uintptr_t)in % 16 == 0 && (uintptr_t)out % 16 == 0;
  if (vec && n <= (int64_t)G * V * REG_VECS)
    return cuda_launch<softmax_rows_reg<T, G, V>>(d, grid, SM_BLOCK, 0, "softmax", in, out,
                                                  lse, rows, n, logs);
  if (vec)
    return cuda_launch<softmax_rows<T, G, V>>(d, grid, SM_BLOCK, 0, "softmax", in, out, lse,
                                              rows, n, logs);
  return cuda_launch<softmax_rows<T, G, 1>>(d, grid, SM_BLOCK, 0, "softmax", in, out, lse,
                                            rows, n, logs);
}

template <class T>
static int softmax_typed(cuda_dev *d, const ml_array *out, const ml_array *lse,
                         const ml_array *in, int logs) {
  int64_t n = in->ndim ? in->shape[in->ndim - 1] : 1, rows = ml_array_numel(lse);
  if (rows == 0) return ML_OK;
  const T *x = array_ptr<const T>(in);
  T *y = array_ptr<T>(out), *l = array_ptr<T>(lse);
  if (n <= WARP_ROW) return launch_group<T, 32>(d, x, y, l, rows, n, logs);
  return launch_group<T, SM_BLOCK>(d, x, y, l, rows, n, logs);
}

extern "C" int cuda_softmax(const ml_array *out, const ml_array *lse, const ml_array *in,
                            int logs) {
  cuda_dev *d;
  int rc = cuda_enter(array_device(in), &d);
  if (rc) return rc;
  return in->dtype == ML_FLOAT32 ? softmax_typed<float>(d, out, lse, in, logs)
                                 : softmax_typed<double>(d, out, lse, in, logs);
}
