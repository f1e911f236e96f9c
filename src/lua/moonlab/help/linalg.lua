-- Help entries: linear algebra, the ml.linalg namespace, and ml.cov.
local UPLO = {
  name = "UPLO", type = "string", default = '"L"',
  doc = 'the triangle of a to read: "L" lower, "U" upper',
}

return {
  title = "Linear algebra",
  namespace = "linalg",
  intro = [[
Factorisations and solvers with numpy.linalg's semantics (scipy.linalg's
for solve_triangular, torch.linalg's argument order for cholesky_solve),
in the namespace ml.linalg, through LAPACK and OpenBLAS on the CPU and
cuSOLVER and cuBLAS on a GPU. Matrices are the last two dimensions of an
array; the dimensions before them are a batch, computed matrix by
matrix, and broadcast between two operands. float32 and float64 compute
in their dtype; integer inputs compute in float64, as NumPy converts
them; two operands promote. Results are new contiguous arrays. A matrix
that is not positive definite (cholesky) or singular (solve, inv) is an
error naming the batch element (1-based, in C order over the batch
dimensions) and the failing minor or pivot. Empty matrices give empty
results; the determinant of a 0 x 0 matrix is 1.]],
  entries = {
    {
      name = "linalg.cholesky",
      usage = {"ml.linalg.cholesky(a [, opts])"},
      doc = [[
The Cholesky factor of each symmetric positive-definite matrix of a: L
lower triangular with a = L L^T, or U upper triangular with a = U^T U
under upper. Only that triangle of a is read; the other triangle of the
result is zero. A matrix that is not positive definite is an error
naming the order of the leading minor that is not ("linalg.cholesky:
the matrix is not positive definite (batch element 3: the leading minor
of order 5 is not positive)"); a NaN counts as not positive, as in
LAPACK's reference potrf. Finding that out reads the factorization's
status from the device (a wait); with check = false it is not read, and
the factor of such a matrix is all NaN instead.]],
      options = {
        {name = "upper", type = "boolean", default = "false",
         doc = "return the upper factor U instead of L"},
        {name = "check", type = "boolean", default = "true",
         doc = "raise for a matrix that is not positive definite"},
      },
      returns = "a new array of a's shape.",
      example = [[
local a = ml.array({{4, 2}, {2, 3}})
local l = ml.linalg.cholesky(a)
print(l[{1, 1}], l[{2, 1}], l[{1, 2}])  --> 2.0 1.0 0.0
print(ml.linalg.cholesky(a, {upper = true})[{1, 2}])  --> 1.0]],
    },
    {
      name = "linalg.solve_triangular",
      usage = {"ml.linalg.solve_triangular(a, b [, opts])"},
      doc = [[
The solution x of op(a) x = b (or x op(a) = b with left false) for
triangular a, op(a) = a or its transpose (trans), as scipy.linalg's:
a is n x n (a stack of them), b n x k (k x n with left false) or a
vector of n; batch dimensions broadcast. Only the triangle of a that
lower names is read, and with unit_diagonal its diagonal is taken as
ones. A zero on the diagonal gives inf and NaN, as BLAS's trsm does,
not an error.]],
      options = {
        {name = "lower", type = "boolean", default = "false",
         doc = "a is lower triangular (else upper)"},
        {name = "trans", type = "boolean", default = "false",
         doc = "solve with the transpose of a"},
        {name = "left", type = "boolean", default = "true",
         doc = "a on the left of x (else on the right: x op(a) = b)"},
        {name = "unit_diagonal", type = "boolean", default = "false",
         doc = "take a's diagonal as ones, without reading it"},
      },
      returns = "a new array of b's shape (batch dimensions broadcast).",
      example = [[
local l = ml.array({{2, 0}, {1, 4}})
local x = ml.linalg.solve_triangular(l, ml.array({2, 9}), {lower = true})
print(x[{1}], x[{2}])  --> 1.0 2.0]],
    },
    {
      name = "linalg.inv_triangular",
      usage = {"ml.linalg.inv_triangular(a [, opts])"},
      doc = [[
The inverse of each triangular matrix of a, as scipy.linalg.lapack's
trtri: only the triangle of a that lower names is read (with
unit_diagonal its diagonal is taken as ones), and the other triangle of
the result is zero. A zero on the diagonal is an error naming it
("linalg.inv_triangular: the matrix is singular (batch element 2:
A[3][3] is zero)"); with check = false that status is not read from the
device (no wait) and such a matrix's inverse is all NaN instead. On a
GPU, blocked kernels invert the whole batch side by side; on the CPU,
LAPACK's trtri a matrix at a time. A third of the work of
solve_triangular(a, I).]],
      options = {
        {name = "lower", type = "boolean", default = "false",
         doc = "a is lower triangular (else upper)"},
        {name = "unit_diagonal", type = "boolean", default = "false",
         doc = "take a's diagonal as ones, without reading it"},
        {name = "check", type = "boolean", default = "true",
         doc = "raise for a zero on the diagonal"},
      },
      returns = "a new array of a's shape.",
      example = [[
local u = ml.array({{2, 1}, {0, 4}})
local x = ml.linalg.inv_triangular(u)
print(x[{1, 1}], x[{1, 2}], x[{2, 1}], x[{2, 2}])  --> 0.5 -0.125 0.0 0.25]],
    },
    {
      name = "linalg.cholesky_solve",
      usage = {"ml.linalg.cholesky_solve(b, l [, opts])"},
      doc = [[
The solution x of a x = b given the Cholesky factor l of a (a = l l^T,
or l^T l under upper), in torch's argument order: two triangular
solves. b is n x k or a vector of n; batch dimensions broadcast.]],
      options = {
        {name = "upper", type = "boolean", default = "false",
         doc = "l is the upper factor U of a = U^T U"},
      },
      returns = "a new array of b's shape (batch dimensions broadcast).",
      example = [[
local a = ml.array({{4, 2}, {2, 3}})
local x = ml.linalg.cholesky_solve(ml.array({8, 8}), ml.linalg.cholesky(a))
print(("%.6f %.6f"):format(x[{1}], x[{2}]))  --> 1.000000 2.000000]],
    },
    {
      name = "linalg.gram",
      usage = {"ml.linalg.gram(x [, w])"},
      doc = [[
The weighted scatter x^T diag(w_k) x for each row w_k of the K x n
weights w (any real values), x n x d: K x d x d, or d x d for a vector w;
x^T x without w. x^T x is the symmetric product (syrk) in x's dtype. The
weighted scatters compute in float64 (float32 results when x and w both
are float32), the lower triangle alone: on a GPU of compute capability
9.0 and up (d >= 32) one kernel on the float64 tensor cores that weighs
the samples in registers, with no weighted copy of x; elsewhere
OpenBLAS's or cuBLAS's products of a weighted block of rows. A sample
whose weight is exactly zero adds exactly nothing, and the kernel and
the CPU skip it: a mixture's responsibilities are mostly zeros. Each
result is symmetric to the last bit, the same every run, and nothing is
read back from the device.]],
      returns = "a new K x d x d array (d x d without w or for a vector w).",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
local g = ml.linalg.gram(x, ml.array({{1, 1}, {0, 2}}))
print(g.shape[1], g[{1, 1, 2}], g[{2, 2, 2}])  --> 2 14.0 32.0]],
    },
    {
      name = "linalg.mahalanobis",
      usage = {"ml.linalg.mahalanobis(x, mu, p)"},
      doc = [[
The squared Mahalanobis distances |(x_i - mu_k) P_k|^2 of the rows x_i
of x (n x d) to the rows mu_k of mu (K x d), through the Cholesky factors
P_k of the precisions (p, K x d x d: P_k P_k^T is the inverse covariance,
as scikit-learn's precisions_cholesky; only the upper triangles are read):
the quadratic term of a Gaussian mixture's log densities. Computed as
|x_i P_k - mu_k P_k|^2 in float64 whatever the inputs' dtype; the result
is float32 when all three are, else float64. On a GPU of compute
capability 9.0 and up (d >= 32) one kernel computes the products on the
float64 tensor cores and sums their squares in registers, so the n x K d
products are never written.]],
      returns = "a new n x K array.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
local p = ml.array({{{1, 0}, {0, 1}}, {{2, 1}, {0, 1}}})
local m = ml.linalg.mahalanobis(x, ml.array({{1, 2}, {0, 0}}), p)
print(m[{1, 1}], m[{2, 1}], m[{1, 2}])  --> 0.0 8.0 13.0]],
    },
    {
      name = "linalg.eigh",
      usage = {"ml.linalg.eigh(a [, opts])"},
      doc = [[
The eigenvalues and eigenvectors of each symmetric matrix of a, reading
one triangle (UPLO): w ascending, and v whose columns are orthonormal
eigenvectors, a v = v diag(w). A failure to converge is an error naming
the batch element.]],
      options = {UPLO},
      returns = "w (..., n) and v (..., n, n).",
      example = [[
local w, v = ml.linalg.eigh(ml.array({{2, 1}, {1, 2}}))
print(("%.6f %.6f"):format(w[{1}], w[{2}]))  --> 1.000000 3.000000
print(("%.6f"):format(math.abs(v[{1, 2}])))  --> 0.707107]],
    },
    {
      name = "linalg.eigvalsh",
      usage = {"ml.linalg.eigvalsh(a [, opts])"},
      doc = [[
The eigenvalues of each symmetric matrix of a, ascending, as eigh
without the eigenvectors.]],
      options = {UPLO},
      returns = "a new array (..., n).",
      example = [[
local w = ml.linalg.eigvalsh(ml.array({{2, 1}, {1, 2}}))
print(("%.6f %.6f"):format(w[{1}], w[{2}]))  --> 1.000000 3.000000]],
    },
    {
      name = "linalg.solve",
      usage = {"ml.linalg.solve(a, b)"},
      doc = [[
The solution x of a x = b through LU with partial pivoting: a n x n, b
n x k or a vector of n (numpy 2's rule: only a 1-D b is a vector);
batch dimensions broadcast. A singular matrix is an error naming the
zero pivot ("linalg.solve: the matrix is singular (batch element 2:
U[4][4] is zero)"); NaN propagates to the result.]],
      returns = "a new array of b's shape (batch dimensions broadcast).",
      example = [[
local x = ml.linalg.solve(ml.array({{3, 1}, {1, 2}}), ml.array({9, 8}))
print(("%.6f %.6f"):format(x[{1}], x[{2}]))  --> 2.000000 3.000000]],
    },
    {
      name = "linalg.inv",
      usage = {"ml.linalg.inv(a)"},
      doc = [[
The inverse of each square matrix of a, through LU with partial
pivoting; a singular matrix is an error as in solve.]],
      returns = "a new array of a's shape.",
      example = [[
local b = ml.linalg.inv(ml.array({{4, 7}, {2, 6}}))
print(("%.2f %.2f"):format(b[{1, 1}], b[{1, 2}]))  --> 0.60 -0.70]],
    },
    {
      name = "linalg.det",
      usage = {"ml.linalg.det(a)"},
      doc = [[
The determinant of each square matrix of a, through LU, computed as
numpy does from slogdet: sign * exp(logabsdet) (so det of {{1, 2}, {3,
4}} is -2.0000000000000004, as NumPy's). A singular matrix gives 0.]],
      returns = "a number for one matrix, else an array of the batch shape.",
      example = [[
local d = ml.linalg.det(ml.array({{1, 2}, {3, 4}}))
print(("%.6f"):format(d))  --> -2.000000
print(ml.linalg.det(ml.ones(3, 2, 2)).shape[1])  --> 3]],
    },
    {
      name = "linalg.slogdet",
      usage = {"ml.linalg.slogdet(a)"},
      doc = [[
The sign (1 or -1, 0 for a singular matrix) and the natural logarithm of
the absolute value of each determinant, through LU (a singular matrix
gives 0 and -inf). Accurate where the determinant itself would
overflow or underflow.]],
      returns = "sign and logabsdet: numbers for one matrix, else arrays.",
      example = [[
local s, l = ml.linalg.slogdet(ml.array({{1, 2}, {3, 4}}))
print(s, ("%.6f"):format(l))  --> -1.0 0.693147]],
    },
    {
      name = "linalg.qr",
      usage = {"ml.linalg.qr(a [, opts])"},
      doc = [[
The QR factorisation a = q r of each m x n matrix of a, k = min(m, n): q
with orthonormal columns and r upper triangular, as numpy's modes:
"reduced" q m x k and r k x n, "complete" q m x m and r m x n, "r" r
alone (k x n).]],
      options = {
        {name = "mode", type = "string", default = '"reduced"',
         doc = '"reduced", "complete" or "r"'},
      },
      returns = "q and r (r alone with mode \"r\").",
      example = [[
local q, r = ml.linalg.qr(ml.array({{1, 2}, {3, 4}, {5, 6}}))
print(q.shape[1], q.shape[2], r.shape[1], r.shape[2])  --> 3 2 2 2
print(r[{2, 1}])  --> 0.0]],
    },
    {
      name = "linalg.svd",
      usage = {"ml.linalg.svd(a [, opts])"},
      doc = [[
The singular value decomposition a = u diag(s) vh of each m x n matrix
of a, k = min(m, n): s descending, u and vh with orthonormal columns
and rows, m x m and n x n with full_matrices, else m x k and k x n.
The CPU computes it as NumPy does (LAPACK's gesdd), a GPU with
cuSOLVER's gesvd: s agrees, and u and vh up to the signs of singular
vectors.]],
      options = {
        {name = "full_matrices", type = "boolean", default = "true",
         doc = "u m x m and vh n x n (else m x k and k x n)"},
        {name = "compute_uv", type = "boolean", default = "true",
         doc = "compute u and vh (else return s alone)"},
      },
      returns = "u, s and vh (s alone without compute_uv).",
      example = [[
local u, s, vh = ml.linalg.svd(ml.array({{0, 3}, {4, 0}, {0, 0}}))
print(u.shape[1], vh.shape[1], s[{1}], s[{2}])  --> 3 2 4.0 3.0
print(ml.linalg.svd(ml.eye(2), {compute_uv = false}):sum())  --> 2.0]],
    },
    {
      name = "linalg.lstsq",
      usage = {"ml.linalg.lstsq(a, b [, opts])"},
      doc = [[
The least-squares solution x of a x = b with the smallest norm, as
numpy.linalg.lstsq, through the SVD: a m x n, b m x k or a vector of m.
Singular values at most rcond times the largest count as zero. The
residuals are the squared norms of b - a x per column when a has full
rank n < m, else empty.]],
      options = {
        {name = "rcond", type = "number", default = "eps * max(m, n)",
         doc = "relative cut-off for small singular values (negative: eps)"},
      },
      returns = "x, residuals (an array), rank (an integer) and s (a's "
                .. "singular values).",
      example = [[
local a = ml.array({{1, 1}, {1, 2}, {1, 3}})
local x, res, rank = ml.linalg.lstsq(a, ml.array({1, 2, 2}))
print(("%.4f %.4f"):format(x[{1}], x[{2}]), rank)  --> 0.6667 0.5000 2
print(("%.4f"):format(res[{1}]))  --> 0.1667]],
    },
    {
      name = "linalg.norm",
      usage = {"ml.linalg.norm(x [, opts])"},
      doc = [[
A vector or matrix norm, as numpy.linalg.norm: along one dimension dim,
the vector norm ord (nil or 2: Euclidean; math.huge, -math.huge: max or
min of |x|; 0: the count of nonzeros; 1 and other numbers p: (sum
|x|^p)^(1/p)); over a pair of dimensions, the matrix norm ord (nil or
"fro": Frobenius; "nuc": the sum of singular values; 2, -2: the largest
or smallest singular value; 1, -1: the largest or smallest column sum of
|x|; math.huge, -math.huge: row sums). Without dim: the 2-norm of all
elements, unless ord asks for a norm of a 1-D or 2-D x.]],
      options = {
        {name = "ord", type = "number|string", default = "nil",
         doc = "which norm (above)"},
        {name = "dim", type = "integer|table", default = "nil",
         doc = "the dimension of vectors, or a pair for matrices (1-based)"},
        {name = "keepdim", type = "boolean", default = "false",
         doc = "keep the reduced dimensions with size 1"},
      },
      returns = "a number without dim (unless keepdim), else an array.",
      example = [[
local m = ml.array({{1, 2}, {3, 4}})
print(ml.linalg.norm({3, -4}), ml.linalg.norm(m, {ord = 1}))  --> 5.0 6.0
print(ml.linalg.norm(m, {ord = math.huge, dim = {1, 2}}):item())  --> 7.0]],
    },
    {
      name = "cov",
      usage = {"ml.cov(x [, opts])"},
      doc = [[
The covariance matrix of the variables in the rows of x (its columns
with rowvar false), exactly as numpy.cov: the observations weighted by
fweights (integer counts) times aweights, divided by n - ddof (ddof 1,
or 0 with bias) or its weighted form. One variable gives a 0-d array.
Unlike NumPy, float32 data give a float32 result. The products go
through ml.linalg.gram, so the result is symmetric to the last bit.]],
      options = {
        {name = "rowvar", type = "boolean", default = "true",
         doc = "variables in rows (else in columns)"},
        {name = "bias", type = "boolean", default = "false",
         doc = "divide by n (ddof 0) instead of n - 1"},
        {name = "ddof", type = "integer", default = "nil",
         doc = "the divisor's delta, overriding bias"},
        {name = "fweights", type = "array|table", default = "nil",
         doc = "integer frequency weights of the observations"},
        {name = "aweights", type = "array|table", default = "nil",
         doc = "observation weights (non-negative)"},
      },
      returns = "a new p x p array for p variables (0-d for one).",
      example = [[
local c = ml.cov(ml.array({{0, 1, 2}, {2, 1, 0}}))
print(c[{1, 1}], c[{1, 2}])  --> 1.0 -1.0]],
    },
  },
}
