/* Linear algebra with numpy.linalg's and scipy.linalg's semantics:
 * factorisations, solvers and the symmetric product, each over a stack of
 * matrices (the last two dimensions; the ones before are batch
 * dimensions).
 *
 * Inputs of float32 or float64 compute in that dtype; the integer dtypes
 * compute in float64, as NumPy converts them; two operands compute in
 * their promotion. Operands must be on one device. Results are new
 * contiguous arrays, written into empty (zeroed) out arrays. Errors name
 * the operation as the user calls it ("linalg.cholesky: ...") and, for a
 * stack, the batch element that failed (1-based, C order over the batch
 * dimensions). Empty matrices give empty results (the determinant of a
 * 0 x 0 matrix is 1). */
#ifndef ML_LINALG_H
#define ML_LINALG_H

#include "array.h"

/* The Cholesky factor of each symmetric positive-definite n x n matrix of
 * a: L lower with L L^T = A, or U upper with U^T U = A; only that
 * triangle of a is read. A matrix that is not positive definite is an
 * error naming the order of the leading minor that is not (a NaN counts
 * as not positive); without check, which saves the one read of the
 * factorization's status from the device, its factor is NaN instead. L
 * comes as the transposed view of a contiguous array (each matrix in
 * column-major order, as PyTorch returns it), U contiguous. */
int ml_cholesky(ml_array *out, const ml_array *a, int upper, int check);

/* The inverse of each triangular n x n matrix of a (..., n, n), upper or
 * lower (only that triangle read; with unit, its diagonal taken as ones),
 * through LAPACK's trtri or the blocked kernels: a new contiguous array,
 * zero in the other triangle. A zero on the diagonal is an error naming
 * it; without check, which saves the one read of the status from the
 * device, that matrix's inverse is NaN instead. */
int ml_inv_triangular(ml_array *out, const ml_array *a, int upper, int unit,
                      int check);

/* X with op(A) X = B (left) or X op(A) = B, op(A) = A or A^T (trans), A
 * triangular, upper or lower (only that triangle read; with unit, its
 * diagonal taken as ones). a is (..., n, n); b is (..., n, k) (left) or
 * (..., k, n), or a vector of n; the batch dimensions broadcast. A zero on
 * the diagonal gives inf and NaN (BLAS's trsm), not an error. */
typedef struct {
  int upper, trans, left, unit;
} ml_triangular;
int ml_solve_triangular(ml_array *out, const ml_array *a, const ml_array *b,
                        const ml_triangular *how);

/* X with A X = B for A = L L^T (or U^T U, upper) given its Cholesky factor
 * l (..., n, n); b (..., n, k) or a vector of n (torch's argument order). */
int ml_cholesky_solve(ml_array *out, const ml_array *b, const ml_array *l,
                      int upper);

/* x^T x (d x d) for x n x d, through the symmetric product, so that it is
 * symmetric to the last bit. */
int ml_gram(ml_array *out, const ml_array *x);
/* x^T diag(w_k) x for x (n x d) and each row w_k of w (K x n): K x d x d,
 * or d x d for a w of n; computed in float64, float32 when x and w both
 * are, symmetric to the last bit (gram_weighted.c). */
int ml_gram_weighted(ml_array *out, const ml_array *x, const ml_array *w);
/* out (n x K): |(x_i - mu_k) P_k|^2 for the rows x_i of x (n x d), the
 * rows mu_k of mu (K x d) and the upper triangles of p (K x d x d; the
 * lower ones are not read), computed as |x_i P_k - mu_k P_k|^2 in
 * float64; float32 when every input is, else float64. */
int ml_mahalanobis(ml_array *out, const ml_array *x, const ml_array *mu, const ml_array *p);

/* The eigenvalues of each symmetric n x n matrix of a, ascending, and with
 * v (NULL: values only) the eigenvectors as v's columns, reading a's lower
 * triangle (or upper). op names the operation ("linalg.eigh"). */
int ml_eigh(const char *op, ml_array *w, ml_array *v, const ml_array *a,
            int upper);

/* X with A X = B through LU with partial pivoting: a (..., n, n); b (...,
 * n, k), or a vector of n (numpy 2's rule: only a 1-D b is a vector); the
 * batch dimensions broadcast. A singular matrix is an error naming the
 * zero pivot. */
int ml_solve(ml_array *out, const ml_array *a, const ml_array *b);
/* The inverse of each n x n matrix of a, likewise. */
int ml_inv(ml_array *out, const ml_array *a);
/* The sign (1, -1, or 0 for a singular matrix) and the natural logarithm
 * of the absolute value of each n x n determinant, arrays of a's batch
 * shape; det is sign * exp(logabsdet), as NumPy computes it. */
int ml_slogdet(ml_array *sign, ml_array *logabsdet, const ml_array *a);
int ml_det(ml_array *out, const ml_array *a);

/* The QR factorisation of each m x n matrix of a, k = min(m, n): q m x k
 * and r k x n, or with complete q m x m and r m x n; q NULL: r only. */
int ml_qr(ml_array *q, ml_array *r, const ml_array *a, int complete);

/* The singular value decomposition A = U diag(S) Vh of each m x n matrix
 * of a, k = min(m, n): s (..., k) descending, u (..., m, m) and vh (..., n,
 * n) with full, else (..., m, k) and (..., k, n); u and vh NULL: values
 * only. */
int ml_svd(ml_array *u, ml_array *s, ml_array *vh, const ml_array *a,
           int full);

#endif
