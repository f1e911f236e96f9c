-- Help entries: reductions and the cumulative sum.
local KEEPDIM = {
  name = "keepdim", type = "boolean", default = "false",
  doc = "keep the reduced dimension (or, without dim, every dimension) "
        .. "with size 1, giving an array",
}

return {
  title = "Reductions",
  intro = [[
Reductions over every element or along one dimension. Without dim the
result is a Lua value (a number, an integer for integer results, or a
boolean for any and all); with dim (1-based, negative from the end) it
is an array without that dimension, or with it kept at size 1 under
{keepdim = true}; {keepdim = true} without dim gives an array of x's
rank with every size 1. Sums and products of integers are int64; mean,
var, std, norm and logsumexp of integers are float64; floats keep their
dtype (float32 accumulates in double). Results do not depend on the
number of threads, and a GPU gives the same bits from run to run. Every
function here is also a method, and x may be a nested table.]],
  entries = {
    {
      name = "sum",
      usage = {"x:sum([dim] [, opts])", "ml.sum(x [, dim] [, opts])"},
      doc = [[
The sum of the elements of x, or along dimension dim. Empty: 0.]],
      options = {KEEPDIM},
      returns = "a number without dim (unless keepdim), else an array.",
      example = [[
local x = ml.array({{1, 2, 3}, {4, 5, 6}})
print(x:sum(), x:sum(2)[2], x:sum(1, {keepdim = true}).shape[1])  --> 21 15 1
print(x:sum(1))]],
    },
    {
      name = "prod",
      usage = {"x:prod([dim] [, opts])", "ml.prod(x [, dim] [, opts])"},
      doc = [[
The product of the elements of x, or along dimension dim. Empty: 1.
Integer products wrap around in int64.]],
      options = {KEEPDIM},
      returns = "a number without dim (unless keepdim), else an array.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
print(x:prod(), x:prod(2):sum())  --> 24 14]],
    },
    {
      name = "mean",
      usage = {"x:mean([dim] [, opts])", "ml.mean(x [, dim] [, opts])"},
      doc = [[
The arithmetic mean of the elements of x, or along dimension dim.
Empty: NaN.]],
      options = {KEEPDIM},
      returns = "a number without dim (unless keepdim), else a float array.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
print(x:mean(), x:mean(1):sum())  --> 2.5 5.0]],
    },
    {
      names = {"min", "max"},
      usage = {
        "x:min([dim] [, opts])", "ml.min(x [, dim] [, opts])",
        "x:max([dim] [, opts])", "ml.max(x [, dim] [, opts])",
      },
      doc = [[
The smallest (largest) element of x; with dim, two arrays as in Torch:
the values along dim and their 1-based int64 positions (the first one
among equals). NaN propagates (and is where the index points). An empty
array or dimension raises ("max: empty array of shape 0x3 has no
maximum").]],
      options = {KEEPDIM},
      returns = "a number without dim (unless keepdim); with dim, values "
                .. "and indices.",
      example = [[
local x = ml.array({{1, 5, 3}, {4, 2, 6}})
print(x:max(), x:min())  --> 6 1
local v, i = x:max(2)
print(v:sum(), i[1], i[2])  --> 11 2 3]],
    },
    {
      names = {"argmin", "argmax"},
      usage = {
        "x:argmin([dim] [, opts])", "ml.argmin(x [, dim] [, opts])",
        "x:argmax([dim] [, opts])", "ml.argmax(x [, dim] [, opts])",
      },
      doc = [[
The 1-based position of the first smallest (largest) element: without
dim, the flat index in C order; with dim, int64 indices along it. NaN
counts as the extreme. Empty arrays raise, as for min and max.]],
      options = {KEEPDIM},
      returns = "an integer without dim (unless keepdim), else an int64 "
                .. "array.",
      example = [[
local x = ml.array({{1, 5, 3}, {4, 2, 6}})
print(x:argmax(), x:argmin(), x:argmax(2)[1])  --> 6 1 2]],
    },
    {
      names = {"var", "std"},
      usage = {
        "x:var([dim] [, opts])", "ml.var(x [, dim] [, opts])",
        "x:std([dim] [, opts])", "ml.std(x [, dim] [, opts])",
      },
      doc = [[
The variance (standard deviation) of the elements of x, or along dim:
the mean squared deviation from the mean, with the sum divided by
n - ddof. ddof is 0 by default, as in NumPy (Torch's default is 1); NaN
when n - ddof <= 0.]],
      options = {
        KEEPDIM,
        {name = "ddof", type = "integer", default = "0",
         doc = "delta degrees of freedom: the divisor is n - ddof "
               .. "(1 for the unbiased variance)"},
      },
      returns = "a number without dim (unless keepdim), else a float array.",
      example = [[
local x = ml.array({1, 2, 3, 4})
print(x:var(), x:var({ddof = 1}))  --> 1.25 1.6666666666667
print(ml.array({{1, 3}, {2, 6}}):std(2):sum())  --> 3.0]],
    },
    {
      name = "norm",
      usage = {"x:norm([dim] [, opts])", "ml.norm(x [, dim] [, opts])"},
      doc = [[
A vector norm of the elements of x (the Frobenius norm of a matrix), or
along dim: the 2-norm sqrt(sum(x^2)), the 1-norm sum(|x|), or the max
norm max(|x|). Empty: 0.]],
      options = {
        KEEPDIM,
        {name = "p", type = "number", default = "2",
         doc = "which norm: 1, 2 or math.huge"},
      },
      returns = "a number without dim (unless keepdim), else a float array.",
      example = [[
local x = ml.array({3, -4})
print(x:norm(), x:norm({p = 1}), x:norm({p = math.huge}))  --> 5.0 7.0 4.0]],
    },
    {
      name = "logsumexp",
      usage = {
        "x:logsumexp([dim] [, opts])",
        "ml.logsumexp(x [, dim] [, opts])",
      },
      doc = [[
log(sum(exp(x))), computed after shifting by the maximum so that it
neither overflows nor underflows. Empty: -inf.]],
      options = {KEEPDIM},
      returns = "a number without dim (unless keepdim), else a float array.",
      example = [[
print(ml.array({0, 0}):logsumexp())  --> 0.69314718055995
print(ml.array({1000, 1000}):logsumexp())  --> 1000.6931471806]],
    },
    {
      names = {"softmax", "log_softmax"},
      usage = {
        "x:softmax([dim])", "ml.softmax(x [, dim])",
        "x:log_softmax([dim])", "ml.log_softmax(x [, dim])",
      },
      doc = [[
exp(x - lse) (softmax) or x - lse (log_softmax) along dim, the last by
default (PyTorch's dim=-1), where lse is the logsumexp along dim, so
that neither overflows. One pass over memory on a GPU. The second result
is lse itself, kept with size 1 along dim: a mixture's E-step needs both.
A row holding NaN gives NaN; a row of -inf gives NaN (as PyTorch). Integers
give float64; float32 takes its exponentials in float32 and sums them in
double.]],
      returns = "an array of x's shape, then the logsumexp along dim.",
      example = [[
local p, lse = ml.array({1, 2, 3}):softmax()
print(p[3], lse[1])  --> 0.66524095577482 3.4076059644444
print(ml.log_softmax(ml.array({{0, 0}}), 2)[1][1])  --> -0.69314718055995]],
    },
    {
      names = {"any", "all"},
      usage = {
        "x:any([dim] [, opts])", "ml.any(x [, dim] [, opts])",
        "x:all([dim] [, opts])", "ml.all(x [, dim] [, opts])",
      },
      doc = [[
Whether any (every) element of x is nonzero, or along dim. Empty: any is
false, all is true.]],
      options = {KEEPDIM},
      returns = "a boolean without dim (unless keepdim), else a uint8 array.",
      example = [[
local x = ml.array({{0, 1}, {0, 0}})
print(x:any(), x:all(), x:any(2)[1], x:any(2)[2])  --> true false 1 0]],
    },
    {
      name = "cumsum",
      usage = {"x:cumsum([dim])", "ml.cumsum(x [, dim])"},
      doc = [[
Running sums along dim, keeping x's shape. Without dim, a 1-D array
scans its only dimension and an N-D array is flattened first (as
NumPy). Integers sum in int64.]],
      returns = "a new array.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
print(x:cumsum(2)[{2, 2}], x:cumsum()[4], x:cumsum(1)[{2, 1}])  --> 7 10 4]],
    },
    {
      name = "cumprod",
      usage = {"x:cumprod([dim])", "ml.cumprod(x [, dim])"},
      doc = [[
Running products along dim, keeping x's shape, as cumsum: without dim
an N-D array is flattened first (numpy.cumprod). Integers multiply in
int64 with wrap-around; float32 multiplies in double and rounds each
result to float32.]],
      returns = "a new array.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
print(x:cumprod(2)[{2, 2}], x:cumprod()[4], x:cumprod(1)[{2, 2}])  --> 12 24 8]],
    },
  },
}
