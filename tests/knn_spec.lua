local ml = require "moonlab"
require "moonlab.test"

local FIX = "tests/fixtures/knn/"
local METRICS = {"euclidean", "sqeuclidean", "cosine", "ip"}
local DTYPES = {"float32", "float64"}

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

local function raises(fn, msg)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert.is_truthy(string.find(tostring(err), msg, 1, true),
                   "message was: " .. tostring(err))
end

-- The exact key of backend.h's knn_refine, in Lua's doubles (the same
-- operations in the same order, so the same bits).
local function exact_key(metric, q, r)
  local s = 0
  if metric == "ip" then
    for i = 1, #q do s = s + q[i] * r[i] end
    return -s
  end
  if metric == "cosine" then
    local qn, rn = 0, 0
    for i = 1, #q do qn = qn + q[i] * q[i] end
    for i = 1, #r do rn = rn + r[i] * r[i] end
    qn, rn = math.sqrt(qn), math.sqrt(rn)
    if qn == 0 or rn == 0 then return 1 end
    for i = 1, #q do
      local x = q[i] / qn - r[i] / rn
      s = s + x * x
    end
    return s / 2
  end
  for i = 1, #q do
    local x = q[i] - r[i]
    s = s + x * x
  end
  return s
end

-- Orders {key, index} pairs: keys ascending, NaN last, then indices.
local function before(a, b)
  local an, bn = a[1] ~= a[1], b[1] ~= b[1]
  if an ~= bn then return bn end
  if not an and a[1] ~= b[1] then return a[1] < b[1] end
  return a[2] < b[2]
end

-- Brute force: every distance, sorted. Returns tables dist, index.
local function brute(Q, R, k, metric, dtype, exclude_self)
  metric = metric or "euclidean"
  local q, r = Q:totable(), R:totable()
  local dist, index = {}, {}
  for i = 1, #q do
    local pairs_ = {}
    for j = 1, #r do
      if not (exclude_self and i == j) then
        pairs_[#pairs_ + 1] = {exact_key(metric, q[i], r[j]), j}
      end
    end
    table.sort(pairs_, before)
    dist[i], index[i] = {}, {}
    for j = 1, k do
      local key = pairs_[j][1]
      local v = metric == "euclidean" and math.sqrt(key) or metric == "ip" and -key or key
      dist[i][j] = dtype == "float32" and f32(v) or v
      index[i][j] = pairs_[j][2]
    end
  end
  return dist, index
end

-- Exact equality of nested tables of numbers, NaN equal to NaN.
local function same(a, b, path)
  path = path or ""
  if type(a) ~= "table" or type(b) ~= "table" then
    local eq = a == b or (a ~= a and b ~= b)
    assert(eq, ("values differ at %s: %s vs %s"):format(path, tostring(a), tostring(b)))
    return
  end
  assert(#a == #b, ("lengths differ at %s: %d vs %d"):format(path, #a, #b))
  for i = 1, #a do same(a[i], b[i], path .. "[" .. i .. "]") end
end

local function check_brute(Q, R, k, opts)
  opts = opts or {}
  local dist, index = ml.knn(Q, R, k, opts)
  local bd, bi = brute(Q, R, k, opts.metric, dist.dtype, opts.exclude_self)
  assert.equal("int64", index.dtype)
  assert.same({Q:size(1), k}, dist.shape)
  assert.same({Q:size(1), k}, index.shape)
  same(index:totable(), bi)
  same(dist:totable(), bd)
  return dist, index
end

local function points(m, d, dtype, lo, hi)
  return ml.uniform(lo or -1, hi or 1, m, d, {dtype = dtype})
end

describe("knn", function()
  setup(function() ml.seed(42) end)

  it("matches brute force for every metric and float dtype", function()
    for _, dtype in ipairs(DTYPES) do
      local Q, R = points(37, 5, dtype), points(53, 5, dtype)
      for _, metric in ipairs(METRICS) do
        local dist = check_brute(Q, R, 7, {metric = metric})
        assert.equal(dtype, dist.dtype)
      end
    end
  end)

  it("returns nearest first and the largest inner products first", function()
    local Q = ml.array({{0, 0}, {1, 1}})
    local R = ml.array({{3, 0}, {1, 0}, {0, 2}, {2, 2}})
    local d, i = ml.knn(Q, R, 3)
    assert.same({{2, 3, 4}, {2, 3, 4}}, i:totable())
    assert.same({{1, 2, math.sqrt(8)}, {1, math.sqrt(2), math.sqrt(2)}}, d:totable())
    d, i = ml.knn(Q, R, 4, {metric = "sqeuclidean"})
    assert.same({{1, 4, 8, 9}, {1, 2, 2, 5}}, d:totable())
    d, i = ml.knn(Q, R, 2, {metric = "ip"})
    assert.same({{1, 2}, {4, 1}}, i:totable())
    assert.same({{0, 0}, {4, 3}}, d:totable())
  end)

  it("handles k = 1 and k = n", function()
    for _, dtype in ipairs(DTYPES) do
      local Q, R = points(9, 3, dtype), points(11, 3, dtype)
      for _, metric in ipairs(METRICS) do
        check_brute(Q, R, 1, {metric = metric})
        check_brute(Q, R, 11, {metric = metric})
      end
    end
  end)

  it("breaks ties by the lower index: duplicates and equal distances", function()
    local R = ml.array({{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 0}, {0, 1}, {2, 2}})
    local d, i = ml.knn(ml.array({{0, 0}, {1, 0}}), R, 6)
    assert.same({{1, 2, 3, 4, 5, 6}, {1, 5, 2, 4, 6, 3}}, i:totable())
    assert.same({1, 1, 1, 1, 1, 1}, d:totable()[1])
    for _, dtype in ipairs(DTYPES) do
      -- a few distinct points, each repeated: ties everywhere
      local base = points(4, 3, dtype)
      local Rd = ml.cat({base, base, base:narrow(1, 2, 2), base}, 1)
      local Qd = ml.cat({base:narrow(1, 1, 3), points(5, 3, dtype)}, 1)
      for _, metric in ipairs(METRICS) do
        for k = 1, 14 do check_brute(Qd, Rd, k, {metric = metric}) end
      end
    end
  end)

  it("ties scaled copies under the cosine distance, zero vectors at 1", function()
    local R = ml.array({{1, 2}, {2, 4}, {0, 0}, {-1, -2}, {4, 8}})
    local Q = ml.array({{0.5, 1}, {0, 0}})
    local d, i = check_brute(Q, R, 5, {metric = "cosine"})
    assert.same({{1, 2, 5, 3, 4}, {1, 2, 3, 4, 5}}, i:totable())
    assert.same({{0, 0, 0, 1}, {1, 1, 1, 1, 1}},
                {{table.unpack(d:totable()[1], 1, 4)}, d:totable()[2]})
    assert.is_true(math.abs(d:totable()[1][5] - 2) < 1e-15)
  end)

  it("excludes each query's own row with exclude_self", function()
    for _, dtype in ipairs(DTYPES) do
      local X = points(25, 4, dtype)
      for _, metric in ipairs(METRICS) do
        local _, i = check_brute(X, X, 6, {metric = metric, exclude_self = true})
        for r, row in ipairs(i:totable()) do
          for _, j in ipairs(row) do assert.are_not.equal(r, j) end
        end
      end
      local X2 = ml.cat({X, X}, 1)
      local _, i = check_brute(X2, X2, 1, {exclude_self = true})
      for r, row in ipairs(i:totable()) do
        assert.equal(r <= 25 and r + 25 or r - 25, row[1])
      end
      check_brute(X, X, 24, {exclude_self = true})
    end
  end)

  it("gives the same answer in tiles as in one piece", function()
    for _, dtype in ipairs(DTYPES) do
      local Q, R = points(30, 3, dtype), points(1000, 3, dtype)
      for _, metric in ipairs(METRICS) do
        local d1, i1 = check_brute(Q, R, 5, {metric = metric})
        for _, budget in ipairs({4096, 20000, 1}) do
          local d2, i2 = ml.knn(Q, R, 5, {metric = metric, budget = budget})
          same(i2:totable(), i1:totable())
          same(d2:totable(), d1:totable())
        end
      end
      check_brute(R, R, 3, {budget = 4096, exclude_self = true})
    end
  end)

  it("stays exact where the expanded distances cancel", function()
    -- Points near (1e4, 1e4, ...) in float32 (1e8 in float64) that differ
    -- by a few units in the last place: |q|^2 + |r|^2 - 2 q.r is rounding
    -- noise there, as the naive ranking below shows.
    local cases = {float32 = {1e4, 2^-10}, float64 = {1e8, 2^-26}}
    for _, dtype in ipairs(DTYPES) do
      local center, ulp = cases[dtype][1], cases[dtype][2]
      local function near(m)
        return ml.randint(-20, 21, m, 8):astype(dtype) * ulp + center
      end
      local Q, R = near(20), near(300)
      for _, metric in ipairs({"euclidean", "sqeuclidean"}) do
        check_brute(Q, R, 4, {metric = metric})
        check_brute(Q, R, 4, {metric = metric, budget = 3000})
      end
      check_brute(R, R, 3, {exclude_self = true}) -- retried queries skip themselves
      local _, exact = ml.knn(Q, R, 1)
      local naive = ((Q * Q):sum(2, {keepdim = true}) + (R * R):sum(2):reshape(1, 300)
                     - Q:mm(R:t()) * 2)
      local _, guess = naive:min(2)
      assert.is_true(ml.ne(guess, exact:reshape(20)):sum() > 0)
      -- inner products and cosines of such points carry no cancellation
      -- in their formulas, but the fast ranking is still too coarse
      check_brute(Q, R, 4, {metric = "cosine"})
      check_brute(Q, R, 4, {metric = "ip"})
    end
  end)

  it("takes the filtered and the tiled search alike", function()
    -- method = "filter" keeps the pairs under a sample's limit, "tile"
    -- selects candidate lists from GEMM tiles; both give the brute-force
    -- answer (a GPU filters by default for d <= 64 and k <= 40)
    for _, dtype in ipairs(DTYPES) do
      for _, method in ipairs({"filter", "tile", "auto"}) do
        for _, d in ipairs({1, 17, 65}) do
          local Q, R = points(23, d, dtype), points(401, d, dtype)
          for _, k in ipairs({1, 9, 41, 64}) do check_brute(Q, R, k, {method = method}) end
          check_brute(Q, R, 12, {metric = "cosine", method = method})
          check_brute(Q, R, 5, {metric = "ip", method = method})
          check_brute(R, R, 4, {exclude_self = true, method = method})
        end
        -- a tight cluster and a few far points: the sample's limit of a
        -- far query lets the whole cluster pass, more than a list holds,
        -- and such queries go round again
        local far = points(5, 3, dtype, 9, 10)
        local all = ml.cat({points(1100, 3, dtype, 0, 0.01), far}, 1)
        check_brute(far, all, 6, {method = method})
        check_brute(far, all, 6, {budget = 5000, method = method})
      end
    end
  end)

  it("takes the bounded search for k up to 8", function()
    -- method = "bounded" keeps the pairs within twice the error bound of
    -- each query's k-th smallest fast key (a GPU's default for k <= 8);
    -- a tight cluster overflows its lists and goes round again
    for _, dtype in ipairs(DTYPES) do
      for _, d in ipairs({1, 17, 65}) do
        local Q, R = points(23, d, dtype), points(401, d, dtype)
        for _, k in ipairs({1, 3, 8}) do
          check_brute(Q, R, k, {method = "bounded"})
          check_brute(Q, R, k, {method = "bounded", budget = 5000})
        end
        check_brute(Q, R, 5, {metric = "cosine", method = "bounded"})
        check_brute(Q, R, 2, {metric = "ip", method = "bounded"})
        check_brute(R, R, 4, {exclude_self = true, method = "bounded"})
      end
      local far = points(5, 3, dtype, 9, 10)
      local all = ml.cat({points(1100, 3, dtype, 0, 0.01), far}, 1)
      check_brute(far, all, 6, {method = "bounded"})
      local dup = ml.cat({points(4, 2, dtype), points(4, 2, dtype)}, 1):round()
      check_brute(dup, ml.cat({dup, dup, dup}, 1), 7, {method = "bounded"})
    end
  end)

  it("answers the same with and without TF32 ranking", function()
    local Q, R = points(40, 90, "float32"), points(900, 90, "float32")
    local d1, i1 = ml.knn(Q, R, 7, {tf32 = false})
    local d2, i2 = ml.knn(Q, R, 7, {tf32 = true})
    same(i2:totable(), i1:totable())
    same(d2:totable(), d1:totable())
    check_brute(Q, R, 7)
  end)

  it("handles k up to 2048", function()
    for _, dtype in ipairs(DTYPES) do
      local Q, R = points(3, 2, dtype), points(2100, 2, dtype)
      check_brute(Q, R, 2048)
      check_brute(Q, R, 2048, {metric = "ip"})
    end
  end)

  it("ranks NaN distances last and infinite ones after finite ones", function()
    local nan, inf = 0 / 0, math.huge
    local R = ml.array({{nan, 0}, {1, 1}, {inf, 0}, {0, 0}, {2, 0}})
    local d, i = ml.knn(ml.array({{0, 0}}), R, 5)
    assert.same({{4, 2, 5, 3, 1}}, i:totable())
    same(d:totable(), {{0, math.sqrt(2), 2, inf, nan}})
    d, i = ml.knn(ml.array({{nan, 1}, {0, 0}}), R, 3)
    assert.same({{1, 2, 3}, {4, 2, 5}}, i:totable())
    same(d:totable()[1], {nan, nan, nan})
    check_brute(ml.array({{nan, 1}, {0, 0}, {1, inf}}), R, 5)
    check_brute(ml.array({{nan, 1}, {0, 0}, {1, inf}}), R, 5, {metric = "cosine"})
    check_brute(ml.array({{nan, 1}, {0, 0}, {1, inf}}), R, 5, {metric = "ip"})
  end)

  it("handles empty queries, zero columns and a single reference", function()
    for _, dtype in ipairs(DTYPES) do
      local R = points(6, 3, dtype)
      local d, i = ml.knn(ml.zeros(0, 3, {dtype = dtype}), R, 4)
      assert.same({0, 4}, d.shape)
      assert.same({0, 4}, i.shape)
      assert.equal(dtype, d.dtype)
      for _, method in ipairs({"auto", "filter", "tile", "bounded"}) do
        d, i = ml.knn(ml.zeros(3, 0, {dtype = dtype}), ml.zeros(5, 0, {dtype = dtype}), 2,
                      {method = method})
        assert.same({{1, 2}, {1, 2}, {1, 2}}, i:totable())
        assert.same({{0, 0}, {0, 0}, {0, 0}}, d:totable())
        d, i = ml.knn(ml.zeros(0, 3, {dtype = dtype}), R, 4, {method = method})
        assert.same({0, 4}, d.shape)
      end
      check_brute(points(4, 3, dtype), R:narrow(1, 2, 1), 1)
    end
  end)

  it("promotes dtypes and accepts non-contiguous inputs and tables", function()
    local Q32, R64 = points(6, 3, "float32"), points(8, 3, "float64")
    local d, i = ml.knn(Q32, R64, 3)
    assert.equal("float64", d.dtype)
    local d2, i2 = ml.knn(Q32:astype("float64"), R64, 3)
    same(d:totable(), d2:totable())
    same(i:totable(), i2:totable())
    d = ml.knn(ml.array({{0, 0}}), ml.array({{3, 4}, {1, 0}}), 1)
    assert.equal("float64", d.dtype) -- int64 inputs compute in float64
    assert.same({{1}}, d:totable())
    d, i = ml.knn({{0, 0}}, {{3, 4}, {1, 0}}, 2, nil)
    assert.same({{1, 5}}, d:totable())
    assert.same({{2, 1}}, i:totable())
    -- transposed and strided views
    local Qt = points(3, 7, "float64"):t()     -- 7 x 3, not contiguous
    local Rs = points(20, 3, "float64")
    local Rv = Rs:narrow(1, 5, 12)
    local Rw = ml.cat({Rs, Rs}, 2):narrow(2, 2, 3) -- rows of stride 6
    assert.is_false(Qt:is_contiguous())
    assert.is_false(Rw:is_contiguous())
    check_brute(Qt, Rv, 4)
    check_brute(Qt, Rw, 4, {metric = "cosine"})
    -- the method form
    local a, b = Qt:knn(Rv, 2)
    local c, e = ml.knn(Qt:contiguous(), Rv:contiguous(), 2)
    same(a:totable(), c:totable())
    same(b:totable(), e:totable())
  end)

  it("reports bad arguments", function()
    local Q, R = ml.zeros(3, 2), ml.zeros(5, 2)
    raises(function() ml.knn(Q, R, 6) end, "knn: k = 6 exceeds the 5 reference points")
    raises(function() ml.knn(Q, R, 0) end, "knn: k = 0 must be at least 1")
    raises(function() ml.knn(Q, R, -2) end, "knn: k = -2 must be at least 1")
    raises(function() ml.knn(R, R, 5, {exclude_self = true}) end,
           "knn: k = 5 exceeds the 4 reference points other than the query")
    raises(function() ml.knn(Q, R, 1, {exclude_self = true}) end,
           "knn: exclude_self needs the queries to be the references (got 3 and 5 rows)")
    raises(function() ml.knn(Q, ml.zeros(5, 3), 1) end,
           "knn: queries have 2 columns but references 3")
    raises(function() ml.knn(ml.zeros(2), R, 1) end,
           "knn: queries and references must be matrices (got 2 and 5x2)")
    raises(function() ml.knn(Q, ml.zeros(2, 5, 2), 1) end,
           "knn: queries and references must be matrices (got 3x2 and 2x5x2)")
    raises(function() ml.knn(Q, R, 1, {metric = "manhattan"}) end,
           "knn: unknown metric 'manhattan' (euclidean, sqeuclidean, cosine, ip or hamming)")
    raises(function() ml.knn(Q, R, 1, {budget = 0}) end,
           "knn: budget = 0 bytes must be positive")
    raises(function() ml.knn(Q, R) end, "knn: expected (queries, refs, k")
    raises(function() ml.knn(Q, ml.zeros(0, 2), 1) end,
           "knn: k = 1 exceeds the 0 reference points")
    raises(function() ml.knn(Q, R, 1, {method = "kd_tree"}) end,
           "knn: unknown method 'kd_tree' (auto, filter, tile or bounded)")
    raises(function() ml.knn(ml.zeros(9, 2), ml.zeros(9, 2), 9, {method = "bounded"}) end,
           "knn: the bounded search takes k up to 8, not 9")
    local X = ml.zeros(70, 2)
    raises(function() ml.knn(X, X, 65, {method = "filter"}) end,
           "knn: the filtered search takes k up to 64 (63 with exclude_self), not 65")
    raises(function() ml.knn(X, X, 64, {method = "filter", exclude_self = true}) end,
           "knn: the filtered search takes k up to 64 (63 with exclude_self), not 64")
  end)
end)

-- scikit-learn's KNeighborsClassifier on the committed fixtures (see
-- tests/fixtures/knn/make.py): predictions exactly, probabilities within a
-- few units in the last place (their normalising sum adds the classes' votes
-- in an order that depends on the device, not NumPy's pairwise order).
local CASES = {
  {"mixed", {1, 4, 5}}, {"ties", {2, 4, 6}}, {"labels", {3, 7}}, {"many", {12}},
}

describe("KNNClassifier", function()
  local function load(name) return ml.load_npy(FIX .. name .. ".npy") end

  it("matches scikit-learn's predictions and probabilities", function()
    for _, case in ipairs(CASES) do
      local name = case[1]
      local X, y = load(name .. "_X"), load(name .. "_y")
      for _, k in ipairs(case[2]) do
        local Q = load(("%s_k%d_Q"):format(name, k))
        for _, weights in ipairs({"uniform", "distance"}) do
          local stem = ("%s_k%d_%s"):format(name, k, weights)
          local clf = ml.KNNClassifier{k = k, weights = weights}:fit(X, y)
          local pred = clf:predict(Q)
          assert.equal("int64", pred.dtype)
          same(pred:totable(), load(stem .. "_pred"):totable())
          assert.array_near(clf:predict_proba(Q), load(stem .. "_proba"), 1e-15)
          -- float32 data: the same votes (the coordinates are exact)
          local clf32 = ml.KNNClassifier{k = k, weights = weights}
            :fit(X:astype("float32"), y)
          same(clf32:predict(Q:astype("float32")):totable(), load(stem .. "_pred"):totable())
        end
      end
    end
  end)

  it("breaks vote ties toward the smallest label", function()
    local X = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {0, 3}}
    local clf = ml.KNNClassifier{k = 4}:fit(X, {9, -4, 9, -4, 2})
    assert.same({-4}, clf:predict({{0, 0}}):totable())
    assert.same({-4, 2, 9}, clf.classes:totable())
    assert.same({{0.5, 0, 0.5}}, clf:predict_proba({{0, 0}}):totable())
    clf = ml.KNNClassifier{k = 4, weights = "distance"}:fit(X, {9, -4, 9, -4, 2})
    assert.same({-4}, clf:predict({{0, 0}}):totable())
  end)

  it("lets only zero-distance neighbours vote under distance weights", function()
    local X = {{0, 0}, {0, 0}, {0.1, 0}, {0, 0.1}, {0.1, 0.1}}
    local y = {5, 6, 7, 7, 7}
    local clf = ml.KNNClassifier{k = 5, weights = "distance"}:fit(X, y)
    assert.same({5, 7}, clf:predict({{0, 0}, {0.1, 0}}):totable())
    assert.same({{0.5, 0.5, 0}, {0, 0, 1}}, clf:predict_proba({{0, 0}, {0.1, 0}}):totable())
    local uniform = ml.KNNClassifier{k = 5}:fit(X, y)
    assert.same({7}, uniform:predict({{0, 0}}):totable())
  end)

  it("scores, chains fit, takes tables, arrays and float labels", function()
    local X = ml.array({{0}, {1}, {10}, {11}})
    local clf = ml.KNNClassifier{k = 1}
    assert.equal(clf, clf:fit(X, ml.array({1.0, 1.0, 2.0, 2.0})))
    assert.same({1, 2}, clf.classes:totable())
    assert.equal(0.5, clf:score({{0.2}, {10.5}, {0.4}, {9}}, {1, 1, 2, 2}))
    assert.equal(1, clf:score(ml.array({{0.2}, {10.5}}), ml.array({1, 2})))
    local d, i = clf:kneighbors({{2}})
    assert.same({{1}}, d:totable())
    assert.same({{2}}, i:totable())
    local cos = ml.KNNClassifier{k = 1, metric = "cosine"}:fit({{1, 0}, {0, 1}}, {0, 1})
    assert.same({1, 0}, cos:predict({{1, 5}, {5, 1}}):totable())
    assert.same({0, 2}, clf:predict_proba(ml.zeros(0, 1)).shape)
    assert.same({0}, clf:predict(ml.zeros(0, 1)).shape)
  end)

  it("reports bad arguments", function()
    raises(function() ml.KNNClassifier{k = 0} end, "KNNClassifier: k must be a positive integer (got 0)")
    raises(function() ml.KNNClassifier{k = 2.5} end, "KNNClassifier: option 'k' must be an integer, not 2.5")
    raises(function() ml.KNNClassifier{weights = "gauss"} end,
           'KNNClassifier: weights must be "uniform" or "distance" (got gauss)')
    raises(function() ml.KNNClassifier{metric = "l1"} end, "KNNClassifier: unknown metric l1")
    local clf = ml.KNNClassifier{k = 3}
    raises(function() clf:predict({{1}}) end, "kneighbors: the classifier is not fitted")
    raises(function() clf:fit({{1}, {2}}, {1}) end, "fit: 2 samples but 1 labels")
    raises(function() clf:fit({{1}, {2}}, {1.5, 2}) end, "fit: labels must be integers")
    raises(function() clf:fit(ml.zeros(2), {1, 2}) end, "fit: X must be a matrix")
    clf:fit({{1}, {2}}, {1, 2})
    raises(function() clf:predict({{1}}) end, "knn: k = 3 exceeds the 2 reference points")
    clf = ml.KNNClassifier{k = 1}:fit({{1}, {2}}, {1, 2})
    raises(function() clf:score({{1}}, {1, 2}) end, "score: 1 queries but 2 labels")
  end)
end)
