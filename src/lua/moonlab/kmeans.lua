-- k-means clustering by Lloyd's algorithm, with the semantics of
-- scikit-learn's KMeans (algorithm "lloyd"). KMeans is a class: a table of
-- methods that constructs an instance when called.
--
--   local km = ml.KMeans{n_clusters = 10, seed = 1}:fit(X)
--   km.cluster_centers, km.labels, km.inertia, km.n_iter
--   km:predict(Q), km:transform(Q), km:score(Q), km:fit_predict(X)
--
-- As scikit-learn: the samples are centered on their mean first; the
-- tolerance is tol times the mean of the per-feature variances; a run
-- stops when the labels repeat (strict convergence) or when the summed
-- squared shift of the centers is at most the tolerance, and then (unless
-- strict) assigns the samples once more to the final centers; the best of
-- n_init runs by inertia wins (a run whose labels are the best run's up
-- to a renaming does not replace it). A cluster left empty takes the
-- sample farthest from its center (the farthest samples in order of
-- distance, one per empty cluster, taken out of their clusters), unless
-- every sample sits on its center; a cluster still empty takes the
-- center of the largest cluster.
--
-- The assignment is ml.knn(X, centers, 1): exact squared distances, ties
-- to the lower center. The new centers are per-label sums of rows
-- (segment_sums: index_add for the sums, bincount for the counts). Labels
-- are 1-based int64.
--
-- With distributed = true each rank of an ml.dist job fits its shard of
-- the rows (consecutive rows of the whole, in rank order): the per-label
-- counts and sums, the inertia, the mean and variances and the test of
-- repeated labels are all-reduced, and the initialisation runs on the
-- all-gathered rows, so that every rank gets the one-process fit of the
-- whole and the labels of its own rows (M.group).
local ml = require "moonlab"
local check_options = require("moonlab.options").check

local M = {}

local KMeans = {}
KMeans.__index = KMeans

local function positive_integer(v)
  return math.type(v) == "integer" and v >= 1
end

local function new(_, opts)
  check_options("KMeans", opts)
  opts = opts or {}
  local init = opts.init or "k-means++"
  if type(init) == "string" then
    if init ~= "k-means++" and init ~= "random" then
      error(("KMeans: init must be \"k-means++\", \"random\" or an array "
             .. "of centers (got \"%s\")"):format(init), 2)
    end
  else
    init = ml.is_array(init) and init or ml.array(init)
    if init.ndim ~= 2 then
      error(("KMeans: init must be a matrix of centers (got %d "
             .. "dimensions)"):format(init.ndim), 2)
    end
  end
  local k = opts.n_clusters and math.tointeger(opts.n_clusters)
  if type(init) ~= "string" then
    if k and k ~= init:size(1) then
      error(("KMeans: init has %d centers but n_clusters is %d")
            :format(init:size(1), k), 2)
    end
    k = init:size(1)
  end
  k = k or 8
  if not positive_integer(k) then
    error(("KMeans: n_clusters must be a positive integer (got %s)")
          :format(tostring(k)), 2)
  end
  local n_init = opts.n_init or "auto"
  if n_init == "auto" then
    n_init = init == "random" and 10 or 1
  else
    n_init = math.tointeger(n_init)
    if not positive_integer(n_init) then
      error(("KMeans: n_init must be a positive integer or \"auto\" "
             .. "(got %s)"):format(tostring(opts.n_init)), 2)
    end
    if type(init) ~= "string" then n_init = 1 end
  end
  local max_iter = math.tointeger(opts.max_iter or 300)
  if not positive_integer(max_iter) then
    error(("KMeans: max_iter must be a positive integer (got %s)")
          :format(tostring(opts.max_iter)), 2)
  end
  local tol = opts.tol or 1e-4
  if not (tol >= 0) then
    error(("KMeans: tol must be >= 0 (got %s)"):format(tostring(tol)), 2)
  end
  return setmetatable({n_clusters = k, init = init, n_init = n_init,
                       max_iter = max_iter, tol = tol, seed = opts.seed,
                       distributed = opts.distributed or false},
                      KMeans)
end

M.KMeans = setmetatable(KMeans, {__call = new})

-- X (an array or a table, made on like's device) as a float matrix
-- (integers become float64) whose values are finite; op names the method
-- in messages, raised at level.
function M.samples(X, op, level, like)
  if not ml.is_array(X) then
    X = ml.array(X, {device = like and like.device})
  end
  if X.ndim ~= 2 then
    error(("%s: X must be a matrix (got %d dimensions)"):format(op, X.ndim),
          level)
  end
  if X.dtype ~= "float32" and X.dtype ~= "float64" then
    X = X:astype("float64")
  end
  if X:numel() > 0 and not X:isfinite():all() then
    error(op .. ": X contains NaN or infinity", level)
  end
  return X
end

local function identity(x) return x end

-- The reductions of a one-process fit, over the rows of X itself.
local LOCAL = {
  rank = 0,
  sum = identity,
  max = identity,
  all = identity,
  gather = identity,
  center = function(_, X)
    return X:mean(1, {keepdim = true}):astype(X.dtype)
  end,
  var = function(_, X) return X:var(1) end,
  mean = function(_, x) return x:mean() end,
  rows = function(_, X, index) return X:index_select(1, index) end,
}
LOCAL.__index = LOCAL
M.LOCAL = LOCAL

-- The reductions of a distributed fit: X is this rank's shard of the
-- rows, and each reduction runs over every rank's.
local DIST = {}
DIST.__index = DIST

function DIST.sum(x) return ml.dist.all_reduce(x) end
function DIST.max(v) return ml.dist.all_reduce(v, {op = "max"}) end
function DIST.all(b)
  return ml.dist.all_reduce(b and 1 or 0, {op = "min"}) == 1
end
function DIST.gather(x) return ml.dist.all_gather(x) end

-- The column means (1 x d, in X's dtype) of all ranks' rows; self is the
-- group.
function DIST:center(X)
  return (self.sum(X:sum(1, {keepdim = true})) / self.n):astype(X.dtype)
end

-- The column variances (d) of all ranks' rows, about their mean.
function DIST:var(X)
  local dev = X - self:center(X)
  return self.sum((dev * dev):sum(1)) / self.n
end

-- The mean of the values of all ranks' x (a number).
function DIST:mean(x) return self.sum(x:sum()) / self.n end

-- The rows of the whole at the 1-based indices index (an int64 array),
-- each from the rank that holds it.
function DIST:rows(X, index)
  local at = index - self.offset
  local mine = ml.logical_and(ml.ge(at, 1), ml.le(at, X:size(1)))
  local rows = X:index_select(1, at:clamp(1, X:size(1)))
  return self.sum(rows * mine:reshape(-1, 1):astype(X.dtype))
end

-- Sets every rank's generator to rank 0's, so that the ranks of a
-- distributed fit without a seed draw alike.
function M.align_generators()
  local s = ml.get_rng_state()
  ml.set_rng_state({seed = ml.dist.broadcast(s.seed),
                    offset = ml.dist.broadcast(s.offset)})
end

-- The rows of a fit on X (op names the method in messages, raised at
-- level): n (the rows of all ranks), offset (this rank's first row less
-- one), rank, and the reductions over them (sum, max and all of arrays,
-- numbers or booleans, gather, center, var, mean and rows), identities
-- for a one-process fit, collectives of ml.dist for a distributed one.
function M.group(X, distributed, op, level)
  local n = X:size(1)
  if not distributed then
    return setmetatable({n = n, offset = 0}, LOCAL)
  end
  local dist = ml.dist
  local rank = dist.rank()
  local shapes = dist.all_gather(ml.array({{n, X:size(2)}},
                                          {dtype = "int64"}))
  local rows, d = shapes:select(2, 1), shapes:select(2, 2)
  if rows:min() < 1 then
    error(("%s: distributed: rank %d holds no samples (each rank needs "
           .. "one at least)"):format(op, rows:argmin() - 1), level)
  end
  if d:min() ~= d:max() then
    error(("%s: distributed: the ranks' samples have %d to %d features")
          :format(op, d:min(), d:max()), level)
  end
  return setmetatable({n = rows:sum(), rank = rank, distributed = true,
                       offset = rows:narrow(1, 1, rank):sum()}, DIST)
end

-- Runs f(...) with ml's generator restarted on seed, then puts the
-- generator back where it was, also when f raises; without a seed, f
-- draws from the generator as it is.
function M.seeded(seed, f, ...)
  if seed == nil then return f(...) end
  local state = ml.get_rng_state()
  ml.seed(seed)
  local result = table.pack(pcall(f, ...))
  ml.set_rng_state(state)
  if not result[1] then error(result[2], 0) end
  return table.unpack(result, 2, result.n)
end

-- The number of rows with each label 1..K (X's dtype: bincount's integer
-- counts, not an index_add of ones, whose thread for a large cluster
-- walks it alone) and their sums (K x d): segment sums by index_add, in
-- double and in row order.
function M.segment_sums(X, labels, K)
  local like = {dtype = X.dtype, device = X.device}
  local counts = ml.bincount(labels, {minlength = K + 1}):narrow(1, 2, K):astype(X.dtype)
  return counts, ml.zeros(K, X:size(2), like):index_add(1, labels, X)
end

-- Squared Euclidean distances (m x n) of A's rows to X's rows, from the
-- expansion |a|^2 + |x|^2 - 2 a.x clamped at 0 (as scikit-learn's
-- k-means++); xsq holds |x|^2 (1 x n).
local function sqdist(A, X, xsq)
  local asq = (A * A):sum(2, {keepdim = true})
  return ml.maximum(asq + xsq - A:mm(X:t()) * 2, 0)
end

-- scikit-learn's greedy k-means++ (2 + floor(log K) candidates a step,
-- drawn in proportion to the squared distance to the nearest center so
-- far; the candidate that lowers the summed distances most is kept).
-- Returns the 1-based indices (a Lua table) of the chosen rows of X.
function M.kmeans_plusplus(X, K)
  local n = X:size(1)
  local dev = X.device
  local trials = 2 + math.floor(math.log(K))
  local xsq = (X * X):sum(2):reshape(1, n)
  local chosen = {ml.randint(1, n + 1, 1, {device = dev})[1]}
  local closest = sqdist(X:narrow(1, chosen[1], 1), X, xsq)
  local pot = closest:sum()
  for c = 2, K do
    local r = ml.rand(trials, 1, {dtype = "float64", device = dev}) * pot
    local run = closest:astype("float64"):cumsum(2)
    local cand = (ml.lt(run, r):sum(2) + 1):clamp(1, n):reshape(trials)
    local dist = ml.minimum(closest, sqdist(X:index_select(1, cand), X, xsq))
    local pots = dist:sum(2)
    local best = pots:argmin()
    pot = pots[best]
    closest = dist:narrow(1, best, 1)
    chosen[c] = cand[best]
  end
  return chosen
end

-- The initial centers (K x d) of the centered samples X (of all ranks,
-- gathered, for group g); init0 is the given init array, centered.
local function initial_centers(self, X, init0, g)
  local K = self.n_clusters
  if self.init == "k-means++" then
    local all = g.gather(X)
    return all:index_select(1, M.kmeans_plusplus(all, K))
  elseif self.init == "random" then
    local perm = ml.randperm(g.n, {device = X.device})
    return g:rows(X, perm:narrow(1, 1, K))
  end
  return init0
end

-- The centers after one Lloyd step: the means of the labels' rows, empty
-- clusters handled as scikit-learn's _relocate_empty_clusters_dense and
-- _average_centers do (d2: each sample's squared distance to its
-- center); g: the group of the fit's rows.
local function update(X, labels, d2, K, g)
  local counts, sums = M.segment_sums(X, labels, K)
  counts, sums = g.sum(counts), g.sum(sums)
  local n_empty = ml.eq(counts, 0):sum()
  if n_empty == 0 then return sums / counts:reshape(K, 1) end
  if g.max(d2:max()) > 0 then
    local empty = ml.nonzero(ml.eq(counts, 0))
    local _, far = g.gather(d2):topk(n_empty)
    local rows = g:rows(X, far)
    local moved, out = M.segment_sums(rows,
                                      g.gather(labels):index_select(1, far), K)
    counts, sums = counts - moved, sums - out
    counts[empty] = 1
    sums[empty] = rows
  end
  local filled = ml.gt(counts, 0):reshape(K, 1)
  local centers = sums / ml.where(filled, counts:reshape(K, 1), 1)
  local largest = centers:narrow(1, counts:argmax(), 1)
  return ml.where(filled, centers, largest)
end

-- One Lloyd step from centers C (K x d) on the samples X (of group g,
-- by default X itself): the new centers and the labels (1-based, n) that
-- gave them.
function M.lloyd_step(X, C, g)
  local d2, index = ml.knn(X, C, 1, {metric = "sqeuclidean"})
  local labels = index:reshape(X:size(1))
  return update(X, labels, d2:reshape(X:size(1)), C:size(1), g or LOCAL),
         labels
end

-- One run of Lloyd's algorithm from centers C on the centered samples X:
-- labels, inertia, centers, n_iter (scikit-learn's _kmeans_single_lloyd).
local function lloyd(X, C, max_iter, tol, g)
  local n = X:size(1)
  local labels, previous, strict, n_iter
  for i = 1, max_iter do
    n_iter = i
    local new
    new, labels = M.lloyd_step(X, C, g)
    local shift = ((new - C) ^ 2):sum()
    C = new
    if previous and g.all(ml.eq(labels, previous):all()) then
      strict = true
      break
    elseif shift <= tol then
      break
    end
    previous = labels
  end
  if not strict then
    local _, index = ml.knn(X, C, 1, {metric = "sqeuclidean"})
    labels = index:reshape(n)
  end
  local inertia = g.sum(((X - C:index_select(1, labels)) ^ 2):sum())
  return labels, inertia, C, n_iter
end

-- Whether labels a map to labels b by a function of the label (the test
-- of scikit-learn's _is_same_clustering).
local function same_clustering(a, b, K)
  local map = ml.zeros(K, {dtype = "int64", device = a.device}):scatter(1, a, b)
  return ml.eq(map:index_select(1, a), b):all()
end

local function fit(self, X, init0, g)
  local K = self.n_clusters
  local mean = g:center(X)
  local Xc = X - mean
  if init0 then init0 = init0 - mean end
  local tol = self.tol * g:var(Xc):mean()
  local best
  for _ = 1, self.n_init do
    local labels, inertia, C, n_iter =
      lloyd(Xc, initial_centers(self, Xc, init0, g), self.max_iter, tol, g)
    if not best or (inertia < best.inertia
                    and not same_clustering(g.gather(labels),
                                            g.gather(best.labels), K)) then
      best = {labels = labels, inertia = inertia, centers = C, n_iter = n_iter}
    end
  end
  self.cluster_centers = best.centers + mean
  self.labels, self.inertia = best.labels, best.inertia
  self.n_iter = best.n_iter
  return self
end

function KMeans:fit(X)
  X = M.samples(X, "KMeans:fit", 3)
  local K = self.n_clusters
  local g = M.group(X, self.distributed, "KMeans:fit", 2)
  local n, d = g.n, X:size(2)
  if n < K then
    error(("KMeans:fit: %d samples but n_clusters = %d (at least as many "
           .. "samples as clusters)"):format(n, K), 2)
  end
  local init0
  if type(self.init) ~= "string" then
    if self.init:size(2) ~= d then
      error(("KMeans:fit: init has %d features but X has %d")
            :format(self.init:size(2), d), 2)
    end
    init0 = self.init:to(X.device):astype(X.dtype)
  end
  if self.distributed and self.seed == nil then M.align_generators() end
  return M.seeded(self.seed, fit, self, X, init0, g)
end

function KMeans:fit_predict(X)
  return self:fit(X).labels
end

local function fitted(self, X, op)
  if not self.cluster_centers then
    error(op .. ": the model is not fitted", 3)
  end
  X = M.samples(X, op, 4, self.cluster_centers)
  local d = self.cluster_centers:size(2)
  if X:size(2) ~= d then
    error(("%s: X has %d features but the model has %d")
          :format(op, X:size(2), d), 3)
  end
  return X, self.cluster_centers:astype(X.dtype)
end

function KMeans:predict(X)
  local C
  X, C = fitted(self, X, "KMeans:predict")
  local _, index = ml.knn(X, C, 1)
  return index:reshape(X:size(1))
end

function KMeans:transform(X)
  local C
  X, C = fitted(self, X, "KMeans:transform")
  local K = C:size(1)
  local dist, index = ml.knn(X, C, K)
  return ml.zeros(X:size(1), K, {dtype = dist.dtype, device = dist.device})
           :scatter(2, index, dist)
end

function KMeans:score(X)
  local C
  X, C = fitted(self, X, "KMeans:score")
  local d2 = ml.knn(X, C, 1, {metric = "sqeuclidean"})
  return -d2:sum()
end

return M
