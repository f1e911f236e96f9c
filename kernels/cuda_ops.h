/* The CUDA backend's entries of the general table, one group per kernels/
 * file; the table that collects them is in cuda_backend.cu. Contracts are
 * in core/backend.h. C linkage: the launchers are extern "C" functions of
 * the .cu files. Each area's table is defined in the area's own file. */
#ifndef ML_CUDA_OPS_H
#define ML_CUDA_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Inside the C block: the core's headers have no C++ guards of their own. */
#include "../src/core/backend.h"
#include "../src/core/conv_backend.h"
#include "../src/core/dist_backend.h"
#include "../src/core/filter_backend.h"
#include "../src/core/knn_backend.h"
#include "../src/core/linalg_backend.h"

/* alloc.cu */
int cuda_alloc(int device_index, size_t nbytes, void **ptr);
void cuda_free(int device_index, void *ptr, size_t nbytes);
int cuda_memory(int device_index, ml_device_memory *out);
int cuda_empty_cache(int device_index);

/* copy.cu */
int cuda_upload(const ml_array *dst, const void *host);
int cuda_download(void *host, const ml_array *src);
int cuda_copy(const ml_array *dst, const ml_array *src);
int cuda_fill(const ml_array *dst, ml_scalar value);
int cuda_iota(const ml_array *dst, ml_scalar start, ml_scalar step);

/* elementwise.cu */
int cuda_unary(ml_unop op, const ml_array *out, const ml_array *a);
int cuda_binary(ml_binop op, const ml_array *out, const ml_array *a,
                const ml_array *b);
int cuda_binary_scalar(ml_binop op, const ml_array *out, const ml_array *a,
                       ml_scalar s, int reversed);
int cuda_where(const ml_array *out, const ml_array *cond, const ml_array *a,
               const ml_array *b);

/* reduce.cu */
int cuda_reduce(ml_redop op, const ml_array *out, const ml_array *in,
                int64_t ddof);
int cuda_cumsum(const ml_array *out, const ml_array *in);
int cuda_cumprod(const ml_array *out, const ml_array *in);

/* softmax.cu */
int cuda_softmax(const ml_array *out, const ml_array *lse, const ml_array *in,
                 int logs);

/* blas.cu */
int cuda_gemm(const ml_gemm *g);

/* index.cu */
int cuda_index_select(const ml_array *out, const ml_array *in, int dim,
                      const ml_array *index);
int cuda_index_add(const ml_array *out, int dim, const ml_array *index,
                   const ml_array *src);
int cuda_gather(const ml_array *out, const ml_array *in, int dim,
                const ml_array *index);
int cuda_scatter(const ml_array *out, int dim, const ml_array *index,
                 const ml_array *src);
int cuda_masked_select(const ml_array *out, const ml_array *in,
                       const ml_array *mask);

/* sort.cu */
int cuda_sort(const ml_array *values, const ml_array *indices,
              const ml_array *in, int descending);
int cuda_topk(const ml_array *values, const ml_array *indices,
              const ml_array *in, int64_t k, int largest);

/* count.cu */
int cuda_searchsorted(const ml_array *out, const ml_array *a,
                      const ml_array *v, int right);
int cuda_histogram(const ml_array *out, const ml_array *in,
                   const ml_array *weights, const ml_array *edges, double denom);
int cuda_bincount(const ml_array *out, const ml_array *in, int64_t lo);

/* knn.cu: the kNN area's table, which takes filter and sample from
 * knn_filter.cu. */
extern const ml_knn_backend cuda_knn_backend;
int cuda_knn_filter(const ml_knn_filter *f);
int cuda_knn_sample(const ml_knn_sample *s);

/* linalg.cu: the linear-algebra area's table, which takes mahalanobis
 * from mahalanobis.cu, weighted_gram from gram_weighted.cu, and trtri and
 * the batched potrf from triangular_blocked.cu. */
extern const ml_linalg_backend cuda_linalg_backend;
int cuda_potrf_blocked(const ml_matrices *a, int upper, const ml_array *info);
int cuda_trtri(const ml_matrices *a, const ml_matrices *x, int upper, int unit,
               const ml_array *info);
int cuda_mahalanobis(const ml_array *out, const ml_array *x, const ml_array *p,
                     const ml_array *c);
int cuda_weighted_gram(const ml_array *out, const ml_array *x, const ml_array *w);

/* conv.cu: the convolution area's table. */
extern const ml_conv_backend cuda_conv_backend;
/* filter.cu: the filter area's table. */
extern const ml_filter_backend cuda_filter_backend;
/* dist.cu: the collectives area's table (NCCL). */
extern const ml_dist_backend cuda_dist_backend;

/* random.cu */
int cuda_random(ml_randkind kind, const ml_array *out, uint64_t seed,
                uint64_t offset, double p1, double p2);

/* cuda_backend.cu */
int cuda_synchronize(int device_index);
int cuda_device_name(int device_index, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
