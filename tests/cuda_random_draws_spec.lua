-- bernoulli, exponential, gamma, beta, multinomial, choice and shuffle on
-- the GPU against the CPU for the same seed: awkward sizes (1, odd, prime,
-- empty), array parameters as transposed views. Draws built on uniforms,
-- integers and permutations are bit for bit the same; those through log
-- and pow (exponential, gamma, beta) within a few ulp, with the same
-- stream consumed (the generator's state after the call is equal).
-- Pending where there is no GPU.
local ml = require "moonlab"
require "moonlab.test"

if not ml.cuda.available() then
  describe("cuda random draws", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local SIZES = {0, 1, 7, 97, 4099}

-- fn(device) on the CPU and on the GPU after the same seed; returns both
-- results, the GPU's read back, after checking the states agree.
local function both(seed, fn)
  ml.seed(seed)
  local c = fn("cpu")
  local sc = ml.get_rng_state()
  ml.seed(seed)
  local g = fn("cuda")
  assert.same(sc, ml.get_rng_state())
  assert.equal("cpu", c.device)
  assert.truthy(g.device:match("^cuda"))
  return c, g:cpu()
end

describe("cuda random draws", function()
  it("bernoulli is bit for bit the CPU's", function()
    for _, n in ipairs(SIZES) do
      for _, dt in ipairs({"float32", "float64"}) do
        local c, g = both(n, function(d)
          return ml.bernoulli(0.3, n, {dtype = dt, device = d})
        end)
        assert.array_equal(g, c)
      end
    end
    local p = ml.rand(13, 5)
    local c, g = both(5, function(d) return ml.bernoulli(p:to(d):t()) end)
    assert.array_equal(g, c)
  end)

  it("exponential, gamma and beta agree within a few ulp", function()
    for _, n in ipairs(SIZES) do
      for _, dt in ipairs({"float32", "float64"}) do
        local tol = dt == "float32" and 1e-5 or 1e-12
        local cases = {
          function(d) return ml.exponential(2, n, {dtype = dt, device = d}) end,
          function(d) return ml.gamma(2.5, n, {dtype = dt, device = d}) end,
          function(d) return ml.gamma(0.3, n, {dtype = dt, device = d, scale = 3}) end,
          function(d) return ml.beta(0.5, 2, n, {dtype = dt, device = d}) end,
        }
        for i, fn in ipairs(cases) do
          local c, g = both(100 * i + n, fn)
          assert.allclose(g, c, {rtol = tol, atol = tol})
        end
      end
    end
    local k = ml.uniform(0.2, 5, 11, 7)
    local c, g = both(9, function(d) return ml.gamma(k:to(d):t()) end)
    assert.allclose(g, c, {rtol = 1e-12, atol = 1e-12})
  end)

  it("multinomial, choice and shuffle are bit for bit the CPU's", function()
    local w = ml.rand(3, 97)
    for _, n in ipairs({0, 1, 7, 97}) do
      for _, rep in ipairs({true, false}) do
        local c, g = both(n, function(d)
          return ml.multinomial(w:to(d), n, {replacement = rep})
        end)
        assert.array_equal(g, c)
      end
    end
    local c, g = both(2, function(d)
      return ml.multinomial(w:to(d):t():contiguous():t(), 4099, {replacement = true})
    end)
    assert.array_equal(g, c)
    for _, n in ipairs(SIZES) do
      for _, rep in ipairs({true, false}) do
        c, g = both(n, function(d)
          return ml.choice(4099, n, {replace = rep, device = d})
        end)
        assert.array_equal(g, c)
      end
      c, g = both(n, function(d)
        return ml.choice(ml.arange(5):to(d), n, {p = {0.1, 0.2, 0.3, 0.4, 0}})
      end)
      assert.array_equal(g, c)
      c, g = both(n, function(d) return ml.shuffle(ml.arange(2 * n):reshape(n, 2):to(d)) end)
      assert.array_equal(g, c)
    end
  end)
end)
