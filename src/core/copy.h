/* Copies, conversions, fills and moves between devices. */
#ifndef ML_COPY_H
#define ML_COPY_H

#include "array.h"

/* Writes src into the view dst, broadcasting src to dst's shape and
 * converting dtypes; both on one device. Overlapping views are copied
 * through a temporary. */
int ml_copy(const char *op, const ml_array *dst, const ml_array *src);
/* out: a new contiguous array of dtype t with a's values. */
int ml_astype(ml_array *out, const ml_array *a, ml_dtype t);
/* out: a itself (shared) when already contiguous, else a contiguous copy. */
int ml_contiguous(ml_array *out, const ml_array *a);
/* out: a's values, contiguous, of dtype t: a itself when it is so. */
int ml_contiguous_as(ml_array *out, const ml_array *a, ml_dtype t);
/* *a replaced by its values as dtype t (a's reference released). */
int ml_retype(ml_array *a, ml_dtype t);
/* out: a contiguous copy of a. */
int ml_clone(ml_array *out, const ml_array *a);
/* Sets every element of the view dst to v, which must be storable in its
 * dtype (ml_scalar_check_store). */
int ml_fill(const char *op, const ml_array *dst, ml_scalar v);
/* out: a new array of the given shape filled with v (storable in t; the
 * error for one that is not names no operation: the caller's does). */
int ml_full(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
            ml_device device, ml_scalar v);
/* out: a's values on device (shared when a is already there). */
int ml_to_device(ml_array *out, const ml_array *a, ml_device device);
/* out: a contiguous CPU array from C-order host bytes of dtype t. */
int ml_from_host(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
                 ml_device device, const void *host);
/* Reads element number i (C order over a's shape) as a scalar. */
int ml_read_element(const ml_array *a, int64_t i, ml_scalar *out);

#endif
