-- ml.dist's target rows (issue 18), on a host with several GPUs:
--   mpirun -np 4 bin/moonlab scripts/bench/dist.lua       (4 GPUs)
--   mpirun -np 1 bin/moonlab scripts/bench/dist.lua       (the 1-GPU base)
-- --small shrinks the sizes (a CPU check). Rank 0 prints one row per
-- workload: the median of 5 timed runs after a warm-up, synchronized.
local dist = ml.dist
local rank, size = dist.init()
local small = arg[1] == "--small"

local function time(f)
  f()
  local t = {}
  for i = 1, 5 do
    ml.synchronize()
    dist.barrier()
    local t0 = ml.clock()
    f()
    ml.synchronize()
    dist.barrier()
    t[i] = ml.clock() - t0
  end
  table.sort(t)
  return t[3]
end

local function row(name, s)
  if rank == 0 then
    print(("%-46s %3d ranks %10.3f ms"):format(name, size, s * 1e3))
  end
end

-- sharded kNN: 10^6 references x 10^4 queries x 128, k = 10
local n, m, d = small and 4000 or 1000000, small and 100 or 10000, 128
ml.seed(1)
local queries = ml.rand(m, d, {dtype = "float32"})
local first, len = dist.part(n, size, rank)
ml.seed(2 + rank)
local refs = ml.rand(len, d, {dtype = "float32"})
row(("knn %d refs x %d queries x %d, k = 10"):format(n, m, d),
    time(function() return dist.knn(queries, refs, 10) end))
-- the same with 8 GiB a rank instead of the default 1 GiB: each rank's
-- tiles then take its whole shard
row("knn, the same with budget = 8 GiB",
    time(function() return dist.knn(queries, refs, 10, {budget = 2^33}) end))
refs, queries = nil, nil
collectgarbage()

-- mixture EM iteration, K = 10, full, float64: 60000 x 784 rows a rank
-- (weak scaling: the 1-rank run is the base), then 60000 rows in all
-- split over the ranks (strong scaling)
local mixture = require "moonlab.mixture"
local rows, feats = small and 2000 or 60000, small and 32 or 784
local function em(n_rank, name)
  ml.seed(3 + rank)
  local Y = ml.randn(n_rank, feats)
  local gm = ml.GaussianMixture{n_components = 10, max_iter = 1, seed = 0,
                                init_params = "random_from_data",
                                distributed = true}
  gm:fit(Y)
  row(name, time(mixture.em_step(gm, Y)))
end
em(rows, ("mixture EM K=10 full f64, %d x %d a rank"):format(rows, feats))
em(select(2, dist.part(rows, size, rank)),
   ("mixture EM K=10 full f64, %d x %d in all"):format(rows, feats))
collectgarbage()

-- SUMMA float64, N x N on the squarest grid, against one local DGEMM
local N = small and 512 or 32768
local pr = math.floor(math.sqrt(size))
while size % pr ~= 0 do pr = pr - 1 end
local pc = size // pr
local i, j = rank // pc, rank % pc
local _, mi = dist.part(N, pr, i)
local _, nj = dist.part(N, pc, j)
local _, ka = dist.part(N, pc, j)
local _, kb = dist.part(N, pr, i)
local A, B = ml.randn(mi, ka), ml.randn(kb, nj)
local opts = {m = N, k = N, n = N, grid = {pr, pc}}
local s = time(function() return dist.mm(A, B, opts) end)
row(("summa float64 %d^2 (%d x %d grid)"):format(N, pr, pc), s)
local n1 = small and 512 or 16384
local X = ml.randn(n1, n1)
local g = time(function() return X:mm(X) end)
if rank == 0 then
  local rate = 2 * n1 ^ 3 / g
  print(("%-46s %10.1f GFLOP/s one device; summa %.1f%% of %d x it")
        :format("dgemm " .. n1 .. "^2", rate / 1e9,
                100 * (2 * N ^ 3 / s) / (size * rate), size))
end
