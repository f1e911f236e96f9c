/* Filters: validation, dtypes, the three-dimensional views of
 * filter_backend.h, and each library's convention as one correlation over
 * an extended input; the backend's filter area computes.
 *
 * Offsets. A correlation reads ext(x)[i + j + start] with mask element j.
 * - ndimage: start = -(k/2) - origin; a convolution reverses the mask
 *   with origin -origin - 1 for even k, -origin for odd k, so start =
 *   -(k/2) + origin + (k even).
 * - signal, "full": start = -(k - 1); "valid": 0. "same": the centre of
 *   the full result, start = -(k/2), except correlate2d's, which centres
 *   even masks one sample further on: start = -((k - 1)/2) (SciPy's
 *   correlate and correlate2d differ there). Convolutions reverse the mask
 *   and keep these starts ("same": -(k/2) for both).
 * - signal "valid" with the smaller operand first: SciPy swaps the
 *   operands (and reverses a correlation's result), which is the same
 *   as reading x, zero-extended, from start = n - k: out[i] = sum_j w[j]
 *   x[i + j + n - k], terms outside x being zero. The boundary does not
 *   matter in "valid", so this always extends by zeros. */
#include "filter.h"

#include <stddef.h>
#include <string.h>

#include "copy.h"
#include "status.h"
#include "view.h"

static const char *const filter_entries[] = {"correlate", "separable", "box"};
#define NENTRIES (sizeof filter_entries / sizeof *filter_entries)
_Static_assert(offsetof(ml_filter_backend, correlate) +
                       NENTRIES * sizeof(void (*)(void)) ==
                   sizeof(ml_filter_backend),
               "filter_entries names every function of ml_filter_backend");

static ml_backend_area filter_area = {"filter", filter_entries, NENTRIES,
                                      offsetof(ml_filter_backend, correlate),
                                      {NULL}};

int ml_filter_backend_register(ml_device_kind kind,
                               const ml_filter_backend *t) {
  return ml_backend_area_register(&filter_area, kind, t);
}

int ml_filter_backend_get(ml_device device, const ml_filter_backend **out) {
  return ml_backend_area_get(&filter_area, device, (const void **)out);
}

/* Names ------------------------------------------------------------------ */

static int lookup(const char *name, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

int ml_filter_mode_parse(const char *name, ml_filter_mode *out) {
  static const char *const names[] = {
      "reflect",     "constant",      "nearest",  "mirror", "wrap",
      "grid-mirror", "grid-constant", "grid-wrap"};
  static const ml_filter_mode modes[] = {
      ML_FILTER_REFLECT, ML_FILTER_CONSTANT, ML_FILTER_NEAREST,
      ML_FILTER_MIRROR,  ML_FILTER_WRAP,     ML_FILTER_REFLECT,
      ML_FILTER_CONSTANT, ML_FILTER_WRAP};
  int i = lookup(name, names, 8);
  if (i >= 0) *out = modes[i];
  return i >= 0;
}

int ml_signal_size_parse(const char *name, ml_signal_size *out) {
  static const char *const names[] = {"full", "same", "valid"};
  int i = lookup(name, names, 3);
  if (i >= 0) *out = (ml_signal_size)i;
  return i >= 0;
}

int ml_signal_boundary_parse(const char *name, ml_filter_mode *out) {
  static const char *const names[] = {"fill", "symm", "wrap"};
  static const ml_filter_mode modes[] = {ML_FILTER_CONSTANT,
                                         ML_FILTER_REFLECT, ML_FILTER_WRAP};
  int i = lookup(name, names, 3);
  if (i >= 0) *out = modes[i];
  return i >= 0;
}

/* Helpers ---------------------------------------------------------------- */

/* The dtype a filter computes in: float32 and float64 stay, integers
 * become float64. */
static ml_dtype float_of(ml_dtype t) {
  return ml_dtype_is_float(t) ? t : ML_FLOAT64;
}

/* a (contiguous) viewed as n0 x n1 x n2. */
static int view3(const char *op, ml_array *out, const ml_array *a,
                 int64_t n0, int64_t n1, int64_t n2) {
  int64_t shape[3] = {n0, n1, n2};
  return ml_view_reshape(op, out, a, 3, shape);
}

/* The shape of a (ndim <= 3) padded in front to three dimensions. */
static void shape3(const ml_array *a, int64_t *s) {
  for (int d = 0; d < 3; d++)
    s[d] = d < 3 - a->ndim ? 1 : a->shape[d - (3 - a->ndim)];
}

/* The sizes before axis, along it and after it. */
static void lines_of(const ml_array *a, int axis, int64_t *s) {
  s[0] = s[2] = 1;
  s[1] = a->shape[axis];
  for (int d = 0; d < a->ndim; d++) {
    if (d < axis) s[0] *= a->shape[d];
    if (d > axis) s[2] *= a->shape[d];
  }
}

static int filter_of(const ml_array *a, const ml_filter_backend **fb) {
  return ml_filter_backend_get(ml_array_device(a), fb);
}

/* The end of an operation that computed r in float: converted to dtype t
 * when that is not r's (toward zero for integers), then committed. */
static int finish(ml_array *out, ml_array *r, ml_dtype t, int rc) {
  if (!rc && r->dtype != t) {
    ml_array c = {0};
    rc = ml_astype(&c, r, t);
    ml_array_release(r);
    if (!rc) ml_array_move(r, &c);
  }
  return ml_array_commit(out, r, rc);
}

/* An origin in -(k/2)..(k-1)/2, else an error naming dimension d
 * (1-based). */
static int check_origin(const char *op, int64_t origin, int64_t k, int d) {
  if (origin >= -(k / 2) && origin <= (k - 1) / 2) return ML_OK;
  return ml_fail(ML_EINVAL,
                 "%s: origin %lld along dimension %d is out of range for %lld "
                 "weights (%lld..%lld)",
                 op, (long long)origin, d + 1, (long long)k,
                 (long long)-(k / 2), (long long)((k - 1) / 2));
}

/* The start of an ndimage mask of k samples with origin o. */
static int64_t ndimage_start(int64_t k, int64_t o, int convolve) {
  return convolve ? -(k / 2) + o + (k % 2 == 0) : -(k / 2) - o;
}

/* ndimage.correlate ------------------------------------------------------ */

int ml_ndimage_correlate(const char *op, ml_array *out, const ml_array *x,
                         const ml_array *w, ml_filter_mode mode, double cval,
                         const int64_t *origin, int convolve, int fft) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  const ml_filter_backend *fb;
  if (x->ndim < 1 || x->ndim > 3)
    return ml_fail(ML_EINVAL, "%s: expects an array of 1 to 3 dimensions, got shape %s",
                   op, ml_shape_str(x->ndim, x->shape, s1, sizeof s1));
  if (w->ndim != x->ndim)
    return ml_fail(ML_EINVAL,
                   "%s: the weights (shape %s) must have as many dimensions as the input (shape %s)",
                   op, ml_shape_str(w->ndim, w->shape, s1, sizeof s1),
                   ml_shape_str(x->ndim, x->shape, s2, sizeof s2));
  if (ml_array_numel(w) == 0)
    return ml_fail(ML_EINVAL, "%s: the weights are empty (shape %s)", op,
                   ml_shape_str(w->ndim, w->shape, s1, sizeof s1));
  int rc = ml_check_same_device(op, x, w);
  for (int d = 0; !rc && d < x->ndim; d++)
    rc = check_origin(op, origin[d], w->shape[d], d);
  if (!rc) rc = filter_of(x, &fb);
  if (rc) return rc;
  ml_dtype t = float_of(x->dtype);
  ml_array r = {0}, xc = {0}, wc = {0}, x3 = {0}, w3 = {0}, r3 = {0};
  rc = ml_array_empty(&r, t, x->ndim, x->shape, ml_array_device(x));
  if (!rc && ml_array_numel(x) > 0) {
    int64_t n[3], k[3];
    shape3(x, n);
    shape3(w, k);
    rc = ml_contiguous_as(&xc, x, t);
    if (!rc) rc = ml_contiguous_as(&wc, w, ML_FLOAT64);
    if (!rc) rc = view3(op, &x3, &xc, n[0], n[1], n[2]);
    if (!rc) rc = view3(op, &w3, &wc, k[0], k[1], k[2]);
    if (!rc) rc = view3(op, &r3, &r, n[0], n[1], n[2]);
    if (!rc) {
      ml_filter_corr f = {&r3, &x3, &w3, convolve, {0, 0, 0}, mode, cval, fft};
      for (int d = 0; d < 3; d++) {
        int64_t o = d < 3 - x->ndim ? 0 : origin[d - (3 - x->ndim)];
        f.start[d] = ndimage_start(k[d], o, convolve);
      }
      rc = fb->correlate(&f);
    }
  }
  ml_array_release(&xc);
  ml_array_release(&wc);
  ml_array_release(&x3);
  ml_array_release(&w3);
  ml_array_release(&r3);
  return finish(out, &r, x->dtype, rc);
}

/* Separable passes --------------------------------------------------------- */

/* The separable passes of one call, over x's shape. */
typedef struct {
  const char *op;
  const ml_filter_backend *fb;
  const ml_array *x;
  const ml_array *const *masks;
  const int64_t *start;
  const ml_filter_mode *modes;
  double cval;
  int convolve;
} sep_run;

/* One backend call, into a new array that replaces cur (contiguous, x's
 * shape): the pass along axis a alone, or along the last two axes a and
 * b = a + 1 together. A single axis is the middle one of outer x n x
 * inner, or the last of 1 x outer x n when it is x's last. */
static int sep_call(const sep_run *s, ml_array *cur, int a, int b) {
  const ml_array *x = s->x;
  int64_t n[3];
  int slot = b < 0 && a == x->ndim - 1;
  lines_of(x, a, n);
  if (slot) n[2] = n[1], n[1] = n[0], n[0] = 1;
  const int axes[2] = {slot ? -1 : a, slot ? a : b};
  ml_array next = {0}, in3 = {0}, out3 = {0}, m1[2] = {{0}, {0}};
  ml_filter_sep f = {&out3, &in3, {NULL, NULL}, {0, 0},
                     {ML_FILTER_REFLECT, ML_FILTER_REFLECT}, s->cval,
                     s->convolve};
  int rc = ml_array_empty(&next, cur->dtype, cur->ndim, cur->shape,
                          ml_array_device(cur));
  if (!rc) rc = view3(s->op, &in3, cur, n[0], n[1], n[2]);
  if (!rc) rc = view3(s->op, &out3, &next, n[0], n[1], n[2]);
  for (int i = 0; i < 2 && !rc; i++) {
    if (axes[i] < 0) continue;
    rc = ml_contiguous_as(&m1[i], s->masks[axes[i]], ML_FLOAT64);
    f.mask[i] = &m1[i];
    f.start[i] = s->start[axes[i]];
    f.mode[i] = s->modes[axes[i]];
  }
  if (!rc) rc = s->fb->separable(&f);
  /* integers: each pass rounds toward zero into x's dtype, as SciPy's */
  if (!rc && !ml_dtype_is_float(x->dtype)) {
    ml_array t = {0};
    rc = ml_astype(&t, &next, x->dtype);
    if (!rc) rc = ml_astype(&next, &t, cur->dtype);
    ml_array_release(&t);
  }
  ml_array_release(&in3);
  ml_array_release(&out3);
  ml_array_release(&m1[0]);
  ml_array_release(&m1[1]);
  if (!rc) {
    ml_array_release(cur);
    ml_array_move(cur, &next);
  }
  ml_array_release(&next);
  return rc;
}

static int check_masks(const char *op, const ml_array *x,
                       const ml_array *const *masks, const int64_t *origin) {
  char s1[ML_SHAPE_STR_MAX];
  for (int d = 0; d < x->ndim; d++) {
    const ml_array *m = masks[d];
    if (!m) continue;
    if (m->ndim != 1 || m->shape[0] == 0)
      return ml_fail(ML_EINVAL, "%s: the weights must be a nonempty 1-D array, got shape %s",
                     op, ml_shape_str(m->ndim, m->shape, s1, sizeof s1));
    /* a mask on the CPU is a parameter (filter_backend.h) */
    int rc = ml_array_device(m).kind == ML_CPU ? ML_OK : ml_check_same_device(op, x, m);
    if (!rc) rc = check_origin(op, origin[d], m->shape[0], d);
    if (rc) return rc;
  }
  return ML_OK;
}

int ml_ndimage_separable(const char *op, ml_array *out, const ml_array *x,
                         const ml_array *const *masks, const int64_t *origin,
                         const ml_filter_mode *modes, double cval,
                         int convolve) {
  char s1[ML_SHAPE_STR_MAX];
  const ml_filter_backend *fb;
  if (x->ndim < 1)
    return ml_fail(ML_EINVAL, "%s: expects an array of 1 or more dimensions, got shape %s",
                   op, ml_shape_str(x->ndim, x->shape, s1, sizeof s1));
  int rc = check_masks(op, x, masks, origin);
  if (!rc) rc = filter_of(x, &fb);
  if (rc) return rc;
  ml_dtype t = float_of(x->dtype);
  int nd = x->ndim, any = 0;
  for (int d = 0; d < nd; d++) any = any || masks[d];
  /* a copy when no pass will replace it */
  ml_array cur = {0};
  rc = any && ml_array_numel(x) > 0 ? ml_contiguous_as(&cur, x, t)
                                    : ml_astype(&cur, x, t);
  int64_t start[ML_MAX_DIMS];
  for (int d = 0; d < nd; d++)
    start[d] = masks[d]
                   ? ndimage_start(masks[d]->shape[0], origin[d], convolve)
                   : 0;
  sep_run s = {op, fb, x, masks, start, modes, cval, convolve};
  /* one pass an axis, the last two together when both have a mask (not
   * for integers, which round after every pass) */
  int fuse = nd >= 2 && masks[nd - 2] && masks[nd - 1] &&
             ml_dtype_is_float(x->dtype);
  for (int d = 0; !rc && any && ml_array_numel(x) > 0 && d < nd; d++) {
    if (!masks[d]) continue;
    int both = fuse && d == nd - 2;
    rc = sep_call(&s, &cur, d, both ? d + 1 : -1);
    if (both) break;
  }
  return finish(out, &cur, x->dtype, rc);
}

/* Moving sums ------------------------------------------------------------ */

int ml_moving_sum(const char *op, ml_array *out, const ml_array *x, int axis,
                  int64_t length, int64_t start, double divisor,
                  ml_filter_mode mode, double cval, int keep_dtype) {
  const ml_filter_backend *fb;
  if (length < 1)
    return ml_fail(ML_EINVAL, "%s: the window must hold at least 1 sample, not %lld",
                   op, (long long)length);
  int rc = filter_of(x, &fb);
  if (rc) return rc;
  ml_dtype t = float_of(x->dtype);
  ml_array r = {0}, xc = {0}, x3 = {0}, r3 = {0};
  rc = ml_array_empty(&r, t, x->ndim, x->shape, ml_array_device(x));
  if (!rc && ml_array_numel(x) > 0) {
    int64_t n[3];
    lines_of(x, axis, n);
    rc = ml_contiguous_as(&xc, x, t);
    if (!rc) rc = view3(op, &x3, &xc, n[0], n[1], n[2]);
    if (!rc) rc = view3(op, &r3, &r, n[0], n[1], n[2]);
    if (!rc) {
      ml_filter_box f = {&r3, &x3, length, start, divisor, mode, cval};
      rc = fb->box(&f);
    }
  }
  ml_array_release(&xc);
  ml_array_release(&x3);
  ml_array_release(&r3);
  return finish(out, &r, keep_dtype ? x->dtype : t, rc);
}

/* signal ----------------------------------------------------------------- */

/* The result's size and the correlation's start along one dimension of n
 * samples and a mask of k. */
static void signal_extent(ml_signal_size size, int64_t n, int64_t k,
                          int centre_even_late, int64_t *len,
                          int64_t *start) {
  switch (size) {
  case ML_SIGNAL_FULL:
    *len = n + k - 1;
    *start = -(k - 1);
    break;
  case ML_SIGNAL_SAME:
    *len = n;
    *start = centre_even_late ? -((k - 1) / 2) : -(k / 2);
    break;
  default:
    *len = n >= k ? n - k + 1 : k - n + 1;
    *start = n >= k ? 0 : n - k;
  }
}

static int check_signal(const char *op, const ml_array *x, const ml_array *w,
                        ml_signal_size size) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  ml_shape_str(x->ndim, x->shape, s1, sizeof s1);
  ml_shape_str(w->ndim, w->shape, s2, sizeof s2);
  if (x->ndim != w->ndim || x->ndim < 1 || x->ndim > 2)
    return ml_fail(ML_EINVAL, "%s: expects two 1-D or two 2-D arrays, got shapes %s and %s",
                   op, s1, s2);
  if (ml_array_numel(x) == 0 || ml_array_numel(w) == 0)
    return ml_fail(ML_EINVAL, "%s: an operand is empty (shapes %s and %s)", op,
                   s1, s2);
  if (size == ML_SIGNAL_VALID) {
    int ge = 1, le = 1;
    for (int d = 0; d < x->ndim; d++) {
      ge = ge && x->shape[d] >= w->shape[d];
      le = le && x->shape[d] <= w->shape[d];
    }
    if (!ge && !le)
      return ml_fail(ML_EINVAL,
                     "%s: in \"valid\" mode one operand must be at least as large as the other in every dimension (shapes %s and %s)",
                     op, s1, s2);
  }
  return ml_check_same_device(op, x, w);
}

int ml_signal_correlate(const char *op, ml_array *out, const ml_array *x,
                        const ml_array *w, ml_signal_size size,
                        ml_filter_mode boundary, double fill, int convolve) {
  const ml_filter_backend *fb;
  int rc = check_signal(op, x, w, size);
  if (!rc) rc = filter_of(x, &fb);
  if (rc) return rc;
  ml_dtype rt = ml_dtype_promote(x->dtype, w->dtype), t = float_of(rt);
  int64_t n[3], k[3], len[3] = {1, 1, 1}, start[3] = {0, 0, 0};
  shape3(x, n);
  shape3(w, k);
  int late = x->ndim == 2 && !convolve;
  for (int d = 3 - x->ndim; d < 3; d++)
    signal_extent(size, n[d], k[d], late, &len[d], &start[d]);
  if (size == ML_SIGNAL_VALID) boundary = ML_FILTER_CONSTANT, fill = 0;
  /* the fill value is converted to the dtype first, as SciPy's */
  if (t == ML_FLOAT32) fill = (float)fill;
  ml_array r = {0}, xc = {0}, wc = {0}, x3 = {0}, w3 = {0}, r3 = {0};
  rc = ml_array_empty(&r, t, x->ndim, len + 3 - x->ndim, ml_array_device(x));
  if (!rc) rc = ml_contiguous_as(&xc, x, t);
  if (!rc) rc = ml_contiguous_as(&wc, w, ML_FLOAT64);
  if (!rc) rc = view3(op, &x3, &xc, n[0], n[1], n[2]);
  if (!rc) rc = view3(op, &w3, &wc, k[0], k[1], k[2]);
  if (!rc) rc = view3(op, &r3, &r, len[0], len[1], len[2]);
  if (!rc) {
    ml_filter_corr f = {&r3, &x3, &w3, convolve,
                        {start[0], start[1], start[2]}, boundary, fill, -1};
    rc = fb->correlate(&f);
  }
  ml_array_release(&xc);
  ml_array_release(&wc);
  ml_array_release(&x3);
  ml_array_release(&w3);
  ml_array_release(&r3);
  return finish(out, &r, rt, rc);
}
