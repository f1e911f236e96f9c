/* Exact k-nearest-neighbour search.
 *
 * ml_knn finds, for each row of queries (m x d), the k rows of refs (n x d)
 * nearest to it: dist (m x k, the float dtype of the inputs) and index
 * (m x k int64, 1-based rows of refs), nearest first, ties to the lower
 * index. The inputs promote to one dtype (NumPy's table; integers compute
 * in float64). Metrics:
 *   EUCLIDEAN    |q - r|
 *   SQEUCLIDEAN  |q - r|^2
 *   COSINE       1 - q.r / (|q| |r|), taken as 1 when q or r is the zero
 *                vector (scikit-learn's convention)
 *   IP           q.r, largest first; dist holds the inner product
 * The neighbours are exact: the distances are recomputed from the vectors
 * in double precision (see knn_refine in backend.h for the formulas), and
 * the order is that of these distances. A NaN distance ranks after every
 * number. exclude_self (queries and refs the same rows, so m == n) leaves
 * reference i out of query i's neighbours. budget bounds the memory in
 * bytes that the search takes beyond its (contiguous) inputs: results,
 * per-query arrays, distance tiles and candidate lists, down to what one
 * query needs. Empty queries give 0 x k results; k must be in 1..n (1..n-1
 * with exclude_self). tf32 lets a backend that has TF32 tensor cores rank
 * float32 candidates with them; the answer is exact either way (the error
 * bound covers TF32, and the queries it cannot settle go round again in
 * full float32). On failure dist and index are left untouched. */
#ifndef ML_KNN_H
#define ML_KNN_H

#include "knn_backend.h"

#define ML_KNN_BUDGET ((int64_t)1 << 30)

/* How the first pass searches: the backend's choice (a GPU filters for
 * d <= 64 and k <= 40, 39 with exclude_self, and takes the bounded pass
 * for k <= 8 and up to 8192 references), the filtered search (k up
 * to 64, 63 with exclude_self), GEMM tiles and candidate lists, or the
 * bounded pass (k up to 8; core/knn.c). The answer is the same. */
typedef enum {
  ML_KNN_AUTO, ML_KNN_FILTER, ML_KNN_TILE, ML_KNN_BOUNDED
} ml_knn_method;

typedef struct {
  ml_knn_metric metric;
  int exclude_self;
  int64_t budget; /* bytes, > 0 */
  int tf32;       /* float32 on a backend with TF32: rank with it first */
  ml_knn_method method;
} ml_knn_opts;

/* The metric named "euclidean", "sqeuclidean", "cosine" or "ip"; 0 when
 * the name is unknown. */
int ml_knn_metric_parse(const char *name, ml_knn_metric *out);
/* The method named "auto", "filter", "tile" or "bounded"; 0 when
 * unknown. */
int ml_knn_method_parse(const char *name, ml_knn_method *out);

int ml_knn(ml_array *dist, ml_array *index, const ml_array *queries,
           const ml_array *refs, int64_t k, const ml_knn_opts *opts);

#endif
