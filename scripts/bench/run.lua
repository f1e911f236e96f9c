-- make bench: runs the benchmark workloads on the default device and prints
-- one table beside the peer measured in the same run: PyTorch on a GPU,
-- NumPy on the CPU. With --plot FILE (make bench PLOT=FILE), it also
-- draws the moonlab/peer ratios as a bar chart into FILE (.png, .svg, .pdf).
package.path = "scripts/?.lua;" .. package.path
local ml = require "moonlab"
local bench = require "bench.common"

local plot_file
if arg and arg[1] == "--plot" and arg[2] and #arg == 2 then
  plot_file = arg[2]
elseif arg and #arg > 0 then
  error("usage: run.lua [--plot FILE]", 0)
end

local device = ml.device()
local on_gpu = device:match("^cuda") ~= nil
local python = os.getenv("PYTHON")
local suite = require(on_gpu and "bench.gpu" or "bench.cpu")
local peer_name = on_gpu and "torch" or "numpy"

local results, hw = suite.run()
-- the peer runs in another process: give it the memory moonlab cached
collectgarbage()
ml.empty_cache()
local peer, why = bench.peer_times(python, "scripts/bench/peers_" .. peer_name .. ".py")

local name = on_gpu and ml.cuda.device_name(0) or (io.popen("nproc"):read("l") .. " cores")
print(("moonlab %s bench on %s (%s), %s"):format(ml.version, device, name, os.date("%Y-%m-%d")))
print(("copy bandwidth %.1f GB/s (measured in this run); GEMM rows give their rate"):format(
  hw.bandwidth / 1e9))
if not peer then print(peer_name .. ": " .. why) end
print(("%-40s %11s %11s %8s %16s"):format("workload", "moonlab", peer_name, "ratio", "of floor"))
for _, r in ipairs(results) do
  local p = peer and peer[r.name]
  local floor = r.floor and ("%.0f%%"):format(100 * r.floor / r.time)
    or r.rate and (r.rate >= 1e12 and ("%.1f TFLOP/s"):format(r.rate / 1e12)
                   or ("%.1f GFLOP/s"):format(r.rate / 1e9)) or "-"
  print(("%-40s %11s %11s %8s %16s"):format(r.label, bench.format_time(r.time),
    bench.format_time(p), p and ("%.2fx"):format(r.time / p) or "-", floor))
  if r.note then print("    " .. r.note) end
  if peer and peer[r.name .. "_cupy"] then
    print(("    cupy %s (ratio %.2fx)"):format(bench.format_time(peer[r.name .. "_cupy"]),
      r.time / peer[r.name .. "_cupy"]))
  end
  for _, alt in ipairs(peer and r.alts or {}) do
    local pa = peer[r.name .. "_" .. alt]
    if pa then
      print(("    %s %s %s (ratio %.2fx)"):format(peer_name, alt, bench.format_time(pa), r.time / pa))
    end
  end
  if p and peer[r.name .. "_iters"] then
    print(("    %s ran %d iterations"):format(peer_name, peer[r.name .. "_iters"]))
  end
end
print("ratio = moonlab time / " .. peer_name .. " time (below 1: moonlab is faster); "
  .. "of floor = bytes moved at the copy bandwidth, or arithmetic at the GEMM rate, "
  .. "whichever is longer / moonlab time")

if plot_file then
  local names, ratios = {}, {}
  for _, r in ipairs(results) do
    local p = peer and peer[r.name]
    if p then
      names[#names + 1] = r.label
      ratios[#ratios + 1] = r.time / p
    end
  end
  if #ratios == 0 then
    print("no ratios to draw: " .. peer_name .. " " .. (why or "measured nothing"))
  else
    local f = ml.plot.figure{size = {math.max(800, 34 * #ratios + 200), 640},
      title = ("moonlab / %s time on %s (%s), %s: below 1, moonlab is faster")
        :format(peer_name, device, name, os.date("%Y-%m-%d")),
      ylabel = "time ratio (log scale)", logy = true, grid = true,
      legend = false}
    f:bar(ratios, {names = names})
    f:line({0.5, #ratios + 0.5}, {1, 1}, {color = "black"})
    f:save(plot_file)
    print("ratios drawn in " .. plot_file)
  end
end
