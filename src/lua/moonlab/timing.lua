-- ml.timeit: the time of one call of a function, as Python's timeit and
-- IPython's %timeit report it, for scripts and the shell. The device is
-- synchronized before and after each run of `number` calls, so that the
-- time counts the work the calls queue and not only their launches.
local check_options = require("moonlab.options").check

local M = {}

-- The number of calls a run makes when not given: the first of 1, 2, 5,
-- 10, 20, 50, ... whose run takes at least this long (timeit.autorange).
local AUTORANGE_S = 0.2
local AUTORANGE_MAX = 10^9

local function sorted(xs)
  local s = table.move(xs, 1, #xs, 1, {})
  table.sort(s)
  return s
end

local function median(s)
  local n = #s
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- "1.23 ms": three significant digits in s, ms, µs or ns.
local function duration(t)
  local units = {{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}}
  for _, u in ipairs(units) do
    if t >= u[1] or u[1] == 1e-9 then
      local v = t / u[1]
      local digits = v >= 100 and 0 or v >= 10 and 1 or 2
      return ("%." .. digits .. "f %s"):format(v, u[2])
    end
  end
end

local Result = {}
Result.__index = Result

function Result.__tostring(r)
  local spread = r.stdev and (" ± " .. duration(r.stdev)) or ""
  return ("%s%s (median of %d run%s, %d loop%s each)"):format(
    duration(r.median), spread, r["repeat"], r["repeat"] == 1 and "" or "s",
    r.number, r.number == 1 and "" or "s")
end

function M.timeit(fn, opts)
  check_options("timeit", opts)
  if type(fn) ~= "function" then
    error(("timeit: fn must be a function, not %s"):format(type(fn)), 2)
  end
  opts = opts or {}
  if opts["repeat"] and opts.repeats and opts["repeat"] ~= opts.repeats then
    error("timeit: options repeat and repeats disagree", 2)
  end
  local repeats, number = opts["repeat"] or opts.repeats or 7, opts.number
  local warmup = opts.warmup or 1
  if repeats < 1 then
    error(("timeit: repeat must be at least 1 (got %d)"):format(repeats), 2)
  end
  if number and number < 1 then
    error(("timeit: number must be at least 1 (got %d)"):format(number), 2)
  end
  if warmup < 0 then
    error(("timeit: warmup must be non-negative (got %d)"):format(warmup), 2)
  end
  local ml = require "moonlab"
  local function run(n)
    ml.synchronize()
    local t0 = ml.clock()
    for _ = 1, n do fn() end
    ml.synchronize()
    return ml.clock() - t0
  end
  for _ = 1, warmup do fn() end
  if not number then
    local scale, steps, i = 1, {1, 2, 5}, 1
    number = 1
    while run(number) < AUTORANGE_S and number < AUTORANGE_MAX do
      i = i % 3 + 1
      if i == 1 then scale = scale * 10 end
      number = steps[i] * scale
    end
  end
  local times = {}
  for i = 1, repeats do times[i] = run(number) / number end
  local s, sum = sorted(times), 0
  for _, t in ipairs(times) do sum = sum + t end
  local r = {times = times, median = median(s), min = s[1], max = s[#s],
             mean = sum / repeats, number = number}
  r["repeat"] = repeats
  if repeats > 1 then
    local ss = 0
    for _, t in ipairs(times) do ss = ss + (t - r.mean)^2 end
    r.stdev = math.sqrt(ss / (repeats - 1))
  end
  return setmetatable(r, Result)
end

return M
