/* Strided iteration over up to 8 dimensions: N operands of one shape,
 * coalesced on the host, and their offsets at a flat index on the device. */
#ifndef ML_CUDA_ITER_CUH
#define ML_CUDA_ITER_CUH

#include <stdint.h>

#include "device.cuh"

/* Division of unsigned numbers below 2^31 by a fixed divisor d >= 2: the
 * quotient is the high word of n times a magic number, shifted (the
 * round-up method: p = 31 + ceil(log2 d), mul = ceil(2^p / d)). A 32-bit
 * division by a variable compiles to a routine of about 20 instructions,
 * which strided maps ran once a dimension an element: the weighting of
 * the mixture's M-step (16 broadcast products of 60000 x 10 x 51 doubles)
 * took 2.5 ms on an H200 with it, 1.9 ms with this. */
struct FastDiv {
  uint32_t mul;
  int shr;
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return __umulhi(n, mul) >> shr; }
};

/* d in [2, 2^31); other divisors get no magic (callers divide then). */
static inline FastDiv fast_div(int64_t d) {
  FastDiv f = {0, 0};
  if (d < 2 || d >= ((int64_t)1 << 31)) return f;
  int l = 0;
  while (((int64_t)1 << l) < d) l++;
  f.mul = (uint32_t)((((uint64_t)1 << (31 + l)) + (uint64_t)d - 1) / (uint64_t)d);
  f.shr = l - 1;
  return f;
}

/* N operands of one shape: sizes, and each operand's strides in elements,
 * after coalescing (size-1 dimensions dropped; a dimension merged into the
 * next when every operand steps over it as over the whole next one); the
 * sizes' magic divisors for 32-bit flat indices. */
template <int N> struct Iter {
  int ndim;
  int64_t size[ML_MAX_DIMS];
  int64_t stride[N][ML_MAX_DIMS];
  FastDiv div[ML_MAX_DIMS];
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
  for (int d = 0; d < it.ndim; d++) it.div[d] = fast_div(it.size[d]);
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
 * uint32_t when the iteration has under 2^31 elements: magic divisions
 * (every size is 2 or more after coalescing), else 64-bit ones. */
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
        Idx size = (Idx)it.size[d], q;
        if constexpr (sizeof(Idx) == 4)
          q = it.div[d].div(i);
        else
          q = i / size;
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
