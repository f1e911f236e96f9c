/* Counting: searchsorted's insertion points, histogram's counts over
 * equal bins and bincount's. out receives a new array (what it held is
 * released); on an error it is left untouched. */
#ifndef ML_COUNT_H
#define ML_COUNT_H

#include "array.h"

/* out (int64, v's shape) = NumPy's searchsorted(a, v, side) + 1: for each
 * element of v, the 1-based position at which it would be inserted into
 * the sorted 1-D a, before the equal elements (left) or after them
 * (right). a and v compute in their promoted dtype; NaN is larger than
 * every number. */
int ml_searchsorted(ml_array *out, const ml_array *a, const ml_array *v,
                    int right);

/* out (nbins) = numpy.histogram's counts of a's elements over the equal
 * bins of edges (1-D, nbins + 1 values ascending, a's dtype; integers
 * compute in float64) with the scale denom (hi - lo, as NumPy rounds it):
 * int64 counts, or, with weights (a's shape), float64 sums of weights. */
int ml_histogram(ml_array *out, const ml_array *a, const ml_array *weights,
                 const ml_array *edges, double denom);

/* out (int64, nbins) = numpy.bincount's counts of the integers of a (any
 * shape) shifted by lo: slot v - lo counts the elements equal to v, for
 * lo <= v < lo + nbins; other values are not counted. */
int ml_bincount(ml_array *out, const ml_array *a, int64_t lo, int64_t nbins);

#endif
