/* Shape operations that may copy: reshape, flatten, cat, stack, split.
 *
 * The pure views (transpose, permute, narrow, ...) are in view.h. Here out
 * is an empty (zeroed) array or, where an operation takes a single array,
 * a itself; what it held is released. Dimensions are 0-based and already
 * normalised (ml_norm_dim). `op` names the operation in error messages. */
#ifndef ML_SHAPE_H
#define ML_SHAPE_H

#include "array.h"

/* out: a with a new shape of the same size (one entry may be -1, inferred).
 * A view of a when the strides allow it, else a view of a contiguous copy. */
int ml_reshape(const char *op, ml_array *out, const ml_array *a, int ndim,
               const int64_t *shape);
/* The same, but always a view: an error when a copy would be needed. */
int ml_view(const char *op, ml_array *out, const ml_array *a, int ndim,
            const int64_t *shape);
/* Merges dimensions start..end (inclusive, start <= end) into one, as
 * reshape does; a 0-d array becomes 1-D of one element. */
int ml_flatten(ml_array *out, const ml_array *a, int start, int end);

/* out: a new array joining the n arrays along dim. They must have one
 * number of dimensions (at least 1), one device, and equal sizes except
 * along dim; the dtype is their promotion. */
int ml_cat(ml_array *out, int n, const ml_array *const *arrays, int dim);
/* out: a new array with the n arrays (of one shape and device) along a new
 * dimension dim (0..ndim). */
int ml_stack(ml_array *out, int n, const ml_array *const *arrays, int dim);
/* outs[i] (n empty arrays): views of consecutive pieces of a along dim, of
 * sizes[i] elements; the sizes (>= 0) must add up to a's size along dim. */
int ml_split(ml_array *const *outs, const ml_array *a, int dim, int n,
             const int64_t *sizes);

#endif
