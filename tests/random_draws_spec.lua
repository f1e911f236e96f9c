-- bernoulli, exponential, gamma, beta, multinomial, choice and shuffle
-- (moonlab/random.lua) on the default device, with fixed seeds:
-- moments within 6 standard errors of SciPy 1.10's and chi-square
-- goodness of fit over SciPy's deciles (tests/fixtures/random/make.py)
-- below chi2's 0.9999 quantile; weights respected, draws without
-- replacement distinct, seeds reproducible, arguments checked.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/random/"
local DEV = ml.device()
local N = 200000
local CHI2 = ml.load_npy(DIR .. "chi2.npy"):totable()

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

-- Chi-square of the counts of x's values (a 1-D array) in the bins
-- between edges (+-inf at the ends), against equal expected counts.
local function chi2_deciles(x, edges)
  local n, stat, below = x:numel(), 0, 0
  for i = 1, #edges + 1 do
    local upto = i <= #edges and ml.le(x, edges[i]):astype("int64"):sum() or n
    local expected = n / (#edges + 1)
    stat = stat + (upto - below - expected)^2 / expected
    below = upto
  end
  return stat
end

-- Chi-square of integer draws in 1..k against weights w (a Lua list).
local function chi2_counts(idx, w)
  local total, n, stat = 0, idx:numel(), 0
  for _, v in ipairs(w) do total = total + v end
  for j, v in ipairs(w) do
    local c = ml.eq(idx, j):astype("int64"):sum()
    if v == 0 then
      assert.equal(0, c)
    else
      local e = n * v / total
      stat = stat + (c - e)^2 / e
    end
  end
  return stat
end

-- The draws x match case's moments and deciles.
local function fits(x, case)
  local m = ml.load_npy(DIR .. case .. "_moments.npy"):totable()
  local edges = ml.load_npy(DIR .. case .. "_edges.npy"):totable()
  local n = x:numel()
  assert.is_true(math.abs(x:mean() - m[1]) < 6 * math.sqrt(m[2] / n),
                 ("%s: mean %g, want %g"):format(case, x:mean(), m[1]))
  assert.is_true(math.abs(x:var() / m[2] - 1) < 0.05,
                 ("%s: variance %g, want %g"):format(case, x:var(), m[2]))
  local stat = chi2_deciles(x, edges)
  assert.is_true(stat < CHI2[9], ("%s: chi2 %g"):format(case, stat))
end

describe("random draws", function()
  before_each(function() ml.seed(15) end)

  it("bernoulli draws 1 with probability p, from a number or an array", function()
    local x = ml.bernoulli(0.3, N)
    assert.equal(DEV, x.device)
    assert.equal(ml.get_default_dtype(), x.dtype)
    assert.is_true(math.abs(x:mean() - 0.3) < 6 * math.sqrt(0.21 / N))
    local p = ml.array({0, 0.25, 1}, {dtype = "float32", device = DEV})
    local y = ml.bernoulli(p:reshape(1, 3):expand(N // 10, 3))
    assert.equal("float32", y.dtype)
    local means = y:mean(1):totable()
    assert.equal(0, means[1])
    assert.equal(1, means[3])
    assert.is_true(math.abs(means[2] - 0.25) < 6 * math.sqrt(0.1875 / (N // 10)))
    local m = ml.bernoulli(0.5, 2, 3, {dtype = "uint8"})
    assert.equal("uint8", m.dtype)
    assert.same({2, 3}, m.shape)
    assert.same({0}, ml.bernoulli(0.5, 0).shape)
  end)

  it("exponential, gamma and beta match SciPy's moments and deciles", function()
    fits(ml.exponential(2, N), "exponential_2")
    fits(ml.gamma(3, N, {scale = 2}), "gamma_3_2")
    fits(ml.gamma(0.5, N), "gamma_0.5_1")
    fits(ml.gamma(1, N, {dtype = "float32"}):astype("float64"), "gamma_1_1")
    fits(ml.beta(2, 5, N), "beta_2_5")
    fits(ml.beta(0.5, 0.5, N), "beta_0.5_0.5")
  end)

  it("takes array parameters elementwise", function()
    local k = ml.array({0.5, 3}, {device = DEV}):reshape(1, 2):expand(N // 2, 2)
    local g = ml.gamma(k)
    assert.same({N // 2, 2}, g.shape)
    local means = g:mean(1):totable()
    assert.is_true(math.abs(means[1] - 0.5) < 0.02 and math.abs(means[2] - 3) < 0.05)
    local b = ml.beta(ml.array({1, 4}, {device = DEV}), 4)
    assert.same({2}, b.shape)
    local e = ml.exponential(ml.full({3}, 2, {device = DEV}))
    assert.same({3}, e.shape)
  end)

  it("beta of tiny parameters gives values in [0, 1], not NaN", function()
    local x = ml.beta(0.02, 0.02, 10000)
    assert.is_false(ml.isnan(x):any())
    assert.is_true(x:min() >= 0 and x:max() <= 1)
    assert.is_true(math.abs(x:mean() - 0.5) < 0.05)
  end)

  it("gamma consumes a fixed sequence of the stream for a seed", function()
    ml.seed(3)
    local a = ml.gamma(2.5, 1000)
    local s = ml.get_rng_state()
    ml.seed(3)
    assert.array_equal(ml.gamma(2.5, 1000), a)
    assert.same(s, ml.get_rng_state())
  end)

  it("multinomial with replacement follows the weights", function()
    local w = {1, 0, 2, 7, 0.5}
    local idx = ml.multinomial(ml.array(w, {device = DEV}), N, {replacement = true})
    assert.equal("int64", idx.dtype)
    assert.same({N}, idx.shape)
    assert.is_true(chi2_counts(idx, w) < CHI2[3])
    local rows = ml.multinomial(ml.array({{1, 1}, {0, 1}}, {device = DEV}), 5,
                                {replacement = true})
    assert.same({2, 5}, rows.shape)
    assert.array_equal(rows[2]:cpu(), ml.full({5}, 2, {dtype = "int64"}))
  end)

  it("multinomial without replacement draws distinct indices, first by weight", function()
    local w = {5, 1, 0, 3, 1}
    local idx = ml.multinomial(ml.array(w, {device = DEV}):reshape(1, 5):expand(20000, 5), 4)
    assert.same({20000, 4}, idx.shape)
    local sorted = idx:sort(2)
    assert.array_equal(sorted:cpu(), ml.array({1, 2, 4, 5}):reshape(1, 4):expand(20000, 4))
    assert.is_true(chi2_counts(idx:narrow(2, 1, 1), w) < CHI2[3])
    assert.equal("multinomial: cannot draw 4 without replacement from 3 categories of positive weight",
                 errmsg(ml.multinomial, ml.array({1, 0, 2, 3}), 4))
  end)

  it("choice samples 1..n or an array's elements, with or without replacement", function()
    local s = ml.choice(7, N)
    assert.equal(1, s:min())
    assert.equal(7, s:max())
    assert.is_true(chi2_counts(s, {1, 1, 1, 1, 1, 1, 1}) < CHI2[6])
    local d = ml.choice(1000, 1000, {replace = false})
    assert.array_equal(d:sort():cpu(), ml.arange(1, 1001))
    local grid = ml.choice(10, {2, 3}, {replace = false})
    assert.same({2, 3}, grid.shape)
    local seen, distinct = {}, 0
    for _, v in ipairs(grid:reshape(-1):totable()) do
      if not seen[v] then seen[v], distinct = true, distinct + 1 end
    end
    assert.equal(6, distinct)
    local pool = ml.array({10, 20, 30}, {device = DEV})
    local p = {0.2, 0, 0.8}
    local w = ml.choice(pool, N, {p = p})
    assert.is_true(chi2_counts(w / 10, p) < CHI2[1])
    local one = ml.choice(pool)
    assert.equal("integer", math.type(one))
    assert.is_true(one == 10 or one == 20 or one == 30)
    assert.array_equal(ml.choice(pool, 3, {replace = false, p = {0.5, 0.25, 0.25}}):sort():cpu(),
                       ml.array({10, 20, 30}))
  end)

  it("shuffle permutes slices along dimension 1 into a new array", function()
    local x = ml.arange(1, 13, {device = DEV}):reshape(6, 2)
    local y = ml.shuffle(x)
    assert.array_equal(x:cpu(), ml.arange(1, 13):reshape(6, 2))
    assert.array_equal(y:sort(1):cpu(), x:cpu())
    assert.array_equal((y:select(2, 2) - y:select(2, 1)):cpu(), ml.ones(6, {dtype = "int64"}))
    assert.is_false(ml.eq(y, x):all())
    assert.same({0, 3}, ml.shuffle(ml.zeros(0, 3)).shape)
  end)

  it("checks its arguments", function()
    assert.equal("bernoulli: p must be [0, 1] (got 1.5)", errmsg(ml.bernoulli, 1.5, 3))
    assert.equal("bernoulli: p must not be NaN", errmsg(ml.bernoulli, 0 / 0, 3))
    assert.equal("exponential: scale must be >= 0 (got -1)", errmsg(ml.exponential, -1, 3))
    assert.equal("exponential: dtype int64 is not a float dtype",
                 errmsg(ml.exponential, 1, 3, {dtype = "int64"}))
    assert.equal("gamma: shape k must be > 0 (got 0)", errmsg(ml.gamma, 0, 3))
    assert.equal("beta: b must be > 0 (got -2)", errmsg(ml.beta, 1, -2, 3))
    assert.equal("beta: give a shape or array parameters, not both",
                 errmsg(ml.beta, ml.ones(2), 1, 3))
    assert.equal("multinomial: weights must be non-negative",
                 errmsg(ml.multinomial, ml.array({1, -1}), 1))
    assert.equal("multinomial: every row of weights must have a positive sum",
                 errmsg(ml.multinomial, ml.array({{1, 1}, {0, 0}}), 1))
    assert.equal("multinomial: n must be a non-negative integer (got -1)",
                 errmsg(ml.multinomial, ml.array({1, 1}), -1))
    assert.equal("choice: cannot take 4 samples from 3 without replacement",
                 errmsg(ml.choice, 3, 4, {replace = false}))
    assert.equal("choice: probabilities p do not sum to 1",
                 errmsg(ml.choice, 3, 4, {p = {0.5, 0.5, 0.5}}))
    assert.equal("choice: p must be 1-D of 3 probabilities",
                 errmsg(ml.choice, 3, 4, {p = {0.5, 0.5}}))
    assert.equal("shuffle: x must have a dimension to shuffle",
                 errmsg(ml.shuffle, ml.full({}, 1)))
  end)
end)
