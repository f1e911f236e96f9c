/* Shared by the two kernels of the filtered kNN search: knn_filter.cu's
 * register-tiled one (float64, and float32 without TF32) and
 * knn_filter_tc.cu's on tensor cores (float32 with split TF32). Both
 * compute the fast keys of a block of queries against slices of the
 * references and keep either the pairs under each query's limit (the
 * filter) or each query's minima over ML_KNN_SAMPLE_BLOCKS blocks of the
 * sample (the sample). */
#ifndef ML_KNN_FILTER_CUH
#define ML_KNN_FILTER_CUH

#include "launch.cuh"
#include "scratch.cuh"
#include "warp.cuh"

#define FD 16 /* coordinates a step through shared memory */
#define FILTER_THREADS 256
#define FB ML_KNN_SAMPLE_BLOCKS /* the sample's minima per query */

template <class T> struct FilterArgs {
  int64_t mt, n, d, c, slice, step; /* step: the sample's, 1 for the filter */
  const T *q, *refs, *qaux, *raux, *limit;
  const int64_t *self;
  T *keys; /* the filter's lists, or the sample's minima (mt x FB) */
  int64_t *index;
  unsigned long long *count;
};

/* The fast key of a metric known at compile time (knn.cu's fast_key, but a
 * NaN stays NaN). */
template <ml_knn_metric M, class T> __device__ __forceinline__ T metric_key(T p, T qa, T ra) {
  return M == ML_KNN_COSINE ? 1 - p * qa * ra : M == ML_KNN_IP ? -p : fma(T(-2), p, qa + ra);
}

/* The filter's queue in shared memory: QCAP pairs with their query's
 * place in the block, their rank among that query's, and per query the
 * count and the first place taken in its list. */
#define QCAP (4096 / (int)sizeof(T))
template <class T, int W> struct FilterQueue {
  T key[QCAP];
  int64_t j[QCAP];
  int rank[QCAP];
  unsigned char q[QCAP];
  int n;
  int cnt[W];
  unsigned long long base[W];
};

/* Empties the queue before any pair joins it; every thread calls it. */
template <class T, int W> __device__ void filter_queue_init(FilterQueue<T, W> &fq) {
  for (int q = threadIdx.x; q < W; q += FILTER_THREADS) fq.cnt[q] = 0;
  if (threadIdx.x == 0) fq.n = 0;
  __syncthreads();
}

/* Queues the pair (key, reference j) of the block's query u (its query
 * i0 + u), unless that query is past the end or j is its self; a full
 * queue sends it straight to the list. */
template <class T, int W>
__device__ __forceinline__ void filter_keep(FilterQueue<T, W> &fq, const FilterArgs<T> &a,
                                            int64_t i0, int u, int64_t j, T key) {
  const int64_t i = i0 + u;
  if (i >= a.mt || (a.self && j + 1 == a.self[i])) return;
  int p = atomicAdd(&fq.n, 1);
  if (p < QCAP) {
    fq.key[p] = key;
    fq.j[p] = j;
    fq.q[p] = (unsigned char)u;
  } else {
    unsigned long long at = atomicAdd(a.count + i, 1ull);
    if (at < (unsigned long long)a.c) {
      a.keys[i * a.c + at] = key;
      a.index[i * a.c + at] = j + 1;
    }
  }
}

/* Writes the queued pairs to their queries' lists and empties the queue:
 * ranks them per query, takes each query's places in its list with one
 * atomic on its count. Every thread calls it, after a barrier. */
template <class T, int W>
__device__ void filter_flush(FilterQueue<T, W> &fq, const FilterArgs<T> &a, int64_t i0) {
  const int n = fq.n < QCAP ? fq.n : QCAP;
  for (int e = threadIdx.x; e < n; e += FILTER_THREADS) fq.rank[e] = atomicAdd(&fq.cnt[fq.q[e]], 1);
  __syncthreads();
  for (int q = threadIdx.x; q < W; q += FILTER_THREADS) {
    if (fq.cnt[q]) fq.base[q] = atomicAdd(a.count + i0 + q, (unsigned long long)fq.cnt[q]);
    fq.cnt[q] = 0;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < n; e += FILTER_THREADS) {
    unsigned long long at = fq.base[fq.q[e]] + fq.rank[e];
    int64_t i = i0 + fq.q[e];
    if (at < (unsigned long long)a.c) {
      a.keys[i * a.c + at] = fq.key[e];
      a.index[i * a.c + at] = fq.j[e] + 1;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) fq.n = 0;
  __syncthreads();
}

/* At the end of a step of the filter: a barrier, then a flush when the
 * queue is half full or the block's references are done. */
template <class T, int W>
__device__ __forceinline__ void filter_step_end(FilterQueue<T, W> &fq, const FilterArgs<T> &a,
                                                int64_t i0, bool last) {
  __syncthreads();
  if (fq.n >= QCAP / 2 || last) filter_flush<T, W>(fq, a, i0);
}

/* The tensor-core kernel's launch (knn_filter_tc.cu): the filter, or the
 * sample, over grid blocks of FILTER_TC_QUERIES (the sample's
 * FILTER_TC_SAMPLE_QUERIES) queries and slices of a.slice references. */
#define FILTER_TC_QUERIES 128
#define FILTER_TC_REFS 64
#define FILTER_TC_SAMPLE_QUERIES 64
int knn_filter_tc(cuda_dev *d, ml_knn_metric metric, const FilterArgs<float> &a,
                  bool sample, dim3 grid);

#endif
