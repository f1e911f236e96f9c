/* Linear algebra on the GPU (contracts in core/linalg_backend.h):
 * cuSOLVER's factorisations and cuBLAS's triangular solves and symmetric
 * products, on the device's stream, with workspace from the caching
 * allocator (cuda_scratch).
 *
 * CPU reference: src/cpu/cpu_linalg.c (LAPACKE and OpenBLAS).
 *
 * A batch is one call where a batched form exists: trsmBatched,
 * getrfBatched and getrsBatched take arrays of pointers to the matrices,
 * which matrix_pointers builds on the device; syevBatched
 * takes the strided batch itself; getrs and trsm with one matrix for many
 * right-hand sides fold those into one wide right-hand side where the
 * layout allows. syrk, geqrf, orgqr and gesvd have no batched form and
 * loop over the batch, queueing without waiting. The info arrays are
 * written on the device; the core reads them back once per call. A batch
 * of Cholesky factorisations and every triangular inverse (trtri) go to
 * the blocked kernels of triangular_blocked.cu instead. */
#include <cusolverDn.h>
#include <limits.h>
#include <stdlib.h>

#include "blas.cuh"
#include "launch.cuh"
#include "scratch.cuh"

static int solver_check(cusolverStatus_t st, const char *op) {
  if (st == CUSOLVER_STATUS_SUCCESS) return ML_OK;
  if (st == CUSOLVER_STATUS_ALLOC_FAILED)
    return ml_fail(ML_ENOMEM, "cuda: out of memory in %s", op);
  return ml_fail(ML_EDEVICE, "cuda: cuSOLVER status %d in %s", (int)st, op);
}

/* The device's cuSOLVER handle (d current), made on first use. */
static int solver_handle(cuda_dev *d, cusolverDnHandle_t *out) {
  if (!d->solver) {
    const char *op = "creating the cuSOLVER handle";
    cusolverDnHandle_t h;
    int rc = solver_check(cusolverDnCreate(&h), op);
    if (!rc) rc = solver_check(cusolverDnSetStream(h, d->stream), op);
    if (rc) return rc;
    d->solver = h;
  }
  *out = (cusolverDnHandle_t)d->solver;
  return ML_OK;
}

/* What an entry works with: its device, made current, and the handles. */
struct context {
  cuda_dev *d;
  cusolverDnHandle_t solver;
  cublasHandle_t blas;
};

static int enter(const ml_matrices *m, context *c) {
  int rc = cuda_enter(m->device.index, &c->d);
  if (!rc) rc = solver_handle(c->d, &c->solver);
  if (!rc) rc = cuda_blas_handle(c->d, &c->blas);
  return rc;
}

/* cuSOLVER's options of its 64-bit API, for one call. */
struct solver_params {
  cusolverDnParams_t p = nullptr;
  ~solver_params() {
    if (p) cusolverDnDestroyParams(p);
  }
  int make() { return solver_check(cusolverDnCreateParams(&p), "linalg"); }
};

/* Host workspace of cuSOLVER's 64-bit API (usually none); when there is
 * some, the stream is drained before it is freed, in case the routine
 * still uses it. */
struct host_buffer {
  void *ptr = nullptr;
  cudaStream_t stream = nullptr;
  ~host_buffer() {
    if (!ptr) return;
    cudaStreamSynchronize(stream);
    free(ptr);
  }
  int get(const cuda_dev *d, size_t n, const char *op) {
    if (n == 0) return ML_OK;
    stream = d->stream;
    ptr = malloc(n);
    return ptr ? ML_OK : ml_fail(ML_ENOMEM, "%s: out of host memory", op);
  }
};

static cudaDataType data_type(ml_dtype t) {
  return t == ML_FLOAT32 ? CUDA_R_32F : CUDA_R_64F;
}

static int64_t elem(const ml_matrices *m) {
  return (int64_t)ml_dtype_size(m->dtype);
}

template <class T> static T *matrix(const ml_matrices *m, int64_t i) {
  return (T *)m->data + i * m->stride;
}

/* ML_OK when the sizes fit the 32-bit interfaces. */
static int fits_int(const char *op, int64_t a, int64_t b, int64_t c) {
  if (a <= INT_MAX && b <= INT_MAX && c <= INT_MAX) return ML_OK;
  return ml_fail(ML_EINVAL, "%s: sizes %lld, %lld and %lld exceed cuSOLVER's 32-bit interface",
                 op, (long long)a, (long long)b, (long long)c);
}

/* Pointers to a batch's matrices ---------------------------------------- */

/* ptrs[i] = base + i * step bytes (step 0: the same matrix for all). */
__global__ void matrix_pointers(char **ptrs, char *base, int64_t step,
                                int64_t batch) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < batch;
       i += (int64_t)gridDim.x * blockDim.x)
    ptrs[i] = base + i * step;
}

/* batch pointers to m's matrices in s: every one of them, or its first
 * one batch times (repeat). */
template <class T>
static int pointers(cuda_dev *d, cuda_scratch &s, const ml_matrices *m,
                    int64_t batch, int repeat, T ***out) {
  int rc = s.get(d->index, (size_t)batch * sizeof(T *), "linalg");
  if (!rc)
    rc = cuda_launch<matrix_pointers>(d, grid_for(batch, 256, d), 256, 0, "linalg",
                                      s.as<char *>(), (char *)m->data,
                                      repeat ? 0 : m->stride * elem(m), batch);
  *out = s.as<T *>();
  return rc;
}

/* potrf ------------------------------------------------------------------- */

/* Where potrf passed a matrix, the order of the first NaN on its factor's
 * diagonal, as LAPACK's reference potrf reports it: a warp a matrix. */
template <class T>
__global__ void nan_minor(const T *a, int64_t n, int64_t ld, int64_t stride, int64_t batch,
                          int *info) {
  int64_t b = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (b >= batch || info[b] != 0) return;
  int64_t first = n;
  for (int64_t k = lane; k < n; k += 32) {
    T v = a[b * stride + k + k * ld];
    if (v != v) {
      first = k;
      break;
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    int64_t o = __shfl_down_sync(0xffffffffu, first, off);
    first = o < first ? o : first;
  }
  if (lane == 0 && first < n) info[b] = (int)first + 1;
}

template <class T> static int nan_check(cuda_dev *d, const ml_matrices *a, int *info) {
  return cuda_launch<nan_minor<T>>(d, blocks_for(a->batch, 8), 256, 0, "potrf",
                                   (const T *)a->data, a->rows, a->ld, a->stride, a->batch,
                                   info);
}

/* One matrix through the 64-bit API. */
static int potrf_one(const context &c, const ml_matrices *a, cublasFillMode_t uplo,
                     int *dinfo) {
  int rc;
  cudaDataType t = data_type(a->dtype);
  solver_params p;
  size_t dbytes = 0, hbytes = 0;
  cuda_scratch work;
  host_buffer host;
  rc = p.make();
  if (!rc)
    rc = solver_check(cusolverDnXpotrf_bufferSize(c.solver, p.p, uplo, a->rows, t, a->data,
                                                  a->ld, t, &dbytes, &hbytes),
                      "potrf");
  if (!rc) rc = work.get(c.d->index, dbytes, "potrf");
  if (!rc) rc = host.get(c.d, hbytes, "potrf");
  if (!rc)
    rc = solver_check(cusolverDnXpotrf(c.solver, p.p, uplo, a->rows, t, a->data, a->ld, t,
                                       work.ptr, dbytes, host.ptr, hbytes, dinfo),
                      "potrf");
  return rc;
}

/* A batch goes to the blocked kernels (triangular_blocked.cu), which
 * factor its matrices side by side; one matrix to cuSOLVER. */
static int cuda_potrf(const ml_matrices *a, int upper, const ml_array *info) {
  if (a->batch > 1) return cuda_potrf_blocked(a, upper, info);
  context c;
  int rc = enter(a, &c);
  if (rc) return rc;
  cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  int *dinfo = array_ptr<int>(info);
  rc = potrf_one(c, a, uplo, dinfo);
  if (rc) return rc;
  return a->dtype == ML_FLOAT32 ? nan_check<float>(c.d, a, dinfo)
                                : nan_check<double>(c.d, a, dinfo);
}

/* triangle ------------------------------------------------------------------ */

/* Zeroes each column-major matrix outside its upper (i <= j) or lower
 * (i >= j) triangle: a thread an element, consecutive threads down a
 * column. */
template <class T>
__global__ void keep_triangle(T *a, int64_t rows, int64_t cols, int64_t ld,
                              int64_t stride, int64_t batch, int upper) {
  int64_t total = batch * rows * cols;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % rows, r = e / rows, j = r % cols, b = r / cols;
    if (upper ? i > j : i < j) a[b * stride + i + j * ld] = T(0);
  }
}

template <class T> static int triangle_t(cuda_dev *d, const ml_matrices *a, int upper) {
  int64_t total = a->batch * a->rows * a->cols;
  return cuda_launch<keep_triangle<T>>(d, grid_for(total, 256, d), 256, 0, "linalg",
                                       (T *)a->data, a->rows, a->cols, a->ld, a->stride,
                                       a->batch, upper);
}

static int cuda_triangle(const ml_matrices *a, int upper) {
  cuda_dev *d;
  int rc = cuda_enter(a->device.index, &d);
  if (rc || a->batch * a->rows * a->cols == 0) return rc;
  return a->dtype == ML_FLOAT32 ? triangle_t<float>(d, a, upper)
                                : triangle_t<double>(d, a, upper);
}

/* trsm ------------------------------------------------------------------------ */

struct trsm_args {
  cublasSideMode_t side;
  cublasFillMode_t uplo;
  cublasOperation_t trans;
  cublasDiagType_t diag;
};

static cublasStatus_t trsm_one(cublasHandle_t h, const trsm_args &t, int64_t m, int64_t n,
                               const float *a, int64_t lda, float *b, int64_t ldb) {
  const float one = 1;
  return cublasStrsm_64(h, t.side, t.uplo, t.trans, t.diag, m, n, &one, a, lda, b, ldb);
}
static cublasStatus_t trsm_one(cublasHandle_t h, const trsm_args &t, int64_t m, int64_t n,
                               const double *a, int64_t lda, double *b, int64_t ldb) {
  const double one = 1;
  return cublasDtrsm_64(h, t.side, t.uplo, t.trans, t.diag, m, n, &one, a, lda, b, ldb);
}
static cublasStatus_t trsm_many(cublasHandle_t h, const trsm_args &t, int64_t m, int64_t n,
                                float **a, int64_t lda, float **b, int64_t ldb,
                                int64_t batch) {
  const float one = 1;
  return cublasStrsmBatched_64(h, t.side, t.uplo, t.trans, t.diag, m, n, &one, a, lda, b,
                               ldb, batch);
}
static cublasStatus_t trsm_many(cublasHandle_t h, const trsm_args &t, int64_t m, int64_t n,
                                double **a, int64_t lda, double **b, int64_t ldb,
                                int64_t batch) {
  const double one = 1;
  return cublasDtrsmBatched_64(h, t.side, t.uplo, t.trans, t.diag, m, n, &one, a, lda, b,
                               ldb, batch);
}

/* One A for a contiguous batch of B solved from the left: the B are the
 * columns of one wide matrix. Otherwise a batched call, or one call for
 * one B. */
template <class T>
static int trsm_t(const context &c, const trsm_args &t, const ml_matrices *a,
                  const ml_matrices *b) {
  int fold = b->batch == 1 || (a->batch == 1 && t.side == CUBLAS_SIDE_LEFT &&
                               b->stride == b->ld * b->cols);
  if (fold)
    return cuda_blas_check(trsm_one(c.blas, t, b->rows, b->cols * b->batch,
                                    (const T *)a->data, a->ld, (T *)b->data, b->ld),
                           "trsm");
  cuda_scratch sa, sb;
  T **pa, **pb;
  int rc = pointers(c.d, sa, a, b->batch, a->batch == 1, &pa);
  if (!rc) rc = pointers(c.d, sb, b, b->batch, 0, &pb);
  if (!rc)
    rc = cuda_blas_check(trsm_many(c.blas, t, b->rows, b->cols, pa, a->ld, pb, b->ld,
                                   b->batch),
                         "trsm");
  return rc;
}

static int cuda_trsm(const ml_matrices *a, const ml_matrices *b, int left, int upper,
                     int trans, int unit) {
  context c;
  int rc = enter(a, &c);
  if (rc || b->batch * b->rows * b->cols == 0) return rc;
  trsm_args t = {left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                 upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER,
                 trans ? CUBLAS_OP_T : CUBLAS_OP_N,
                 unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT};
  return a->dtype == ML_FLOAT32 ? trsm_t<float>(c, t, a, b) : trsm_t<double>(c, t, a, b);
}

/* syrk ------------------------------------------------------------------------ */

static cublasStatus_t syrk_one(cublasHandle_t h, cublasOperation_t trans, int64_t n,
                               int64_t k, double alpha, const float *a, int64_t lda,
                               double beta, float *c, int64_t ldc) {
  const float al = (float)alpha, be = (float)beta;
  return cublasSsyrk_64(h, CUBLAS_FILL_MODE_LOWER, trans, n, k, &al, a, lda, &be, c, ldc);
}
static cublasStatus_t syrk_one(cublasHandle_t h, cublasOperation_t trans, int64_t n,
                               int64_t k, double alpha, const double *a, int64_t lda,
                               double beta, double *c, int64_t ldc) {
  return cublasDsyrk_64(h, CUBLAS_FILL_MODE_LOWER, trans, n, k, &alpha, a, lda, &beta, c,
                        ldc);
}

/* Copies each n x n matrix's lower triangle onto its upper one: C(i, j) =
 * C(j, i) for i < j, a thread an element (writes down columns, reads
 * along rows). */
template <class T>
__global__ void mirror_lower(T *c, int64_t n, int64_t ld, int64_t stride, int64_t batch) {
  int64_t total = batch * n * n;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    int64_t i = e % n, r = e / n, j = r % n, b = r / n;
    if (i < j) c[b * stride + i + j * ld] = c[b * stride + j + i * ld];
  }
}

template <class T>
static int syrk_t(const context &c, const ml_matrices *cm, const ml_matrices *a, int trans,
                  double alpha, double beta) {
  int64_t n = cm->rows, k = trans ? a->rows : a->cols;
  cublasOperation_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  int rc = ML_OK;
  for (int64_t i = 0; !rc && i < cm->batch; i++)
    rc = cuda_blas_check(syrk_one(c.blas, op, n, k, alpha, matrix<T>(a, i), a->ld, beta,
                                  matrix<T>(cm, i), cm->ld),
                         "syrk");
  int64_t total = cm->batch * n * n;
  if (!rc)
    rc = cuda_launch<mirror_lower<T>>(c.d, grid_for(total, 256, c.d), 256, 0, "syrk",
                                      (T *)cm->data, n, cm->ld, cm->stride, cm->batch);
  return rc;
}

static int cuda_syrk(const ml_matrices *cm, const ml_matrices *a, int trans, double alpha,
                     double beta) {
  context c;
  int rc = enter(cm, &c);
  if (rc || cm->batch * cm->rows == 0) return rc;
  return cm->dtype == ML_FLOAT32 ? syrk_t<float>(c, cm, a, trans, alpha, beta)
                                 : syrk_t<double>(c, cm, a, trans, alpha, beta);
}

/* getrf, getrs ----------------------------------------------------------------- */

static cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, float *a, int lda, int *lw) {
  return cusolverDnSgetrf_bufferSize(h, n, n, a, lda, lw);
}
static cusolverStatus_t getrf_size(cusolverDnHandle_t h, int n, double *a, int lda,
                                   int *lw) {
  return cusolverDnDgetrf_bufferSize(h, n, n, a, lda, lw);
}
static cusolverStatus_t getrf_one(cusolverDnHandle_t h, int n, float *a, int lda, float *w,
                                  int *ipiv, int *info) {
  return cusolverDnSgetrf(h, n, n, a, lda, w, ipiv, info);
}
static cusolverStatus_t getrf_one(cusolverDnHandle_t h, int n, double *a, int lda,
                                  double *w, int *ipiv, int *info) {
  return cusolverDnDgetrf(h, n, n, a, lda, w, ipiv, info);
}
static cublasStatus_t getrf_many(cublasHandle_t h, int n, float **a, int lda, int *ipiv,
                                 int *info, int batch) {
  return cublasSgetrfBatched(h, n, a, lda, ipiv, info, batch);
}
static cublasStatus_t getrf_many(cublasHandle_t h, int n, double **a, int lda, int *ipiv,
                                 int *info, int batch) {
  return cublasDgetrfBatched(h, n, a, lda, ipiv, info, batch);
}

template <class T>
static int getrf_t(const context &c, const ml_matrices *a, int *ipiv, int *info) {
  int n = (int)a->rows, lda = (int)a->ld, lwork = 0;
  cuda_scratch s;
  if (a->batch > 1) {
    T **pa;
    int rc = pointers(c.d, s, a, a->batch, 0, &pa);
    if (!rc)
      rc = cuda_blas_check(getrf_many(c.blas, n, pa, lda, ipiv, info, (int)a->batch),
                           "getrf");
    return rc;
  }
  int rc = solver_check(getrf_size(c.solver, n, (T *)a->data, lda, &lwork), "getrf");
  if (!rc) rc = s.get(c.d->index, (size_t)lwork * sizeof(T), "getrf");
  if (!rc)
    rc = solver_check(getrf_one(c.solver, n, (T *)a->data, lda, s.as<T>(), ipiv, info),
                      "getrf");
  return rc;
}

static int cuda_getrf(const ml_matrices *a, const ml_array *ipiv, const ml_array *info) {
  context c;
  int rc = enter(a, &c);
  if (!rc) rc = fits_int("getrf", a->rows, a->ld, a->batch);
  if (rc) return rc;
  int *p = array_ptr<int>(ipiv), *i = array_ptr<int>(info);
  return a->dtype == ML_FLOAT32 ? getrf_t<float>(c, a, p, i) : getrf_t<double>(c, a, p, i);
}

static cusolverStatus_t getrs_one(cusolverDnHandle_t h, int n, int k, const float *a,
                                  int lda, const int *ipiv, float *b, int ldb, int *info) {
  return cusolverDnSgetrs(h, CUBLAS_OP_N, n, k, a, lda, ipiv, b, ldb, info);
}
static cusolverStatus_t getrs_one(cusolverDnHandle_t h, int n, int k, const double *a,
                                  int lda, const int *ipiv, double *b, int ldb, int *info) {
  return cusolverDnDgetrs(h, CUBLAS_OP_N, n, k, a, lda, ipiv, b, ldb, info);
}
static cublasStatus_t getrs_many(cublasHandle_t h, int n, int k, float **a, int lda,
                                 const int *ipiv, float **b, int ldb, int *info, int batch) {
  return cublasSgetrsBatched(h, CUBLAS_OP_N, n, k, a, lda, ipiv, b, ldb, info, batch);
}
static cublasStatus_t getrs_many(cublasHandle_t h, int n, int k, double **a, int lda,
                                 const int *ipiv, double **b, int ldb, int *info,
                                 int batch) {
  return cublasDgetrsBatched(h, CUBLAS_OP_N, n, k, a, lda, ipiv, b, ldb, info, batch);
}

/* One LU for every right-hand side: the contiguous B are the columns of
 * one wide matrix; else a batched call. */
template <class T>
static int getrs_t(const context &c, const ml_matrices *lu, const int *ipiv,
                   const ml_matrices *b) {
  int n = (int)lu->rows, lda = (int)lu->ld, ldb = (int)b->ld;
  int fold = lu->batch == 1 && (b->batch == 1 || b->stride == b->ld * b->cols);
  cuda_scratch s, sa, sb;
  if (fold) {
    int rc = fits_int("getrs", b->cols * b->batch, ldb, n);
    if (!rc) rc = s.get(c.d->index, sizeof(int), "getrs");
    if (!rc)
      rc = solver_check(getrs_one(c.solver, n, (int)(b->cols * b->batch), (const T *)lu->data,
                                  lda, ipiv, (T *)b->data, ldb, s.as<int>()),
                        "getrs");
    return rc;
  }
  T **pa, **pb;
  int info = 0;
  int rc = fits_int("getrs", b->cols, ldb, b->batch);
  if (!rc && lu->batch != b->batch)
    rc = ml_fail(ML_EINVAL, "getrs: one LU for a strided batch of right-hand sides");
  if (!rc) rc = pointers(c.d, sa, lu, b->batch, 0, &pa);
  if (!rc) rc = pointers(c.d, sb, b, b->batch, 0, &pb);
  if (!rc)
    rc = cuda_blas_check(getrs_many(c.blas, n, (int)b->cols, pa, lda, ipiv, pb, ldb, &info,
                                    (int)b->batch),
                         "getrs");
  return rc;
}

static int cuda_getrs(const ml_matrices *lu, const ml_array *ipiv, const ml_matrices *b) {
  context c;
  int rc = enter(lu, &c);
  if (!rc) rc = fits_int("getrs", lu->rows, lu->ld, b->batch);
  if (rc || b->batch * b->cols == 0) return rc;
  const int *p = array_ptr<int>(ipiv);
  return lu->dtype == ML_FLOAT32 ? getrs_t<float>(c, lu, p, b) : getrs_t<double>(c, lu, p, b);
}

/* syevd ------------------------------------------------------------------------- */

/* A stack goes to syevBatched in one call while it is within that
 * routine's limit (n * lda * batch < 2^31 elements), which reads matrix k
 * at k * lda * n, as the core's are packed; else, and for one matrix,
 * syevd a matrix at a time. */
static int cuda_syevd(const ml_matrices *a, int upper, int vectors, const ml_array *w,
                      const ml_array *info) {
  context c;
  int rc = enter(a, &c);
  if (rc) return rc;
  cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  cudaDataType t = data_type(a->dtype);
  int64_t n = a->rows, es = elem(a);
  char *wp = (char *)ml_array_data(w);
  int *dinfo = array_ptr<int>(info);
  int batched = a->batch > 1 && n * a->ld * a->batch <= INT_MAX;
  solver_params p;
  size_t dbytes = 0, hbytes = 0;
  cuda_scratch work;
  host_buffer host;
  rc = p.make();
  if (!rc && batched)
    rc = solver_check(cusolverDnXsyevBatched_bufferSize(c.solver, p.p, jobz, uplo, n, t,
                                                        a->data, a->ld, t, wp, t, &dbytes,
                                                        &hbytes, a->batch),
                      "syevd");
  else if (!rc)
    rc = solver_check(cusolverDnXsyevd_bufferSize(c.solver, p.p, jobz, uplo, n, t, a->data,
                                                  a->ld, t, wp, t, &dbytes, &hbytes),
                      "syevd");
  if (!rc) rc = work.get(c.d->index, dbytes, "syevd");
  if (!rc) rc = host.get(c.d, hbytes, "syevd");
  if (!rc && batched)
    return solver_check(cusolverDnXsyevBatched(c.solver, p.p, jobz, uplo, n, t, a->data,
                                               a->ld, t, wp, t, work.ptr, dbytes, host.ptr,
                                               hbytes, dinfo, a->batch),
                        "syevd");
  for (int64_t i = 0; !rc && i < a->batch; i++)
    rc = solver_check(cusolverDnXsyevd(c.solver, p.p, jobz, uplo, n, t,
                                       (char *)a->data + i * a->stride * es, a->ld, t,
                                       wp + i * n * es, t, work.ptr, dbytes, host.ptr, hbytes,
                                       dinfo + i),
                      "syevd");
  return rc;
}

/* geqrf, orgqr -------------------------------------------------------------------- */

static int cuda_geqrf(const ml_matrices *a, const ml_array *tau) {
  context c;
  int rc = enter(a, &c);
  if (rc) return rc;
  int64_t k = a->rows < a->cols ? a->rows : a->cols, es = elem(a);
  cudaDataType t = data_type(a->dtype);
  char *tp = (char *)ml_array_data(tau);
  solver_params p;
  size_t dbytes = 0, hbytes = 0;
  cuda_scratch work, info;
  host_buffer host;
  rc = p.make();
  if (!rc)
    rc = solver_check(cusolverDnXgeqrf_bufferSize(c.solver, p.p, a->rows, a->cols, t, a->data,
                                                  a->ld, t, tp, t, &dbytes, &hbytes),
                      "geqrf");
  if (!rc) rc = work.get(c.d->index, dbytes, "geqrf");
  if (!rc) rc = info.get(c.d->index, sizeof(int), "geqrf");
  if (!rc) rc = host.get(c.d, hbytes, "geqrf");
  for (int64_t i = 0; !rc && i < a->batch; i++)
    rc = solver_check(cusolverDnXgeqrf(c.solver, p.p, a->rows, a->cols, t,
                                       (char *)a->data + i * a->stride * es, a->ld, t,
                                       tp + i * k * es, t, work.ptr, dbytes, host.ptr, hbytes,
                                       info.as<int>()),
                      "geqrf");
  return rc;
}

static cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const float *a,
                                   int lda, const float *tau, int *lw) {
  return cusolverDnSorgqr_bufferSize(h, m, n, k, a, lda, tau, lw);
}
static cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k,
                                   const double *a, int lda, const double *tau, int *lw) {
  return cusolverDnDorgqr_bufferSize(h, m, n, k, a, lda, tau, lw);
}
static cusolverStatus_t orgqr_one(cusolverDnHandle_t h, int m, int n, int k, float *a,
                                  int lda, const float *tau, float *w, int lw, int *info) {
  return cusolverDnSorgqr(h, m, n, k, a, lda, tau, w, lw, info);
}
static cusolverStatus_t orgqr_one(cusolverDnHandle_t h, int m, int n, int k, double *a,
                                  int lda, const double *tau, double *w, int lw, int *info) {
  return cusolverDnDorgqr(h, m, n, k, a, lda, tau, w, lw, info);
}

template <class T>
static int orgqr_t(const context &c, const ml_matrices *a, int64_t k, T *tau) {
  int m = (int)a->rows, n = (int)a->cols, kk = (int)k, lda = (int)a->ld, lwork = 0;
  cuda_scratch work, info;
  int rc = solver_check(orgqr_size(c.solver, m, n, kk, (T *)a->data, lda, tau, &lwork),
                        "orgqr");
  if (!rc) rc = work.get(c.d->index, (size_t)lwork * sizeof(T), "orgqr");
  if (!rc) rc = info.get(c.d->index, sizeof(int), "orgqr");
  for (int64_t i = 0; !rc && i < a->batch; i++)
    rc = solver_check(orgqr_one(c.solver, m, n, kk, matrix<T>(a, i), lda, tau + i * k,
                                work.as<T>(), lwork, info.as<int>()),
                      "orgqr");
  return rc;
}

static int cuda_orgqr(const ml_matrices *a, int64_t k, const ml_array *tau) {
  context c;
  int rc = enter(a, &c);
  if (!rc) rc = fits_int("orgqr", a->rows, a->cols, a->ld);
  if (rc) return rc;
  return a->dtype == ML_FLOAT32 ? orgqr_t<float>(c, a, k, array_ptr<float>(tau))
                                : orgqr_t<double>(c, a, k, array_ptr<double>(tau));
}

/* gesvd ------------------------------------------------------------------------ */

static int cuda_gesvd(const ml_matrices *a, const ml_array *s, const ml_matrices *u,
                      const ml_matrices *vt, const ml_array *info) {
  context c;
  int rc = enter(a, &c);
  if (rc) return rc;
  signed char jobu = !u ? 'N' : u->cols == u->rows ? 'A' : 'S', jobvt = u ? 'A' : 'N';
  int64_t m = a->rows, n = a->cols, es = elem(a);
  int64_t ldu = u ? u->ld : m, ldvt = vt ? vt->ld : n;
  cudaDataType t = data_type(a->dtype);
  char *sp = (char *)ml_array_data(s);
  int *dinfo = array_ptr<int>(info);
  solver_params p;
  size_t dbytes = 0, hbytes = 0;
  cuda_scratch work;
  host_buffer host;
  rc = p.make();
  if (!rc)
    rc = solver_check(cusolverDnXgesvd_bufferSize(c.solver, p.p, jobu, jobvt, m, n, t,
                                                  a->data, a->ld, t, sp, t,
                                                  u ? u->data : nullptr, ldu, t,
                                                  vt ? vt->data : nullptr, ldvt, t, &dbytes,
                                                  &hbytes),
                      "gesvd");
  if (!rc) rc = work.get(c.d->index, dbytes, "gesvd");
  if (!rc) rc = host.get(c.d, hbytes, "gesvd");
  for (int64_t i = 0; !rc && i < a->batch; i++) {
    void *ui = u ? (char *)u->data + i * u->stride * es : nullptr;
    void *vi = vt ? (char *)vt->data + i * vt->stride * es : nullptr;
    rc = solver_check(cusolverDnXgesvd(c.solver, p.p, jobu, jobvt, m, n, t,
                                       (char *)a->data + i * a->stride * es, a->ld, t,
                                       sp + i * n * es, t, ui, ldu, t, vi, ldvt, t, work.ptr,
                                       dbytes, host.ptr, hbytes, dinfo + i),
                      "gesvd");
  }
  return rc;
}

const ml_linalg_backend cuda_linalg_backend = {
    cuda_potrf, cuda_triangle, cuda_trsm,  cuda_trtri, cuda_syrk,
    cuda_getrf, cuda_getrs,    cuda_syevd, cuda_geqrf, cuda_orgqr,
    cuda_gesvd, cuda_mahalanobis, cuda_weighted_gram,
};
