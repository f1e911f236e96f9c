-- ml.timeit (moonlab/timing.lua): the structure of its result, its
-- statistics' order and its one-line summary. Times are not compared with
-- thresholds (they flake on shared machines); a function that does ten
-- times the work must not look faster than the one that does it once.
local ml = require "moonlab"

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

describe("timeit", function()
  it("returns seconds per call with their statistics", function()
    local calls = 0
    local r = ml.timeit(function() calls = calls + 1 end,
                        {repeats = 5, number = 3, warmup = 2})
    assert.equal(2 + 5 * 3, calls)
    assert.equal(5, r["repeat"])
    assert.equal(3, r.number)
    assert.equal(5, #r.times)
    assert.is_true(0 <= r.min and r.min <= r.median and r.median <= r.max)
    assert.is_true(r.min <= r.mean and r.mean <= r.max)
    local sum = 0
    for _, t in ipairs(r.times) do sum = sum + t end
    assert.near(sum / 5, r.mean, 1e-12)
    assert.is_true(r.stdev >= 0)
  end)

  it("prints one line of the median, spread and counts", function()
    local r = ml.timeit(function() end, {["repeat"] = 4, number = 10})
    local line = tostring(r)
    assert.is_nil(line:find("\n"))
    assert.truthy(line:match("^%d[%d.]* [mµn]?s ± %d[%d.]* [mµn]?s %(median of 4 runs, 10 loops each%)$"),
                  line)
    local one = ml.timeit(function() end, {repeats = 1, number = 1, warmup = 0})
    assert.is_nil(one.stdev)
    assert.truthy(tostring(one):match("%(median of 1 run, 1 loop each%)$"))
  end)

  it("chooses the number of calls when not given", function()
    local r = ml.timeit(function() end, {repeats = 1})
    assert.is_true(r.number > 1)
    assert.truthy(tostring(r.number):match("^[125]0*$"))
  end)

  it("ranks work of known relative cost, device synchronized", function()
    local a = ml.randn(256, 256)
    local once = ml.timeit(function() return a:mm(a) end,
                           {repeats = 5, number = 2})
    local tenfold = ml.timeit(function()
      for _ = 1, 10 do a:mm(a) end
    end, {repeats = 5, number = 2})
    assert.is_true(tenfold.min > once.min,
                   ("%s vs %s"):format(tostring(tenfold), tostring(once)))
  end)

  it("checks its arguments", function()
    assert.equal("timeit: fn must be a function, not number",
                 errmsg(ml.timeit, 3))
    assert.equal("timeit: repeat must be at least 1 (got 0)",
                 errmsg(ml.timeit, function() end, {repeats = 0}))
    assert.equal("timeit: number must be at least 1 (got 0)",
                 errmsg(ml.timeit, function() end, {number = 0}))
    assert.equal("timeit: options repeat and repeats disagree",
                 errmsg(ml.timeit, function() end, {["repeat"] = 2, repeats = 3}))
    assert.equal("timeit: unknown option 'repet' (did you mean 'repeat'?)",
                 errmsg(ml.timeit, function() end, {repet = 2}))
    local calls = 0
    assert.has_error(function() ml.timeit(function() calls = calls + 1; error("boom") end) end)
    assert.equal(1, calls)
  end)
end)
