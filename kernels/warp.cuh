/* Warp-wide constants, the synchronization of a group of threads, a warp
 * or a whole block, and the warp's TF32 product on the tensor cores. */
#ifndef ML_CUDA_WARP_CUH
#define ML_CUDA_WARP_CUH

#include "device.cuh"

/* A whole warp, for the *_sync intrinsics. */
#define FULL 0xFFFFFFFFu

template <int G> __device__ __forceinline__ void group_sync() {
  if (G == 32)
    __syncwarp();
  else
    __syncthreads();
}

/* acc += a b for one 16 x 8 x 8 TF32 tile (mma.sync; sm_80 on): lane
 * l = 4 g + t holds a0 = a's row g, a1 = its row g + 8, at k = t and
 * t + 4; b = b's column g at k = t and t + 4; acc = rows g and g + 8,
 * columns 2 t and 2 t + 1. Float bits are TF32 with the low 13 bits of
 * the mantissa ignored. */
__device__ __forceinline__ void tc_mma(float *acc, const uint32_t *a0, const uint32_t *a1,
                                       const uint32_t *b) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a0[0]), "r"(a1[0]), "r"(a0[1]), "r"(a1[1]), "r"(b[0]), "r"(b[1]));
}

/* acc += a b for one 16 x 8 x 16 float64 tile (mma.sync; sm_90 on): lane
 * l = 4 g + t holds a = a's rows g, g + 8 at k = t, then both at t + 4,
 * t + 8 and t + 12; b = b's column g at k = t, t + 4, t + 8, t + 12; acc
 * as tc_mma's. Any order of k that a and b share gives the same sum. */
__device__ __forceinline__ void tc_mma_f64(double (&acc)[4], const double (&a)[8],
                                           const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
      "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
      : "+d"(acc[0]), "+d"(acc[1]), "+d"(acc[2]), "+d"(acc[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

#endif
