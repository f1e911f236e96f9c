-- The inputs of the multi-process specs (tests/dist_spec.lua), made alike
-- by every rank of an mpirun job (tests/dist/*.lua) and by the spec that
-- checks the job's results in one process.
local ml = require "moonlab"

local D = {}

-- Rank r's array for the collectives: 4 x 5 float64 of its own.
function D.x(r)
  return ml.arange(20, {dtype = "float64"}):reshape(4, 5) * (r + 1) - r * 7
end

-- Rank r's input of reduce_scatter in a job of size ranks: the arrays
-- D.x(r) to D.x(r + size - 1) stacked, a 4-row block a rank.
function D.scatter_input(r, size)
  local parts = {}
  for j = 0, size - 1 do parts[j + 1] = D.x(r + j) end
  return ml.cat(parts)
end

-- Rank r's int32 array.
function D.ints(r)
  return ml.arange(6, {dtype = "int32"}) + r * 3 - 4
end

-- Rank r's shard for all_gather: r + 1 rows of 3.
function D.rows(r)
  return ml.full({r + 1, 3}, r + 0.5)
end

-- The rows 1..n split into size consecutive shards, as even as can be:
-- the first row and the number of rows of rank r.
function D.shard(n, r, size)
  local base, extra = n // size, n % size
  local first = r * base + math.min(r, extra) + 1
  return first, base + (r < extra and 1 or 0)
end

-- Samples for the fits: three blobs in 4 dimensions, 301 rows.
function D.blobs()
  ml.seed(7)
  local centers = ml.array({{0, 0, 0, 0}, {6, 6, 0, 0}, {0, 6, 6, 3}})
  local labels = ml.randint(1, 4, 301)
  return centers:index_select(1, labels) + ml.randn(301, 4)
end

-- The distributed k-means fits, {name, options} in the order every rank
-- runs them: k-means++, random inits (n_init 3), an init array that
-- leaves a cluster empty, and no seed (every rank's generator is then
-- rank 0's).
function D.kmeans_cases()
  return {
    {"plusplus", {n_clusters = 3, seed = 3}},
    {"random", {n_clusters = 4, init = "random", n_init = 3, seed = 4}},
    {"empty", {init = {{0, 0, 0, 0}, {6, 6, 0, 0}, {0, 6, 6, 3},
                       {60, 60, 60, 60}}}},
    {"unseeded", {n_clusters = 3}},
  }
end

-- The distributed mixture fits, {name, options}.
function D.mixture_cases()
  return {
    {"full", {n_components = 3, seed = 1}},
    {"diag", {n_components = 3, covariance_type = "diag", seed = 2}},
    {"tied", {n_components = 3, covariance_type = "tied",
              init_params = "k-means++", seed = 3}},
    {"spherical", {n_components = 4, covariance_type = "spherical",
                   init_params = "random_from_data", seed = 4}},
    {"random_resp", {n_components = 2, init_params = "random", seed = 5,
                     max_iter = 20}},
  }
end

-- References and queries of the sharded kNN, with duplicated rows so
-- that ties across shards occur.
function D.knn()
  ml.seed(11)
  local refs = ml.randint(0, 4, 97, 3):astype("float64")
  local queries = ml.randint(0, 4, 13, 3):astype("float64")
  return refs, queries
end

-- The matrices of the distributed product: 37 x 29 times 29 x 23.
function D.matrices()
  ml.seed(5)
  return ml.randn(37, 29), ml.randn(29, 23)
end

return D
