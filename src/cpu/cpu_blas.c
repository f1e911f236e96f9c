/* Matrix products on the CPU: OpenBLAS for float32 and float64, plain
 * loops for the integer dtypes (which wrap around on overflow).
 *
 * OpenBLAS threads each large product itself (its own pthreads). A batch of
 * small products, which OpenBLAS runs on the calling thread, is spread over
 * OpenMP threads instead, one product per iteration. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* Below this many multiply-adds OpenBLAS computes a product on the calling
 * thread (its own threshold is higher), so concurrent calls are safe. */
#define SMALL_GEMM 65536

static int fits_blas(const ml_gemm *g) {
  return g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX &&
         g->lda <= INT_MAX && g->ldb <= INT_MAX && g->ldc <= INT_MAX;
}

/* One product of the batch. A large product with a single column (or row)
 * is a matrix-vector product: gemv reads the matrix once instead of packing
 * it (small ones stay with gemm, which never starts threads for them). C's
 * column (row) is zeroed first, so that garbage never leaks in. */
#define CPU_GEMM_FLOAT(name, T, gemm, gemv)                                    \
  static void name(const ml_gemm *g, int64_t i) {                              \
    const T *a = (const T *)g->a + i * g->stride_a;                            \
    const T *b = (const T *)g->b + i * g->stride_b;                            \
    T *c = (T *)g->c + i * g->stride_c;                                        \
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;                           \
    int lda = (int)g->lda, ldb = (int)g->ldb, ldc = (int)g->ldc;               \
    int vec = g->m * g->n * g->k >= SMALL_GEMM;                                \
    if (vec && n == 1) {                                                       \
      for (int r = 0; r < m; r++) c[(int64_t)r * ldc] = 0;                     \
      if (g->trans_a)                                                          \
        gemv(CblasRowMajor, CblasTrans, k, m, 1, a, lda, b,                    \
             g->trans_b ? 1 : ldb, 0, c, ldc);                                 \
      else                                                                     \
        gemv(CblasRowMajor, CblasNoTrans, m, k, 1, a, lda, b,                  \
             g->trans_b ? 1 : ldb, 0, c, ldc);                                 \
    } else if (vec && m == 1) {                                                \
      memset(c, 0, (size_t)n * sizeof(T));                                     \
      if (g->trans_b)                                                          \
        gemv(CblasRowMajor, CblasNoTrans, n, k, 1, b, ldb, a,                  \
             g->trans_a ? lda : 1, 0, c, 1);                                   \
      else                                                                     \
        gemv(CblasRowMajor, CblasTrans, k, n, 1, b, ldb, a,                    \
             g->trans_a ? lda : 1, 0, c, 1);                                   \
    } else {                                                                   \
      gemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,              \
           g->trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1, a, lda, b, ldb, \
           0, c, ldc);                                                         \
    }                                                                          \
  }

CPU_GEMM_FLOAT(gemm_f32, float, cblas_sgemm, cblas_sgemv)
CPU_GEMM_FLOAT(gemm_f64, double, cblas_dgemm, cblas_dgemv)

/* C = op(A) op(B) for one row i of the flattened batch x m rows, in ikj
 * order; U is the unsigned type the products and sums wrap in. */
#define CPU_GEMM_INT(name, T, U)                                               \
  static void name(const ml_gemm *g, int64_t row) {                            \
    int64_t bi = row / g->m, i = row % g->m;                                   \
    int64_t ars = g->trans_a ? 1 : g->lda, acs = g->trans_a ? g->lda : 1;      \
    int64_t brs = g->trans_b ? 1 : g->ldb, bcs = g->trans_b ? g->ldb : 1;      \
    const T *a = (const T *)g->a + bi * g->stride_a + i * ars;                 \
    const T *b = (const T *)g->b + bi * g->stride_b;                           \
    T *c = (T *)g->c + bi * g->stride_c + i * g->ldc;                          \
    for (int64_t j = 0; j < g->n; j++) c[j] = 0;                               \
    for (int64_t p = 0; p < g->k; p++) {                                       \
      U av = (U)a[p * acs];                                                    \
      const T *bp = b + p * brs;                                               \
      for (int64_t j = 0; j < g->n; j++)                                       \
        c[j] = (T)((U)c[j] + av * (U)bp[j * bcs]);                             \
    }                                                                          \
  }

CPU_GEMM_INT(gemm_u8, uint8_t, uint32_t)
CPU_GEMM_INT(gemm_i32, int32_t, uint32_t)
CPU_GEMM_INT(gemm_i64, int64_t, uint64_t)

typedef void (*gemm_unit)(const ml_gemm *g, int64_t i);

/* Runs unit(g, i) for i < count, on several threads when the work (in
 * multiply-adds) is large; every unit writes its own part of C. Large
 * products (threaded by OpenBLAS itself) go one after another. An interrupt
 * skips the units not yet started. */
static int run_units(const ml_gemm *g, gemm_unit unit, int64_t count,
                     int64_t work, int serial) {
  int threads = serial ? 1 : cpu_threads_for(work, CPU_PARALLEL_MIN);
  if (threads > count) threads = (int)count;
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t i = 0; i < count; i++)
    if (!ml_interrupt_pending()) unit(g, i);
  return ml_interrupt_take() ? ml_fail(ML_EINTR, "gemm: interrupted") : ML_OK;
}

int cpu_gemm(const ml_gemm *g) {
  int64_t work = g->batch * g->m * g->n * g->k;
  if (work == 0) return ML_OK;
  switch (g->dtype) {
    case ML_FLOAT32:
    case ML_FLOAT64:
      if (!fits_blas(g))
        return ml_fail(ML_EINVAL, "gemm: a %lldx%lldx%lld product exceeds BLAS's 32-bit sizes",
                       (long long)g->m, (long long)g->k, (long long)g->n);
      return run_units(g, g->dtype == ML_FLOAT32 ? gemm_f32 : gemm_f64, g->batch,
                       work, g->m * g->n * g->k >= SMALL_GEMM);
    case ML_UINT8: return run_units(g, gemm_u8, g->batch * g->m, work, 0);
    case ML_INT32: return run_units(g, gemm_i32, g->batch * g->m, work, 0);
    case ML_INT64: return run_units(g, gemm_i64, g->batch * g->m, work, 0);
    default:
      return ml_fail(ML_EINVAL, "gemm: unsupported dtype %s", ml_dtype_name(g->dtype));
  }
}
