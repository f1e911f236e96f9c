-- Timing helpers shared by the benchmark scripts.
local ml = require "moonlab"

local M = {}

-- Median wall time of fn over `repeats` calls after a warm-up: one call, or
-- calls for `warm_seconds` (the GEMM rows, whose rate follows the GPU's
-- clock: both sides warm it to the same steady state). Call r gets the
-- argument set sets[(r - 1) % #sets + 1]. The device is synchronised
-- around each call, so queued GPU work is counted.
function M.median_time(fn, sets, repeats, warm_seconds)
  local t_end = ml.clock() + (warm_seconds or 0)
  repeat
    fn(table.unpack(sets[1]))
    ml.synchronize()
  until ml.clock() >= t_end
  local times = {}
  for r = 1, repeats do
    local args = sets[(r - 1) % #sets + 1]
    local t0 = ml.clock()
    local result = fn(table.unpack(args))
    ml.synchronize()
    times[r] = ml.clock() - t0
    result = nil
    collectgarbage("step")
  end
  table.sort(times)
  return times[(repeats + 1) // 2]
end

-- Bytes per second of a large copy on device (bytes read plus bytes
-- written), the floor of every bandwidth-bound workload.
function M.copy_bandwidth(device, dtype)
  local n = 2^27
  local opts = {device = device, dtype = dtype or "float64"}
  local src = ml.rand(n, opts)
  local dst = ml.empty(n, opts)
  local t = M.median_time(function() dst:copy(src) end, {{}}, 7)
  return 2 * src:numel() * (opts.dtype == "float32" and 4 or 8) / t
end

function M.format_time(t)
  if not t then return "-" end
  if t < 1e-3 then return ("%.2f us"):format(t * 1e6) end
  if t < 1 then return ("%.2f ms"):format(t * 1e3) end
  return ("%.3f s"):format(t)
end

-- Runs `python script` and returns {name = seconds} from its `name seconds`
-- lines, or nil with a reason when the peer cannot run.
function M.peer_times(python, script)
  if not python or python == "" then return nil, "no python3 with the peer library" end
  local p = io.popen(python .. " " .. script .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  if not ok then return nil, "peer failed: " .. out:sub(1, 200) end
  local times = {}
  for name, t in out:gmatch("(%S+)%s+([%d.eE+-]+)\n") do times[name] = tonumber(t) end
  return times
end

return M
