/* The linear-algebra area of the backend interface: the sub-table that
 * each backend fills for core/linalg.c, LAPACK's factorisations and the
 * triangular and symmetric products of BLAS, on batches of matrices.
 *
 * Matrices cross this interface in LAPACK's layout, column-major
 * (ml_matrices below); the core passes the row-major arrays of the Lua API
 * as the column-major storage of their transposes and chooses the
 * triangles and sides that make that right (core/linalg.c). Every matrix
 * argument of an entry has one float dtype (float32 or float64) and one
 * device; the small arrays (info, ipiv, tau, w, s) are contiguous, on that
 * device. Batches are independent: an error in one matrix (info) leaves
 * the others computed. */
#ifndef ML_LINALG_BACKEND_H
#define ML_LINALG_BACKEND_H

#include "backend.h"

/* batch column-major rows x cols matrices: matrix b (0-based) starts at
 * element b * stride of data and holds element (i, j) at i + j * ld,
 * ld >= max(1, rows). The core's are contiguous (ld = rows, stride =
 * rows * cols), except where an entry says otherwise. */
typedef struct {
  ml_dtype dtype;
  ml_device device;
  int64_t rows, cols, batch;
  void *data;
  int64_t ld, stride;
} ml_matrices;

typedef struct ml_linalg_backend {
  /* potrf: the Cholesky factor of each n x n matrix of a in place, A =
   * U^T U in the upper triangle (upper) or A = L L^T in the lower one,
   * reading only that triangle and leaving the other as it was. info (int32,
   * batch) gets 0, or k > 0 when the leading minor of order k is not
   * positive definite (LAPACK's info; that matrix then holds anything),
   * where a NaN counts as not positive, as in LAPACK's reference potrf:
   * k is the first j whose diagonal element would be NaN.
   *
   * triangle: keeps the upper triangle (i <= j, upper) or the lower one
   * (i >= j) of each rows x cols matrix of a and sets the rest to zero.
   *
   * trsm: each B := op(A)^-1 B (left) or B op(A)^-1, op(A) = A or A^T
   * (trans); A n x n triangular, upper or lower, only that triangle read,
   * its diagonal taken as ones with unit. a->batch is b->batch, or 1: one A
   * for every B. A zero on the diagonal gives inf and NaN, as BLAS's trsm.
   *
   * trtri: x := the inverse of each n x n triangular matrix of a, upper
   * or lower (only that triangle read; with unit, its diagonal taken as
   * ones), x's other triangle zero. info (int32, batch) gets 0, or k > 0
   * when a's diagonal element k is exactly zero (LAPACK's info; that x then
   * holds anything); a NaN or an infinity goes through as in trsm. x has
   * a's sizes and batch.
   *
   * syrk: each C := alpha op(A) op(A)^T + beta C, op(A) = A (n x k,
   * trans 0) or A^T (A k x n, trans 1); C n x n written whole: its lower
   * triangle computed and the upper a copy of it, so that C is symmetric to
   * the last bit. beta = 0 reads nothing of C. a->batch is c->batch.
   *
   * getrf: the LU factorisation with partial pivoting of each n x n matrix
   * of a in place, A = P L U (L unit lower, U upper); ipiv (int32, batch x
   * n) gets LAPACK's 1-based row interchanges, info (int32, batch) 0 or k
   * > 0 when U[k][k] is exactly zero (the factors are complete all the
   * same).
   *
   * getrs: each B := A^-1 B from getrf's factors lu and ipiv; lu->batch
   * is b->batch, or 1 for every B (ipiv then one row).
   *
   * syevd: the eigenvalues of each symmetric n x n matrix of a, reading
   * only its upper (upper) or lower triangle, ascending into w (batch x n,
   * a's dtype); with vectors, a's columns become orthonormal eigenvectors in
   * w's order, else a holds anything. info (int32, batch): 0, or > 0 when
   * the algorithm did not converge.
   *
   * geqrf: the QR factorisation of each m x n matrix of a in place,
   * LAPACK's: R in the upper triangle, Householder vectors below it, their
   * scalars in tau (batch x min(m, n)).
   *
   * orgqr: each m x n matrix of a (m >= n >= k) holds in its first k
   * columns the vectors of geqrf, whose scalars are in tau (batch x k);
   * it becomes the first n columns of Q = H(1) ... H(k).
   *
   * gesvd: the singular value decomposition A = U S V^T of each m x n
   * matrix of a, m >= n (a then holds anything): s (batch x n, a's dtype)
   * descending; u NULL (values only), or m x m or m x n, with vt n x n.
   * info (int32, batch): 0, or > 0 when the algorithm did not converge.
   *
   * mahalanobis: out[i][k] = |x_i P_k - c_k|^2 (n x K) for the rows x_i
   * of x (n x d), the factors P (K x d x d, row-major, zero below their
   * diagonals) and the rows c_k of c (K x d); every array float64,
   * contiguous, d >= 1, n K >= 1.
   *
   * weighted_gram: out[k] = x^T diag(w_k) x (K x d x d) for x (n x d)
   * and the rows w_k of w (K x n), symmetric to the bit; every array
   * float64, contiguous, n, d, K >= 1. */
  int (*potrf)(const ml_matrices *a, int upper, const ml_array *info);
  int (*triangle)(const ml_matrices *a, int upper);
  int (*trsm)(const ml_matrices *a, const ml_matrices *b, int left, int upper,
              int trans, int unit);
  int (*trtri)(const ml_matrices *a, const ml_matrices *x, int upper, int unit,
               const ml_array *info);
  int (*syrk)(const ml_matrices *c, const ml_matrices *a, int trans,
              double alpha, double beta);
  int (*getrf)(const ml_matrices *a, const ml_array *ipiv,
               const ml_array *info);
  int (*getrs)(const ml_matrices *lu, const ml_array *ipiv,
               const ml_matrices *b);
  int (*syevd)(const ml_matrices *a, int upper, int vectors,
               const ml_array *w, const ml_array *info);
  int (*geqrf)(const ml_matrices *a, const ml_array *tau);
  int (*orgqr)(const ml_matrices *a, int64_t k, const ml_array *tau);
  int (*gesvd)(const ml_matrices *a, const ml_array *s, const ml_matrices *u,
               const ml_matrices *vt, const ml_array *info);
  int (*mahalanobis)(const ml_array *out, const ml_array *x, const ml_array *p,
                     const ml_array *c);
  int (*weighted_gram)(const ml_array *out, const ml_array *x, const ml_array *w);
} ml_linalg_backend;

/* Registers a backend's table (every entry filled, else an error naming
 * the missing one), and looks up the table of a device. */
int ml_linalg_backend_register(ml_device_kind kind,
                               const ml_linalg_backend *t);
int ml_linalg_backend_get(ml_device device, const ml_linalg_backend **out);

#endif
