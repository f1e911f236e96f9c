/* Sorting and top-k along one dimension.
 *
 * Values keep a's dtype; indices are int64 and 1-based, positions along
 * dim. The order is stable: equal values keep their original order, also
 * when descending, and top-k breaks ties toward the lower index. NaN counts
 * as larger than every number: last in an ascending sort, first in a
 * descending one and among the k largest. dim is 0-based (negative counts
 * from the end). Results are new contiguous arrays of a's shape (of k along
 * dim for top-k); on failure values and indices are left untouched. */
#ifndef ML_SORT_H
#define ML_SORT_H

#include "array.h"

int ml_sort(ml_array *values, ml_array *indices, const ml_array *a, int dim,
            int descending);
/* The k largest (or smallest) along dim, 0 <= k <= size of dim. sorted:
 * best first; else in their original order along dim. */
int ml_topk(ml_array *values, ml_array *indices, const ml_array *a, int64_t k,
            int dim, int largest, int sorted);

#endif
