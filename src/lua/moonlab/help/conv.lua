-- Help entries: the convolution of deep learning (conv1d, conv2d).
local function options(pair)
  return {
    {name = "stride", type = "integer|table", default = "1",
     doc = "the step between windows: an integer or " .. pair},
    {name = "padding", type = "integer|table|string", default = "0",
     doc = "zeros on both sides: an integer, " .. pair
           .. ', "valid" (none) or "same" (stride 1 only)'},
    {name = "dilation", type = "integer|table", default = "1",
     doc = "the step between a window's taps: an integer or " .. pair},
    {name = "groups", type = "integer", default = "1",
     doc = "channel groups, dividing C and O: each sees C/groups input "
           .. "channels"},
    {name = "bias", type = "array", default = "none",
     doc = "a vector of O added to each output channel"},
    {name = "tf32", type = "boolean", default = "false",
     doc = "on a GPU, float32 may use TF32 tensor cores (10-bit "
           .. "mantissas in the products)"},
  }
end

return {
  title = "Convolution layers",
  intro = [[
The batched multi-channel convolution of deep learning, with PyTorch's
semantics (torch.nn.functional.conv1d and conv2d): a cross-correlation
of a batch of images x, N x C x H x W (conv1d: N x C x L), with O
filters w, O x C/groups x kH x kW, into N x O x OH x OW, where OH =
floor((H + 2 padding - dilation (kH - 1) - 1) / stride) + 1, likewise
OW. x and w (and bias) have one dtype, float32 or float64, and one
device; any views are accepted. im2col and OpenBLAS's GEMM compute on
the CPU, cuDNN on a GPU (its fastest algorithm for the shape, measured
on first use; float32 in full FP32 unless tf32 is set). An empty batch
gives an empty result; any other empty dimension, an input smaller than
the dilated kernel after padding, and every mismatch of shapes, dtypes
or devices is an error naming the function and the shapes. For
SciPy's filters see ml.convolve and ml.ndimage.]],
  entries = {
    {
      name = "conv2d",
      usage = {"ml.conv2d(x, w [, opts])"},
      doc = [[
The 2-D convolution of x, N x C x H x W or one image C x H x W, with w,
O x C/groups x kH x kW: y[n][o][i][j] = bias[o] + the sum over channels
c of o's group and taps a, b of w[o][c][a][b] x[n][c][i s + a d - p][j
s + b d - p] (stride s, dilation d, padding p along each dimension; x
is zero outside). stride, padding and dilation are an integer or a pair
{along H, along W}. padding "same" keeps the input's size (stride 1
only): d (k - 1) zeros, the odd one after the input, as PyTorch; "valid"
is none. groups splits C and O into that many groups (groups = C:
depthwise).]],
      options = options("a pair {h, w}"),
      returns = "a new N x O x OH x OW array (O x OH x OW for one image) "
                .. "of x's dtype, on its device.",
      example = [[
local x = ml.arange(16, {dtype = "float64"}):reshape(1, 1, 4, 4)
local w = ml.ones(1, 1, 2, 2)
local y = ml.conv2d(x, w)
print(y.shape[3], y.shape[4], y[{1, 1, 1, 1}])  --> 3 3 10.0
local b = ml.array({100.0})
y = ml.conv2d(x, w, {stride = 2, padding = 1, bias = b})
print(y.shape[3], y[{1, 1, 1, 1}], y[{1, 1, 2, 2}])  --> 3 100.0 130.0]],
    },
    {
      name = "conv1d",
      usage = {"ml.conv1d(x, w [, opts])"},
      doc = [[
The 1-D convolution of x, N x C x L or one signal C x L, with w, O x
C/groups x kL: conv2d's with H = 1. stride, padding and dilation are an
integer or a table of one.]],
      options = options("a table of one"),
      returns = "a new N x O x OL array (O x OL for one signal) of x's "
                .. "dtype, on its device.",
      example = [[
local s = ml.array({{{1, 2, 3, 4, 5}}}, {dtype = "float64"})
local d = ml.array({{{1, 0, -1}}}, {dtype = "float64"})
local y = ml.conv1d(s, d, {padding = "same"})
print(y.shape[3], y[{1, 1, 1}], y[{1, 1, 3}])  --> 5 -2.0 -2.0]],
    },
  },
}
