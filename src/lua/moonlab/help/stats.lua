-- Help entries: counting and statistics (moonlab/stats.lua).
local DIM = {name = "dim", type = "integer", default = "none",
             doc = "the dimension (1-based, negative from the end); none: all"}
local KEEPDIM = {name = "keepdim", type = "boolean", default = "false",
                 doc = "keep the reduced dimension with size 1"}

return {
  title = "Counting and statistics",
  intro = [[
NumPy's counting and order statistics, with its semantics, on either
device: they compose sorting, scans and gathers (histogram's equal bins
count with one kernel, privatised in shared memory on the GPU).
Positions are 1-based, as everywhere in moonlab (unique's index and
inverse, searchsorted's insertion points); values stay values (bincount
counts the value 0 in its first slot). Dimensions are 1-based. Every
function is also a method.]],
  entries = {
    {
      name = "unique",
      usage = {"x:unique([opts])", "ml.unique(x [, opts])"},
      doc = [[
The distinct values of x, flattened, in ascending order (numpy.unique),
by a stable sort and the marks where the sorted values change; NaNs
count as one value, placed last. Integers whose range is at most 2^16
or twice their number are counted instead, in one pass over x, unless
return_index or sorted = false asks for first occurrences. With the
options, also (in this order) the 1-based position in the flattened x
of each value's first occurrence, the 1-based position in the result
of every element of x (so values[inverse] is x flattened), and the
number of occurrences.]],
      options = {
        {name = "return_index", type = "boolean", default = "false",
         doc = "also return the positions of first occurrences"},
        {name = "return_inverse", type = "boolean", default = "false",
         doc = "also return each element's position in the result"},
        {name = "return_counts", type = "boolean", default = "false",
         doc = "also return the counts"},
        {name = "sorted", type = "boolean", default = "true",
         doc = "false: in the order of first occurrence"},
      },
      returns = "the values (x's dtype), then the int64 arrays asked for.",
      example = [[
local v, inv, n = ml.unique({3, 1, 3, 2}, {return_inverse = true,
                                           return_counts = true})
print(v[1], v[3], inv[1], n[3])  --> 1 3 3 2]],
    },
    {
      name = "bincount",
      usage = {"x:bincount([opts])", "ml.bincount(x [, opts])"},
      doc = [[
The number of occurrences of each value 0, 1, ..., max(x) in the 1-D
integer x (numpy.bincount): slot v + 1 counts the value v, since
values are values, not positions. Negative values are an error.]],
      options = {
        {name = "weights", type = "array|table", default = "none",
         doc = "sum these (x's shape) instead of counting ones"},
        {name = "minlength", type = "integer", default = "0",
         doc = "the least number of slots"},
      },
      returns = "an int64 array (float64 with weights) of max(x) + 1 slots.",
      example = [[
local c = ml.bincount(ml.array({0, 2, 2}, {dtype = "int64"}))
print(c.shape[1], c[1], c[3])  --> 3 1 2]],
    },
    {
      name = "histogram",
      usage = {"x:histogram([opts])", "ml.histogram(x [, opts])"},
      doc = [[
The counts of x's elements (flattened) in bins (numpy.histogram): bins
equal bins over range (default x's minimum to maximum), edges computed
and values placed as NumPy does, or the bins between the given edges;
every bin is half-open but the last, which is closed. Values outside
the range (and NaN) count nowhere. Integers compute in float64.]],
      options = {
        {name = "bins", type = "integer|array|table", default = "10",
         doc = "the number of equal bins, or the ascending edges"},
        {name = "range", type = "table", default = "none",
         doc = "{lo, hi}: the span of the equal bins"},
        {name = "weights", type = "array|table", default = "none",
         doc = "sum these (x's shape) instead of counting ones"},
        {name = "density", type = "boolean", default = "false",
         doc = "divide by the total and the bin widths (float64)"},
      },
      returns = "the counts (int64, or the weights' dtype) and the edges.",
      example = [[
local n, e = ml.histogram({1, 2, 2, 4}, {bins = 3})
print(n[1], n[2], n[3], e[2])  --> 1 2 1 2.0]],
    },
    {
      names = {"quantile", "percentile"},
      usage = {"x:quantile(q [, opts])", "ml.quantile(x, q [, opts])",
               "x:percentile(q [, opts])", "ml.percentile(x, q [, opts])"},
      doc = [[
The q-th quantiles of x (q in [0, 1]) or percentiles (q in [0, 100])
along dim or of every element, by NumPy's default linear method: the
sorted values at positions q (n - 1) interpolated. q is a number or a
list; a list puts its dimension first in the result. A NaN in a slice
makes its result NaN. The result is float64, as NumPy 1.24's; an empty
dimension is an error.]],
      options = {DIM, KEEPDIM},
      returns = "a number (q a number, no dim), else a float64 array.",
      example = [[
local x = ml.array({1, 2, 3, 4})
print(x:quantile(0.5), x:percentile(25))  --> 2.5 1.75
print(x:quantile({0, 1})[2])  --> 4.0]],
    },
    {
      name = "median",
      usage = {"x:median([opts])", "ml.median(x [, opts])"},
      doc = [[
The median along dim or of every element (numpy.median): the middle of
the sorted values, or the mean of the two middle ones. Floats keep
their dtype, integers give float64; a NaN in a slice makes its median
NaN; an empty dimension is an error.]],
      options = {DIM, KEEPDIM},
      returns = "a number (no dim), else an array.",
      example = [[
print(ml.median({3, 1, 2}), ml.median({4, 1, 3, 2}))  --> 2.0 2.5]],
    },
    {
      names = {"nansum", "nanmean", "nanmax", "nanmin"},
      usage = {"x:nansum([dim] [, opts])", "ml.nansum(x [, dim] [, opts])",
               "x:nanmean([dim] [, opts])", "x:nanmax([dim] [, opts])",
               "x:nanmin([dim] [, opts])"},
      doc = [[
sum, mean, max and min that skip NaN (numpy.nansum ...): along dim
(1-based) or over every element. A slice of NaN only sums to 0 and has
NaN as mean, maximum and minimum (NumPy also warns); integers have no
NaN and reduce as sum, mean, max and min do. nanmax and nanmin return
the values only.]],
      options = {KEEPDIM},
      returns = "a number (no dim), else an array.",
      example = [[
local x = ml.array({{1, 0 / 0}, {0 / 0, 0 / 0}})
local m = x:nanmax(2)
print(x:nansum(), x:nanmean(), m[1], m[2] ~= m[2])  --> 1.0 1.0 1.0 true]],
    },
  },
}
