/* Strided iteration over up to 8 dimensions: N operands of one shape,
 * coalesced on the host, and their offsets at a flat index on the device. */
#ifndef ML_CUDA_ITER_CUH
#define ML_CUDA_ITER_CUH

#include <stdint.h>

#include "device.cuh"

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

/* Whether every operand of `it` is contiguous (the output) or contiguous
 * or a single element (the inputs): map_flat's case. */
template <int N> static bool iter_all_flat(const Iter<N> &it) {
  bool flat = iter_flat(it, 0, 1);
  for (int j = 1; j < N && flat; j++) flat = iter_flat(it, j, 1) || iter_flat(it, j, 0);
  return flat;
}

/* The step of input j in the flat path (meaningful only when flat). */
template <int N> static int64_t iter_step(const Iter<N> &it, int j) {
  return it.ndim == 1 ? it.stride[j][0] : 0;
}

#endif
