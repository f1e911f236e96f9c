/* The filter area of the backend interface: the sub-table that each
 * backend fills for core/filter.c (scipy.ndimage's and scipy.signal's
 * correlations and convolutions, and moving sums), and the descriptors its
 * entries take.
 *
 * Every entry sees three-dimensional arrays, n0 x n1 x n2: the core views
 * one- and two-dimensional inputs, and the lines of an axis of any array,
 * so (1 x 1 x n, 1 x n0 x n1, outer x n x inner). in and out are
 * contiguous, of one float dtype (float32 or float64), on one device, and
 * never overlap; in is not empty (out may be). Masks are contiguous float64
 * arrays on that device, with no empty dimension. Positions past the edges
 * of in read the extension of filter_fold.h, per axis; a position that
 * folds to -1 on any axis reads cval.
 *
 * Accuracy. The CPU sums in double in the mask's C order, as
 * scipy.ndimage does, and rounds once to the dtype. A GPU may sum float32
 * in float32, with the mask rounded to float32, in any order and with
 * fused multiply-adds: for K taps the result then errs by at most
 * (K + 2) 2^-24 sum |w x|. For masks of many taps it may instead
 * correlate through FFTs, whose error is bounded by a small multiple of
 * u log2(N) |w|_2 |x|_2 (u the dtype's unit roundoff, N the transform's
 * size), not elementwise; float64 errs likewise with u = 2^-53. */
#ifndef ML_FILTER_BACKEND_H
#define ML_FILTER_BACKEND_H

#include "backend.h"
#include "filter_fold.h"

/* correlate: for every position i = (i0, i1, i2) of out,
 *   out[i] = sum over k of w[k] ext(in)[i + k + start]
 * with w = mask, or the mask reversed along every axis under flip. */
typedef struct {
  const ml_array *out;  /* o0 x o1 x o2 */
  const ml_array *in;   /* n0 x n1 x n2 */
  const ml_array *mask; /* k0 x k1 x k2 */
  int flip;
  int64_t start[3];
  ml_filter_mode mode;
  double cval;
  int fft; /* through FFTs: -1 where faster, 0 never, 1 where the backend
            * has them (the CUDA one) */
} ml_filter_corr;

/* separable: up to two passes over in, one along axis 1 then one along
 * axis 2, each with a one-dimensional mask (NULL: no pass, but at least
 * one is there), its own start and its own mode:
 *   t[i0][i1][i2] = sum_k w1[k] ext(in)[i0][i1 + k + start[0]][i2]
 *   out[i0][i1][i2] = sum_k w2[k] ext(t)[i0][i1][i2 + k + start[1]]
 * the result of the first pass rounded to the dtype, as scipy.ndimage's
 * passes write their output array, and extended as an input is. in and
 * out have one shape; flip reverses both masks. */
typedef struct {
  const ml_array *out, *in;
  const ml_array *mask[2];
  int64_t start[2];
  ml_filter_mode mode[2];
  double cval;
  int flip;
} ml_filter_sep;

/* box: moving sums along axis 1, in and out of one shape:
 *   out[i0][i1][i2] = (sum_{k < length} ext(in)[i0][i1 + k + start][i2])
 *                     / divisor
 * summed in double, divided in double and rounded once. The cost per
 * output does not grow with length: a running sum restarted at least
 * every max(2^16, length) outputs, or differences of prefix sums over
 * stretches of at most 4096 + length samples, so that the sum errs by at
 * most (length + 2^17) 2^-53 times the sum of |x| over the stretch. */
typedef struct {
  const ml_array *out, *in;
  int64_t length, start; /* length >= 1 */
  double divisor;
  ml_filter_mode mode;
  double cval;
} ml_filter_box;

typedef struct ml_filter_backend {
  int (*correlate)(const ml_filter_corr *f);
  int (*separable)(const ml_filter_sep *f);
  int (*box)(const ml_filter_box *f);
} ml_filter_backend;

/* Registers a backend's table (every entry filled, else an error naming
 * the missing one), and looks up the table of a device. */
int ml_filter_backend_register(ml_device_kind kind,
                               const ml_filter_backend *t);
int ml_filter_backend_get(ml_device device, const ml_filter_backend **out);

#endif
