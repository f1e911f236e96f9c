/* Linear algebra on the CPU (contracts in core/linalg_backend.h):
 * LAPACKE's column-major _work routines (no NaN checks, workspace given)
 * and OpenBLAS's cblas, one matrix at a time; the SVD is LAPACK's gesdd,
 * as NumPy's.
 *
 * A batch of small matrices spreads over OpenMP threads, one matrix an
 * iteration, with OpenBLAS held to one thread meanwhile (its own threads
 * on top of ours would oversubscribe the cores); larger ones go one after
 * another, each threaded by OpenBLAS. Every matrix is computed by one
 * thread in the same way either way, so results never depend on the
 * thread count. Worker threads return codes, and the messages are formatted
 * once the loop is over (ml_fail's message is per thread). */
#include <cblas.h>
#include <lapacke.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "cpu.h"
#include "strided.h"

/* Matrices of lower order than this run a thread each in a batch. */
#define SMALL_ORDER 128
/* A worker's code for a workspace it could not allocate (LAPACK's own
 * codes for a bad argument are -1 and below). */
#define NO_MEMORY (INT_MIN)

typedef int (*matrix_fn)(const void *job, int64_t i);

/* Matrix i of m. */
static void *mat(const ml_matrices *m, int64_t i) {
  return (char *)m->data + i * m->stride * (int64_t)ml_dtype_size(m->dtype);
}

/* ML_OK when m's sizes fit LAPACK's 32-bit integers. */
static int fits(const char *op, const ml_matrices *m) {
  if (m->rows <= INT_MAX && m->cols <= INT_MAX && m->ld <= INT_MAX)
    return ML_OK;
  return ml_fail(ML_EINVAL, "%s: a %lldx%lld matrix exceeds LAPACK's 32-bit sizes",
                 op, (long long)m->rows, (long long)m->cols);
}

/* A workspace size from a LAPACK query, rounded up (float32's answer may
 * have been rounded down). */
static lapack_int lwork_of(double q) {
  return (lapack_int)(q * (1 + 0x1p-20)) + 1;
}

/* Runs fn(job, i) for i < batch, a thread a matrix when the matrices
 * (of the given order) are small and the batch is worth the threads. */
static int run_batch(const char *op, int64_t batch, int64_t order,
                     matrix_fn fn, const void *job) {
  int code = 0;
  int threads = batch > 1 && order < SMALL_ORDER
                    ? cpu_threads_for(batch * order * order * order,
                                      CPU_PARALLEL_MIN)
                    : 1;
  if (threads > batch) threads = (int)batch;
  if (threads > 1) {
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < batch; i++) {
      if (ml_interrupt_pending()) continue;
      int c = fn(job, i);
      if (c) {
#pragma omp critical(cpu_linalg_code)
        if (!code) code = c;
      }
    }
    openblas_set_num_threads(saved);
  } else {
    for (int64_t i = 0; i < batch && !code && !ml_interrupt_pending(); i++)
      code = fn(job, i);
  }
  if (ml_interrupt_take()) return ml_fail(ML_EINTR, "%s: interrupted", op);
  if (code == NO_MEMORY)
    return ml_fail(ML_ENOMEM, "%s: out of memory for LAPACK's workspace", op);
  if (code)
    return ml_fail(ML_EINVAL, "%s: LAPACK rejected argument %d", op, -code);
  return ML_OK;
}

static int32_t *info_of(const ml_array *info) {
  return (int32_t *)ml_array_data(info);
}

/* potrf ------------------------------------------------------------------- */

typedef struct {
  const ml_matrices *a;
  char uplo;
  int32_t *info;
} potrf_job;

/* The order of the first NaN on the diagonal of the factor (0: none):
 * OpenBLAS's potrf tests ajj <= 0 alone, so a NaN goes through it. */
static lapack_int nan_minor(const ml_matrices *a, int64_t i) {
  for (int64_t k = 0; k < a->rows; k++) {
    int64_t at = k + k * a->ld;
    double v = a->dtype == ML_FLOAT32 ? ((float *)mat(a, i))[at]
                                      : ((double *)mat(a, i))[at];
    if (v != v) return (lapack_int)k + 1;
  }
  return 0;
}

static int potrf_one(const void *job, int64_t i) {
  const potrf_job *j = job;
  lapack_int n = (lapack_int)j->a->rows, lda = (lapack_int)j->a->ld, info;
  if (j->a->dtype == ML_FLOAT32)
    info = LAPACKE_spotrf_work(LAPACK_COL_MAJOR, j->uplo, n, mat(j->a, i), lda);
  else
    info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, j->uplo, n, mat(j->a, i), lda);
  if (info < 0) return info;
  j->info[i] = info ? info : nan_minor(j->a, i);
  return 0;
}

static int cpu_potrf(const ml_matrices *a, int upper, const ml_array *info) {
  potrf_job j = {a, upper ? 'U' : 'L', info_of(info)};
  int rc = fits("potrf", a);
  return rc ? rc : run_batch("potrf", a->batch, a->rows, potrf_one, &j);
}

/* triangle ------------------------------------------------------------------ */

/* Zeroes the part of each column outside the kept triangle. */
static void triangle_one(const ml_matrices *a, int upper, int64_t b) {
  size_t es = ml_dtype_size(a->dtype);
  char *p = mat(a, b);
  for (int64_t j = 0; j < a->cols; j++) {
    int64_t from = upper ? j + 1 : 0, to = upper ? a->rows : j;
    if (to > a->rows) to = a->rows;
    if (from < to)
      memset(p + (from + j * a->ld) * (int64_t)es, 0, (size_t)(to - from) * es);
  }
}

static int cpu_triangle(const ml_matrices *a, int upper) {
  int threads = cpu_threads_for(a->batch * a->rows * a->cols, CPU_PARALLEL_MIN);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int64_t b = 0; b < a->batch; b++) triangle_one(a, upper, b);
  return ML_OK;
}

/* trsm ---------------------------------------------------------------------- */

typedef struct {
  const ml_matrices *a, *b;
  enum CBLAS_SIDE side;
  enum CBLAS_UPLO uplo;
  enum CBLAS_TRANSPOSE trans;
  enum CBLAS_DIAG diag;
} trsm_job;

static int trsm_one(const void *job, int64_t i) {
  const trsm_job *j = job;
  const ml_matrices *a = j->a, *b = j->b;
  void *pa = mat(a, a->batch == 1 ? 0 : i), *pb = mat(b, i);
  int m = (int)b->rows, n = (int)b->cols, lda = (int)a->ld, ldb = (int)b->ld;
  if (a->dtype == ML_FLOAT32)
    cblas_strsm(CblasColMajor, j->side, j->uplo, j->trans, j->diag, m, n, 1,
                pa, lda, pb, ldb);
  else
    cblas_dtrsm(CblasColMajor, j->side, j->uplo, j->trans, j->diag, m, n, 1,
                pa, lda, pb, ldb);
  return 0;
}

static int cpu_trsm(const ml_matrices *a, const ml_matrices *b, int left,
                    int upper, int trans, int unit) {
  trsm_job j = {a, b, left ? CblasLeft : CblasRight,
                upper ? CblasUpper : CblasLower,
                trans ? CblasTrans : CblasNoTrans,
                unit ? CblasUnit : CblasNonUnit};
  int rc = fits("trsm", a);
  if (!rc) rc = fits("trsm", b);
  return rc ? rc : run_batch("trsm", b->batch, a->rows, trsm_one, &j);
}

/* trtri --------------------------------------------------------------------- */

typedef struct {
  const ml_matrices *a, *x;
  char uplo, diag;
  int32_t *info;
} trtri_job;

/* a's matrix i copied to x's, its other triangle zeroed, then inverted
 * there by LAPACK (whose unit-diagonal inverse leaves the diagonal as it
 * was: ones are put there first). */
static int trtri_one(const void *job, int64_t i) {
  const trtri_job *j = job;
  int64_t n = j->a->rows, es = (int64_t)ml_dtype_size(j->a->dtype);
  const char *src = mat(j->a, i);
  char *dst = mat(j->x, i);
  for (int64_t c = 0; c < n; c++)
    memcpy(dst + c * j->x->ld * es, src + c * j->a->ld * es, (size_t)(n * es));
  triangle_one(j->x, j->uplo == 'U', i);
  for (int64_t k = 0; k < n && j->diag == 'U'; k++) {
    if (j->a->dtype == ML_FLOAT32)
      ((float *)dst)[k + k * j->x->ld] = 1;
    else
      ((double *)dst)[k + k * j->x->ld] = 1;
  }
  lapack_int info, ldx = (lapack_int)j->x->ld;
  if (j->a->dtype == ML_FLOAT32)
    info = LAPACKE_strtri_work(LAPACK_COL_MAJOR, j->uplo, j->diag, (lapack_int)n,
                               (float *)dst, ldx);
  else
    info = LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, j->uplo, j->diag, (lapack_int)n,
                               (double *)dst, ldx);
  if (info < 0) return info;
  j->info[i] = info;
  return 0;
}

static int cpu_trtri(const ml_matrices *a, const ml_matrices *x, int upper, int unit,
                     const ml_array *info) {
  trtri_job j = {a, x, upper ? 'U' : 'L', unit ? 'U' : 'N', info_of(info)};
  int rc = fits("trtri", a);
  if (!rc) rc = fits("trtri", x);
  return rc ? rc : run_batch("trtri", a->batch, a->rows, trtri_one, &j);
}

/* syrk ---------------------------------------------------------------------- */

typedef struct {
  const ml_matrices *c, *a;
  enum CBLAS_TRANSPOSE trans;
  double alpha, beta;
} syrk_job;

static int syrk_one(const void *job, int64_t i) {
  const syrk_job *j = job;
  const ml_matrices *c = j->c, *a = j->a;
  int n = (int)c->rows, k = (int)(j->trans == CblasTrans ? a->rows : a->cols);
  int lda = (int)a->ld, ldc = (int)c->ld;
  int64_t ld = c->ld;
  if (c->dtype == ML_FLOAT32) {
    float *p = mat(c, i);
    cblas_ssyrk(CblasColMajor, CblasLower, j->trans, n, k, (float)j->alpha,
                mat(a, i), lda, (float)j->beta, p, ldc);
    for (int64_t col = 1; col < n; col++)
      for (int64_t row = 0; row < col; row++) p[row + col * ld] = p[col + row * ld];
  } else {
    double *p = mat(c, i);
    cblas_dsyrk(CblasColMajor, CblasLower, j->trans, n, k, j->alpha,
                mat(a, i), lda, j->beta, p, ldc);
    for (int64_t col = 1; col < n; col++)
      for (int64_t row = 0; row < col; row++) p[row + col * ld] = p[col + row * ld];
  }
  return 0;
}

static int cpu_syrk(const ml_matrices *c, const ml_matrices *a, int trans,
                    double alpha, double beta) {
  syrk_job j = {c, a, trans ? CblasTrans : CblasNoTrans, alpha, beta};
  int rc = fits("syrk", a);
  if (!rc) rc = fits("syrk", c);
  return rc ? rc : run_batch("syrk", c->batch, c->rows, syrk_one, &j);
}

/* getrf, getrs ---------------------------------------------------------------- */

typedef struct {
  const ml_matrices *a;
  int32_t *ipiv, *info;
  const ml_matrices *b;
} lu_job;

static int getrf_one(const void *job, int64_t i) {
  const lu_job *j = job;
  lapack_int n = (lapack_int)j->a->rows, lda = (lapack_int)j->a->ld, info;
  lapack_int *ipiv = j->ipiv + i * n;
  if (j->a->dtype == ML_FLOAT32)
    info = LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, mat(j->a, i), lda, ipiv);
  else
    info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, mat(j->a, i), lda, ipiv);
  if (info < 0) return info;
  j->info[i] = info;
  return 0;
}

static int cpu_getrf(const ml_matrices *a, const ml_array *ipiv,
                     const ml_array *info) {
  lu_job j = {a, info_of(ipiv), info_of(info), NULL};
  int rc = fits("getrf", a);
  return rc ? rc : run_batch("getrf", a->batch, a->rows, getrf_one, &j);
}

static int getrs_one(const void *job, int64_t i) {
  const lu_job *j = job;
  const ml_matrices *a = j->a, *b = j->b;
  int64_t ai = a->batch == 1 ? 0 : i;
  lapack_int n = (lapack_int)a->rows, lda = (lapack_int)a->ld;
  lapack_int k = (lapack_int)b->cols, ldb = (lapack_int)b->ld, info;
  if (a->dtype == ML_FLOAT32)
    info = LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, 'N', n, k, mat(a, ai), lda,
                               j->ipiv + ai * n, mat(b, i), ldb);
  else
    info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, k, mat(a, ai), lda,
                               j->ipiv + ai * n, mat(b, i), ldb);
  return info;
}

static int cpu_getrs(const ml_matrices *lu, const ml_array *ipiv,
                     const ml_matrices *b) {
  lu_job j = {lu, info_of(ipiv), NULL, b};
  int rc = fits("getrs", lu);
  if (!rc) rc = fits("getrs", b);
  return rc ? rc : run_batch("getrs", b->batch, lu->rows, getrs_one, &j);
}

/* syevd ----------------------------------------------------------------------- */

typedef struct {
  const ml_matrices *a;
  char jobz, uplo;
  void *w;
  int32_t *info;
} syevd_job;

static int syevd_one(const void *job, int64_t i) {
  const syevd_job *j = job;
  lapack_int n = (lapack_int)j->a->rows, lda = (lapack_int)j->a->ld;
  lapack_int info, liwork, iq;
  void *work = NULL;
  lapack_int *iwork = NULL;
  if (j->a->dtype == ML_FLOAT32) {
    float q, *w = (float *)j->w + i * n;
    info = LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, j->jobz, j->uplo, n,
                               mat(j->a, i), lda, w, &q, -1, &iq, -1);
    lapack_int lwork = lwork_of(q);
    liwork = iq;
    work = info ? NULL : malloc((size_t)lwork * sizeof(float));
    iwork = info ? NULL : malloc((size_t)liwork * sizeof *iwork);
    if (!info && work && iwork)
      info = LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, j->jobz, j->uplo, n,
                                 mat(j->a, i), lda, w, work, lwork, iwork,
                                 liwork);
  } else {
    double q, *w = (double *)j->w + i * n;
    info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, j->jobz, j->uplo, n,
                               mat(j->a, i), lda, w, &q, -1, &iq, -1);
    lapack_int lwork = lwork_of(q);
    liwork = iq;
    work = info ? NULL : malloc((size_t)lwork * sizeof(double));
    iwork = info ? NULL : malloc((size_t)liwork * sizeof *iwork);
    if (!info && work && iwork)
      info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, j->jobz, j->uplo, n,
                                 mat(j->a, i), lda, w, work, lwork, iwork,
                                 liwork);
  }
  int code = !info && (!work || !iwork) ? NO_MEMORY : info < 0 ? info : 0;
  if (!code) j->info[i] = info;
  free(work);
  free(iwork);
  return code;
}

static int cpu_syevd(const ml_matrices *a, int upper, int vectors,
                     const ml_array *w, const ml_array *info) {
  syevd_job j = {a, vectors ? 'V' : 'N', upper ? 'U' : 'L', ml_array_data(w),
                 info_of(info)};
  int rc = fits("syevd", a);
  return rc ? rc : run_batch("syevd", a->batch, a->rows, syevd_one, &j);
}

/* geqrf, orgqr ------------------------------------------------------------------ */

typedef struct {
  const ml_matrices *a;
  int64_t k;
  void *tau;
} qr_job;

static int geqrf_one(const void *job, int64_t i) {
  const qr_job *j = job;
  lapack_int m = (lapack_int)j->a->rows, n = (lapack_int)j->a->cols;
  lapack_int lda = (lapack_int)j->a->ld, info;
  void *work = NULL;
  if (j->a->dtype == ML_FLOAT32) {
    float q, *tau = (float *)j->tau + i * j->k;
    info = LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, mat(j->a, i), lda, tau,
                               &q, -1);
    lapack_int lwork = lwork_of(q);
    work = info ? NULL : malloc((size_t)lwork * sizeof(float));
    if (!info && work)
      info = LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, mat(j->a, i), lda,
                                 tau, work, lwork);
  } else {
    double q, *tau = (double *)j->tau + i * j->k;
    info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, mat(j->a, i), lda, tau,
                               &q, -1);
    lapack_int lwork = lwork_of(q);
    work = info ? NULL : malloc((size_t)lwork * sizeof(double));
    if (!info && work)
      info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, mat(j->a, i), lda,
                                 tau, work, lwork);
  }
  free(work);
  return !info && !work ? NO_MEMORY : info;
}

static int cpu_geqrf(const ml_matrices *a, const ml_array *tau) {
  qr_job j = {a, a->rows < a->cols ? a->rows : a->cols, ml_array_data(tau)};
  int rc = fits("geqrf", a);
  int64_t order = a->rows < a->cols ? a->cols : a->rows;
  return rc ? rc : run_batch("geqrf", a->batch, order, geqrf_one, &j);
}

static int orgqr_one(const void *job, int64_t i) {
  const qr_job *j = job;
  lapack_int m = (lapack_int)j->a->rows, n = (lapack_int)j->a->cols;
  lapack_int k = (lapack_int)j->k, lda = (lapack_int)j->a->ld, info;
  void *work = NULL;
  if (j->a->dtype == ML_FLOAT32) {
    float q, *tau = (float *)j->tau + i * j->k;
    info = LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, mat(j->a, i), lda,
                               tau, &q, -1);
    lapack_int lwork = lwork_of(q);
    work = info ? NULL : malloc((size_t)lwork * sizeof(float));
    if (!info && work)
      info = LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, mat(j->a, i), lda,
                                 tau, work, lwork);
  } else {
    double q, *tau = (double *)j->tau + i * j->k;
    info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, mat(j->a, i), lda,
                               tau, &q, -1);
    lapack_int lwork = lwork_of(q);
    work = info ? NULL : malloc((size_t)lwork * sizeof(double));
    if (!info && work)
      info = LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, mat(j->a, i), lda,
                                 tau, work, lwork);
  }
  free(work);
  return !info && !work ? NO_MEMORY : info;
}

static int cpu_orgqr(const ml_matrices *a, int64_t k, const ml_array *tau) {
  qr_job j = {a, k, ml_array_data(tau)};
  int rc = fits("orgqr", a);
  return rc ? rc : run_batch("orgqr", a->batch, a->rows, orgqr_one, &j);
}

/* gesvd (through gesdd) ------------------------------------------------------------ */

typedef struct {
  const ml_matrices *a, *u, *vt;
  void *s;
  int32_t *info;
} svd_job;

static int gesvd_one(const void *job, int64_t i) {
  const svd_job *j = job;
  const ml_matrices *a = j->a, *u = j->u, *vt = j->vt;
  lapack_int m = (lapack_int)a->rows, n = (lapack_int)a->cols;
  lapack_int lda = (lapack_int)a->ld, ldu = u ? (lapack_int)u->ld : 1;
  lapack_int ldvt = vt ? (lapack_int)vt->ld : 1, info;
  char jobz = !u ? 'N' : u->cols == u->rows ? 'A' : 'S';
  void *pu = u ? mat(u, i) : NULL, *pvt = vt ? mat(vt, i) : NULL, *work = NULL;
  lapack_int *iwork = malloc((size_t)(8 * (n > 0 ? n : 1)) * sizeof *iwork);
  if (!iwork) return NO_MEMORY;
  if (a->dtype == ML_FLOAT32) {
    float q, *s = (float *)j->s + i * n;
    info = LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, mat(a, i), lda, s,
                               pu, ldu, pvt, ldvt, &q, -1, iwork);
    lapack_int lwork = lwork_of(q);
    work = info ? NULL : malloc((size_t)lwork * sizeof(float));
    if (!info && work && iwork)
      info = LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, mat(a, i), lda,
                                 s, pu, ldu, pvt, ldvt, work, lwork, iwork);
  } else {
    double q, *s = (double *)j->s + i * n;
    info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, mat(a, i), lda, s,
                               pu, ldu, pvt, ldvt, &q, -1, iwork);
    lapack_int lwork = lwork_of(q);
    work = info ? NULL : malloc((size_t)lwork * sizeof(double));
    if (!info && work && iwork)
      info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, mat(a, i), lda,
                                 s, pu, ldu, pvt, ldvt, work, lwork, iwork);
  }
  int code = !info && (!work || !iwork) ? NO_MEMORY : info < 0 ? info : 0;
  if (!code) j->info[i] = info;
  free(work);
  free(iwork);
  return code;
}

static int cpu_gesvd(const ml_matrices *a, const ml_array *s,
                     const ml_matrices *u, const ml_matrices *vt,
                     const ml_array *info) {
  svd_job j = {a, u, vt, ml_array_data(s), info_of(info)};
  int rc = fits("gesvd", a);
  if (!rc && u) rc = fits("gesvd", u);
  return rc ? rc : run_batch("gesvd", a->batch, a->rows, gesvd_one, &j);
}

const ml_linalg_backend cpu_linalg_backend = {
    .potrf = cpu_potrf,
    .triangle = cpu_triangle,
    .trsm = cpu_trsm,
    .trtri = cpu_trtri,
    .syrk = cpu_syrk,
    .getrf = cpu_getrf,
    .getrs = cpu_getrs,
    .syevd = cpu_syevd,
    .geqrf = cpu_geqrf,
    .orgqr = cpu_orgqr,
    .gesvd = cpu_gesvd,
    .mahalanobis = cpu_mahalanobis,
    .weighted_gram = cpu_weighted_gram,
};
