-- ml.ndimage against scipy.ndimage: the fixtures of
-- tests/fixtures/filter/make.py (correlate and convolve of 1-D, 2-D and
-- 3-D arrays with odd, even and long masks, every mode and origin;
-- correlate1d, convolve1d and uniform_filter1d along every axis;
-- uniform_filter, gaussian_filter, gaussian_filter1d and sobel; integer
-- inputs), on the default device, in float64 and float32; then views,
-- empty inputs and errors.
local ml = require "moonlab"
require "moonlab.test"

local DEV = ml.device()
local FLOATS = {"float64", "float32"}
local MODES = {"reflect", "constant", "nearest", "mirror", "wrap"}
local CVAL = 0.5
local nd = ml.ndimage

local F = require "tests.helpers.filter_fixtures"
local load, inputs, results, tol = F.load, F.inputs, F.results, F.tol

-- x compared with the next result, the case named in a failure.
local function check(next_result, y, dt, k, scale, what)
  assert.equal(dt, y.dtype, what)
  local ok, err = pcall(assert.allclose, y, next_result(y.shape), tol(dt, k, scale))
  if not ok then error(what .. ": " .. tostring(err), 2) end
end

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local function shape(x) return table.concat(x.shape, "x") end

-- origins(w): 0, the smallest and the largest along every axis.
local function origins(w)
  local o = {{}, {}, {}}
  for d = 1, w:dim() do
    local k = w:size(d)
    o[1][d], o[2][d], o[3][d] = 0, -(k // 2), (k - 1) // 2
  end
  return o
end

local function nd_group(group)
  local xs, ws = inputs(group, "x"), inputs(group, "w")
  for _, dt in ipairs(FLOATS) do
    local next_result, done = results(group)
    for _, x in ipairs(xs) do
      for _, w in ipairs(ws) do
        local xd, scale = x:astype(dt), (x:abs():max() + CVAL) * w:abs():sum()
        for _, fn in ipairs({"correlate", "convolve"}) do
          for _, mode in ipairs(MODES) do
            for _, o in ipairs(origins(w)) do
              local y = nd[fn](xd, w, {mode = mode, cval = CVAL, origin = o})
              check(next_result, y, dt, w:numel(), scale, ("%s %s %s %s %s origin %s"):format(
                fn, dt, shape(x), shape(w), mode, table.concat(o, ",")))
            end
          end
        end
      end
    end
    assert.is_true(done(), group .. ": results left over")
  end
end

describe("ndimage: correlate and convolve", function()
  it("1-D, every mode and origin, masks longer than the input", function() nd_group("nd1") end)
  it("2-D, every mode and origin, masks larger than the input", function() nd_group("nd2") end)
  it("3-D, every mode and origin", function() nd_group("nd3") end)

  it("integer inputs compute in float64 and convert back toward zero", function()
    local xi, xu, wi = load("int_xi"), load("int_xu"), load("int_wi")
    local next_result, done = results("int")
    local cases = {
      nd.uniform_filter(xu, 2), nd.uniform_filter(xu, 4, {mode = "constant"}),
      nd.correlate(xi, wi, {mode = "nearest"}), nd.sobel(xi, {axis = 1}),
      nd.correlate1d(xi, {0.5, -1.5, 2}, {axis = 2, mode = "wrap"}),
    }
    assert.equal("uint8", cases[1].dtype)
    assert.equal("int32", cases[3].dtype)
    for i, y in ipairs(cases) do
      assert.same(next_result(y.shape), y:astype("int64"), "integer case " .. i)
    end
    assert.is_true(done())
  end)
end)

describe("ndimage: one-dimensional filters", function()
  it("correlate1d and convolve1d along every axis, every mode and origin", function()
    local xs, ws = inputs("c1", "x"), inputs("c1", "w")
    for _, dt in ipairs(FLOATS) do
      local next_result, done = results("c1")
      for _, x in ipairs(xs) do
        for _, w in ipairs(ws) do
          local xd, k = x:astype(dt), w:size(1)
          local scale = (x:abs():max() + CVAL) * w:abs():sum()
          for _, fn in ipairs({"correlate1d", "convolve1d"}) do
            for axis = 1, x:dim() do
              for _, mode in ipairs(MODES) do
                for _, o in ipairs({0, -(k // 2), (k - 1) // 2}) do
                  local y = nd[fn](xd, w, {axis = axis, mode = mode, cval = CVAL, origin = o})
                  check(next_result, y, dt, k, scale, ("%s %s %s k=%d axis %d %s origin %d"):format(
                    fn, dt, shape(x), k, axis, mode, o))
                end
              end
            end
          end
        end
      end
      assert.is_true(done(), "c1: results left over")
    end
  end)

  it("uniform_filter1d along every axis, every mode and origin", function()
    local xs = inputs("u1", "x")
    for _, dt in ipairs(FLOATS) do
      local next_result, done = results("u1")
      for _, x in ipairs(xs) do
        local xd, scale = x:astype(dt), x:abs():max() + CVAL
        for _, size in ipairs({1, 2, 3, 9}) do
          for axis = 1, x:dim() do
            for _, mode in ipairs(MODES) do
              for _, o in ipairs({0, -(size // 2), (size - 1) // 2}) do
                local y = nd.uniform_filter1d(xd, size, {axis = axis, mode = mode,
                                                         cval = CVAL, origin = o})
                check(next_result, y, dt, size, scale, ("uniform_filter1d %s %s size %d axis %d %s origin %d"):format(
                  dt, shape(x), size, axis, mode, o))
              end
            end
          end
        end
      end
      assert.is_true(done(), "u1: results left over")
    end
  end)
end)

describe("ndimage: filters of several passes", function()
  it("uniform_filter: sizes, modes and origins per axis", function()
    local xs = inputs("un", "x")
    for _, dt in ipairs(FLOATS) do
      local next_result, done = results("un")
      for _, x in ipairs(xs) do
        local n, xd, scale = x:dim(), x:astype(dt), x:abs():max() + CVAL
        local function first(t) return {table.unpack(t, 1, n)} end
        local sets = {
          {3, {}}, {4, {mode = "constant", cval = CVAL}},
          {first({2, 5, 3}), {mode = first({"wrap", "nearest", "mirror"})}},
          {first({3, 4, 1}), {origin = first({-1, 1, 0})}},
        }
        for i, s in ipairs(sets) do
          local y = nd.uniform_filter(xd, s[1], s[2])
          check(next_result, y, dt, 60, scale, ("uniform_filter %s %s set %d"):format(dt, shape(x), i))
        end
      end
      assert.is_true(done(), "un: results left over")
    end
  end)

  it("gaussian_filter, gaussian_filter1d and sobel", function()
    local xs = inputs("multi", "x")
    for _, dt in ipairs(FLOATS) do
      local next_result, done = results("multi")
      for _, x in ipairs(xs) do
        local n, xd = x:dim(), x:astype(dt)
        local scale = (x:abs():max() + CVAL) * 4 ^ n
        local function first(t) return {table.unpack(t, 1, n)} end
        local sets = {
          {1.0, {}}, {2.5, {mode = "constant", cval = CVAL}},
          {first({0.7, 1.8, 0.0}), {order = first({1, 0, 2})}},
          {first({1.2, 0.9, 1.5}), {mode = first({"wrap", "mirror", "nearest"}), truncate = 2.0}},
          {1.5, {radius = 2, order = 2}},
          {4.0, {mode = "mirror"}},
        }
        for i, s in ipairs(sets) do
          local y = nd.gaussian_filter(xd, s[1], s[2])
          check(next_result, y, dt, 100, scale, ("gaussian_filter %s %s set %d"):format(dt, shape(x), i))
        end
        for axis = 1, n do
          local sets1 = {
            {0.8, {}}, {3.0, {order = 1, mode = "wrap"}},
            {1.3, {order = 3, mode = "constant", cval = CVAL}},
            {2.0, {radius = 9, mode = "nearest"}},
          }
          for i, s in ipairs(sets1) do
            s[2].axis = axis
            local y = nd.gaussian_filter1d(xd, s[1], s[2])
            check(next_result, y, dt, 30, scale, ("gaussian_filter1d %s %s axis %d set %d"):format(
              dt, shape(x), axis, i))
          end
        end
        for axis = 1, n do
          for _, mode in ipairs(MODES) do
            local y = nd.sobel(xd, {axis = axis, mode = mode, cval = CVAL})
            check(next_result, y, dt, 9, scale, ("sobel %s %s axis %d %s"):format(dt, shape(x), axis, mode))
          end
        end
      end
      assert.is_true(done(), "multi: results left over")
    end
  end)
end)

describe("ndimage: views, empty inputs and errors", function()
  it("transposed and stepped views give their contiguous copies' results", function()
    ml.seed(3)
    local x = ml.randn(9, 13, {device = DEV})
    local w = ml.randn(3, 4, {device = DEV})
    local t = x:t():clone():t()
    assert.is_false(t:is_contiguous())
    assert.same(nd.correlate(x, w), nd.correlate(t, w))
    assert.same(nd.correlate(x, w), nd.correlate(x, w, {fft = false}))
    assert.allclose(nd.correlate(x, w, {fft = true}), nd.correlate(x, w),
                    {rtol = 1e-5, atol = 1e-5 * x:abs():max() * w:abs():sum()})
    assert.same(nd.convolve(x, w, {mode = "wrap"}), nd.convolve(x, w:t():clone():t(), {mode = "wrap"}))
    local s = x[{{1, -1, 2}, {2, -1, 3}}]
    assert.same(nd.gaussian_filter(s:contiguous(), 1.5), nd.gaussian_filter(s, 1.5))
    assert.same(nd.uniform_filter1d(s:contiguous(), 3, {axis = 1}), nd.uniform_filter1d(s, 3, {axis = 1}))
    assert.same(nd.correlate1d(x:t():contiguous(), {1, 2, 3}, {axis = 1}),
                nd.correlate1d(x:t(), {1, 2, 3}, {axis = 1}))
  end)

  it("empty inputs give empty results; no pass gives a copy", function()
    local e = ml.zeros(0, 4, {device = DEV})
    assert.same({0, 4}, nd.correlate(e, ml.ones(2, 2)).shape)
    assert.same({0, 4}, nd.gaussian_filter(e, 2).shape)
    assert.same({0, 4}, nd.uniform_filter(e).shape)
    assert.same({0, 4}, nd.correlate1d(e, {1, 2}, {axis = 1}).shape)
    local x = ml.ones(3, 3, {device = DEV})
    local y = nd.gaussian_filter(x, 0)
    assert.same(x, y)
    y[{1, 1}] = 5
    assert.equal(1, x[{1, 1}])
  end)

  it("errors: masks, origins, modes, options, dimensions, devices", function()
    local x = ml.ones(4, 5)
    assert.equal("ndimage.correlate: the weights (shape 3) must have as many dimensions "
                 .. "as the input (shape 4x5)", errmsg(nd.correlate, x, {1, 2, 3}))
    assert.equal("ndimage.convolve: the weights are empty (shape 0x2)",
                 errmsg(nd.convolve, x, ml.zeros(0, 2)))
    assert.equal("ndimage.correlate: expects an array of 1 to 3 dimensions, got shape 1x1x1x1",
                 errmsg(nd.correlate, ml.ones(1, 1, 1, 1), ml.ones(1, 1, 1, 1)))
    assert.equal("ndimage.correlate: origin 2 along dimension 2 is out of range for 3 "
                 .. "weights (-1..1)", errmsg(nd.correlate, x, ml.ones(3, 3), {origin = {0, 2}}))
    assert.equal("ndimage.correlate: origin must have one entry for each of the 2 dimensions, not 3",
                 errmsg(nd.correlate, x, ml.ones(3, 3), {origin = {0, 0, 0}}))
    assert.equal("ndimage.correlate1d: the weights must be a nonempty 1-D array, got shape 2x2",
                 errmsg(nd.correlate1d, x, ml.ones(2, 2)))
    assert.equal("ndimage.convolve1d: origin -2 along dimension 2 is out of range for 2 weights (-1..0)",
                 errmsg(nd.convolve1d, x, {1, 1}, {origin = -2}))
    assert.equal("ndimage.correlate: unknown mode 'symm' (reflect, constant, nearest, mirror or wrap)",
                 errmsg(nd.correlate, x, ml.ones(3, 3), {mode = "symm"}))
    assert.equal("ndimage.uniform_filter1d: size must be 1 or more, not 0",
                 errmsg(nd.uniform_filter1d, x, 0))
    assert.equal("ndimage.gaussian_filter: mode 'edge' is unknown (reflect, constant, nearest, mirror or wrap)",
                 errmsg(nd.gaussian_filter, x, 1, {mode = "edge"}))
    assert.equal("ndimage.gaussian_filter: sigma must have one entry for each of the 2 dimensions, not 1",
                 errmsg(nd.gaussian_filter, x, {1}))
    assert.equal("ndimage.gaussian_filter1d: sigma must be a positive number, not 0",
                 errmsg(nd.gaussian_filter1d, x, 0))
    assert.equal("ndimage.sobel: axis 3 is out of range for 2 dimensions",
                 errmsg(nd.sobel, x, {axis = 3}))
    assert.matches("unknown option 'sigma'", errmsg(nd.gaussian_filter, x, 1, {sigma = 2}))
    assert.matches("option 'fft' must be a boolean", errmsg(nd.convolve, x, ml.ones(2, 2), {fft = 1}))
    assert.matches("option 'truncate' must be a number", errmsg(nd.gaussian_filter, x, 1, {truncate = "4"}))
    assert.matches("correlate1d: dimension", errmsg(nd.correlate1d, x, {1}, {axis = 3}))
    if ml.cuda.available() then
      local c = ml.ones(4, 5, {device = "cpu"})
      assert.matches("ndimage.correlate: .*cpu.*cuda:0", errmsg(nd.correlate, c, ml.ones(2, 2):cuda()))
      assert.matches("ndimage.correlate1d: .*cpu.*cuda:0", errmsg(nd.correlate1d, c, ml.ones(2):cuda()))
    end
  end)
end)
