/* Linear algebra: validation, dtypes, batches and layouts; the backend's
 * linalg area (linalg_backend.h) computes.
 *
 * Layout. The backend takes column-major matrices, as LAPACK; a row-major
 * (C order) copy of an m x n matrix A is the column-major storage of A^T.
 * Where that is what the routine needs, no transpose is made:
 * - symmetric input (cholesky, eigh) is its own transpose, and A's lower
 *   triangle is A^T's upper one, so the triangle flips: the column-major
 *   upper factor U of A^T is the row-major lower factor L = U^T of A;
 * - op(A) X = B is X^T op(A)^T = B^T, a solve from the other side with
 *   A^T in place of A (the triangle flips, trans stays), on the row-major
 *   storage of B and X (solve_triangular, cholesky_solve);
 * - X^T diag(w) X is the column-major product Y Y^T of Y = (sqrt(w) X)^T,
 *   X's row-major storage scaled (gram);
 * - the SVD of a wide A is that of the tall A^T with U and V swapped.
 * LU and QR factor A itself, as NumPy does (the pivots and the reported
 * zero pivot are A's): their inputs and results are transposed copies. */
#include "linalg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "elementwise.h"
#include "linalg_backend.h"
#include "reduce.h"
#include "status.h"
#include "view.h"

static const char *const linalg_entries[] = {
    "potrf", "triangle", "trsm",  "trtri", "syrk",  "getrf",
    "getrs", "syevd",    "geqrf", "orgqr", "gesvd", "mahalanobis",
    "weighted_gram"};
#define NENTRIES (sizeof linalg_entries / sizeof *linalg_entries)
_Static_assert(offsetof(ml_linalg_backend, potrf) +
                       NENTRIES * sizeof(void (*)(void)) ==
                   sizeof(ml_linalg_backend),
               "linalg_entries names every function of ml_linalg_backend");

static ml_backend_area linalg_area = {"linalg", linalg_entries, NENTRIES,
                                      offsetof(ml_linalg_backend, potrf),
                                      {NULL}};

int ml_linalg_backend_register(ml_device_kind kind,
                               const ml_linalg_backend *t) {
  return ml_backend_area_register(&linalg_area, kind, t);
}

int ml_linalg_backend_get(ml_device device, const ml_linalg_backend **out) {
  return ml_backend_area_get(&linalg_area, device, (const void **)out);
}

/* Helpers ---------------------------------------------------------------- */

/* The dtype a's values compute in: float32 and float64 stay, the integer
 * dtypes become float64 (numpy.linalg). */
static ml_dtype float_of(ml_dtype t) {
  return ml_dtype_is_float(t) ? t : ML_FLOAT64;
}

static int64_t rows_of(const ml_array *a) { return a->shape[a->ndim - 2]; }
static int64_t cols_of(const ml_array *a) { return a->shape[a->ndim - 1]; }

/* The number of matrices of a stack (the product of its batch sizes). */
static int64_t batch_of(const ml_array *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim - 2; d++) n *= a->shape[d];
  return n;
}

/* ML_OK when a is a stack of matrices, square ones when asked. */
static int check_matrices(const char *op, const ml_array *a, int square) {
  char s[ML_SHAPE_STR_MAX];
  if (a->ndim < 2)
    return ml_fail(ML_EINVAL, "%s: expects a matrix or a stack of matrices, got shape %s",
                   op, ml_shape_str(a->ndim, a->shape, s, sizeof s));
  if (square && rows_of(a) != cols_of(a))
    return ml_fail(ML_EINVAL, "%s: expects square matrices, got shape %s", op,
                   ml_shape_str(a->ndim, a->shape, s, sizeof s));
  return ML_OK;
}

/* The contiguous stack r (..., cols, rows) as column-major rows x cols
 * matrices: each the transpose of r's matrix. */
static ml_matrices matrices(const ml_array *r) {
  ml_matrices m;
  m.dtype = r->dtype;
  m.device = ml_array_device(r);
  m.rows = cols_of(r);
  m.cols = rows_of(r);
  m.batch = batch_of(r);
  m.data = ml_array_data(r);
  m.ld = m.rows > 1 ? m.rows : 1;
  m.stride = m.rows * m.cols;
  return m;
}

/* out: a new contiguous stack of dtype t holding the transposes of a's
 * matrices, (..., n, m) for a (..., m, n): a's matrices column-major. */
static int transposed(ml_array *out, const ml_array *a, ml_dtype t) {
  ml_array v = {0};
  int rc = ml_view_transpose(&v, a, a->ndim - 2, a->ndim - 1);
  if (!rc) rc = ml_astype(out, &v, t);
  ml_array_release(&v);
  return rc;
}

/* a with its batch dimensions broadcast to the nb sizes of batch (views). */
static int expand_batch(const char *op, ml_array *out, const ml_array *a,
                        int nb, const int64_t *batch) {
  int64_t shape[ML_MAX_DIMS];
  memcpy(shape, batch, (size_t)nb * sizeof *shape);
  shape[nb] = rows_of(a);
  shape[nb + 1] = cols_of(a);
  return ml_view_expand(op, out, a, nb + 2, shape);
}

/* The broadcast batch shape of a and b (matrices in their last two
 * dimensions), or an error naming both shapes. */
static int broadcast_batch(const char *op, const ml_array *a,
                           const ml_array *b, int *nb, int64_t *batch) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  if (ml_broadcast_shape(op, a->ndim - 2, a->shape, b->ndim - 2, b->shape, nb,
                         batch))
    return ml_fail(ML_EINVAL, "%s: shapes %s and %s do not broadcast in the batch dimensions",
                   op, ml_shape_str(a->ndim, a->shape, s1, sizeof s1),
                   ml_shape_str(b->ndim, b->shape, s2, sizeof s2));
  return ML_OK;
}

static int not_aligned(const char *op, const ml_array *a, const ml_array *b,
                       int64_t n, int64_t got) {
  char s1[ML_SHAPE_STR_MAX], s2[ML_SHAPE_STR_MAX];
  return ml_fail(ML_EINVAL, "%s: shapes %s and %s are not aligned (%lld != %lld)",
                 op, ml_shape_str(a->ndim, a->shape, s1, sizeof s1),
                 ml_shape_str(b->ndim, b->shape, s2, sizeof s2), (long long)n,
                 (long long)got);
}

/* The backend's answers in an info array, and how to word the first
 * failure. */
typedef enum { NOT_PD, SINGULAR, ZERO_DIAGONAL, NO_CONVERGENCE } failure;

/* Reads the int32 info of a stack (the call's one wait for the device)
 * and turns its first nonzero entry into op's error. */
static int check_info(const char *op, const ml_array *info, int stacked,
                      failure kind) {
  const ml_backend *be;
  int64_t n = ml_array_numel(info);
  int rc = ml_backend_get(ml_array_device(info), &be);
  if (rc) return rc;
  int32_t *v = malloc((size_t)n * sizeof *v);
  if (!v) return ml_fail(ML_ENOMEM, "%s: out of memory", op);
  rc = be->download(v, info);
  int64_t i = 0;
  while (!rc && i < n && v[i] == 0) i++;
  int code = !rc && i < n ? v[i] : 0;
  free(v);
  if (rc || !code) return rc;
  char where[48] = "";
  if (stacked)
    snprintf(where, sizeof where, "batch element %lld%s", (long long)i + 1,
             kind == NO_CONVERGENCE ? "" : ": ");
  switch (kind) {
    case NOT_PD:
      return ml_fail(ML_EINVAL, "%s: the matrix is not positive definite (%sthe leading minor of order %d is not positive)",
                     op, where, code);
    case SINGULAR:
      return ml_fail(ML_EINVAL, "%s: the matrix is singular (%sU[%d][%d] is zero)",
                     op, where, code, code);
    case ZERO_DIAGONAL:
      return ml_fail(ML_EINVAL, "%s: the matrix is singular (%sA[%d][%d] is zero)",
                     op, where, code, code);
    default:
      if (stacked)
        return ml_fail(ML_EINVAL, "%s: the algorithm did not converge (%s)", op,
                       where);
      return ml_fail(ML_EINVAL, "%s: the algorithm did not converge", op);
  }
}

/* out: identity matrices of dtype t, ndim dimensions of shape (the last
 * two n x m). */
static int identity(ml_array *out, ml_dtype t, int ndim, const int64_t *shape,
                    ml_device device) {
  ml_array r = {0}, flat = {0}, diag = {0};
  int64_t n = shape[ndim - 2], m = shape[ndim - 1];
  int64_t fshape[2] = {1, n * m};
  for (int d = 0; d < ndim - 2; d++) fshape[0] *= shape[d];
  int rc = ml_full(&r, t, ndim, shape, device, ml_scalar_int(0));
  if (!rc && n > 0 && m > 0 && fshape[0] > 0) {
    rc = ml_view_reshape("identity", &flat, &r, 2, fshape);
    if (!rc)
      rc = ml_view_stride("identity", &diag, &flat, 1, 0, n < m ? n : m,
                          m + 1);
    if (!rc) rc = ml_fill("identity", &diag, ml_scalar_int(1));
  }
  ml_array_release(&flat);
  ml_array_release(&diag);
  return ml_array_commit(out, &r, rc);
}

static int linalg_of(const ml_array *a, const ml_linalg_backend **lb) {
  return ml_linalg_backend_get(ml_array_device(a), lb);
}

/* Cholesky ---------------------------------------------------------------- */

/* NaN in the matrices of r whose info is not 0: on the device, with no
 * read of info. */
static int poison_failed(const char *op, ml_array *r, const ml_array *info) {
  ml_array bad = {0}, mask = {0}, nan = {0}, p = {0};
  int64_t shape[ML_MAX_DIMS];
  int nd = r->ndim;
  for (int k = 0; k < nd; k++) shape[k] = k < nd - 2 ? r->shape[k] : 1;
  int rc = ml_binary_scalar(ML_NE, &bad, info, ml_scalar_int(0), 0);
  if (!rc) rc = ml_view_reshape(op, &mask, &bad, nd, shape);
  if (!rc) rc = ml_full(&nan, r->dtype, 0, NULL, ml_array_device(r), ml_scalar_float(NAN));
  if (!rc) rc = ml_where(&p, &mask, &nan, r);
  if (!rc) {
    ml_array_release(r);
    ml_array_move(r, &p);
  }
  ml_array *tmp[] = {&bad, &mask, &nan, &p};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  return rc;
}

int ml_cholesky(ml_array *out, const ml_array *a, int upper, int check) {
  const char *op = "linalg.cholesky";
  const ml_linalg_backend *lb;
  ml_array r = {0}, info = {0};
  ml_array at = {0};
  int rc = check_matrices(op, a, 1);
  if (!rc) rc = linalg_of(a, &lb);
  /* The backends factor the lower triangle of a column-major matrix
   * fastest (cuSOLVER's potrf in more than twice the time for the upper):
   * r holds A^T, which is A column-major, and its lower factor is the row-
   * major U. L is U's transpose: the factor of A^T, copied so, as a
   * transposed view, as PyTorch returns its factors. */
  if (!rc && !upper) rc = ml_view_transpose(&at, a, a->ndim - 2, a->ndim - 1);
  if (!rc) rc = ml_astype(&r, upper ? a : &at, float_of(a->dtype));
  if (!rc && ml_array_numel(&r) > 0) {
    ml_matrices m = matrices(&r);
    rc = ml_array_empty(&info, ML_INT32, 1, &m.batch, m.device);
    if (!rc) rc = lb->potrf(&m, 0, &info);
    if (!rc) rc = lb->triangle(&m, 0);
    if (!rc && check) rc = check_info(op, &info, a->ndim > 2, NOT_PD);
    if (!rc && !check) rc = poison_failed(op, &r, &info);
  }
  if (!rc && !upper) rc = ml_view_transpose(&r, &r, r.ndim - 2, r.ndim - 1);
  ml_array_release(&info);
  ml_array_release(&at);
  return ml_array_commit(out, &r, rc);
}

int ml_inv_triangular(ml_array *out, const ml_array *a, int upper, int unit,
                      int check) {
  const char *op = "linalg.inv_triangular";
  const ml_linalg_backend *lb;
  ml_array r = {0}, x = {0}, info = {0};
  int rc = check_matrices(op, a, 1);
  if (!rc) rc = linalg_of(a, &lb);
  if (!rc) rc = ml_contiguous_as(&r, a, float_of(a->dtype));
  if (!rc) rc = ml_array_empty(&x, r.dtype, r.ndim, r.shape, ml_array_device(&r));
  if (!rc && ml_array_numel(&r) > 0) {
    /* column-major, r's matrices are their transposes: an upper triangle
     * is a lower one, and the inverse comes out transposed in x alike */
    ml_matrices mr = matrices(&r), mx = matrices(&x);
    rc = ml_array_empty(&info, ML_INT32, 1, &mr.batch, mr.device);
    if (!rc) rc = lb->trtri(&mr, &mx, !upper, unit, &info);
    if (!rc && check) rc = check_info(op, &info, a->ndim > 2, ZERO_DIAGONAL);
    if (!rc && !check) rc = poison_failed(op, &x, &info);
  }
  ml_array_release(&r);
  ml_array_release(&info);
  return ml_array_commit(out, &x, rc);
}

/* Triangular solves --------------------------------------------------------- */

/* One solve op(A) X = B of a sequence, A upper or lower. */
typedef struct {
  int upper, trans;
} solve_step;

/* The matrix operand a of a solve against the nb batch dimensions batch,
 * as a contiguous stack of dtype t: one matrix when a has one (it serves
 * every right-hand side), else one per batch element. */
static int solve_operand(const char *op, ml_array *out, const ml_array *a,
                         int nb, const int64_t *batch, ml_dtype t) {
  ml_array e = {0};
  int rc = ML_OK;
  if (batch_of(a) == 1) {
    int64_t shape[2] = {rows_of(a), cols_of(a)};
    rc = ml_view_reshape(op, &e, a, 2, shape);
  } else {
    rc = expand_batch(op, &e, a, nb, batch);
  }
  if (!rc) rc = ml_contiguous_as(out, &e, t);
  ml_array_release(&e);
  return rc;
}

/* The checks of a system a x = b: square matrices a, b with dimensions,
 * one device; the backend's table into *lb. */
static int check_system(const char *op, const ml_array *a, const ml_array *b,
                        const ml_linalg_backend **lb) {
  char s[ML_SHAPE_STR_MAX];
  int rc = check_matrices(op, a, 1);
  if (!rc) rc = ml_check_same_device(op, a, b);
  if (!rc) rc = linalg_of(a, lb);
  if (!rc && b->ndim == 0)
    rc = ml_fail(ML_EINVAL, "%s: b must be a vector or matrices, got shape %s",
                 op, ml_shape_str(b->ndim, b->shape, s, sizeof s));
  return rc;
}

/* X with op(A) X = B (left) or X op(A) = B through the steps in turn (A
 * triangular), for solve_triangular and cholesky_solve; b_first: the user
 * passed b first, as messages show them. */
static int triangular(const char *op, ml_array *out, const ml_array *a,
                      const ml_array *b, int b_first, int left, int unit,
                      const solve_step *steps, int nsteps) {
  const ml_linalg_backend *lb;
  int rc = check_system(op, a, b, &lb);
  if (rc) return rc;
  ml_array bm = {0}, am = {0}, x = {0};
  int vector = b->ndim == 1, nb;
  int64_t n = cols_of(a), shape[ML_MAX_DIMS];
  if (vector)
    rc = ml_view_unsqueeze(&bm, b, left ? 1 : 0);
  else
    ml_array_share(&bm, b);
  int64_t got = left ? rows_of(&bm) : cols_of(&bm);
  if (!rc && got != n)
    rc = b_first ? not_aligned(op, b, a, got, n) : not_aligned(op, a, b, n, got);
  if (!rc) rc = broadcast_batch(op, b_first ? &bm : a, b_first ? a : &bm, &nb, shape);
  ml_dtype t = float_of(ml_dtype_promote(a->dtype, b->dtype));
  if (!rc) {
    shape[nb] = rows_of(&bm);
    shape[nb + 1] = cols_of(&bm);
    rc = ml_array_empty(&x, t, nb + 2, shape, ml_array_device(a));
  }
  if (!rc) rc = ml_copy(op, &x, &bm);
  if (!rc && ml_array_numel(&x) > 0) {
    rc = solve_operand(op, &am, a, nb, shape, t);
    ml_matrices ma = matrices(&am), mx = matrices(&x);
    for (int i = 0; !rc && i < nsteps; i++)
      rc = lb->trsm(&ma, &mx, !left, !steps[i].upper, steps[i].trans, unit);
  }
  if (!rc && vector) {
    shape[nb] = n;
    rc = ml_view_reshape(op, &x, &x, nb + 1, shape);
  }
  ml_array_release(&bm);
  ml_array_release(&am);
  return ml_array_commit(out, &x, rc);
}

int ml_solve_triangular(ml_array *out, const ml_array *a, const ml_array *b,
                        const ml_triangular *how) {
  solve_step step = {how->upper, how->trans};
  return triangular("linalg.solve_triangular", out, a, b, 0, how->left,
                    how->unit, &step, 1);
}

int ml_cholesky_solve(ml_array *out, const ml_array *b, const ml_array *l,
                      int upper) {
  /* L L^T X = B: L Y = B, then L^T X = Y; U^T U X = B: U^T Y = B, U X = Y */
  solve_step lower_steps[2] = {{0, 0}, {0, 1}}, upper_steps[2] = {{1, 1}, {1, 0}};
  return triangular("linalg.cholesky_solve", out, l, b, 1, 1, 0,
                    upper ? upper_steps : lower_steps, 2);
}

/* The symmetric product ------------------------------------------------------ */

/* x as the column-major operand A of a syrk computing x^T x, without a
 * copy when x is contiguous (A = x^T, d x n, product A A^T) or the
 * transpose of a contiguous array (A = x, n x d, product A^T A). */
static int gram_operand(ml_array *keep, ml_matrices *m, int *trans,
                        const ml_array *x, ml_dtype t) {
  int64_t n = x->shape[0], d = x->shape[1];
  int fortran = x->dtype == t && n > 1 && d > 1 && x->strides[0] == 1 &&
                x->strides[1] == n;
  int rc = fortran ? ML_OK
           : x->dtype == t ? ml_contiguous(keep, x)
                           : ml_astype(keep, x, t);
  if (rc) return rc;
  if (fortran) ml_array_share(keep, x);
  *m = matrices(keep);
  *trans = fortran;
  if (fortran) {
    m->rows = n;
    m->cols = d;
    m->ld = n;
  }
  m->data = ml_array_data(keep);
  m->batch = 1;
  return ML_OK;
}

int ml_gram(ml_array *out, const ml_array *x) {
  const char *op = "linalg.gram";
  char s1[ML_SHAPE_STR_MAX];
  const ml_linalg_backend *lb;
  if (x->ndim != 2)
    return ml_fail(ML_EINVAL, "%s: x must be a matrix (n x d), got shape %s",
                   op, ml_shape_str(x->ndim, x->shape, s1, sizeof s1));
  int rc = linalg_of(x, &lb);
  if (rc) return rc;
  ml_dtype t = float_of(x->dtype);
  int64_t d = x->shape[1];
  int64_t shape[2] = {d, d};
  ml_array r = {0}, keep = {0};
  rc = ml_array_empty(&r, t, 2, shape, ml_array_device(x));
  if (!rc && ml_array_numel(&r) > 0 && x->shape[0] == 0)
    rc = ml_fill(op, &r, ml_scalar_int(0));
  else if (!rc && ml_array_numel(&r) > 0) {
    ml_matrices a, c = matrices(&r);
    int trans;
    rc = gram_operand(&keep, &a, &trans, x, t);
    if (!rc) rc = lb->syrk(&c, &a, trans, 1, 0);
  }
  ml_array_release(&keep);
  return ml_array_commit(out, &r, rc);
}

/* Eigenvalues -------------------------------------------------------------- */

int ml_eigh(const char *op, ml_array *w, ml_array *v, const ml_array *a,
            int upper) {
  const ml_linalg_backend *lb;
  ml_array r = {0}, wr = {0}, vr = {0}, info = {0};
  int rc = check_matrices(op, a, 1);
  if (!rc) rc = linalg_of(a, &lb);
  if (!rc) rc = ml_astype(&r, a, float_of(a->dtype));
  if (!rc) rc = ml_array_empty(&wr, r.dtype, a->ndim - 1, a->shape,
                               ml_array_device(a));
  if (!rc && ml_array_numel(&r) > 0) {
    /* A^T = A column-major, A's lower triangle its upper one; the
     * eigenvectors come as its columns, the rows of r */
    ml_matrices m = matrices(&r);
    rc = ml_array_empty(&info, ML_INT32, 1, &m.batch, m.device);
    if (!rc) rc = lb->syevd(&m, !upper, v != NULL, &wr, &info);
    if (!rc) rc = check_info(op, &info, a->ndim > 2, NO_CONVERGENCE);
  }
  if (!rc && v) rc = transposed(&vr, &r, r.dtype);
  ml_array_release(&r);
  ml_array_release(&info);
  if (v) ml_array_commit(v, &vr, rc);
  return ml_array_commit(w, &wr, rc);
}

/* LU: solve, inv, det ------------------------------------------------------- */

/* The LU factors of a's matrices (column-major, a stack of batch_of(a)),
 * their pivots and info, for op. */
typedef struct {
  ml_array lu, ipiv, info;
} lu_factors;

static void lu_release(lu_factors *f) {
  ml_array_release(&f->lu);
  ml_array_release(&f->ipiv);
  ml_array_release(&f->info);
}

/* Factors the (contiguous, column-major) stack in f->lu; a singular matrix
 * is op's error when singular_ok is 0. */
static int lu_factor(const char *op, const ml_linalg_backend *lb,
                     lu_factors *f, int stacked, int singular_ok) {
  ml_matrices m = matrices(&f->lu);
  int64_t pshape[2] = {m.batch, m.rows};
  if (m.batch == 0 || m.rows == 0) return ML_OK;
  int rc = ml_array_empty(&f->ipiv, ML_INT32, 2, pshape, m.device);
  if (!rc) rc = ml_array_empty(&f->info, ML_INT32, 1, &m.batch, m.device);
  if (!rc) rc = lb->getrf(&m, &f->ipiv, &f->info);
  if (!rc && !singular_ok) rc = check_info(op, &f->info, stacked, SINGULAR);
  return rc;
}

/* X = A^-1 B for the column-major right-hand sides xc, and X itself (row
 * major) into out. */
static int lu_solve(const ml_linalg_backend *lb, const lu_factors *f,
                    ml_array *out, const ml_array *xc) {
  ml_matrices m = matrices(&f->lu), b = matrices(xc);
  int rc = ML_OK;
  if (m.batch > 0 && m.rows > 0 && b.batch > 0 && b.cols > 0)
    rc = lb->getrs(&m, &f->ipiv, &b);
  return rc ? rc : transposed(out, xc, xc->dtype);
}

int ml_solve(ml_array *out, const ml_array *a, const ml_array *b) {
  const char *op = "linalg.solve";
  const ml_linalg_backend *lb;
  int rc = check_system(op, a, b, &lb);
  if (rc) return rc;
  lu_factors f = {{0}, {0}, {0}};
  ml_array bm = {0}, ae = {0}, be = {0}, xc = {0}, x = {0};
  int vector = b->ndim == 1, nb;
  int64_t n = cols_of(a), shape[ML_MAX_DIMS];
  if (vector)
    rc = ml_view_unsqueeze(&bm, b, 1);
  else
    ml_array_share(&bm, b);
  if (!rc && rows_of(&bm) != n) rc = not_aligned(op, a, b, n, rows_of(&bm));
  if (!rc) rc = broadcast_batch(op, a, &bm, &nb, shape);
  ml_dtype t = float_of(ml_dtype_promote(a->dtype, b->dtype));
  /* one factorisation serves every right-hand side when a has one matrix */
  if (!rc && batch_of(a) == 1) {
    int64_t sq[2] = {n, n};
    rc = ml_view_reshape(op, &ae, a, 2, sq);
  } else if (!rc) {
    rc = expand_batch(op, &ae, a, nb, shape);
  }
  if (!rc) rc = transposed(&f.lu, &ae, t);
  if (!rc) rc = expand_batch(op, &be, &bm, nb, shape);
  if (!rc) rc = transposed(&xc, &be, t);
  if (!rc && ml_array_numel(&xc) > 0)
    rc = lu_factor(op, lb, &f, a->ndim > 2, 0);
  if (!rc) rc = lu_solve(lb, &f, &x, &xc);
  if (!rc && vector) {
    shape[nb] = n;
    rc = ml_view_reshape(op, &x, &x, nb + 1, shape);
  }
  lu_release(&f);
  ml_array *tmp[] = {&bm, &ae, &be, &xc};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  return ml_array_commit(out, &x, rc);
}

int ml_inv(ml_array *out, const ml_array *a) {
  const char *op = "linalg.inv";
  const ml_linalg_backend *lb;
  lu_factors f = {{0}, {0}, {0}};
  ml_array xc = {0}, x = {0};
  int rc = check_matrices(op, a, 1);
  if (!rc) rc = linalg_of(a, &lb);
  if (!rc) rc = transposed(&f.lu, a, float_of(a->dtype));
  if (!rc)
    rc = identity(&xc, f.lu.dtype, a->ndim, a->shape, ml_array_device(a));
  if (!rc) rc = lu_factor(op, lb, &f, a->ndim > 2, 0);
  if (!rc) rc = lu_solve(lb, &f, &x, &xc);
  lu_release(&f);
  ml_array_release(&xc);
  return ml_array_commit(out, &x, rc);
}

/* The sign of each determinant from the diagonal d of U and the pivots:
 * (-1)^(negative diagonal entries + row interchanges), 0 when an entry is
 * 0, in dtype t. */
static int lu_sign(ml_array *out, const ml_array *d, const ml_array *ipiv,
                   ml_dtype t) {
  const ml_backend *be;
  int64_t n = d->shape[1];
  ml_array rows = {0}, moved = {0}, neg = {0}, odd = {0}, count = {0},
           parity = {0}, sign = {0}, zero = {0}, any = {0}, keep = {0},
           r = {0};
  int rc = ml_backend_get(ml_array_device(d), &be);
  if (!rc) rc = ml_array_empty(&rows, ML_INT32, 1, &n, ml_array_device(d));
  if (!rc) rc = be->iota(&rows, ml_scalar_int(1), ml_scalar_int(1));
  if (!rc) rc = ml_binary(ML_NE, &moved, ipiv, &rows);
  if (!rc) rc = ml_binary_scalar(ML_LT, &neg, d, ml_scalar_int(0), 0);
  if (!rc) rc = ml_binary(ML_ADD, &odd, &moved, &neg);
  if (!rc) rc = ml_reduce(ML_SUM, &count, &odd, 1, 0, 0);
  if (!rc) rc = ml_binary_scalar(ML_MOD, &parity, &count, ml_scalar_int(2), 0);
  /* 1 - 2 parity, then 0 where the diagonal holds a zero */
  if (!rc) rc = ml_binary_scalar(ML_MUL, &sign, &parity, ml_scalar_int(-2), 0);
  if (!rc) rc = ml_binary_scalar(ML_ADD, &sign, &sign, ml_scalar_int(1), 0);
  if (!rc) rc = ml_binary_scalar(ML_EQ, &zero, d, ml_scalar_int(0), 0);
  if (!rc) rc = ml_reduce(ML_ANY, &any, &zero, 1, 0, 0);
  if (!rc) rc = ml_binary_scalar(ML_SUB, &keep, &any, ml_scalar_int(1), 1);
  if (!rc) rc = ml_binary(ML_MUL, &r, &sign, &keep);
  if (!rc) rc = ml_astype(out, &r, t);
  ml_array *tmp[] = {&rows, &moved, &neg, &odd, &count, &parity, &sign, &zero,
                     &any, &keep, &r};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  return rc;
}

/* The sign and log |det| of a's matrices, of its batch shape, through LU
 * (empty matrices: 1 and 0). */
static int slogdet(const char *op, ml_array *sign, ml_array *logabs,
                   const ml_array *a) {
  const ml_linalg_backend *lb;
  lu_factors f = {{0}, {0}, {0}};
  ml_array flat = {0}, d = {0}, ad = {0}, logs = {0}, s = {0}, l = {0};
  int rc = check_matrices(op, a, 1);
  if (!rc) rc = linalg_of(a, &lb);
  if (!rc) rc = transposed(&f.lu, a, float_of(a->dtype));
  ml_dtype t = f.lu.dtype;
  int64_t n = cols_of(a), batch = batch_of(a), fshape[2] = {batch, n * n};
  ml_device dev = ml_array_device(a);
  if (!rc && (batch == 0 || n == 0)) {
    rc = ml_full(&s, t, a->ndim - 2, a->shape, dev, ml_scalar_int(1));
    if (!rc) rc = ml_full(&l, t, a->ndim - 2, a->shape, dev, ml_scalar_int(0));
  } else if (!rc) {
    rc = lu_factor(op, lb, &f, a->ndim > 2, 1);
    if (!rc) rc = ml_view_reshape(op, &flat, &f.lu, 2, fshape);
    if (!rc) rc = ml_view_stride(op, &d, &flat, 1, 0, n, n + 1);
    if (!rc) rc = lu_sign(&s, &d, &f.ipiv, t);
    if (!rc) rc = ml_unary(ML_ABS, &ad, &d);
    if (!rc) rc = ml_unary(ML_LOG, &logs, &ad);
    if (!rc) rc = ml_reduce(ML_SUM, &l, &logs, 1, 0, 0);
    if (!rc) rc = ml_view_reshape(op, &s, &s, a->ndim - 2, a->shape);
    if (!rc) rc = ml_view_reshape(op, &l, &l, a->ndim - 2, a->shape);
  }
  lu_release(&f);
  ml_array *tmp[] = {&flat, &d, &ad, &logs};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  if (rc) {
    ml_array_release(&s);
    ml_array_release(&l);
    return rc;
  }
  ml_array_commit(sign, &s, rc);
  return ml_array_commit(logabs, &l, rc);
}

int ml_slogdet(ml_array *sign, ml_array *logabsdet, const ml_array *a) {
  return slogdet("linalg.slogdet", sign, logabsdet, a);
}

int ml_det(ml_array *out, const ml_array *a) {
  ml_array s = {0}, l = {0}, e = {0}, r = {0};
  int rc = slogdet("linalg.det", &s, &l, a);
  if (!rc) rc = ml_unary(ML_EXP, &e, &l);
  if (!rc) rc = ml_binary(ML_MUL, &r, &s, &e);
  ml_array_release(&s);
  ml_array_release(&l);
  ml_array_release(&e);
  return ml_array_commit(out, &r, rc);
}

/* QR ------------------------------------------------------------------------ */

/* The first rows of each matrix of the stack a, as a new contiguous stack
 * of dtype t. */
static int leading_rows(ml_array *out, const ml_array *a, int64_t rows) {
  ml_array v = {0};
  int rc = ml_view_narrow("linalg", &v, a, a->ndim - 2, 0, rows);
  if (!rc) rc = ml_clone(out, &v);
  ml_array_release(&v);
  return rc;
}

/* Q's column-major storage (..., mc, m) from the factored column-major
 * stack ac (..., n, m) and tau: geqrf's vectors copied into the first
 * columns, then orgqr. */
static int qr_q(const ml_linalg_backend *lb, ml_array *out,
                const ml_array *ac, const ml_array *tau, int64_t mc,
                int64_t k) {
  ml_array qc = {0}, dst = {0}, src = {0};
  int nd = ac->ndim;
  int64_t shape[ML_MAX_DIMS], n = rows_of(ac), c0 = n < mc ? n : mc;
  memcpy(shape, ac->shape, (size_t)nd * sizeof *shape);
  shape[nd - 2] = mc;
  ml_device dev = ml_array_device(ac);
  int rc = k == 0 ? identity(&qc, ac->dtype, nd, shape, dev)
                  : ml_full(&qc, ac->dtype, nd, shape, dev, ml_scalar_int(0));
  if (!rc && k > 0 && ml_array_numel(&qc) > 0) {
    rc = ml_view_narrow("linalg.qr", &dst, &qc, nd - 2, 0, c0);
    if (!rc) rc = ml_view_narrow("linalg.qr", &src, ac, nd - 2, 0, c0);
    if (!rc) rc = ml_copy("linalg.qr", &dst, &src);
    ml_matrices q = matrices(&qc);
    if (!rc) rc = lb->orgqr(&q, k, tau);
  }
  ml_array_release(&dst);
  ml_array_release(&src);
  return ml_array_commit(out, &qc, rc);
}

int ml_qr(ml_array *q, ml_array *r, const ml_array *a, int complete) {
  const char *op = "linalg.qr";
  const ml_linalg_backend *lb;
  ml_array ac = {0}, tau = {0}, rt = {0}, rr = {0}, qc = {0}, qr = {0};
  int rc = check_matrices(op, a, 0);
  if (!rc) rc = linalg_of(a, &lb);
  if (rc) return rc;
  int64_t m = rows_of(a), n = cols_of(a), k = m < n ? m : n;
  int64_t kr = complete ? m : k, tshape[2] = {batch_of(a), k};
  rc = transposed(&ac, a, float_of(a->dtype));
  if (!rc)
    rc = ml_array_empty(&tau, ac.dtype, 2, tshape, ml_array_device(a));
  if (!rc && ml_array_numel(&ac) > 0) {
    ml_matrices ma = matrices(&ac);
    rc = lb->geqrf(&ma, &tau);
  }
  /* R: the leading rows of the factored A, its upper triangle */
  if (!rc) rc = ml_view_transpose(&rt, &ac, a->ndim - 2, a->ndim - 1);
  if (!rc) rc = leading_rows(&rr, &rt, kr);
  if (!rc && ml_array_numel(&rr) > 0) {
    ml_matrices mr = matrices(&rr);
    rc = lb->triangle(&mr, 0);
  }
  if (!rc && q) rc = qr_q(lb, &qc, &ac, &tau, complete ? m : k, k);
  if (!rc && q) rc = transposed(&qr, &qc, qc.dtype);
  ml_array *tmp[] = {&ac, &tau, &rt, &qc};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  if (q) ml_array_commit(q, &qr, rc);
  return ml_array_commit(r, &rr, rc);
}

/* SVD ----------------------------------------------------------------------- */

int ml_svd(ml_array *u, ml_array *s, ml_array *vh, const ml_array *a,
           int full) {
  const char *op = "linalg.svd";
  const ml_linalg_backend *lb;
  ml_array ac = {0}, sr = {0}, uc = {0}, vc = {0}, ur = {0}, vr = {0},
           info = {0};
  int rc = check_matrices(op, a, 0);
  if (!rc) rc = linalg_of(a, &lb);
  if (rc) return rc;
  int nd = a->ndim, vectors = u != NULL;
  int64_t m = rows_of(a), n = cols_of(a), k = m < n ? m : n;
  int64_t big = m < n ? n : m, shape[ML_MAX_DIMS];
  ml_dtype t = float_of(a->dtype);
  ml_device dev = ml_array_device(a);
  /* the tall one of A and A^T, column-major: A's transpose or A's rows */
  int tall = m >= n;
  rc = tall ? transposed(&ac, a, t) : ml_astype(&ac, a, t);
  memcpy(shape, a->shape, (size_t)nd * sizeof *shape);
  shape[nd - 2] = k;
  if (!rc) rc = ml_array_empty(&sr, t, nd - 1, shape, dev);
  if (!rc && vectors) {
    shape[nd - 1] = k;
    rc = ml_array_empty(&vc, t, nd, shape, dev);
    shape[nd - 2] = full ? big : k;
    shape[nd - 1] = big;
    if (!rc)
      rc = k == 0 ? identity(&uc, t, nd, shape, dev)
                  : ml_array_empty(&uc, t, nd, shape, dev);
  }
  if (!rc && ml_array_numel(&ac) > 0) {
    ml_matrices ma = matrices(&ac), mu = {0}, mv = {0};
    if (vectors) {
      mu = matrices(&uc);
      mv = matrices(&vc);
    }
    rc = ml_array_empty(&info, ML_INT32, 1, &ma.batch, dev);
    if (!rc)
      rc = lb->gesvd(&ma, &sr, vectors ? &mu : NULL, vectors ? &mv : NULL,
                     &info);
    if (!rc) rc = check_info(op, &info, nd > 2, NO_CONVERGENCE);
  }
  /* A = U S V^T: tall, U and V^T are uc's and vc's transposes; wide, A^T =
   * U' S V'^T, so U = V' and V^T = U'^T, vc's and uc's rows as they are */
  if (!rc && vectors && tall) {
    rc = transposed(&ur, &uc, t);
    if (!rc) rc = transposed(&vr, &vc, t);
  } else if (!rc && vectors) {
    ml_array_move(&ur, &vc);
    ml_array_move(&vr, &uc);
  }
  ml_array *tmp[] = {&ac, &uc, &vc, &info};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) ml_array_release(tmp[i]);
  if (vectors) {
    ml_array_commit(u, &ur, rc);
    ml_array_commit(vh, &vr, rc);
  }
  return ml_array_commit(s, &sr, rc);
}
