local ml = require "moonlab"
require "moonlab.test"

local function T(x) return x:totable() end

-- A nested table d1 x d2 x d3 with the value 100 i + 10 j + k at (i, j, k).
local function grid(d1, d2, d3)
  local t = {}
  for i = 1, d1 do
    t[i] = {}
    for j = 1, d2 do
      t[i][j] = {}
      for k = 1, d3 do t[i][j][k] = 100 * i + 10 * j + k end
    end
  end
  return t
end

-- Deterministic pseudo-random integers in [0, m).
local function lcg(seed)
  local s = seed
  return function(m)
    s = (s * 1103515245 + 12345) % 2147483648
    return s % m
  end
end

describe("index_select", function()
  local m = ml.array({{1, 2, 3}, {4, 5, 6}})

  it("selects rows and columns, repeating and reordering", function()
    assert.same({{4, 5, 6}, {1, 2, 3}, {4, 5, 6}}, T(m:index_select(1, {2, 1, 2})))
    assert.same({{3, 1}, {6, 4}}, T(m:index_select(2, {3, 1})))
    assert.same({{3, 3}, {6, 6}}, T(ml.index_select(m, -1, {3, 3})))
  end)

  it("works along every dimension of a 3-D array", function()
    local g = ml.array(grid(2, 3, 4))
    assert.same({{{211, 212, 213, 214}, {221, 222, 223, 224}, {231, 232, 233, 234}}},
      T(g:index_select(1, {2})))
    assert.same({{{131, 132, 133, 134}, {111, 112, 113, 114}},
                 {{231, 232, 233, 234}, {211, 212, 213, 214}}}, T(g:index_select(2, {3, 1})))
    assert.same({{{114, 111}, {124, 121}, {134, 131}},
                 {{214, 211}, {224, 221}, {234, 231}}}, T(g:index_select(3, {4, 1})))
  end)

  it("keeps the dtype", function()
    for _, t in ipairs({"float32", "float64", "int32", "int64", "uint8"}) do
      local x = ml.array({{1, 2}, {3, 4}}, {dtype = t})
      local r = x:index_select(2, {2})
      assert.equal(t, r.dtype)
      assert.same({{2}, {4}}, T(r))
    end
  end)

  it("accepts int32, uint8 and int64 index arrays and a single integer", function()
    assert.same({{3}, {6}}, T(m:index_select(2, ml.array({3}, {dtype = "int32"}))))
    assert.same({{2}, {5}}, T(m:index_select(2, ml.array({2}, {dtype = "uint8"}))))
    assert.same({{4, 5, 6}}, T(m:index_select(1, ml.array({2}))))
    local r = m:index_select(1, 2)
    assert.same({1, 3}, r.shape)
    assert.same({{4, 5, 6}}, T(r))
  end)

  it("reads a non-contiguous index", function()
    local idx = ml.array({{3, 9}, {1, 9}})[{{}, 1}]
    assert.same({{3, 1}, {6, 4}}, T(m:index_select(2, idx)))
    local bad = ml.array({{3, 9}, {4, 9}})[{{}, 1}]
    assert.has_error(function() m:index_select(2, bad) end,
      "index_select: index 4 is out of bounds for dimension 2 with size 3")
  end)

  it("gives an empty dimension for an empty index", function()
    local r = m:index_select(2, {})
    assert.same({2, 0}, r.shape)
    assert.equal("int64", r.dtype)
    assert.same({0, 3}, m:index_select(1, ml.zeros(0, {dtype = "int64"})).shape)
  end)

  it("selects from an empty array along another dimension", function()
    local e = ml.zeros(0, 3)
    assert.same({0, 2}, e:index_select(2, {3, 1}).shape)
  end)

  it("reads through non-contiguous views", function()
    local x = ml.array({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}})
    local v = x[{{}, {1, 4, 2}}] -- columns 1 and 3
    assert.same({{3, 1}, {7, 5}, {11, 9}}, T(v:index_select(2, {2, 1})))
    assert.same({{9, 11}, {1, 3}}, T(v:index_select(1, {3, 1})))
    local col = x[{{}, 2}]
    assert.same({10, 2}, T(col:index_select(1, {3, 1})))
  end)

  it("counts negative indices from the end, as x[-1]", function()
    assert.same({{3, 2, 1}, {6, 5, 4}}, T(m:index_select(2, {-1, -2, -3})))
    assert.same({{4, 5, 6}, {1, 2, 3}}, T(m:index_select(1, {-1, 1})))
    assert.same({{3}, {6}}, T(m:index_select(2, ml.array({-1}, {dtype = "int32"}))))
    assert.same({{1, 2, 3}}, T(m:index_select(1, -2)))
    local g = ml.array(grid(2, 3, 4))
    assert.same(T(g:index_select(3, {4, 1})), T(g:index_select(3, {-1, -4})))
  end)

  it("rejects out-of-range indices, negative ones too", function()
    local x = ml.zeros(10)
    assert.has_error(function() x:index_select(1, {11}) end,
      "index_select: index 11 is out of bounds for dimension 1 with size 10")
    assert.has_error(function() x:index_select(1, {0}) end,
      "index_select: index 0 is out of bounds for dimension 1 with size 10")
    assert.has_error(function() x:index_select(1, {3, -11}) end,
      "index_select: index -11 is out of bounds for dimension 1 with size 10")
    assert.has_error(function() x:index_select(1, {math.mininteger}) end,
      "index_select: index " .. math.mininteger .. " is out of bounds for dimension 1 with size 10")
    assert.has_error(function() m:index_select(2, {1, 4}) end,
      "index_select: index 4 is out of bounds for dimension 2 with size 3")
  end)

  it("checks the index also when the result is empty", function()
    assert.has_error(function() ml.zeros(3, 0):index_select(1, ml.array({4})) end,
      "index_select: index 4 is out of bounds for dimension 1 with size 3")
    assert.has_error(function() ml.zeros(0, 3):index_select(2, {1, -4}) end,
      "index_select: index -4 is out of bounds for dimension 2 with size 3")
    assert.has_error(function() ml.zeros(0, 3):index_select(1, {1}) end,
      "index_select: index 1 is out of bounds for dimension 1 with size 0")
    local e = ml.zeros(3, 0):index_select(1, {3, -3, 1})
    assert.same({3, 0}, e.shape)
  end)

  it("rejects float indices, 2-D indices and bad dimensions", function()
    assert.has_error(function() m:index_select(1, {1.5}) end,
      "index_select: indices must be integers, got float64")
    assert.has_error(function() m:index_select(1, ml.array({1}, {dtype = "float32"})) end,
      "index_select: indices must be integers, got float32")
    assert.has_error(function() m:index_select(1, {{1, 2}, {1, 2}}) end,
      "index_select: index must be 1-D, got shape 2x2")
    assert.has_error(function() m:index_select(3, {1}) end,
      "index_select: dimension 3 out of range for 2 dimensions")
  end)

  it("selects rows of a large array (parallel path)", function()
    local n, c = 400, 150
    local t = {}
    for i = 1, n do
      t[i] = {}
      for j = 1, c do t[i][j] = (i - 1) * c + j - 1 end
    end
    local a = ml.array(t)
    local idx = {}
    for i = 1, n do idx[i] = n + 1 - i end
    local r = T(a:index_select(1, idx))
    for i = 1, n, 37 do
      for j = 1, c, 11 do assert.equal((n - i) * c + j - 1, r[i][j]) end
    end
    local cols = T(a:index_select(2, {c, 1}))
    for i = 1, n, 29 do
      assert.same({(i - 1) * c + c - 1, (i - 1) * c}, cols[i])
    end
    local bad = {}
    for i = 1, n do bad[i] = 1 end
    bad[50], bad[300] = 500, 401
    assert.has_error(function() a:index_select(1, bad) end,
      "index_select: index 500 is out of bounds for dimension 1 with size 400")
  end)
end)

describe("gather", function()
  local t = ml.array({{1, 2}, {3, 4}})

  it("gathers along dimension 2 and 1 (Torch semantics)", function()
    assert.same({{1, 1}, {4, 3}}, T(t:gather(2, {{1, 1}, {2, 1}})))
    assert.same({{1, 4}, {3, 2}}, T(t:gather(1, {{1, 2}, {2, 1}})))
    assert.same({{2, 2, 1}}, T(ml.gather(t, -1, {{2, 2, 1}})))
  end)

  it("takes an index smaller than the array outside dim", function()
    local a = ml.array({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}})
    assert.same({{4, 1}, {7, 7}}, T(a:gather(2, {{4, 1}, {3, 3}})))
    assert.same({{9, 2}}, T(a:gather(1, {{3, 1}})))
  end)

  it("gathers in 3-D along the first and last dimension", function()
    local g = ml.array(grid(2, 2, 3))
    assert.same({{{211, 112, 213}, {121, 222, 223}}},
      T(g:gather(1, {{{2, 1, 2}, {1, 2, 2}}})))
    assert.same({{{113, 111}, {122, 122}}, {{211, 213}, {223, 221}}},
      T(g:gather(3, {{{3, 1}, {2, 2}}, {{1, 3}, {3, 1}}})))
  end)

  it("keeps the dtype and reads non-contiguous views", function()
    for _, d in ipairs({"float32", "uint8", "int32"}) do
      local r = ml.array({{1, 2}, {3, 4}}, {dtype = d}):gather(2, {{2}, {1}})
      assert.equal(d, r.dtype)
      assert.same({{2}, {3}}, T(r))
    end
    local a = ml.array({{1, 2, 3, 4}, {5, 6, 7, 8}})
    local v = a[{{}, {2, 4, 2}}] -- columns 2 and 4
    assert.same({{4, 2}, {6, 6}}, T(v:gather(2, {{2, 1}, {1, 1}})))
  end)

  it("gives an empty result for an empty index", function()
    local r = t:gather(2, ml.zeros(2, 0, {dtype = "int64"}))
    assert.same({2, 0}, r.shape)
  end)

  it("counts negative indices from the end", function()
    assert.same({{2, 1}, {4, 3}}, T(t:gather(2, {{-1, -2}, {2, -2}})))
    assert.same({{3, 2}}, T(t:gather(1, {{-1, -2}})))
    assert.has_error(function() t:gather(2, {{1, -3}, {1, 1}}) end,
      "gather: index -3 is out of bounds for dimension 2 with size 2")
  end)

  it("reports bad indices and shapes", function()
    assert.has_error(function() t:gather(2, {{1, 3}, {1, 1}}) end,
      "gather: index 3 is out of bounds for dimension 2 with size 2")
    assert.has_error(function() t:gather(2, {{1, 1}, {0, 1}}) end,
      "gather: index 0 is out of bounds for dimension 2 with size 2")
    assert.has_error(function() t:gather(2, {1, 2}) end,
      "gather: index of shape 2 does not fit an array of shape 2x2 outside dimension 2")
    assert.has_error(function() t:gather(2, {{1}, {1}, {1}}) end,
      "gather: index of shape 3x1 does not fit an array of shape 2x2 outside dimension 2")
    assert.has_error(function() t:gather(1, {{1.0, 2.0}}) end,
      "gather: indices must be integers, got float64")
  end)

  it("gathers a large array (parallel path)", function()
    local n, c = 300, 200
    local rows, idx = {}, {}
    for i = 1, n do
      rows[i], idx[i] = {}, {}
      for j = 1, c do
        rows[i][j] = i * 1000 + j
        idx[i][j] = c + 1 - j
      end
    end
    local r = T(ml.array(rows):astype("float32"):gather(2, idx))
    for i = 1, n, 13 do
      for j = 1, c, 17 do assert.equal(i * 1000 + c + 1 - j, r[i][j]) end
    end
  end)
end)

describe("scatter", function()
  it("follows Torch's example, using the leading block of a larger src", function()
    local src = ml.array({{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}})
    local r = ml.zeros(3, 5, {dtype = "int64"}):scatter(1, {{1, 2, 3, 1}}, src)
    assert.same({{1, 0, 0, 4, 0}, {0, 2, 0, 0, 0}, {0, 0, 3, 0, 0}}, T(r))
  end)

  it("scatters along dimension 2; the last of repeated indices wins", function()
    local a = ml.zeros(2, 4)
    local r = a:scatter(2, {{2, 4}, {1, 1}}, {{7, 8}, {9, 10}})
    assert.same({{0, 7, 0, 8}, {10, 0, 0, 0}}, T(r))
    assert.same({{0, 0, 0, 0}, {0, 0, 0, 0}}, T(a)) -- a copy
    assert.equal("float64", r.dtype)
  end)

  it("scatters a number", function()
    local r = ml.ones(2, 3, {dtype = "int32"}):scatter(2, {{3}, {1}}, 5)
    assert.equal("int32", r.dtype)
    assert.same({{1, 1, 5}, {5, 1, 1}}, T(r))
  end)

  it("converts src to the array's dtype", function()
    local r = ml.zeros(3, {dtype = "uint8"}):scatter(1, {3, 1}, ml.array({7, 9}))
    assert.equal("uint8", r.dtype)
    assert.same({9, 0, 7}, T(r))
  end)

  it("scatters in 3-D along the middle dimension", function()
    local r = ml.zeros(2, 2, 2, {dtype = "int64"}):scatter(2, {{{2, 1}}, {{1, 1}}}, {{{5, 6}}, {{7, 8}}})
    assert.same({{{0, 6}, {5, 0}}, {{7, 8}, {0, 0}}}, T(r))
  end)

  it("writes into a copy of a non-contiguous view", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    local col = x[{{}, 2}]
    assert.same({5, 5}, T(col:scatter(1, {1}, 5)))
    assert.same({{1, 2, 3}, {4, 5, 6}}, T(x))
  end)

  it("counts negative indices from the end", function()
    local r = ml.zeros(2, 4, {dtype = "int64"}):scatter(2, {{-1, 1}, {-4, -3}}, {{7, 8}, {9, 10}})
    assert.same({{8, 0, 0, 7}, {9, 10, 0, 0}}, T(r))
    r = ml.zeros(3, {dtype = "int64"}):scatter(1, {-1, 3}, {1, 2}) -- the same place: the last wins
    assert.same({0, 0, 2}, T(r))
    assert.has_error(function() ml.zeros(2, 4):scatter(2, {{-5}, {1}}, 1) end,
      "scatter: index -5 is out of bounds for dimension 2 with size 4")
  end)

  it("reports bad indices and shapes", function()
    local a = ml.zeros(2, 4)
    assert.has_error(function() a:scatter(2, {{5}, {1}}, 1) end,
      "scatter: index 5 is out of bounds for dimension 2 with size 4")
    assert.has_error(function() a:scatter(2, {{1, 2}, {1, 2}}, {1, 2, 3}) end,
      "scatter: cannot expand shape 3 to 2x2")
    assert.has_error(function() a:scatter(2, {{1.5}, {1}}, 1) end,
      "scatter: indices must be integers, got float64")
  end)

  it("is deterministic with repeated indices on a large array (parallel path)", function()
    local n, c = 500, 100
    local idx, src = {}, {}
    for i = 1, n do
      idx[i], src[i] = {}, {}
      for j = 1, c do
        idx[i][j] = (j % 2) + 1 -- 2, 1, 2, 1, ...
        src[i][j] = i * 1000 + j
      end
    end
    local r = T(ml.zeros(n, 3):scatter(2, idx, src))
    for i = 1, n, 7 do
      assert.same({i * 1000 + c, i * 1000 + c - 1, 0}, r[i])
    end
  end)
end)

describe("masked_select", function()
  local x = ml.array({{1, 2, 3}, {4, 5, 6}})

  it("selects in C order", function()
    local m = ml.array({{1, 0, 1}, {0, 0, 1}}, {dtype = "uint8"})
    assert.same({1, 3, 6}, T(x:masked_select(m)))
    assert.same({1, 3, 6}, T(x:masked_select({{true, false, true}, {false, false, true}})))
  end)

  it("broadcasts the mask to the array", function()
    assert.same({1, 3, 4, 6}, T(x:masked_select({1, 0, 1})))
    assert.same({4, 5, 6}, T(x:masked_select({{0}, {1}})))
  end)

  it("gives an empty array when nothing is selected", function()
    local r = x:masked_select(ml.zeros(2, 3, {dtype = "uint8"}))
    assert.same({0}, r.shape)
    assert.equal("int64", r.dtype)
    assert.same({0}, ml.zeros(0, 3):masked_select({1, 1, 1}).shape)
  end)

  it("selects everything, keeping dtype", function()
    local f = ml.array({1.5, -2, 0 / 0}, {dtype = "float32"})
    local r = f:masked_select(ml.ones(3, {dtype = "uint8"}))
    assert.equal("float32", r.dtype)
    local t = T(r)
    assert.same({1.5, -2}, {t[1], t[2]})
    assert.is_true(t[3] ~= t[3])
  end)

  it("reads a non-contiguous view", function()
    local col = x[{{}, 3}]
    assert.same({6}, T(col:masked_select({0, 1})))
  end)

  it("rejects non-uint8 masks and shapes that do not broadcast", function()
    assert.has_error(function() x:masked_select(ml.ones(2, 3)) end,
      "masked_select: mask must be uint8, got float64")
    assert.has_error(function() x:masked_select({1, 0}) end,
      "masked_select: cannot expand shape 2 to 2x3")
  end)

  it("selects from a large array", function()
    local n = 100000
    local a = ml.arange(n)
    local mt = {}
    for i = 1, n do mt[i] = (i % 3 == 0) and 1 or 0 end
    local r = T(a:masked_select(mt))
    assert.equal(n // 3, #r)
    for k = 1, #r, 997 do assert.equal(3 * k - 1, r[k]) end
  end)
end)

-- masked_fill uses the backend's where (the elementwise area).
describe("masked_fill", function()
  local x = ml.array({{1, 2, 3}, {4, 5, 6}})

  it("fills where the mask is true, in a copy", function()
    local m = ml.array({{1, 0, 1}, {0, 0, 1}}, {dtype = "uint8"})
    assert.same({{0, 2, 0}, {4, 5, 0}}, T(x:masked_fill(m, 0)))
    assert.same({{1, 2, 3}, {4, 5, 6}}, T(x))
  end)

  it("broadcasts the mask and keeps the dtype", function()
    local f = ml.zeros(2, 2, {dtype = "float32"})
    local r = f:masked_fill({{1}, {0}}, 2.5)
    assert.equal("float32", r.dtype)
    assert.same({{2.5, 2.5}, {0, 0}}, T(r))
    assert.same({{-1, 2, -1}, {-1, 5, -1}}, T(ml.masked_fill(x, {true, false, true}, -1)))
  end)

  it("fills NaN and handles an empty array", function()
    local r = T(ml.zeros(2):masked_fill({0, 1}, 0 / 0))
    assert.equal(0, r[1])
    assert.is_true(r[2] ~= r[2])
    assert.same({0, 2}, ml.zeros(0, 2):masked_fill({1, 1}, 3).shape)
  end)

  it("rejects values out of range and bad masks", function()
    local u = ml.zeros(2, {dtype = "uint8"})
    assert.has_error(function() u:masked_fill({1, 0}, 300) end,
      "masked_fill: 300 is out of range for uint8")
    assert.has_error(function() u:masked_fill({1, 0, 1}, 1) end,
      "masked_fill: cannot expand shape 3 to 2")
    assert.has_error(function() u:masked_fill(ml.ones(2, {dtype = "int32"}), 1) end,
      "masked_fill: mask must be uint8, got int32")
  end)
end)

describe("errors", function()
  it("leave no arrays behind", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    local u = ml.zeros(3, {dtype = "uint8"})
    local bad = {
      function() return x:index_select(2, {4}) end,
      function() return x:index_select(2, ml.array({4}, {dtype = "int32"})) end,
      function() return x:index_select(1, {1.5}) end,
      function() return x:gather(2, {{1, 4}, {1, 1}}) end,
      function() return x:gather(2, ml.array({{1, 4}, {1, 1}}, {dtype = "int32"})) end,
      function() return x:scatter(2, {{1, 4}, {1, 1}}, 1.5) end,
      function() return x:scatter(2, {{1, 2}, {1, 1}}, {1, 2, 3}) end,
      function() return x:masked_select({1, 0}) end,
      function() return x:masked_fill({1, 0}, 1) end,
      function() return u:masked_fill({1, 0, 1}, 300) end,
      function() return x:topk(5) end,
      function() return x:sort(3) end,
      function() x[{1, {1, 5}}] = 1 end,
      function() x[ml.array({5})] = 1 end,
      function() x[ml.array({1}, {dtype = "int32"})] = {1, 2} end,
      function() x[ml.ones(2, 3, {dtype = "uint8"})] = {1, 2} end,
      function() u[1] = 300 end,
    }
    collectgarbage()
    collectgarbage()
    local before = ml.memory().arrays
    for i, f in ipairs(bad) do assert.is_false(pcall(f), "case " .. i) end
    collectgarbage()
    collectgarbage()
    assert.equal(before, ml.memory().arrays)
  end)
end)

-- NumPy's nonzero and argwhere, 1-based (the expected values are NumPy's
-- plus one).
describe("nonzero and argwhere", function()
  local x = ml.array({{1, 0, 3}, {0, 0, 6}, {7, 0, 0}})

  it("nonzero returns one int64 index array per dimension", function()
    local i, j = ml.nonzero(x)
    assert.same({1, 1, 2, 3}, T(i))
    assert.same({1, 3, 3, 1}, T(j))
    assert.equal("int64", i.dtype)
    local a, b, c = ml.arange(24):reshape(2, 3, 4):mod(5):eq(0):nonzero()
    assert.same({1, 1, 1, 2, 2}, T(a))
    assert.same({1, 2, 3, 1, 3}, T(b))
    assert.same({1, 2, 3, 4, 1}, T(c))
    assert.same({2, 4}, T(ml.nonzero({0, 5, 0, -1})))
    assert.equal(1, select("#", ml.nonzero(ml.ones(3))))
  end)

  it("argwhere returns a count x ndim int64 array of index rows", function()
    local w = x:argwhere()
    assert.equal("int64", w.dtype)
    assert.same({{1, 1}, {1, 3}, {2, 3}, {3, 1}}, T(w))
    assert.same({{1, 1, 1}, {1, 2, 2}, {1, 3, 3}, {2, 1, 4}, {2, 3, 1}},
      T(ml.argwhere(ml.arange(24):reshape(2, 3, 4):mod(5):eq(0))))
    assert.same({{3}}, T(ml.argwhere({0, 0, 2})))
  end)

  it("counts NaN and every dtype's nonzero values, and -0.0 as zero", function()
    assert.same({{1}, {4}}, T(ml.argwhere({0 / 0, 0, -0.0, 1})))
    for _, t in ipairs({"float32", "int32", "int64", "uint8"}) do
      local i, j = ml.array({{0, 2}, {3, 0}}, {dtype = t}):nonzero()
      assert.same({1, 2}, T(i), t)
      assert.same({2, 1}, T(j), t)
    end
  end)

  it("handles nothing nonzero, empty and 0-d arrays", function()
    local i, j = ml.zeros(2, 3):nonzero()
    assert.same({0}, i.shape)
    assert.same({0}, j.shape)
    assert.same({0, 2}, ml.zeros(2, 3):argwhere().shape)
    assert.same({0, 2}, ml.zeros(2, 0):argwhere().shape)
    assert.same({1, 0}, ml.full({}, 3):argwhere().shape)
    assert.same({0, 0}, ml.full({}, 0):argwhere().shape)
    assert.has_error(function() ml.full({}, 3):nonzero() end,
      "nonzero: a 0-d array has no dimensions to index (argwhere takes one)")
  end)

  it("reads views and agrees with masked_select on a large array", function()
    local v = ml.array({{0, 1, 2}, {3, 0, 5}}):t() -- 3x2, strided
    assert.same({{1, 2}, {2, 1}, {3, 1}, {3, 2}}, T(v:argwhere()))
    ml.seed(5)
    local big = ml.randint(0, 3, {300, 70})
    local w = big:argwhere()
    local count = ml.ne(big, 0):astype("int64"):sum()
    assert.same({count, 2}, w.shape)
    local r, c = big:nonzero()
    -- the elements they name are the nonzero ones, in C order
    local flat = (r - 1) * 70 + c
    assert.same(T(big:masked_select(ml.ne(big, 0))), T(big:reshape(300 * 70):index_select(1, flat)))
    assert.same(T(w[{{}, 1}]), T(r))
    assert.same(T(w[{{}, 2}]), T(c))
  end)
end)

describe("index_add", function()
  it("adds src's slices at the indexed slices, repeats adding up, as Torch's", function()
    local x = ml.array({{1, 1}, {2, 2}, {3, 3}})
    local r = x:index_add(1, {3, 1, 3, -1}, ml.array({{10, 20}, {30, 40}, {50, 60}, {1, 1}}))
    assert.same({{31, 41}, {2, 2}, {64, 84}}, T(r))
    assert.same({{1, 1}, {2, 2}, {3, 3}}, T(x)) -- out of place
    assert.equal("int64", r.dtype)
    -- along dim 2 of a 3-D array, a float src converted to x's dtype
    local y = ml.zeros(2, 3, 2, {dtype = "float32"})
    local s = ml.arange(1, 9):reshape(2, 2, 2)
    assert.same({{{4, 6}, {0, 0}, {0, 0}}, {{12, 14}, {0, 0}, {0, 0}}},
                T(y:index_add(2, {1, 1}, s)))
    assert.same(T(ml.index_add(y, 2, {1, 1}, s)), T(y:index_add(2, {1, 1}, s)))
  end)

  it("sums floats in double and integers wrapping, in index order", function()
    local one = ml.ones(1, {dtype = "float32"})
    -- 1 + 2^-24 + 2^-24 is 1 in float32 arithmetic, 1 + 2^-23 in double
    local r = one:index_add(1, {1, 1}, ml.full(2, 2^-24, {dtype = "float32"}))
    assert.equal(1 + 2^-23, r[1])
    local i32 = ml.full(1, 2^31 - 1, {dtype = "int32"})
    assert.equal(-2^31 + 1, i32:index_add(1, {1, 1}, ml.ones(2, {dtype = "int32"}))[1])
    -- runs of 256 slices sum apart, then add in order: 2^53 and 255 ones
    -- stay 2^53 (each 1 rounds away), the next run's two ones make 2, kept
    local src = ml.ones(258)
    src[1] = 2^53
    local idx = ml.ones(258, {dtype = "int64"})
    assert.equal(2^53 + 2, ml.zeros(1):index_add(1, idx, src)[1])
  end)

  it("is a segment sum: rows summed by label equal a one-hot product", function()
    ml.seed(3)
    for _, dt in ipairs({"float32", "float64"}) do
      local X = ml.randn(1001, 7, {dtype = dt})
      local labels = ml.randint(1, 14, 1001)
      local S = ml.zeros(13, 7, {dtype = dt}):index_add(1, labels, X)
      local onehot = ml.eq(labels:reshape(1, 1001), ml.arange(1, 14):reshape(13, 1)):astype("float64")
      assert.allclose(S, onehot:mm(X:astype("float64")), {rtol = 1e-6, atol = 1e-5})
    end
  end)

  it("reads views, and takes an empty index", function()
    local x = ml.arange(12):reshape(3, 4):astype("float64")
    local src = ml.arange(8):reshape(4, 2):t() -- 2x4, strided
    assert.same({{1, 6, 11, 16}, {4, 5, 6, 7}, {8, 9, 10, 11}},
                T(x:index_add(1, {1, 1}, src)))
    assert.same(T(x), T(x:index_add(1, {}, ml.zeros(0, 4))))
  end)

  it("names bad indices and shapes", function()
    local x = ml.zeros(3, 2)
    assert.has_error(function() x:index_add(1, {1, 4}, ml.ones(2, 2)) end,
      "index_add: index 4 is out of bounds for dimension 1 with size 3")
    assert.has_error(function() x:index_add(1, {0}, ml.ones(1, 2)) end,
      "index_add: index 0 is out of bounds for dimension 1 with size 3")
    assert.has_error(function() x:index_add(1, {1}, ml.ones(2, 2)) end,
      "index_add: src of shape 2x2 does not fit an array of shape 3x2 with 1 indices along dimension 1")
    assert.has_error(function() x:index_add(1, {7}, ml.zeros(1, 0):expand(1, 2):narrow(2, 1, 0)) end)
    assert.has_error(function() x:index_add(1, ml.array({1.5}), ml.ones(1, 2)) end,
      "index_add: indices must be integers, got float64")
  end)
end)
