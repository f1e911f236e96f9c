/* Random numbers: the Philox4x32-10 stream of src/core/philox.h, which
 * defines which counter block and words make each element; the CPU
 * backend (src/cpu/cpu_random.c) reads the same stream, so uniforms and
 * integers are bit-identical on both and normals agree to the last bits of
 * log, sqrt, sin and cos (CUDA's versions, not fast-math intrinsics).
 *
 * One thread per counter block (grid-stride): it makes the block's 4 words
 * once and writes the elements they give, 4 (float32) or 2 (float64 and
 * integers), with one 16-byte store where the output is aligned. The
 * kernels are bound by Philox's multiplies and the Box-Muller math more
 * than by the stores. */
#include <type_traits>

#include "../src/core/philox.h"
#include "common.cuh"

/* Two standard normals from two words, as ml_philox_normal2f defines them
 * (philox.h), with sin and cos from one sincosf: CUDA computes sincosf's
 * results exactly as sinf's and cosf's, sharing the argument reduction,
 * which is a good part of the kernel's work. */
__device__ __forceinline__ void normal2f(uint32_t w0, uint32_t w1, float *z0, float *z1) {
  float r = sqrtf(-2.0f * logf(1.0f - ml_philox_u01f(w0)));
  float t = 6.28318530717958647692f * ml_philox_u01f(w1), s, c;
  sincosf(t, &s, &c);
  *z0 = r * c;
  *z1 = r * s;
}

/* The same for the float64 stream (ml_philox_normal2d). */
__device__ __forceinline__ void normal2d(ml_philox4 b, double *z0, double *z1) {
  double r = sqrt(-2.0 * log(1.0 - ml_philox_u01d(b.w[0], b.w[1])));
  double t = 6.28318530717958647692 * ml_philox_u01d(b.w[2], b.w[3]), s, c;
  sincos(t, &s, &c);
  *z0 = r * c;
  *z1 = r * s;
}

/* float32 uniform in [a, b) or normal (a = mean, b = std). */
template <bool NORMAL>
__global__ void random_f32(float *out, int64_t n, uint64_t seed, uint64_t offset, float a,
                           float b) {
  const int64_t nblocks = (n + 3) / 4, step = (int64_t)gridDim.x * blockDim.x;
  const bool aligned = (uintptr_t)out % 16 == 0;
  for (int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; blk < nblocks;
       blk += step) {
    ml_philox4 w = ml_philox_block(seed, offset + (uint64_t)blk);
    float v[4];
    if (NORMAL) {
      normal2f(w.w[0], w.w[1], &v[0], &v[1]);
      normal2f(w.w[2], w.w[3], &v[2], &v[3]);
#pragma unroll
      for (int k = 0; k < 4; k++) v[k] = fmaf(b, v[k], a);
    } else {
#pragma unroll
      for (int k = 0; k < 4; k++) v[k] = ml_philox_uniformf(a, b, ml_philox_u01f(w.w[k]));
    }
    int64_t i = 4 * blk;
    if (aligned && i + 4 <= n) {
      *reinterpret_cast<float4 *>(out + i) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
      for (int k = 0; k < 4 && i + k < n; k++) out[i + k] = v[k];
    }
  }
}

/* Two elements per block: float64 uniform or normal, or integers in
 * [low, low + range) (kind ML_RAND_INT). */
template <class T>
__global__ void random_pairs(T *out, int64_t n, uint64_t seed, uint64_t offset, int kind,
                             double p1, double p2, int64_t low, uint64_t range) {
  const int64_t nblocks = (n + 1) / 2, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; blk < nblocks;
       blk += step) {
    ml_philox4 w = ml_philox_block(seed, offset + (uint64_t)blk);
    T v[2];
    if constexpr (std::is_same<T, double>::value) {
      if (kind == ML_RAND_NORMAL) {
        double z[2];
        normal2d(w, &z[0], &z[1]);
        v[0] = fma(p2, z[0], p1);
        v[1] = fma(p2, z[1], p1);
      } else {
        v[0] = ml_philox_uniformd(p1, p2, ml_philox_u01d(w.w[0], w.w[1]));
        v[1] = ml_philox_uniformd(p1, p2, ml_philox_u01d(w.w[2], w.w[3]));
      }
    } else {
      v[0] = (T)ml_philox_randint(w.w[0], w.w[1], low, range);
      v[1] = (T)ml_philox_randint(w.w[2], w.w[3], low, range);
    }
    int64_t i = 2 * blk;
    out[i] = v[0];
    if (i + 1 < n) out[i + 1] = v[1];
  }
}

template <class T>
static int pairs(cuda_dev *d, const ml_array *out, int64_t n, uint64_t seed, uint64_t offset,
                 ml_randkind kind, double p1, double p2) {
  int64_t low = kind == ML_RAND_INT ? (int64_t)p1 : 0;
  uint64_t range = kind == ML_RAND_INT ? (uint64_t)((int64_t)p2 - low) : 1;
  random_pairs<T><<<grid_for((n + 1) / 2, 256, d, 16), 256, 0, d->stream>>>(
      array_ptr<T>(out), n, seed, offset, (int)kind, p1, p2, low, range);
  return cuda_launched("random");
}

extern "C" int cuda_random(ml_randkind kind, const ml_array *out, uint64_t seed,
                           uint64_t offset, double p1, double p2) {
  if (kind == ML_RAND_INT ? ml_dtype_is_float(out->dtype) : !ml_dtype_is_float(out->dtype))
    return ml_fail(ML_EINVAL, "random: dtype %s does not suit this distribution",
                   ml_dtype_name(out->dtype));
  cuda_dev *d;
  int rc = cuda_enter(array_device(out), &d);
  int64_t n = ml_array_numel(out);
  if (rc || n == 0) return rc;
  switch (out->dtype) {
    case ML_FLOAT32: {
      unsigned grid = grid_for((n + 3) / 4, 256, d);
      if (kind == ML_RAND_NORMAL)
        random_f32<true><<<grid, 256, 0, d->stream>>>(array_ptr<float>(out), n, seed, offset,
                                                      (float)p1, (float)p2);
      else
        random_f32<false><<<grid, 256, 0, d->stream>>>(array_ptr<float>(out), n, seed, offset,
                                                       (float)p1, (float)p2);
      return cuda_launched("random");
    }
    case ML_FLOAT64: return pairs<double>(d, out, n, seed, offset, kind, p1, p2);
    case ML_UINT8: return pairs<uint8_t>(d, out, n, seed, offset, kind, p1, p2);
    case ML_INT32: return pairs<int32_t>(d, out, n, seed, offset, kind, p1, p2);
    default: return pairs<int64_t>(d, out, n, seed, offset, kind, p1, p2);
  }
}
