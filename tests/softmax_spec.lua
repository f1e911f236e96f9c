-- ml.softmax and ml.log_softmax against SciPy (the fixtures of
-- tests/fixtures/softmax/make.py: scipy.special.softmax and log_softmax
-- along each axis of a 3 x 5 x 7 array with rows far beyond exp's range,
-- -inf and 1000), on the default device, float64 and float32.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/softmax/"
local DEV = ml.device()

local function load(name)
  return ml.load_npy(DIR .. name .. ".npy"):to(DEV)
end

describe("softmax", function()
  it("matches scipy.special along every dimension, float64 and float32", function()
    local x = load("x")
    for dim = 1, 3 do
      local p, lse = x:softmax(dim)
      assert.allclose(p, load("softmax_" .. dim), {rtol = 1e-13, atol = 1e-300})
      assert.allclose(lse, x:logsumexp(dim, {keepdim = true}), {rtol = 1e-15})
      local lp = ml.log_softmax(x, dim)
      assert.allclose(lp, load("log_softmax_" .. dim), {rtol = 1e-13, atol = 1e-12})
      local p32 = x:astype("float32"):softmax(dim)
      assert.equal("float32", p32.dtype)
      assert.allclose(p32, load("softmax_" .. dim):astype("float32"), {rtol = 1e-5, atol = 1e-37})
    end
  end)

  it("takes the last dimension by default and returns lse with keepdim", function()
    local x = load("x")
    local p, lse = x:softmax()
    assert.array_equal(p, x:softmax(3))
    assert.same({3, 5, 1}, lse.shape)
    local _, lse1 = x:softmax(-3)
    assert.same({1, 5, 7}, lse1.shape)
  end)

  it("sums to one along the dimension and keeps views' layout out of it", function()
    ml.seed(3)
    local x = ml.randn(7, 31, {device = DEV})
    local xt = x:t()
    assert.allclose(xt:softmax(1):sum(1), ml.ones(7, {device = DEV}), {rtol = 1e-14})
    assert.allclose(xt:softmax(2), x:softmax(1):t(), {rtol = 1e-15, atol = 0})
    local step = x[{{}, {1, 31, 3}}]
    assert.allclose(step:softmax(2), step:contiguous():softmax(2), {rtol = 0, atol = 0})
  end)

  it("handles edge rows as PyTorch: +inf, all -inf, NaN, empty, 0-d, integers", function()
    local inf = math.huge
    local p = ml.softmax(ml.array({inf, 1}, {device = DEV}))
    assert.is_true(p[1] ~= p[1])
    assert.equal(0, p[2])
    local q = ml.softmax(ml.array({-inf, -inf}, {device = DEV}))
    assert.is_true(q[1] ~= q[1] and q[2] ~= q[2])
    local n, lse = ml.softmax(ml.array({0 / 0, 1}, {device = DEV}))
    assert.is_true(n[2] ~= n[2] and lse[1] ~= lse[1])
    local e, le = ml.softmax(ml.empty(2, 0, {device = DEV}))
    assert.same({2, 0}, e.shape)
    assert.same({-inf, -inf}, {le[1][1], le[2][1]})
    assert.equal(1, ml.softmax(ml.zeros({device = DEV})):item())
    local i = ml.softmax(ml.array({1, 2}, {dtype = "int32", device = DEV}))
    assert.equal("float64", i.dtype)
    assert.allclose(i, ml.softmax(ml.array({1.0, 2.0}, {device = DEV})), {rtol = 0})
  end)

  it("names itself in errors", function()
    local x = ml.zeros(2, 3)
    assert.error_matches(function() x:softmax(3) end, "softmax: dimension 3 out of range")
    assert.error_matches(function() ml.log_softmax(x, 1, 2) end, "log_softmax: takes")
  end)
end)
