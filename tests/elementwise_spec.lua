-- Elementwise operations: operators, unary and binary functions, where,
-- clamp; NumPy 2 broadcasting and promotion; NaN/Inf; empty and 0-d arrays.
local ml = require "moonlab"

local nan, inf = 0 / 0, math.huge

local function flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
    return out
  end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

local function shape_of(t)
  local s = {}
  while type(t) == "table" do
    s[#s + 1] = #t
    t = t[1]
  end
  return s
end

-- Asserts x has the dtype, the shape of the nested table expected (or the
-- given shape), and its values within tol (relative and absolute); NaN
-- matches NaN, infinities must be equal.
local function check(x, expected, dtype, tol, shape)
  tol = tol or 0
  assert.is_true(ml.is_array(x), "expected an array")
  if dtype then assert.equal(dtype, x.dtype) end
  assert.same(shape or shape_of(expected), x.shape)
  local a, e = flatten(x:totable()), flatten(expected)
  assert.equal(#e, #a)
  for i = 1, #e do
    local ok
    if e[i] ~= e[i] then
      ok = a[i] ~= a[i]
    elseif e[i] == inf or e[i] == -inf then
      ok = a[i] == e[i]
    else
      ok = math.abs(a[i] - e[i]) <= tol * (1 + math.abs(e[i]))
    end
    if not ok then
      error(("element %d: got %.17g, expected %.17g"):format(i, a[i], e[i]), 2)
    end
  end
end

local function f64(t) return ml.array(t, {dtype = "float64"}) end
local function f32(t) return ml.array(t, {dtype = "float32"}) end
local function i32(t) return ml.array(t, {dtype = "int32"}) end
local function i64(t) return ml.array(t, {dtype = "int64"}) end
local function u8(t) return ml.array(t, {dtype = "uint8"}) end

local function errmsg(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

describe("binary arithmetic", function()
  it("adds, subtracts, multiplies and divides float64", function()
    local x, y = f64({1.5, -2, 3}), f64({0.5, 4, -6})
    check(x + y, {2, 2, -3}, "float64")
    check(x - y, {1, -6, 9}, "float64")
    check(x * y, {0.75, -8, -18}, "float64")
    check(x / y, {3, -0.5, -0.5}, "float64")
    check(ml.add(x, y), {2, 2, -3}, "float64")
    check(ml.sub(x, y), {1, -6, 9}, "float64")
    check(ml.mul(x, y), {0.75, -8, -18}, "float64")
    check(ml.div(x, y), {3, -0.5, -0.5}, "float64")
  end)

  it("computes float32 in float32", function()
    local x = f32({0.1, 1e30}) * f32({3, 1e10})
    assert.equal("float32", x.dtype)
    local t = x:totable()
    assert.equal((string.unpack("f", string.pack("f", 0.1 * 3))), t[1])
    assert.equal(inf, t[2]) -- overflows float32
  end)

  it("raises to powers", function()
    check(f64({2, 4, 9}) ^ f64({3, 0.5, -0.5}), {8, 2, 1 / 3}, "float64", 1e-15)
    check(ml.pow(f32({2, 3}), 2), {4, 9}, "float32")
    check(i64({2, 3, -3, 7}) ^ i64({10, 39, 3, 0}), {1024, 4052555153018976267, -27, 1}, "int64")
    check(u8({2, 3}) ^ 8, {0, 161}, "uint8") -- 256 and 6561 wrap
  end)

  it("refuses negative integer exponents of integers, as NumPy", function()
    local msg = "pow: integers to negative integer powers are not allowed (exponent %d)"
    assert.has_error(function() return i32({5, 1}) ^ -1 end, msg:format(-1))
    assert.has_error(function() return ml.pow(i64({2, 3}), -2) end, msg:format(-2))
    assert.has_error(function() return 2 ^ i64({1, -3, -2}) end, msg:format(-3))
    assert.has_error(function() return ml.pow(1, i32({0, -1})) end, msg:format(-1))
    assert.has_error(function() return i64({2, 1, -1}) ^ i64({1, -5, 3}) end, msg:format(-5))
    assert.has_error(function() return i32({{2}, {3}}) ^ i64({0, -1}) end, msg:format(-1))
    assert.has_error(function() return u8({2}) ^ -1 end, "pow: -1 is out of range for uint8")
    -- an empty exponent or one that broadcasts badly: the usual answers
    check(i32({}) ^ i64({}), {}, "int64")
    assert.has_error(function() return i32({1, 2}) ^ i64({-1, -1, -1}) end,
      "pow: shapes 2 and 3 do not broadcast")
  end)

  it("divides integer arrays by integers out of their range in float64, as NumPy 2", function()
    check(300 / u8({1, 2, 3}), {300, 150, 100}, "float64")
    check(u8({3, 6, 255}) / 300, {0.01, 0.02, 0.85}, "float64", 1e-15)
    check(u8({2, 4}) / -1, {-2, -4}, "float64")
    check(ml.div(i32({1, -8}), 2 ^ 40), {2 ^ -40, -2 ^ -37}, "float64")
    check(math.mininteger / i32({-1, 2}), {2 ^ 63, -2 ^ 62}, "float64")
    check(i64({math.maxinteger}) / math.maxinteger, {1}, "float64")
    check(u8({1}) / 300.5, {1 / 300.5}, "float64")
    -- the other operations keep refusing them; comparisons compare exactly
    assert.has_error(function() return u8({1}) // 300 end, "idiv: 300 is out of range for uint8")
    assert.has_error(function() return 300 * u8({1}) end, "mul: 300 is out of range for uint8")
    check(ml.lt(u8({1, 255}), 300), {1, 1}, "uint8")
  end)

  it("takes non-negative and unsigned integer exponents, and floats", function()
    check(i32({2, -3}) ^ i64({0, 3}), {1, -27}, "int64")
    check(i64({2, 3}) ^ u8({3, 2}), {8, 9}, "int64")
    check(3 ^ i32({0, 2}), {1, 9}, "int32")
    check(i32({2, 4}) ^ -1.0, {0.5, 0.25}, "float64")
    check(2.0 ^ i64({-1, -2}), {0.5, 0.25}, "float64")
    check(i64({2, 4}) ^ f64({-1, 0.5}), {0.5, 2}, "float64")
    local e = i64({{1, -1}, {2, -2}}):t()[1] -- a strided view: 1, 2
    check(i64({3, 3}) ^ e, {3, 9}, "int64")
    assert.has_error(function() return i64({3, 3}) ^ i64({{1, -1}, {2, -2}}):t()[2] end,
      "pow: integers to negative integer powers are not allowed (exponent -2)")
  end)

  it("takes minimum and maximum", function()
    local x, y = f64({1, 5, -3}), f64({2, 4, -3})
    check(ml.minimum(x, y), {1, 4, -3}, "float64")
    check(ml.maximum(x, y), {2, 5, -3}, "float64")
    check(ml.minimum(i32({7, -8}), i32({3, 9})), {3, -8}, "int32")
    check(ml.maximum(u8({7, 200}), 100), {100, 200}, "uint8")
    check(x:minimum(0), {0, 0, -3}, "float64")
    check(x:maximum(0), {1, 5, 0}, "float64")
  end)

  it("propagates NaN through minimum and maximum, from either side", function()
    check(ml.minimum(f64({nan, 1, nan}), f64({1, nan, nan})), {nan, nan, nan}, "float64")
    check(ml.maximum(f64({nan, 1, 2}), f64({1, nan, 1})), {nan, nan, 2}, "float64")
    check(ml.minimum(f32({nan, 1}), 0), {nan, 0}, "float32")
  end)

  it("follows IEEE rules for float division by zero", function()
    check(f64({1, -1, 0}) / 0, {inf, -inf, nan}, "float64")
    check(f64({1, -1, 0}) // 0, {inf, -inf, nan}, "float64")
    check(f64({1, -1, 0}) % 0, {nan, nan, nan}, "float64")
  end)
end)

describe("floor division and modulo", function()
  it("floor-divide integers with Lua's sign rules", function()
    local a, b = i64({7, -7, 7, -7, 6}), i64({2, 2, -2, -2, 3})
    check(a // b, {3, -4, -4, 3, 2}, "int64")
    check(ml.idiv(a, b), {3, -4, -4, 3, 2}, "int64")
    check(i32({7, -7, 7, -7}) // i32({2, 2, -2, -2}), {3, -4, -4, 3}, "int32")
    check(u8({7, 255}) // 2, {3, 127}, "uint8")
  end)

  it("takes integer modulo with the divisor's sign", function()
    local a, b = i64({7, -7, 7, -7, 6}), i64({3, 3, -3, -3, 3})
    check(a % b, {1, 2, -2, -1, 0}, "int64")
    check(ml.mod(a, b), {1, 2, -2, -1, 0}, "int64")
    check(i32({-7, 7}) % 3, {2, 1}, "int32")
    check(u8({7, 255}) % 10, {7, 5}, "uint8")
  end)

  it("gives 0 for integer division and modulo by zero", function()
    check(i64({5, -5, 0}) // 0, {0, 0, 0}, "int64")
    check(i64({5, -5, 0}) % 0, {0, 0, 0}, "int64")
    check(u8({5}) // u8({0}), {0}, "uint8")
    check(i32({5}) % i32({0}), {0}, "int32")
  end)

  it("wraps the one overflowing quotient", function()
    check(i64({math.mininteger}) // -1, {math.mininteger}, "int64")
    check(i64({math.mininteger}) % -1, {0}, "int64")
    check(i32({-2147483648}) // -1, {-2147483648}, "int32")
  end)

  it("floor-divides and takes modulo of floats as Lua does", function()
    local a, b = f64({7.5, -7.5, 7.5, -7.5}), f64({2, 2, -2, -2})
    check(a // b, {3, -4, -4, 3}, "float64")
    check(a % b, {1.5, 0.5, -0.5, -1.5}, "float64")
    check(f64({5, -5}) % inf, {5, inf}, "float64")
    check(f64({5, -5}) // inf, {0, -1}, "float64")
    check(f32({-7.5}) % 2, {0.5}, "float32")
    check(f32({-7.5}) // 2, {-4}, "float32")
  end)

  it("agrees with Lua's operators on many operands", function()
    local xs, ys = {}, {}
    for i = -12, 12 do
      for j = -5, 5 do
        if j ~= 0 then
          xs[#xs + 1], ys[#ys + 1] = i, j
        end
      end
    end
    local q, r = (i64(xs) // i64(ys)):totable(), (i64(xs) % i64(ys)):totable()
    local fq, fr = (f64(xs) * 0.5 // f64(ys)):totable(), (f64(xs) * 0.5 % f64(ys)):totable()
    for k = 1, #xs do
      assert.equal(xs[k] // ys[k], q[k])
      assert.equal(xs[k] % ys[k], r[k])
      assert.equal(xs[k] * 0.5 // ys[k], fq[k])
      assert.equal(xs[k] * 0.5 % ys[k], fr[k])
    end
  end)
end)

describe("integer arithmetic", function()
  it("wraps around on overflow", function()
    check(u8({250, 3}) + u8({10, 5}), {4, 8}, "uint8")
    check(u8({3}) - u8({5}), {254}, "uint8")
    check(u8({16}) * u8({17}), {16}, "uint8")
    check(i32({2147483647}) + 1, {-2147483648}, "int32")
    check(i32({65536}) * 65536, {0}, "int32")
    check(i64({math.maxinteger}) + 1, {math.mininteger}, "int64")
  end)

  it("negates and takes absolute values in the same dtype", function()
    check(-u8({0, 1, 255}), {0, 255, 1}, "uint8")
    check(ml.neg(i32({5, -2147483648})), {-5, -2147483648}, "int32")
    check(ml.abs(i32({-5, 7, -2147483648})), {5, 7, -2147483648}, "int32")
    check(i64({-9, math.mininteger}):abs(), {9, math.mininteger}, "int64")
    check(u8({0, 200}):abs(), {0, 200}, "uint8")
    check(-f32({1.5, -0.0}), {-1.5, 0}, "float32")
    check(f64({-2.5, 3}):abs(), {2.5, 3}, "float64")
  end)

  it("divides integers truly, into float64", function()
    check(i32({1, 2, 3}) / i32({2, 2, 2}), {0.5, 1, 1.5}, "float64")
    check(u8({1}) / u8({4}), {0.25}, "float64")
    check(i64({7}) / 2, {3.5}, "float64")
    check(2 / i64({4, 8}), {0.5, 0.25}, "float64")
    check(i32({1, -1, 0}) / 0, {inf, -inf, nan}, "float64")
  end)
end)

describe("dtype promotion", function()
  it("promotes two arrays by NumPy 2's table", function()
    assert.equal("float64", (i32({1}) + f32({1})).dtype)
    assert.equal("int32", (u8({1}) + i32({1})).dtype)
    assert.equal("int64", (i32({1}) + i64({1})).dtype)
    assert.equal("float32", (u8({1}) + f32({1})).dtype)
    assert.equal("float64", (i64({1}) + f32({1})).dtype)
    assert.equal("float64", (f32({1}) + f64({1})).dtype)
    check(i32({1, 2}) + f32({0.5, 0.25}), {1.5, 2.25}, "float64")
    check(u8({200, 100}) + i32({100, -300}), {300, -200}, "int32")
  end)

  it("keeps the array's dtype for Lua integers", function()
    check(u8({1, 2}) + 3, {4, 5}, "uint8")
    check(i32({1, 2}) * 3, {3, 6}, "int32")
    check(f32({1, 2}) + 1, {2, 3}, "float32")
    check(3 - u8({1, 2}), {2, 1}, "uint8")
  end)

  it("lifts integer arrays to float64 for Lua floats", function()
    check(i64({1, 2}) + 2.5, {3.5, 4.5}, "float64")
    check(u8({1, 2}) * 2.0, {2, 4}, "float64")
    check(2.5 - i32({1}), {1.5}, "float64")
    check(f32({1}) + 2.5, {3.5}, "float32")
    check(f32({1}) * 0.1, {(string.unpack("f", string.pack("f", 0.1)))}, "float32")
  end)

  it("rejects Lua integers out of range for uint8 and int32", function()
    assert.matches("add: 300 is out of range for uint8", errmsg(function() return u8({1}) + 300 end), 1, true)
    assert.matches("sub: -1 is out of range for uint8", errmsg(function() return u8({1}) - (-1) end), 1, true)
    assert.matches("mul: 4294967296 is out of range for int32",
      errmsg(function() return i32({1}) * 4294967296 end), 1, true)
    assert.matches("add: 300 is out of range for uint8", errmsg(function() return 300 + u8({1}) end), 1, true)
    check(i64({1}) + 4294967296, {4294967297}, "int64")
    check(u8({1}) + 300.0, {301}, "float64")
  end)

  it("compares exactly with Lua integers out of range", function()
    local x = u8({0, 255})
    check(ml.lt(x, 300), {1, 1}, "uint8")
    check(ml.eq(x, 300), {0, 0}, "uint8")
    check(ml.ne(x, -1), {1, 1}, "uint8")
    check(ml.gt(x, -1), {1, 1}, "uint8")
    check(ml.ge(i32({5}), 2 ^ 40 // 1), {0}, "uint8")
  end)

  it("accepts booleans as 0 and 1", function()
    check(i32({5, 6}) + true, {6, 7}, "int32")
    check(f64({5}) * false, {0}, "float64")
  end)
end)

describe("unary functions", function()
  local xs = {-3.5, -1, -0.25, 0, 0.3, 1, 2.5, 10}
  local pos = {0.001, 0.3, 1, 2.5, 10, 1e5}
  local function map(f, t)
    local r = {}
    for i, v in ipairs(t) do r[i] = f(v) end
    return r
  end

  it("computes float64 results as libm does", function()
    check(f64(pos):sqrt(), map(math.sqrt, pos), "float64", 1e-15)
    check(f64(xs):exp(), map(math.exp, xs), "float64", 4e-16)
    check(f64(pos):log(), map(math.log, pos), "float64", 1e-15)
    check(f64(xs):sin(), map(math.sin, xs), "float64", 1e-15)
    check(f64(xs):cos(), map(math.cos, xs), "float64", 1e-15)
    check(ml.tanh(f64(xs)), map(function(v) return (math.exp(2 * v) - 1) / (math.exp(2 * v) + 1) end, xs),
      "float64", 1e-14)
    check(ml.log1p(f64({1e-20, 1e-10, 1})), {1e-20, 1e-10 - 5e-21, math.log(2)}, "float64", 1e-15)
    check(ml.expm1(f64({1e-20, 1e-10, 1})), {1e-20, 1e-10 + 5e-21, math.exp(1) - 1}, "float64", 1e-15)
  end)

  it("computes float32 results in float32", function()
    local x = f32({0.5, 1, 2})
    for _, name in ipairs({"sqrt", "exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "sigmoid"}) do
      local r = ml[name](x)
      assert.equal("float32", r.dtype)
      check(r, ml[name](f64({0.5, 1, 2})):totable(), nil, 1e-7)
    end
  end)

  it("gives float64 for transcendental functions of integers", function()
    for _, mk in ipairs({u8, i32, i64}) do
      check(ml.sqrt(mk({4, 9})), {2, 3}, "float64")
      check(mk({0, 1}):exp(), {1, math.exp(1)}, "float64", 4e-16)
      check(mk({1}):log(), {0}, "float64")
      check(mk({0}):sigmoid(), {0.5}, "float64")
    end
  end)

  it("handles NaN, infinities and out-of-domain inputs", function()
    check(f64({nan, inf, -inf, 710, -746, 709.7}):exp(),
      {nan, inf, 0, inf, 0, math.exp(709.7)}, "float64", 4e-16)
    check(f64({0, -1, inf}):log(), {-inf, nan, inf}, "float64")
    check(f64({-1, inf}):sqrt(), {nan, inf}, "float64")
    check(f64({nan, inf, -inf}):tanh(), {nan, 1, -1}, "float64")
    check(f64({-1}):log1p(), {-inf}, "float64")
  end)

  it("gives subnormal exp results to within one unit", function()
    local x = f64({-740, -745}):exp():totable()
    assert.is_true(math.abs(x[1] - math.exp(-740)) <= 5e-324)
    assert.is_true(math.abs(x[2] - math.exp(-745)) <= 5e-324)
  end)

  it("computes exp to about 1 ulp over a wide range", function()
    math.randomseed(7)
    local t = {}
    for i = 1, 20000 do t[i] = (math.random() - 0.5) * 1400 end
    local e = f64(t):exp():totable()
    for i = 1, #t do
      local ref = math.exp(t[i])
      assert.is_true(math.abs(e[i] - ref) <= 2.3e-16 * ref, "exp(" .. t[i] .. ")")
    end
  end)

  it("computes sigmoid stably for large magnitudes", function()
    local r = f64({-1000, -40, 0, 40, 1000, nan}):sigmoid()
    check(r, {0, 1 / (1 + math.exp(40)), 0.5, 1 / (1 + math.exp(-40)), 1, nan}, "float64", 1e-15)
    check(f32({-200, 200}):sigmoid(), {0, 1}, "float32")
    local x = {-3, -0.5, 0.5, 3}
    check(ml.sigmoid(f64(x)), {1 / (1 + math.exp(3)), 1 / (1 + math.exp(0.5)),
      1 / (1 + math.exp(-0.5)), 1 / (1 + math.exp(-3))}, "float64", 1e-15)
  end)

  it("floors, ceils and rounds half to even", function()
    local x = f64({-1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.6})
    check(x:floor(), {-2, -1, 0, 1, 2, 2, -3}, "float64")
    check(x:ceil(), {-1, 0, 1, 2, 3, 3, -2}, "float64")
    check(x:round(), {-2, 0, 0, 2, 2, 3, -3}, "float64")
    check(f32({0.5, 1.5, -2.5}):round(), {0, 2, -2}, "float32")
    check(f64({nan, inf}):floor(), {nan, inf}, "float64")
  end)

  it("leaves integers unchanged by floor, ceil and round", function()
    check(i32({-3, 4}):floor(), {-3, 4}, "int32")
    check(i64({-3, 4}):ceil(), {-3, 4}, "int64")
    check(u8({3, 250}):round(), {3, 250}, "uint8")
  end)
end)

describe("predicates", function()
  it("detects NaN and infinities in floats", function()
    local x = f64({nan, inf, -inf, 0, -1.5})
    check(x:isnan(), {1, 0, 0, 0, 0}, "uint8")
    check(x:isinf(), {0, 1, 1, 0, 0}, "uint8")
    check(x:isfinite(), {0, 0, 0, 1, 1}, "uint8")
    check(ml.isnan(f32({nan, 1})), {1, 0}, "uint8")
    check(ml.isinf(f32({-inf, 1e38})), {1, 0}, "uint8")
  end)

  it("finds every integer finite", function()
    for _, mk in ipairs({u8, i32, i64}) do
      check(mk({0, 7}):isnan(), {0, 0}, "uint8")
      check(mk({0, 7}):isinf(), {0, 0}, "uint8")
      check(mk({0, 7}):isfinite(), {1, 1}, "uint8")
    end
  end)

  it("negates logically into uint8", function()
    check(f64({0, -0.0, 0.5, nan, -2}):logical_not(), {1, 1, 0, 0, 0}, "uint8")
    check(ml.logical_not(i32({0, 3, -1})), {1, 0, 0}, "uint8")
    check(ml.logical_not(u8({0, 1, 255})), {1, 0, 0}, "uint8")
  end)
end)

describe("comparisons", function()
  it("compare arrays into uint8", function()
    local x, y = f64({1, 2, 3}), f64({3, 2, 1})
    check(ml.eq(x, y), {0, 1, 0}, "uint8")
    check(ml.ne(x, y), {1, 0, 1}, "uint8")
    check(ml.lt(x, y), {1, 0, 0}, "uint8")
    check(ml.le(x, y), {1, 1, 0}, "uint8")
    check(ml.gt(x, y), {0, 0, 1}, "uint8")
    check(ml.ge(x, y), {0, 1, 1}, "uint8")
    check(x:lt(2), {1, 0, 0}, "uint8")
  end)

  it("put a number on either side", function()
    local x = i32({1, 2, 3})
    check(ml.lt(2, x), {0, 0, 1}, "uint8")
    check(ml.ge(2, x), {1, 1, 0}, "uint8")
    check(ml.gt(x, 2), {0, 0, 1}, "uint8")
    check(ml.le(x, 2.5), {1, 1, 0}, "uint8")
  end)

  it("compare mixed dtypes after promotion", function()
    check(ml.eq(i32({16777217}), f32({16777216})), {0}, "uint8") -- in float64
    check(ml.lt(u8({200}), i32({-1})), {0}, "uint8")
    check(ml.eq(i64({2}), 2.0), {1}, "uint8")
  end)

  it("are false with NaN except ne", function()
    local x, y = f64({nan, nan, 1}), f64({nan, 1, nan})
    check(ml.eq(x, y), {0, 0, 0}, "uint8")
    check(ml.lt(x, y), {0, 0, 0}, "uint8")
    check(ml.ge(x, y), {0, 0, 0}, "uint8")
    check(ml.ne(x, y), {1, 1, 1}, "uint8")
  end)
end)

describe("operators", function()
  it("work array op array, array op number and number op array", function()
    local x = f64({1, 2, 4})
    check(x + 1, {2, 3, 5}, "float64")
    check(1 + x, {2, 3, 5}, "float64")
    check(x - 1, {0, 1, 3}, "float64")
    check(1 - x, {0, -1, -3}, "float64")
    check(x * 2, {2, 4, 8}, "float64")
    check(2 * x, {2, 4, 8}, "float64")
    check(x / 2, {0.5, 1, 2}, "float64")
    check(2 / x, {2, 1, 0.5}, "float64")
    check(x ^ 2, {1, 4, 16}, "float64")
    check(2 ^ x, {2, 4, 16}, "float64")
    check(x % 3, {1, 2, 1}, "float64")
    check(7 % x, {0, 1, 3}, "float64")
    check(x // 3, {0, 0, 1}, "float64")
    check(7 // x, {7, 3, 1}, "float64")
    check(-x, {-1, -2, -4}, "float64")
    check(x + x * x - x / x, {1, 5, 19}, "float64")
  end)

  it("reverse integer operands", function()
    local x = i64({1, 2, 3})
    check(10 - x, {9, 8, 7}, "int64")
    check(7 // x, {7, 3, 2}, "int64")
    check(7 % x, {0, 1, 1}, "int64")
    check(2 ^ x, {2, 4, 8}, "int64")
    check(-x, {-1, -2, -3}, "int64")
  end)

  it("convert tables to arrays", function()
    check(f64({1, 2}) + {10, 20}, {11, 22}, "float64")
    check({10, 20} - i64({1, 2}), {9, 18}, "int64")
    check(ml.mul({1, 2}, {3, 4}), {3, 8}, "int64")
    check(ml.add(2, 3.5), 5.5, "float64", 0, {})
  end)

  it("are also methods", function()
    local x, y = f64({1, 2}), f64({3, 5})
    check(x:add(y), {4, 7}, "float64")
    check(x:sub(y), {-2, -3}, "float64")
    check(x:mul(y), {3, 10}, "float64")
    check(x:div(y), {1 / 3, 0.4}, "float64", 1e-16)
    check(x:pow(y), {1, 32}, "float64")
    check(y:idiv(x), {3, 2}, "float64")
    check(y:mod(x), {0, 1}, "float64")
    check(x:neg(), {-1, -2}, "float64")
  end)

  it("reject other types with a clear error", function()
    assert.matches("array, number or table expected, got string",
      errmsg(function() return f64({1}) + "x" end), 1, true)
    assert.matches("array, number or table expected, got nil", errmsg(ml.exp, nil), 1, true)
    local x = f64({1})
    x:free()
    assert.matches("array was freed", errmsg(function() return x * 2 end), 1, true)
  end)
end)

describe("broadcasting", function()
  it("broadcasts a column against a row", function()
    local col, row = f64({{1}, {2}, {3}}), f64({10, 20, 30, 40})
    check(col + row, {{11, 21, 31, 41}, {12, 22, 32, 42}, {13, 23, 33, 43}}, "float64")
    check(row - col, {{9, 19, 29, 39}, {8, 18, 28, 38}, {7, 17, 27, 37}}, "float64")
    check(ml.lt(col, f64({{2, 2}})), {{1, 1}, {0, 0}, {0, 0}}, "uint8")
  end)

  it("broadcasts over leading and size-1 dimensions", function()
    local x = i32({{{1, 2}}, {{3, 4}}}) -- 2x1x2
    local y = i32({{10, 20}, {30, 40}, {50, 60}}) -- 3x2
    check(x * y, {{{10, 40}, {30, 80}, {50, 120}}, {{30, 80}, {90, 160}, {150, 240}}}, "int32")
    check(ml.ones(2, 1, 1) + ml.ones(1, 1, 3), {{{2, 2, 2}}, {{2, 2, 2}}}, "float64")
  end)

  it("converts and broadcasts in one operation", function()
    check(u8({{1}, {2}}) + f64({0.5, 0.25}), {{1.5, 1.25}, {2.5, 2.25}}, "float64")
    check(ml.maximum(i32({{1}, {5}}), i64({2, 3, 4})), {{2, 3, 4}, {5, 5, 5}}, "int64")
  end)

  it("broadcasts large operands on several threads", function()
    local n, m = 400, 300
    local colt, rowt = {}, {}
    for i = 1, n do colt[i] = {i} end
    for j = 1, m do rowt[j] = j * 1000 end
    local r = (f64(colt) + f64(rowt)):totable()
    assert.same({n, m}, {#r, #r[1]})
    for _, i in ipairs({1, 2, 200, 399, 400}) do
      for _, j in ipairs({1, 150, 300}) do assert.equal(i + j * 1000, r[i][j]) end
    end
    local big = ml.arange(100000) * 2 - ml.arange(100000)
    local t = big:totable()
    assert.equal(100000, #t)
    for _, k in ipairs({1, 2, 32768, 50000, 65537, 100000}) do assert.equal(k - 1, t[k]) end
    local e = ml.linspace(-1, 1, 50001):exp():totable()
    for _, k in ipairs({1, 25001, 50001}) do
      assert.is_true(math.abs(e[k] - math.exp(-1 + (k - 1) / 25000)) <= 1e-15 * e[k])
    end
  end)

  it("reports shapes that do not broadcast", function()
    assert.matches("add: shapes 3x4 and 4x3 do not broadcast",
      errmsg(function() return ml.zeros(3, 4) + ml.zeros(4, 3) end), 1, true)
    assert.matches("lt: shapes 2 and 3 do not broadcast",
      errmsg(ml.lt, ml.zeros(2), ml.zeros(3)), 1, true)
    assert.matches("minimum: shapes 2x3 and 2 do not broadcast",
      errmsg(ml.minimum, ml.zeros(2, 3), ml.zeros(2)), 1, true)
  end)
end)

describe("empty and 0-d arrays", function()
  it("give empty results of the broadcast shape", function()
    check(ml.zeros(0) + ml.zeros(0), {}, "float64", 0, {0})
    check(ml.zeros(0, 3) + ml.ones(3), {}, "float64", 0, {0, 3})
    check(ml.zeros(0, 1) * ml.ones(4), {}, "float64", 0, {0, 4})
    check(ml.zeros(0) + 1, {}, "float64", 0, {0})
    check(ml.exp(ml.zeros(2, 0)), {}, "float64", 0, {2, 0})
    check(ml.lt(ml.zeros(0, {dtype = "int32"}), 1), {}, "uint8", 0, {0})
    check(ml.zeros(0):isnan(), {}, "uint8", 0, {0})
    check(ml.where(ml.zeros(0), 1, 2), {}, "int64", 0, {0})
    check(ml.zeros(0):clamp(0, 1), {}, "float64", 0, {0})
    assert.matches("add: shapes 0 and 2 do not broadcast",
      errmsg(function() return ml.zeros(0) + ml.zeros(2) end), 1, true)
  end)

  it("compute on 0-d arrays", function()
    local a, b = ml.full({}, 2.5), ml.full({}, 4.0)
    check(a * b, 10, "float64", 0, {})
    check(-a, -2.5, "float64", 0, {})
    check(a:exp(), math.exp(2.5), "float64", 4e-16, {})
    check(a + 1, 3.5, "float64", 0, {})
    check(ml.lt(a, b), 1, "uint8", 0, {})
    check(a + f64({1, 2}), {3.5, 4.5}, "float64")
    check(ml.where(ml.full({}, 1, {dtype = "uint8"}), a, b), 2.5, "float64", 0, {})
  end)

  it("do not let 0-d arrays act as weak scalars", function()
    check(i32({1}) + ml.full({}, 2.5, {dtype = "float32"}), {3.5}, "float64")
    check(u8({1}) + ml.full({}, 300, {dtype = "int64"}), {301}, "int64")
  end)
end)

describe("where", function()
  it("selects with a uint8 condition", function()
    local c = u8({1, 0, 1})
    check(ml.where(c, f64({1, 2, 3}), f64({-1, -2, -3})), {1, -2, 3}, "float64")
  end)

  it("treats any nonzero condition as true, NaN included", function()
    check(ml.where(f64({0.5, 0, nan, -0.0}), 1, 2), {1, 2, 1, 2}, "int64")
    check(ml.where(i32({0, -7}), i32({1, 1}), i32({2, 2})), {2, 1}, "int32")
    check(ml.where(ml.gt(f64({1, 5}), 2), f64({10, 20}), 0), {0, 20}, "float64")
  end)

  it("takes numbers as weak scalars", function()
    local c = u8({1, 0})
    check(ml.where(c, f32({1.5, 2.5}), 0), {1.5, 0}, "float32")
    check(ml.where(c, 0.5, f32({1, 2})), {0.5, 2}, "float32")
    check(ml.where(c, u8({7, 8}), 255), {7, 255}, "uint8")
    check(ml.where(c, i32({7, 8}), 2.5), {7, 2.5}, "float64")
    check(ml.where(c, 1, 2), {1, 2}, "int64")
    check(ml.where(c, 1, 2.5), {1, 2.5}, "float64")
    assert.matches("where: 300 is out of range for uint8",
      errmsg(ml.where, c, u8({1, 2}), 300), 1, true)
  end)

  it("promotes a and b", function()
    check(ml.where(u8({1, 0}), i32({1, 2}), f32({0.5, 0.25})), {1, 0.25}, "float64")
    check(ml.where(u8({0, 1}), u8({1, 2}), i64({-1, -2})), {-1, 2}, "int64")
  end)

  it("broadcasts all three operands", function()
    local c = u8({{1}, {0}}) -- 2x1
    local a = f64({1, 2, 3}) -- 3
    local b = f64({{{-1}}, {{-2}}}) -- 2x1x1
    check(ml.where(c, a, b), {{{1, 2, 3}, {-1, -1, -1}}, {{1, 2, 3}, {-2, -2, -2}}}, "float64")
    assert.matches("where: shapes 2x1, 3 and 2x3x4 do not broadcast",
      errmsg(ml.where, u8({{1}, {0}}), ml.zeros(3), ml.zeros(2, 3, 4)), 1, true)
  end)
end)

describe("clamp", function()
  it("clamps to both bounds or to one", function()
    local x = f64({-5, 0.5, 5})
    check(x:clamp(-1, 1), {-1, 0.5, 1}, "float64")
    check(x:clamp(0), {0, 0.5, 5}, "float64")
    check(x:clamp(nil, 1), {-5, 0.5, 1}, "float64")
    check(ml.clamp(x, -1, 1), {-1, 0.5, 1}, "float64")
  end)

  it("keeps NaN and gives hi when lo > hi", function()
    check(f64({nan, 3}):clamp(0, 1), {nan, 1}, "float64")
    check(f64({-3, 0, 3}):clamp(2, 1), {1, 1, 1}, "float64")
  end)

  it("applies the weak-scalar rule, saturating integer bounds", function()
    check(u8({0, 100, 255}):clamp(-1, 300), {0, 100, 255}, "uint8")
    check(u8({0, 100, 255}):clamp(10, 200), {10, 100, 200}, "uint8")
    check(i32({-5, 5}):clamp(-2.5, 2.5), {-2.5, 2.5}, "float64")
    check(i32({-5, 5}):clamp(0, 2.5), {0, 2.5}, "float64")
    check(i64({-5, 5}):clamp(nil, 3), {-5, 3}, "int64")
    check(f32({0.05, 2}):clamp(0.1, 1), {(string.unpack("f", string.pack("f", 0.1))), 1}, "float32")
  end)

  it("takes arrays as bounds", function()
    local x = f64({-5, 0.5, 5})
    check(x:clamp(f64({0, 1, 2}), f64({1, 2, 3})), {0, 1, 3}, "float64")
    check(x:clamp(f64({{-10}, {0}}), 1), {{-5, 0.5, 1}, {0, 0.5, 1}}, "float64")
    check(x:clamp(nil, {0, 0, 0}), {-5, 0, 0}, "float64")
  end)

  it("needs a bound", function()
    assert.matches("clamp: needs a lower or an upper bound", errmsg(function() return f64({1}):clamp() end), 1, true)
  end)
end)
