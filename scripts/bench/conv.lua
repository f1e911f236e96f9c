-- GPU workload of `make bench` for the issue "Convolution": the
-- convolution layer of deep learning, ml.conv2d with N = 32, C = O = 64,
-- 112 x 112 images, 3 x 3 filters, padding 1, float32 in full FP32 (no
-- TF32), as scripts/bench/peers_conv_torch.py times PyTorch's. Checked
-- against the CPU on two images before it is timed. Its floor is the
-- larger of two: the bytes of x, w and y at the copy bandwidth, and the
-- multiply-adds of the direct convolution at the float32 GEMM rate
-- measured in this run (the FP32 FMA rate; Winograd algorithms do fewer
-- multiply-adds, so they can beat it); the note says which binds.
local ml = require "moonlab"
local bench = require "bench.common"

local M = {}

-- run(add, hw): hw.bandwidth (bytes/s), hw.gemm32 (flop/s).
function M.run(add, hw)
  local f32 = {dtype = "float32", device = ml.device()}
  local n, c, o, h, w, k = 32, 64, 64, 112, 112, 3
  local opts = {padding = 1}
  ml.seed(0)
  local sets = {}
  for i = 1, 2 do sets[i] = {ml.randn(n, c, h, w, f32), ml.randn(o, c, k, k, f32)} end

  local x, wt = sets[1][1], sets[1][2]
  local got = ml.conv2d(x:narrow(1, 1, 2), wt, opts):cpu()
  local want = ml.conv2d(x:narrow(1, 1, 2):cpu(), wt:cpu(), opts)
  local err = (got - want):abs():max() / want:abs():max()
  assert(err < 3e-5, ("conv2d on the GPU is off the CPU's by %g"):format(err))

  local t = bench.median_time(function(a, b) return ml.conv2d(a, b, opts) end, sets, 21)
  local fma = 2 * n * o * c * k * k * h * w / hw.gemm32
  local mem = 4 * (n * c * h * w + o * c * k * k + n * o * h * w) / hw.bandwidth
  add{name = "conv2d_f32", label = "conv2d 32x64x112^2, 64x3x3, pad 1 f32",
    time = t, floor = math.max(fma, mem),
    note = ("floor: FP32 FMA %s at the GEMM rate%s, memory %s%s"):format(
      bench.format_time(fma), fma >= mem and " (binds)" or "",
      bench.format_time(mem), mem > fma and " (binds)" or "")}
end

return M
