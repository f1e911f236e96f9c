/* Matrix products: matmul with NumPy's semantics, and the stricter entry
 * points mm, mv, dot and outer that check their operands' dimensions.
 *
 * Operands of different dtypes are converted to their promotion; both must
 * be on one device. Results are new contiguous arrays; out is an empty
 * (zeroed) array. Integer products wrap around as in NumPy. */
#ifndef ML_MATMUL_H
#define ML_MATMUL_H

#include "array.h"

/* out = a @ b. Both have at least one dimension; a 1-D a is taken as a row
 * (1 x k) and a 1-D b as a column (k x 1), and the added dimension is
 * dropped from the result. Dimensions before the last two are batch
 * dimensions and broadcast. `op` names the operation in errors:
 * "matmul: shapes 2x3 and 4x5 are not aligned (3 != 4)". */
int ml_matmul(const char *op, ml_array *out, const ml_array *a,
              const ml_array *b);
/* 2-D x 2-D. */
int ml_mm(ml_array *out, const ml_array *a, const ml_array *b);
/* 2-D x 1-D: a 1-D result. */
int ml_mv(ml_array *out, const ml_array *a, const ml_array *b);
/* 1-D . 1-D of one length: a 0-d result. */
int ml_dot(ml_array *out, const ml_array *a, const ml_array *b);
/* 1-D x 1-D: out[i][j] = a[i] * b[j]. */
int ml_outer(ml_array *out, const ml_array *a, const ml_array *b);

#endif
