/* Elementwise operations on the CPU: unary, binary (array with array or
 * with a scalar) and where, over cpu_foreach runs.
 *
 * Every run function handles one dtype and switches on the operation; the
 * loop macros RUN1 and RUN2 give each operation a contiguous loop that the
 * compiler vectorises (`omp simd`), loops for a broadcast (zero-stride)
 * operand, and a general strided loop. A scalar operand is a zero-stride
 * view of a local value, so binary_scalar shares the binary loops.
 *
 * Semantics (NumPy's, except where noted):
 * - integer + - * and unary minus wrap around (uint8 too: -1 is 255);
 * - idiv and mod are floor division and modulo: the result of mod has the
 *   divisor's sign. Integer idiv or mod by zero gives 0 (NumPy warns and
 *   gives 0 too); float idiv by zero gives +-inf or NaN and float mod by
 *   zero NaN, by IEEE rules;
 * - integer pow is exact (by squaring, wrapping); a negative exponent gives
 *   0, except for bases 1 (1) and -1 (+-1);
 * - minimum and maximum propagate NaN; comparisons with NaN are false,
 *   except ne; round is half to even.
 * Float results are identical for every layout and thread count. */
#include <math.h>
#include <string.h>

#include "../core/scalar_math.h"
#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* On x86-64 the run functions are also built for AVX2 and AVX-512, and
 * the loader picks the best copy for the machine: the baseline (SSE2)
 * cannot vectorise the 64-bit compares and selects that exp, comparisons
 * and where need, and wider vectors speed exp up further. All
 * copies give identical results: under -std=c11 GCC does not contract
 * a * b + c into a fused multiply-add. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                               "default")))
#else
#define VECTOR_CLONES
#endif

/* ---- element functions ---- */

static inline uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static inline double double_of(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* mask ? a : b for a mask of all ones or all zeros, in bit operations: the
 * vectoriser will not turn a ternary over float arithmetic into a select. */
static inline double select_double(uint64_t mask, double a, double b) {
  return double_of((bits_of(a) & mask) | (bits_of(b) & ~mask));
}

/* exp(x) in plain arithmetic, so that loops over it vectorise (glibc's exp
 * is scalar). x = k ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2 split so
 * that k * ln2_hi is exact); exp(r) = 1 + (r + r^2 q(r)) by Taylor to
 * degree 13 (truncation error below 5e-18); the result is scaled by 2^k in
 * two exact steps, so that subnormal results round only once. Max relative
 * error against libm's exp: 1 ulp (2.2e-16); subnormal results are within
 * one unit of the last place too. |x| > 746 becomes +-746, where exp is
 * inf or 0; NaN passes through. */
static inline double exp_kernel(double x) {
  const double shift = 0x1.8p52, log2e = 1.4426950408889634;
  const double ln2_hi = 0x1.62e42feep-1, ln2_lo = 0x1.a39ef35793c76p-33;
  const uint64_t sign = (uint64_t)1 << 63;
  uint64_t u = bits_of(x), ax = u & ~sign;
  uint64_t big = -(uint64_t)((ax > bits_of(746.0)) & (ax <= bits_of(INFINITY)));
  x = select_double(big, double_of((u & sign) | bits_of(746.0)), x);
  double z = x * log2e + shift; /* k in the low bits of z */
  double kd = z - shift;
  double r = (x - kd * ln2_hi) - kd * ln2_lo;
  /* q(r) = 1/2! + r/3! + ... + r^11/13!, by Estrin's scheme: a short
   * dependency chain, so that independent vectors overlap */
  double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  double q01 = 1.0 / 2 + r * (1.0 / 6), q23 = 1.0 / 24 + r * (1.0 / 120);
  double q45 = 1.0 / 720 + r * (1.0 / 5040);
  double q67 = 1.0 / 40320 + r * (1.0 / 362880);
  double q89 = 1.0 / 3628800 + r * (1.0 / 39916800);
  double qab = 1.0 / 479001600 + r * (1.0 / 6227020800);
  double q = (q01 + r2 * q23) + r4 * (q45 + r2 * q67) + r8 * (q89 + r2 * qab);
  double y = 1.0 + (r + r2 * q);
  /* kb = k + 2046 >= 0; the two biased exponents kb/2 and kb - kb/2 */
  uint64_t kb = bits_of(z) - bits_of(shift) + 2046, k1 = kb >> 1;
  return y * double_of(k1 << 52) * double_of((kb - k1) << 52);
}

/* 1 / (1 + exp(-x)) without overflow: exp of -|x| only. */
static inline double sigmoid_kernel(double x) {
  double e = exp_kernel(-fabs(x)), r = 1.0 / (1.0 + e);
  return select_double(-(bits_of(x) >> 63), e * r, r);
}

#define ADD(a, b) ((a) + (b))
#define SUB(a, b) ((a) - (b))
#define MUL(a, b) ((a) * (b))
#define DIV(a, b) ((a) / (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN_NAN(a, b) ((((a) < (b)) | ((a) != (a))) ? (a) : (b))
#define MAX_NAN(a, b) ((((a) > (b)) | ((a) != (a))) ? (a) : (b))
#define EQ(a, b) ((a) == (b))
#define NE(a, b) ((a) != (b))
#define LT(a, b) ((a) < (b))
#define LE(a, b) ((a) <= (b))
#define GT(a, b) ((a) > (b))
#define GE(a, b) ((a) >= (b))
#define NEG(a) (-(a))
#define SAME(a) (a)
#define NOT(a) ((a) == 0)
#define ISNAN(a) ((a) != (a))
#define ISINF(a) (fabs(a) == INFINITY)
#define ISFINITE(a) (fabs(a) < INFINITY)
#define NEVER(a) ((void)(a), 0)
#define ALWAYS(a) ((void)(a), 1)

/* ---- loops ---- */

/* o = F(x) over a run of n: p[0] out of type R, p[1] in of type T. */
#define RUN1(T, R, F)                                                    \
  do {                                                                   \
    if (s[0] == (int64_t)sizeof(R) && s[1] == (int64_t)sizeof(T)) {      \
      R *o = (R *)p[0];                                                  \
      const T *x = (const T *)p[1];                                      \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++) o[i] = F(x[i]); \
    } else {                                                             \
      for (int64_t i = 0; i < n; i++)                                    \
        *(R *)(p[0] + i * s[0]) = F(*(const T *)(p[1] + i * s[1]));      \
    }                                                                    \
  } while (0)

/* o = F(x, y) over a run of n: p[0] out of type R, p[1] and p[2] of type
 * T; contiguous, either operand constant along the run, or strided. */
#define RUN2(T, R, F)                                                     \
  do {                                                                    \
    const int64_t st = (int64_t)sizeof(T);                                \
    R *o = (R *)p[0];                                                     \
    const T *x = (const T *)p[1], *y = (const T *)p[2];                   \
    if (s[0] == (int64_t)sizeof(R) && s[1] == st && s[2] == st) {         \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                 \
        o[i] = F(x[i], y[i]);                                             \
    } else if (s[0] == (int64_t)sizeof(R) && s[1] == st && s[2] == 0) {   \
      const T c = *y;                                                     \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                 \
        o[i] = F(x[i], c);                                                \
    } else if (s[0] == (int64_t)sizeof(R) && s[1] == 0 && s[2] == st) {   \
      const T c = *x;                                                     \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                 \
        o[i] = F(c, y[i]);                                                \
    } else {                                                              \
      for (int64_t i = 0; i < n; i++)                                     \
        *(R *)(p[0] + i * s[0]) = F(*(const T *)(p[1] + i * s[1]),        \
                                    *(const T *)(p[2] + i * s[2]));       \
    }                                                                     \
  } while (0)

/* ---- iteration ---- */

/* cpu_foreach, with a shortcut for small operands that are contiguous or
 * constant (all strides 0): one run, without planning the iteration, which
 * costs more than the work on a tiny array. */
static int foreach(int nops, const ml_array *const *ops, cpu_run_fn fn,
                   void *ctx) {
  int64_t n = ml_array_numel(ops[0]);
  if (n >= CPU_PARALLEL_MIN) return cpu_foreach(nops, ops, fn, ctx);
  char *ptrs[CPU_MAX_OPERANDS];
  int64_t bs[CPU_MAX_OPERANDS];
  for (int i = 0; i < nops; i++) {
    const ml_array *a = ops[i];
    int64_t zero = 0;
    for (int d = 0; d < a->ndim; d++) zero |= a->strides[d];
    if (zero == 0 && n > 1)
      bs[i] = 0;
    else if (ml_array_is_contiguous(a))
      bs[i] = (int64_t)ml_dtype_size(a->dtype);
    else
      return cpu_foreach(nops, ops, fn, ctx);
    ptrs[i] = ml_array_data(a);
  }
  if (n > 0) fn(ctx, n, ptrs, bs);
  return ML_OK;
}

/* ---- unary ---- */

VECTOR_CLONES static void unary_f64(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_unop *)ctx) {
    case ML_NEG: RUN1(double, double, NEG); break;
    case ML_ABS: RUN1(double, double, fabs); break;
    case ML_SQRT: RUN1(double, double, sqrt); break;
    case ML_EXP: RUN1(double, double, exp_kernel); break;
    case ML_LOG: RUN1(double, double, log); break;
    case ML_LOG1P: RUN1(double, double, log1p); break;
    case ML_EXPM1: RUN1(double, double, expm1); break;
    case ML_SIN: RUN1(double, double, sin); break;
    case ML_COS: RUN1(double, double, cos); break;
    case ML_TANH: RUN1(double, double, tanh); break;
    case ML_SIGMOID: RUN1(double, double, sigmoid_kernel); break;
    case ML_ERF: RUN1(double, double, erf); break;
    case ML_FLOOR: RUN1(double, double, floor); break;
    case ML_CEIL: RUN1(double, double, ceil); break;
    case ML_ROUND: RUN1(double, double, nearbyint); break;
    case ML_NOT: RUN1(double, uint8_t, NOT); break;
    case ML_ISNAN: RUN1(double, uint8_t, ISNAN); break;
    case ML_ISINF: RUN1(double, uint8_t, ISINF); break;
    case ML_ISFINITE: RUN1(double, uint8_t, ISFINITE); break;
    default: break;
  }
}

VECTOR_CLONES static void unary_f32(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_unop *)ctx) {
    case ML_NEG: RUN1(float, float, NEG); break;
    case ML_ABS: RUN1(float, float, fabsf); break;
    case ML_SQRT: RUN1(float, float, sqrtf); break;
    case ML_EXP: RUN1(float, float, exp_kernel); break;
    case ML_LOG: RUN1(float, float, logf); break;
    case ML_LOG1P: RUN1(float, float, log1pf); break;
    case ML_EXPM1: RUN1(float, float, expm1f); break;
    case ML_SIN: RUN1(float, float, sinf); break;
    case ML_COS: RUN1(float, float, cosf); break;
    case ML_TANH: RUN1(float, float, tanhf); break;
    case ML_SIGMOID: RUN1(float, float, sigmoid_kernel); break;
    case ML_ERF: RUN1(float, float, erff); break;
    case ML_FLOOR: RUN1(float, float, floorf); break;
    case ML_CEIL: RUN1(float, float, ceilf); break;
    case ML_ROUND: RUN1(float, float, nearbyintf); break;
    case ML_NOT: RUN1(float, uint8_t, NOT); break;
    case ML_ISNAN: RUN1(float, uint8_t, ISNAN); break;
    case ML_ISINF: RUN1(float, uint8_t, ISINF); break;
    case ML_ISFINITE: RUN1(float, uint8_t, ISFINITE); break;
    default: break;
  }
}

VECTOR_CLONES static void unary_i64(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_unop *)ctx) {
    case ML_NEG: RUN1(int64_t, int64_t, ml_neg_int); break;
    case ML_ABS: RUN1(int64_t, int64_t, ml_abs_int); break;
    case ML_NOT: RUN1(int64_t, uint8_t, NOT); break;
    case ML_ISNAN: case ML_ISINF: RUN1(int64_t, uint8_t, NEVER); break;
    case ML_ISFINITE: RUN1(int64_t, uint8_t, ALWAYS); break;
    default: RUN1(int64_t, int64_t, SAME); break; /* floor ceil round */
  }
}

VECTOR_CLONES static void unary_i32(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_unop *)ctx) {
    case ML_NEG: RUN1(int32_t, int32_t, ml_neg_int); break;
    case ML_ABS: RUN1(int32_t, int32_t, ml_abs_int); break;
    case ML_NOT: RUN1(int32_t, uint8_t, NOT); break;
    case ML_ISNAN: case ML_ISINF: RUN1(int32_t, uint8_t, NEVER); break;
    case ML_ISFINITE: RUN1(int32_t, uint8_t, ALWAYS); break;
    default: RUN1(int32_t, int32_t, SAME); break;
  }
}

VECTOR_CLONES static void unary_u8(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_unop *)ctx) {
    case ML_NEG: RUN1(uint8_t, uint8_t, ml_neg_int); break;
    case ML_NOT: RUN1(uint8_t, uint8_t, NOT); break;
    case ML_ISNAN: case ML_ISINF: RUN1(uint8_t, uint8_t, NEVER); break;
    case ML_ISFINITE: RUN1(uint8_t, uint8_t, ALWAYS); break;
    default: RUN1(uint8_t, uint8_t, SAME); break; /* abs floor ceil round */
  }
}

static const cpu_run_fn unary_runs[ML_NDTYPES] = {unary_u8, unary_i32,
                                                  unary_i64, unary_f32,
                                                  unary_f64};

static int float_only(ml_unop op) {
  return op != ML_NEG && op != ML_ABS && op != ML_FLOOR && op != ML_CEIL &&
         op != ML_ROUND && op != ML_NOT && op != ML_ISNAN && op != ML_ISINF &&
         op != ML_ISFINITE;
}

int cpu_unary(ml_unop op, const ml_array *out, const ml_array *a) {
  if (float_only(op) && !ml_dtype_is_float(a->dtype))
    return ml_fail(ML_EINVAL, "cpu: unary op %d needs a float operand, not %s",
                   (int)op, ml_dtype_name(a->dtype));
  const ml_array *ops[2] = {out, a};
  return foreach(2, ops, unary_runs[a->dtype], &op);
}

/* ---- binary ---- */

VECTOR_CLONES static void binary_f64(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_binop *)ctx) {
    case ML_ADD: RUN2(double, double, ADD); break;
    case ML_SUB: RUN2(double, double, SUB); break;
    case ML_MUL: RUN2(double, double, MUL); break;
    case ML_DIV: RUN2(double, double, DIV); break;
    case ML_POW: RUN2(double, double, pow); break;
    case ML_IDIV: RUN2(double, double, ml_idiv_float); break;
    case ML_MOD: RUN2(double, double, ml_mod_float); break;
    case ML_MINIMUM: RUN2(double, double, MIN_NAN); break;
    case ML_MAXIMUM: RUN2(double, double, MAX_NAN); break;
    case ML_EQ: RUN2(double, uint8_t, EQ); break;
    case ML_NE: RUN2(double, uint8_t, NE); break;
    case ML_LT: RUN2(double, uint8_t, LT); break;
    case ML_LE: RUN2(double, uint8_t, LE); break;
    case ML_GT: RUN2(double, uint8_t, GT); break;
    case ML_GE: RUN2(double, uint8_t, GE); break;
    default: break;
  }
}

VECTOR_CLONES static void binary_f32(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_binop *)ctx) {
    case ML_ADD: RUN2(float, float, ADD); break;
    case ML_SUB: RUN2(float, float, SUB); break;
    case ML_MUL: RUN2(float, float, MUL); break;
    case ML_DIV: RUN2(float, float, DIV); break;
    case ML_POW: RUN2(float, float, powf); break;
    case ML_IDIV: RUN2(float, float, ml_idiv_float); break;
    case ML_MOD: RUN2(float, float, ml_mod_float); break;
    case ML_MINIMUM: RUN2(float, float, MIN_NAN); break;
    case ML_MAXIMUM: RUN2(float, float, MAX_NAN); break;
    case ML_EQ: RUN2(float, uint8_t, EQ); break;
    case ML_NE: RUN2(float, uint8_t, NE); break;
    case ML_LT: RUN2(float, uint8_t, LT); break;
    case ML_LE: RUN2(float, uint8_t, LE); break;
    case ML_GT: RUN2(float, uint8_t, GT); break;
    case ML_GE: RUN2(float, uint8_t, GE); break;
    default: break;
  }
}

VECTOR_CLONES static void binary_i64(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_binop *)ctx) {
    case ML_ADD: RUN2(int64_t, int64_t, ml_add_int); break;
    case ML_SUB: RUN2(int64_t, int64_t, ml_sub_int); break;
    case ML_MUL: RUN2(int64_t, int64_t, ml_mul_int); break;
    case ML_POW: RUN2(int64_t, int64_t, ml_pow_int); break;
    case ML_IDIV: RUN2(int64_t, int64_t, ml_idiv_int); break;
    case ML_MOD: RUN2(int64_t, int64_t, ml_mod_int); break;
    case ML_MINIMUM: RUN2(int64_t, int64_t, MIN); break;
    case ML_MAXIMUM: RUN2(int64_t, int64_t, MAX); break;
    case ML_EQ: RUN2(int64_t, uint8_t, EQ); break;
    case ML_NE: RUN2(int64_t, uint8_t, NE); break;
    case ML_LT: RUN2(int64_t, uint8_t, LT); break;
    case ML_LE: RUN2(int64_t, uint8_t, LE); break;
    case ML_GT: RUN2(int64_t, uint8_t, GT); break;
    case ML_GE: RUN2(int64_t, uint8_t, GE); break;
    default: break;
  }
}

VECTOR_CLONES static void binary_i32(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_binop *)ctx) {
    case ML_ADD: RUN2(int32_t, int32_t, ml_add_int); break;
    case ML_SUB: RUN2(int32_t, int32_t, ml_sub_int); break;
    case ML_MUL: RUN2(int32_t, int32_t, ml_mul_int); break;
    case ML_POW: RUN2(int32_t, int32_t, ml_pow_int); break;
    case ML_IDIV: RUN2(int32_t, int32_t, ml_idiv_int); break;
    case ML_MOD: RUN2(int32_t, int32_t, ml_mod_int); break;
    case ML_MINIMUM: RUN2(int32_t, int32_t, MIN); break;
    case ML_MAXIMUM: RUN2(int32_t, int32_t, MAX); break;
    case ML_EQ: RUN2(int32_t, uint8_t, EQ); break;
    case ML_NE: RUN2(int32_t, uint8_t, NE); break;
    case ML_LT: RUN2(int32_t, uint8_t, LT); break;
    case ML_LE: RUN2(int32_t, uint8_t, LE); break;
    case ML_GT: RUN2(int32_t, uint8_t, GT); break;
    case ML_GE: RUN2(int32_t, uint8_t, GE); break;
    default: break;
  }
}

VECTOR_CLONES static void binary_u8(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const ml_binop *)ctx) {
    case ML_ADD: RUN2(uint8_t, uint8_t, ADD); break;
    case ML_SUB: RUN2(uint8_t, uint8_t, SUB); break;
    case ML_MUL: RUN2(uint8_t, uint8_t, MUL); break;
    case ML_POW: RUN2(uint8_t, uint8_t, ml_pow_int); break;
    case ML_IDIV: RUN2(uint8_t, uint8_t, ml_idiv_int); break;
    case ML_MOD: RUN2(uint8_t, uint8_t, ml_mod_int); break;
    case ML_MINIMUM: RUN2(uint8_t, uint8_t, MIN); break;
    case ML_MAXIMUM: RUN2(uint8_t, uint8_t, MAX); break;
    case ML_EQ: RUN2(uint8_t, uint8_t, EQ); break;
    case ML_NE: RUN2(uint8_t, uint8_t, NE); break;
    case ML_LT: RUN2(uint8_t, uint8_t, LT); break;
    case ML_LE: RUN2(uint8_t, uint8_t, LE); break;
    case ML_GT: RUN2(uint8_t, uint8_t, GT); break;
    case ML_GE: RUN2(uint8_t, uint8_t, GE); break;
    default: break;
  }
}

static const cpu_run_fn binary_runs[ML_NDTYPES] = {binary_u8, binary_i32,
                                                   binary_i64, binary_f32,
                                                   binary_f64};

static int check_binary(ml_binop op, ml_dtype t) {
  if (op == ML_DIV && !ml_dtype_is_float(t))
    return ml_fail(ML_EINVAL, "cpu: div needs float operands, not %s",
                   ml_dtype_name(t));
  return ML_OK;
}

int cpu_binary(ml_binop op, const ml_array *out, const ml_array *a,
               const ml_array *b) {
  int rc = check_binary(op, a->dtype);
  if (rc) return rc;
  const ml_array *ops[3] = {out, a, b};
  return foreach(3, ops, binary_runs[a->dtype], &op);
}

/* The scalar becomes a zero-stride view of a local value of a's shape. */
int cpu_binary_scalar(ml_binop op, const ml_array *out, const ml_array *a,
                      ml_scalar s, int reversed) {
  int rc = check_binary(op, a->dtype);
  if (rc) return rc;
  uint64_t value;
  ml_scalar_store(&value, a->dtype, s);
  ml_storage storage = {1, ml_cpu(), sizeof value, &value};
  ml_array c = *a;
  c.storage = &storage;
  c.offset = 0;
  memset(c.strides, 0, sizeof c.strides);
  const ml_array *ops[3] = {out, reversed ? &c : a, reversed ? a : &c};
  return foreach(3, ops, binary_runs[a->dtype], &op);
}

/* ---- where ---- */

/* o = c ? x : y, moving elements of 1, 4 or 8 bytes. */
#define RUN_WHERE(T)                                                         \
  do {                                                                       \
    const int64_t st = (int64_t)sizeof(T);                                   \
    if (s[0] == st && s[1] == 1 && s[2] == st && s[3] == st) {               \
      T *o = (T *)p[0];                                                      \
      const uint8_t *c = (const uint8_t *)p[1];                              \
      const T *x = (const T *)p[2], *y = (const T *)p[3];                    \
      _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                    \
        o[i] = c[i] ? x[i] : y[i];                                           \
    } else {                                                                 \
      for (int64_t i = 0; i < n; i++)                                        \
        *(T *)(p[0] + i * s[0]) = p[1][i * s[1]]                             \
                                      ? *(const T *)(p[2] + i * s[2])        \
                                      : *(const T *)(p[3] + i * s[3]);       \
    }                                                                        \
  } while (0)

VECTOR_CLONES static void where_run(void *ctx, int64_t n, char *const *p,
                                  const int64_t *s) {
  switch (*(const size_t *)ctx) {
    case 1: RUN_WHERE(uint8_t); break;
    case 4: RUN_WHERE(uint32_t); break;
    default: RUN_WHERE(uint64_t); break;
  }
}

int cpu_where(const ml_array *out, const ml_array *cond, const ml_array *a,
              const ml_array *b) {
  size_t size = ml_dtype_size(out->dtype);
  const ml_array *ops[4] = {out, cond, a, b};
  return foreach(4, ops, where_run, &size);
}
