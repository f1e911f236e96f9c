/* Views: new shapes and strides over the same storage, copying nothing.
 *
 * Each function makes out another view of a's storage or fails without
 * touching out. out is either a itself or an empty (zeroed) array; what it
 * held is released. Dimensions here are 0-based and already
 * normalised; ml_norm_dim turns a user's dimension into one. `op` names the
 * operation in error messages. */
#ifndef ML_VIEW_H
#define ML_VIEW_H

#include "array.h"

/* dim0 is 0-based and may be negative (-1 is the last). Accepts
 * -ndim_ext..ndim_ext-1, where ndim_ext is ndim (or ndim + 1 where a new
 * dimension may be inserted). */
int ml_norm_dim(const char *op, int64_t dim0, int ndim_ext, int *out);

int ml_view_narrow(const char *op, ml_array *out, const ml_array *a, int dim,
                   int64_t start, int64_t length);
/* Takes index i (0-based) of dim and drops that dimension. */
int ml_view_select(const char *op, ml_array *out, const ml_array *a, int dim,
                   int64_t i);
/* Every step-th element of dim from start, count of them (step > 0). */
int ml_view_stride(const char *op, ml_array *out, const ml_array *a, int dim,
                   int64_t start, int64_t count, int64_t step);
int ml_view_transpose(ml_array *out, const ml_array *a, int d0, int d1);
/* dim reversed: the view starts at its last element and steps back (a
 * negative stride). */
int ml_view_flip(ml_array *out, const ml_array *a, int dim);
/* perm is a permutation of 0..ndim-1 (checked). */
int ml_view_permute(const char *op, ml_array *out, const ml_array *a,
                    const int *perm);
int ml_view_unsqueeze(ml_array *out, const ml_array *a, int dim);
/* Drops dim if its size is 1 (dim < 0: every size-1 dimension). */
int ml_view_squeeze(ml_array *out, const ml_array *a, int dim);
/* Broadcasts a to shape (NumPy rules; size-1 dimensions get stride 0). */
int ml_view_expand(const char *op, ml_array *out, const ml_array *a, int ndim,
                   const int64_t *shape);
/* A view of a with a new shape of the same size, if the strides allow it;
 * ML_EINVAL (with a message) when a copy would be needed. */
int ml_view_reshape(const char *op, ml_array *out, const ml_array *a, int ndim,
                    const int64_t *shape);
/* Resolves one -1 in shape against numel and checks the sizes agree. */
int ml_infer_shape(const char *op, int64_t numel, int ndim, int64_t *shape);

/* The broadcast shape of a and b, NumPy rules, or an error
 * "op: shapes 3x4 and 4x3 do not broadcast". */
int ml_broadcast_shape(const char *op, int na, const int64_t *sa, int nb,
                       const int64_t *sb, int *nout, int64_t *out);

#endif
