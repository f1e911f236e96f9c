-- GPU workloads of `make bench` for the issue "Convolution": SciPy's
-- filters at the sizes of its targets, in float32, with random
-- (non-separable) masks and random inputs far larger than the caches; the
-- same workloads as scripts/bench/peers_filter.py (PyTorch's conv2d and
-- conv1d, CuPy's cupyx.scipy.ndimage). Each row gives its floor: one read
-- and one write of the image at the copy bandwidth measured in this run.
local ml = require "moonlab"
local bench = require "bench.common"

local M = {}

-- run(add, hw): hw.bandwidth in bytes/s.
function M.run(add, hw)
  local f32 = {dtype = "float32", device = ml.device()}
  local function time(fn, sets) return bench.median_time(fn, sets, 15) end
  local function floor(n) return 2 * 4 * n / hw.bandwidth end

  ml.seed(14)
  local n = 8192
  local images = {{ml.randn(n, n, f32)}, {ml.randn(n, n, f32)}}
  for _, k in ipairs({5, 15}) do
    local w = ml.randn(k, k, f32)
    add{name = "filt_conv" .. k, label = ("ndimage.convolve %d^2 %dx%d f32"):format(n, k, k),
      time = time(function(x) return ml.ndimage.convolve(x, w) end, images), floor = floor(n * n)}
  end
  add{name = "filt_gauss4", label = ("ndimage.gaussian_filter %d^2 s=4 f32"):format(n),
    time = time(function(x) return ml.ndimage.gaussian_filter(x, 4) end, images),
    floor = floor(n * n)}
  images = nil
  collectgarbage()

  local m = 2^26
  local lines = {{ml.randn(m, f32)}, {ml.randn(m, f32)}}
  local w = ml.randn(31, f32)
  add{name = "filt_conv1d", label = "ndimage.convolve1d 2^26, 31 taps f32",
    time = time(function(x) return ml.ndimage.convolve1d(x, w, {mode = "constant"}) end, lines),
    floor = floor(m)}
  add{name = "filt_wsum", label = "window_sum 2^26, radius 15 f32",
    time = time(function(x) return ml.window_sum(x, 15) end, lines), floor = floor(m)}
  lines = nil
  collectgarbage()
end

return M
