-- CPU workloads of `make bench` (issue "Foundation"): elementwise, exp, the
-- matrix product and the per-call cost of a tiny operation, each timed as a
-- median after a warm-up, inputs rotated among random sets.
local ml = require "moonlab"
local bench = require "bench.common"

local M = {}

function M.run()
  local results = {}
  local n = 10^7
  local sets = {}
  for i = 1, 3 do sets[i] = {ml.rand(n), ml.rand(n)} end

  local bw = bench.copy_bandwidth("cpu")
  local add = bench.median_time(function(a, b) return a + b end, sets, 9)
  results[#results + 1] = {name = "add_f64_1e7", label = "a + b, 1e7 float64",
    time = add, floor = 3 * 8 * n / bw}
  local ex = bench.median_time(function(a) return a:exp() end, sets, 9)
  results[#results + 1] = {name = "exp_f64_1e7", label = "a:exp(), 1e7 float64",
    time = ex, floor = 2 * 8 * n / bw}

  local mats = {}
  for i = 1, 2 do mats[i] = {ml.rand(2048, 2048), ml.rand(2048, 2048)} end
  local mm = bench.median_time(function(a, b) return a:mm(b) end, mats, 5)
  results[#results + 1] = {name = "mm_f64_2048", label = "mm 2048^3 float64",
    time = mm, rate = 2 * 2048^3 / mm}

  local x, y = ml.rand(4), ml.rand(4)
  local calls, per_call = 200000, {}
  for r = 1, 5 do
    local t0 = ml.clock()
    for _ = 1, calls do local _ = x + y end
    per_call[r] = (ml.clock() - t0) / calls
  end
  table.sort(per_call)
  results[#results + 1] = {name = "tiny_add_4", label = "x + y, 4 float64 (per call)",
    time = per_call[3]}
  return results, {bandwidth = bw, gemm_rate = 2 * 2048^3 / mm}
end

return M
