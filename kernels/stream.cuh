/* What the kernels that stream their input through shared memory share
 * (filter_line.cu, filter_strip.cu, scan_lookback.cu, binary_mm.cuh,
 * knn_nearest_tc.cu, mahalanobis.cu, gram_weighted.cu): copies from
 * global to shared memory that do not wait (cp.async, sm_80 on), so that
 * a block's next stretch of input is on its way while it computes on the
 * last, and how many of their blocks an SM holds at once, which sizes
 * their grids. */
#ifndef ML_CUDA_STREAM_CUH
#define ML_CUDA_STREAM_CUH

#include "device.cuh"

/* 16 bytes (both addresses 16-byte aligned), through L2 only, to the
 * shared address dst (a kernel that keeps its shared addresses in
 * registers: binary_mm.cuh) or to a pointer. */
static __device__ __forceinline__ void cp_async16(unsigned dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

static __device__ __forceinline__ void cp_async16(void *dst, const void *src) {
  cp_async16((unsigned)__cvta_generic_to_shared(dst), src);
}

/* 4 bytes. */
static __device__ __forceinline__ void cp_async4(unsigned dst, const void *src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
}

static __device__ __forceinline__ void cp_async4(void *dst, const void *src) {
  cp_async4((unsigned)__cvta_generic_to_shared(dst), src);
}

/* The same, or zeros when !ok (src is then not read). */
static __device__ __forceinline__ void cp_async16_or_zero(unsigned dst, const void *src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(ok ? 16 : 0));
}

static __device__ __forceinline__ void cp_async16_or_zero(void *dst, const void *src, bool ok) {
  cp_async16_or_zero((unsigned)__cvta_generic_to_shared(dst), src, ok);
}

static __device__ __forceinline__ void cp_async4_or_zero(void *dst, const void *src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                   (unsigned)__cvta_generic_to_shared(dst)),
               "l"(src), "r"(ok ? 4 : 0));
}

static __device__ __forceinline__ void cp_async8_or_zero(void *dst, const void *src, bool ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(
                   (unsigned)__cvta_generic_to_shared(dst)),
               "l"(src), "r"(ok ? 8 : 0));
}

/* Closes the group of the copies this thread has issued since the last. */
static __device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

/* Waits until at most N of this thread's groups are pending. */
template <int N> static __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Asks that kernel K's SMs on d give shared memory all the room they
 * can, once a device: a carveout is otherwise the driver's guess, which
 * left room for one block of filter_strip.cu's where two fit. */
template <auto K>
static int prefer_shared(const cuda_dev *d, const char *op) {
  static uint64_t done; /* a bit a device */
  const uint64_t bit = d->index < 64 ? 1ull << d->index : 0;
  if (done & bit) return ML_OK;
  cudaKernel_t k;
  int rc = cuda_check(cudaGetKernel(&k, (const void *)K), op);
  const cudaFuncAttribute carveout = cudaFuncAttributePreferredSharedMemoryCarveout;
  if (!rc)
    rc = cuda_check(cudaKernelSetAttributeForDevice(k, carveout, cudaSharedmemCarveoutMaxShared,
                                                    d->index),
                    op);
  if (!rc) done |= bit;
  return rc;
}

/* The blocks of smem bytes of shared memory each that an SM of d holds,
 * at most most_regs (what the kernel's registers allow), at least 1. */
static inline int stream_blocks_per_sm(const cuda_dev *d, size_t smem, int most_regs) {
  int per_sm = 0;
  if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, d->index) !=
      cudaSuccess)
    per_sm = 0;
  /* the runtime reserves 1 KB of every block's shared memory */
  int n = (int)(per_sm / (smem + 1024));
  return n < 1 ? 1 : n > most_regs ? most_regs : n;
}

#endif
