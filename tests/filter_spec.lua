-- ml.convolve, ml.correlate and ml.window_sum against SciPy: the
-- fixtures of tests/fixtures/filter/make.py (scipy.signal's convolve,
-- correlate, convolve2d and correlate2d with every size and boundary, odd
-- and even masks, masks larger than the input; window sums as
-- scipy.ndimage's correlate1d with ones), on the default device, in
-- float64 and float32; then views, empty inputs, dtypes and errors.
local ml = require "moonlab"
require "moonlab.test"

local DEV = ml.device()
local FLOATS = {"float64", "float32"}
local MODES = {"reflect", "constant", "nearest", "mirror", "wrap"}
local SIZES = {"full", "same", "valid"}
local BOUNDARIES = {"fill", "symm", "wrap"}
local FILL, CVAL = 0.5, 0.5

local F = require "tests.helpers.filter_fixtures"
local load, inputs, results, tol = F.load, F.inputs, F.results, F.tol

local function valid_ok(x, w)
  local ge, le = true, true
  for d = 1, x:dim() do
    ge = ge and x:size(d) >= w:size(d)
    le = le and x:size(d) <= w:size(d)
  end
  return ge or le
end

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local function signal_group(group)
  local xs, ws = inputs(group, "x"), inputs(group, "w")
  for _, dt in ipairs(FLOATS) do
    local next_result, done = results(group)
    for _, x in ipairs(xs) do
      for _, w in ipairs(ws) do
        local scale = x:abs():max() * w:abs():sum() + FILL * w:abs():sum()
        local xd, wd = x:astype(dt), w:astype(dt)
        for _, fn in ipairs({"convolve", "correlate"}) do
          for _, size in ipairs(SIZES) do
            if size ~= "valid" or valid_ok(x, w) then
              for _, boundary in ipairs(BOUNDARIES) do
                local y = ml[fn](xd, wd, {mode = size, boundary = boundary, fillvalue = FILL})
                local what = ("%s %s %s %s %s %s"):format(fn, dt, table.concat(x.shape, "x"),
                                                       table.concat(w.shape, "x"), size, boundary)
                assert.equal(dt, y.dtype, what)
                local ok, err = pcall(assert.allclose, y, next_result(y.shape),
                                      tol(dt, w:numel(), scale))
                if not ok then error(what .. ": " .. tostring(err)) end
              end
            end
          end
        end
      end
    end
    assert.is_true(done(), group .. ": results left over")
  end
end

describe("filter: signal", function()
  it("convolve and correlate of 1-D arrays: every size and boundary", function()
    signal_group("sig1")
  end)

  it("convolve2d and correlate2d: every size and boundary", function()
    signal_group("sig2")
  end)

  it("the dtype is the operands' promotion; integers compute in float64", function()
    local x32 = ml.array({1, 2, 3}, {dtype = "float32"})
    assert.equal("float32", ml.convolve(x32, x32).dtype)
    assert.equal("float64", ml.convolve(x32, {1, 2}).dtype)
    local xi = ml.array({1, 2, 3})
    local y = ml.convolve(xi, {1, -1})
    assert.equal("int64", y.dtype)
    assert.same({1, 1, 1, -3}, y:totable())
    assert.same({-1, -1}, ml.correlate(xi, {1, -1}, {mode = "valid"}):totable())
  end)

  it("views: transposed and stepped inputs as their contiguous copies", function()
    local x, w = inputs("sig2", "x")[2], inputs("sig2", "w")[3]
    local t = x:t():clone():t()
    assert.is_false(t:is_contiguous())
    for _, size in ipairs(SIZES) do
      assert.same(ml.correlate(x, w, {mode = size}), ml.correlate(t, w, {mode = size}))
      assert.same(ml.convolve(x, w:t():clone():t(), {mode = size, boundary = "symm"}),
                  ml.convolve(x, w, {mode = size, boundary = "symm"}))
    end
    local v = inputs("sig1", "x")[3]
    local big = ml.zeros(2 * v:size(1), {device = DEV})
    big[{{1, -1, 2}}] = v
    local s = big[{{1, -1, 2}}]
    assert.same(ml.convolve(v, {1, 2, 3}, {mode = "same"}),
                ml.convolve(s, {1, 2, 3}, {mode = "same"}))
  end)

  it("errors: ranks, empty operands, valid shapes, options, devices", function()
    local x = ml.ones(3, 4)
    assert.equal("convolve: expects two 1-D or two 2-D arrays, got shapes 3x4 and 3",
                 errmsg(ml.convolve, x, {1, 2, 3}))
    assert.equal("correlate: expects two 1-D or two 2-D arrays, got shapes 2x2x2 and 2x2x2",
                 errmsg(ml.correlate, ml.ones(2, 2, 2), ml.ones(2, 2, 2)))
    assert.equal("convolve: an operand is empty (shapes 0 and 2)",
                 errmsg(ml.convolve, ml.zeros(0), {1, 2}))
    assert.equal("correlate: in \"valid\" mode one operand must be at least as large as "
                 .. "the other in every dimension (shapes 3x4 and 4x3)",
                 errmsg(ml.correlate, x, ml.ones(4, 3), {mode = "valid"}))
    assert.equal("convolve: unknown mode 'middle' (full, same or valid)",
                 errmsg(ml.convolve, x, x, {mode = "middle"}))
    assert.equal("correlate: unknown boundary 'zero' (fill, symm or wrap)",
                 errmsg(ml.correlate, x, x, {boundary = "zero"}))
    assert.matches("unknown option 'fill'", errmsg(ml.convolve, x, x, {fill = 1}))
    assert.matches("must be a number", errmsg(ml.convolve, x, x, {fillvalue = "1"}))
    if ml.cuda.available() then
      assert.matches("convolve: .*cpu.*cuda:0", errmsg(ml.convolve, ml.ones(3, {device = "cpu"}),
                                                        ml.ones(2):cuda()))
    end
  end)
end)

describe("filter: window_sum", function()
  it("moving sums along every axis in every mode (SciPy's sums of ones)", function()
    local xs = inputs("wsum", "x")
    for _, dt in ipairs(FLOATS) do
      local next_result, done = results("wsum")
      for _, x in ipairs(xs) do
        local xd = x:astype(dt)
        for _, r in ipairs({0, 1, 2, 7}) do
          for axis = 1, x:dim() do
            for _, mode in ipairs(MODES) do
              local y = ml.window_sum(xd, r, {axis = axis, mode = mode, cval = CVAL})
              assert.equal(dt, y.dtype)
              local scale = (x:abs():max() + CVAL) * (2 * r + 1)
              assert.allclose(y, next_result(y.shape), tol(dt, 2 * r + 1, scale))
            end
          end
        end
      end
      assert.is_true(done(), "wsum: results left over")
    end
  end)

  it("defaults to constant zeros past the edges along the last axis", function()
    local x = ml.array({{1, 2, 3, 4}, {10, 20, 30, 40}})
    local y = ml.window_sum(x, 1)
    assert.equal("float64", y.dtype)
    assert.same({{3, 6, 9, 7}, {30, 60, 90, 70}}, y:totable())
    assert.same({{11, 22, 33, 44}, {11, 22, 33, 44}}, ml.window_sum(x, 1, {axis = 1}):totable())
    assert.same({{11, 22, 33, 44}, {11, 22, 33, 44}}, ml.window_sum(x, 5, {axis = -2}):totable())
  end)

  it("long lines and windows wider than the line, on views", function()
    ml.seed(7)
    local x = ml.randn(3, 50001, {device = DEV})
    local y = ml.window_sum(x:t(), 300, {axis = 1, mode = "wrap"})
    local c = ml.window_sum(x:t():contiguous(), 300, {axis = 1, mode = "wrap"})
    assert.same(c, y)
    local full = x:sum(2)
    local wide = ml.window_sum(x, 60000, {mode = "wrap"})
    -- 120001 samples of a periodic line of 50001: twice the line and 20000 more
    local lhs = wide[{{}, 1}]
    local rhs = full:reshape(3) * 2 + ml.window_sum(x, 9999, {mode = "wrap"})[{{}, 1}]
    assert.allclose(lhs, rhs, {rtol = 1e-9, atol = 1e-9})
  end)

  it("empty inputs, integers and errors", function()
    assert.same({0, 3}, ml.window_sum(ml.zeros(0, 3), 2).shape)
    assert.same({3, 0}, ml.window_sum(ml.zeros(3, 0), 2, {axis = 1}).shape)
    assert.equal("float64", ml.window_sum(ml.array({1, 2}, {dtype = "int32"}), 1).dtype)
    assert.equal("window_sum: radius must be 0 or more, not -1",
                 errmsg(ml.window_sum, ml.ones(3), -1))
    assert.equal("window_sum: unknown mode 'symm' (reflect, constant, nearest, mirror or wrap)",
                 errmsg(ml.window_sum, ml.ones(3), 1, {mode = "symm"}))
    assert.matches("window_sum: dimension", errmsg(ml.window_sum, ml.ones(3), 1, {axis = 2}))
    assert.matches("unknown option 'radius'", errmsg(ml.window_sum, ml.ones(3), 1, {radius = 2}))
  end)
end)
