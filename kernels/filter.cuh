/* What the filter kernels (filter.cu) and the files it hands work to
 * (filter_fft.cu, filter_reg.cu, filter_line.cu, filter_strip.cu,
 * filter_box.cu) share: one correlation over raw device pointers, the
 * form every entry of the filter area takes once its arrays are
 * unpacked. */
#ifndef ML_CUDA_FILTER_CUH
#define ML_CUDA_FILTER_CUH

#include "device.cuh"

/* out (o0 x o1 x o2) = the correlation of in (n0 x n1 x n2) with mask
 * (k0 x k1 x k2 float64 on the device, reversed along every axis under
 * flip) over in's extension by mode, read from start (filter_backend.h's
 * ml_filter_corr); in and out contiguous, of the dtype T of the launcher
 * that takes the plan. */
struct filter_plan {
  const void *in;
  void *out;
  const double *mask;
  int64_t n[3], o[3], k[3], start[3];
  ml_filter_mode mode;
  double cval;
  int flip;
  int fft; /* ml_filter_corr's */
};

/* The float32 plane and extension that the register kernels
 * (filter_reg.cu, filter_line.cu) take, their arguments' common part:
 * plan_args(p) fills it from a plan (vec_out: 16-byte stores of whole
 * output rows). */
struct plane_args {
  const float *in;
  float *out;
  int64_t n0, n1, n2, o1, o2, s0, s1, s2;
  int mode, vec_out;
  float cval;
};

static inline plane_args plan_args(const filter_plan *p) {
  plane_args a;
  a.in = (const float *)p->in;
  a.out = (float *)p->out;
  a.n0 = p->n[0], a.n1 = p->n[1], a.n2 = p->n[2];
  a.o1 = p->o[1], a.o2 = p->o[2];
  a.s0 = p->start[0], a.s1 = p->start[1], a.s2 = p->start[2];
  a.mode = (int)p->mode;
  a.cval = (float)p->cval;
  a.vec_out = (uintptr_t)p->out % 16 == 0 && p->o[2] % 4 == 0;
  return a;
}

/* The taps (k0 k1 k2) from which a correlation goes through cuFFT rather
 * than through the direct kernels when the caller leaves it to us (fft
 * -1), per dtype: the first square mask for which the FFT was faster on
 * 4096^2 inputs on an H200 (scripts/bench/filter_fft.lua, which times
 * both through ndimage.correlate's fft option). */
#define FILTER_FFT_MIN_TAPS_F32 784
#define FILTER_FFT_MIN_TAPS_F64 1024

/* The correlation of p through FFTs (filter_fft.cu), for float (f32) or
 * double; ML_ENOMEM when the transforms' memory cannot be had or their
 * sizes do not suit cuFFT, so that the caller takes the direct path. */
int filter_fft(cuda_dev *d, const filter_plan *p, int f32);

/* Whether filter_reg (filter_reg.cu) takes p, float32: one plane of mask,
 * a row of 3 to 9 taps, a column of 3, 5, 7, 9, 15, 31 or 33, or a square
 * of 3 to 7, over rows of a multiple of 4 samples, 16-byte aligned. */
bool filter_reg_fits(const filter_plan *p);
int filter_reg(cuda_dev *d, const filter_plan *p);

/* The correlation of p (float32, one row of mask: k0 = k1 = 1, k2 = 3,
 * 5, 7, 9, 15, 31 or 33) through filter_line.cu's segments of long rows. */
int filter_line(cuda_dev *d, const filter_plan *p);

/* Whether filter_strip (filter_strip.cu) takes f: float32, two passes
 * with masks of one size, 3, 5, 9, 17, 25 or 33 taps, on the CPU (it
 * takes them in its arguments). */
bool filter_strip_fits(const ml_filter_sep *f);
int filter_strip(cuda_dev *d, const ml_filter_sep *f);

/* The filter area's box entry (filter_box.cu). */
int cuda_filter_box(const ml_filter_box *f);

#endif
