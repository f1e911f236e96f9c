/* Elementwise operations: unary, binary (array with array or with a
 * scalar) and where, over the map engine of map.cuh (a flat path with
 * 16-byte loads and stores when every operand is contiguous or a single
 * element, else a strided path over up to 8 coalesced dimensions).
 *
 * CPU reference: src/cpu/cpu_elementwise.c, whose semantics these follow:
 * integer + - * and negation wrap; idiv and mod are floor division and
 * modulo (mod takes the divisor's sign), by zero 0 for integers and IEEE
 * for floats; integer pow is exact by squaring (a negative exponent gives
 * 0 except for bases 1 and -1); minimum and maximum propagate NaN; round
 * is half to even. Where the CPU computes a float32 operation in double
 * (exp, sigmoid, idiv, mod; pow here too, for accuracy) so does the GPU,
 * which keeps the two within an ulp or so; other float32 math uses CUDA's
 * float functions (within 2 ulp of libm's). Only add, sub, mul and div get
 * one kernel per operation; the others share a kernel per dtype and switch
 * on the operation, a uniform branch next to the memory traffic.
 * Operations on at most 1024 contiguous elements are not launched one by
 * one: they go through the batch of elementwise_batch.cuh. */
#include <type_traits>

#include "elementwise_batch.cuh"

/* 1 / (1 + exp(-x)) from exp(-|x|), as the CPU computes it. */
__device__ __forceinline__ double sigmoid(double x) {
  double e = exp(-fabs(x)), r = 1.0 / (1.0 + e);
  return x < 0 ? e * r : r;
}

/* ---- functors ---- */

template <class T> struct Add {
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value)
      return (T)((uint64_t)a + (uint64_t)b);
    else
      return a + b;
  }
};

template <class T> struct Sub {
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value)
      return (T)((uint64_t)a - (uint64_t)b);
    else
      return a - b;
  }
};

template <class T> struct Mul {
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value)
      return (T)((uint64_t)a * (uint64_t)b);
    else
      return a * b;
  }
};

template <class T> struct Div {
  __device__ __forceinline__ T operator()(T a, T b) const { return a / b; }
};

/* pow, idiv, mod, minimum, maximum. */
template <class T> struct Arith {
  ml_binop op;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      switch (op) {
        case ML_POW: return (T)ml_pow_int(a, b);
        case ML_IDIV: return (T)ml_idiv_int(a, b);
        case ML_MOD: return (T)ml_mod_int(a, b);
        case ML_MINIMUM: return a < b ? a : b;
        default: return a > b ? a : b;
      }
    } else {
      switch (op) {
        case ML_POW: return (T)pow((double)a, (double)b);
        case ML_IDIV: return (T)ml_idiv_float(a, b);
        case ML_MOD: return (T)ml_mod_float(a, b);
        case ML_MINIMUM: return (a < b || a != a) ? a : b;
        default: return (a > b || a != a) ? a : b;
      }
    }
  }
};

template <class T> struct Compare {
  ml_binop op;
  __device__ __forceinline__ uint8_t operator()(T a, T b) const {
    switch (op) {
      case ML_EQ: return a == b;
      case ML_NE: return a != b;
      case ML_LT: return a < b;
      case ML_LE: return a <= b;
      case ML_GT: return a > b;
      default: return a >= b;
    }
  }
};

/* Unary operations with a result of a's dtype. Integers: neg, abs and
 * (identities) floor, ceil, round only. */
template <class T> struct Unary {
  ml_unop op;
  __device__ __forceinline__ T operator()(T x) const {
    if constexpr (std::is_integral<T>::value) {
      switch (op) {
        case ML_NEG: return (T)(0 - (uint64_t)x);
        case ML_ABS:
          if constexpr (std::is_signed<T>::value)
            return x < 0 ? (T)(0 - (uint64_t)x) : x;
          else
            return x;
        default: return x;
      }
    } else {
      switch (op) {
        case ML_NEG: return -x;
        case ML_ABS: return fabs(x);
        case ML_SQRT: return sqrt(x);
        case ML_EXP: return (T)exp((double)x);
        case ML_LOG: return log(x);
        case ML_LOG1P: return log1p(x);
        case ML_EXPM1: return expm1(x);
        case ML_SIN: return sin(x);
        case ML_COS: return cos(x);
        case ML_TANH: return tanh(x);
        case ML_SIGMOID: return (T)sigmoid((double)x);
        case ML_ERF: return erf(x);
        case ML_FLOOR: return floor(x);
        case ML_CEIL: return ceil(x);
        default: return rint(x);
      }
    }
  }
};

/* not, isnan, isinf, isfinite: any dtype to uint8. */
template <class T> struct Test {
  ml_unop op;
  __device__ __forceinline__ uint8_t operator()(T x) const {
    if (op == ML_NOT) return x == 0;
    if constexpr (std::is_integral<T>::value) {
      return op == ML_ISFINITE;
    } else {
      switch (op) {
        case ML_ISNAN: return x != x;
        case ML_ISINF: return fabs(x) == (T)INFINITY;
        default: return fabs(x) < (T)INFINITY;
      }
    }
  }
};

template <class T> struct Select {
  __device__ __forceinline__ T operator()(uint8_t c, T a, T b) const {
    return c ? a : b;
  }
};

/* ---- launchers ---- */

/* A view of a's shape with zero strides: the iteration's slot for a value
 * passed to the kernel rather than read from memory. */
static ml_array value_slot(const ml_array *a) {
  ml_array v = *a;
  for (int d = 0; d < v.ndim; d++) v.strides[d] = 0;
  return v;
}

template <class O, class T, class F>
static int run_unary(cuda_dev *d, const ml_array *out, const ml_array *a, F f) {
  const ml_array *ops[2] = {out, a};
  Iter<2> it = iter_of<2>(ops);
  Map1<F, O, T> m;
  m.o = array_ptr<O>(out);
  m.a = in_array<T>(a, iter_step(it, 1));
  m.f = f;
  return map_queue(d, it, ml_array_numel(out), m, "unary");
}

template <class T>
static int unary_typed(cuda_dev *d, ml_unop op, const ml_array *out, const ml_array *a) {
  if (op == ML_NOT || op == ML_ISNAN || op == ML_ISINF || op == ML_ISFINITE)
    return run_unary<uint8_t, T>(d, out, a, Test<T>{op});
  return run_unary<T, T>(d, out, a, Unary<T>{op});
}

extern "C" int cuda_unary(ml_unop op, const ml_array *out, const ml_array *a) {
  int test = op == ML_NOT || op == ML_ISNAN || op == ML_ISINF || op == ML_ISFINITE;
  int int_ok = test || op == ML_NEG || op == ML_ABS || op == ML_FLOOR ||
               op == ML_CEIL || op == ML_ROUND;
  if (!int_ok && !ml_dtype_is_float(a->dtype))
    return ml_fail(ML_EINVAL, "cuda: unary op %d needs a float operand, not %s",
                   (int)op, ml_dtype_name(a->dtype));
  cuda_dev *d;
  int rc = cuda_select(array_device(out), &d);
  if (rc) return rc;
  switch (a->dtype) {
    case ML_UINT8: return unary_typed<uint8_t>(d, op, out, a);
    case ML_INT32: return unary_typed<int32_t>(d, op, out, a);
    case ML_INT64: return unary_typed<int64_t>(d, op, out, a);
    case ML_FLOAT32: return unary_typed<float>(d, op, out, a);
    default: return unary_typed<double>(d, op, out, a);
  }
}

/* out = a op b where either input may be a value (scalar) instead. */
template <class O, class T, class F>
static int run_binary(cuda_dev *d, const ml_array *out, const ml_array *a,
                      const ml_array *b, const T *value, int reversed, F f) {
  ml_array slot;
  if (value) slot = value_slot(a);
  const ml_array *x = value && reversed ? &slot : a;
  const ml_array *y = value && !reversed ? &slot : value ? a : b;
  const ml_array *ops[3] = {out, x, y};
  Iter<3> it = iter_of<3>(ops);
  Map2<F, O, T, T> m;
  m.o = array_ptr<O>(out);
  m.a = x == &slot ? in_value<T>(*value) : in_array<T>(x, iter_step(it, 1));
  m.b = y == &slot ? in_value<T>(*value) : in_array<T>(y, iter_step(it, 2));
  m.f = f;
  return map_queue(d, it, ml_array_numel(out), m, "binary");
}

template <class T>
static int binary_typed(cuda_dev *d, ml_binop op, const ml_array *out, const ml_array *a,
                        const ml_array *b, const T *value, int reversed) {
  switch (op) {
    case ML_ADD: return run_binary<T, T>(d, out, a, b, value, reversed, Add<T>{});
    case ML_SUB: return run_binary<T, T>(d, out, a, b, value, reversed, Sub<T>{});
    case ML_MUL: return run_binary<T, T>(d, out, a, b, value, reversed, Mul<T>{});
    case ML_DIV: return run_binary<T, T>(d, out, a, b, value, reversed, Div<T>{});
    case ML_EQ: case ML_NE: case ML_LT: case ML_LE: case ML_GT: case ML_GE:
      return run_binary<uint8_t, T>(d, out, a, b, value, reversed, Compare<T>{op});
    default: return run_binary<T, T>(d, out, a, b, value, reversed, Arith<T>{op});
  }
}

/* Integer division has no kernel: the core makes int / int float. */
template <class T>
static int binary_checked(cuda_dev *d, ml_binop op, const ml_array *out, const ml_array *a,
                          const ml_array *b, const T *value, int reversed) {
  if constexpr (std::is_integral<T>::value) {
    if (op == ML_DIV)
      return ml_fail(ML_EINVAL, "cuda: div needs float operands, not %s",
                     ml_dtype_name(a->dtype));
    return binary_typed<T>(d, op, out, a, b, value, reversed);
  } else {
    return binary_typed<T>(d, op, out, a, b, value, reversed);
  }
}

template <class T>
static int binary_dispatch(cuda_dev *d, ml_binop op, const ml_array *out, const ml_array *a,
                           const ml_array *b, const ml_scalar *s, int reversed) {
  T v;
  if (s) ml_scalar_store(&v, a->dtype, *s);
  return binary_checked<T>(d, op, out, a, b, s ? &v : nullptr, reversed);
}

static int binary_any(ml_binop op, const ml_array *out, const ml_array *a, const ml_array *b,
                      const ml_scalar *s, int reversed) {
  cuda_dev *d;
  int rc = cuda_select(array_device(out), &d);
  if (rc) return rc;
  switch (a->dtype) {
    case ML_UINT8: return binary_dispatch<uint8_t>(d, op, out, a, b, s, reversed);
    case ML_INT32: return binary_dispatch<int32_t>(d, op, out, a, b, s, reversed);
    case ML_INT64: return binary_dispatch<int64_t>(d, op, out, a, b, s, reversed);
    case ML_FLOAT32: return binary_dispatch<float>(d, op, out, a, b, s, reversed);
    default: return binary_dispatch<double>(d, op, out, a, b, s, reversed);
  }
}

extern "C" int cuda_binary(ml_binop op, const ml_array *out, const ml_array *a,
                           const ml_array *b) {
  return binary_any(op, out, a, b, nullptr, 0);
}

extern "C" int cuda_binary_scalar(ml_binop op, const ml_array *out, const ml_array *a,
                                  ml_scalar s, int reversed) {
  return binary_any(op, out, a, nullptr, &s, reversed);
}

/* where moves elements of 1, 4 or 8 bytes whatever the dtype. */
template <class U>
static int where_sized(cuda_dev *d, const ml_array *out, const ml_array *cond,
                      const ml_array *a, const ml_array *b) {
  const ml_array *ops[4] = {out, cond, a, b};
  Iter<4> it = iter_of<4>(ops);
  Map3<Select<U>, U, uint8_t, U, U> m;
  m.o = array_ptr<U>(out);
  m.a = in_array<uint8_t>(cond, iter_step(it, 1));
  m.b = in_array<U>(a, iter_step(it, 2));
  m.c = in_array<U>(b, iter_step(it, 3));
  return map_queue(d, it, ml_array_numel(out), m, "where");
}

extern "C" int cuda_where(const ml_array *out, const ml_array *cond, const ml_array *a,
                          const ml_array *b) {
  cuda_dev *d;
  int rc = cuda_select(array_device(out), &d);
  if (rc) return rc;
  switch (ml_dtype_size(out->dtype)) {
    case 1: return where_sized<uint8_t>(d, out, cond, a, b);
    case 4: return where_sized<uint32_t>(d, out, cond, a, b);
    default: return where_sized<uint64_t>(d, out, cond, a, b);
  }
}
