/* Indexing by index arrays and masks: index_select, gather, scatter,
 * masked_select, masked_fill, and the in-place writes behind x[idx] = v and
 * x[mask] = v.
 *
 * Dimensions are 0-based (negative counts from the end). Index arrays hold
 * 1-based integers, as everywhere in the Lua API, and negative ones count
 * from the end (-1 is the last, as for x[-1]); other integer dtypes are
 * converted to int64, floats are an error. An index outside -size..-1 and
 * 1..size fails with "op: index 11 is out of bounds for dimension 1 with
 * size 10", also where the result has no elements. Masks are uint8
 * (nonzero is true) and broadcast to the array's shape. Each function
 * fills out with a new array, or fails leaving out untouched. */
#ifndef ML_INDEX_H
#define ML_INDEX_H

#include "array.h"

/* out = a with dimension dim indexed by the 1-D (or 0-d) index:
 * out.shape[dim] = numel(index). */
int ml_index_select(ml_array *out, const ml_array *a, int dim,
                    const ml_array *index);
/* out: a copy of a plus the slices of src along dim added at the slices
 * of a that the 1-D (or 0-d) index names, as Torch's index_add (out of
 * place): src has a's shape but numel(index) along dim and is converted to
 * a's dtype. Repeated indices add up. The sums are exact in the order of
 * index for integers (wrapping) and accumulate in double for floats, the
 * same bits on every backend and every run. */
int ml_index_add(ml_array *out, const ml_array *a, int dim,
                 const ml_array *index, const ml_array *src);
/* out[i][j] = a[i][index[i][j]] for dim 1 (0-based), likewise for any
 * dimension. index has a's number of dimensions and is no larger than a
 * outside dim; out takes index's shape and a's dtype. */
int ml_gather(ml_array *out, const ml_array *a, int dim,
              const ml_array *index);
/* out: a copy of a with out[i][index[i][j]] = src[i][j] for dim 1, likewise
 * for any dimension. index as in ml_gather; src broadcasts to index's shape
 * (a 0-d src scatters one value) or, as in Torch, is at least index's size
 * in every dimension and only its leading block is used. src is converted
 * to a's dtype. Where an index repeats along dim, the last src wins. */
int ml_scatter(ml_array *out, const ml_array *a, int dim,
               const ml_array *index, const ml_array *src);
/* out: a 1-D array of the elements of a where mask is nonzero, C order. */
int ml_masked_select(ml_array *out, const ml_array *a, const ml_array *mask);
/* out: a copy of a with value where mask is nonzero (a's dtype; value must
 * fit it). */
int ml_masked_fill(ml_array *out, const ml_array *a, const ml_array *mask,
                   ml_scalar value);

/* In place, through the view dst (x[mask] = v, as NumPy and Torch): the
 * elements where mask (broadcast to dst's shape) is nonzero take src's
 * values in C order, src converted to dst's dtype and broadcast to their
 * count (one value sets them all). */
int ml_masked_assign(const ml_array *dst, const ml_array *mask,
                     const ml_array *src);
/* In place: the slices of dst along dim picked by the 1-D index get src,
 * broadcast to dst.index_select(dim, index)'s shape and converted to dst's
 * dtype (x[idx] = v). A repeated index gets its last slice of src. */
int ml_index_put(const ml_array *dst, int dim, const ml_array *index,
                 const ml_array *src);

/* x[mask] (uint8 mask), as NumPy where it can: a mask whose shape is the
 * first k < ndim sizes of a's shape picks the slices a[i1, ..., ik] where
 * it is nonzero, stacked along a new first dimension (count x a's
 * remaining sizes: a 1-D mask over the rows selects rows); any other mask
 * broadcasts to a's shape as in ml_masked_select. */
int ml_mask_get(ml_array *out, const ml_array *a, const ml_array *mask);
/* x[mask] = src for the same masks, in place: picked slices take src
 * broadcast to (count x the remaining sizes); else ml_masked_assign. */
int ml_mask_put(const ml_array *dst, const ml_array *mask,
                const ml_array *src);

/* NumPy's nonzero, 1-based: out (int64, ndim x count) holds in row d the
 * indices along dimension d of a's nonzero elements (NaN is nonzero), in C
 * order. A 0-d a gives 0 x count. */
int ml_nonzero(ml_array *out, const ml_array *a);
/* NumPy's argwhere, 1-based: out (int64, count x ndim) holds one row of
 * indices per nonzero element of a, in C order. */
int ml_argwhere(ml_array *out, const ml_array *a);

#endif
