-- Measures kernels/filter.cuh's FILTER_FFT_MIN_TAPS on a GPU: the time of
-- ml.ndimage.correlate over square masks through the direct kernels and
-- through cuFFT, for float32 and float64, and the smallest mask from which
-- the FFT is faster. Run from the tree's root:
--   bin/moonlab scripts/bench/filter_fft.lua
-- It runs itself twice, with MOONLAB_FILTER_FFT=never and =always (read
-- once per process by kernels/filter.cu).
package.path = "scripts/?.lua;" .. package.path
local ml = require "moonlab"
local bench = require "bench.common"

local SIZES = {8, 12, 16, 20, 24, 28, 32, 40, 48, 64}
local forced = os.getenv("MOONLAB_FILTER_FFT")

if forced then
  local n = 4096
  for _, dtype in ipairs({"float32", "float64"}) do
    local o = {dtype = dtype, device = ml.device()}
    ml.seed(1)
    local sets = {{ml.randn(n, n, o)}, {ml.randn(n, n, o)}}
    for _, k in ipairs(SIZES) do
      local w = ml.randn(k, k, o)
      local t = bench.median_time(function(x) return ml.ndimage.correlate(x, w) end, sets, 7)
      print(dtype, k, t)
    end
  end
  return
end

local bin = os.getenv("MOONLAB_BIN") or "bin/moonlab"
local times = {}
for _, path in ipairs({"never", "always"}) do
  local p = io.popen(("MOONLAB_FILTER_FFT=%s %s scripts/bench/filter_fft.lua"):format(path, bin))
  for dtype, k, t in p:read("a"):gmatch("(%S+)%s+(%d+)%s+(%S+)\n") do
    local key = dtype .. " " .. k
    times[key] = times[key] or {}
    times[key][path] = tonumber(t)
  end
  p:close()
end
print(("%-8s %6s %8s %11s %11s"):format("dtype", "mask", "taps", "direct", "fft"))
for _, dtype in ipairs({"float32", "float64"}) do
  local cross
  for _, k in ipairs(SIZES) do
    local t = times[dtype .. " " .. k] or {}
    print(("%-8s %3dx%-3d %8d %11s %11s"):format(dtype, k, k, k * k,
      bench.format_time(t.never), bench.format_time(t.always)))
    if not cross and t.never and t.always and t.always < t.never then cross = k * k end
  end
  print(("%s: the FFT is faster from %s taps"):format(dtype, cross or "beyond the sizes tried"))
end
