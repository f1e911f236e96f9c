-- Help entries: constructors.
local function dtype(default)
  return {name = "dtype", type = "string", default = default,
          doc = "the element type: float32, float64, int32, int64 or uint8"}
end
local function device(default)
  return {name = "device", type = "string", default = default,
          doc = 'where the array lives: "cpu", "cuda" or "cuda:N"'}
end
local DEFAULT_DTYPE = dtype("ml.get_default_dtype()")
local DEFAULT_DEVICE = device("ml.device()")

return {
  title = "Constructors",
  intro = [[
New arrays from a shape, a range or a Lua table. A shape is given as
integers (ml.zeros(2, 3)) or as one table (ml.zeros({2, 3}),
ml.zeros(x.shape)); no sizes make a 0-d array. A trailing options table
{dtype=, device=} picks the element type (default
ml.get_default_dtype(), float64 unless changed) and the device (default
ml.device()).]],
  entries = {
    {
      names = {"zeros", "ones", "empty"},
      usage = {
        "ml.zeros(shape... [, opts])",
        "ml.ones(shape... [, opts])",
        "ml.empty(shape... [, opts])",
      },
      doc = [[
A new array of the shape filled with zeros, with ones, or left
uninitialised (empty: the values are whatever the memory held; fill
it before reading).]],
      options = {DEFAULT_DTYPE, DEFAULT_DEVICE},
      returns = "a new contiguous array.",
      example = [[
local x = ml.zeros(2, 3, {dtype = "int32"})
print(x.dtype, x:numel(), x:sum())  --> int32 6 0
print(ml.ones({4}):sum())  --> 4.0]],
    },
    {
      name = "full",
      usage = {"ml.full(shape..., value [, opts])"},
      doc = [[
A new array of the shape with every element value. An integer value
gives int64 unless a dtype is named, a float value the default dtype
(as NumPy); the value must fit the dtype ("full: 300 is out of range for
uint8").]],
      options = {
        dtype("int64 for an integer value, else ml.get_default_dtype()"),
        DEFAULT_DEVICE,
      },
      returns = "a new contiguous array.",
      example = [[
print(ml.full(2, 3, 7):sum(), ml.full(2, 7).dtype)  --> 42 int64
print(ml.full({2}, 0.5, {dtype = "float32"}))]],
    },
    {
      name = "eye",
      usage = {"ml.eye(n [, m] [, opts])"},
      doc = [[
The n x m matrix (m defaults to n) with ones on the main diagonal and
zeros elsewhere.]],
      options = {DEFAULT_DTYPE, DEFAULT_DEVICE},
      returns = "a new n x m array.",
      example = [[
print(ml.eye(3):sum(), ml.eye(2, 3).shape[2])  --> 3.0 3
print(ml.eye(2, {dtype = "int32"}))]],
    },
    {
      name = "arange",
      usage = {
        "ml.arange(stop [, opts])",
        "ml.arange(start, stop [, step] [, opts])",
      },
      doc = [[
The numbers start, start + step, ... up to but excluding stop, as
NumPy's arange (start defaults to 0, step to 1; a negative step counts
down). int64 when start, stop and step are all Lua integers, else the
default float dtype. For float steps the count is ceil((stop - start) /
step), so rounding may include a point close to stop; linspace is the
safer choice there.]],
      options = {
        dtype("int64 for integer arguments, else ml.get_default_dtype()"),
        DEFAULT_DEVICE,
      },
      returns = "a new 1-D array.",
      example = [[
print(ml.arange(5):sum(), ml.arange(5).dtype)  --> 10 int64
print(ml.arange(1, 2, 0.25))
print(ml.arange(10, 0, -3):numel())  --> 4]],
    },
    {
      name = "linspace",
      usage = {"ml.linspace(start, stop [, n] [, opts])"},
      doc = [[
n evenly spaced numbers from start to stop, both included (n defaults
to 50); the last one is exactly stop, as in NumPy.]],
      options = {DEFAULT_DTYPE, DEFAULT_DEVICE},
      returns = "a new 1-D array of n elements.",
      example = [[
local x = ml.linspace(0, 1, 5)
print(x[2], x[5], ml.linspace(0, 1):numel())  --> 0.25 1.0 50]],
    },
    {
      name = "array",
      usage = {"ml.array(table [, opts])"},
      doc = [[
An array from a nested Lua table of numbers (or booleans, as 0 and 1):
{1, 2, 3} is 1-D, {{1, 2}, {3, 4}} is 2 x 2; every row must have the same
length. Without a dtype, a table of Lua integers gives int64 and any
float gives the default float dtype; with one, every value must fit it.]],
      options = {dtype("int64 for integers, else ml.get_default_dtype()"),
                 DEFAULT_DEVICE},
      returns = "a new contiguous array.",
      example = [[
local x = ml.array({{1, 2, 3}, {4, 5, 6}})
print(x.dtype, x.shape[1], x.shape[2])  --> int64 2 3
local u = ml.array({1, 2}, {dtype = "uint8"})
print(ml.array({1, 2.5}).dtype, u.dtype)  --> float64 uint8]],
    },
    {
      names = {"zeros_like", "ones_like", "empty_like"},
      usage = {
        "ml.zeros_like(x [, opts])",
        "ml.ones_like(x [, opts])",
        "ml.empty_like(x [, opts])",
      },
      doc = [[
A new array of x's shape, dtype and device (unless the options say
otherwise) filled with zeros, with ones, or uninitialised.]],
      options = {dtype("x.dtype"), device("x.device")},
      returns = "a new contiguous array.",
      example = [[
local x = ml.zeros(2, 3, {dtype = "int32"})
local o = ml.ones_like(x)
print(o.dtype, o:sum())  --> int32 6
print(ml.zeros_like(x, {dtype = "float32"}).dtype)  --> float32]],
    },
    {
      name = "full_like",
      usage = {"ml.full_like(x, value [, opts])"},
      doc = [[
A new array of x's shape, dtype and device (unless the options say
otherwise) with every element value, which must fit the dtype.]],
      options = {dtype("x.dtype"), device("x.device")},
      returns = "a new contiguous array.",
      example = [[
local x = ml.zeros(2, 2)
print(ml.full_like(x, 1.5):sum())  --> 6.0]],
    },
  },
}
