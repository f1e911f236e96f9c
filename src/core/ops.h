/* The operations of the general backend interface, by kind: elementwise
 * unary and binary operations, reductions and random distributions, and
 * the names that messages give them (the Lua names), for the core and the
 * backends alike. Each backend implements all of them (backend.h). Plain C
 * that also compiles as CUDA C++ (host code). */
#ifndef ML_OPS_H
#define ML_OPS_H

typedef enum {
  ML_NEG, ML_ABS, ML_SQRT, ML_EXP, ML_LOG, ML_LOG1P, ML_EXPM1, ML_SIN,
  ML_COS, ML_TANH, ML_SIGMOID, ML_ERF, ML_FLOOR, ML_CEIL, ML_ROUND, ML_NOT,
  ML_ISNAN, ML_ISINF, ML_ISFINITE, ML_NUNARY
} ml_unop;

typedef enum {
  ML_ADD, ML_SUB, ML_MUL, ML_DIV, ML_POW, ML_IDIV, ML_MOD, ML_MINIMUM,
  ML_MAXIMUM, ML_EQ, ML_NE, ML_LT, ML_LE, ML_GT, ML_GE, ML_NBINARY
} ml_binop;

typedef enum {
  ML_SUM, ML_PROD, ML_MIN, ML_MAX, ML_ARGMIN, ML_ARGMAX, ML_MEAN, ML_VAR,
  ML_NORM2, ML_LOGSUMEXP, ML_ANY, ML_ALL, ML_STD, ML_NORM1, ML_NORMINF,
  ML_NREDUCE
} ml_redop;

typedef enum { ML_RAND_UNIFORM, ML_RAND_NORMAL, ML_RAND_INT } ml_randkind;

static inline const char *ml_unop_name(ml_unop op) {
  static const char *const names[ML_NUNARY] = {
      "neg", "abs", "sqrt", "exp", "log", "log1p", "expm1", "sin", "cos",
      "tanh", "sigmoid", "erf", "floor", "ceil", "round", "logical_not",
      "isnan", "isinf", "isfinite"};
  return names[op];
}

static inline const char *ml_binop_name(ml_binop op) {
  static const char *const names[ML_NBINARY] = {
      "add", "sub", "mul", "div", "pow", "idiv", "mod", "minimum", "maximum",
      "eq", "ne", "lt", "le", "gt", "ge"};
  return names[op];
}

static inline const char *ml_redop_name(ml_redop op) {
  static const char *const names[ML_NREDUCE] = {
      "sum", "prod", "min", "max", "argmin", "argmax", "mean", "var", "norm",
      "logsumexp", "any", "all", "std", "norm", "norm"};
  return names[op];
}

#endif
