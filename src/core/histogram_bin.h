/* The bin of a value in numpy.histogram's equal bins, shared by the CPU
 * backend and the CUDA kernels (static inline, plain C that also compiles
 * as CUDA C++, where the functions are __host__ __device__, as in
 * order_key.h), so that both backends put every value in the same bin.
 *
 * As NumPy computes it in the edges' dtype: i = trunc(((x - lo) / denom)
 * * nbins), every operation rounded to the dtype; i = nbins (x = hi) goes
 * to the last bin; then, as the arithmetic can be an ulp off at an edge,
 * i moves down by one where x < edges[i] and up by one where x >=
 * edges[i + 1] (never past the last bin, which is closed). -1: x is
 * outside [lo, hi] or NaN. The caller passes lo = edges[0] and hi =
 * edges[nbins] (a kernel keeps them in registers; from shared memory they
 * would be read again after every shared-memory atomic); denom > 0 and,
 * in the dtype, neither 0 nor so wide that x - lo overflows (the core
 * checks). f is clamped to [0, nbins] before the conversion all the same,
 * so that no input can convert NaN or infinity or index past the edges. */
#ifndef ML_HISTOGRAM_BIN_H
#define ML_HISTOGRAM_BIN_H

#include <stdint.h>

#ifdef __CUDACC__
#define ML_BIN_FN static inline __host__ __device__
#else
#define ML_BIN_FN static inline
#endif

ML_BIN_FN int64_t ml_histogram_bin_f32(float x, const float *edges, int64_t nbins,
                                       float lo, float hi, float denom) {
  if (!(x >= lo && x <= hi)) return -1;
  float f = ((x - lo) / denom) * (float)nbins;
  if (!(f < (float)nbins)) f = (float)nbins; /* NaN or inf too: never an index past the edges */
  if (!(f > 0)) f = 0;
  int64_t i = (int64_t)f;
  if (i >= nbins) i = nbins - 1;
  if (x < edges[i])
    i--;
  else if (i != nbins - 1 && x >= edges[i + 1])
    i++;
  return i;
}

ML_BIN_FN int64_t ml_histogram_bin_f64(double x, const double *edges, int64_t nbins,
                                       double lo, double hi, double denom) {
  if (!(x >= lo && x <= hi)) return -1;
  double f = ((x - lo) / denom) * (double)nbins;
  if (!(f < (double)nbins)) f = (double)nbins; /* NaN or inf too: never an index past the edges */
  if (!(f > 0)) f = 0;
  int64_t i = (int64_t)f;
  if (i >= nbins) i = nbins - 1;
  if (x < edges[i])
    i--;
  else if (i != nbins - 1 && x >= edges[i + 1])
    i++;
  return i;
}

#endif
