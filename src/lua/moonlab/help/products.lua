-- Help entries: matrix products.
return {
  title = "Matrix products",
  intro = [[
Products of vectors and matrices through BLAS (OpenBLAS on the CPU,
cuBLAS on a GPU); transposed views go to BLAS as transpose flags, not
copies. Operands of different dtypes promote as elementwise operations
do (integers compute exactly and wrap around); operands may be nested
tables. Every function is also a method: x:mm(y) is ml.mm(x, y).]],
  entries = {
    {
      name = "matmul",
      usage = {"ml.matmul(a, b)", "a:matmul(b)"},
      doc = [[
The matrix product with NumPy's semantics (the @ operator): a 1-D a is
taken as a row and a 1-D b as a column, and the added dimension dropped
from the result; dimensions before the last two are batch dimensions and
broadcast.]],
      returns = "a new array (0-d for two vectors).",
      example = [[
local a = ml.ones(5, 2, 3)
local b = ml.arange(12, {dtype = "float64"}):reshape(3, 4)
print(ml.matmul(a, b).shape[1], ml.matmul(a, b).shape[3])  --> 5 4
print(ml.matmul({1, 2}, {3, 4}):item())  --> 11]],
    },
    {
      name = "mm",
      usage = {"a:mm(b)", "ml.mm(a, b)"},
      doc = [[
The product of two matrices, m x k times k x n; anything but two 2-D
arrays is an error ("mm: shapes 3x4 and 3x4 are not aligned (4 != 3)").]],
      returns = "a new m x n array.",
      example = [[
local a = ml.array({{1, 2}, {3, 4}})
print(a:mm(a):sum(), a:mm(a:t())[{1, 2}])  --> 54 11]],
    },
    {
      name = "mv",
      usage = {"a:mv(v)", "ml.mv(a, v)"},
      doc = [[The product of an m x k matrix and a vector of length k.]],
      returns = "a new 1-D array of length m.",
      example = [[
local a = ml.array({{1, 2}, {3, 4}})
print(a:mv({1, 1})[2])  --> 7]],
    },
    {
      name = "dot",
      usage = {"a:dot(b)", "ml.dot(a, b)"},
      doc = [[The inner product of two 1-D arrays of one length.]],
      returns = "a Lua number (an integer for integer dtypes).",
      example = [[
print(ml.dot({1, 2, 3}, {4, 5, 6}))  --> 32]],
    },
    {
      name = "outer",
      usage = {"a:outer(b)", "ml.outer(a, b)"},
      doc = [[The outer product of two vectors: out[i][j] = a[i] * b[j].]],
      returns = "a new #a x #b array.",
      example = [[
local o = ml.outer({1, 2}, {1, 2, 3})
print(o.shape[1], o.shape[2], o[{2, 3}])  --> 2 3 6]],
    },
    {
      name = "einsum",
      usage = {"ml.einsum(subscripts, a [, b, ...])"},
      doc = [[
Einstein summation (numpy.einsum): subscripts as "ij,jk->ik" name the
dimensions of each operand by letters; an index repeated in one operand
takes its diagonal, indices the output lacks are summed, and "..."
stands for broadcast dimensions. Without "->" the output has the
dimensions of "..." and then the indices that occur once, in
alphabetical order. Contractions go to matmul: "bij,bjk->bik" and
"ij,kj->ik" are one batched or plain product, transposed views
included, with no copy; more operands contract left to right. The
result may be a view of an operand when nothing is summed ("ij->ji").]],
      returns = "an array (0-d when every index is summed).",
      example = [[
local a, b = ml.ones(2, 3), ml.arange(12, {dtype = "float64"}):reshape(3, 4)
print(ml.einsum("ij,jk->ik", a, b)[{1, 1}])  --> 12.0
print(ml.einsum("ij->", a):item())  --> 6.0
print(ml.einsum("ii", ml.eye(3)):item())  --> 3.0
print(ml.einsum("ij,kj", a, a).shape[1])  --> 2]],
    },
  },
}
