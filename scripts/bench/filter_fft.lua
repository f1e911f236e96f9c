-- Measures kernels/filter.cuh's FILTER_FFT_MIN_TAPS_F32 and _F64 on a GPU:
-- the time of ml.ndimage.correlate over square masks on 4096^2 inputs with
-- fft = false (the direct kernels) and fft = true (cuFFT), for float32 and
-- float64, and the smallest mask from which the FFT is faster. Run from
-- the tree's root:
--   bin/moonlab scripts/bench/filter_fft.lua
package.path = "scripts/?.lua;" .. package.path
local ml = require "moonlab"
local bench = require "bench.common"

local SIZES = {8, 12, 16, 20, 24, 28, 32, 40, 48, 64}
local N = 4096

print(("%-8s %6s %8s %11s %11s"):format("dtype", "mask", "taps", "direct", "fft"))
for _, dtype in ipairs({"float32", "float64"}) do
  local o = {dtype = dtype, device = ml.device()}
  ml.seed(1)
  local sets = {{ml.randn(N, N, o)}, {ml.randn(N, N, o)}}
  local cross
  for _, k in ipairs(SIZES) do
    local w = ml.randn(k, k, o)
    local t = {}
    for _, fft in ipairs({false, true}) do
      t[fft] = bench.median_time(function(x)
        return ml.ndimage.correlate(x, w, {fft = fft})
      end, sets, 7)
    end
    print(("%-8s %3dx%-3d %8d %11s %11s"):format(dtype, k, k, k * k,
      bench.format_time(t[false]), bench.format_time(t[true])))
    if not cross and t[true] < t[false] then cross = k * k end
  end
  print(("%s: the FFT is faster from %s taps"):format(dtype, cross or "beyond the sizes tried"))
end
