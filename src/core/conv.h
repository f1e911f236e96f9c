/* The batched multi-channel convolution of deep learning with PyTorch's
 * semantics (torch.nn.functional.conv1d and conv2d): a cross-correlation
 * of x, N x C x H x W (conv1d: N x C x L), with w, O x C/groups x kH x kW
 * (O x C/groups x kL), into N x O x OH x OW, where
 *   OH = floor((H + 2 p - d (kH - 1) - 1) / s) + 1
 * for padding p, dilation d and stride s along H, likewise along W. x
 * without its batch dimension (C x H x W; C x L) gives a result without
 * it. Padding is explicit (zeros on both sides), "valid" (none) or
 * "same" (stride 1 only: d (k - 1) zeros, the extra one of an odd count
 * after the input, as PyTorch puts it). groups splits the channels: input
 * channels g C/groups .. (g + 1) C/groups - 1 feed output channels g
 * O/groups .. (g + 1) O/groups - 1. bias (a vector of O) adds to each
 * output channel.
 *
 * x, w and bias have one dtype, float32 or float64 (the result's), and
 * one device; they may be any views. An empty batch gives an empty
 * result; any other empty dimension, an input smaller than the dilated
 * kernel after padding, sizes of 2^31 or more (one image, the kernel,
 * stride, padding, dilation) and every mismatch of shapes are errors that
 * name the operation and the shapes. tf32 lets a GPU compute float32 with
 * TF32 tensor cores (10-bit mantissas in the products); off, float32 is
 * computed with float32 fused multiply-adds. */
#ifndef ML_CONV_H
#define ML_CONV_H

#include "array.h"

typedef enum {
  ML_CONV_PAD_EXPLICIT, /* padding[] zeros on both sides */
  ML_CONV_PAD_VALID,    /* none */
  ML_CONV_PAD_SAME      /* the output has the input's size (stride 1) */
} ml_conv_padding;

typedef struct {
  int dims;                 /* spatial dimensions: 1 (conv1d) or 2 */
  int64_t stride[2], padding[2], dilation[2]; /* the first dims used */
  ml_conv_padding mode;
  int64_t groups;
  const ml_array *bias;     /* NULL: none */
  int tf32;
} ml_conv_opts;

int ml_conv(ml_array *out, const ml_array *x, const ml_array *w,
            const ml_conv_opts *o);

#endif
