/* The convolution area of the backend interface: the sub-table that each
 * backend fills for core/conv.c, the batched multi-channel convolution of
 * deep learning (PyTorch's conv2d, a cross-correlation), and the
 * descriptor its entry takes. */
#ifndef ML_CONV_BACKEND_H
#define ML_CONV_BACKEND_H

#include "backend.h"

/* One convolution, in two spatial dimensions (conv1d comes as h = 1).
 * x, w, bias and y are contiguous, of one float dtype and on one device;
 * the core has checked every size below, so that each is at least 1, fits
 * 32 bits (sizes, strides, padding, dilation) and
 *   oh = (h + 2 pad[0] - dilation[0] (kh - 1) - 1) / stride[0] + 1 >= 1,
 * likewise ow. (The core pads an input itself where PyTorch's padding is
 * not the same on both sides.) */
typedef struct {
  const char *op;        /* "conv2d" or "conv1d": names errors */
  const ml_array *x;     /* n x c x h x w; n >= 1 */
  const ml_array *w;     /* o x c / groups x kh x kw */
  const ml_array *bias;  /* NULL, or o */
  const ml_array *y;     /* n x o x oh x ow, out */
  int64_t groups;        /* divides c and o */
  int64_t stride[2], pad[2], dilation[2]; /* (h, w) */
  int tf32;              /* float32 may use TF32 (where the backend has it) */
} ml_conv_desc;

typedef struct ml_conv_backend {
  /* forward: for every image i, group g (of G = groups; c' = c / G input
   * and o' = o / G output channels a group) and output channel k of it
   * (channel q = g o' + k of y),
   *   y[i][q][p][r] = bias[q] + sum over j < c', a < kh, b < kw of
   *       w[q][j][a][b] x[i][g c' + j][p s0 - pad0 + a d0][r s1 - pad1 + b d1]
   * where an x outside 0..h-1 x 0..w-1 counts as zero (the padding) and
   * (s, d) are stride and dilation. The sum in the dtype, in any order and
   * with fused multiply-adds; float32 products may round their inputs to
   * TF32 only when c->tf32 is set. Every element of y is written. */
  int (*forward)(const ml_conv_desc *c);
} ml_conv_backend;

/* Registers a backend's table (every entry filled, else an error naming
 * the missing one), and looks up the table of a device. */
int ml_conv_backend_register(ml_device_kind kind, const ml_conv_backend *t);
int ml_conv_backend_get(ml_device device, const ml_conv_backend **out);

#endif
