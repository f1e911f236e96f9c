-- GPU workloads of `make bench` for the issue "Binary (±1) matrix
-- products and Hamming search": the 8192^3 ±1 product from packed
-- operands (PyTorch's side: the same ±1 data through cuBLAS as int8
-- torch._int_mm, bf16, TF32 and float32), packing 8192^2 float32, and
-- the Hamming kNN of 10^4 queries among 10^6 references of 256-bit
-- codes, k = 10 (PyTorch's side: int8 products of the ±1 codes in chunks
-- and topk). Each is checked against the CPU on a slice before it is
-- timed. The product's and the kNN's floors are their AND-popcount
-- arithmetic at the peak measured in this run by the bare MMA kernels
-- (binary_backend.h's peak: on a Hopper the warpgroup MMA's, 1.6 times
-- mma.sync's), so "of floor" is the fraction of that peak;
-- packing's is its bytes at the copy bandwidth.
local ml = require "moonlab"
local bench = require "bench.common"
local core = require "moonlab.binary_core"

local M = {}

local function check(what, got, want)
  assert(ml.array_equal(got:cpu(), want), what .. " on the GPU differs from the CPU")
end

-- run(add, hw): hw.bandwidth (bytes/s).
function M.run(add, hw)
  local dev = ml.device()
  local f32 = {dtype = "float32", device = dev}
  local peak = 0
  for _ = 1, 3 do peak = math.max(peak, core.peak(dev)) end
  local n = 8192
  add{name = "binary_peak", label = "AND-popc peak (bare tensor-core MMA)",
    time = 2 * n^3 / peak, rate = peak,
    note = "time: the 8192^3 product at this rate; ops = 2 m n k, k in bits; "
      .. "Hopper: wgmma from shared memory, else mma.sync from registers"}

  ml.seed(0)
  local sets = {}
  for i = 1, 2 do
    sets[i] = {ml.binary.pack(ml.randn(n, n, f32)), ml.binary.pack(ml.randn(n, n, f32), {dim = 1})}
  end
  local a, b = sets[1][1], sets[1][2]
  local rows = ml.binary.pack(ml.binary.unpack(a)[{{1, 300}, {}}]:cpu())
  local cols = ml.binary.pack(ml.binary.unpack(b)[{{}, {1, 500}}]:cpu(), {dim = 1})
  check("binary.mm", ml.binary.mm(a, b)[{{1, 300}, {1, 500}}], ml.binary.mm(rows, cols))
  local t = bench.median_time(function(x, y) return ml.binary.mm(x, y) end, sets, 9, 2)
  add{name = "binary_mm_8192", label = "binary.mm 8192^3 packed", time = t,
    floor = 2 * n^3 / peak, alts = {"bf16", "tf32", "f32"},
    note = ("%.0f TOPS (torch: int8 _int_mm, then bf16, TF32, float32 below)"):format(
      2 * n^3 / t / 1e12)}
  sets, a, b = nil, nil, nil
  collectgarbage()

  local xs = {{ml.randn(n, n, f32)}, {ml.randn(n, n, f32)}}
  check("binary.pack", ml.binary.pack(xs[1][1]).words[{{1, 64}, {}}],
        ml.binary.pack(xs[1][1][{{1, 64}, {}}]:cpu()).words)
  t = bench.median_time(function(x) return ml.binary.pack(x) end, xs, 21)
  add{name = "binary_pack_8192", label = "binary.pack 8192^2 float32", time = t,
    floor = (4 * n * n + n * n / 8) / hw.bandwidth}
  xs = nil
  collectgarbage()

  local m, refs, k = 10000, 1000000, 10
  local q = ml.binary.pack(ml.randn(m, 256, f32))
  local r = ml.binary.pack(ml.randn(refs, 256, f32))
  local q50 = ml.binary.pack(ml.binary.unpack(q)[{{1, 50}, {}}]:cpu())
  local want_d, want_i = ml.knn(q50, r:to("cpu"), k, {metric = "hamming"})
  local got_d, got_i = ml.knn(q, r, k, {metric = "hamming"})
  check("knn hamming dist", got_d[{{1, 50}, {}}], want_d)
  check("knn hamming index", got_i[{{1, 50}, {}}], want_i)
  t = bench.median_time(function(x, y) return ml.knn(x, y, k, {metric = "hamming"}) end,
                        {{q, r}}, 7)
  add{name = "knn_hamming_1e6", label = "knn hamming 1e4 x 1e6 x 256b, k=10", time = t,
    floor = 2 * m * refs * 256 / peak}
end

return M
