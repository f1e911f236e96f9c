-- GPU workloads of `make bench` for the issue "The everyday NumPy
-- toolbox", rearranging: a flip of 2^28 float32 made contiguous and a
-- roll of 2^28 float32 (one read and one write each: floor 8 bytes an
-- element at the copy bandwidth), and einsum's two contractions that
-- must reach the GEMM rate, "bij,bjk->bik" (128 x 1024^3) and
-- "ij,kj->ik" (8192^3), whose floor is their flops at the float32 GEMM
-- rate measured in this run; scripts/bench/peers_rearrange_torch.py times
-- PyTorch's. Each is checked against the CPU on a small case first.
local ml = require "moonlab"
local bench = require "bench.common"

local M = {}

local function check(what, got, want, tol)
  local err = (got:cpu():astype("float64") - want:astype("float64")):abs():max()
  assert(err <= tol, ("%s on the GPU is off the CPU's by %g"):format(what, err))
end

-- run(add, hw): hw.bandwidth (bytes/s), hw.gemm32 (flop/s).
function M.run(add, hw)
  local dev = ml.device()
  local f32 = {dtype = "float32", device = dev}
  ml.seed(0)
  local small = ml.rand(1000, 7, f32)
  check("flip", small:flip():contiguous(), small:cpu():flip():contiguous(), 0)
  check("roll", small:roll(12345), small:cpu():roll(12345), 0)
  local a, b = ml.rand(3, 33, 17, f32), ml.rand(3, 17, 9, f32)
  check("einsum bij,bjk->bik", ml.einsum("bij,bjk->bik", a, b),
        ml.einsum("bij,bjk->bik", a:cpu(), b:cpu()), 1e-4)
  check("einsum ij,kj->ik", ml.einsum("ij,kj->ik", a[1], b[1]:t()),
        ml.einsum("ij,kj->ik", a[1]:cpu(), b[1]:t():cpu()), 1e-4)

  local n = 2^28
  local sets = {{ml.rand(n, f32)}, {ml.rand(n, f32)}}
  add{name = "flip_f32_2e28", label = "x:flip():contiguous(), 2^28 float32",
    time = bench.median_time(function(x) return x:flip():contiguous() end, sets, 9),
    floor = 2 * 4 * n / hw.bandwidth}
  add{name = "roll_f32_2e28", label = "x:roll(12345), 2^28 float32",
    time = bench.median_time(function(x) return x:roll(12345) end, sets, 9),
    floor = 2 * 4 * n / hw.bandwidth}
  sets = nil
  collectgarbage()

  local bt, m = 128, 1024
  sets = {}
  for i = 1, 2 do sets[i] = {ml.rand(bt, m, m, f32), ml.rand(bt, m, m, f32)} end
  add{name = "einsum_bmm_f32", label = "einsum bij,bjk->bik 128x1024^3 f32",
    time = bench.median_time(function(x, y) return ml.einsum("bij,bjk->bik", x, y) end,
                             sets, 9, 2),
    floor = 2 * bt * m^3 / hw.gemm32}
  sets = nil
  collectgarbage()
  local s = 8192
  sets = {}
  for i = 1, 2 do sets[i] = {ml.rand(s, s, f32), ml.rand(s, s, f32)} end
  add{name = "einsum_mmt_f32_8192", label = "einsum ij,kj->ik 8192^3 f32",
    time = bench.median_time(function(x, y) return ml.einsum("ij,kj->ik", x, y) end,
                             sets, 9, 2),
    floor = 2 * s^3 / hw.gemm32}
  sets = nil
  collectgarbage()
end

return M
