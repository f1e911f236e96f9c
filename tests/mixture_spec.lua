local ml = require "moonlab"
require "moonlab.test"

-- scikit-learn's GaussianMixture from given weights, means and precisions
-- (tests/fixtures/mixture/make.py): four blobs in 5 dimensions (4
-- components, tol 1e-6) and 2000 Fashion-MNIST images projected on their
-- 20 principal components (10 components, tol 1e-3, max_iter 40).
local FIX = "tests/fixtures/mixture/"
local RESULTS = dofile(FIX .. "results.lua")
local TYPES = {"full", "tied", "diag", "spherical"}

local function load(name) return ml.load_npy(FIX .. name .. ".npy") end

local function raises(fn, msg)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert.is_truthy(string.find(tostring(err), msg, 1, true),
                   "message was: " .. tostring(err))
end

local fashion_data
local function fashion()
  if not fashion_data then
    local images = ml.datasets.fashion_mnist().train_images:narrow(1, 1, 2200)
    local mean = load("fashion_mean"):reshape(1, 784)
    local P = (images - mean):mm(load("fashion_components"))
    fashion_data = {P:narrow(1, 1, 2000), P:narrow(1, 2001, 200)}
  end
  return fashion_data[1], fashion_data[2]
end

local DATA = {
  blobs = {k = 4, tol = 1e-6, max_iter = 100,
           load = function() return load("blobs_X"), load("blobs_Q") end},
  fashion = {k = 10, tol = 1e-3, max_iter = 40, load = fashion},
}

-- The model of a fixture case, from its init.
local function model(data, t, dtype)
  local stem = ("gmm_%s_%s"):format(data, t)
  local function init(key)
    local a = load(stem .. "_" .. key)
    return dtype and a:astype(dtype) or a
  end
  local D = DATA[data]
  return ml.GaussianMixture{
    n_components = D.k, covariance_type = t, tol = D.tol,
    max_iter = D.max_iter, weights_init = init("w0"),
    means_init = init("m0"), precisions_init = init("p0")}, stem
end

-- allclose with atol relative to the largest desired magnitude.
local function close(actual, desired, rtol)
  local scale = ml.is_array(desired) and desired:abs():max() or math.abs(desired)
  assert.allclose(actual, desired, {rtol = rtol, atol = rtol * scale})
end

describe("GaussianMixture against scikit-learn", function()
  for _, data in ipairs({"blobs", "fashion"}) do
    for _, t in ipairs(TYPES) do
      it(("%s, %s covariances: every lower bound to 1e-9"):format(data, t),
         function()
        local X, Q = DATA[data].load()
        local gm, stem = model(data, t)
        gm:fit(X)
        local want = RESULTS[stem]
        assert.equal(want.n_iter, gm.n_iter)
        assert.equal(want.converged, gm.converged)
        assert.allclose(gm.lower_bounds, load(stem .. "_lower_bounds"),
                        {rtol = 1e-9})
        assert.allclose(gm.lower_bound, want.lower_bound, {rtol = 1e-9})
        for _, key in ipairs({"weights", "means", "covariances",
                              "precisions", "precisions_cholesky"}) do
          close(gm[key], load(stem .. "_" .. key), 1e-9)
        end
        assert.array_equal(gm:predict(Q), load(stem .. "_predict") + 1)
        assert.allclose(gm:predict_proba(Q), load(stem .. "_proba"),
                        {rtol = 1e-9, atol = 1e-12})
        assert.allclose(gm:score_samples(Q), load(stem .. "_score_samples"),
                        {rtol = 1e-9})
        assert.allclose(gm:score(Q), want.score, {rtol = 1e-9})
        assert.allclose(gm:bic(X), want.bic, {rtol = 1e-9})
        assert.allclose(gm:aic(X), want.aic, {rtol = 1e-9})
      end)
    end
  end

  for _, t in ipairs(TYPES) do
    -- float32 sums in another order on a GPU (cuBLAS, tree reductions)
    -- drift a little further over the iterations than on the CPU
    it(("in float32 (Fashion-MNIST, %s): the lower bounds to 1e-4"):format(t),
       function()
      local X = fashion()
      local gm, stem = model("fashion", t, "float32")
      gm:fit(X:astype("float32"))
      assert.equal("float32", gm.means.dtype)
      assert.equal("float32", gm.precisions_cholesky.dtype)
      assert.equal(RESULTS[stem].n_iter, gm.n_iter)
      assert.allclose(gm.lower_bounds, load(stem .. "_lower_bounds"),
                      {rtol = 1e-4})
      close(gm.means, load(stem .. "_means"), 1e-4)
    end)
  end
end)

-- Three groups far apart, 60 samples each, shuffled, and their labels.
local function groups()
  ml.seed(5)
  local centers = ml.array({{0, 0}, {30, 0}, {0, 30}})
  local X = ml.cat({centers[1]:reshape(1, 2) + ml.randn(60, 2),
                    centers[2]:reshape(1, 2) + ml.randn(60, 2) * 2,
                    centers[3]:reshape(1, 2) + ml.randn(60, 2) * 0.5})
  local truth = ml.arange(0, 180):idiv(60) + 1
  local perm = ml.randperm(180)
  return X:index_select(1, perm), truth:index_select(1, perm)
end

local pure = require("tests.helpers.clusters").pure

describe("GaussianMixture fits", function()
  local X, truth = groups()

  for _, how in ipairs({"kmeans", "k-means++", "random", "random_from_data"}) do
    it("initialised by " .. how .. " find the groups, the same for a seed",
       function()
      local opts = {n_components = 3, init_params = how, seed = 4,
                    n_init = how == "random" and 3 or 1}
      local a = ml.GaussianMixture(opts)
      local labels = a:fit_predict(X)
      assert.is_true(pure(labels, truth))
      assert.array_equal(a:predict(X), labels)
      local b = ml.GaussianMixture(opts):fit(X)
      assert.array_equal(b.means, a.means)
      assert.same(a.lower_bounds, b.lower_bounds)
    end)
  end

  it("keep the best of n_init runs by lower bound", function()
    local Y = ml.randn(150, 2)
    ml.seed(8)
    local best = -math.huge
    for _ = 1, 4 do
      local gm = ml.GaussianMixture{n_components = 4, init_params = "random",
                                    max_iter = 5}:fit(Y)
      best = math.max(best, gm.lower_bound)
    end
    ml.seed(8)
    local gm = ml.GaussianMixture{n_components = 4, init_params = "random",
                                  max_iter = 5, n_init = 4}:fit(Y)
    assert.equal(best, gm.lower_bound)
  end)

  it("leave ml's generator where it was when given a seed", function()
    ml.seed(11)
    local expected = ml.rand(3)
    ml.seed(11)
    local gm = ml.GaussianMixture{n_components = 3, seed = 2}:fit(X)
    gm:sample(10)
    assert.array_equal(ml.rand(3), expected)
  end)

  it("continue from the fitted parameters under warm_start", function()
    local opts = {n_components = 3, seed = 1, tol = 0,
                  init_params = "random", covariance_type = "diag"}
    opts.max_iter = 8
    local whole = ml.GaussianMixture(opts):fit(X)
    opts.max_iter, opts.warm_start = 5, true
    local gm = ml.GaussianMixture(opts):fit(X)
    gm.max_iter = 3
    gm:fit(X)
    assert.equal(3, gm.n_iter)
    assert.allclose(gm.lower_bounds, {table.unpack(whole.lower_bounds, 6, 8)},
                    {rtol = 1e-12})
    close(gm.means, whole.means, 1e-12)
  end)

  it("with max_iter = 0 keep the initial parameters", function()
    local gm = ml.GaussianMixture{max_iter = 0, means_init = {{1, 2}},
                                  weights_init = {1},
                                  precisions_init = {{{4, 0}, {0, 1}}}}:fit(X)
    assert.equal(0, gm.n_iter)
    assert.is_false(gm.converged)
    assert.equal(-math.huge, gm.lower_bound)
    assert.same({}, gm.lower_bounds)
    assert.same({{1, 2}}, gm.means:totable())
    close(gm.covariances, ml.array({{{0.25, 0}, {0, 1}}}), 1e-15)
    close(gm.precisions, ml.array({{{4, 0}, {0, 1}}}), 1e-15)
  end)

  it("print one line per verbose_interval iterations under verbose", function()
    local lines = {}
    local print_ = print
    _G.print = function(s) lines[#lines + 1] = s end
    local ok, err = pcall(function()
      ml.GaussianMixture{n_components = 3, seed = 1, verbose = 1,
                         verbose_interval = 2, tol = 0, max_iter = 6}:fit(X)
    end)
    _G.print = print_
    assert.is_true(ok, err)
    assert.equal(5, #lines)
    assert.equal("Initialization 1", lines[1])
    assert.truthy(lines[2]:match("^  Iteration 2: lower bound %-?[%d.e+-]+, "
                                 .. "change %-?[%d.e+-]+, [%d.]+ s$"), lines[2])
    assert.truthy(lines[5]:match("^Initialization converged: false "), lines[5])
  end)
end)

describe("GaussianMixture:sample", function()
  for _, t in ipairs(TYPES) do
    it("draws from the fitted " .. t .. " mixture", function()
      local means = ml.array({{0, 0}, {10, 0}})
      local prec = ({full = {{{1, 0.5}, {0.5, 2}}, {{4, 0}, {0, 0.25}}},
                     tied = {{1, 0.5}, {0.5, 2}},
                     diag = {{1, 2}, {4, 0.25}},
                     spherical = {1, 4}})[t]
      local gm = ml.GaussianMixture{
        n_components = 2, covariance_type = t, max_iter = 0,
        weights_init = {0.25, 0.75}, means_init = means,
        precisions_init = prec, seed = 3}:fit({{0, 0}, {1, 1}})
      local S, comp = gm:sample(40000)
      assert.same({40000, 2}, S.shape)
      assert.array_equal(comp, comp:sort())
      local n1 = ml.eq(comp, 1):sum()
      assert.is_true(math.abs(n1 / 40000 - 0.25) < 0.01)
      for k = 1, 2 do
        local rows = S:masked_select(ml.eq(comp, k):reshape(-1, 1)
                                       :expand(40000, 2)):reshape(-1, 2)
        local m = rows:mean(1)
        local c = rows - m:reshape(1, 2)
        local cov = c:t():mm(c) / rows:size(1)
        local want = t == "tied" and gm.covariances or gm.covariances[k]
        if t == "diag" then want = ml.eye(2) * gm.covariances[k] end
        if t == "spherical" then want = ml.eye(2) * gm.covariances[k] end
        assert.allclose(m, means[k], {atol = 0.06})
        assert.allclose(cov, want, {atol = 0.08 * want:abs():max()})
      end
      local again = gm:sample(40000)
      assert.array_equal(again, S)
    end)
  end
end)

describe("GaussianMixture errors", function()
  it("name the collapsed component and what to change", function()
    -- the second feature is constant: every covariance is singular
    local X = ml.array({{0, 7}, {1, 7}, {3, 7}, {10, 7}, {11, 7}, {12, 7}})
    raises(function()
      ml.GaussianMixture{n_components = 2, reg_covar = 0,
                         means_init = {{1, 7}, {11, 7}}}:fit(X)
    end, "GaussianMixture:fit: the covariance of component 1 is not "
         .. "positive definite (the samples it covers collapsed onto a "
         .. "point or a lower-dimensional set): use fewer components or a "
         .. "larger reg_covar (now 0)")
    raises(function()
      ml.GaussianMixture{n_components = 2, reg_covar = 0,
                         covariance_type = "tied"}:fit(X)
    end, "GaussianMixture:fit: the tied covariance is not positive definite")
    raises(function()
      ml.GaussianMixture{n_components = 2, reg_covar = 0, seed = 1,
                         covariance_type = "diag"}:fit(X)
    end, "GaussianMixture:fit: component 1 has variance 0 <= 0 in feature 2")
    raises(function()
      ml.GaussianMixture{n_components = 2, reg_covar = 0, seed = 1,
                         covariance_type = "spherical"}:fit(X:narrow(2, 2, 1))
    end, "GaussianMixture:fit: component 1 has variance 0 <= 0 (the")
    for _, t in ipairs(TYPES) do
      local gm = ml.GaussianMixture{n_components = 2, seed = 1,
                                    covariance_type = t}:fit(X)
      assert.is_true(gm.converged)
    end
  end)

  it("refuse NaN and infinity naming the argument", function()
    raises(function() ml.GaussianMixture{}:fit({{0}, {0 / 0}}) end,
           "GaussianMixture:fit: X contains NaN or infinity")
    raises(function()
      ml.GaussianMixture{means_init = {{math.huge}}}:fit({{0}, {1}})
    end, "GaussianMixture:fit: means_init contains NaN or infinity")
    local gm = ml.GaussianMixture{}:fit({{0}, {1}})
    raises(function() gm:predict({{-math.huge}}) end,
           "GaussianMixture:predict: X contains NaN or infinity")
  end)

  it("check options, shapes and fitting", function()
    local X = ml.array({{0, 1}, {1, 0}, {2, 2}})
    raises(function() ml.GaussianMixture{n_components = 0} end,
           "GaussianMixture: n_components must be an integer >= 1 (got 0)")
    raises(function() ml.GaussianMixture{covariance_type = "ful"} end,
           "GaussianMixture: covariance_type must be \"full\", \"tied\", "
           .. "\"diag\" or \"spherical\" (got \"ful\")")
    raises(function() ml.GaussianMixture{init_params = "kmeans++"} end,
           "GaussianMixture: init_params must be \"kmeans\", \"k-means++\"")
    raises(function() ml.GaussianMixture{tol = -1} end,
           "GaussianMixture: tol must be >= 0 (got -1)")
    raises(function() ml.GaussianMixture{reg_covar = -1e-6} end,
           "GaussianMixture: reg_covar must be >= 0")
    raises(function() ml.GaussianMixture{max_iter = -1} end,
           "GaussianMixture: max_iter must be an integer >= 0 (got -1)")
    raises(function() ml.GaussianMixture{n_components = 4}:fit(X) end,
           "GaussianMixture:fit: 3 samples for 4 components")
    raises(function() ml.GaussianMixture{}:fit({{1, 2}}) end,
           "GaussianMixture:fit: 1 samples for 1 components")
    raises(function()
      ml.GaussianMixture{n_components = 2, weights_init = {1}}:fit(X)
    end, "GaussianMixture:fit: weights_init must have shape 2 (got 1)")
    raises(function()
      ml.GaussianMixture{n_components = 2, weights_init = {0.5, 0.6}}:fit(X)
    end, "GaussianMixture:fit: weights_init must lie in [0, 1] and sum to 1")
    raises(function()
      ml.GaussianMixture{means_init = {{1, 2, 3}}}:fit(X)
    end, "GaussianMixture:fit: means_init must have shape 1x2 (got 1x3)")
    raises(function()
      ml.GaussianMixture{precisions_init = {{1, 2}, {0, 1}},
                         covariance_type = "tied"}:fit(X)
    end, "GaussianMixture:fit: precisions_init must be symmetric positive "
         .. "definite")
    raises(function()
      ml.GaussianMixture{precisions_init = {{{1, 2}, {2, 1}}}}:fit(X)
    end, "GaussianMixture:fit: precisions_init must be symmetric positive "
         .. "definite")
    raises(function()
      ml.GaussianMixture{precisions_init = {{1, 0}},
                         covariance_type = "diag"}:fit(X)
    end, "GaussianMixture:fit: precisions_init must be positive")
    raises(function() ml.GaussianMixture{}:predict(X) end,
           "GaussianMixture:predict: the model is not fitted")
    raises(function() ml.GaussianMixture{}:sample(2) end,
           "GaussianMixture:sample: the model is not fitted")
    local gm = ml.GaussianMixture{}:fit(X)
    raises(function() gm:score({{1, 2, 3}}) end,
           "GaussianMixture:score: X has 3 features but the model has 2")
    raises(function() gm:sample(0) end,
           "GaussianMixture:sample: n must be a positive integer (got 0)")
  end)
end)
