/* The one-pass scan of long contiguous float rows (scan_lookback.cu),
 * which reduce.cu's cumsum and cumprod take where it fits. */
#ifndef ML_CUDA_SCAN_CUH
#define ML_CUDA_SCAN_CUH

#include "device.cuh"

/* in and out contiguous float32 or float64, rows of at least four tiles,
 * 16-byte aligned (every row, when there are several). */
bool scan_lookback_fits(const ml_array *out, const ml_array *in);

/* out = the cumulative product (product) or sum of in along its last
 * dimension, accumulated in double. */
int scan_lookback(cuda_dev *d, bool product, const ml_array *out, const ml_array *in);

#endif
