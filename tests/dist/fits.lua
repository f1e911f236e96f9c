-- Distributed ml.KMeans and ml.GaussianMixture under mpirun
-- (tests/dist_spec.lua): each rank fits its shard of the rows of
-- tests/dist/data.lua and saves what it got into the directory arg[1].
package.path = "tests/dist/?.lua;" .. package.path
local D = require "data"
local dist = ml.dist
local out = arg[1]
local r, size = dist.init()

local function save(name, x)
  ml.save_npy(("%s/%s_%d.npy"):format(out, name, r), x)
end

local X = D.blobs()
local first, len = D.shard(X:size(1), r, size)
local shard = X:narrow(1, first, len)

for _, case in ipairs(D.kmeans_cases()) do
  local name, opts = case[1], case[2]
  opts.distributed = true
  if name == "unseeded" then ml.seed(100 + r) end
  local km = ml.KMeans(opts):fit(shard)
  save(name .. "_centers", km.cluster_centers)
  save(name .. "_labels", km.labels)
  save(name .. "_stats", ml.array({km.inertia, km.n_iter}))
end

for _, case in ipairs(D.mixture_cases()) do
  local name, opts = case[1], case[2]
  opts.distributed = true
  local gm = ml.GaussianMixture(opts)
  save(name .. "_labels", gm:fit_predict(shard))
  save(name .. "_bounds", ml.array(gm.lower_bounds))
  save(name .. "_means", gm.means)
  save(name .. "_covariances", gm.covariances)
end

-- a rank without rows is an error on every rank
local ok, err = pcall(function()
  ml.KMeans{n_clusters = 2, distributed = true}
    :fit(r == 0 and X:narrow(1, 1, 0) or shard)
end)
local f = assert(io.open(("%s/no_rows_%d.txt"):format(out, r), "w"))
f:write(ok and "no error" or tostring(err))
f:close()
