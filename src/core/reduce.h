/* Reductions and cumulative sums and products: validation, result dtypes
 * and layout; the backend's reduce, cumsum and cumprod entries do the
 * arithmetic. out receives a new
 * array (what it held is released); on an error it is left untouched. */
#ifndef ML_REDUCE_H
#define ML_REDUCE_H

#include "array.h"
#include "ops.h"

/* out = op(a) over dimension dim (0-based), or over every element when dim
 * is -1 (a 0-d result). keepdim keeps the reduced dimensions with size 1.
 * ddof is VAR's and STD's delta degrees of freedom (divisor n - ddof).
 * Result dtypes: SUM, PROD: float stays, integers give int64; MIN, MAX:
 * a's dtype; ARGMIN, ARGMAX: int64, 1-based (C order over a when dim is
 * -1); MEAN, VAR, STD, NORM*, LOGSUMEXP: float stays, integers give
 * float64; ANY, ALL: uint8. Empty inputs give the identities documented in
 * backend.h; MIN, MAX, ARGMIN and ARGMAX of nothing are errors. */
int ml_reduce(ml_redop op, ml_array *out, const ml_array *a, int dim,
              int keepdim, int64_t ddof);

/* out = running sums of a along dim (0-based), of a's shape; dim -1 scans a
 * flattened in C order into a 1-D result. Floats keep their dtype (float32
 * accumulates in double); integers give int64. */
int ml_cumsum(ml_array *out, const ml_array *a, int dim);
/* out = running products, as ml_cumsum (float32 multiplies in double). */
int ml_cumprod(ml_array *out, const ml_array *a, int dim);

/* out = the softmax of a along dim (0-based; -1: the last), or its log
 * (logs), of a's shape; lse (unless NULL) = the logsumexp along dim, kept
 * with size 1. Floats keep their dtype, integers give float64; a 0-d a
 * counts as one element. */
int ml_softmax(ml_array *out, ml_array *lse, const ml_array *a, int dim,
               int logs);

#endif
