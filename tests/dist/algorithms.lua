-- The sharded algorithms under mpirun (tests/dist_spec.lua): each rank
-- takes its shard of the inputs of tests/dist/data.lua and saves its
-- results into the directory arg[1].
package.path = "tests/dist/?.lua;" .. package.path
local D = require "data"
local dist = ml.dist
local out = arg[1]
local r, size = dist.init()

local function save(name, x)
  ml.save_npy(("%s/%s_%d.npy"):format(out, name, r), x)
end

-- sharded kNN
local refs, queries = D.knn()
local first, len = D.shard(refs:size(1), r, size)
local d, index = dist.knn(queries, refs:narrow(1, first, len), 7)
save("knn_dist", d)
save("knn_index", index)

-- SUMMA on the squarest grid, and 2.5D where the job allows it
local A, B = D.matrices()
local function product(opts, name)
  local pr, pc, c = opts.grid[1], opts.grid[2], opts.replication or 1
  local r2 = r % (pr * pc)
  local i, j = r2 // pc, r2 % pc
  local m, k, n = A:size(1), A:size(2), B:size(2)
  local fm, lm = dist.part(m, pr, i)
  local fn, ln = dist.part(n, pc, j)
  local fa, la = dist.part(k, pc, j)
  local fb, lb = dist.part(k, pr, i)
  opts.m, opts.k, opts.n = m, k, n
  local C = dist.mm(A:narrow(1, fm, lm):narrow(2, fa, la),
                    B:narrow(1, fb, lb):narrow(2, fn, ln), opts)
  save(name, C)
  ml.save_npy(("%s/%s_place_%d.npy"):format(out, name, r),
              ml.array({fm, lm, fn, ln}))
  return c
end
product({grid = {1, size}}, "summa_row")
product({grid = {size, 1}, verbose = true}, "summa_col")
if size == 2 then product({grid = {1, 1}, replication = 2}, "summa25") end
