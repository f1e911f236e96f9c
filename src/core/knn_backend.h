/* The kNN area of the backend interface: the sub-table that each backend
 * fills for the exact k-nearest-neighbour search of core/knn.c, and the
 * descriptors its entries take. Arrays passed in follow backend.h's
 * conventions. */
#ifndef ML_KNN_BACKEND_H
#define ML_KNN_BACKEND_H

#include "backend.h"

/* Distances of the search (core/knn.h). */
typedef enum {
  ML_KNN_EUCLIDEAN, ML_KNN_SQEUCLIDEAN, ML_KNN_COSINE, ML_KNN_IP
} ml_knn_metric;

/* One tile of the kNN candidate search (tile below). All arrays are
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

/* The filter pass of the kNN search (filter below); arrays as for
 * tile. */
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

/* The bounded pass of the kNN search for small k (bounded below); arrays
 * as for tile. */
#define ML_KNN_BOUNDED_MAX_K 8
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* n x d, all of them */
  const ml_array *qaux, *raux, *self;
  const ml_array *bound;   /* mt float64: the fast keys' error bound */
  int64_t k;               /* 1 .. ML_KNN_BOUNDED_MAX_K */
  const ml_array *limit;   /* mt out, dtype of queries */
  const ml_array *keys;    /* mt x c out */
  const ml_array *index;   /* mt x c int64 out */
  const ml_array *count;   /* mt int64 out */
  const ml_array *work;    /* mt x n scratch, free for the backend; NULL
                              where bounded_work said it takes none */
  int tf32;                /* as tile's */
} ml_knn_bounded;

/* The sample pass that sets filter's limits (sample below). */
#define ML_KNN_SAMPLE_BLOCKS 128
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* n x d, all of them */
  const ml_array *qaux, *raux;
  int64_t step, kk;        /* rows 0, step, 2 step, ...; kk <= BLOCKS / 2 */
  const ml_array *out;     /* mt out, dtype of queries */
  int tf32;                /* as filter's */
} ml_knn_sample;

/* The exact pass over a tile's candidate lists (refine below). */
typedef struct {
  ml_knn_metric metric;
  const ml_array *queries; /* mt x d */
  const ml_array *refs;    /* n x d, all of them */
  const ml_array *keys;    /* mt x c, from tile or filter */
  const ml_array *index;   /* mt x c int64, 1-based rows of refs */
  const ml_array *bound;   /* mt float64: error bound of the fast keys */
  int all;                 /* the lists hold every candidate reference */
  const ml_array *dist;    /* mt x k out, dtype of queries */
  const ml_array *nearest; /* mt x k int64 out */
  const ml_array *ok;      /* mt uint8 out */
  const ml_array *count;   /* NULL, or from filter: count and limit */
  const ml_array *limit;
} ml_knn_refine;

typedef struct ml_knn_backend {
  /* The search's first pass filters by default (core/knn.c): it forms no
   * distance matrix, which pays on a GPU; a CPU's GEMM and selection are
   * faster there, so it filters only when asked. */
  int filter_first;
  /* Small k over a reference set that fits one tile: the bounded pass
   * (core/knn.c) by default, which pays on a GPU, where selecting
   * candidate lists costs more than the GEMM. */
  int bounded_first;
  /* Queries a tile of the GEMM pass holds before the references are split
   * into tiles of columns (core/knn.c's plan_tiles): on a GPU a warp
   * selects a row of the tile, so few rows leave most of it idle. */
  int tile_rows;

  /* The entries, which the core (core/knn.c) calls tile by tile; see there
   * for the algorithm and its error bound.
   *
   * tile: for query row i and reference row j of the tile, the fast
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
   * refine: the exact key of each candidate of query row i, from the
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
   * count (lists from filter), row i holds its first min(count[i], c)
   * pairs, w is limit[i], and ok[i] is also 0 when count[i] > c or the
   * row holds fewer than k pairs (its dist and nearest are then any).
   *
   * filter: for query row i and every reference row j, the fast key
   * as tile's, except that with f->tf32 (set only for float32 where
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
   * sample: for query row i, the fast keys (as filter's) of the
   * sample's rows, the s-th of them being reference row s step (s step <
   * n), fall into ML_KNN_SAMPLE_BLOCKS blocks by s modulo that; out[i] is the
   * kk-th smallest of the blocks' minima, an empty block's minimum and a
   * NaN key counting as +inf. (The kk-th smallest minimum is at least the
   * kk-th smallest key of the sample, so filter's limits from it keep
   * the k nearest; see core/knn.c.)
   *
   * bounded: for query row i, the fast keys of every reference as tile's
   * (self[i] left out; a NaN key counts as +inf), M the k-th smallest of
   * them, and limit[i] = M + 2 bound[i] raised by (|M| + 2 bound[i])
   * 2^-20, computed in double and rounded to the dtype (so that the
   * rounding cannot take it below M + 2 bound[i]); then every pair (key,
   * j + 1) whose key is not above limit[i], and j + 1 != self[i], adds 1
   * to count[i] and, while count[i] <= c, goes to row i of keys and index
   * at place count[i] - 1 (count[i] from 0; any order of the
   * references).
   *
   * bounded_work: whether bounded takes the work block for the tiles of
   * a batch of m queries of dtype t (m x n references of d coordinates,
   * the k nearest, tf32 as bounded's); where it answers 0, the core
   * passes work = NULL for every tile of the batch, whatever its size,
   * and leaves the block out of the tiles' budget, so that a tile holds
   * more queries. */
  int (*tile)(const ml_knn_tile *t);
  int (*refine)(const ml_knn_refine *r);
  int (*filter)(const ml_knn_filter *f);
  int (*sample)(const ml_knn_sample *s);
  int (*bounded)(const ml_knn_bounded *b);
  int (*bounded_work)(ml_dtype t, int tf32, int64_t m, int64_t n, int64_t d,
                      int64_t k);
} ml_knn_backend;

/* Registers a backend's table (every entry filled, else an error naming
 * the missing one), and looks up the table of a device. */
int ml_knn_backend_register(ml_device_kind kind, const ml_knn_backend *t);
int ml_knn_backend_get(ml_device device, const ml_knn_backend **out);

#endif
