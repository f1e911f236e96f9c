-- The kNN grid of Garcia et al. (Fast k nearest neighbor search using GPU,
-- 2008): m = n queries and references from 256 to 32768, dimensions 1, 4,
-- 16, 64 and 256, k = 20, uniform float32 coordinates in [-500, 500],
-- Euclidean distances. Times ml.knn on the default device, on the CPU as
-- well when the default is a GPU, and PyTorch (addmm + topk,
-- scripts/bench/peers_knn_torch.py) on the same device when it can be
-- imported; writes a CSV and prints the speed-ups.
--
--   moonlab scripts/bench/knn_grid.lua [--max 32768] [--csv FILE]
--       [--repeats 5] [--cpu-max N] [--plot FILE [--from CSV]]
--
-- --plot draws the speed-ups against n, one curve per dimension, log
-- axes, into FILE (.png, .svg or .pdf): over the CPU and over PyTorch, the
-- columns the run measured; with --from it measures nothing and draws the
-- CSV of an earlier run (of the GPU host, say).
-- --max bounds m = n (a small CPU wants --max 4096); --cpu-max bounds the
-- CPU column when the default device is a GPU (default: --max). Before
-- timing, each configuration's results are checked against a brute-force
-- computation for a few queries (and the CPU's against the GPU's: they
-- must be the same bits).
package.path = "scripts/?.lua;" .. package.path
local ml = require "moonlab"
local bench = require "bench.common"

local function options(argv)
  local o = {max = 32768, csv = "/tmp/moonlab_knn_grid.csv", repeats = 5}
  local i = 1
  while i <= #argv do
    local key = argv[i]:match("^%-%-([%w-]+)$")
    if not key or argv[i + 1] == nil then
      error("usage: knn_grid.lua [--max N] [--csv FILE] [--repeats R] [--cpu-max N] "
            .. "[--plot FILE [--from CSV]]", 0)
    end
    o[key] = argv[i + 1]
    i = i + 2
  end
  o.max, o.repeats = math.tointeger(tonumber(o.max)), math.tointeger(tonumber(o.repeats))
  o["cpu-max"] = math.tointeger(tonumber(o["cpu-max"] or o.max))
  return o
end

local K, DIMS = 20, {1, 4, 16, 64, 256}

-- The speed-ups of a CSV written by this script as a figure in file.
local function plot(csv, file)
  local h = assert(io.open(csv))
  local head, rows = h:read("l"), {}
  local names = {}
  for name in head:gmatch("[^,]+") do names[#names + 1] = name end
  for line in h:lines() do
    local r, i = {}, 0
    for field in (line .. ","):gmatch("([^,]*),") do
      i = i + 1
      r[names[i]] = tonumber(field) or field
    end
    rows[#rows + 1] = r
  end
  h:close()
  local panels = {}
  for _, c in ipairs({{"cpu_over_moonlab", "speed-up over moonlab on the CPU"},
                      {"torch_over_moonlab", "speed-up over PyTorch"}}) do
    for _, r in ipairs(rows) do
      if type(r[c[1]]) == "number" then
        panels[#panels + 1] = c
        break
      end
    end
  end
  if #panels == 0 then
    error("knn_grid: " .. csv .. " has no speed-ups to draw (no CPU or PyTorch column)", 0)
  end
  local device = rows[1].device
  local f = ml.plot.figure{layout = {1, #panels}, size = {560 * #panels, 460},
    title = ("kNN search (Garcia et al.), k = %d, float32, on %s"):format(K, device)}
  for i, c in ipairs(panels) do
    f:panel(i, {title = c[2], xlabel = "m = n", ylabel = "speed-up",
                logx = true, logy = true, grid = true, legend = "top left"})
    for _, d in ipairs(DIMS) do
      local x, y = {}, {}
      for _, r in ipairs(rows) do
        if r.d == d and type(r[c[1]]) == "number" then
          x[#x + 1], y[#y + 1] = r.n, r[c[1]]
        end
      end
      if #x > 0 then
        f:line(x, y, {label = ("d = %d"):format(d), style = "linespoints"})
      end
    end
  end
  f:save(file)
  print("speed-ups drawn in " .. file)
end

local o = options(arg or {})
if o.from then
  if not o.plot then error("knn_grid: --from needs --plot FILE", 0) end
  plot(o.from, o.plot)
  return
end
local device = ml.device()
local on_gpu = device:match("^cuda") ~= nil

local sizes = {}
local s = 256
while s <= o.max do
  sizes[#sizes + 1] = s
  s = s * 2
end

-- Brute-force nearest distances of query i (float64 from float32 data).
local function check(Q, R, dist, index, i)
  local q = Q:narrow(1, i, 1):astype("float64")
  local d2 = ((R:astype("float64") - q) ^ 2):sum(2)
  local want, _ = d2:sort()
  local got_d = dist:narrow(1, i, 1):astype("float64"):reshape(K):cpu():totable()
  local got_i = index:narrow(1, i, 1):reshape(K):cpu():totable()
  local w = want:narrow(1, 1, K):sqrt():cpu():totable()
  local all = d2:cpu():totable()
  for j = 1, K do
    local direct = math.sqrt(all[got_i[j]])
    if math.abs(got_d[j] - w[j]) > 1e-6 * (1 + w[j]) or math.abs(direct - w[j]) > 1e-6 * (1 + w[j]) then
      error(("knn_grid: query %d, neighbour %d: distance %.9g, brute force %.9g"):format(
        i, j, got_d[j], w[j]), 0)
    end
  end
end

-- Median time of ml.knn on dev for one configuration, after validating.
local function time_knn(dev, n, d)
  local opts = {dtype = "float32", device = dev}
  local sets = {}
  for r = 1, 2 do
    sets[r] = {ml.uniform(-500, 500, n, d, opts), ml.uniform(-500, 500, n, d, opts)}
  end
  local Q, R = sets[1][1], sets[1][2]
  local dist, index = ml.knn(Q, R, K)
  for _, i in ipairs({1, n // 2, n}) do check(Q, R, dist, index, i) end
  local repeats = n * n * d > 2^32 and math.max(3, o.repeats // 2) or o.repeats
  local t = bench.median_time(function(q, r) return ml.knn(q, r, K) end, sets, repeats)
  return t, {Q, R, dist, index}
end

local peer, why
if os.getenv("PYTHON") ~= "" then
  local python = os.getenv("PYTHON") or "python3"
  local cmd = ("scripts/bench/peers_knn_torch.py --max %d --device %s"):format(
    o.max, on_gpu and "cuda" or "cpu")
  peer, why = bench.peer_times(python, cmd)
end
if not peer then why = why or "no python3" end

local csv = assert(io.open(o.csv, "w"))
csv:write("device,m,n,d,k,moonlab_s,cpu_s,torch_s,torch_over_moonlab,cpu_over_moonlab\n")
print(("kNN grid (Garcia et al.): k = %d, float32, uniform in [-500, 500], on %s"):format(K, device))
if not peer then print("torch: " .. why) end
print(("%6s %4s %11s %11s %11s %9s %9s"):format("m=n", "d", "moonlab", "cpu", "torch",
  "vs torch", "vs cpu"))
for _, n in ipairs(sizes) do
  for _, d in ipairs(DIMS) do
    local t, run = time_knn(device, n, d)
    local tc
    if on_gpu and n <= o["cpu-max"] then
      local Q, R, dist, index = table.unpack(run)
      local cd, ci = ml.knn(Q:cpu(), R:cpu(), K)
      if not ml.eq(cd, dist:cpu()):all() or not ml.eq(ci, index:cpu()):all() then
        error(("knn_grid: CPU and %s differ for n = %d, d = %d"):format(device, n, d), 0)
      end
      tc = time_knn("cpu", n, d)
    end
    local tp = peer and peer[("knn_%d_%d"):format(n, d)]
    csv:write(("%s,%d,%d,%d,%d,%.6g,%s,%s,%s,%s\n"):format(device, n, n, d, K, t,
      tc and ("%.6g"):format(tc) or "", tp and ("%.6g"):format(tp) or "",
      tp and ("%.4g"):format(tp / t) or "", tc and ("%.4g"):format(tc / t) or ""))
    print(("%6d %4d %11s %11s %11s %9s %9s"):format(n, d, bench.format_time(t),
      bench.format_time(tc), bench.format_time(tp),
      tp and ("%.2fx"):format(tp / t) or "-", tc and ("%.2fx"):format(tc / t) or "-"))
  end
end
csv:close()
print("speed-up = other time / moonlab time (above 1: moonlab is faster); CSV: " .. o.csv)
if o.plot then plot(o.csv, o.plot) end
