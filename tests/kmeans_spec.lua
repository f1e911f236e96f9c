local ml = require "moonlab"
require "moonlab.test"

-- scikit-learn's KMeans from given inits (tests/fixtures/mixture/make.py):
-- four blobs in 5 dimensions, and 2000 Fashion-MNIST images projected on
-- their 20 principal components.
local FIX = "tests/fixtures/mixture/"
local RESULTS = dofile(FIX .. "results.lua")

local function load(name) return ml.load_npy(FIX .. name .. ".npy") end

local function raises(fn, msg)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert.is_truthy(string.find(tostring(err), msg, 1, true),
                   "message was: " .. tostring(err))
end

-- The fixture's samples and queries.
local function fashion()
  local images = ml.datasets.fashion_mnist().train_images:narrow(1, 1, 2200)
  local mean = load("fashion_mean"):reshape(1, 784)
  local P = (images - mean):mm(load("fashion_components"))
  return P:narrow(1, 1, 2000), P:narrow(1, 2001, 200)
end

local DATA = {
  blobs = function() return load("blobs_X"), load("blobs_Q") end,
  fashion = fashion,
}

local CASES = {
  {name = "blobs", data = "blobs"},
  {name = "relocate", data = "blobs",
   why = "two clusters empty after the first step: a duplicate center "
         .. "and a far one"},
  {name = "maxiter", data = "blobs", opts = {max_iter = 2},
   why = "stopped by max_iter: the labels are assigned once more"},
  {name = "fashion", data = "fashion"},
}

describe("KMeans against scikit-learn", function()
  for _, case in ipairs(CASES) do
    it(case.name .. (case.why and " (" .. case.why .. ")" or ""), function()
      local X, Q = DATA[case.data]()
      local stem = "kmeans_" .. case.name
      local want = RESULTS[stem]
      local opts = {init = load(stem .. "_init")}
      for k, v in pairs(case.opts or {}) do opts[k] = v end
      local km = ml.KMeans(opts):fit(X)
      assert.equal(want.n_iter, km.n_iter)
      assert.array_equal(km.labels, load(stem .. "_labels") + 1)
      assert.allclose(km.inertia, want.inertia, {rtol = 1e-12})
      assert.allclose(km.cluster_centers, load(stem .. "_centers"),
                      {rtol = 1e-12, atol = 1e-12})
      assert.array_equal(km:predict(Q), load(stem .. "_predict") + 1)
      assert.allclose(km:transform(Q), load(stem .. "_transform"),
                      {rtol = 1e-12})
      assert.allclose(km:score(Q), want.score, {rtol = 1e-12})
    end)
  end

  it("in float32: the same labels and iterations, inertia to 1e-5", function()
    local X = load("blobs_X"):astype("float32")
    for _, name in ipairs({"blobs", "relocate"}) do
      local stem = "kmeans_" .. name
      local km = ml.KMeans{init = load(stem .. "_init")}:fit(X)
      assert.equal("float32", km.cluster_centers.dtype)
      assert.equal(RESULTS[stem].n_iter, km.n_iter)
      assert.array_equal(km.labels, load(stem .. "_labels") + 1)
      assert.allclose(km.inertia, RESULTS[stem].inertia, {rtol = 1e-5})
      assert.allclose(km.cluster_centers, load(stem .. "_centers"),
                      {rtol = 1e-5, atol = 1e-5})
    end
  end)
end)

-- Three tight groups far apart, 40 samples each, shuffled.
local function groups()
  ml.seed(5)
  local centers = ml.array({{0, 0, 0}, {50, 0, 0}, {0, 50, 50}})
  local X = ml.cat({centers[1]:reshape(1, 3) + ml.randn(40, 3),
                    centers[2]:reshape(1, 3) + ml.randn(40, 3),
                    centers[3]:reshape(1, 3) + ml.randn(40, 3)})
  local truth = ml.arange(0, 120):idiv(40) + 1
  local perm = ml.randperm(120)
  return X:index_select(1, perm), truth:index_select(1, perm)
end

local pure = require("tests.helpers.clusters").pure

describe("KMeans initialisation", function()
  local X, truth = groups()

  it("k-means++ picks one sample of each far group", function()
    local pp = require("moonlab.kmeans").kmeans_plusplus
    for s = 1, 5 do
      ml.seed(s)
      local chosen = pp(X, 3)
      local g = truth:index_select(1, chosen):sort()
      assert.same({1, 2, 3}, g:totable())
    end
  end)

  for _, init in ipairs({"k-means++", "random"}) do
    it(init .. " recovers the groups, the same for the same seed", function()
      local a = ml.KMeans{n_clusters = 3, init = init, seed = 7}:fit(X)
      local b = ml.KMeans{n_clusters = 3, init = init, seed = 7}:fit(X)
      assert.is_true(pure(a.labels, truth))
      assert.array_equal(a.labels, b.labels)
      assert.equal(a.inertia, b.inertia)
    end)
  end

  it("with a seed leaves ml's generator where it was", function()
    ml.seed(11)
    local expected = ml.rand(3)
    ml.seed(11)
    ml.KMeans{n_clusters = 3, init = "random", seed = 1}:fit(X)
    assert.array_equal(ml.rand(3), expected)
  end)

  it("keeps the best of n_init runs by inertia", function()
    local Y = ml.randn(200, 2, {dtype = "float64"})
    ml.seed(3)
    local best = math.huge
    for _ = 1, 6 do
      best = math.min(best, ml.KMeans{n_clusters = 5, init = "random",
                                      n_init = 1}:fit(Y).inertia)
    end
    ml.seed(3)
    local km = ml.KMeans{n_clusters = 5, init = "random", n_init = 6}:fit(Y)
    assert.equal(best, km.inertia)
    assert.equal(10, ml.KMeans{init = "random"}.n_init)
    assert.equal(1, ml.KMeans{}.n_init)
    assert.equal(1, ml.KMeans{init = {{0}}, n_init = 4}.n_init)
  end)
end)

describe("KMeans details", function()
  it("gives an empty cluster the largest cluster's center when every "
     .. "sample sits on its center", function()
    local km = ml.KMeans{init = {{0}, {0}, {1}}}:fit({{0}, {0}, {1}})
    assert.array_equal(km.labels, ml.array({1, 1, 3}):astype("int64"))
    assert.same({{0}, {0}, {1}}, km.cluster_centers:totable())
    assert.equal(0, km.inertia)
    assert.equal(1, km.n_iter)
  end)

  it("sums rows by label as the one-hot product does", function()
    local segment_sums = require("moonlab.kmeans").segment_sums
    ml.seed(2)
    for _, dtype in ipairs({"float64", "float32"}) do
      local X = ml.randn(3000, 6, {dtype = dtype})
      local labels = ml.randint(1, 20, 3000)  -- label 20 absent
      local onehot = ml.eq(labels:reshape(3000, 1), ml.arange(1, 21):reshape(1, 20))
                       :astype(dtype)
      local counts, sums = segment_sums(X, labels, 20)
      assert.equal(dtype, counts.dtype)
      assert.array_equal(onehot:sum(1), counts)
      assert.equal(0, counts[20])
      assert.equal(dtype, sums.dtype)
      assert.allclose(sums, onehot:t():mm(X), {rtol = 1e-5, atol = dtype == "float32"
                                                                and 1e-4 or 1e-12})
    end
  end)

  it("takes integer samples as float64 and a table as an array", function()
    local km = ml.KMeans{init = {{0}, {10}}}:fit({{1}, {2}, {9}})
    assert.equal("float64", km.cluster_centers.dtype)
    assert.same({{1.5}, {9}}, km.cluster_centers:totable())
    local k2 = ml.KMeans{init = {{0}, {10}}}
    local X = ml.array({{1}, {2}, {9}}):astype("int32")
    assert.array_equal(k2:fit_predict(X), ml.array({1, 1, 2}):astype("int64"))
  end)

  it("raises on bad options, inputs and unfitted models", function()
    raises(function() ml.KMeans{n_clusters = 0} end,
           "KMeans: n_clusters must be a positive integer (got 0)")
    raises(function() ml.KMeans{init = "kmeans"} end,
           "KMeans: init must be \"k-means++\", \"random\" or an array")
    raises(function() ml.KMeans{init = {{0}, {1}}, n_clusters = 3} end,
           "KMeans: init has 2 centers but n_clusters is 3")
    raises(function() ml.KMeans{n_init = "all"} end,
           "KMeans: n_init must be a positive integer or \"auto\"")
    raises(function() ml.KMeans{tol = -1} end, "KMeans: tol must be >= 0")
    raises(function() ml.KMeans{max_iter = 0} end,
           "KMeans: max_iter must be a positive integer (got 0)")
    raises(function() ml.KMeans{n_clusters = 3}:fit({{0}, {1}}) end,
           "KMeans:fit: 2 samples but n_clusters = 3")
    raises(function() ml.KMeans{n_clusters = 1}:fit({{0}, {0 / 0}}) end,
           "KMeans:fit: X contains NaN or infinity")
    raises(function() ml.KMeans{n_clusters = 1}:fit({1, 2}) end,
           "KMeans:fit: X must be a matrix (got 1 dimensions)")
    raises(function() ml.KMeans{init = {{0, 0}}}:fit({{0}, {1}}) end,
           "KMeans:fit: init has 2 features but X has 1")
    raises(function() ml.KMeans{}:predict({{0}}) end,
           "KMeans:predict: the model is not fitted")
    local km = ml.KMeans{init = {{0}, {1}}}:fit({{0}, {1}})
    raises(function() km:transform({{0, 1}}) end,
           "KMeans:transform: X has 2 features but the model has 1")
    raises(function() km:score({{math.huge}}) end,
           "KMeans:score: X contains NaN or infinity")
  end)
end)
