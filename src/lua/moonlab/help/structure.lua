-- Help entries: matrix structure and rearranging (moonlab/structure.lua).
local K = {
  name = "k", type = "integer", default = "0",
  doc = "the diagonal: 0 the main one, k > 0 above it, k < 0 below it",
}
local OFFSET = {
  name = "offset", type = "integer", default = "0",
  doc = "the diagonal: 0 the main one, > 0 above it, < 0 below it",
}

return {
  title = "Matrix structure and rearranging",
  intro = [[
NumPy's triangles, diagonals, products of structure and repetitions,
with its semantics; dimensions are 1-based (negative from the end) and
offsets are NumPy's k. They compose array operations, on either device,
for every dtype; diagonal (and diag and trace) gather their elements
into a new array. Every function but tensordot and meshgrid is also a
method.]],
  entries = {
    {
      names = {"tril", "triu"},
      usage = {"x:tril([opts])", "ml.tril(x [, opts])", "x:triu([opts])",
               "ml.triu(x [, opts])"},
      doc = [[
x with the elements above (tril) or below (triu) diagonal k of its last
two dimensions set to zero, batched over the others (numpy.tril,
numpy.triu).]],
      options = {K},
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
print(x:tril():sum(), x:triu({k = 1}):sum())  --> 8 2]],
    },
    {
      name = "diag",
      usage = {"x:diag([opts])", "ml.diag(v [, opts])"},
      doc = [[
For a 1-D v (or a table), the square matrix with v on diagonal k and
zeros elsewhere; for a 2-D v, its diagonal k (numpy.diag).]],
      options = {K},
      returns = "a new 2-D or 1-D array of v's dtype.",
      example = [[
print(ml.diag({1, 2}, {k = 1}).shape[1], ml.diag(ml.eye(3)):sum())  --> 3 3.0]],
    },
    {
      name = "diagonal",
      usage = {"x:diagonal([opts])", "ml.diagonal(x [, opts])"},
      doc = [[
The diagonal offset of the planes of dimensions dim1 and dim2 of x, as
numpy.diagonal (whose axes 0, 1 are 1, 2 here): those two dimensions
are removed and the diagonal is the last one. An offset past the edge
gives an empty diagonal.]],
      options = {OFFSET,
        {name = "dim1", type = "integer", default = "1",
         doc = "the dimension of the diagonal's rows"},
        {name = "dim2", type = "integer", default = "2",
         doc = "the dimension of the diagonal's columns"}},
      returns = "a new array.",
      example = [[
local x = ml.arange(6):reshape(2, 3)
print(x:diagonal():sum(), x:diagonal({offset = 1}):sum())  --> 4 6]],
    },
    {
      name = "trace",
      usage = {"x:trace([opts])", "ml.trace(x [, opts])"},
      doc = [[
The sum of diagonal offset of dimensions 1 and 2 of x (numpy.trace);
for more than two dimensions, one sum for each of the others.]],
      options = {OFFSET},
      returns = "a number for a 2-D x, else an array.",
      example = [[
print(ml.eye(3):trace(), ml.eye(3):trace({offset = 1}))  --> 3.0 0.0]],
    },
    {
      name = "kron",
      usage = {"a:kron(b)", "ml.kron(a, b)"},
      doc = [[
The Kronecker product of a and b (numpy.kron): the shorter shape gets
leading ones, and block i of the result is a[i] * b.]],
      returns = "a new array of the product of the shapes, dtypes promoted.",
      example = [[
print(ml.kron(ml.eye(2), ml.ones(2, 3)).shape[2])  --> 6]],
    },
    {
      name = "tensordot",
      usage = {"ml.tensordot(a, b [, opts])"},
      doc = [[
The sum of products over dimensions of a and b (numpy.tensordot): dims
n contracts the last n dimensions of a with the first n of b, and dims
{{i, ...}, {j, ...}} contracts a's dimensions i, ... with b's j, ...
The result has a's other dimensions, then b's. Computed by one matrix
product of the two arrays permuted and reshaped.]],
      options = {
        {name = "dims", type = "integer|table", default = "2",
         doc = "the number of dimensions to contract, or two lists of them"}},
      returns = "a new array.",
      example = [[
local a, b = ml.ones(2, 3, 4), ml.ones(3, 4, 5)
print(ml.tensordot(a, b).shape[2])  --> 5
print(ml.tensordot(a, b, {dims = {{2}, {1}}}):dim())  --> 4]],
    },
    {
      name = "diff",
      usage = {"x:diff([opts])", "ml.diff(x [, opts])"},
      doc = [[
The n-th differences x[i + 1] - x[i] along dim (numpy.diff), each
shortening dim by one (to zero at least).]],
      options = {
        {name = "n", type = "integer", default = "1",
         doc = "how many times to take differences"},
        {name = "dim", type = "integer", default = "-1",
         doc = "the dimension along which to take them"}},
      returns = "a new array.",
      example = [[
print(ml.diff({1, 4, 9, 16}, {n = 2}):sum())  --> 4]],
    },
    {
      name = "meshgrid",
      usage = {"ml.meshgrid(x1, x2, ... [, opts])"},
      doc = [[
Coordinate arrays from 1-D coordinates (numpy.meshgrid): the i-th result
repeats xi along every other dimension. "xy" indexing swaps the first
two dimensions of the results (rows follow x2), "ij" does not.]],
      options = {
        {name = "indexing", type = "string", default = '"xy"',
         doc = '"xy" (Cartesian) or "ij" (matrix)'}},
      returns = "as many new arrays as coordinates.",
      example = [[
local X, Y = ml.meshgrid({1, 2, 3}, {4, 5})
print(X.shape[1], X.shape[2], Y[{2, 1}])  --> 2 3 5]],
    },
    {
      name = "tile",
      usage = {"x:tile(reps)", "ml.tile(x, reps)"},
      doc = [[
x repeated reps times along each dimension (numpy.tile): reps an integer
or a table, the shorter of x's shape and reps padded with leading ones.]],
      returns = "a new array.",
      example = [[
print(ml.tile(ml.array({1, 2}), {2, 2}).shape[2])  --> 4]],
    },
    {
      name = "repeat_interleave",
      usage = {"x:repeat_interleave(repeats [, opts])",
               "ml.repeat_interleave(x, repeats [, opts])"},
      doc = [[
Each element of x repeated (torch.repeat_interleave, numpy.repeat):
repeats an integer, or a 1-D array or table of one count for each
element along dim. Without dim, x is flattened first.]],
      options = {
        {name = "dim", type = "integer", default = "nil",
         doc = "the dimension along which to repeat"}},
      returns = "a new array.",
      example = [[
print(ml.repeat_interleave({1, 2}, {2, 3}):sum())  --> 8]],
    },
  },
}
