local ml = require "moonlab"

local function T(x) return x:totable() end

local nan = 0 / 0

-- Compares flat tables, NaN equal to NaN.
local function same_nan(expected, actual)
  assert.equal(#expected, #actual)
  for i = 1, #expected do
    local e, a = expected[i], actual[i]
    if e ~= e then
      assert.is_true(a ~= a, "element " .. i .. " should be NaN")
    else
      assert.equal(e, a, "element " .. i)
    end
  end
end

-- Deterministic pseudo-random integers in [0, m).
local function lcg(seed)
  local s = seed
  return function(m)
    s = (s * 1103515245 + 12345) % 2147483648
    return s % m
  end
end

-- The stable sort of t: values and 1-based positions.
local function ref_sort(t, descending)
  local p = {}
  for i = 1, #t do p[i] = i end
  table.sort(p, function(i, j)
    if t[i] ~= t[j] then
      if descending then return t[i] > t[j] end
      return t[i] < t[j]
    end
    return i < j
  end)
  local v = {}
  for i = 1, #t do v[i] = t[p[i]] end
  return v, p
end

describe("sort", function()
  it("sorts a 1-D array ascending and descending", function()
    local v, i = ml.array({3, 1, 2}):sort()
    assert.same({1, 2, 3}, T(v))
    assert.same({2, 3, 1}, T(i))
    assert.equal("int64", i.dtype)
    v, i = ml.sort(ml.array({3, 1, 2}), {descending = true})
    assert.same({3, 2, 1}, T(v))
    assert.same({1, 3, 2}, T(i))
  end)

  it("is stable: equal keys keep their order, ascending and descending", function()
    local x = ml.array({2, 1, 2, 1, 2, 1})
    local v, i = x:sort()
    assert.same({1, 1, 1, 2, 2, 2}, T(v))
    assert.same({2, 4, 6, 1, 3, 5}, T(i))
    v, i = x:sort({descending = true})
    assert.same({2, 2, 2, 1, 1, 1}, T(v))
    assert.same({1, 3, 5, 2, 4, 6}, T(i))
  end)

  it("puts NaN after every number ascending, first descending", function()
    local x = ml.array({1, nan, -math.huge, nan, math.huge, 0})
    local v, i = x:sort()
    same_nan({-math.huge, 0, 1, math.huge, nan, nan}, T(v))
    assert.same({3, 6, 1, 5, 2, 4}, T(i))
    v, i = x:sort({descending = true})
    same_nan({nan, nan, math.huge, 1, 0, -math.huge}, T(v))
    assert.same({2, 4, 5, 1, 6, 3}, T(i))
  end)

  it("treats -0 and +0 as equal (stable), keeping the signs", function()
    local v, i = ml.array({0.0, -0.0, -1.0}):sort()
    assert.same({3, 1, 2}, T(i))
    local t = T(v)
    assert.equal(1 / 0, 1 / t[2])
    assert.equal(-1 / 0, 1 / t[3])
  end)

  it("sorts every dtype, exactly for large int64", function()
    for _, d in ipairs({"float32", "int32", "uint8", "int64"}) do
      local v, i = ml.array({5, 0, 200, 7}, {dtype = d}):sort()
      assert.equal(d, v.dtype)
      assert.same({0, 5, 7, 200}, T(v))
      assert.same({2, 1, 4, 3}, T(i))
    end
    local big = 1 << 53
    local v, i = ml.array({big + 1, big, -big - 1, math.mininteger, math.maxinteger}):sort()
    assert.same({math.mininteger, -big - 1, big, big + 1, math.maxinteger}, T(v))
    assert.same({4, 3, 2, 1, 5}, T(i))
    v = ml.array({-5, 3, -7}, {dtype = "int32"}):sort()
    assert.same({-7, -5, 3}, T(v))
    v = ml.array({-1.5, 2.25, -3e38}, {dtype = "float32"}):sort({descending = true})
    assert.same({2.25, -1.5}, {T(v)[1], T(v)[2]})
  end)

  it("sorts along dimension 2 (the default) and 1 of a 2-D array", function()
    local x = ml.array({{3, 1, 2}, {1, 3, 1}})
    local v, i = x:sort()
    assert.same({{1, 2, 3}, {1, 1, 3}}, T(v))
    assert.same({{2, 3, 1}, {1, 3, 2}}, T(i))
    v, i = x:sort(2, {descending = true})
    assert.same({{3, 2, 1}, {3, 1, 1}}, T(v))
    assert.same({{1, 3, 2}, {2, 1, 3}}, T(i))
    v, i = x:sort(1)
    assert.same({{1, 1, 1}, {3, 3, 2}}, T(v))
    assert.same({{2, 1, 2}, {1, 2, 1}}, T(i))
    v, i = x:sort(-2, {descending = true})
    assert.same({{3, 3, 2}, {1, 1, 1}}, T(v))
    assert.same({{1, 2, 1}, {2, 1, 2}}, T(i))
  end)

  it("returns contiguous arrays when sorting along another dimension", function()
    local v, i = ml.array({{3, 1, 2}, {1, 3, 1}}):sort(1)
    assert.same({3, 1}, v:stride())
    assert.same({3, 1}, i:stride())
  end)

  it("sorts the middle dimension of a 3-D array", function()
    local x = ml.array({{{4, 1}, {2, 3}, {3, 2}}, {{1, 1}, {0, 5}, {1, 0}}})
    local v, i = x:sort(2)
    assert.same({{{2, 1}, {3, 2}, {4, 3}}, {{0, 0}, {1, 1}, {1, 5}}}, T(v))
    assert.same({{{2, 1}, {3, 3}, {1, 2}}, {{2, 3}, {1, 1}, {3, 2}}}, T(i))
  end)

  it("handles empty arrays and size-1 dimensions", function()
    local v, i = ml.zeros(0):sort()
    assert.same({0}, v.shape)
    assert.same({0}, i.shape)
    v, i = ml.zeros(3, 0):sort(1)
    assert.same({3, 0}, v.shape)
    v, i = ml.array({{5}, {4}}):sort()
    assert.same({{5}, {4}}, T(v))
    assert.same({{1}, {1}}, T(i))
    v, i = ml.array({{5}, {4}}):sort(1)
    assert.same({{4}, {5}}, T(v))
    assert.same({{2}, {1}}, T(i))
  end)

  it("sorts a non-contiguous view", function()
    local x = ml.array({{9, 1, 8}, {2, 7, 3}, {5, 4, 6}})
    local v, i = x[{{}, 3}]:sort()
    assert.same({3, 6, 8}, T(v))
    assert.same({2, 3, 1}, T(i))
    v, i = x[{{}, {1, 3, 2}}]:sort(2, {descending = true})
    assert.same({{9, 8}, {3, 2}, {6, 5}}, T(v))
    assert.same({{1, 2}, {2, 1}, {2, 1}}, T(i))
  end)

  it("argsort returns the indices only", function()
    local x = ml.array({{3, 1, 2}, {1, 3, 1}})
    assert.same({{2, 3, 1}, {1, 3, 2}}, T(x:argsort()))
    assert.same({{1, 3, 2}, {2, 1, 3}}, T(ml.argsort(x, 2, {descending = true})))
    assert.same({{2, 1, 2}, {1, 2, 1}}, T(x:argsort(1)))
    local r = {x:argsort()}
    assert.equal(1, #r)
  end)

  it("matches a reference stable sort on a long row with many ties", function()
    local rnd = lcg(7)
    local t = {}
    for k = 1, 50000 do t[k] = rnd(1000) - 500 end
    local x = ml.array(t)
    for _, desc in ipairs({false, true}) do
      local v, i = x:sort({descending = desc})
      local ev, ei = ref_sort(t, desc)
      assert.same(ev, T(v))
      assert.same(ei, T(i))
    end
  end)

  it("sorts many rows (parallel path), float32 with NaN", function()
    local rnd = lcg(11)
    local rows, n = 300, 120
    local t = {}
    for r = 1, rows do
      t[r] = {}
      for c = 1, n do
        local u = rnd(50)
        t[r][c] = u == 0 and nan or (u - 25) / 4
      end
    end
    local v, i = ml.array(t, {dtype = "float32"}):sort(2)
    v, i = T(v), T(i)
    for r = 1, rows, 23 do
      local key, nans = {}, 0
      for c = 1, n do -- NaN as a value above every number
        key[c] = t[r][c] ~= t[r][c] and 1e300 or t[r][c]
        if key[c] == 1e300 then nans = nans + 1 end
      end
      local ev, ei = ref_sort(key, false)
      assert.same(ei, i[r])
      for c = 1, n - nans do assert.equal(ev[c], v[r][c]) end
      for c = n - nans + 1, n do assert.is_true(v[r][c] ~= v[r][c]) end
    end
  end)

  it("rejects bad dimensions", function()
    assert.has_error(function() ml.zeros(2, 2):sort(3) end,
      "sort: dimension 3 out of range for 2 dimensions")
    assert.has_error(function() ml.zeros(2, 2):sort(0) end,
      "sort: dimensions are 1-based (got 0)")
    assert.has_error(function() ml.full({}, 1):sort() end,
      "sort: dimension -1 out of range for 0 dimensions")
    assert.has_error(function() ml.zeros(2):sort(1, true) end,
      "sort: expected (x [, dim] [, {descending=...}])")
    assert.has_error(function() ml.zeros(2):argsort(1, 1) end,
      "argsort: expected (x [, dim] [, {descending=...}])")
  end)
end)

describe("topk", function()
  it("gives the k largest in order", function()
    local v, i = ml.array({1, 5, 3, 4, 2}):topk(2)
    assert.same({5, 4}, T(v))
    assert.same({2, 4}, T(i))
    assert.equal("int64", i.dtype)
  end)

  it("gives the k smallest with largest = false", function()
    local v, i = ml.topk(ml.array({1, 5, 3, 4, 2}), 3, {largest = false})
    assert.same({1, 2, 3}, T(v))
    assert.same({1, 5, 3}, T(i))
  end)

  it("breaks ties toward the lower index", function()
    local x = ml.array({1, 3, 3, 2, 3, 1})
    local v, i = x:topk(2)
    assert.same({3, 3}, T(v))
    assert.same({2, 3}, T(i))
    v, i = x:topk(1, {largest = false})
    assert.same({1}, T(v))
    assert.same({1}, T(i))
    v, i = x:topk(3, {largest = false})
    assert.same({1, 1, 2}, T(v))
    assert.same({1, 6, 4}, T(i))
  end)

  it("counts NaN as the largest", function()
    local x = ml.array({1, nan, 3, nan})
    local v, i = x:topk(3)
    same_nan({nan, nan, 3}, T(v))
    assert.same({2, 4, 3}, T(i))
    v, i = x:topk(2, {largest = false})
    assert.same({1, 3}, T(v))
    assert.same({1, 3}, T(i))
  end)

  it("with k = n equals a descending sort, with k = 0 is empty", function()
    local x = ml.array({2, 7, 1, 7, 3})
    local v, i = x:topk(5)
    local sv, si = x:sort({descending = true})
    assert.same(T(sv), T(v))
    assert.same(T(si), T(i))
    v, i = x:topk(0)
    assert.same({0}, v.shape)
    assert.same({0}, i.shape)
    v, i = ml.zeros(3, 4):topk(0)
    assert.same({3, 0}, v.shape)
    v, i = ml.zeros(0):topk(0)
    assert.same({0}, v.shape)
  end)

  it("works along dimension 1 and on a 3-D array", function()
    local x = ml.array({{1, 9}, {8, 2}, {5, 5}})
    local v, i = x:topk(2, 1)
    assert.same({{8, 9}, {5, 5}}, T(v))
    assert.same({{2, 1}, {3, 3}}, T(i))
    local g = ml.array({{{1, 4, 2}, {6, 5, 4}}, {{0, 0, 1}, {3, 9, 3}}})
    v, i = g:topk(1, 3)
    assert.same({{{4}, {6}}, {{1}, {9}}}, T(v))
    assert.same({{{2}, {1}}, {{3}, {2}}}, T(i))
    v, i = g:topk(1, 2, {largest = false})
    assert.same({{{1, 4, 2}}, {{0, 0, 1}}}, T(v))
    assert.same({{{1, 1, 1}}, {{1, 1, 1}}}, T(i))
  end)

  it("with sorted = false keeps the original order", function()
    local v, i = ml.array({5, 1, 4, 1, 5, 9, 2, 6}):topk(3, {sorted = false})
    assert.same({5, 9, 6}, T(v))
    assert.same({1, 6, 8}, T(i))
    v, i = ml.array({{5, 1, 4}, {2, 8, 7}}):topk(2, 2, {sorted = false, largest = false})
    assert.same({{1, 4}, {2, 7}}, T(v))
    assert.same({{2, 3}, {1, 3}}, T(i))
    v, i = ml.array({{5, 1, 4}, {2, 8, 7}, {3, 0, 9}}):topk(2, 1, {sorted = false, largest = false})
    assert.same({{2, 1, 4}, {3, 0, 7}}, T(v))
    assert.same({{2, 1, 1}, {3, 3, 2}}, T(i))
    v, i = ml.array({3, 1}):topk(0, {sorted = false})
    assert.same({0}, v.shape)
  end)

  it("keeps the dtype", function()
    for _, d in ipairs({"float32", "int32", "uint8", "int64", "float64"}) do
      local v, i = ml.array({3, 9, 4}, {dtype = d}):topk(2)
      assert.equal(d, v.dtype)
      assert.same({9, 4}, T(v))
      assert.same({2, 3}, T(i))
    end
  end)

  it("agrees with sort on long rows with ties (selection path)", function()
    local rnd = lcg(3)
    local rows, n = 40, 400
    local t = {}
    for r = 1, rows do
      t[r] = {}
      for c = 1, n do t[r][c] = rnd(30) end
    end
    local x = ml.array(t)
    for _, largest in ipairs({true, false}) do
      for _, k in ipairs({1, 5, 20, 49, 50, 200}) do
        local v, i = x:topk(k, 2, {largest = largest})
        local sv, si = x:sort(2, {descending = largest})
        assert.same(T(sv[{{}, {1, k}}]), T(v))
        assert.same(T(si[{{}, {1, k}}]), T(i))
      end
    end
  end)

  it("handles many rows (parallel path)", function()
    local rnd = lcg(5)
    local rows, n = 2000, 50
    local t = {}
    for r = 1, rows do
      t[r] = {}
      for c = 1, n do t[r][c] = rnd(1000) / 7 end
    end
    local v, i = ml.array(t):topk(3)
    v, i = T(v), T(i)
    for r = 1, rows, 97 do
      local ev, ei = ref_sort(t[r], true)
      assert.same({ev[1], ev[2], ev[3]}, v[r])
      assert.same({ei[1], ei[2], ei[3]}, i[r])
    end
  end)

  it("rejects k out of range and bad dimensions", function()
    local x = ml.zeros(2, 60)
    assert.has_error(function() x:topk(70) end,
      "topk: k = 70 exceeds the 60 elements of dimension 2")
    assert.has_error(function() x:topk(3, 1) end,
      "topk: k = 3 exceeds the 2 elements of dimension 1")
    assert.has_error(function() x:topk(-1) end, "topk: k = -1 is negative")
    assert.has_error(function() x:topk(1, 3) end,
      "topk: dimension 3 out of range for 2 dimensions")
    assert.has_error(function() x:topk(1, 2, true) end,
      "topk: expected (x, k [, dim] [, {largest=..., sorted=...}])")
  end)
end)
