/* The CPU backend's entries, one group per source file; the table that
 * collects them is in cpu_backend.c. Contracts are in core/backend.h. */
#ifndef ML_CPU_H
#define ML_CPU_H

#include "../core/conv_backend.h"
#include "../core/dist_backend.h"
#include "../core/filter_backend.h"
#include "../core/binary_backend.h"
#include "../core/knn_backend.h"
#include "../core/linalg_backend.h"

/* Registers the CPU backend with the core (core/backends.c calls it). */
int cpu_backend_init(void);

/* cpu_memory.c */
int cpu_alloc(int device_index, size_t nbytes, void **ptr);
void cpu_free(int device_index, void *ptr, size_t nbytes);
int cpu_upload(const ml_array *dst, const void *host);
int cpu_download(void *host, const ml_array *src);
int cpu_synchronize(int device_index);
int cpu_memory(int device_index, ml_device_memory *out);
int cpu_empty_cache(int device_index);
int cpu_device_name(int device_index, char *buf, size_t n);

/* cpu_copy.c */
int cpu_copy(const ml_array *dst, const ml_array *src);
int cpu_fill(const ml_array *dst, ml_scalar value);
int cpu_iota(const ml_array *dst, ml_scalar start, ml_scalar step);

/* cpu_elementwise.c */
int cpu_unary(ml_unop op, const ml_array *out, const ml_array *a);
int cpu_binary(ml_binop op, const ml_array *out, const ml_array *a,
               const ml_array *b);
int cpu_binary_scalar(ml_binop op, const ml_array *out, const ml_array *a,
                      ml_scalar s, int reversed);
int cpu_where(const ml_array *out, const ml_array *cond, const ml_array *a,
              const ml_array *b);

/* cpu_reduce.c */
int cpu_reduce(ml_redop op, const ml_array *out, const ml_array *in,
               int64_t ddof);

/* cpu_cumsum.c */
int cpu_cumsum(const ml_array *out, const ml_array *in);
int cpu_cumprod(const ml_array *out, const ml_array *in);

/* cpu_softmax.c */
int cpu_softmax(const ml_array *out, const ml_array *lse, const ml_array *in,
                int logs);

/* cpu_blas.c */
int cpu_gemm(const ml_gemm *g);

/* linalg.mahalanobis (cpu_mahalanobis.c) */
int cpu_mahalanobis(const ml_array *out, const ml_array *x, const ml_array *p,
                    const ml_array *c);

/* linalg.gram's weighted scatters (cpu_gram_weighted.c) */
int cpu_weighted_gram(const ml_array *out, const ml_array *x, const ml_array *w);

/* cpu_index.c */
int cpu_index_select(const ml_array *out, const ml_array *in, int dim,
                     const ml_array *index);
int cpu_index_add(const ml_array *out, int dim, const ml_array *index,
                  const ml_array *src);
int cpu_gather(const ml_array *out, const ml_array *in, int dim,
               const ml_array *index);
int cpu_scatter(const ml_array *out, int dim, const ml_array *index,
                const ml_array *src);
int cpu_masked_select(const ml_array *out, const ml_array *in,
                      const ml_array *mask);

/* cpu_sort.c */
int cpu_sort(const ml_array *values, const ml_array *indices,
             const ml_array *in, int descending);
int cpu_topk(const ml_array *values, const ml_array *indices,
             const ml_array *in, int64_t k, int largest);

/* cpu_count.c */
int cpu_searchsorted(const ml_array *out, const ml_array *a,
                     const ml_array *v, int right);
int cpu_histogram(const ml_array *out, const ml_array *in,
                  const ml_array *weights, const ml_array *edges, double denom);
int cpu_bincount(const ml_array *out, const ml_array *in, int64_t lo);

/* cpu_random.c */
int cpu_random(ml_randkind kind, const ml_array *out, uint64_t seed,
               uint64_t offset, double p1, double p2);

/* cpu_knn.c: the kNN area's table. */
extern const ml_knn_backend cpu_knn_backend;

/* cpu_linalg.c: the linear-algebra area's table. */
extern const ml_linalg_backend cpu_linalg_backend;

/* cpu_conv.c: the convolution area's table. */
extern const ml_conv_backend cpu_conv_backend;
/* cpu_filter.c: the filter area's table. */
extern const ml_filter_backend cpu_filter_backend;
/* cpu_binary.c: the binary area's table. */
extern const ml_binary_backend cpu_binary_backend;
/* cpu_dist.c: the collectives area's table (MPI). */
extern const ml_dist_backend cpu_dist_backend;

#endif
