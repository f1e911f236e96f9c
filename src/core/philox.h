/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC 2011) and the moonlab stream built on it, shared by the CPU backend
 * and the CUDA kernels: every function is static inline, calls no libc
 * function except <math.h>, and compiles as C11 and as CUDA C++ (where it
 * is __host__ __device__).
 *
 * The stream. A generator state is a 64-bit seed and a 64-bit counter
 * offset. Block b of a call made at offset `off` is
 *     philox4x32_10(counter = {lo32(off + b), hi32(off + b), 0, 0},
 *                   key = {lo32(seed), hi32(seed)})  ->  words w0 w1 w2 w3
 * (off + b wraps modulo 2^64). Element i of the output (C order) reads:
 *   float32 uniform: block i/4, word w[i%4]: u = (w >> 8) * 2^-24 in [0, 1).
 *   float64 uniform: block i/2, words lo = w[2(i%2)], hi = w[2(i%2)+1]:
 *       u = ((hi << 32 | lo) >> 11) * 2^-53 in [0, 1).
 *   uniform(a, b): fma(b - a, u, a), rounded once in the dtype's precision
 *       (a, b, b - a in that precision too); a result that rounds up to b is
 *       replaced by the next value below b, so the range stays [a, b).
 *   float32 normal: block i/4; words (w0, w1) give outputs 0 and 1, words
 *       (w2, w3) outputs 2 and 3, by Box-Muller: with r = sqrt(-2 ln(1 -
 *       u(first))) and t = 2pi u(second) as real numbers, the outputs are
 *       r cos(t) and r sin(t) rounded to float. (1 - u is in (0, 1]; the
 *       CPU computes in double and rounds once, the GPU in float to within
 *       a few ulp: see random.cu.)
 *   float64 normal: block i/2 holds two float64 uniforms U0 (words 0, 1)
 *       and U1 (words 2, 3); output i%2 is r cos(t) or r sin(t) with
 *       r = sqrt(-2 log(1 - U0)), t = 2pi * U1, in double.
 *   normal(mean, std): fma(std, z, mean) in the dtype's precision, or z
 *       itself when mean = 0 and std = 1 (randn), which differs only in
 *       keeping the sign of a zero.
 *   (Parameters a, b, mean, std are rounded to the dtype first.)
 *   randint(low, high): block i/2, v = (uint64) hi << 32 | lo as for float64,
 *       result low + v mod (high - low). The modulo bias is at most
 *       (high - low) / 2^64 relative: below 2^-32 for ranges under 2^32.
 * A call producing n elements uses ceil(n / k) blocks (k = 4 for float32
 * uniform and normal, 2 otherwise) and then advances the offset by that
 * many; a partial last block's unused words are dropped.
 *
 * CPU and GPU results: uniforms and integers are bit-identical. float64
 * normals go through log, sqrt, sin and cos, whose last bits differ between
 * libm and CUDA's math library: they agree within about 1e-12 relative
 * (kernels must be built without --use_fast_math, which would swap in less
 * accurate intrinsics); float32 normals within about 1e-6. */
#ifndef ML_PHILOX_H
#define ML_PHILOX_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ML_PHILOX_FN static inline __host__ __device__
#else
#define ML_PHILOX_FN static inline
#endif

#define ML_PHILOX_M0 0xD2511F53u
#define ML_PHILOX_M1 0xCD9E8D57u
#define ML_PHILOX_W0 0x9E3779B9u /* golden ratio */
#define ML_PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

typedef struct {
  uint32_t w[4];
} ml_philox4;

/* The high word of a * b. (On the device a 64-bit product is kept 64-bit
 * through the rounds and costs an extra add in each.) */
ML_PHILOX_FN uint32_t ml_philox_mulhi(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return (uint32_t)((uint64_t)a * b >> 32);
#endif
}

/* The round keys of key (k0, k1): round r uses k0 + r W0 and k1 + r W1
 * (mod 2^32). Made once per call: the CUDA kernels take them as launch
 * parameters and read them from the constant bank, which leaves Philox 20
 * registers a thread fewer. */
typedef struct {
  uint32_t k0[10], k1[10];
} ml_philox_keys;

ML_PHILOX_FN ml_philox_keys ml_philox_schedule(uint32_t k0, uint32_t k1) {
  ml_philox_keys ks;
  for (uint32_t round = 0; round < 10; round++) {
    ks.k0[round] = k0 + round * ML_PHILOX_W0;
    ks.k1[round] = k1 + round * ML_PHILOX_W1;
  }
  return ks;
}

/* The round keys of the stream of `seed`: key {lo32(seed), hi32(seed)}. */
ML_PHILOX_FN ml_philox_keys ml_philox_seed_keys(uint64_t seed) {
  return ml_philox_schedule((uint32_t)seed, (uint32_t)(seed >> 32));
}

/* The Philox4x32 bijection with 10 rounds, as in Random123. */
ML_PHILOX_FN ml_philox4 ml_philox4x32_10(ml_philox4 ctr, const ml_philox_keys *ks) {
  for (int round = 0; round < 10; round++) {
    ml_philox4 next;
    next.w[0] = ml_philox_mulhi(ML_PHILOX_M1, ctr.w[2]) ^ ctr.w[1] ^ ks->k0[round];
    next.w[1] = ML_PHILOX_M1 * ctr.w[2];
    next.w[2] = ml_philox_mulhi(ML_PHILOX_M0, ctr.w[0]) ^ ctr.w[3] ^ ks->k1[round];
    next.w[3] = ML_PHILOX_M0 * ctr.w[0];
    ctr = next;
  }
  return ctr;
}

/* Block number `index` (offset + block) of the stream whose round keys are
 * ks (ml_philox_seed_keys). */
ML_PHILOX_FN ml_philox4 ml_philox_block(const ml_philox_keys *ks, uint64_t index) {
  ml_philox4 ctr;
  ctr.w[0] = (uint32_t)index;
  ctr.w[1] = (uint32_t)(index >> 32);
  ctr.w[2] = 0;
  ctr.w[3] = 0;
  return ml_philox4x32_10(ctr, ks);
}

/* 2^-24 and 2^-53, exact as decimals (hex floats are not C++14). */
#define ML_PHILOX_2POW_M24 5.9604644775390625e-8f
#define ML_PHILOX_2POW_M53 1.1102230246251565404236316680908203125e-16

ML_PHILOX_FN float ml_philox_u01f(uint32_t w) {
  return (float)(w >> 8) * ML_PHILOX_2POW_M24;
}

ML_PHILOX_FN uint64_t ml_philox_u64(uint32_t lo, uint32_t hi) {
  return (uint64_t)hi << 32 | lo;
}

ML_PHILOX_FN double ml_philox_u01d(uint32_t lo, uint32_t hi) {
  return (double)(ml_philox_u64(lo, hi) >> 11) * ML_PHILOX_2POW_M53;
}

/* u in [0, 1) onto [a, b) (a <= b), one rounding. */
ML_PHILOX_FN float ml_philox_uniformf(float a, float b, float u) {
  float r = fmaf(b - a, u, a);
  return r >= b ? nextafterf(b, a) : r;
}

ML_PHILOX_FN double ml_philox_uniformd(double a, double b, double u) {
  double r = fma(b - a, u, a);
  return r >= b ? nextafter(b, a) : r;
}

/* Two standard normals from two words (float32 stream), the definition:
 * in double, rounded once. */
ML_PHILOX_FN void ml_philox_normal2f(uint32_t w0, uint32_t w1, float *z0,
                                     float *z1) {
  double r = sqrt(-2.0 * log(1.0 - (double)ml_philox_u01f(w0)));
  double t = 6.28318530717958647692 * (double)ml_philox_u01f(w1);
  *z0 = (float)(r * cos(t));
  *z1 = (float)(r * sin(t));
}

/* Two standard normals from a whole block (float64 stream). */
ML_PHILOX_FN void ml_philox_normal2d(ml_philox4 b, double *z0, double *z1) {
  double r = sqrt(-2.0 * log(1.0 - ml_philox_u01d(b.w[0], b.w[1])));
  double t = 6.28318530717958647692 * ml_philox_u01d(b.w[2], b.w[3]);
  *z0 = r * cos(t);
  *z1 = r * sin(t);
}

/* low + v mod range, range = high - low > 0 as an unsigned count; wraps
 * through uint64 so that no signed overflow happens. */
ML_PHILOX_FN int64_t ml_philox_randint(uint32_t lo, uint32_t hi, int64_t low,
                                       uint64_t range) {
  return (int64_t)((uint64_t)low + ml_philox_u64(lo, hi) % range);
}

#endif
