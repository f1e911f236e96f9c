-- make bench: runs the benchmark workloads on the current device and prints
-- one table beside the peers (NumPy on the CPU) measured in the same run.
package.path = "scripts/?.lua;" .. package.path
local ml = require "moonlab"
local bench = require "bench.common"

local device = ml.device()
local python = os.getenv("PYTHON")
local suite = require("bench.cpu")
local results, hw = suite.run()
local peer, why = bench.peer_times(python, "scripts/bench/peers_numpy.py")

print(("moonlab %s bench on %s, %s"):format(ml.version, device, os.date("%Y-%m-%d")))
print(("measured copy bandwidth %.1f GB/s, float64 GEMM rate %.1f GFLOP/s"):format(
  hw.bandwidth / 1e9, hw.gemm_rate / 1e9))
if not peer then print("peer: " .. why) end
print(("%-30s %12s %12s %10s %10s"):format("workload", "moonlab", "numpy", "ratio", "of floor"))
for _, r in ipairs(results) do
  local p = peer and peer[r.name]
  local floor = r.floor or (r.flops and r.flops / hw.gemm_rate)
  print(("%-30s %12s %12s %10s %10s"):format(r.label, bench.format_time(r.time),
    bench.format_time(p), p and ("%.2fx"):format(r.time / p) or "-",
    floor and ("%.0f%%"):format(100 * floor / r.time) or "-"))
end
print("ratio = moonlab time / peer time (below 1: moonlab faster); "
  .. "of floor = hardware floor time / moonlab time")
