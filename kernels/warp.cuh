/* Warp-wide constants and the synchronization of a group of threads, a
 * warp or a whole block. */
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

#endif
