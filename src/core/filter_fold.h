/* The extension of a filter's input past its edges, shared by the CPU
 * backend and the CUDA kernels (static inline, plain C that also compiles
 * as CUDA C++, where the function is __host__ __device__, like
 * order_key.h): both backends read the same input element for every
 * position, whatever the mask's length.
 *
 * Position j of an axis of n > 0 samples reads sample ml_filter_fold(j, n,
 * mode), or the constant (cval) where that is -1. The modes are
 * scipy.ndimage's, each a periodic extension (repeated reflection for
 * masks longer than the input, as SciPy's one-dimensional filters do):
 *   REFLECT   d c b a | a b c d | d c b a   period 2n  (signal's "symm")
 *   CONSTANT  k k k k | a b c d | k k k k   (signal's "fill")
 *   NEAREST   a a a a | a b c d | d d d d
 *   MIRROR    d c b   | a b c d | c b a     period 2n - 2, a when n = 1
 *   WRAP      a b c d | a b c d | a b c d   period n  (signal's "wrap") */
#ifndef ML_FILTER_FOLD_H
#define ML_FILTER_FOLD_H

#include <stdint.h>

#ifdef __CUDACC__
#define ML_FOLD_FN static inline __host__ __device__
#else
#define ML_FOLD_FN static inline
#endif

typedef enum {
  ML_FILTER_REFLECT, ML_FILTER_CONSTANT, ML_FILTER_NEAREST,
  ML_FILTER_MIRROR, ML_FILTER_WRAP
} ml_filter_mode;

/* j modulo p > 0, in 0..p-1. */
ML_FOLD_FN int64_t ml_filter_mod(int64_t j, int64_t p) {
  int64_t r = j % p;
  return r < 0 ? r + p : r;
}

ML_FOLD_FN int64_t ml_filter_fold(int64_t j, int64_t n, ml_filter_mode mode) {
  if (j >= 0 && j < n) return j;
  switch (mode) {
  case ML_FILTER_CONSTANT:
    return -1;
  case ML_FILTER_NEAREST:
    return j < 0 ? 0 : n - 1;
  case ML_FILTER_WRAP:
    return ml_filter_mod(j, n);
  case ML_FILTER_MIRROR: {
    if (n == 1) return 0;
    int64_t r = ml_filter_mod(j, 2 * n - 2);
    return r < n ? r : 2 * n - 2 - r;
  }
  default: {
    int64_t r = ml_filter_mod(j, 2 * n);
    return r < n ? r : 2 * n - 1 - r;
  }
  }
}

#endif
