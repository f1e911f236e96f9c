-- Help entries: arrays, their properties and lifetime.
return {
  title = "Arrays",
  intro = [[
An array has a dtype (float32, float64, int32, int64, or uint8, which
doubles as bool), up to 8 dimensions with strides counted in elements,
and a device ("cpu" or "cuda:N"). Views (slices, transposes, reshapes of
contiguous data, expands) share their storage with the array they come
from. Properties: x.shape (a table), x.dtype, x.ndim, x.device; #x is
the size of the first dimension; tostring(x) prints the values in the
Torch7 style with a footer such as [float64 2x3 cpu]. Arrays are freed
by the garbage collector, by x:free(), or at the end of the scope of
`local x <close> = ...`. Every function below that takes an array is
also a method: x:numel() is ml.numel(x).]],
  entries = {
    {
      name = "free",
      usage = {"x:free()", "ml.free(x)"},
      doc = [[
Releases x's storage now instead of at the next garbage collection (the
memory goes back to the device's allocator, and views of x keep the
storage until they go too). Any later use of x raises "array was freed";
tostring(x) gives "[freed array]". Freeing twice does nothing.]],
      returns = "nothing.",
      example = [=[
local x = ml.zeros(1000, 1000)
x:free()
print(tostring(x))  --> [freed array]]=],
    },
    {
      name = "size",
      usage = {"x:size([dim])", "ml.size(x [, dim])"},
      doc = [[
The shape of x as a table, or the size of one dimension (1-based,
negative counts from the end).]],
      returns = "a table of integers, or an integer when dim is given.",
      example = [[
local x = ml.zeros(2, 3)
print(x:size(2), x:size(-1), #x:size())  --> 3 3 2]],
    },
    {
      name = "stride",
      usage = {"x:stride([dim])", "ml.stride(x [, dim])"},
      doc = [[
The strides of x in elements (not bytes), as a table, or the stride of
one dimension. A transpose swaps them; a contiguous array's last stride
is 1.]],
      returns = "a table of integers, or an integer when dim is given.",
      example = [[
local x = ml.zeros(2, 3)
print(x:stride(1), x:t():stride(1))  --> 3 1]],
    },
    {
      name = "numel",
      usage = {"x:numel()", "ml.numel(x)"},
      doc = [[The number of elements of x (1 for a 0-d array).]],
      returns = "an integer.",
      example = [[
print(ml.zeros(2, 3, 4):numel())  --> 24]],
    },
    {
      name = "dim",
      usage = {"x:dim()", "ml.dim(x)"},
      doc = [[The number of dimensions of x, as x.ndim.]],
      returns = "an integer from 0 to 8.",
      example = [[
print(ml.zeros(2, 3):dim(), ml.array({5}):dim())  --> 2 1]],
    },
    {
      name = "is_contiguous",
      usage = {"x:is_contiguous()", "ml.is_contiguous(x)"},
      doc = [[
Whether x's elements lie in C order without gaps, so that x can be
viewed in any shape of the same size; x:contiguous() makes a copy that
is.]],
      returns = "a boolean.",
      example = [[
local x = ml.zeros(2, 3)
print(x:is_contiguous(), x:t():is_contiguous())  --> true false]],
    },
    {
      name = "is_array",
      usage = {"ml.is_array(v)"},
      doc = [[
Whether v is a moonlab array (also a freed one); tables and numbers are
not.]],
      returns = "a boolean.",
      example = [[
print(ml.is_array(ml.zeros(2)), ml.is_array({1, 2}))  --> true false]],
    },
  },
}
