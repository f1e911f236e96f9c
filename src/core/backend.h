/* The backend interface: one table of function pointers per device kind.
 *
 * The CPU backend (src/cpu) and the CUDA backend (kernels/) fill the same
 * table; the core validates arguments, works out result shapes and dtypes,
 * allocates results, and then dispatches on the device of the operands
 * (which the core has checked are all on one device). Every entry returns
 * ML_OK or an error code after ml_fail().
 *
 * Conventions for the entries below:
 * - Arrays passed in are views with arbitrary strides (zero strides for
 *   broadcast dimensions) unless an entry says "contiguous".
 * - "Same shape" means the core has already broadcast the operands; the
 *   backend never broadcasts.
 * - `out` is always freshly allocated by the core (or a view the user asked
 *   to write through) and never overlaps an input unless stated.
 * - Indices crossing this interface are 1-based int64, as in the Lua API. */
#ifndef ML_BACKEND_H
#define ML_BACKEND_H

#include "array.h"

typedef enum {
  ML_NEG, ML_ABS, ML_SQRT, ML_EXP, ML_LOG, ML_LOG1P, ML_EXPM1, ML_SIN,
  ML_COS, ML_TANH, ML_SIGMOID, ML_FLOOR, ML_CEIL, ML_ROUND, ML_NOT,
  ML_ISNAN, ML_ISINF, ML_ISFINITE, ML_NUNARY
} ml_unop;

typedef enum {
  ML_ADD, ML_SUB, ML_MUL, ML_DIV, ML_POW, ML_IDIV, ML_MOD, ML_MINIMUM,
  ML_MAXIMUM, ML_EQ, ML_NE, ML_LT, ML_LE, ML_GT, ML_GE, ML_NBINARY
} ml_binop;

typedef enum {
  ML_SUM, ML_PROD, ML_MIN, ML_MAX, ML_ARGMIN, ML_ARGMAX, ML_MEAN, ML_VAR,
  ML_NORM2, ML_LOGSUMEXP, ML_ANY, ML_ALL, ML_STD, ML_NORM1, ML_NORMINF,
  ML_NREDUCE
} ml_redop;

typedef enum { ML_RAND_UNIFORM, ML_RAND_NORMAL, ML_RAND_INT } ml_randkind;

/* Distances of the k-nearest-neighbour search (core/knn.h). */
typedef enum {
  ML_KNN_EUCLIDEAN, ML_KNN_SQEUCLIDEAN, ML_KNN_COSINE, ML_KNN_IP
} ml_knn_metric;

/* One tile of the kNN candidate search (knn_tile below). All arrays are
 * contiguous; queries, refs, qaux, raux, keys and work have one float
 * dtype. */
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* nt x d: reference rows base .. base + nt - 1 */
  int64_t base;            /* 0-based number of refs' first row */
  const ml_array *qaux;    /* mt, per metric (below); NULL for IP */
  const ml_array *raux;    /* nt, likewise */
  const ml_array *self;    /* NULL, or mt int64: reference to skip */
  const ml_array *keys;    /* mt x c, in and out: the candidate lists */
  const ml_array *index;   /* mt x c int64, in and out */
  const ml_array *work;    /* mt x nt scratch, free for the backend */
  int tf32;                /* the dot products may use TF32 (see below) */
} ml_knn_tile;

/* The filter pass of the kNN search (knn_filter below); arrays as for
 * knn_tile. */
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* n x d, all of them */
  const ml_array *qaux, *raux, *self;
  const ml_array *limit;   /* mt: the largest fast key kept */
  const ml_array *keys;    /* mt x c out */
  const ml_array *index;   /* mt x c int64 out */
  const ml_array *count;   /* mt int64, zeros in, the pairs found out */
  int tf32;                /* the dot products may use split TF32 (below) */
} ml_knn_filter;

/* The sample pass that sets knn_filter's limits (knn_sample below). */
#define ML_KNN_SAMPLE_BLOCKS 128
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* n x d, all of them */
  const ml_array *qaux, *raux;
  int64_t step, kk;        /* rows 0, step, 2 step, ...; kk <= BLOCKS / 2 */
  const ml_array *out;     /* mt out, dtype of queries */
  int tf32;                /* as knn_filter's */
} ml_knn_sample;

/* The exact pass over a tile's candidate lists (knn_refine below). */
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* n x d, all of them */
  const ml_array *keys;    /* mt x c, from knn_tile or knn_filter */
  const ml_array *index;   /* mt x c int64, 1-based rows of refs */
  const ml_array *bound;   /* mt float64: error bound of the fast keys */
  int all;                 /* the lists hold every candidate reference */
  const ml_array *dist;    /* mt x k out, dtype of queries */
  const ml_array *nearest; /* mt x k int64 out */
  const ml_array *ok;      /* mt uint8 out */
  const ml_array *count;   /* NULL, or from knn_filter: count and limit */
  const ml_array *limit;
} ml_knn_refine;

/* C[b] = op(A[b]) op(B[b]) for b < batch, row-major: C is m x n with rows
 * ldc apart; op(A) is m x k, stored as A (rows lda apart) or, with trans_a,
 * as its k x m transpose; likewise B. Batch strides are in elements. */
typedef struct {
  ml_dtype dtype;
  ml_device device;
  int trans_a, trans_b;
  int64_t m, n, k, batch;
  const void *a;
  int64_t lda, stride_a;
  const void *b;
  int64_t ldb, stride_b;
  void *c;
  int64_t ldc, stride_c;
  /* float32 only, and only where the backend has tf32 (below): the
   * products may round their inputs to TF32 (tensor cores). Off for mm. */
  int tf32;
} ml_gemm;

typedef struct ml_backend {
  const char *name; /* "cpu", "cuda": prefixes device errors */

  /* Memory. alloc returns ML_ENOMEM (without ml_fail) when the device is
   * full, so that the caller can collect garbage and retry. */
  int (*alloc)(int device_index, size_t nbytes, void **ptr);
  void (*free)(int device_index, void *ptr, size_t nbytes);
  /* Host bytes (C order, dst's dtype) into dst, and back. */
  int (*upload)(const ml_array *dst, const void *host);
  int (*download)(void *host, const ml_array *src);
  int (*synchronize)(int device_index);

  /* dst = src, same shape; converts when the dtypes differ (C casts, float
   * to integer truncates toward zero). dst may be any strided view. */
  int (*copy)(const ml_array *dst, const ml_array *src);
  int (*fill)(const ml_array *dst, ml_scalar value);
  /* Contiguous 1-D dst: dst[i] = start + i * step, computed in dst's dtype
   * (int64 exactly for integer dtypes). */
  int (*iota)(const ml_array *dst, ml_scalar start, ml_scalar step);

  /* Elementwise, same shape, out and a of one dtype, except that ML_NOT,
   * ML_ISNAN, ML_ISINF and ML_ISFINITE take a of any dtype to uint8 out.
   * Integer a: only NEG, ABS, FLOOR, CEIL, ROUND and those four. */
  int (*unary)(ml_unop op, const ml_array *out, const ml_array *a);
  /* a and b of one dtype; out of that dtype, or uint8 for comparisons. */
  int (*binary)(ml_binop op, const ml_array *out, const ml_array *a,
                const ml_array *b);
  /* out = a op s (or s op a when reversed), s already representable in
   * a's dtype. Lets backends pass the scalar by value. */
  int (*binary_scalar)(ml_binop op, const ml_array *out, const ml_array *a,
                       ml_scalar s, int reversed);
  /* out = cond ? a : b; cond uint8; a, b and out of one dtype. */
  int (*where)(const ml_array *out, const ml_array *cond, const ml_array *a,
               const ml_array *b);

  /* Reduces the last dimension of in: in has out->ndim + 1 dimensions and
   * out[i...] = R(in[i..., :]). Result dtypes (the core converts inputs
   * first where needed):
   *   SUM, PROD: in float -> same; in integer -> out int64.
   *   MIN, MAX: same dtype (NaN propagates).   ARGMIN, ARGMAX: out int64,
   *   1-based, first occurrence, a NaN counts as the extreme.
   *   MEAN, VAR, STD, NORM1, NORM2, NORMINF, LOGSUMEXP: in and out float,
   *   same dtype; VAR (and STD, its square root) use ddof and a two-pass
   *   algorithm.   ANY, ALL: any in, out uint8.
   * Empty rows give SUM 0, PROD 1, MEAN/VAR/STD NaN (also VAR when
   * n - ddof <= 0), NORM* 0, LOGSUMEXP -inf, ANY 0, ALL 1; the core never
   * passes empty rows to MIN, MAX, ARGMIN, ARGMAX.
   * Results must not depend on thread count or scheduling. */
  int (*reduce)(ml_redop op, const ml_array *out, const ml_array *in,
                int64_t ddof);
  /* Cumulative sum along the last dimension; out same shape as in, dtype
   * of in (float) or int64 (integer in). */
  int (*cumsum)(const ml_array *out, const ml_array *in);

  int (*gemm)(const ml_gemm *g);

  /* out = in with dimension dim (0-based) indexed by the int64 1-D index
   * (1-based); out has in's shape with shape[dim] = numel(index). */
  int (*index_select)(const ml_array *out, const ml_array *in, int dim,
                      const ml_array *index);
  /* Along dim (0-based): out[..i..] = in[..index[..i..]..]; index int64 of
   * out's shape. */
  int (*gather)(const ml_array *out, const ml_array *in, int dim,
                const ml_array *index);
  /* In place: out[..index[..i..]..] = src[..i..]; index int64 and src of
   * one shape. */
  int (*scatter)(const ml_array *out, int dim, const ml_array *index,
                 const ml_array *src);
  /* out (contiguous 1-D, length = number of nonzero mask elements) takes
   * the elements of in where mask (uint8, in's shape) is nonzero, C order. */
  int (*masked_select)(const ml_array *out, const ml_array *in,
                       const ml_array *mask);

  /* Stable sort of each row (last dimension) of contiguous in into
   * contiguous values and int64 indices (1-based) of in's shape. NaN sorts
   * as larger than every number. */
  int (*sort)(const ml_array *values, const ml_array *indices,
              const ml_array *in, int descending);
  /* The k largest (or smallest) of each row of contiguous in, in order,
   * ties to the lower index; values and indices contiguous rows x k. */
  int (*topk)(const ml_array *values, const ml_array *indices,
              const ml_array *in, int64_t k, int largest);

  /* Fills contiguous out from the Philox4x32-10 stream (core/philox.h)
   * at counter offset; p1, p2: [low, high) for uniform and randint, mean
   * and std for normal. */
  int (*random)(ml_randkind kind, const ml_array *out, uint64_t seed,
                uint64_t offset, double p1, double p2);

  /* k nearest neighbours, in two entries that the core (core/knn.c) calls
   * tile by tile; see there for the algorithm and its error bound.
   *
   * knn_tile: for query row i and reference row j of the tile, the fast
   * key from the dot product p = q_i . r_j, computed in the dtype (any
   * order of summation, fused multiply-adds and flushing subnormals to zero
   * allowed; nothing less precise, since the core's error bound assumes
   * the dtype's rounding, except that with t->tf32 (set only where the
   * backend has tf32) float32 inputs may be rounded to TF32 and the sums
   * may truncate, which the core's bound then covers), then rounded to the
   * dtype:
   *   EUCLIDEAN, SQEUCLIDEAN: (qaux[i] + raux[j]) - 2 p  (squared norms)
   *   COSINE:                 1 - p * qaux[i] * raux[j]  (inverse norms)
   *   IP:                     -p
   * A NaN key counts as +inf. The pair (key, base + j + 1) joins query i's
   * candidate list, row i of keys and index: c = keys->shape[1] pairs in
   * any order, which on return holds the c smallest pairs of the old list
   * and the tile, ordered by key then index. The core starts each list as
   * c pairs (+inf, INT64_MAX). The pair whose index is self[i] is skipped.
   * c is 2k + 16 (2k + 24 with TF32) on the first pass but grows up to
   * the number of references on the core's retries, so long lists need a
   * path too.
   *
   * knn_refine: the exact key of each candidate of query row i, from the
   * vectors converted to double and in double arithmetic, summing over the
   * coordinates in order without fused multiply-adds (so that every
   * backend returns the same bits):
   *   EUCLIDEAN, SQEUCLIDEAN: sum (q - r)^2
   *   COSINE: sum (q / |q| - r / |r|)^2 / 2, |x| = sqrt(sum x^2), or 1
   *           when |q| or |r| is 0
   *   IP:     -sum q r
   * The k smallest (exact key, index) pairs, a NaN key after +inf, go to
   * row i of nearest (1-based indices) and dist, nearest first; dist holds
   * sqrt(key) for EUCLIDEAN, -key for IP (+0 for a zero), else the key,
   * rounded to the dtype. Then ok[i] = 1 when all is set or when
   * (double)w - bound[i] > e, w being the largest fast key in the list and
   * e the k-th exact key (a NaN makes it false); else ok[i] = 0. With
   * count (lists from knn_filter), row i holds its first min(count[i], c)
   * pairs, w is limit[i], and ok[i] is also 0 when count[i] > c or the
   * row holds fewer than k pairs (its dist and nearest are then any).
   *
   * knn_filter: for query row i and every reference row j, the fast key
   * as knn_tile's, except that with f->tf32 (set only for float32 where
   * the backend has tf32) the dot product may be computed in split TF32
   * instead: each input x as hi + lo, hi x truncated to TF32 and lo
   * x - hi truncated to TF32, a product as hi hi' + hi lo' + lo hi'
   * (exact TF32 products, sums that may truncate), and the Euclidean key
   * as -2 (q.r - |q|^2 / 2 - |r|^2 / 2) summed in any order (the core's
   * bound covers both); each pair (key, j + 1) whose key is not
   * above limit[i] (so a NaN key or limit passes), and j + 1 != self[i],
   * adds 1 to count[i] and, while count[i] <= c, goes to row i of keys and
   * index at place count[i] - 1 (in any order of the references).
   *
   * knn_sample: for query row i, the fast keys (as knn_filter's) of the
   * sample's rows, the s-th of them being reference row s step (s step <
   * n), fall into ML_KNN_SAMPLE_BLOCKS blocks by s modulo that; out[i] is the
   * kk-th smallest of the blocks' minima, an empty block's minimum and a
   * NaN key counting as +inf. (The kk-th smallest minimum is at least the
   * kk-th smallest key of the sample, so knn_filter's limits from it keep
   * the k nearest; see core/knn.c.) */
  int (*knn_tile)(const ml_knn_tile *t);
  int (*knn_refine)(const ml_knn_refine *r);
  int (*knn_filter)(const ml_knn_filter *f);
  int (*knn_sample)(const ml_knn_sample *s);
  /* The search's first pass filters by default (core/knn.c): it forms no
   * distance matrix, which pays on a GPU; a CPU's GEMM and selection are
   * faster there, so it filters only when asked. */
  int knn_filter_first;
  /* gemm and knn_tile can use TF32 for float32 when asked (tensor cores:
   * several times faster than full float32, which the search's ranking
   * exploits since its error bound and re-checks keep the answer exact). */
  int tf32;
} ml_backend;

/* The backend of a device, or an error naming a device this build or this
 * machine does not have. */
int ml_backend_get(ml_device device, const ml_backend **out);
void ml_backend_register(ml_device_kind kind, const ml_backend *backend,
                         int device_count);
int ml_device_count(ml_device_kind kind);

#endif
