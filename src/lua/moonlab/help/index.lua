-- Help entries: indexing, masks and sorting.
return {
  title = "Indexing and sorting",
  intro = [[
Subscripts read and write parts of an array: x[i] is the i-th slice
along dimension 1 (a number for a 1-D array); x[{i, j}] is one element;
x[{{1, 10}, {}}] is a view of rows 1 to 10 ({} takes a dimension whole,
{a} keeps index a, {a, b, step} every step-th of a..b); x[mask] (a uint8
array) selects elements and x[idx] (an integer array) rows, as copies.
Assigning through the same forms fills with a number or copies an array
or table: x[{{}, 1}] = 0. Indices are 1-based; negative ones count from
the end. Index arguments below may be arrays, integers or tables of
integers; masks arrays or tables of booleans or 0 and 1. Every function
here is also a method.]],
  entries = {
    {
      name = "index_select",
      usage = {
        "x:index_select(dim, index)",
        "ml.index_select(x, dim, index)",
      },
      doc = [[
The slices of x along dim at the 1-based positions in index (a 1-D
integer array or table, repeats allowed), in that order.]],
      returns = "a new array whose dimension dim has #index entries.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
local s = x:index_select(2, {3, 1})
print(s[{2, 1}], s[{2, 2}], x:index_select(1, {2, 2}):sum())  --> 8 7 30]],
    },
    {
      name = "index_add",
      usage = {"x:index_add(dim, index, src)", "ml.index_add(x, dim, index, src)"},
      doc = [[
A copy of x with the slices of src along dim added to the slices of x
at the 1-based positions in index (1-D), as Torch's index_add (out of
place): src has x's shape but #index entries along dim; repeated
positions add up (a segment sum: x:index_add(1, labels, rows) sums rows
by label). Each element's terms add in the order of index, in double
for floats (rounded once) and wrapping int64 for integers, so the
result is the same on every device and every run.]],
      returns = "a new array of x's shape and dtype.",
      example = [[
local rows = ml.array({{1, 2}, {3, 4}, {5, 6}})
local s = ml.zeros(2, 2):index_add(1, {2, 1, 2}, rows)
print(s[{1, 1}], s[{1, 2}], s[{2, 1}], s[{2, 2}])  --> 3.0 4.0 6.0 8.0]],
    },
    {
      name = "gather",
      usage = {"x:gather(dim, index)", "ml.gather(x, dim, index)"},
      doc = [=[
Picks along dim: for dim 2, out[i][j] = x[i][index[i][j]] (likewise for
any dimension, as Torch's gather). index has x's number of dimensions
and is no larger than x outside dim.]=],
      returns = "a new array of index's shape and x's dtype.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
local g = x:gather(2, {{3}, {1}})
print(g[{1, 1}], g[{2, 1}])  --> 1 7]],
    },
    {
      name = "scatter",
      usage = {
        "x:scatter(dim, index, src)",
        "ml.scatter(x, dim, index, src)",
      },
      doc = [=[
A copy of x with values written along dim: for dim 2,
out[i][index[i][j]] = src[i][j] (Torch's scatter, not in place). src is
a number, or an array or table broadcast to index's shape, converted to
x's dtype; where an index repeats, the last value wins.]=],
      returns = "a new array of x's shape.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
print(x:scatter(2, {{1}, {3}}, 0):sum())  --> 17]],
    },
    {
      name = "masked_select",
      usage = {"x:masked_select(mask)", "ml.masked_select(x, mask)"},
      doc = [[
The elements of x where mask (uint8, broadcast to x's shape) is nonzero,
in C order; as x[mask].]],
      returns = "a new 1-D array.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
print(x:masked_select(ml.gt(x, 4)):sum())  --> 29]],
    },
    {
      name = "masked_fill",
      usage = {
        "x:masked_fill(mask, value)",
        "ml.masked_fill(x, mask, value)",
      },
      doc = [[
A copy of x with value where mask (uint8, broadcast to x's shape) is
nonzero; value must fit x's dtype. x[mask] = value does the same in
place.]],
      returns = "a new array of x's shape.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
print(x:masked_fill(ml.gt(x, 4), 0):sum())  --> 1]],
    },
    {
      name = "nonzero",
      usage = {"x:nonzero()", "ml.nonzero(x)"},
      doc = [[
The positions of x's nonzero elements, C order, as NumPy's nonzero: one
1-based int64 index array per dimension of x, as several return values
(one for a 0-d x, as for a 1-D one).]],
      returns = "x.ndim int64 arrays of the count of nonzero elements each.",
      example = [[
local i, j = ml.array({{0, 3}, {4, 0}}):nonzero()
print(i[1], j[1], i[2], j[2])  --> 1 2 2 1]],
    },
    {
      name = "argwhere",
      usage = {"x:argwhere()", "ml.argwhere(x)"},
      doc = [[
The positions of x's nonzero elements, C order, one row each, as
NumPy's argwhere: row r holds the 1-based indices of the r-th nonzero
element.]],
      returns = "an int64 array of count x x.ndim.",
      example = [[
local p = ml.array({{0, 3}, {4, 0}}):argwhere()
print(p.shape[1], p.shape[2], p[{2, 1}], p[{2, 2}])  --> 2 2 2 1]],
    },
    {
      names = {"sort", "argsort"},
      usage = {
        "x:sort([dim] [, opts])", "ml.sort(x [, dim] [, opts])",
        "x:argsort([dim] [, opts])", "ml.argsort(x [, dim] [, opts])",
      },
      doc = [[
x sorted along dim (default the last): sort returns the sorted values
and their 1-based int64 positions in x, argsort only the positions. The
sort is stable (equal values keep their order, also descending, as
NumPy's kind="stable" and torch's stable=True); NaN counts as larger than
every number.]],
      options = {
        {name = "descending", type = "boolean", default = "false",
         doc = "largest first"},
        {name = "stable", type = "boolean", default = "true",
         doc = "accepted for torch's sake; false is an error"},
      },
      returns = "sort: values and indices; argsort: indices.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
local v, i = x:sort(2)
print(v[{1, 1}], i[{1, 1}])  --> 1 3
print(x:argsort(1, {descending = true})[{1, 2}])  --> 1]],
    },
    {
      name = "topk",
      usage = {
        "x:topk(k [, dim] [, opts])",
        "ml.topk(x, k [, dim] [, opts])",
      },
      doc = [[
The k largest (or smallest) elements along dim (default the last) and
their 1-based int64 positions; ties go to the lower index, NaN counts as
the largest. k may be 0 up to the size of dim.]],
      options = {
        {name = "largest", type = "boolean", default = "true",
         doc = "the largest elements; false: the smallest"},
        {name = "sorted", type = "boolean", default = "true",
         doc = "best first; false: in their order along dim"},
      },
      returns = "values and indices, of x's shape with k along dim.",
      example = [[
local x = ml.array({{5, 9, 1}, {7, 0, 8}})
local v, i = x:topk(2)
print(v[{1, 1}], i[{1, 1}], v[{2, 2}])  --> 9 2 7
v = x:topk(1, 1, {largest = false})
print(v[{1, 2}])  --> 0]],
    },
    {
      name = "searchsorted",
      usage = {"a:searchsorted(v [, opts])", "ml.searchsorted(a, v [, opts])"},
      doc = [[
Where the elements of v would go into the sorted 1-D a to keep it
sorted (numpy.searchsorted), 1-based: NumPy's insertion index i is i + 1
here, so that a value below every element gives 1 and one above every
element #a + 1. left puts a value before the elements equal to it, right
after them. a and v compare in their promoted dtype; NaN is larger than
every number. a need not be sorted when sorter gives the 1-based
positions that sort it (argsort's result).]],
      options = {
        {name = "side", type = "string", default = '"left"',
         doc = '"left" or "right"'},
        {name = "sorter", type = "array|table", default = "none",
         doc = "1-based positions that sort a"},
      },
      returns = "an int64 array of v's shape, or an integer for a number v.",
      example = [[
local a = ml.array({1, 2, 2, 3})
print(a:searchsorted(2), a:searchsorted(2, {side = "right"}))  --> 2 4
print(ml.searchsorted(a, {0, 9})[2])  --> 5]],
    },
  },
}
