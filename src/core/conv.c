/* Batched multi-channel convolution: validation, result shapes and
 * PyTorch's padding rules; the backend's conv area (conv_backend.h)
 * computes.
 *
 * Both cases reach the backend in two spatial dimensions: conv1d's x
 * N x C x L as N x C x 1 x L and its w O x C' x kL as O x C' x 1 x kL, with
 * stride, dilation 1 and no padding along the added dimension; an x
 * without its batch dimension as a batch of one. Padding "same" puts
 * d (k - 1) zeros around a dimension; when that is odd, PyTorch pads the
 * input with the extra zero after its end and then pads both sides
 * alike, and so does ml_conv, on a zero-filled copy of x one element
 * longer there. */
#include "conv.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conv_backend.h"
#include "copy.h"
#include "status.h"
#include "view.h"

static const char *const conv_entries[] = {"forward"};
#define NENTRIES (sizeof conv_entries / sizeof *conv_entries)
_Static_assert(offsetof(ml_conv_backend, forward) +
                       NENTRIES * sizeof(void (*)(void)) ==
                   sizeof(ml_conv_backend),
               "conv_entries names every function of ml_conv_backend");

static ml_backend_area conv_area = {"conv", conv_entries, NENTRIES,
                                    offsetof(ml_conv_backend, forward),
                                    {NULL}};

int ml_conv_backend_register(ml_device_kind kind, const ml_conv_backend *t) {
  return ml_backend_area_register(&conv_area, kind, t);
}

int ml_conv_backend_get(ml_device device, const ml_conv_backend **out) {
  return ml_backend_area_get(&conv_area, device, (const void **)out);
}

/* What the checks work out, in the backend's two dimensions (h, w). */
typedef struct {
  const char *op;
  int batched;
  int64_t n, c, h, w;            /* x as 4-D */
  int64_t o, cg, kh, kw;         /* w as 4-D */
  int64_t stride[2], dilation[2];
  int64_t lo[2], hi[2];          /* zeros before and after the input */
  int64_t oh, ow;
} plan;

/* a b, or INT64_MAX when that overflows (a, b >= 0). */
static int64_t mul_sat(int64_t a, int64_t b) {
  return a != 0 && b > INT64_MAX / a ? INT64_MAX : a * b;
}

static const char *shape_of(const ml_array *a, char *buf) {
  return ml_shape_str(a->ndim, a->shape, buf, ML_SHAPE_STR_MAX);
}

/* An option's values as the user gave them (dims of them), "2x1" or "3". */
static const char *values(int dims, const int64_t *v, char *buf) {
  return ml_shape_str(dims, v, buf, ML_SHAPE_STR_MAX);
}

/* Ranks, devices and dtypes of x, w and bias. */
static int check_operands(const char *op, int dims, const ml_array *x,
                          const ml_array *w, const ml_array *bias) {
  char s[ML_SHAPE_STR_MAX];
  if (x->ndim != dims + 1 && x->ndim != dims + 2)
    return ml_fail(ML_EINVAL, "%s: x must be %s, got shape %s", op,
                   dims == 1 ? "N x C x L or C x L"
                             : "N x C x H x W or C x H x W",
                   shape_of(x, s));
  if (w->ndim != dims + 2)
    return ml_fail(ML_EINVAL, "%s: w must be %s, got shape %s", op,
                   dims == 1 ? "O x C/groups x kL" : "O x C/groups x kH x kW",
                   shape_of(w, s));
  int rc = ml_check_same_device(op, x, w);
  if (!rc && bias) rc = ml_check_same_device(op, x, bias);
  if (rc) return rc;
  if (!ml_dtype_is_float(x->dtype))
    return ml_fail(ML_EINVAL, "%s: x has dtype %s; %s takes float32 or float64",
                   op, ml_dtype_name(x->dtype), op);
  if (w->dtype != x->dtype || (bias && bias->dtype != x->dtype))
    return ml_fail(ML_EINVAL, "%s: x is %s but %s is %s (x, w and bias must "
                   "have one dtype)", op, ml_dtype_name(x->dtype),
                   w->dtype != x->dtype ? "w" : "bias",
                   ml_dtype_name(w->dtype != x->dtype ? w->dtype
                                                      : bias->dtype));
  return ML_OK;
}

/* The options' values, each in 1 .. INT32_MAX (padding from 0). */
static int check_options(const char *op, const ml_conv_opts *o) {
  char s[ML_SHAPE_STR_MAX];
  static const char *const names[] = {"stride", "padding", "dilation"};
  const int64_t *v[] = {o->stride, o->padding, o->dilation};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < o->dims; i++) {
      int64_t least = k == 1 ? 0 : 1;
      if (k == 1 && o->mode != ML_CONV_PAD_EXPLICIT) continue;
      if (v[k][i] < least || v[k][i] > INT32_MAX)
        return ml_fail(ML_EINVAL, "%s: %s must be %s, got %s", op, names[k],
                       least ? "at least 1 (and below 2^31)"
                             : "at least 0 (and below 2^31)",
                       values(o->dims, v[k], s));
    }
  if (o->groups < 1 || o->groups > INT32_MAX)
    return ml_fail(ML_EINVAL, "%s: groups must be at least 1 (and below "
                   "2^31), got %lld", op, (long long)o->groups);
  for (int i = 0; i < o->dims; i++)
    if (o->mode == ML_CONV_PAD_SAME && o->stride[i] != 1)
      return ml_fail(ML_EINVAL, "%s: padding \"same\" needs stride 1 (as "
                     "PyTorch's), got stride %s", op,
                     values(o->dims, o->stride, s));
  return ML_OK;
}

/* x's and w's sizes as 4-D, and the channels, groups and bias checked
 * against each other. */
static int check_channels(plan *p, const ml_array *x, const ml_array *w,
                          const ml_conv_opts *o) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  const char *op = p->op;
  p->batched = x->ndim == o->dims + 2;
  p->n = p->batched ? x->shape[0] : 1;
  p->c = x->shape[p->batched];
  p->h = o->dims == 2 ? x->shape[x->ndim - 2] : 1;
  p->w = x->shape[x->ndim - 1];
  p->o = w->shape[0];
  p->cg = w->shape[1];
  p->kh = o->dims == 2 ? w->shape[2] : 1;
  p->kw = w->shape[w->ndim - 1];
  if (p->c == 0 || p->h == 0 || p->w == 0)
    return ml_fail(ML_EINVAL, "%s: x %s is empty (only its batch may be)", op,
                   shape_of(x, s1));
  if (ml_array_numel(w) == 0)
    return ml_fail(ML_EINVAL, "%s: w %s is empty", op, shape_of(w, s1));
  if (p->o % o->groups != 0)
    return ml_fail(ML_EINVAL, "%s: groups = %lld does not divide the %lld "
                   "output channels of w %s", op, (long long)o->groups,
                   (long long)p->o, shape_of(w, s1));
  if (mul_sat(p->cg, o->groups) != p->c)
    return ml_fail(ML_EINVAL, "%s: x %s has %lld channels but w %s with "
                   "groups = %lld takes %lld", op, shape_of(x, s1),
                   (long long)p->c, shape_of(w, s2), (long long)o->groups,
                   (long long)mul_sat(p->cg, o->groups));
  const ml_array *b = o->bias;
  if (b && (b->ndim != 1 || b->shape[0] != p->o))
    return ml_fail(ML_EINVAL, "%s: bias must be a vector of the %lld output "
                   "channels of w %s, got shape %s", op, (long long)p->o,
                   shape_of(w, s1), shape_of(b, s2));
  return ML_OK;
}

/* The padding of each side, the output's size, and sizes within 32 bits. */
static int check_sizes(plan *p, const ml_array *x, const ml_array *w,
                       const ml_conv_opts *o) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX], s3[ML_SHAPE_STR_MAX],
      s4[ML_SHAPE_STR_MAX];
  const char *op = p->op;
  int64_t size[2] = {p->h, p->w}, k[2] = {p->kh, p->kw}, out[2];
  int64_t padded[2], span[2];
  int small = 0;
  for (int i = 0; i < 2; i++) {
    int u = o->dims == 2 ? i : i - 1; /* the user's dimension, or -1 */
    p->stride[i] = u < 0 ? 1 : o->stride[u];
    p->dilation[i] = u < 0 ? 1 : o->dilation[u];
    span[i] = p->dilation[i] * (k[i] - 1) + 1;
    if (u < 0 || o->mode == ML_CONV_PAD_VALID)
      p->lo[i] = p->hi[i] = 0;
    else if (o->mode == ML_CONV_PAD_EXPLICIT)
      p->lo[i] = p->hi[i] = o->padding[u];
    else {
      p->lo[i] = (span[i] - 1) / 2;
      p->hi[i] = span[i] - 1 - p->lo[i];
    }
    padded[i] = size[i] + p->lo[i] + p->hi[i];
    if (padded[i] < span[i]) small = 1;
    out[i] = padded[i] < span[i] ? 0
                                 : (padded[i] - span[i]) / p->stride[i] + 1;
  }
  int first = 2 - o->dims;
  if (small)
    return ml_fail(ML_EINVAL, "%s: the padded input (%s) is smaller than "
                   "the dilated kernel (%s): x %s, w %s", op,
                   values(o->dims, padded + first, s1),
                   values(o->dims, span + first, s2), shape_of(x, s3),
                   shape_of(w, s4));
  p->oh = out[0];
  p->ow = out[1];
  for (int i = 0; i < 2; i++)
    if (p->lo[i] > INT32_MAX || span[i] > INT32_MAX)
      return ml_fail(ML_EINVAL, "%s: the dilated kernel (%s) exceeds 2^31",
                     op, values(o->dims, span + first, s1));
  int64_t image = mul_sat(mul_sat(p->c, p->h + p->hi[0] - p->lo[0]),
                          p->w + p->hi[1] - p->lo[1]);
  int64_t result = mul_sat(mul_sat(p->o, p->oh), p->ow);
  if (image > INT32_MAX || result > INT32_MAX ||
      ml_array_numel(w) > INT32_MAX)
    return ml_fail(ML_EINVAL, "%s: x %s and w %s are too large (one image, "
                   "its result and the kernel must each have fewer than "
                   "2^31 elements)", op, shape_of(x, s1), shape_of(w, s2));
  return ML_OK;
}

/* a (contiguous) as n x c x h x w. */
static int as4(const char *op, ml_array *out, const ml_array *a, int64_t n,
               int64_t c, int64_t h, int64_t w) {
  int64_t shape[4] = {n, c, h, w};
  return ml_view_reshape(op, out, a, 4, shape);
}

/* x4 itself, or where the padding is not the same on both sides, a copy
 * with the extra zeros after its end. */
static int pad_after(const plan *p, ml_array *out, const ml_array *x4) {
  int64_t eh = p->hi[0] - p->lo[0], ew = p->hi[1] - p->lo[1];
  if (eh == 0 && ew == 0) {
    ml_array_share(out, x4);
    return ML_OK;
  }
  int64_t shape[4] = {p->n, p->c, p->h + eh, p->w + ew};
  ml_array r = {0}, rows = {0}, inner = {0};
  int rc = ml_full(&r, x4->dtype, 4, shape, ml_array_device(x4),
                   ml_scalar_int(0));
  if (!rc) rc = ml_view_narrow(p->op, &rows, &r, 2, 0, p->h);
  if (!rc) rc = ml_view_narrow(p->op, &inner, &rows, 3, 0, p->w);
  if (!rc) rc = ml_copy(p->op, &inner, x4);
  ml_array_release(&rows);
  ml_array_release(&inner);
  return ml_array_commit(out, &r, rc);
}

int ml_conv(ml_array *out, const ml_array *x, const ml_array *w,
            const ml_conv_opts *o) {
  plan p;
  memset(&p, 0, sizeof p);
  p.op = o->dims == 1 ? "conv1d" : "conv2d";
  const ml_conv_backend *cb;
  int rc = check_operands(p.op, o->dims, x, w, o->bias);
  if (!rc) rc = check_options(p.op, o);
  if (!rc) rc = check_channels(&p, x, w, o);
  if (!rc) rc = check_sizes(&p, x, w, o);
  if (!rc) rc = ml_conv_backend_get(ml_array_device(x), &cb);
  if (rc) return rc;
  int64_t shape[4];
  int nd = 0;
  if (p.batched) shape[nd++] = p.n;
  shape[nd++] = p.o;
  if (o->dims == 2) shape[nd++] = p.oh;
  shape[nd++] = p.ow;
  ml_array r = {0}, xc = {0}, x4 = {0}, xp = {0}, wc = {0}, w4 = {0},
           bc = {0}, y4 = {0};
  rc = ml_array_empty(&r, x->dtype, nd, shape, ml_array_device(x));
  if (!rc && p.n > 0) {
    rc = ml_contiguous(&xc, x);
    if (!rc) rc = as4(p.op, &x4, &xc, p.n, p.c, p.h, p.w);
    if (!rc) rc = pad_after(&p, &xp, &x4);
    if (!rc) rc = ml_contiguous(&wc, w);
    if (!rc) rc = as4(p.op, &w4, &wc, p.o, p.cg, p.kh, p.kw);
    if (!rc && o->bias) rc = ml_contiguous(&bc, o->bias);
    if (!rc) rc = as4(p.op, &y4, &r, p.n, p.o, p.oh, p.ow);
    ml_conv_desc c = {p.op, &xp, &w4, o->bias ? &bc : NULL, &y4, o->groups,
                 {p.stride[0], p.stride[1]}, {p.lo[0], p.lo[1]},
                 {p.dilation[0], p.dilation[1]}, o->tf32};
    if (!rc) rc = cb->forward(&c);
  }
  ml_array *tmp[] = {&xc, &x4, &xp, &wc, &w4, &bc, &y4};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
    ml_array_release(tmp[i]);
  return ml_array_commit(out, &r, rc);
}
