-- k-nearest-neighbour classification over ml.knn, with the semantics of
-- scikit-learn's KNeighborsClassifier (brute force). KNNClassifier is a
-- class: a table of methods that constructs an instance when called.
--
--   local clf = ml.KNNClassifier{k = 5, weights = "uniform", metric = "euclidean"}
--   clf:fit(X, y)            -- X n x d, y n integer labels; returns clf
--   clf:predict(Q)           -- int64 labels of Q's rows
--   clf:predict_proba(Q)     -- m x #classes, columns in clf.classes order
--   clf:score(Q, y)          -- fraction of Q's rows predicted as y
--   clf:kneighbors(Q)        -- dist, index (ml.knn's results)
--
-- Labels are any integers (a table or an array); clf.classes holds the
-- distinct ones in ascending order. Each neighbour votes for its label
-- with weight 1 ("uniform") or 1 / distance ("distance"; if some
-- neighbours are at distance 0, they alone vote, with weight 1 each). The
-- votes are summed neighbour by neighbour, nearest first; predict_proba
-- divides them by their total; predict takes the label with the most
-- votes, the smallest one among equals. opts.budget passes to ml.knn.
local ml = require "moonlab"
local check_options = require("moonlab.options").check

local M = {}

local Classifier = {}
Classifier.__index = Classifier

local METRICS = {euclidean = true, sqeuclidean = true, cosine = true, ip = true}

local function new(_, opts)
  check_options("KNNClassifier", opts)
  opts = opts or {}
  local k = opts.k or 5
  if math.type(k) ~= "integer" or k < 1 then
    error(("KNNClassifier: k must be a positive integer (got %s)"):format(tostring(k)), 2)
  end
  local weights = opts.weights or "uniform"
  if weights ~= "uniform" and weights ~= "distance" then
    error(("KNNClassifier: weights must be \"uniform\" or \"distance\" (got %s)")
          :format(tostring(weights)), 2)
  end
  local metric = opts.metric or "euclidean"
  if not METRICS[metric] then
    error(("KNNClassifier: unknown metric %s (euclidean, sqeuclidean, cosine or ip)")
          :format(tostring(metric)), 2)
  end
  return setmetatable({k = k, weights = weights, metric = metric, budget = opts.budget},
                      Classifier)
end

M.KNNClassifier = setmetatable(Classifier, {__call = new})

local function as_array(x, like)
  if ml.is_array(x) then return x end
  return ml.array(x, {device = like and like.device})
end

-- Integer labels as int64 (floats must hold integers).
local function as_labels(y, like, op)
  y = as_array(y, like)
  if y.ndim ~= 1 then
    error(("%s: labels must be a vector (got %d dimensions)"):format(op, y.ndim), 3)
  end
  if y.dtype == "float32" or y.dtype == "float64" then
    if not ml.eq(y, y:floor()):all() then
      error(op .. ": labels must be integers", 3)
    end
  end
  return y:astype("int64")
end

function Classifier:fit(X, y)
  X = as_array(X)
  if X.ndim ~= 2 then
    error(("fit: X must be a matrix (got %d dimensions)"):format(X.ndim), 2)
  end
  y = as_labels(y, X, "fit")
  local n = X:size(1)
  if y:size(1) ~= n then
    error(("fit: %d samples but %d labels"):format(n, y:size(1)), 2)
  end
  if n == 0 then error("fit: no samples", 2) end
  -- The distinct labels in ascending order, and each sample's 1-based
  -- position among them: where the sorted labels change, the count rises.
  local sorted, order = y:sort()
  local first = ml.ones(n, {dtype = "uint8", device = y.device})
  if n > 1 then
    first[{{2, n}}] = ml.ne(sorted:narrow(1, 2, n - 1), sorted:narrow(1, 1, n - 1))
  end
  local codes = ml.zeros(n, {dtype = "int64", device = y.device})
  codes[order] = first:cumsum(1)
  self.X, self.codes = X, codes
  self.classes = sorted:masked_select(first)
  return self
end

function Classifier:kneighbors(Q)
  if not self.X then error("kneighbors: the classifier is not fitted", 2) end
  return ml.knn(as_array(Q, self.X), self.X, self.k,
                {metric = self.metric, budget = self.budget})
end

-- The m x #classes votes (float64) of Q's rows.
local function votes(self, Q)
  local dist, index = self:kneighbors(Q)
  local m, k = index:size(1), index:size(2)
  local ncls = self.classes:size(1)
  local labels = self.codes:index_select(1, index:reshape(-1)):reshape(m, k)
  local weights
  if self.weights == "distance" then
    weights = 1 / dist
    local zero = weights:isinf()
    weights = ml.where(zero:any(2, {keepdim = true}), zero:astype(dist.dtype), weights)
    weights = weights:astype("float64")
  end
  local cls = ml.arange(1, ncls + 1, {dtype = "int64", device = index.device}):reshape(1, ncls)
  local v = ml.zeros(m, ncls, {device = index.device})
  for j = 1, k do
    local vote = ml.eq(labels:narrow(2, j, 1), cls)
    if weights then vote = vote * weights:narrow(2, j, 1) end
    v = v + vote
  end
  return v
end

function Classifier:predict_proba(Q)
  local v = votes(self, Q)
  local total = v:sum(2, {keepdim = true})
  return v / ml.where(ml.eq(total, 0), 1, total)
end

function Classifier:predict(Q)
  local v = votes(self, Q)
  if v:size(1) == 0 then
    return ml.zeros(0, {dtype = "int64", device = v.device})
  end
  local _, best = v:max(2)
  return self.classes:index_select(1, best)
end

function Classifier:score(Q, y)
  local p = self:predict(Q)
  y = as_labels(y, p, "score")
  if y:size(1) ~= p:size(1) then
    error(("score: %d queries but %d labels"):format(p:size(1), y:size(1)), 2)
  end
  return ml.eq(p, y):sum() / p:size(1)
end

return M
