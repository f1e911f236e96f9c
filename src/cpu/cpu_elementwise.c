/* PLACEHOLDER: replaced by the area owner. */
#include "../core/status.h"
#include "cpu.h"

int cpu_unary(ml_unop op, const ml_array *out, const ml_array *a) {
  (void)op;
  (void)out;
  (void)a;
  return ml_fail(ML_EINVAL, "cpu_unary: not implemented");
}

int cpu_binary(ml_binop op, const ml_array *out, const ml_array *a, const ml_array *b) {
  (void)op;
  (void)out;
  (void)a;
  (void)b;
  return ml_fail(ML_EINVAL, "cpu_binary: not implemented");
}

int cpu_binary_scalar(ml_binop op, const ml_array *out, const ml_array *a, ml_scalar s, int reversed) {
  (void)op;
  (void)out;
  (void)a;
  (void)s;
  (void)reversed;
  return ml_fail(ML_EINVAL, "cpu_binary_scalar: not implemented");
}

int cpu_where(const ml_array *out, const ml_array *cond, const ml_array *a, const ml_array *b) {
  (void)out;
  (void)cond;
  (void)a;
  (void)b;
  return ml_fail(ML_EINVAL, "cpu_where: not implemented");
}

