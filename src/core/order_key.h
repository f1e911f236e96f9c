/* The order keys: every value of a dtype as an unsigned integer whose
 * order is the order of the values, shared by the CPU backend and the CUDA
 * kernels (static inline, plain C that also compiles as CUDA C++, where the
 * functions are __host__ __device__, like philox.h).
 *
 * Integers flip their sign bit (uint8 stays as it is). Floats take their
 * bits, negatives inverted and positives with the sign bit set; -0 counts
 * as +0 and every NaN as the largest key, above +inf. Sorting, top-k and
 * the kNN candidate lists order entries by (key, position): a strict total
 * order in which equal values keep their positions' order, so that every
 * algorithm and both backends give the same answer. Descending order
 * inverts the keys (NaN then comes first). 4-byte and smaller dtypes have
 * 32-bit keys; widening a key to 64 bits keeps its order. */
#ifndef ML_ORDER_KEY_H
#define ML_ORDER_KEY_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define ML_KEY_FN static inline __host__ __device__
#else
#define ML_KEY_FN static inline
#endif

ML_KEY_FN uint32_t ml_order_key_u8(uint8_t x) { return x; }

ML_KEY_FN uint32_t ml_order_key_i32(int32_t x) {
  return (uint32_t)x ^ 0x80000000u;
}

ML_KEY_FN uint64_t ml_order_key_i64(int64_t x) {
  return (uint64_t)x ^ 0x8000000000000000ull;
}

ML_KEY_FN uint32_t ml_order_key_f32(float x) {
  if (x != x) return 0xFFFFFFFFu;
  x += 0.0f; /* -0 becomes +0 */
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}

ML_KEY_FN uint64_t ml_order_key_f64(double x) {
  if (x != x) return 0xFFFFFFFFFFFFFFFFull;
  x += 0.0;
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u ^ ((uint64_t)((int64_t)u >> 63) | 0x8000000000000000ull);
}

/* The value of a float key: +0 for -0, NaN for the largest key. */
ML_KEY_FN float ml_order_key_value_f32(uint32_t k) {
  k = (k >> 31) ? k & 0x7FFFFFFFu : ~k;
  float x;
  memcpy(&x, &k, sizeof x);
  return x;
}

ML_KEY_FN double ml_order_key_value_f64(uint64_t k) {
  k = (k >> 63) ? k & 0x7FFFFFFFFFFFFFFFull : ~k;
  double x;
  memcpy(&x, &k, sizeof x);
  return x;
}

#ifdef __cplusplus
/* The same by overloading, for templates over the dtype (C++ linkage, even
 * when this header is included inside an extern "C" block). */
extern "C++" {
ML_KEY_FN uint32_t ml_order_key(uint8_t x) { return ml_order_key_u8(x); }
ML_KEY_FN uint32_t ml_order_key(int32_t x) { return ml_order_key_i32(x); }
ML_KEY_FN uint64_t ml_order_key(int64_t x) { return ml_order_key_i64(x); }
ML_KEY_FN uint32_t ml_order_key(float x) { return ml_order_key_f32(x); }
ML_KEY_FN uint64_t ml_order_key(double x) { return ml_order_key_f64(x); }
ML_KEY_FN float ml_order_key_value(uint32_t k) {
  return ml_order_key_value_f32(k);
}
ML_KEY_FN double ml_order_key_value(uint64_t k) {
  return ml_order_key_value_f64(k);
}
}
#endif

#endif
