/* The fast keys of the kNN search: their per-row terms and their error
 * bound (knn_bound.c, whose comment has the argument). Internal to the
 * core: core/knn.c's. */
#ifndef ML_KNN_BOUND_H
#define ML_KNN_BOUND_H

#include "knn_backend.h"

/* How the fast keys' dot products are computed: in the dtype, in TF32
 * (knn_tile) or in split TF32 (knn_filter and knn_sample). */
typedef enum {
  ML_KNN_DOT_DTYPE, ML_KNN_DOT_TF32, ML_KNN_DOT_SPLIT_TF32
} ml_knn_dot;

/* The fast keys' per-row terms from the norms x (backend.h): squared norms
 * for the Euclidean metrics, inverse norms (0 for a zero vector) for the
 * cosine, nothing for the inner product. */
int ml_knn_aux_terms(ml_array *out, ml_knn_metric metric, const ml_array *x);

/* R and Rmin of the bound from the reference norms rn: the largest, and
 * for the cosine the smallest nonzero one (else +inf). Two reads from the
 * device at most, shared by both bounds. */
int ml_knn_norm_range(const ml_array *rn, ml_knn_metric metric, double *rmax,
                      double *rmin);

/* The per-query error bound of the fast keys (float64, m), from the query
 * norms qn and the reference norms' range, for products computed as dot
 * says. */
int ml_knn_error_bounds(ml_array *bound, ml_knn_metric metric,
                        const ml_array *qn, double rmax, double rmin, int64_t d,
                        ml_knn_dot dot);

#endif
