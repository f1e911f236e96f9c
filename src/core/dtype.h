/* Element types, their promotion rules (NumPy 2) and tagged scalars. */
#ifndef ML_DTYPE_H
#define ML_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* Order matters only for the promotion table in dtype.c. */
typedef enum {
  ML_UINT8 = 0, /* also the boolean type: comparisons yield 0 or 1 */
  ML_INT32,
  ML_INT64,
  ML_FLOAT32,
  ML_FLOAT64,
  ML_NDTYPES
} ml_dtype;

size_t ml_dtype_size(ml_dtype t);
const char *ml_dtype_name(ml_dtype t);
/* Accepts the five names and the aliases "float", "double", "int", "long",
 * "bool", "byte". Returns 0 when the name is unknown. */
int ml_dtype_parse(const char *name, ml_dtype *out);
int ml_dtype_is_float(ml_dtype t);
/* The dtype of an operation mixing a and b, by NumPy 2's table. */
ml_dtype ml_dtype_promote(ml_dtype a, ml_dtype b);

/* A number from Lua: an exact integer or a double. */
typedef struct {
  int is_int;
  int64_t i;
  double f;
} ml_scalar;

ml_scalar ml_scalar_int(int64_t v);
ml_scalar ml_scalar_float(double v);
double ml_scalar_to_double(ml_scalar s);
/* Truncates a double toward zero, saturating at the int64 limits. */
int64_t ml_scalar_to_int64(ml_scalar s);
/* Stores s into *p as dtype t (C conversion rules; uint8 and int32 wrap). */
void ml_scalar_store(void *p, ml_dtype t, ml_scalar s);
ml_scalar ml_scalar_load(const void *p, ml_dtype t);
/* Whether s fits dtype t without overflow: the NumPy 2 rule that a Python
 * int out of range of an integer array's dtype is an error. */
int ml_scalar_fits(ml_scalar s, ml_dtype t);
/* Whether s can be stored into an array of dtype t, by NumPy 2's rule for
 * assigning a Python number: into an integer dtype, an integer must fit,
 * and a float is truncated toward zero and must then fit (NaN and the
 * infinities never do); floats take any number. */
int ml_scalar_storable(ml_scalar s, ml_dtype t);
/* ML_OK when s is storable in dtype t, else ML_EINVAL with the message
 * "op: 300.5 is out of range for uint8" (without "op: " when op is NULL,
 * for the binding to name the operation the user called). */
int ml_scalar_check_store(const char *op, ml_scalar s, ml_dtype t);

/* The dtype an operation with a weak scalar s takes against an array of
 * dtype t: t itself, except that a float scalar lifts integers to float64. */
ml_dtype ml_dtype_with_scalar(ml_dtype t, ml_scalar s);

#endif
