/* A filter mask in constant memory, and 16-byte vectors of samples: what
 * the correlation kernels of filter.cu and filter_reg.cu share. Each file
 * that includes this has a constant array of its own (static: the CUDA
 * files are compiled apart), filled by its own stage_mask. */
#ifndef ML_CUDA_FILTER_MASK_CUH
#define ML_CUDA_FILTER_MASK_CUH

#include "launch.cuh"
#include "scratch.cuh"

/* The bytes of constant memory for masks. */
#define MASK_CONST_BYTES 32768

static __constant__ float4 c_mask[MASK_CONST_BYTES / 16];

template <class T> __device__ __forceinline__ T cmask(int i) {
  return reinterpret_cast<const T *>(c_mask)[i];
}

/* 16 bytes of T, and their elements. */
template <class T> struct vec16;
template <> struct vec16<float> {
  using type = float4;
  static constexpr int n = 4;
  static __device__ __forceinline__ void split(float4 v, float *d) {
    d[0] = v.x, d[1] = v.y, d[2] = v.z, d[3] = v.w;
  }
  static __device__ __forceinline__ float4 join(const float *s) {
    return make_float4(s[0], s[1], s[2], s[3]);
  }
};
template <> struct vec16<double> {
  using type = double2;
  static constexpr int n = 2;
  static __device__ __forceinline__ void split(double2 v, double *d) {
    d[0] = v.x, d[1] = v.y;
  }
  static __device__ __forceinline__ double2 join(const double *s) {
    return make_double2(s[0], s[1]);
  }
};

static inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* dst[j0][j1][j2] (rows of kp, zeros past k2) = mask reversed or not, as T. */
template <class T>
__global__ void mask_prep(const double *mask, T *dst, int k0, int k1, int k2, int kp,
                          int flip) {
  int64_t n = (int64_t)k0 * k1 * kp;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int j2 = (int)(i % kp), j1 = (int)(i / kp % k1), j0 = (int)(i / kp / k1);
    if (j2 >= k2) {
      dst[i] = T(0);
      continue;
    }
    if (flip) j0 = k0 - 1 - j0, j1 = k1 - 1 - j1, j2 = k2 - 1 - j2;
    dst[i] = (T)mask[((int64_t)j0 * k1 + j1) * k2 + j2];
  }
}

/* The values of mask (float64, contiguous) on the device: its own data,
 * or, for a mask on the CPU (filter_backend.h's separable), a copy in s. */
static inline int mask_on_device(cuda_dev *d, const ml_array *mask, cuda_scratch &s,
                                 const double **p) {
  if (ml_array_device(mask).kind != ML_CPU) {
    *p = (const double *)ml_array_data(mask);
    return ML_OK;
  }
  const size_t bytes = ml_array_nbytes(mask);
  int rc = s.get(d->index, bytes, "filter");
  if (!rc)
    rc = cuda_check(cudaMemcpyAsync(s.ptr, ml_array_data(mask), bytes, cudaMemcpyHostToDevice,
                                    d->stream),
                    "filter");
  *p = s.as<const double>();
  return rc;
}

/* The mask (k0 x k1 x k2) as T, rows padded to kp, in scratch s; copied
 * to constant memory from element `at` on when to_const. */
template <class T>
static int stage_mask(cuda_dev *d, const double *mask, const int64_t *k, int64_t kp, int flip,
                      cuda_scratch &s, bool to_const, int64_t at) {
  int64_t n = k[0] * k[1] * kp;
  size_t bytes = (size_t)n * sizeof(T);
  int rc = s.get(d->index, bytes, "filter");
  if (!rc)
    rc = cuda_launch<mask_prep<T>>(d, grid_for(n, 256, d), 256, 0, "filter", mask,
                                   s.as<T>(), (int)k[0], (int)k[1], (int)k[2], (int)kp, flip);
  if (!rc && to_const)
    rc = cuda_check(cudaMemcpyToSymbolAsync(c_mask, s.ptr, bytes, at * sizeof(T),
                                            cudaMemcpyDeviceToDevice, d->stream),
                    "filter");
  return rc;
}

#endif
