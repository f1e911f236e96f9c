/* Shared by the two kernels of the kNN search's bounded pass (contract in
 * core/knn_backend.h, argument in core/knn.c): knn.cu's, which scans the
 * dot products cuBLAS wrote to the work block, and knn_nearest_tc.cu's,
 * which forms the fast keys on the tensor cores for k = 1 and keeps no
 * work block. */
#ifndef ML_KNN_BOUNDED_CUH
#define ML_KNN_BOUNDED_CUH

#include "launch.cuh"
#include "warp.cuh"

template <class T> struct BoundedArgs {
  ml_knn_metric metric;
  int64_t mt, n, c, d;
  int k;
  const T *q, *refs; /* mt x d and n x d, contiguous */
  const T *work, *qaux, *raux;
  const int64_t *self;
  const double *bound;
  T *limit, *keys;
  int64_t *index, *count;
};

/* The limit of a row whose k-th smallest fast key is m: m + 2 bound,
 * raised by (|m| + 2 bound) 2^-20 so that rounding to T cannot lower it
 * below that. Nondecreasing in m. */
template <class T> __device__ __forceinline__ T bounded_limit(T m, double bound) {
  const double md = m, b2 = 2 * bound;
  return (T)(md + b2 + (fabs(md) + b2) * 0x1p-20);
}

/* The tensor-core pass takes k = 1 in TF32 for d up to NEAREST_TC_MAX_D
 * (a block's queries stay in shared memory), batches of at least
 * NEAREST_TC_MIN_ROWS queries (fewer leave most SMs idle, where cuBLAS
 * and knn.cu's scan split the work finer; a batch's last tile may hold
 * fewer) and references it can count in 32 bits. */
#define NEAREST_TC_MAX_D 128
#define NEAREST_TC_MIN_ROWS 4096
#define NEAREST_TC_MAX_N ((int64_t)1 << 30)
int knn_nearest_tc(cuda_dev *d, const BoundedArgs<float> &a);

#endif
