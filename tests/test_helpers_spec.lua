-- The busted helpers of moonlab.test: assert.array_equal and
-- assert.allclose with numpy.testing's rules and messages, assert.same on
-- arrays, each positive and negated, and assert.array_near.
local ml = require "moonlab"
local mt = require "moonlab.test"

local nan, inf = 0 / 0, math.huge

-- The message of the assertion failure fn raises, without the position.
local function failure(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected the assertion to fail")
  return (tostring(err):gsub("^[^\n]-:%d+: ", ""))
end

-- The first n lines of a message.
local function head(msg, n)
  local lines = {}
  for line in (msg .. "\n"):gmatch("(.-)\n") do
    if #lines == n then break end
    lines[#lines + 1] = line
  end
  return table.concat(lines, "\n")
end

describe("assert.array_equal", function()
  it("passes for the same shape, dtype and values, NaN equal to NaN", function()
    assert.array_equal(ml.array{{1, 2}, {3, 4}}, ml.array{{1, 2}, {3, 4}})
    assert.array_equal(ml.array{1.5, nan, -inf}, ml.array{1.5, nan, -inf})
    assert.array_equal(ml.zeros(2, 0), ml.zeros(2, 0))
    for _, t in ipairs{"float32", "float64", "int32", "int64", "uint8"} do
      local x = ml.arange(12, {dtype = t}):reshape(3, 4)
      assert.array_equal(x:t(), x:t():contiguous())
    end
  end)

  it("compares with a nested table or a number by shape and values", function()
    assert.array_equal(ml.array({{1, 2}, {3, 4}}, {dtype = "float32"}), {{1, 2}, {3, 4}})
    assert.array_equal(ml.full({2, 3}, 7, {dtype = "int32"}), 7)
    assert.array_equal(ml.full({2, 3}, 7), ml.full({}, 7))
  end)

  it("compares int64 values exactly", function()
    local big = ml.array({2 ^ 53 | 1}, {dtype = "int64"})
    assert.array_equal(big, ml.array({9007199254740993}, {dtype = "int64"}))
    local msg = failure(assert.array_equal, big, ml.array({9007199254740992}, {dtype = "int64"}))
    assert.matches("First mismatch at index {1}: 9007199254740993 (actual), 9007199254740992 (desired)",
      msg, 1, true)
  end)

  it("fails naming the first mismatch, both values and the count", function()
    local a = ml.arange(24):reshape(2, 3, 4)
    local b = a:clone()
    b[{2, 1, 3}] = 100
    b[{2, 3, 1}] = 40
    b[{2, 3, 4}] = 30
    local msg = failure(assert.array_equal, a, b)
    assert.equal(table.concat({
      "Arrays are not equal",
      "Mismatched elements: 3 / 24 (12.5%)",
      "First mismatch at index {2, 1, 3}: 14 (actual), 100 (desired)",
      "Max absolute difference among violations: 86",
      "Max relative difference among violations: 0.86",
      "Actual:"}, "\n"), head(msg, 6))
    assert.matches("Desired:\n.*%[int64 2x3x4 ", msg)
  end)

  it("prints float32 values as float32", function()
    local msg = failure(assert.array_equal, ml.array({0.1, 0.7}, {dtype = "float32"}),
      ml.array({0.1, 0.3}, {dtype = "float32"}))
    assert.matches("First mismatch at index {2}: 0.7 (actual), 0.3 (desired)", msg, 1, true)
  end)

  it("fails on a dtype or a shape mismatch", function()
    assert.equal("Arrays are not equal\n(dtypes float32, float64 mismatch)",
      head(failure(assert.array_equal, ml.ones(3, {dtype = "float32"}), ml.ones(3)), 2))
    assert.equal("Arrays are not equal\n(shapes 2x3, 3x2 mismatch)",
      head(failure(assert.array_equal, ml.zeros(2, 3), ml.zeros(3, 2)), 2))
    assert.equal("Arrays are not equal\n(shapes 2x3, 3 mismatch)",
      head(failure(assert.array_equal, ml.zeros(2, 3), {0, 0, 0}), 2))
  end)

  it("prints both sides as arrays, a nested table too", function()
    local msg = failure(assert.array_equal, ml.array({1, 2, 3}, {dtype = "int32"}), {1, 2, 4})
    assert.matches("\nActual:\n 1  2  3\n[int32 3 ", msg, 1, true)
    assert.matches("\nDesired:\n 1  2  4\n[int64 3 ", msg, 1, true)
  end)

  it("negated, passes for different arrays and fails for equal ones", function()
    assert.is_not.array_equal(ml.array{1, 2}, ml.array{1, 3})
    assert.is_not.array_equal(ml.array{1, 2}, ml.array{1, 2, 3})
    assert.is_not.array_equal(ml.array{nan}, ml.array{1})
    assert.equal("Expected arrays to differ, but they are equal",
      head(failure(assert.is_not.array_equal, ml.array{1, 2}, ml.array{1, 2}), 1))
  end)

  it("rejects what is not an array, a table or a number", function()
    assert.equal("array_equal: desired must be an array, a table or a number, got string",
      failure(assert.array_equal, ml.ones(2), "1 1"))
  end)
end)

describe("assert.allclose", function()
  it("uses |actual - desired| <= atol + rtol * |desired|", function()
    assert.allclose(ml.array{2.5}, {2}, {rtol = 0.25})
    assert.is_not.allclose(ml.array{2.5000001}, {2}, {rtol = 0.25})
    assert.allclose(ml.array{0.5, -0.5}, {0, 0}, {atol = 0.5})
    assert.is_not.allclose(ml.array{0.5001}, {0}, {atol = 0.5})
    assert.allclose(ml.array{2.75}, {2}, {rtol = 0.25, atol = 0.25})
    -- the tolerance scales with desired, not with actual
    assert.allclose(ml.array{1}, {2}, {rtol = 0.5})
    assert.is_not.allclose(ml.array{2}, {1}, {rtol = 0.5})
  end)

  it("defaults to rtol = 1e-7 and atol = 0", function()
    assert.allclose(ml.array{1 + 1e-8, 1e6 + 0.05}, {1, 1e6})
    assert.is_not.allclose(ml.array{1 + 1e-6}, {1})
    assert.is_not.allclose(ml.array{1e-300}, {0})
  end)

  it("treats NaN as equal to NaN unless equal_nan = false; infinities must be equal", function()
    assert.allclose(ml.array{1, nan, inf, -inf}, {1, nan, inf, -inf})
    assert.is_not.allclose(ml.array{1, nan}, {1, nan}, {equal_nan = false})
    assert.is_not.allclose(ml.array{inf}, {-inf}, {rtol = 1})
    assert.is_not.allclose(ml.array{inf}, {1e308}, {rtol = 1})
    assert.is_not.allclose(ml.array{nan}, {1}, {atol = 1})
    assert.equal("First mismatch at index {2}: nan (actual), nan (desired)",
      head(failure(assert.allclose, ml.array{1, nan}, {1, nan}, {equal_nan = false}), 3):match("[^\n]*$"))
  end)

  it("broadcasts a number or a 0-d desired, as NumPy, and no other shape", function()
    assert.allclose(ml.ones(2, 3), 1)
    assert.allclose(ml.ones(2, 3, {dtype = "float32"}), ml.full({}, 1 + 1e-9))
    assert.equal("Not equal to tolerance rtol=1e-07, atol=0\n(shapes 2x3, 3 mismatch)",
      head(failure(assert.allclose, ml.ones(2, 3), ml.ones(3)), 2))
    assert.is_not.allclose(ml.ones(2, 3), ml.ones(3))
  end)

  it("fails with numpy.testing's report, the index 1-based", function()
    local a = ml.arange(12):reshape(3, 4):astype("float64")
    local b = a + ml.array{0, 0, 1e-3, 0}
    local msg = failure(assert.allclose, a, b)
    assert.equal(table.concat({
      "Not equal to tolerance rtol=1e-07, atol=0",
      "Mismatched elements: 3 / 12 (25%)",
      "First mismatch at index {1, 3}: 2 (actual), 2.001 (desired)",
      "Max absolute difference among violations: 0.001",
      "Max relative difference among violations: 0.00049975",
      "Actual:"}, "\n"), head(msg, 6))
    assert.matches("Actual:\n.*%[float64 3x4 .*\nDesired:\n.*2%.0010.*%[float64 3x4 ", msg)
    msg = failure(assert.allclose, a, b, {rtol = 1e-4, atol = 1e-9})
    assert.equal("Not equal to tolerance rtol=0.0001, atol=1e-09\nMismatched elements: 2 / 12 (16.7%)",
      head(msg, 2))
  end)

  it("compares views, integer arrays and tables", function()
    local x = ml.arange(6):reshape(2, 3)
    assert.allclose(x:t(), {{0, 3}, {1, 4}, {2, 5}})
    assert.allclose(x:astype("uint8"), x:astype("float32"))
    assert.allclose({1, 2}, ml.array{1, 2})
  end)

  it("negated, passes for arrays that differ and fails for close ones", function()
    assert.is_not.allclose(ml.array{1, 2, 3}, {1, 2, 3.1})
    assert.equal("Expected arrays to differ, but they are equal to tolerance rtol=0.1, atol=0",
      head(failure(assert.is_not.allclose, ml.array{1, 2, 3}, {1, 2, 3.1}, {rtol = 0.1}), 1))
  end)

  it("checks its options", function()
    local function says(text, ...)
      local msg = failure(assert.allclose, ...)
      assert.truthy(msg:find(text, 1, true), msg)
    end
    says("allclose: unknown option 'rtl' (did you mean 'rtol'?)", ml.ones(2), 1, {rtl = 1e-3})
    says("allclose: option 'atol' must be a number, not string", ml.ones(2), 1, {atol = "1e-3"})
    says("allclose: option 'equal_nan' must be a boolean, not number", ml.ones(2), 1,
         {equal_nan = 0})
    says("allclose: options must be a table, not number", ml.ones(2), 1, 1e-3)
  end)

  it("returns its verdict from moonlab.test too", function()
    assert.is_nil(mt.allclose(ml.ones(2), {1, 1}))
    assert.equal("Not equal to tolerance rtol=1e-07, atol=0\n(shapes 2, 3 mismatch)",
      mt.allclose(ml.ones(2), {1, 1, 1}))
  end)
end)

describe("assert.same on arrays", function()
  it("passes for distinct arrays of the same shape, dtype and values", function()
    assert.same(ml.array{{1, 2}, {3, 4}}, ml.array{{1, 2}, {3, 4}})
    assert.are.same(ml.array{1, nan}, ml.array{1, nan})
    assert.same({w = ml.ones(2), b = {ml.zeros(3), 1}}, {w = ml.ones(2), b = {ml.zeros(3), 1}})
  end)

  it("fails with the first differing element and both arrays", function()
    local msg = failure(assert.same, ml.array{1, 2, 3}, ml.array{1, 2, 4})
    assert.equal(table.concat({
      "Arrays are not equal",
      "Mismatched elements: 1 / 3 (33.3%)",
      "First mismatch at index {3}: 4 (actual), 3 (desired)"}, "\n"), head(msg, 3))
    assert.matches("Expected objects to be the same.\nPassed in:\n 1  2  4\n[int64 3 ", msg, 1, true)
    assert.equal("Arrays are not equal\n(dtypes float32, float64 mismatch)",
      head(failure(assert.same, ml.ones(2), ml.ones(2, {dtype = "float32"})), 2))
  end)

  it("names the path of a differing array inside tables", function()
    assert.equal("at .layers[2].w: Arrays are not equal",
      head(failure(assert.same, {layers = {{w = ml.ones(2)}, {w = ml.ones(2)}}},
        {layers = {{w = ml.ones(2)}, {w = ml.zeros(2)}}}), 1))
    assert.equal("value: expected table, got array",
      head(failure(assert.same, {1, 2}, ml.array{1, 2}), 1))
    assert.equal(".b: expected 1, got 2",
      head(failure(assert.same, {a = ml.ones(1), b = 1}, {a = ml.ones(1), b = 2}), 1))
    assert.equal(".c: unexpected key",
      head(failure(assert.same, {a = ml.ones(1)}, {a = ml.ones(1), c = 3}), 1))
  end)

  it("negated, passes for different arrays and fails for equal ones", function()
    assert.is_not.same(ml.array{1, 2}, ml.array{1, 3})
    assert.are_not.same({ml.ones(2)}, {ml.zeros(2)})
    assert.equal("Expected objects to differ, but they are the same",
      head(failure(assert.is_not.same, ml.array{1, 2}, ml.array{1, 2}), 1))
  end)

  it("leaves luassert's same as it was for everything else", function()
    assert.same({1, {2, "x"}}, {1, {2, "x"}})
    assert.is_not.same({1}, {2})
    assert.matches("^Expected objects to be the same", failure(assert.same, {1}, {2}))
  end)
end)

describe("assert.array_near", function()
  it("still compares within tol * (1 + |expected|)", function()
    assert.array_near(ml.array{1, 2}, {1, 2 + 1e-13})
    assert.array_near(ml.array{1, 2}, {1.05, 2}, 0.1)
    assert.equal("arrays differ: element 2: 2 differs from expected 2.5 (tol 0.1)",
      failure(assert.array_near, ml.array{1, 2}, {1, 2.5}, 0.1))
  end)
end)
