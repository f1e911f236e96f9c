/* Matrix products: cuBLAS for float32 and float64, a tiled kernel for the
 * integer dtypes.
 *
 * CPU reference: src/cpu/cpu_blas.c (OpenBLAS; integer loops that wrap).
 *
 * Row-major to cuBLAS's column-major: a row-major R x W matrix with rows ld
 * apart is, to cuBLAS, the column-major W x R matrix with the same ld, its
 * transpose. So C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: the
 * operands swap places, m and n swap, and each keeps its own transpose
 * flag. Float32 stays full FP32: the handle's math mode is
 * CUBLAS_DEFAULT_MATH, which never uses TF32 (that takes
 * CUBLAS_TF32_TENSOR_OP_MATH, or NVIDIA_TF32_OVERRIDE=1 in the
 * environment), except for a product that asks for it (g->tf32: the kNN
 * search's ranking), computed as CUBLAS_COMPUTE_32F_FAST_TF32. One handle
 * per device, on the device's stream. */
#include <type_traits>

#include "blas.cuh"
#include "launch.cuh"

int cuda_blas_check(cublasStatus_t st, const char *what) {
  if (st == CUBLAS_STATUS_SUCCESS) return ML_OK;
  if (st == CUBLAS_STATUS_ALLOC_FAILED)
    return ml_fail(ML_ENOMEM, "cuda: out of memory in %s", what);
  return ml_fail(ML_EDEVICE, "cuda: %s in %s", cublasGetStatusString(st), what);
}

int cuda_blas_handle(cuda_dev *d, cublasHandle_t *out) {
  if (!d->blas) {
    const char *op = "creating the cuBLAS handle";
    cublasHandle_t h;
    int rc = cuda_blas_check(cublasCreate(&h), op);
    if (!rc) rc = cuda_blas_check(cublasSetStream(h, d->stream), op);
    if (!rc) rc = cuda_blas_check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), op);
    if (rc) return rc;
    d->blas = h;
  }
  *out = (cublasHandle_t)d->blas;
  return ML_OK;
}

/* cuBLAS wants ld >= the stored row length even when there is one row. */
static int64_t fix_ld(int64_t ld, int64_t rows, int64_t width) {
  int64_t need = width > 1 ? width : 1;
  return rows <= 1 && ld < need ? need : ld;
}

static int float_gemm(cuda_dev *d, const ml_gemm *g) {
  cublasHandle_t h;
  int rc = cuda_blas_handle(d, &h);
  if (rc) return rc;
  cublasOperation_t ta = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  int64_t lda = fix_ld(g->lda, g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k);
  int64_t ldb = fix_ld(g->ldb, g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n);
  int64_t ldc = fix_ld(g->ldc, g->m, g->n);
  cublasStatus_t st;
  if (g->dtype == ML_FLOAT32) {
    const float one = 1, zero = 0;
    const float *a = (const float *)g->a, *b = (const float *)g->b;
    float *c = (float *)g->c;
    if (g->tf32)
      st = cublasGemmStridedBatchedEx_64(h, tb, ta, g->n, g->m, g->k, &one, b, CUDA_R_32F, ldb,
                                         g->stride_b, a, CUDA_R_32F, lda, g->stride_a, &zero, c,
                                         CUDA_R_32F, ldc, g->stride_c, g->batch,
                                         CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    else if (g->batch == 1)
      st = cublasSgemm_64(h, tb, ta, g->n, g->m, g->k, &one, b, ldb, a, lda, &zero, c, ldc);
    else
      st = cublasSgemmStridedBatched_64(h, tb, ta, g->n, g->m, g->k, &one, b, ldb,
                                        g->stride_b, a, lda, g->stride_a, &zero, c, ldc,
                                        g->stride_c, g->batch);
  } else {
    const double one = 1, zero = 0;
    const double *a = (const double *)g->a, *b = (const double *)g->b;
    double *c = (double *)g->c;
    if (g->batch == 1)
      st = cublasDgemm_64(h, tb, ta, g->n, g->m, g->k, &one, b, ldb, a, lda, &zero, c, ldc);
    else
      st = cublasDgemmStridedBatched_64(h, tb, ta, g->n, g->m, g->k, &one, b, ldb,
                                        g->stride_b, a, lda, g->stride_a, &zero, c, ldc,
                                        g->stride_c, g->batch);
  }
  return cuda_blas_check(st, "gemm");
}

/* Integer C = op(A) op(B), wrapping: each block computes a 16 x 16 tile of
 * one product of the batch (grid z), stepping through k with 16 x 16 tiles
 * of A and B in shared memory. Shapes: any; meant for modest sizes (the
 * float path is the fast one). */
#define ITILE 16

template <class T>
__global__ void gemm_int(ml_gemm g) {
  __shared__ T as[ITILE][ITILE + 1], bs[ITILE][ITILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t j = (int64_t)blockIdx.x * ITILE + tx;
  for (int64_t z = blockIdx.z; z < g.batch; z += gridDim.z)
    for (int64_t i0 = (int64_t)blockIdx.y * ITILE; i0 < g.m; i0 += (int64_t)gridDim.y * ITILE) {
      const T *a = (const T *)g.a + z * g.stride_a, *b = (const T *)g.b + z * g.stride_b;
      const int64_t i = i0 + ty;
      uint64_t acc = 0;
      for (int64_t p0 = 0; p0 < g.k; p0 += ITILE) {
        int64_t ap = p0 + tx, bp = p0 + ty;
        as[ty][tx] = i < g.m && ap < g.k ? a[g.trans_a ? ap * g.lda + i : i * g.lda + ap] : T(0);
        bs[ty][tx] = bp < g.k && j < g.n ? b[g.trans_b ? j * g.ldb + bp : bp * g.ldb + j] : T(0);
        __syncthreads();
#pragma unroll
        for (int q = 0; q < ITILE; q++)
          acc += (uint64_t)(int64_t)as[ty][q] * (uint64_t)(int64_t)bs[q][tx];
        __syncthreads();
      }
      if (i < g.m && j < g.n) ((T *)g.c)[z * g.stride_c + i * g.ldc + j] = (T)acc;
    }
}

template <class T> static int int_gemm(cuda_dev *d, const ml_gemm *g) {
  dim3 block(ITILE, ITILE);
  int64_t by = (g->m + ITILE - 1) / ITILE, bz = g->batch;
  dim3 grid((unsigned)((g->n + ITILE - 1) / ITILE), (unsigned)(by < 65535 ? by : 65535),
            (unsigned)(bz < 65535 ? bz : 65535));
  return cuda_launch<gemm_int<T>>(d, grid, block, 0, "gemm", *g);
}

/* C = 0 for an empty inner dimension. */
static int zero_product(const ml_gemm *g) {
  ml_storage s = {1, g->device, 0, g->c};
  ml_array c = {};
  c.storage = &s;
  c.dtype = g->dtype;
  c.ndim = 3;
  c.shape[0] = g->batch;
  c.shape[1] = g->m;
  c.shape[2] = g->n;
  c.strides[0] = g->stride_c;
  c.strides[1] = g->ldc;
  c.strides[2] = 1;
  return cuda_fill(&c, ml_scalar_int(0));
}

extern "C" int cuda_gemm(const ml_gemm *g) {
  cuda_dev *d;
  int rc = cuda_enter(g->device.index, &d);
  if (rc || g->m == 0 || g->n == 0 || g->batch == 0) return rc;
  if (g->k == 0) return zero_product(g);
  switch (g->dtype) {
    case ML_FLOAT32: case ML_FLOAT64: return float_gemm(d, g);
    case ML_UINT8: return int_gemm<uint8_t>(d, g);
    case ML_INT32: return int_gemm<int32_t>(d, g);
    default: return int_gemm<int64_t>(d, g);
  }
}
