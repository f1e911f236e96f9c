/* Random numbers: the Philox4x32-10 stream of src/core/philox.h, which
 * defines which counter block and words make each element; the CPU
 * backend (src/cpu/cpu_random.c) reads the same stream, so uniforms and
 * integers are bit-identical on both and normals agree to a few ulp.
 *
 * One thread per counter block (grid-stride): it makes the block's 4 words
 * once and writes the elements they give, 4 (float32) or 2 (float64 and
 * integers), with one 16-byte store where the output is aligned. The
 * kernels are bound by instruction issue, not by the stores: Philox's 20
 * wide multiplies and, for normals, the Box-Muller math, which is why the
 * float32 normals have their own evaluation below. */
#include <type_traits>

#include "launch.cuh"

/* ---- float32 normals ----
 * r cos(t) and r sin(t) of philox.h, evaluated in float within a few ulp
 * of the definition (the CPU rounds it from double). The words give the
 * arguments exactly and leave no special cases, so this takes a third of
 * the instructions of logf, sqrtf and sincosf with their general argument
 * reduction and special cases: log, sine and cosine are short minimax
 * polynomials on reduced ranges (relative errors 1.9e-7, 6.5e-9 and
 * 6.5e-8), the square root is the hardware's approximation (one MUFU).
 * Against the double-precision definition over 2^28 values (two seeds):
 * within 0.21 of the tests' tolerance (1e-6 relative and absolute), and
 * 3.6e-7 relative where |z| > 1e-3. */

#define TWO_M23 1.1920928955078125e-7f /* 2^-23 */

/* -2 ln v for v = 1 - u(w) = 2^e m, m in [2/3, 4/3): -2 ln m is
 * g + g^2 P(g) with g = -2 (m - 1) in [-2/3, 2/3], and v, m and g are
 * exact, so values near 1 keep their relative accuracy. */
__device__ __forceinline__ float neg2log(uint32_t w) {
  float v = fmaf((float)(w >> 8), -ML_PHILOX_2POW_M24, 1.0f);
  uint32_t bits = __float_as_uint(v), e = (bits - 0x3f2aaaabu) & 0xff800000u;
  float g = fmaf(__uint_as_float(bits - e), -2.0f, 2.0f);
  float p = fmaf(1.19269441e-3f, g, 2.65477644e-3f);
  p = fmaf(p, g, 5.13777183e-3f);
  p = fmaf(p, g, 1.23863546e-2f);
  p = fmaf(p, g, 3.12579013e-2f);
  p = fmaf(p, g, 8.33418369e-2f);
  p = fmaf(p, g, 2.49999806e-1f);
  /* (float)e is 2^23 times the exponent: times -2 ln 2 * 2^-23 */
  return fmaf((float)(int32_t)e, -1.38629436111989061f * TWO_M23, fmaf(g * p, g, g));
}

/* sqrt(y) for y in [0, 34] (0 or above 1e-7, so flushing subnormals
 * changes nothing): the hardware's approximation. */
__device__ __forceinline__ float sqrt_small(float y) {
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}

/* Two standard normals from two words, as ml_philox_normal2f defines them.
 * The angle 2pi j 2^-24 (j = w1 >> 8) is q pi/2 + x pi/4, q the nearest
 * quarter turn and x = f 2^-21 in [-1, 1) with f the low 22 bits of j
 * taken as signed, exactly: with t = w1 + 2^29, q is t's top 2 bits. The
 * half turn (q >= 2) negates r; an odd q takes (cos, sin)(phi + pi/2) =
 * (-sin, cos)(phi). x becomes a float by a magic number, the bits of
 * 1.5 * 2^2 plus f (one LEA on the integer pipe, which Philox keeps busy,
 * instead of a shift and a conversion), and the polynomials in x take pi/4
 * into their coefficients. */
__device__ __forceinline__ void normal2f(uint32_t w0, uint32_t w1, float *z0, float *z1) {
  uint32_t t = w1 + 0x20000000u;
  float r = __uint_as_float(__float_as_uint(sqrt_small(neg2log(w0))) ^ (t & 0x80000000u));
  bool odd = __float_as_int(__uint_as_float(t << 1)) < 0; /* bit 30: one LOP3 */
  float x = __int_as_float(((int32_t)(w1 << 2) >> 10) + 0x40c00000) - 6.0f;
  float h = x * x;
  float s = x * fmaf(fmaf(fmaf(-3.595439921e-5f, h, 2.490026178e-3f), h, -8.074545860e-2f), h,
                     7.853981853e-1f);
  float c = fmaf(fmaf(fmaf(-3.188789997e-4f, h, 1.585013419e-2f), h, -3.084244728e-1f), h, 1.0f);
  *z0 = r * (odd ? -s : c);
  *z1 = r * (odd ? c : s);
}

/* float32 uniform in [a, b), normal (a = mean, b = std) or standard
 * normal. */
enum { F32_UNIFORM, F32_NORMAL, F32_STANDARD };

/* The 4 values of the counter block whose counter words are lo and hi. */
template <int KIND>
__device__ __forceinline__ float4 f32_block(const ml_philox_keys &ks, uint32_t lo, uint32_t hi,
                                            float a, float b) {
  ml_philox4 w = ml_philox4x32_10(ml_philox4{{lo, hi, 0, 0}}, &ks);
  float v[4];
  if (KIND == F32_UNIFORM) {
#pragma unroll
    for (int k = 0; k < 4; k++) v[k] = ml_philox_uniformf(a, b, ml_philox_u01f(w.w[k]));
  } else {
    normal2f(w.w[0], w.w[1], &v[0], &v[1]);
    normal2f(w.w[2], w.w[3], &v[2], &v[3]);
    if (KIND == F32_NORMAL)
#pragma unroll
      for (int k = 0; k < 4; k++) v[k] = fmaf(b, v[k], a);
  }
  return make_float4(v[0], v[1], v[2], v[3]);
}

/* Block i of a launch has the counter words lo + i and hi: the launcher
 * splits a call where the low word would wrap, so that hi is the same for
 * every thread, and so are the word hi ^ k0 of Philox's first round and
 * its products in the second, which the compiler takes out of the loop.
 * The blocks that fill 16 aligned bytes first, F32_UNROLL of them at a
 * time (independent Philox chains keep the issue slots busy), with one
 * store each and no test in the loop; then the rest (a partial last block,
 * or all of an output that is not aligned) one element at a time. */
#define F32_UNROLL 4
#define F32_THREADS 1024
template <int KIND>
__global__ void __launch_bounds__(F32_THREADS)
    random_f32(float *out, int64_t n, const ml_philox_keys ks, uint32_t lo, uint32_t hi, float a,
               float b) {
  const int64_t nblocks = (n + 3) / 4, step = (int64_t)gridDim.x * blockDim.x;
  const int64_t whole = (uintptr_t)out % 16 == 0 ? n / 4 : 0;
  int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; blk + (F32_UNROLL - 1) * step < whole; blk += F32_UNROLL * step) {
    float4 v[F32_UNROLL];
#pragma unroll
    for (int u = 0; u < F32_UNROLL; u++)
      v[u] = f32_block<KIND>(ks, lo + (uint32_t)(blk + u * step), hi, a, b);
#pragma unroll
    for (int u = 0; u < F32_UNROLL; u++) reinterpret_cast<float4 *>(out)[blk + u * step] = v[u];
  }
  for (; blk < whole; blk += step)
    reinterpret_cast<float4 *>(out)[blk] = f32_block<KIND>(ks, lo + (uint32_t)blk, hi, a, b);
  for (; blk < nblocks; blk += step) {
    float4 v = f32_block<KIND>(ks, lo + (uint32_t)blk, hi, a, b);
    const float e[4] = {v.x, v.y, v.z, v.w};
    for (int64_t k = 0, i = 4 * blk; k < 4 && i + k < n; k++) out[i + k] = e[k];
  }
}

/* float32 output from counter block `offset` on, one launch for each run of
 * blocks that shares the counter's high word (one launch unless the call
 * crosses a multiple of 2^32 blocks). */
static int f32_launch(cuda_dev *d, float *out, int64_t n, const ml_philox_keys &ks,
                      uint64_t offset, ml_randkind kind, float a, float b) {
  const int64_t nblocks = (n + 3) / 4;
  for (int64_t done = 0; done < nblocks;) {
    uint64_t at = offset + (uint64_t)done;
    uint32_t lo = (uint32_t)at, hi = (uint32_t)(at >> 32);
    int64_t count = nblocks - done, to_wrap = (int64_t)((1ull << 32) - lo);
    if (count > to_wrap) count = to_wrap;
    float *o = out + 4 * done;
    int64_t m = n - 4 * done < 4 * count ? n - 4 * done : 4 * count;
    /* one block of 1024 threads an SM: randn's kernel fits its registers
     * at that size, and larger or more blocks gain nothing */
    unsigned grid = grid_for(count, F32_THREADS, d, 1);
    int rc;
    if (kind != ML_RAND_NORMAL)
      rc = cuda_launch<random_f32<F32_UNIFORM>>(d, grid, F32_THREADS, 0, "random", o, m, ks, lo,
                                               hi, a, b);
    else if (a == 0 && b == 1)
      rc = cuda_launch<random_f32<F32_STANDARD>>(d, grid, F32_THREADS, 0, "random", o, m, ks, lo,
                                                hi, a, b);
    else
      rc = cuda_launch<random_f32<F32_NORMAL>>(d, grid, F32_THREADS, 0, "random", o, m, ks, lo,
                                              hi, a, b);
    if (rc) return rc;
    done += count;
  }
  return ML_OK;
}

/* The same for the float64 stream (ml_philox_normal2d). */
__device__ __forceinline__ void normal2d(ml_philox4 b, double *z0, double *z1) {
  double r = sqrt(-2.0 * log(1.0 - ml_philox_u01d(b.w[0], b.w[1])));
  double t = 6.28318530717958647692 * ml_philox_u01d(b.w[2], b.w[3]), s, c;
  sincos(t, &s, &c);
  *z0 = r * c;
  *z1 = r * s;
}

/* Two elements per block: float64 uniform or normal, or integers in
 * [low, low + range) (kind ML_RAND_INT). */
template <class T>
__global__ void random_pairs(T *out, int64_t n, const ml_philox_keys ks, uint64_t offset,
                             int kind, double p1, double p2, int64_t low, uint64_t range) {
  const int64_t nblocks = (n + 1) / 2, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t blk = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; blk < nblocks;
       blk += step) {
    ml_philox4 w = ml_philox_block(&ks, offset + (uint64_t)blk);
    T v[2];
    if constexpr (std::is_same<T, double>::value) {
      if (kind == ML_RAND_NORMAL) {
        double z[2];
        normal2d(w, &z[0], &z[1]);
        bool standard = p1 == 0 && p2 == 1;
        v[0] = standard ? z[0] : fma(p2, z[0], p1);
        v[1] = standard ? z[1] : fma(p2, z[1], p1);
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
static int pairs(cuda_dev *d, const ml_array *out, int64_t n, const ml_philox_keys &ks,
                 uint64_t offset, ml_randkind kind, double p1, double p2) {
  int64_t low = kind == ML_RAND_INT ? (int64_t)p1 : 0;
  uint64_t range = kind == ML_RAND_INT ? (uint64_t)((int64_t)p2 - low) : 1;
  return cuda_launch<random_pairs<T>>(d, grid_for((n + 1) / 2, 256, d, 16), 256, 0, "random",
                                      array_ptr<T>(out), n, ks, offset, (int)kind, p1, p2, low,
                                      range);
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
  const ml_philox_keys ks = ml_philox_seed_keys(seed);
  switch (out->dtype) {
    case ML_FLOAT32:
      return f32_launch(d, array_ptr<float>(out), n, ks, offset, kind, (float)p1, (float)p2);
    case ML_FLOAT64: return pairs<double>(d, out, n, ks, offset, kind, p1, p2);
    case ML_UINT8: return pairs<uint8_t>(d, out, n, ks, offset, kind, p1, p2);
    case ML_INT32: return pairs<int32_t>(d, out, n, ks, offset, kind, p1, p2);
    default: return pairs<int64_t>(d, out, n, ks, offset, kind, p1, p2);
  }
}
