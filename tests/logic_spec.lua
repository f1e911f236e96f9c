-- NumPy's logic functions, isclose, allclose, array_equal, clip, relu,
-- sign and erf against NumPy 1.24 and SciPy 1.10 (the fixtures of
-- tests/fixtures/logic/make.py: operands with zeros, NaN and infinities,
-- broadcast rows, integer dtypes), on the default device; transposed
-- views of the operands give the transposed results, and empty arrays
-- pass through.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/logic/"
local DEV = ml.device()

local function load(name)
  return ml.load_npy(DIR .. name .. ".npy"):to(DEV)
end

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local PAIRS = {ab = {"a", "b"}, arow = {"a", "row"}, int = {"ai", "bi"},
               ua = {"u", "a"}}

describe("logic", function()
  it("logical_and, logical_or and logical_xor match NumPy, views too", function()
    for _, op in ipairs({"and", "or", "xor"}) do
      local fn = ml["logical_" .. op]
      for case, names in pairs(PAIRS) do
        local x, y = load(names[1]), load(names[2])
        local want = load(op .. "_" .. case)
        local got = fn(x, y)
        assert.equal("uint8", got.dtype)
        assert.array_equal(got, want)
        if y.ndim == 2 then
          assert.array_equal(fn(x:t(), y:t()), want:t())
        end
      end
    end
  end)

  it("logical operations take numbers and tables, NaN being true", function()
    local x = ml.array({0, 0 / 0, 2}):to(DEV)
    assert.array_equal(ml.logical_and(x, 1), ml.array({0, 1, 1}, {dtype = "uint8"}))
    assert.array_equal(ml.logical_or(0, x), ml.array({0, 1, 1}, {dtype = "uint8"}))
    assert.array_equal(x:logical_xor({1, 1, 0}), ml.array({1, 0, 1}, {dtype = "uint8"}))
  end)

  it("isclose matches NumPy, infinities, NaN, integers and float32", function()
    local a, b = load("a"), load("b")
    assert.array_equal(ml.isclose(a, b), load("isclose_ab"))
    assert.array_equal(a:t():isclose(b:t()), load("isclose_ab"):t())
    assert.array_equal(ml.isclose(a, load("row")), load("isclose_arow"))
    assert.array_equal(ml.isclose(load("ai"), load("bi"), {atol = 1}), load("isclose_int"))
    assert.array_equal(ml.isclose(a, b, {equal_nan = true}), load("isclose_nan"))
    assert.array_equal(ml.isclose(a:astype("float32"), b:astype("float32")),
                       load("isclose_f32"))
  end)

  it("allclose is whether isclose holds everywhere", function()
    local a, b = load("a"), load("b")
    assert.equal(load("isclose_ab"):all(), ml.allclose(a, b))
    assert.is_false(ml.allclose(a, a))
    assert.is_true(ml.allclose(a, a, {equal_nan = true}))
    assert.is_true(ml.allclose(a, a + 1e-9, {equal_nan = true}))
    assert.is_false(ml.allclose(a, a + 1e-9, {rtol = 0, atol = 0, equal_nan = true}))
    assert.is_true(ml.allclose(ml.zeros(0):to(DEV), ml.ones(3, 0):to(DEV)))
  end)

  it("array_equal matches NumPy", function()
    local a, ai = load("a"), load("ai")
    local got = {ml.array_equal(a, a), ml.array_equal(a, a, {equal_nan = true}),
                 ml.array_equal(ai, ai:astype("float64")), a:array_equal(a[{{1, 2}}])}
    local want = load("array_equal"):totable()
    for i = 1, 4 do assert.equal(want[i] == 1, got[i], "case " .. i) end
    assert.is_true(ml.array_equal(ml.zeros(0):to(DEV), ml.zeros(0):to(DEV)))
    assert.is_false(ml.array_equal(ml.zeros(0):to(DEV), ml.zeros(1, 0):to(DEV)))
  end)

  it("erf matches scipy.special.erf in float64 and float32", function()
    local x = load("x")
    assert.allclose(ml.erf(x), load("erf"), {rtol = 1e-15, atol = 0})
    local e32 = x:astype("float32"):erf()
    assert.equal("float32", e32.dtype)
    assert.allclose(e32, load("erf32"), {rtol = 3e-7, atol = 1e-38})
    local ei = ml.erf(load("ai"))
    assert.equal("float64", ei.dtype)
    assert.allclose(ei, ml.erf(load("ai"):astype("float64")), {rtol = 0})
  end)

  it("sign and relu match NumPy, integers staying integers", function()
    local x = load("x")
    assert.array_equal(ml.sign(x), load("sign"))
    assert.array_equal(x:astype("float32"):sign(), load("sign32"))
    assert.array_equal(x:relu(), load("relu"))
    local ai, u = load("ai"), load("u")
    assert.array_equal(ai:sign(), load("sign_i"))
    assert.array_equal(ai:t():sign(), load("sign_i"):t())
    assert.array_equal(u:sign(), load("sign_u"))
    assert.array_equal(ml.relu(ai), ml.maximum(ai, 0))
  end)

  it("clip matches NumPy with a row of bounds and is clamp by another name", function()
    local a, row = load("a"), load("row")
    assert.array_equal(ml.clip(a, row - 1, 1), load("clip"))
    assert.array_equal(a:t():clip(nil, 0.5), a:t():clamp(nil, 0.5))
  end)

  it("passes empty arrays through", function()
    local e = ml.zeros(3, 0):to(DEV)
    for _, name in ipairs({"logical_and", "logical_or", "logical_xor", "isclose"}) do
      assert.same({3, 0}, ml[name](e, e).shape, name)
    end
    for _, name in ipairs({"erf", "sign", "relu"}) do
      assert.same({3, 0}, ml[name](e).shape, name)
    end
  end)

  it("errors name the function", function()
    local x, y = ml.zeros(3):to(DEV), ml.zeros(4):to(DEV)
    for _, name in ipairs({"logical_and", "logical_or", "logical_xor", "isclose", "allclose"}) do
      assert.equal(name .. ": shapes 3 and 4 do not broadcast", errmsg(ml[name], x, y))
    end
    assert.equal("clip: needs a lower or an upper bound", errmsg(ml.clip, x))
    assert.matches("^isclose: unknown option 'tol'", errmsg(ml.isclose, x, x, {tol = 1}))
    assert.matches("^array_equal: option 'equal_nan' must be a boolean",
                   errmsg(ml.array_equal, x, x, {equal_nan = 1}))
    assert.matches("^sign: ", errmsg(ml.sign, "x"))
  end)
end)
