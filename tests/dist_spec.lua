-- ml.dist over several processes: jobs of 2 and 3 ranks started by
-- mpirun on the CPU backend (tests/dist/*.lua) save what each rank got,
-- and this spec checks it against the one-process answer. Skipped, with
-- a message, where mpirun is missing. On a host of several GPUs,
-- MOONLAB_DIST_DEVICE=cuda puts the ranks on the GPUs (NCCL; one GPU a
-- rank, so no more ranks than GPUs) and MOONLAB_DIST_RANKS lists the job
-- sizes (default "2,3"); tools/gpuhost.sh's dist stage runs it so.
local ml = require "moonlab"
require "moonlab.test"
package.path = "tests/dist/?.lua;" .. package.path
local D = require "data"

local BIN = os.getenv("MOONLAB_BIN") or "bin/moonlab"
local HAVE_MPIRUN = os.execute("command -v mpirun >/dev/null 2>&1")
local DEVICE = os.getenv("MOONLAB_DIST_DEVICE") or "cpu"
local SIZES = {}
for np in (os.getenv("MOONLAB_DIST_RANKS") or "2,3"):gmatch("%d+") do
  SIZES[#SIZES + 1] = tonumber(np)
end
-- CI runs as root; a job that outlives the limit hangs.
local ENV = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
            .. "OMPI_MCA_rmaps_base_oversubscribe=1 MOONLAB_DEVICE=" .. DEVICE
            .. " "
local LIMIT = 120

-- Runs script on np ranks with a fresh output directory as its argument;
-- returns the directory, whether the job succeeded, its exit code and
-- its output.
local function job(np, script, ...)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. dir))
  local cmd = ("%s timeout %d mpirun --oversubscribe -np %d %s %s %s %s 2>&1")
              :format(ENV, LIMIT, np, BIN, script, dir,
                      table.concat({...}, " "))
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok, _, code = p:close()
  return dir, ok, code, out
end

local function cleanup(dir) os.execute("rm -rf " .. dir) end

local function load(dir, name, r)
  return ml.load_npy(("%s/%s_%d.npy"):format(dir, name, r))
end

local function text(dir, name, r)
  local f = assert(io.open(("%s/%s_%d.txt"):format(dir, name, r)))
  local s = f:read("a")
  f:close()
  return s
end

local function same(expected, got, tol)
  assert.are.same(expected.shape, got.shape)
  assert.are.equal(expected.dtype, got.dtype)
  assert.is_true(ml.allclose(got, expected, {rtol = tol or 0, atol = 0}),
                 "values differ")
end

local function each(f, size)
  local acc = f(0)
  for r = 1, size - 1 do acc = acc + f(r) end
  return acc
end

describe("ml.dist", function()
  if not HAVE_MPIRUN then
    pending("mpirun not found: install openmpi-bin to run the "
            .. "multi-process specs")
    return
  end

  for _, np in ipairs(SIZES) do
    describe(("on %d ranks (%s)"):format(np, DEVICE), function()
      local dir, ok, code, out

      setup(function()
        dir, ok, code, out = job(np, "tests/dist/collectives.lua")
      end)
      teardown(function() cleanup(dir) end)

      it("runs the job", function()
        assert.is_true(ok, ("exit %s: %s"):format(tostring(code), out))
      end)

      it("all_reduce: sum, max, min, prod, ints, views, numbers", function()
        local ranks = {}
        for r = 0, np - 1 do ranks[r + 1] = D.x(r) end
        local stack = ml.stack(ranks)
        local want = {sum = stack:sum(1), max = stack:max(1),
                      min = stack:min(1), prod = stack:prod(1)}
        for r = 0, np - 1 do
          for op, w in pairs(want) do
            same(w, load(dir, "all_reduce_" .. op, r), 1e-15)
          end
          same(each(D.ints, np), load(dir, "all_reduce_int", r))
          same(want.sum:t():contiguous(), load(dir, "all_reduce_view", r),
               1e-15)
          assert.are.equal(("%.17g %d"):format(np * np / 2, np - 1),
                           text(dir, "all_reduce_number", r))
        end
      end)

      it("broadcast, all_gather, reduce_scatter, send and recv", function()
        local rows = {}
        for r = 0, np - 1 do rows[r + 1] = D.rows(r) end
        local gathered = ml.cat(rows)
        local blocks = each(function(q) return D.scatter_input(q, np) end, np)
        for r = 0, np - 1 do
          same(D.x(np - 1), load(dir, "broadcast", r))
          same(gathered, load(dir, "all_gather", r))
          same(blocks:narrow(1, 4 * r + 1, 4), load(dir, "reduce_scatter", r),
               1e-15)
          same(D.x((r - 1) % np), load(dir, "recv", r))
        end
      end)

      it("raises on every rank when the ranks' calls differ", function()
        local function said(s) return (s:gsub("<dev>", DEVICE)) end
        for r = 0, np - 1 do
          assert.are.equal(said("all_reduce: the ranks' calls differ: rank 0 "
                                .. "calls all_reduce (op sum) of 2x2 float64 "
                                .. "on <dev>, rank 1 calls all_reduce (op "
                                .. "sum) of 2x3 float64 on <dev>"),
                           text(dir, "mismatch", r))
          assert.truthy(text(dir, "mismatch_kind", r):find(said(
            "the ranks' calls differ: rank 0 calls all_reduce (op sum) of 3 "
            .. "float64 on <dev>, rank 1 calls broadcast (root 0) of 3 "
            .. "float64 on <dev>"), 1, true))
        end
        assert.truthy(text(dir, "mismatch_send", 0):find(said(
          "send: rank 1 does not receive the 3 float64 on <dev> that rank 0 "
          .. "sends"), 1, true))
        assert.truthy(text(dir, "mismatch_send", 1):find(said(
          "recv: rank 0 sends 3 float64 on <dev>, this rank (1) receives "
          .. "into 4 float64 on <dev>"), 1, true))
      end)

      it("sharded kNN and SUMMA equal the one-process answers", function()
        local d2, ok2, code2, out2 = job(np, "tests/dist/algorithms.lua")
        finally(function() cleanup(d2) end)
        assert.is_true(ok2, ("exit %s: %s"):format(tostring(code2), out2))
        local refs, queries = D.knn()
        local dist, index = ml.knn(queries, refs, 7)
        local A, B = D.matrices()
        local C = A:mm(B)
        local names = {"summa_row", "summa_col"}
        if np == 2 then names[3] = "summa25" end
        for r = 0, np - 1 do
          same(dist, load(d2, "knn_dist", r))
          same(index, load(d2, "knn_index", r))
          for _, name in ipairs(names) do
            local p = load(d2, name .. "_place", r)
            local want = C:narrow(1, p[1], p[2]):narrow(2, p[3], p[4])
            assert.is_true(ml.allclose(load(d2, name, r), want,
                                       {rtol = 1e-12, atol = 1e-12}), name)
          end
        end
        assert.truthy(out2:find("mm: rank 0 received %d+ words on a " .. np
                                .. " x 1 x 1 grid"), out2)
      end)

      it("distributed KMeans and GaussianMixture equal the one-process "
         .. "fits", function()
        local d2, ok2, code2, out2 = job(np, "tests/dist/fits.lua")
        finally(function() cleanup(d2) end)
        assert.is_true(ok2, ("exit %s: %s"):format(tostring(code2), out2))
        local X = D.blobs()
        local function close(want, got, name)
          assert.are.same(want.shape, got.shape, name)
          assert.is_true(ml.allclose(got, want, {rtol = 1e-9, atol = 1e-12}),
                         name)
        end
        local function shard(labels, r)
          return labels:narrow(1, D.shard(X:size(1), r, np))
        end
        for _, case in ipairs(D.kmeans_cases()) do
          local name, opts = case[1], case[2]
          if name == "unseeded" then ml.seed(100) end
          local km = ml.KMeans(opts):fit(X)
          for r = 0, np - 1 do
            close(km.cluster_centers, load(d2, name .. "_centers", r), name)
            same(shard(km.labels, r), load(d2, name .. "_labels", r))
            close(ml.array({km.inertia, km.n_iter}),
                  load(d2, name .. "_stats", r), name)
          end
        end
        for _, case in ipairs(D.mixture_cases()) do
          local name, opts = case[1], case[2]
          local gm = ml.GaussianMixture(opts)
          local labels = gm:fit_predict(X)
          for r = 0, np - 1 do
            same(shard(labels, r), load(d2, name .. "_labels", r))
            close(ml.array(gm.lower_bounds), load(d2, name .. "_bounds", r),
                  name)
            close(gm.means, load(d2, name .. "_means", r), name)
            close(gm.covariances, load(d2, name .. "_covariances", r), name)
          end
        end
        for r = 0, np - 1 do
          assert.truthy(text(d2, "no_rows", r):find(
            "KMeans:fit: distributed: rank 0 holds no samples (each rank "
            .. "needs one at least)", 1, true))
        end
      end)

      it("ends the job with a rank's error, without a hang", function()
        local d, fine, status, output = job(np, "tests/dist/fail.lua")
        cleanup(d)
        assert.is_falsy(fine)
        assert.are_not.equal(124, status, "the job hung: " .. output)
        assert.truthy(output:find("moonlab (rank 1): tests/dist/fail.lua:3: "
                                  .. "rank one gives up", 1, true), output)
      end)
    end)
  end
end)

describe("ml.dist in one process", function()
  it("is a job of one rank without MPI", function()
    assert.are.equal(0, ml.dist.rank())
    assert.are.equal(1, ml.dist.size())
    local x = ml.array({1, 2})
    assert.are.equal(x, ml.dist.all_reduce(x))
    assert.are.same({1, 2}, ml.dist.all_gather(x):totable())
    assert.are.same({3}, ml.dist.all_gather(ml.full({}, 3)):totable())
    assert.are.same({1, 2}, ml.dist.reduce_scatter(x):totable())
    assert.are.equal(7, ml.dist.broadcast(7))
  end)

  it("fits distributed models as one-process ones", function()
    local X = D.blobs()
    local km = ml.KMeans{n_clusters = 3, seed = 1}:fit(X)
    local kd = ml.KMeans{n_clusters = 3, seed = 1, distributed = true}:fit(X)
    assert.is_true(math.abs(km.inertia - kd.inertia) <= 1e-12 * km.inertia)
    same(km.labels, kd.labels)
    local gm = ml.GaussianMixture{n_components = 2, seed = 1}:fit(X)
    local gd = ml.GaussianMixture{n_components = 2, seed = 1,
                                  distributed = true}:fit(X)
    same(ml.array(gm.lower_bounds), ml.array(gd.lower_bounds), 1e-12)
    assert.has_error(function() ml.KMeans{distributed = 1} end,
                     "KMeans: option 'distributed' must be a boolean, "
                     .. "not number")
  end)

  it("checks its arguments", function()
    assert.has_error(function() ml.dist.send(ml.ones(2), 1) end,
                     "send: a job of one rank has no peer")
    assert.has_error(function() ml.dist.broadcast(ml.ones(2), {root = 1}) end,
                     "broadcast: root 1 is not a rank (0 to 0)")
    assert.has_error(function()
      ml.dist.all_reduce(ml.ones(2), {op = "avg"})
    end, 'all_reduce: op must be "sum", "max", "min" or "prod" (got "avg")')
    assert.has_error(function() ml.dist.reduce_scatter(ml.full({}, 1)) end,
                     "reduce_scatter: the first dimension of scalar does not "
                     .. "split into 1 equal blocks")
  end)
end)
