/* Convolution on the GPU (contract in core/conv_backend.h): cuDNN's
 * forward convolution, on the device's stream, with workspace from the
 * caching allocator (cuda_scratch).
 *
 * CPU reference: src/cpu/cpu_conv.c (im2col and OpenBLAS's GEMM).
 *
 * One cuDNN handle per device, made on first use, bound to the device's
 * stream. The algorithm for a shape (with its dtype, options and device)
 * is measured once, by cudnnFindConvolutionForwardAlgorithmEx on the
 * call's own arrays and a workspace of up to FIND_WORKSPACE, and kept in a
 * small cache of plans; every call then runs cudnnConvolutionForward with
 * it, and cudnnAddTensor adds the bias. float32 runs under CUDNN_FMA_MATH
 * (full FP32: cuDNN's default math lets Ampere and later GPUs use TF32)
 * and keeps only algorithms measured under it, unless tf32 is set;
 * float64 under the default math. cuDNN's tensor descriptors take int
 * sizes and strides, so a batch whose x or y would reach 2^31 elements
 * goes in chunks of images (the core keeps one image below that). */
#include <cudnn.h>
#include <limits.h>
#include <string.h>

#include "scratch.cuh"

/* The most workspace the algorithm search may offer (bytes). */
#define FIND_WORKSPACE ((size_t)1 << 30)
/* Plans kept, the oldest replaced first. */
#define PLANS 64

static int dnn_check(cudnnStatus_t st, const char *op) {
  if (st == CUDNN_STATUS_SUCCESS) return ML_OK;
  if (st == CUDNN_STATUS_ALLOC_FAILED)
    return ml_fail(ML_ENOMEM, "cuda: out of memory in %s (cuDNN)", op);
  return ml_fail(ML_EDEVICE, "cuda: %s in %s", cudnnGetErrorString(st), op);
}

/* The device's cuDNN handle (d current), made on first use. */
static int dnn_handle(cuda_dev *d, cudnnHandle_t *out) {
  if (!d->dnn) {
    const char *op = "creating the cuDNN handle";
    cudnnHandle_t h;
    int rc = dnn_check(cudnnCreate(&h), op);
    if (rc) return rc;
    rc = dnn_check(cudnnSetStream(h, d->stream), op);
    if (rc) {
      cudnnDestroy(h);
      return rc;
    }
    d->dnn = h;
  }
  *out = (cudnnHandle_t)d->dnn;
  return ML_OK;
}

/* What a plan is for: n images of the convolution c, with the
 * alignment of its arrays (up to 256 bytes: an algorithm measured on
 * aligned arrays may need it), every field an int64 so that keys compare
 * as bytes. */
struct plan_key {
  int64_t device, dtype, tf32, align, n, c, h, w, o, cg, kh, kw, groups;
  int64_t stride[2], pad[2], dilation[2];
};

struct plan {
  plan_key key;
  cudnnConvolutionFwdAlgo_t algo;
  cudnnMathType_t math;
  size_t workspace;
};

static plan plans[PLANS];
static int nplans, next_plan;

static plan_key key_of(const ml_conv_desc *c, int64_t n, const void *x,
                       const void *y) {
  plan_key k;
  memset(&k, 0, sizeof k);
  k.device = array_device(c->x);
  k.dtype = c->x->dtype;
  k.tf32 = c->tf32 != 0;
  uintptr_t bits = (uintptr_t)x | (uintptr_t)y | (uintptr_t)256 |
                   (uintptr_t)ml_array_data(c->w) |
                   (c->bias ? (uintptr_t)ml_array_data(c->bias) : 0);
  k.align = (int64_t)(bits & (~bits + 1));
  k.n = n;
  k.c = c->x->shape[1];
  k.h = c->x->shape[2];
  k.w = c->x->shape[3];
  k.o = c->w->shape[0];
  k.cg = c->w->shape[1];
  k.kh = c->w->shape[2];
  k.kw = c->w->shape[3];
  k.groups = c->groups;
  for (int i = 0; i < 2; i++) {
    k.stride[i] = c->stride[i];
    k.pad[i] = c->pad[i];
    k.dilation[i] = c->dilation[i];
  }
  return k;
}

/* The descriptors of n images of c, freed with the struct. */
struct descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  descriptors() = default;
  descriptors(const descriptors &) = delete;
  descriptors &operator=(const descriptors &) = delete;
  ~descriptors() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
  /* The math type starts as the one the search runs under. */
  int make(const ml_conv_desc *c, int64_t n) {
    const char *op = c->op;
    const int64_t *xs = c->x->shape, *ws = c->w->shape, *ys = c->y->shape;
    cudnnDataType_t t =
        c->x->dtype == ML_FLOAT32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    int rc = dnn_check(cudnnCreateTensorDescriptor(&x), op);
    if (!rc) rc = dnn_check(cudnnCreateTensorDescriptor(&y), op);
    if (!rc) rc = dnn_check(cudnnCreateFilterDescriptor(&w), op);
    if (!rc) rc = dnn_check(cudnnCreateConvolutionDescriptor(&conv), op);
    if (!rc)
      rc = dnn_check(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, t,
                                                (int)n, (int)xs[1],
                                                (int)xs[2], (int)xs[3]),
                     op);
    if (!rc)
      rc = dnn_check(cudnnSetFilter4dDescriptor(w, t, CUDNN_TENSOR_NCHW,
                                                (int)ws[0], (int)ws[1],
                                                (int)ws[2], (int)ws[3]),
                     op);
    if (!rc)
      rc = dnn_check(cudnnSetConvolution2dDescriptor(
                         conv, (int)c->pad[0], (int)c->pad[1],
                         (int)c->stride[0], (int)c->stride[1],
                         (int)c->dilation[0], (int)c->dilation[1],
                         CUDNN_CROSS_CORRELATION, t),
                     op);
    if (!rc)
      rc = dnn_check(cudnnSetConvolutionGroupCount(conv, (int)c->groups),
                     op);
    if (!rc)
      rc = dnn_check(cudnnSetConvolutionMathType(conv, search_math(c)), op);
    if (!rc)
      rc = dnn_check(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, t,
                                                (int)n, (int)ys[1],
                                                (int)ys[2], (int)ys[3]),
                     op);
    if (!rc && c->bias) {
      rc = dnn_check(cudnnCreateTensorDescriptor(&bias), op);
      if (!rc)
        rc = dnn_check(cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, t,
                                                  1, (int)ys[1], 1, 1),
                       op);
    }
    int dims[4];
    if (!rc)
      rc = dnn_check(cudnnGetConvolution2dForwardOutputDim(
                         conv, x, w, &dims[0], &dims[1], &dims[2], &dims[3]),
                     op);
    if (!rc && (dims[0] != n || dims[1] != ys[1] || dims[2] != ys[2] ||
                dims[3] != ys[3]))
      rc = ml_fail(ML_EDEVICE, "cuda: cuDNN's %s output %dx%dx%dx%d is not "
                   "%lldx%lldx%lldx%lld", op, dims[0], dims[1], dims[2],
                   dims[3], (long long)n, (long long)ys[1], (long long)ys[2],
                   (long long)ys[3]);
    return rc;
  }
  /* Full FP32 for float32 unless TF32 is allowed. */
  static cudnnMathType_t search_math(const ml_conv_desc *c) {
    return c->x->dtype == ML_FLOAT32 && !c->tf32 ? CUDNN_FMA_MATH
                                                 : CUDNN_DEFAULT_MATH;
  }
};

/* Whether a measured algorithm may serve c: it ran, within the workspace
 * offered, and for full FP32 on no tensor cores. */
static bool usable(const ml_conv_desc *c,
                   const cudnnConvolutionFwdAlgoPerf_t &p, size_t offered) {
  if (p.status != CUDNN_STATUS_SUCCESS || p.memory > offered) return false;
  return descriptors::search_math(c) != CUDNN_FMA_MATH ||
         (p.mathType != CUDNN_TENSOR_OP_MATH &&
          p.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
}

/* The plan for n images of c: from the cache, or measured on x, w and y
 * (which it overwrites) and added to the cache. Its math type is the
 * measured one, except that full FP32 stays CUDNN_FMA_MATH, under which
 * it was measured. The fallback, when no measured algorithm qualifies, is
 * the implicit GEMM, which every convolution supports. */
static int plan_for(cuda_dev *d, cudnnHandle_t h, const ml_conv_desc *c,
                    const descriptors &ds, int64_t n, const void *x,
                    const void *w, void *y, plan *out) {
  plan_key k = key_of(c, n, x, y);
  for (int i = 0; i < nplans; i++)
    if (memcmp(&plans[i].key, &k, sizeof k) == 0) {
      *out = plans[i];
      return ML_OK;
    }
  size_t offered = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; a++) {
    size_t s;
    if (cudnnGetConvolutionForwardWorkspaceSize(
            h, ds.x, ds.w, ds.conv, ds.y, (cudnnConvolutionFwdAlgo_t)a, &s) ==
            CUDNN_STATUS_SUCCESS &&
        s <= FIND_WORKSPACE && s > offered)
      offered = s;
  }
  cuda_scratch ws;
  if (ws.get(d->index, offered, c->op) != ML_OK) offered = 0;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  int rc = dnn_check(cudnnFindConvolutionForwardAlgorithmEx(
                         h, ds.x, x, ds.w, w, ds.conv, ds.y, y,
                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf,
                         ws.ptr, offered),
                     c->op);
  if (rc) return rc;
  plan p;
  p.key = k;
  p.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  p.math = descriptors::search_math(c);
  p.workspace = 0;
  int best = -1;
  for (int i = 0; i < found && best < 0; i++)
    if (usable(c, perf[i], offered)) best = i;
  if (best >= 0) {
    p.algo = perf[best].algo;
    if (p.math != CUDNN_FMA_MATH) p.math = perf[best].mathType;
    p.workspace = perf[best].memory;
  } else {
    rc = dnn_check(cudnnGetConvolutionForwardWorkspaceSize(
                       h, ds.x, ds.w, ds.conv, ds.y, p.algo, &p.workspace),
                   c->op);
    if (rc) return rc;
  }
  plans[next_plan] = p;
  next_plan = (next_plan + 1) % PLANS;
  if (nplans < PLANS) nplans++;
  *out = p;
  return ML_OK;
}

/* y = conv(x, w) + bias for n images from x and into y. */
static int forward_images(cuda_dev *d, cudnnHandle_t h, const ml_conv_desc *c,
                          int64_t n, const void *x, void *y) {
  descriptors ds;
  plan p;
  const void *w = ml_array_data(c->w);
  int rc = ds.make(c, n);
  if (!rc) rc = plan_for(d, h, c, ds, n, x, w, y, &p);
  if (!rc) rc = dnn_check(cudnnSetConvolutionMathType(ds.conv, p.math), c->op);
  cuda_scratch ws;
  if (!rc) rc = ws.get(d->index, p.workspace, c->op);
  if (rc) return rc;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  bool f32 = c->x->dtype == ML_FLOAT32;
  const void *one = f32 ? (const void *)&one_f : (const void *)&one_d;
  const void *zero = f32 ? (const void *)&zero_f : (const void *)&zero_d;
  rc = dnn_check(cudnnConvolutionForward(h, one, ds.x, x, ds.w, w, ds.conv,
                                         p.algo, ws.ptr, p.workspace, zero,
                                         ds.y, y),
                 c->op);
  if (!rc && c->bias)
    rc = dnn_check(cudnnAddTensor(h, one, ds.bias, ml_array_data(c->bias),
                                  one, ds.y, y),
                   c->op);
  return rc;
}

static int conv_forward(const ml_conv_desc *c) {
  cuda_dev *d;
  cudnnHandle_t h;
  int rc = cuda_enter(array_device(c->x), &d);
  if (!rc) rc = dnn_handle(d, &h);
  if (rc) return rc;
  const int64_t *xs = c->x->shape, *ys = c->y->shape;
  int64_t n = xs[0], in = xs[1] * xs[2] * xs[3], out = ys[1] * ys[2] * ys[3];
  int64_t most = INT_MAX / (in > out ? in : out);
  size_t es = ml_dtype_size(c->x->dtype);
  const char *x = (const char *)ml_array_data(c->x);
  char *y = (char *)ml_array_data(c->y);
  for (int64_t i = 0; !rc && i < n; i += most) {
    int64_t m = n - i < most ? n - i : most;
    rc = forward_images(d, h, c, m, x + i * in * es, y + i * out * es);
  }
  return rc;
}

const ml_conv_backend cuda_conv_backend = {conv_forward};
