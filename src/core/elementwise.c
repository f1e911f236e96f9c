#include "elementwise.h"

#include <string.h>

#include "backend.h"
#include "copy.h"
#include "reduce.h"
#include "status.h"
#include "view.h"


static int is_comparison(ml_binop op) { return op >= ML_EQ && op <= ML_GE; }

static int is_predicate(ml_unop op) {
  return op == ML_NOT || op == ML_ISNAN || op == ML_ISINF || op == ML_ISFINITE;
}

/* The dtype the operand of a unary op is converted to. */
static ml_dtype unary_compute(ml_unop op, ml_dtype t) {
  int float_op = op >= ML_SQRT && op <= ML_ERF;
  return float_op && !ml_dtype_is_float(t) ? ML_FLOAT64 : t;
}

/* The dtype the operands of a binary op are converted to, given the
 * promoted dtype t. */
static ml_dtype binary_compute(ml_binop op, ml_dtype t) {
  return op == ML_DIV && !ml_dtype_is_float(t) ? ML_FLOAT64 : t;
}

ml_dtype ml_unary_dtype(ml_unop op, ml_dtype t) {
  return is_predicate(op) ? ML_UINT8 : unary_compute(op, t);
}

ml_dtype ml_binary_dtype(ml_binop op, ml_dtype a, ml_dtype b) {
  ml_dtype t = binary_compute(op, ml_dtype_promote(a, b));
  return is_comparison(op) ? ML_UINT8 : t;
}

static int same_shape(const ml_array *a, int ndim, const int64_t *shape) {
  if (a->ndim != ndim) return 0;
  for (int d = 0; d < ndim; d++)
    if (a->shape[d] != shape[d]) return 0;
  return 1;
}

/* Makes operand a ready for the backend: of dtype t, broadcast to shape.
 * *use is a itself when it already is, else a converted copy or a view
 * held in *tmp, which starts empty and is written only when it is used
 * (release_operand() tells that from *use). */
static int prepare(const char *op, const ml_array *a, ml_dtype t, int ndim,
                   const int64_t *shape, ml_array *tmp, const ml_array **use) {
  int rc = ML_OK;
  *use = a;
  if (a->dtype != t) {
    if ((rc = ml_astype(tmp, a, t))) return rc;
    *use = tmp;
  }
  if (!same_shape(*use, ndim, shape)) {
    rc = ml_view_expand(op, tmp, *use, ndim, shape);
    if (!rc) *use = tmp;
  }
  return rc;
}

static void release_operand(ml_array *tmp, const ml_array *use) {
  if (use == tmp) ml_array_release(tmp);
}

/* Where a result is built: out itself when it is empty (the usual case),
 * else *r, which finish() moves into out once the operands (out may be
 * one of them) are no longer needed. */
static ml_array *result_slot(ml_array *out, ml_array *r) {
  if (!out->storage) return out;
  r->storage = NULL;
  return r;
}

static int finish(int rc, ml_array *out, ml_array *res) {
  if (res != out) return ml_array_commit(out, res, rc);
  if (rc) ml_array_release(res);
  return rc;
}

int ml_unary(ml_unop op, ml_array *out, const ml_array *a) {
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  ml_array conv = {0}, r = {0}, *res = result_slot(out, &r);
  const ml_array *x;
  rc = prepare(ml_unop_name(op), a, unary_compute(op, a->dtype), a->ndim,
               a->shape, &conv, &x);
  if (!rc) rc = ml_array_empty_like(res, a, ml_unary_dtype(op, a->dtype));
  if (!rc) rc = be->unary(op, res, x);
  release_operand(&conv, x);
  return finish(rc, out, res);
}

static int negative_power(int64_t e) {
  return ml_fail(ML_EINVAL, "pow: integers to negative integer powers are not "
                 "allowed (exponent %lld)", (long long)e);
}

/* For an integer power (computation dtype t) with the exponents e: none may
 * be negative. Costs a reduction over e, only for signed integer e. */
static int check_exponents(ml_dtype t, const ml_array *e) {
  if (ml_dtype_is_float(t) || e->dtype == ML_UINT8 || ml_array_numel(e) == 0)
    return ML_OK;
  ml_array lo = {0};
  ml_scalar m = ml_scalar_int(0);
  int rc = ml_reduce(ML_MIN, &lo, e, -1, 0, 0);
  if (!rc) rc = ml_read_element(&lo, 0, &m);
  ml_array_release(&lo);
  return !rc && m.i < 0 ? negative_power(m.i) : rc;
}

int ml_binary(ml_binop op, ml_array *out, const ml_array *a,
              const ml_array *b) {
  const char *name = ml_binop_name(op);
  int ndim, rc = ml_check_same_device(name, a, b);
  int64_t shape[ML_MAX_DIMS];
  if (!rc)
    rc = ml_broadcast_shape(name, a->ndim, a->shape, b->ndim, b->shape, &ndim,
                            shape);
  const ml_backend *be;
  if (!rc) rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  ml_dtype t = binary_compute(op, ml_dtype_promote(a->dtype, b->dtype));
  if (op == ML_POW && (rc = check_exponents(t, b))) return rc;
  ml_array ta = {0}, tb = {0}, r = {0}, *res = result_slot(out, &r);
  const ml_array *x = a, *y = b;
  rc = prepare(name, a, t, ndim, shape, &ta, &x);
  if (!rc) rc = prepare(name, b, t, ndim, shape, &tb, &y);
  if (!rc)
    rc = ml_array_empty(res, is_comparison(op) ? ML_UINT8 : t, ndim, shape,
                        ml_array_device(a));
  if (!rc) rc = be->binary(op, res, x, y);
  release_operand(&ta, x);
  release_operand(&tb, y);
  return finish(rc, out, res);
}

int ml_binary_scalar(ml_binop op, ml_array *out, const ml_array *a,
                     ml_scalar s, int reversed) {
  const char *name = ml_binop_name(op);
  ml_dtype t = ml_dtype_with_scalar(a->dtype, s);
  /* true division computes integers in float64, which takes any integer
   * scalar (NumPy 2: 300 / uint8_array is float64, not an overflow) */
  if (op == ML_DIV) t = binary_compute(op, t);
  if (!ml_scalar_fits(s, t)) {
    if (!is_comparison(op))
      return ml_fail(ML_EINVAL, "%s: %lld is out of range for %s", name,
                     (long long)s.i, ml_dtype_name(t));
    t = ML_INT64; /* compare exactly */
  }
  t = binary_compute(op, t);
  if (op == ML_POW && !ml_dtype_is_float(t)) {
    int rc = reversed ? check_exponents(t, a) : ML_OK;
    if (rc || (!reversed && s.i < 0)) return rc ? rc : negative_power(s.i);
  }
  if (ml_dtype_is_float(t)) {
    double v = ml_scalar_to_double(s);
    s = ml_scalar_float(t == ML_FLOAT32 ? (double)(float)v : v);
  }
  const ml_backend *be;
  int rc = ml_backend_get(ml_array_device(a), &be);
  if (rc) return rc;
  ml_array conv = {0}, r = {0}, *res = result_slot(out, &r);
  const ml_array *x;
  rc = prepare(name, a, t, a->ndim, a->shape, &conv, &x);
  if (!rc) rc = ml_array_empty_like(res, a, is_comparison(op) ? ML_UINT8 : t);
  if (!rc) rc = be->binary_scalar(op, res, x, s, reversed);
  release_operand(&conv, x);
  return finish(rc, out, res);
}

int ml_where(ml_array *out, const ml_array *cond, const ml_array *a,
             const ml_array *b) {
  int n1, ndim, rc = ml_check_same_device("where", a, b);
  int64_t s1[ML_MAX_DIMS], shape[ML_MAX_DIMS];
  if (!rc) rc = ml_check_same_device("where", cond, a);
  if (rc) return rc;
  if (ml_broadcast_shape("where", cond->ndim, cond->shape, a->ndim, a->shape,
                         &n1, s1) ||
      ml_broadcast_shape("where", n1, s1, b->ndim, b->shape, &ndim, shape)) {
    char bc[ML_SHAPE_STR_MAX], ba[ML_SHAPE_STR_MAX], bb[ML_SHAPE_STR_MAX];
    return ml_fail(ML_EINVAL, "where: shapes %s, %s and %s do not broadcast",
                   ml_shape_str(cond->ndim, cond->shape, bc, sizeof bc),
                   ml_shape_str(a->ndim, a->shape, ba, sizeof ba),
                   ml_shape_str(b->ndim, b->shape, bb, sizeof bb));
  }
  const ml_backend *be;
  if ((rc = ml_backend_get(ml_array_device(a), &be))) return rc;
  ml_dtype t = ml_dtype_promote(a->dtype, b->dtype);
  ml_array nz = {0}, tc = {0}, ta = {0}, tb = {0}, r = {0}, *res = result_slot(out, &r);
  const ml_array *c = cond, *x = a, *y = b;
  if (cond->dtype != ML_UINT8) { /* nonzero is true: not a conversion */
    rc = ml_binary_scalar(ML_NE, &nz, cond, ml_scalar_int(0), 0);
    c = &nz;
  }
  if (!rc) rc = prepare("where", c, ML_UINT8, ndim, shape, &tc, &c);
  if (!rc) rc = prepare("where", a, t, ndim, shape, &ta, &x);
  if (!rc) rc = prepare("where", b, t, ndim, shape, &tb, &y);
  if (!rc) rc = ml_array_empty(res, t, ndim, shape, ml_array_device(a));
  if (!rc) rc = be->where(res, c, x, y);
  release_operand(&tc, c);
  release_operand(&ta, x);
  release_operand(&tb, y);
  ml_array_release(&nz);
  return finish(rc, out, res);
}

/* An integer bound outside the range of integer dtype t, moved to the
 * nearest end of that range: clamping to it gives the same result. */
static ml_scalar saturate(ml_scalar s, ml_dtype t) {
  if (!s.is_int || ml_scalar_fits(s, t)) return s;
  int64_t lo = t == ML_UINT8 ? 0 : INT32_MIN;
  int64_t hi = t == ML_UINT8 ? 255 : INT32_MAX;
  return ml_scalar_int(s.i < lo ? lo : hi);
}

int ml_clamp(ml_array *out, const ml_array *a, const ml_scalar *lo,
             const ml_scalar *hi) {
  if (!lo && !hi)
    return ml_fail(ML_EINVAL, "clamp: needs a lower or an upper bound");
  if (!hi)
    return ml_binary_scalar(ML_MAXIMUM, out, a, saturate(*lo, a->dtype), 0);
  if (!lo)
    return ml_binary_scalar(ML_MINIMUM, out, a, saturate(*hi, a->dtype), 0);
  ml_array t = {0};
  int rc = ml_binary_scalar(ML_MAXIMUM, &t, a, saturate(*lo, a->dtype), 0);
  if (!rc)
    rc = ml_binary_scalar(ML_MINIMUM, out, &t, saturate(*hi, t.dtype), 0);
  ml_array_release(&t);
  return rc;
}
