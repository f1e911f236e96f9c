/* Element functions whose results must agree bit for bit between the CPU
 * backend and the CUDA kernels: wrapping integer arithmetic, floor
 * division, modulo and power with Python's sign rules, NumPy's float
 * divmod, and the reading of an entry of an index array. static inline,
 * plain C that also compiles as CUDA C++ (where the functions are
 * __host__ __device__), like philox.h.
 *
 * Integers of every dtype compute in int64 and narrow on store, which
 * wraps; unsigned arithmetic keeps int64 overflow defined. Floats compute
 * in double (fmod is exact) and round on store. */
#ifndef ML_SCALAR_MATH_H
#define ML_SCALAR_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ML_SCALAR_FN static inline __host__ __device__
#else
#define ML_SCALAR_FN static inline
#endif

ML_SCALAR_FN int64_t ml_add_int(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

ML_SCALAR_FN int64_t ml_sub_int(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a - (uint64_t)b);
}

ML_SCALAR_FN int64_t ml_mul_int(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a * (uint64_t)b);
}

ML_SCALAR_FN int64_t ml_neg_int(int64_t a) { return ml_sub_int(0, a); }

ML_SCALAR_FN int64_t ml_abs_int(int64_t a) { return a < 0 ? ml_neg_int(a) : a; }

/* Division by zero gives 0, as NumPy's integer floor division does. */
ML_SCALAR_FN int64_t ml_idiv_int(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return ml_neg_int(a); /* INT64_MIN / -1 would trap */
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

ML_SCALAR_FN int64_t ml_mod_int(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

/* A negative exponent gives 0, except for the bases 1 and -1 (the core
 * refuses negative integer exponents, as NumPy; this keeps the backends'
 * result defined all the same). */
ML_SCALAR_FN int64_t ml_pow_int(int64_t a, int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = (uint64_t)a;
  for (; e; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return (int64_t)r;
}

/* An entry i of an index array (1-based; negative counts from the end, -1
 * being the last) into a dimension of the given size, as a 0-based index.
 * Out of range (0, above size, below -size) gives a value >= size: one
 * unsigned comparison checks it. Unsigned arithmetic keeps INT64_MIN
 * defined. */
ML_SCALAR_FN uint64_t ml_index_base0(int64_t i, int64_t size) {
  return i < 0 ? (uint64_t)i + (uint64_t)size : (uint64_t)i - 1;
}

/* Float floor division and modulo as NumPy's npy_divmod. */
ML_SCALAR_FN double ml_mod_float(double a, double b) {
  double m = fmod(a, b);
  if (b == 0) return m;
  if (m == 0) return copysign(0.0, b);
  return (b < 0) != (m < 0) ? m + b : m;
}

ML_SCALAR_FN double ml_idiv_float(double a, double b) {
  if (b == 0) return a / b;
  double m = fmod(a, b), d = (a - m) / b;
  if (m != 0 && (b < 0) != (m < 0)) d -= 1.0;
  if (d == 0) return copysign(0.0, a / b);
  double f = floor(d);
  return d - f > 0.5 ? f + 1.0 : f;
}

#endif
