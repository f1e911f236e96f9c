/* Elementwise operations with NumPy 2 broadcasting and type promotion.
 *
 * Each function checks that its operands live on one device, broadcasts
 * their shapes (NumPy rules), chooses the computation and result dtypes,
 * converts operands whose dtype differs from the computation dtype,
 * allocates out (a new contiguous array of the broadcast shape) and
 * dispatches to the device's backend. out must be an empty (zeroed) array
 * or may be one of the operands: what it held is released only on
 * success. Errors name the operation and the shapes, dtypes or devices:
 * "add: shapes 3x4 and 4x3 do not broadcast".
 *
 * Dtypes. Two arrays compute in ml_dtype_promote(a, b). A scalar is weak
 * (NumPy 2's rule for Python numbers): it takes the array's dtype, except
 * that a float scalar lifts an integer array to float64; an integer scalar
 * out of range of a uint8 or int32 array is an error ("add: 300 is out of
 * range for uint8") except in comparisons, which then compare exactly, and
 * in div, which computes integers in float64 (300 / uint8_array too).
 * Results:
 * - add sub mul pow idiv mod minimum maximum: the computation dtype;
 * - div: float64 when the computation dtype is an integer (true division);
 * - eq ne lt le gt ge, logical_not, isnan isinf isfinite: uint8 (0 or 1);
 * - neg abs floor ceil round: the operand's dtype (on integers floor, ceil
 *   and round are the identity; round is half to even);
 * - sqrt exp log log1p expm1 sin cos tanh sigmoid: float32 or float64 as
 *   the operand, float64 for integer operands.
 * Integer arithmetic wraps; integer idiv and mod by zero give 0; integer
 * pow with a negative exponent is an error, as in NumPy ("pow: integers to
 * negative integer powers are not allowed"; for an array of exponents this
 * costs a reduction over them);
 * minimum and maximum propagate NaN; comparisons with NaN are false except
 * ne. See src/cpu/cpu_elementwise.c for the exact rules. */
#ifndef ML_ELEMENTWISE_H
#define ML_ELEMENTWISE_H

#include "array.h"
#include "ops.h"

/* The result dtype of op on an operand of dtype t. */
ml_dtype ml_unary_dtype(ml_unop op, ml_dtype t);
/* The result dtype of op on operands of dtypes a and b. */
ml_dtype ml_binary_dtype(ml_binop op, ml_dtype a, ml_dtype b);

/* out = op(a). */
int ml_unary(ml_unop op, ml_array *out, const ml_array *a);

/* out = a op b, broadcasting a and b. */
int ml_binary(ml_binop op, ml_array *out, const ml_array *a,
              const ml_array *b);

/* out = a op s, or s op a when reversed; s is a weak scalar. */
int ml_binary_scalar(ml_binop op, ml_array *out, const ml_array *a,
                     ml_scalar s, int reversed);

/* out = cond ? a : b elementwise, broadcasting all three. cond of any
 * dtype (nonzero, NaN included, is true); a and b promote. */
int ml_where(ml_array *out, const ml_array *cond, const ml_array *a,
             const ml_array *b);

/* out = min(max(a, *lo), *hi) (NumPy's clip); lo or hi may be NULL, not
 * both. The bounds are weak scalars, except that an integer bound outside
 * an integer dtype's range saturates to it (clamp(uint8, -1, 300) is the
 * identity). NaN stays NaN; lo > hi gives hi. */
int ml_clamp(ml_array *out, const ml_array *a, const ml_scalar *lo,
             const ml_scalar *hi);

#endif
