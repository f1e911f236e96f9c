-- Help entries: elementwise operations.
return {
  title = "Elementwise operations",
  intro = [[
Operations applied element by element, with NumPy 2's broadcasting and
type promotion. The operators + - * / % // ^ and unary minus work on
arrays (== compares identity, as in Lua; use ml.eq and the other
comparisons). Operands may be arrays, nested tables or Lua numbers; a
number is a weak scalar that takes the array's dtype (x + 2 keeps x's
dtype, an integer array + 2.5 gives float64, a uint8 array + 300 is an
error). Every function here but where is also a method: x:exp() is
ml.exp(x).]],
  entries = {
    {
      names = {"add", "sub", "mul", "div", "idiv", "mod", "pow"},
      usage = {
        "ml.add(a, b)    -- a + b",
        "ml.sub(a, b)    -- a - b",
        "ml.mul(a, b)    -- a * b",
        "ml.div(a, b)    -- a / b",
        "ml.idiv(a, b)   -- a // b",
        "ml.mod(a, b)    -- a % b",
        "ml.pow(a, b)    -- a ^ b",
      },
      doc = [[
Arithmetic, broadcasting a and b (arrays, tables or numbers) against each
other. div is true division: integer operands give float64. idiv and mod
floor, as Lua and Python do (-3 // 2 is -2, -3 % 2 is 1). Integer
arithmetic wraps around; integer idiv and mod by zero give 0. The result
dtype is the promotion of the operands' dtypes (a Lua number takes the
array's dtype, a float number lifts integers to float64).]],
      returns = "a new array of the broadcast shape.",
      example = [[
local x = ml.array({-3, 7})
print((x // 2):sum(), (x % 2):sum(), (x / 2).dtype)  --> 1 2 float64
print(ml.add(x, {{10}, {20}}))]],
    },
    {
      names = {"minimum", "maximum"},
      usage = {"ml.minimum(a, b)", "ml.maximum(a, b)"},
      doc = [[
The smaller (larger) of a and b element by element, broadcasting them;
NaN wins over numbers (as NumPy's minimum and maximum).]],
      returns = "a new array of the broadcast shape.",
      example = [[
local x = ml.array({-3, 7})
print(ml.maximum(x, 0):sum(), ml.minimum(x, {1, 2}):sum())  --> 7 -1]],
    },
    {
      names = {"eq", "ne", "lt", "le", "gt", "ge"},
      usage = {
        "ml.eq(a, b)", "ml.ne(a, b)", "ml.lt(a, b)", "ml.le(a, b)",
        "ml.gt(a, b)", "ml.ge(a, b)",
      },
      doc = [[
Comparisons element by element (a == b, a ~= b, a < b, a <= b, a > b,
a >= b), broadcasting a and b, giving uint8 (1 for true, 0 for false),
usable as a mask. A Lua number out of an integer
array's range compares exactly instead of raising. Comparisons with NaN
are false, except ne.]],
      returns = "a new uint8 array of the broadcast shape.",
      example = [[
local x = ml.array({1, 5, 9})
print(ml.gt(x, 4):sum(), ml.eq(x, {1, 0, 9}).dtype)  --> 2 uint8
print(x[ml.gt(x, 4)])]],
    },
    {
      names = {"neg", "abs", "floor", "ceil", "round"},
      usage = {
        "ml.neg(x)     -- -x",
        "ml.abs(x)",
        "ml.floor(x)",
        "ml.ceil(x)",
        "ml.round(x)",
      },
      doc = [[
Negation, absolute value and rounding, keeping x's dtype. round rounds
half to even (0.5 to 0, 1.5 to 2, as NumPy); on integer arrays floor,
ceil and round return the values unchanged.]],
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({0.5, 1.5, -2.5})
print(x:round():sum(), x:floor():sum(), x:abs():sum())  --> 0.0 -2.0 4.5]],
    },
    {
      names = {"sqrt", "exp", "log", "log1p", "expm1", "sin", "cos", "tanh",
               "sigmoid", "erf"},
      usage = {
        "ml.sqrt(x)", "ml.exp(x)", "ml.log(x)", "ml.log1p(x)",
        "ml.expm1(x)",
        "ml.sin(x)", "ml.cos(x)", "ml.tanh(x)", "ml.sigmoid(x)", "ml.erf(x)",
      },
      doc = [[
Math functions: square root, e^x, natural logarithm, log(1 + x) and
e^x - 1 (both accurate near 0), sine, cosine, hyperbolic tangent, the
logistic sigmoid 1 / (1 + e^-x) and the error function erf (as
scipy.special.erf: C's erf and erff on the CPU, CUDA's on the GPU). Float
arrays keep their dtype; integer arrays give float64. Outside the domain
the result is NaN or -inf (log(0)), as in C.]],
      returns = "a new float array of x's shape.",
      example = [[
local x = ml.array({1, 4})
print(x:sqrt():sum(), x:sqrt().dtype)  --> 3.0 float64
print(ml.log1p(ml.array({1e-20})):item())  --> 1e-20]],
    },
    {
      names = {"logical_not", "isnan", "isinf", "isfinite"},
      usage = {
        "ml.logical_not(x)", "ml.isnan(x)", "ml.isinf(x)", "ml.isfinite(x)",
      },
      doc = [[
Tests element by element, giving uint8 masks: logical_not is 1 where x
is 0; isnan, isinf and isfinite test floats (every integer is finite).]],
      returns = "a new uint8 array of x's shape.",
      example = [[
local x = ml.array({0 / 0, math.huge, 1})
print(x:isnan():sum(), x:isinf():sum(), x:isfinite():sum())  --> 1 1 1
print(ml.logical_not(ml.array({0, 2})):sum())  --> 1]],
    },
    {
      names = {"logical_and", "logical_or", "logical_xor"},
      usage = {
        "ml.logical_and(a, b)", "ml.logical_or(a, b)", "ml.logical_xor(a, b)",
      },
      doc = [[
NumPy's logical operations element by element, broadcasting a and b
(arrays, tables or numbers) against each other: nonzero is true, NaN
included.]],
      returns = "a new uint8 array of the broadcast shape.",
      example = [[
local a, b = ml.array({0, 1, 2}), ml.array({0, 0, 3})
print(ml.logical_and(a, b):sum(), a:logical_or(b):sum())  --> 1 2
print(ml.logical_xor(a, b):sum())  --> 1]],
    },
    {
      names = {"isclose", "allclose"},
      usage = {"ml.isclose(a, b, [opts])", "ml.allclose(a, b, [opts])"},
      doc = [[
NumPy's isclose: |a - b| <= atol + rtol * |b| element by element,
broadcasting a and b (not symmetric: b is the reference); an infinity is
close only to itself, NaN to nothing unless equal_nan. The test runs in
the float dtype of a - b (integers as float64). allclose is whether every
element is close.]],
      options = {
        {name = "rtol", type = "number", default = "1e-5",
         doc = "the relative tolerance"},
        {name = "atol", type = "number", default = "1e-8",
         doc = "the absolute tolerance"},
        {name = "equal_nan", type = "boolean", default = "false",
         doc = "NaN is close to NaN"},
      },
      returns = "isclose: a new uint8 array of the broadcast shape; "
                .. "allclose: a boolean.",
      example = [[
local a = ml.array({1, 1.000001, 0 / 0})
print(ml.isclose(a, {1, 1, 0 / 0}):sum())  --> 2
print(ml.allclose(a, {1, 1, 0 / 0}, {equal_nan = true}))  --> true]],
    },
    {
      name = "array_equal",
      usage = {"ml.array_equal(a, b, [opts])"},
      doc = [[
NumPy's array_equal: whether a and b have the same shape and equal
elements (their dtypes may differ).]],
      options = {
        {name = "equal_nan", type = "boolean", default = "false",
         doc = "NaN is equal to NaN"},
      },
      returns = "a boolean.",
      example = [[
local a = ml.array({1, 2})
print(ml.array_equal(a, {1, 2}), a:array_equal({{1, 2}}))  --> true false]],
    },
    {
      name = "clamp",
      usage = {"ml.clamp(x, lo, hi)", "x:clamp(lo, hi)"},
      doc = [[
x limited to [lo, hi] (NumPy's clip): max(x, lo), then min with hi.
Either bound may be nil (not both); a bound is a number or an array
(or table) that broadcasts. A number bound outside an integer dtype's
range saturates. NaN stays NaN.]],
      returns = "a new array.",
      example = [[
local x = ml.array({-3, 2, 9})
print(x:clamp(0, 5):sum(), x:clamp(nil, 0):sum())  --> 7 -3]],
    },
    {
      name = "clip",
      usage = {"ml.clip(x, lo, hi)", "x:clip(lo, hi)"},
      doc = [[
NumPy's name for clamp: x limited to [lo, hi], either bound nil (not
both), numbers or arrays that broadcast.]],
      returns = "a new array.",
      example = [[
print(ml.clip(ml.array({-3, 2, 9}), 0, 5):sum())  --> 7]],
    },
    {
      names = {"relu", "sign"},
      usage = {"ml.relu(x)", "ml.sign(x)"},
      doc = [[
relu is max(x, 0); sign is NumPy's: -1, 0 or 1 by the sign of x, in x's
dtype (integers stay integers), NaN for NaN. NaN stays NaN in relu.]],
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({-2, 0, 3})
print(x:relu():sum(), x:sign():sum())  --> 3 0]],
    },
    {
      name = "where",
      usage = {"ml.where(cond, a, b)"},
      doc = [[
a where cond is nonzero (NaN counts as true), else b, broadcasting all
three; a and b (arrays, tables or numbers) promote to one dtype. Only a
module function: the condition is not a receiver.]],
      returns = "a new array of the broadcast shape.",
      example = [[
local x = ml.array({-1, 4, -2})
print(ml.where(ml.lt(x, 0), 0, x):sum())  --> 4]],
    },
  },
}
