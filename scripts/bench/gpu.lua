-- GPU workloads of `make bench` (issue "CUDA backend"): per-op overhead,
-- bandwidth-bound elementwise, reduction and random generation, the float32
-- and float64 matrix products, and row-wise topk; each timed as a median
-- after a warm-up, inputs rotated among random sets.
local ml = require "moonlab"
local bench = require "bench.common"

local M = {}

function M.run()
  local dev = ml.device()
  local f32 = {dtype = "float32", device = dev}
  local results = {}
  local function add(r) results[#results + 1] = r end

  local bw = bench.copy_bandwidth(dev, "float32")

  local a, b = ml.rand(256, f32), ml.rand(256, f32)
  local per_op = {}
  for r = 1, 5 do
    ml.synchronize()
    local t0 = ml.clock()
    for _ = 1, 20000 do local _ = a + b end
    ml.synchronize()
    per_op[r] = (ml.clock() - t0) / 20000
  end
  table.sort(per_op)
  add{name = "tiny_add_256", label = "a + b, 256 float32 (per op)", time = per_op[3]}

  local n = 2^28
  local sets = {}
  for i = 1, 2 do sets[i] = {ml.rand(n, f32), ml.rand(n, f32)} end
  add{name = "add_f32_2e28", label = "a + b, 2^28 float32",
    time = bench.median_time(function(x, y) return x + y end, sets, 9), floor = 3 * 4 * n / bw}
  add{name = "sum_f32_2e28", label = "x:sum(), 2^28 float32",
    time = bench.median_time(function(x) return x:sum() end, sets, 9), floor = 4 * n / bw}
  sets = nil
  collectgarbage()
  add{name = "randn_f32_2e28", label = "randn, 2^28 float32",
    time = bench.median_time(function() return ml.randn(n, f32) end, {{}}, 9), floor = 4 * n / bw}

  local gemm_rate = {}
  for _, dtype in ipairs{"float32", "float64"} do
    local o = {dtype = dtype, device = dev}
    local m = {{ml.rand(8192, 8192, o), ml.rand(8192, 8192, o)},
               {ml.rand(8192, 8192, o), ml.rand(8192, 8192, o)}}
    local t = bench.median_time(function(x, y) return x:mm(y) end, m, 9, 2)
    gemm_rate[dtype] = 2 * 8192^3 / t
    add{name = "mm_" .. dtype .. "_8192", label = "mm 8192^3 " .. dtype, time = t,
      rate = gemm_rate[dtype]}
  end
  collectgarbage()

  local x = {{ml.rand(32768, 32768, f32)}}
  add{name = "topk20_f32_32768", label = "topk(20) rows, 32768^2 float32",
    time = bench.median_time(function(v) return v:topk(20, 2) end, x, 5),
    floor = 4 * 32768^2 / bw}
  x = nil
  collectgarbage()

  -- Counting and statistics (issue 15): unique of 2^26 int32 drawn from
  -- [0, 2^20) (many duplicates, 64 of each value on average; a sort, not
  -- one pass: the floor is one read), histogram of 2^28 float32 in 256
  -- bins, cumprod of 2^28 float32 near 1 (stays finite), softmax of
  -- 8192 x 8192 float32 along rows.
  local u = {{ml.randint(0, 2^20, 2^26, {dtype = "int32", device = dev})}}
  add{name = "unique_i32_2e26", label = "unique, 2^26 int32 in [0, 2^20)",
    time = bench.median_time(function(v) return v:unique() end, u, 5), floor = 4 * 2^26 / bw}
  u = nil
  collectgarbage()
  local h = {{ml.rand(n, f32)}, {ml.rand(n, f32)}}
  add{name = "histogram_f32_2e28", label = "histogram 256 bins, 2^28 float32",
    time = bench.median_time(function(v) return v:histogram({bins = 256, range = {0, 1}}) end,
      h, 9), floor = 4 * n / bw}
  h = nil
  collectgarbage()
  local c = {{ml.uniform(1 - 1e-6, 1 + 1e-6, n, f32)}}
  add{name = "cumprod_f32_2e28", label = "cumprod, 2^28 float32",
    time = bench.median_time(function(v) return v:cumprod() end, c, 9), floor = 2 * 4 * n / bw}
  c = nil
  collectgarbage()
  local sm = {{ml.randn(8192, 8192, f32)}, {ml.randn(8192, 8192, f32)}}
  add{name = "softmax_f32_8192", label = "softmax rows, 8192^2 float32",
    time = bench.median_time(function(v) return ml.softmax(v, 2) end, sm, 9),
    floor = 2 * 4 * 8192^2 / bw}
  sm = nil
  collectgarbage()

  -- kNN (issue "kNN"): Fashion-MNIST's test set against its training set,
  -- and the random sets of Garcia et al.; peak memory against the inputs
  -- plus the distance budget (1 GiB by default).
  local fm = ml.datasets.fashion_mnist({dtype = "float32"})
  local knn_sets = {
    {name = "knn_fashion", label = "knn fashion 1e4 x 6e4 x 784, k=5",
     q = fm.test_images, r = fm.train_images, k = 5},
  }
  fm = nil
  for _, d in ipairs{16, 256} do
    knn_sets[#knn_sets + 1] = {name = "knn_32768_d" .. d,
      label = ("knn 32768^2, d=%d, k=20"):format(d),
      q = ml.uniform(-500, 500, 32768, d, f32), r = ml.uniform(-500, 500, 32768, d, f32), k = 20}
  end
  for _, c in ipairs(knn_sets) do
    collectgarbage()
    ml.synchronize()
    ml.reset_peak_memory()
    local base = ml.memory().allocated
    local t = bench.median_time(function(q, r) return ml.knn(q, r, c.k) end, {{c.q, c.r}}, 5)
    local inputs = (c.q:numel() + c.r:numel()) * 4
    add{name = c.name, label = c.label, time = t,
      note = ("peak %.0f MiB over inputs %.0f MiB + budget 1024 MiB"):format(
        (ml.memory().peak - base + inputs) / 2^20, inputs / 2^20)}
    c.q, c.r = nil, nil
  end
  knn_sets = nil
  collectgarbage()
  require("bench.filter").run(add, {bandwidth = bw})
  collectgarbage()
  require("bench.mixture").run(add, {bandwidth = bw, gemm64 = gemm_rate.float64,
                                     gemm32 = gemm_rate.float32})
  require("bench.conv").run(add, {bandwidth = bw, gemm32 = gemm_rate.float32})
  collectgarbage()
  require("bench.rearrange").run(add, {bandwidth = bw, gemm32 = gemm_rate.float32})
  require("bench.binary").run(add, {bandwidth = bw})
  return results, {bandwidth = bw, gemm_rate = gemm_rate.float32}
end

return M
