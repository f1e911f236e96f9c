/* Filters: scipy.ndimage's correlations and convolutions, scipy.signal's,
 * and moving sums. Validation, result shapes and dtypes, the views the
 * backend's filter area (filter_backend.h) takes, and the offsets that
 * make each library's convention one correlation over an extended input.
 *
 * ndimage (result of x's shape and dtype; integer inputs compute in
 * float64 and are converted back toward zero, as SciPy does): a mask of k
 * samples along an axis with origin o reads positions i + j - k/2 - o,
 * j = 0..k-1 (k/2 rounded down); a convolution reverses the mask and
 * negates the origin, less one for even k. Origins lie in
 * -(k/2)..(k-1)/2. The mask converts to float64.
 *
 * signal (result of the promoted dtype of x and w; integers compute in
 * float64 and convert back): "full" has n + k - 1 samples a dimension,
 * "same" n, "valid" |n - k| + 1, where one operand must be at least as
 * large as the other in every dimension; boundaries "fill" (fillvalue),
 * "symm" (reflect) and "wrap". Both operands are 1-D or both 2-D, and
 * not empty. */
#ifndef ML_FILTER_H
#define ML_FILTER_H

#include "filter_backend.h"

/* The ndimage mode named (reflect, constant, nearest, mirror, wrap, and
 * SciPy's synonyms grid-mirror, grid-constant and grid-wrap); 0 when
 * unknown. */
int ml_filter_mode_parse(const char *name, ml_filter_mode *out);

typedef enum { ML_SIGNAL_FULL, ML_SIGNAL_SAME, ML_SIGNAL_VALID } ml_signal_size;
/* "full", "same", "valid"; 0 when unknown. */
int ml_signal_size_parse(const char *name, ml_signal_size *out);
/* "fill", "symm", "wrap" as the modes CONSTANT, REFLECT, WRAP; 0 when
 * unknown. */
int ml_signal_boundary_parse(const char *name, ml_filter_mode *out);

/* ndimage.correlate or ndimage.convolve (convolve set) of x (1 to 3
 * dimensions) with w (as many), origin[d] per dimension; fft as
 * ml_filter_corr's. op names the operation in errors. */
int ml_ndimage_correlate(const char *op, ml_array *out, const ml_array *x,
                         const ml_array *w, ml_filter_mode mode, double cval,
                         const int64_t *origin, int convolve, int fft);

/* One-dimensional passes along the axes of x (any number of dimensions)
 * in order: masks[d] is NULL (no pass) or a 1-D mask for axis d, with
 * origin[d] and modes[d]; each pass's result is x's dtype, the next
 * pass's input (correlate1d, convolve1d, and the passes of the filters
 * built on them). */
int ml_ndimage_separable(const char *op, ml_array *out, const ml_array *x,
                         const ml_array *const *masks, const int64_t *origin,
                         const ml_filter_mode *modes, double cval,
                         int convolve);

/* Moving sums along axis of x: out[i] = sum of the length positions from
 * i + start, divided by divisor. For window_sum (float results; integers
 * give float64) and ndimage.uniform_filter1d (exact set: x's dtype,
 * integers converted back as ndimage's). */
int ml_moving_sum(const char *op, ml_array *out, const ml_array *x, int axis,
                  int64_t length, int64_t start, double divisor,
                  ml_filter_mode mode, double cval, int keep_dtype);

/* signal.correlate / correlate2d, or convolve / convolve2d. */
int ml_signal_correlate(const char *op, ml_array *out, const ml_array *x,
                        const ml_array *w, ml_signal_size size,
                        ml_filter_mode boundary, double fill, int convolve);

#endif
