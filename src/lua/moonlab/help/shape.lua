-- Help entries: shapes and views.
return {
  title = "Shapes and views",
  intro = [[
Changing an array's shape. Everything here returns a view that shares
x's storage (writing through it writes x), except reshape and flatten
when the strides need a copy, and cat and stack, which copy. Dimensions
and indices are 1-based; negative ones count from the end. Every
function but cat and stack (which take a list) is also a method.]],
  entries = {
    {
      name = "reshape",
      usage = {"x:reshape(shape...)", "ml.reshape(x, shape...)"},
      doc = [[
x with a new shape of the same number of elements, given as integers or
one table; one size may be -1, inferred from the others. A view when x's
strides allow it (always for a contiguous x), else a view of a
contiguous copy.]],
      returns = "an array of the new shape.",
      example = [[
local x = ml.arange(6)
print(x:reshape(2, 3).shape[2], x:reshape({-1, 2}).shape[1])  --> 3 3]],
    },
    {
      name = "view",
      usage = {"x:view(shape...)", "ml.view(x, shape...)"},
      doc = [[
As reshape, but always a view: an error when x's strides would need a
copy (a transpose flattened, for instance).]],
      returns = "a view of the new shape.",
      example = [[
local x = ml.arange(6)
local v = x:view(3, 2)
v[{1, 1}] = 9
print(x[1])  --> 9]],
    },
    {
      name = "t",
      usage = {"x:t()", "ml.t(x)"},
      doc = [[
The transpose of a matrix as a view (a 0-d or 1-D array is returned as
a view of itself); more than 2 dimensions is an error, use transpose or
permute.]],
      returns = "a view.",
      example = [[
local x = ml.zeros(2, 3)
print(x:t().shape[1], x:t():is_contiguous())  --> 3 false]],
    },
    {
      name = "transpose",
      usage = {"x:transpose(dim1, dim2)", "ml.transpose(x, dim1, dim2)"},
      doc = [[x with dimensions dim1 and dim2 swapped, as a view.]],
      returns = "a view.",
      example = [[
print(ml.zeros(2, 3, 4):transpose(1, 3).shape[1])  --> 4]],
    },
    {
      name = "permute",
      usage = {"x:permute(dims...)", "ml.permute(x, dims...)"},
      doc = [[
x with its dimensions reordered: dimension i of the result is dimension
dims[i] of x; dims (integers or one table) name every dimension once.]],
      returns = "a view.",
      example = [[
local p = ml.zeros(2, 3, 4):permute(3, 1, 2)
print(p.shape[1], p.shape[2], p.shape[3])  --> 4 2 3]],
    },
    {
      name = "squeeze",
      usage = {"x:squeeze([dim])", "ml.squeeze(x [, dim])"},
      doc = [[
x without its dimensions of size 1, or without dimension dim if its size
is 1 (else unchanged).]],
      returns = "a view.",
      example = [[
local x = ml.zeros(1, 3, 1)
print(x:squeeze().ndim, x:squeeze(1).ndim, x:squeeze(2).ndim)  --> 1 2 3]],
    },
    {
      name = "unsqueeze",
      usage = {"x:unsqueeze(dim)", "ml.unsqueeze(x, dim)"},
      doc = [[
x with a new dimension of size 1 at position dim (1 to x.ndim + 1;
negative counts from the end of the result).]],
      returns = "a view.",
      example = [[
local x = ml.zeros(3)
print(x:unsqueeze(1).shape[1], x:unsqueeze(2).shape[2])  --> 1 1
print(x:unsqueeze(-1).shape[1])  --> 3]],
    },
    {
      name = "expand",
      usage = {"x:expand(shape...)", "ml.expand(x, shape...)"},
      doc = [[
x broadcast to a larger shape without copying (size-1 dimensions get
stride 0): NumPy's broadcast_to. -1 keeps a dimension's size; new
dimensions go in front. Writing through an expanded view writes the
shared elements.]],
      returns = "a view.",
      example = [[
local x = ml.array({{1}, {2}})
local e = x:expand(2, 3)
print(e:sum(), x:expand(4, -1, 5).shape[1])  --> 9 4]],
    },
    {
      name = "narrow",
      usage = {
        "x:narrow(dim, start, length)",
        "ml.narrow(x, dim, start, length)",
      },
      doc = [[
The length elements of dimension dim from index start (1-based; one
past the end with length 0 is allowed), as a view.]],
      returns = "a view.",
      example = [[
local x = ml.arange(10)
print(x:narrow(1, 3, 4):sum())  --> 14]],
    },
    {
      name = "select",
      usage = {"x:select(dim, index)", "ml.select(x, dim, index)"},
      doc = [[
The slice at index (1-based, negative from the end) of dimension dim,
without that dimension: x:select(1, i) is x[i] for an array of 2 or more
dimensions.]],
      returns = "a view with one dimension fewer.",
      example = [[
local x = ml.arange(6):reshape(2, 3)
print(x:select(2, -1):sum(), x:select(1, 2).ndim)  --> 7 1]],
    },
    {
      name = "flatten",
      usage = {
        "x:flatten([start [, stop]])",
        "ml.flatten(x [, start [, stop]])",
      },
      doc = [[
x with dimensions start to stop (inclusive; default all) merged into one,
as reshape does (a view when the strides allow it); a 0-d array becomes
1-D.]],
      returns = "an array.",
      example = [[
local x = ml.zeros(2, 3, 4)
print(x:flatten().shape[1], x:flatten(2).shape[2])  --> 24 12
print(x:flatten(1, 2).shape[1])  --> 6]],
    },
    {
      name = "split",
      usage = {
        "x:split(size [, dim])",
        "x:split(sizes [, dim])",
        "ml.split(x, size or sizes [, dim])",
      },
      doc = [[
x cut along dim (default 1) into consecutive views: pieces of size
elements (the last one smaller when size does not divide), or of the
sizes in the table sizes, which must add up to the dimension.]],
      returns = "a Lua list of views.",
      example = [[
local parts = ml.arange(5):split(2)
print(#parts, parts[3]:numel())  --> 3 1
local a, b = table.unpack(ml.arange(5):split({2, 3}))
print(b:sum())  --> 9]],
    },
    {
      name = "cat",
      usage = {"ml.cat(list [, dim])"},
      doc = [[
The arrays of a non-empty Lua list joined along dim (default 1). They
must have one number of dimensions, one device, and equal sizes except
along dim; the dtype is their promotion.]],
      returns = "a new array.",
      example = [[
local x = ml.ones(2, 3)
print(ml.cat({x, x}).shape[1], ml.cat({x, x}, 2).shape[2])  --> 4 6]],
    },
    {
      name = "stack",
      usage = {"ml.stack(list [, dim])"},
      doc = [[
The arrays of a non-empty Lua list, all of one shape, joined along a new
dimension dim (default 1; up to ndim + 1).]],
      returns = "a new array with one dimension more.",
      example = [[
local x = ml.ones(2, 3)
print(ml.stack({x, x}).shape[1], ml.stack({x, x}, 3).shape[3])  --> 2 2]],
    },
  },
}
