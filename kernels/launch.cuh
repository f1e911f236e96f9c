/* The one way kernels are launched, and the sizes of their grids.
 *
 * cuda_launch<kernel>(d, grid, block, smem, op, args...) queues kernel on
 * d's stream with smem bytes of dynamic shared memory (the limit raised
 * for the kernel when smem passes the default 48 KiB), its arguments
 * converted to the kernel's parameter types. It goes straight to the
 * driver's cuLaunchKernel (found once through the runtime, which links no
 * libcuda), with the kernel's handle looked up once: the runtime's <<<>>>
 * repeats that lookup at every launch and reports its errors only through
 * cudaGetLastError, which a tiny operation cannot afford. */
#ifndef ML_CUDA_LAUNCH_CUH
#define ML_CUDA_LAUNCH_CUH

#include <cudaTypedefs.h>

#include "device.cuh"

extern PFN_cuLaunchKernel_v4000 cuda_driver_launch;

template <class T> struct same_type {
  using type = T;
};

template <class... P>
static int launch_with(cudaKernel_t *k, void (*kernel)(P...), cuda_dev *d, dim3 grid,
                       dim3 block, size_t smem, const char *op,
                       typename same_type<P>::type... args) {
  if (!*k) {
    int rc = cuda_check(cudaGetKernel(k, (const void *)kernel), op);
    if (rc) return rc;
  }
  if (smem > 48 * 1024) {
    int rc = cuda_check(cudaKernelSetAttributeForDevice(
                            *k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem, d->index),
                        op);
    if (rc) return rc;
  }
  void *params[] = {&args..., nullptr};
  CUresult r = cuda_driver_launch((CUfunction)*k, grid.x, grid.y, grid.z, block.x, block.y,
                                  block.z, (unsigned)smem, (CUstream)d->stream, params, nullptr);
  return r == CUDA_SUCCESS ? ML_OK : cuda_driver_error(r, op);
}

template <auto K, class... A>
static int cuda_launch(cuda_dev *d, dim3 grid, dim3 block, size_t smem, const char *op,
                       A... args) {
  static cudaKernel_t k;
  return launch_with(&k, K, d, grid, block, smem, op, args...);
}

/* Blocks for n items of `threads` threads each, grid-stride beyond
 * `per_sm` blocks per multiprocessor. */
static inline unsigned grid_for(int64_t n, int threads, const cuda_dev *d, int per_sm = 32) {
  int64_t b = (n + threads - 1) / threads, cap = (int64_t)d->sms * per_sm;
  if (b > cap) b = cap;
  return b < 1 ? 1u : (unsigned)b;
}

/* Blocks for n groups of `per` a block, grid-stride beyond 2^20. */
static inline unsigned blocks_for(int64_t n, int per) {
  int64_t b = (n + per - 1) / per;
  return (unsigned)(b < 1 ? 1 : b < (1 << 20) ? b : (1 << 20));
}

#endif
