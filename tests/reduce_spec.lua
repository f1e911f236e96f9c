local ml = require "moonlab"
local N = require "tests.helpers.numbers"

local inf, nan = math.huge, 0 / 0

local function isnan(x) return x ~= x end

local near = N.near

-- assert_near(expected, actual): this spec names the reference first.
local function assert_near(expected, actual, tol)
  N.assert_near(actual, expected, tol)
end

-- Deterministic pseudo-random numbers in [-1, 1).
local function lcg(seed)
  local s = seed
  return function()
    s = (s * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
    return ((s >> 11) / 2 ^ 53) * 2 - 1
  end
end

local function random_table(rows, cols, seed)
  local r, t = lcg(seed), {}
  for i = 1, rows do
    t[i] = {}
    for j = 1, cols do t[i][j] = r() end
  end
  return t
end

-- Reference reductions of a 2-D table along dim 1 or 2.
local function ref(t, dim, fn)
  local out = {}
  if dim == 2 then
    for i = 1, #t do out[i] = fn(t[i]) end
  else
    for j = 1, #t[1] do
      local col = {}
      for i = 1, #t do col[i] = t[i][j] end
      out[j] = fn(col)
    end
  end
  return out
end

local function lsum(v) local s = 0 for i = 1, #v do s = s + v[i] end return s end
local function lmean(v) return lsum(v) / #v end
local function lvar(v, ddof)
  local m, s = lmean(v), 0
  for i = 1, #v do s = s + (v[i] - m) ^ 2 end
  return s / (#v - (ddof or 0))
end
local function lmax(v) local m = -inf for i = 1, #v do m = math.max(m, v[i]) end return m end
local function largmax(v)
  local k = 1
  for i = 2, #v do if v[i] > v[k] then k = i end end
  return k
end

local function hex(x) return string.format("%a", x) end

describe("sum", function()
  local x = ml.array({{1, 2, 3}, {4, 5, 6}})

  it("reduces everything to a Lua integer for integer input", function()
    assert.equal(21, x:sum())
    assert.equal("integer", math.type(x:sum()))
  end)

  it("reduces a dimension (1-based, negative from the end)", function()
    assert.same({5, 7, 9}, x:sum(1):totable())
    assert.same({6, 15}, x:sum(2):totable())
    assert.same({6, 15}, x:sum(-1):totable())
    assert.same({5, 7, 9}, x:sum(-2):totable())
    assert.same({3}, x:sum(1).shape)
  end)

  it("keeps dimensions with keepdim", function()
    local r = x:sum(2, {keepdim = true})
    assert.same({2, 1}, r.shape)
    assert.same({{6}, {15}}, r:totable())
    assert.same({1, 3}, x:sum(1, {keepdim = true}).shape)
    local all = x:sum({keepdim = true})
    assert.same({1, 1}, all.shape)
    assert.same({{21}}, all:totable())
    assert.same({{21}}, x:sum(nil, {keepdim = true}):totable())
  end)

  it("is the same as a module function, which also takes tables", function()
    assert.same(x:sum(2):totable(), ml.sum(x, 2):totable())
    assert.equal(6, ml.sum({1, 2, 3}))
    assert.equal(2.5, ml.sum({1, 1.5}))
  end)

  it("gives int64 for integer dtypes without wrapping at the input's range", function()
    local u = ml.full(1000, 255, {dtype = "uint8"})
    assert.equal("int64", u:sum(1, {keepdim = true}).dtype)
    assert.equal(255000, u:sum())
    local i32 = ml.full(3, 2 ^ 31 - 1, {dtype = "int32"})
    assert.equal(3 * (2 ^ 31 - 1), i32:sum())
    assert.equal("int64", ml.array({{1, 2}}, {dtype = "int32"}):sum(1).dtype)
  end)

  it("adds int64 exactly beyond 2^53", function()
    local big = ml.array({2 ^ 53 | 0, 1, 1})
    assert.equal((2 ^ 53 | 0) + 2, big:sum())
  end)

  it("keeps float dtypes", function()
    local f = ml.array({{1.5, 2.5}, {3, 4}}, {dtype = "float32"})
    assert.equal("float32", f:sum(1).dtype)
    assert.same({4.5, 6.5}, f:sum(1):totable())
    assert.equal(11, f:sum())
    assert.equal("float", math.type(f:sum()))
  end)

  it("matches a reference on random data along both dimensions", function()
    local t = random_table(37, 29, 1)
    local a = ml.array(t)
    assert_near(ref(t, 1, lsum), a:sum(1):totable())
    assert_near(ref(t, 2, lsum), a:sum(2):totable())
    local f = ml.array(t, {dtype = "float32"})
    assert_near(ref(t, 1, lsum), f:sum(1):totable(), 1e-5)
    assert_near(ref(t, 2, lsum), f:sum(2):totable(), 1e-5)
  end)

  it("reduces the middle and first dimensions of a 3-D array", function()
    local t = {}
    for i = 1, 2 do
      t[i] = {}
      for j = 1, 3 do
        t[i][j] = {}
        for k = 1, 4 do t[i][j][k] = 100 * i + 10 * j + k end
      end
    end
    local a = ml.array(t)
    local s2 = a:sum(2):totable()
    local s1 = a:sum(1):totable()
    local s3 = a:sum(3):totable()
    for i = 1, 2 do
      for k = 1, 4 do
        assert.equal(3 * 100 * i + 60 + 3 * k, s2[i][k])
      end
    end
    for j = 1, 3 do
      for k = 1, 4 do assert.equal(300 + 20 * j + 2 * k, s1[j][k]) end
      for i = 1, 2 do assert.equal(400 * i + 40 * j + 10, s3[i][j]) end
    end
    assert.same({2, 1, 4}, a:sum(2, {keepdim = true}).shape)
  end)

  it("reads strided rows (a trailing size-1 dimension)", function()
    local t = {}
    for i = 1, 4 do t[i] = {{i}, {10 * i}, {100 * i}} end
    local a = ml.array(t) -- 4x3x1: reducing dim 1 walks rows with stride 3
    assert.same({{10}, {100}, {1000}}, a:sum(1):totable())
    assert.same({{111}, {222}, {333}, {444}}, a:sum(2):totable())
    local f = ml.array(t, {dtype = "float32"})
    assert.same({{10}, {100}, {1000}}, f:sum(1):totable())
  end)

  it("handles more than 1024 columns and more than 8192 rows along dim 1", function()
    local wide = ml.empty(3, 1100):copy(ml.arange(1100))
    local s = wide:sum(1):totable()
    assert.equal(1100, #s)
    for j = 1, 1100 do assert.equal(3 * (j - 1), s[j]) end
    local tall = ml.empty(20000, 3):copy(ml.array({1, 2, 3}))
    assert.same({20000, 40000, 60000}, tall:sum(1):totable())
    local tallf = ml.empty(20000, 3):copy(ml.array({0.5, 1.5, -2.0}))
    assert.same({10000, 30000, -40000}, tallf:sum(1):totable())
  end)

  it("handles rows longer than a segment", function()
    local n = 200003
    assert.equal(n * (n - 1) // 2, ml.arange(n):sum())
    assert.equal(n * (n - 1) / 2, ml.arange(n, {dtype = "float64"}):sum())
    local two = ml.empty(2, n):copy(ml.arange(n))
    assert.same({n * (n - 1) // 2, n * (n - 1) // 2}, two:sum(2):totable())
  end)

  it("is accurate: pairwise summation, float32 accumulated in double", function()
    local f = ml.full(1000000, 0.1, {dtype = "float32"})
    assert.is_true(math.abs(f:sum() - 1e5) < 1e-2)
    local d = ml.full(1000000, 0.1)
    assert.is_true(math.abs(d:sum() - 1e5) < 1e-8)
    local cols = ml.full(1000000, 2, 0.1, {dtype = "float32"})
    local s = cols:sum(1):totable()
    assert.is_true(math.abs(s[1] - 1e5) < 1e-2 and math.abs(s[2] - 1e5) < 1e-2)
    local dcols = ml.full(1000000, 2, 0.1):sum(1):totable()
    assert.is_true(math.abs(dcols[1] - 1e5) < 1e-8)
  end)

  it("is deterministic: the same bits twice", function()
    local t = random_table(300, 70, 7)
    local a = ml.array(t)
    local r1, r2 = a:sum(), a:sum()
    assert.equal(hex(r1), hex(r2))
    local c1, c2 = a:sum(1):totable(), a:sum(1):totable()
    for j = 1, 70 do assert.equal(hex(c1[j]), hex(c2[j])) end
  end)

  it("gives 0 for empty inputs and empty dimensions", function()
    assert.equal(0, ml.zeros(0):sum())
    assert.equal(0, ml.zeros(0, {dtype = "int32"}):sum())
    assert.equal("integer", math.type(ml.zeros(0, {dtype = "int32"}):sum()))
    assert.same({0, 0, 0}, ml.zeros(0, 3):sum(1):totable())
    assert.same({0, 0, 0}, ml.zeros(3, 0):sum(2):totable())
    assert.same({0}, ml.zeros(0, 3):sum(2).shape)
    assert.same({1, 1}, ml.zeros(0, 3):sum({keepdim = true}).shape)
  end)

  it("handles size-1 dimensions and 0-d arrays", function()
    assert.same({1, 2, 3}, ml.array({{1, 2, 3}}):sum(1):totable())
    assert.same({1, 2, 3}, ml.array({{1}, {2}, {3}}):sum(2):totable())
    assert.equal(3.5, ml.full({}, 3.5):sum())
    assert.same({}, ml.full({}, 3.5):sum({keepdim = true}).shape)
  end)

  it("propagates NaN and infinities", function()
    assert.is_true(isnan(ml.array({1, nan, 2}):sum()))
    assert.equal(inf, ml.array({1, inf}):sum())
    assert.is_true(isnan(ml.array({inf, -inf}):sum()))
  end)

  it("names the operation in dimension errors", function()
    assert.has_error(function() x:sum(3) end,
                     "sum: dimension 3 out of range for 2 dimensions")
    assert.has_error(function() x:sum(-3) end,
                     "sum: dimension -3 out of range for 2 dimensions")
    assert.has_error(function() x:sum(0) end, "sum: dimensions are 1-based (got 0)")
    assert.has_error(function() ml.full({}, 1):sum(1) end,
                     "sum: dimension 1 out of range for 0 dimensions")
  end)
end)

describe("mean", function()
  it("gives float64 for integers and keeps float dtypes", function()
    local x = ml.array({{1, 2}, {3, 5}})
    assert.equal(2.75, x:mean())
    assert.equal("float64", x:mean(1).dtype)
    assert.same({2, 3.5}, x:mean(1):totable())
    assert.same({1.5, 4}, x:mean(2):totable())
    local f = ml.array({1, 2}, {dtype = "float32"})
    assert.equal("float32", f:mean(1, {keepdim = true}).dtype)
    assert.equal(1.5, f:mean())
  end)

  it("matches a reference and is NaN when empty", function()
    local t = random_table(40, 13, 2)
    local a = ml.array(t)
    assert_near(ref(t, 1, lmean), a:mean(1):totable())
    assert_near(ref(t, 2, lmean), a:mean(-1):totable())
    assert.is_true(isnan(ml.zeros(0):mean()))
    local e = ml.zeros(2, 0):mean(2):totable()
    assert.is_true(isnan(e[1]) and isnan(e[2]))
  end)
end)

describe("prod", function()
  it("multiplies floats and integers (int64)", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    assert.equal(720, x:prod())
    assert.same({4, 10, 18}, x:prod(1):totable())
    assert.same({6, 120}, x:prod(2):totable())
    assert.equal("int64", ml.array({2, 3}, {dtype = "uint8"}):prod(1, {keepdim = true}).dtype)
    assert.equal(60000, ml.array({200, 300}, {dtype = "int32"}):prod())
    local f = ml.array({0.5, 4, -1.5}, {dtype = "float32"})
    assert.equal(-3, f:prod())
    assert.equal("float32", f:prod(1, {keepdim = true}).dtype)
  end)

  it("gives 1 for empty inputs", function()
    assert.equal(1, ml.zeros(0):prod())
    assert.equal(1, ml.zeros(0, {dtype = "int64"}):prod())
    assert.same({1, 1}, ml.zeros(2, 0):prod(2):totable())
  end)

  it("propagates NaN", function()
    assert.is_true(isnan(ml.array({2, nan}):prod()))
    assert.is_true(isnan(ml.array({0, inf}):prod()))
  end)
end)

describe("min and max", function()
  local x = ml.array({{3, 7, 7}, {9, 1, 1}})

  it("return a number without a dimension", function()
    assert.equal(9, x:max())
    assert.equal(1, x:min())
    assert.equal("integer", math.type(x:max()))
    assert.equal(2.5, ml.array({1, 2.5, -3}):max())
    assert.equal(-3, ml.array({1, 2.5, -3}):min())
  end)

  it("return values and 1-based int64 indices along a dimension", function()
    local v, i = x:max(2)
    assert.same({7, 9}, v:totable())
    assert.same({2, 1}, i:totable())
    assert.equal("int64", i.dtype)
    v, i = x:min(2)
    assert.same({3, 1}, v:totable())
    assert.same({1, 2}, i:totable())
    v, i = ml.max(x, 1)
    assert.same({9, 7, 7}, v:totable())
    assert.same({2, 1, 1}, i:totable())
    v, i = x:min(-2, {keepdim = true})
    assert.same({{3, 1, 1}}, v:totable())
    assert.same({{1, 2, 2}}, i:totable())
  end)

  it("keep the dtype", function()
    for _, t in ipairs({"uint8", "int32", "int64", "float32", "float64"}) do
      local a = ml.array({{3, 7}, {9, 1}}, {dtype = t})
      assert.equal(t, a:max(1).dtype)
      assert.same({9, 7}, a:max(1):totable())
      assert.same({3, 1}, a:min(2):totable())
      assert.equal(9, a:max())
      assert.equal(1, a:min())
    end
  end)

  it("handle the extremes of integer dtypes", function()
    local a = ml.array({math.mininteger, math.maxinteger, 0})
    assert.equal(math.maxinteger, a:max())
    assert.equal(math.mininteger, a:min())
    assert.equal(2, a:argmax())
    assert.equal(1, a:argmin())
    assert.equal(1, ml.full(3, math.mininteger):argmax())
  end)

  it("match a reference on random data", function()
    local t = random_table(50, 31, 3)
    local a = ml.array(t)
    assert.same(ref(t, 1, lmax), a:max(1):totable())
    assert.same(ref(t, 2, lmax), a:max(2):totable())
    local _, i1 = a:max(1)
    local _, i2 = a:max(2)
    assert.same(ref(t, 1, largmax), i1:totable())
    assert.same(ref(t, 2, largmax), i2:totable())
  end)

  it("propagate NaN, whose index counts as the extreme", function()
    local a = ml.array({{1, nan, 5, nan}, {2, 8, -inf, 0}})
    local v, i = a:max(2)
    local vt = v:totable()
    assert.is_true(isnan(vt[1]))
    assert.equal(8, vt[2])
    assert.same({2, 2}, i:totable())
    v, i = a:min(2)
    assert.is_true(isnan(v:totable()[1]))
    assert.same({2, 3}, i:totable())
    assert.is_true(isnan(a:max()))
    assert.is_true(isnan(a:min()))
    local c = ml.array({{1, 2}, {nan, 0}, {nan, 5}})
    v, i = c:max(1)
    assert.is_true(isnan(v:totable()[1]))
    assert.same({2, 3}, i:totable())
  end)

  it("handle infinite rows and ties at the first occurrence", function()
    local a = ml.array({{-inf, -inf}, {inf, inf}})
    local v, i = a:max(2)
    assert.same({-inf, inf}, v:totable())
    assert.same({1, 1}, i:totable())
    v, i = a:min(2)
    assert.same({-inf, inf}, v:totable())
    assert.same({1, 1}, i:totable())
  end)

  it("refuse empty arrays and empty dimensions", function()
    assert.has_error(function() ml.zeros(0):max() end,
                     "max: empty array of shape 0 has no maximum")
    assert.has_error(function() ml.zeros(2, 0):min() end,
                     "min: empty array of shape 2x0 has no minimum")
    assert.has_error(function() ml.zeros(3, 0):max(2) end,
                     "max: dimension 2 of shape 3x0 is empty and has no maximum")
    assert.has_error(function() ml.zeros(3, 0):argmin(-1) end,
                     "argmin: dimension 2 of shape 3x0 is empty and has no minimum")
    assert.has_error(function() ml.zeros(0, 4):argmax() end,
                     "argmax: empty array of shape 0x4 has no maximum")
    local v, i = ml.zeros(0, 3):max(2)
    assert.same({0}, v.shape)
    assert.same({0}, i.shape)
  end)

  it("handle size-1 dimensions", function()
    local v, i = ml.array({{4, 5, 6}}):max(1)
    assert.same({4, 5, 6}, v:totable())
    assert.same({1, 1, 1}, i:totable())
  end)
end)

describe("argmin and argmax", function()
  it("give the 1-based flat index in C order without a dimension", function()
    local x = ml.array({{3, 7, 2}, {9, 1, 9}})
    assert.equal(4, x:argmax())
    assert.equal(5, x:argmin())
    assert.equal("integer", math.type(x:argmax()))
    assert.equal(2, ml.array({1, nan, nan}):argmax())
    assert.equal(3, ml.array({1, 0, nan}):argmin())
  end)

  it("give int64 indices along a dimension", function()
    local x = ml.array({{3, 7, 2}, {9, 1, 9}}, {dtype = "float32"})
    assert.same({2, 1, 2}, x:argmax(1):totable())
    assert.same({3, 2}, x:argmin(2):totable())
    assert.equal("int64", x:argmin(2).dtype)
    assert.same({{3}, {2}}, x:argmin(2, {keepdim = true}):totable())
  end)
end)

describe("var and std", function()
  local x = ml.array({{1, 2, 3, 4}, {2, 4, 6, 8}})

  it("divide by n - ddof (default 0, as NumPy)", function()
    assert_near(1.25, x:var(2):totable()[1])
    assert_near({1.25, 5}, x:var(2):totable())
    assert_near({5 / 3, 20 / 3}, x:var(2, {ddof = 1}):totable())
    assert_near({math.sqrt(1.25), math.sqrt(5)}, x:std(-1):totable())
    assert_near({0.25, 1, 2.25, 4}, x:var(1):totable())
    assert_near({0.5, 2, 4.5, 8}, x:var(1, {ddof = 1}):totable())
    assert_near(lvar({1, 2, 3, 4, 2, 4, 6, 8}, 1), x:var({ddof = 1}))
    assert_near(math.sqrt(lvar({1, 2, 3, 4, 2, 4, 6, 8})), x:std())
    assert.equal("float64", x:var(1).dtype)
    assert.equal("float32", x:astype("float32"):std(1).dtype)
  end)

  it("are two-pass: exact for large offsets", function()
    local a = ml.array({1e9 + 1, 1e9 + 2, 1e9 + 3})
    assert_near(2 / 3, a:var(), 1e-9)
    local f = ml.array({1e4 + 1, 1e4 + 2, 1e4 + 3}, {dtype = "float32"})
    assert_near(1, f:var({ddof = 1}), 1e-6)
  end)

  it("match a reference on random data", function()
    local t = random_table(33, 17, 4)
    local a = ml.array(t)
    assert_near(ref(t, 1, function(v) return lvar(v, 1) end), a:var(1, {ddof = 1}):totable())
    assert_near(ref(t, 2, function(v) return math.sqrt(lvar(v)) end), a:std(2):totable())
  end)

  it("are NaN when n - ddof <= 0, 0 for one element", function()
    assert.is_true(isnan(ml.zeros(0):var()))
    assert.is_true(isnan(ml.zeros(0):std()))
    assert.is_true(isnan(ml.array({5.0}):var({ddof = 1})))
    assert.equal(0, ml.array({5.0}):var())
    assert.same({0, 0}, ml.array({{1}, {2}}):std(2):totable())
    assert.is_true(isnan(ml.array({1, inf}):var()))
  end)
end)

describe("norm", function()
  local x = ml.array({{3, -4}, {0, 12}})

  it("is the 2-norm of everything by default", function()
    assert_near(13, x:norm())
    assert.equal("float64", x:norm(1).dtype)
    assert_near({3, 12.649110640673518}, x:norm(1):totable())
    assert_near({5, 12}, x:norm(2):totable())
  end)

  it("takes p = 1 and p = math.huge", function()
    assert.equal(19, x:norm({p = 1}))
    assert.same({7, 12}, x:norm(2, {p = 1}):totable())
    assert.equal(12, x:norm({p = math.huge}))
    assert.same({4, 12}, x:norm(2, {p = math.huge}):totable())
    assert.same({{4}, {12}}, x:norm(-1, {p = math.huge, keepdim = true}):totable())
    assert.equal(5, x:norm(2, {p = 2}):totable()[1])
    assert.equal("float32", x:astype("float32"):norm(1, {p = 1}).dtype)
  end)

  it("is 0 when empty and propagates NaN", function()
    assert.equal(0, ml.zeros(0):norm())
    assert.equal(0, ml.zeros(0):norm({p = 1}))
    assert.equal(0, ml.zeros(0):norm({p = math.huge}))
    assert.is_true(isnan(ml.array({1, nan, inf}):norm({p = math.huge})))
    assert.equal(inf, ml.array({1, -inf}):norm({p = math.huge}))
  end)

  it("refuses other p", function()
    assert.has_error(function() x:norm({p = 3}) end,
                     "norm: p must be 1, 2 or math.huge, not 3")
    assert.has_error(function() x:norm(1, {p = "fro"}) end,
                     "norm: option 'p' must be a number, not string")
  end)
end)

describe("logsumexp", function()
  it("matches log(sum(exp(x)))", function()
    local t = random_table(9, 11, 5)
    local a = ml.array(t)
    local function lse(v)
      local s = 0
      for i = 1, #v do s = s + math.exp(v[i]) end
      return math.log(s)
    end
    assert_near(ref(t, 1, lse), a:logsumexp(1):totable())
    assert_near(ref(t, 2, lse), a:logsumexp(2):totable())
    assert_near(math.log(math.exp(1) + math.exp(2)), ml.array({1, 2}):logsumexp())
    assert.equal("float64", ml.array({1, 2}):logsumexp(1).dtype)
  end)

  it("shifts by the maximum", function()
    assert_near(1000 + math.log(2), ml.array({1000, 1000}):logsumexp())
    assert_near(-1000 + math.log(2), ml.array({-1000, -1000}):logsumexp())
    local f = ml.array({{200, 200}}, {dtype = "float32"})
    assert_near({200 + math.log(2)}, f:logsumexp(2):totable(), 1e-6)
  end)

  it("handles infinities, NaN and empty rows", function()
    assert.equal(-inf, ml.array({-inf, -inf}):logsumexp())
    assert.equal(inf, ml.array({1, inf}):logsumexp())
    assert.equal(inf, ml.array({-inf, inf}):logsumexp())
    assert_near(2, ml.array({-inf, 2}):logsumexp())
    assert.is_true(isnan(ml.array({1, nan}):logsumexp()))
    assert.is_true(isnan(ml.array({inf, nan}):logsumexp()))
    assert.equal(-inf, ml.zeros(0):logsumexp())
    assert.same({-inf, -inf}, ml.zeros(2, 0):logsumexp(2):totable())
  end)
end)

describe("any and all", function()
  it("return booleans over everything", function()
    assert.is_true(ml.array({0, 0, 3}):any())
    assert.is_false(ml.array({0, 0, 3}):all())
    assert.is_true(ml.array({1, 2}):all())
    assert.is_false(ml.zeros(4):any())
    assert.is_true(ml.array({0, nan}):any())
    assert.is_true(ml.array({nan}):all())
    assert.is_true(ml.array({1, 0}, {dtype = "uint8"}):any())
  end)

  it("give uint8 arrays along a dimension", function()
    local x = ml.array({{0, 1, 0}, {2, 3, 0}}, {dtype = "int32"})
    assert.equal("uint8", x:any(1).dtype)
    assert.same({1, 1, 0}, x:any(1):totable())
    assert.same({0, 1, 0}, x:all(1):totable())
    assert.same({0, 0}, x:all(2):totable())
    assert.same({{1}, {1}}, x:any(2, {keepdim = true}):totable())
    assert.same({{1, 1}}, ml.any({{{1, 0}, {0, 1}}}, 2):totable())
  end)

  it("are false (any) and true (all) when empty", function()
    assert.is_false(ml.zeros(0):any())
    assert.is_true(ml.zeros(0):all())
    assert.same({1, 1}, ml.zeros(2, 0):all(2):totable())
    assert.same({0, 0}, ml.zeros(2, 0):any(2):totable())
  end)
end)

describe("cumsum", function()
  it("scans a dimension", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    assert.same({{1, 3, 6}, {4, 9, 15}}, x:cumsum(2):totable())
    assert.same({{1, 2, 3}, {5, 7, 9}}, x:cumsum(1):totable())
    assert.same({{1, 3, 6}, {4, 9, 15}}, x:cumsum(-1):totable())
    assert.same({{1, 3, 6}, {4, 9, 15}}, ml.cumsum(x, 2):totable())
    assert.equal("int64", x:cumsum(1).dtype)
  end)

  it("flattens without a dimension (NumPy)", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    assert.same({1, 3, 6, 10, 15, 21}, x:cumsum():totable())
    assert.same({1, 3, 6}, ml.array({1, 2, 3}):cumsum():totable())
    assert.same({2.5}, ml.full({}, 2.5):cumsum():totable())
  end)

  it("keeps floats and widens integers to int64", function()
    local f = ml.array({0.5, 1.5, 2}, {dtype = "float32"})
    assert.equal("float32", f:cumsum().dtype)
    assert.same({0.5, 2, 4}, f:cumsum():totable())
    local u = ml.full(300, 255, {dtype = "uint8"})
    local c = u:cumsum():totable()
    assert.equal(300 * 255, c[300])
    assert.equal("int64", u:cumsum().dtype)
  end)

  it("handles 3-D arrays, long rows and many columns", function()
    local t = {}
    for i = 1, 2 do
      t[i] = {}
      for j = 1, 3 do t[i][j] = {i, j, 1} end
    end
    local a = ml.array(t)
    local c = a:cumsum(2):totable()
    assert.same({2, 3, 3}, {#c, #c[1], #c[1][1]})
    assert.same({1, 1, 1}, c[1][1])
    assert.same({6, 6, 3}, c[2][3])
    local n = 100000
    local r = ml.arange(n, {dtype = "float64"}):cumsum():totable()
    assert.equal(n * (n - 1) / 2, r[n])
    local w = ml.empty(5, 1100):copy(ml.arange(1100)):cumsum(1):totable()
    assert.equal(5 * 1099, w[5][1100])
    assert.equal(3 * 7, w[3][8])
  end)

  it("propagates NaN and handles empty arrays", function()
    local r = ml.array({1, nan, 2}):cumsum():totable()
    assert.equal(1, r[1])
    assert.is_true(isnan(r[2]) and isnan(r[3]))
    assert.same({0}, ml.zeros(0):cumsum().shape)
    assert.same({3, 0}, ml.zeros(3, 0):cumsum(2).shape)
    assert.same({0, 3}, ml.zeros(0, 3):cumsum(1).shape)
  end)

  it("names itself in errors", function()
    assert.has_error(function() ml.zeros(2, 2):cumsum(3) end,
                     "cumsum: dimension 3 out of range for 2 dimensions")
  end)
end)

describe("layouts and dtypes", function()
  local names = {"sum", "mean", "prod", "min", "max", "argmin", "argmax", "var",
                 "std", "norm", "logsumexp", "cumsum", "any", "all"}

  it("exposes every function as a module function and a method", function()
    local x = ml.array({{1, 5}, {3, 2}})
    for _, name in ipairs(names) do
      assert.is_function(ml[name], name)
      local a, b = ml[name](x, 1), x[name](x, 1)
      assert.same(a:totable(), b:totable())
    end
  end)

  it("reduces integer dtypes along the first dimension", function()
    for _, t in ipairs({"uint8", "int32", "int64"}) do
      local x = ml.array({{1, 9, 3}, {7, 2, 3}, {4, 4, 8}}, {dtype = t})
      assert.same({12, 15, 14}, x:sum(1):totable())
      assert.same({28, 72, 72}, x:prod(1):totable())
      local v, i = x:max(1)
      assert.same({7, 9, 8}, v:totable())
      assert.same({2, 1, 3}, i:totable())
      assert.equal(t, v.dtype)
      v, i = x:min(1)
      assert.same({1, 2, 3}, v:totable())
      assert.same({1, 2, 1}, i:totable())
      assert.same({1, 2, 1}, x:argmin(2):totable())
      assert.same({13, 12, 16}, x:sum(2):totable())
      assert.same({1, 1, 1}, x:all(1):totable())
    end
  end)

  it("reduces float32 along both dimensions", function()
    local t = random_table(21, 19, 6)
    local x = ml.array(t, {dtype = "float32"})
    local back = x:totable() -- the float32 values, exactly
    assert.same(ref(back, 1, lmax), x:max(1):totable())
    assert.same(ref(back, 2, lmax), x:max(2):totable())
    local _, i = x:max(1)
    assert.same(ref(back, 1, largmax), i:totable())
    assert_near(ref(back, 1, lmean), x:mean(1):totable(), 1e-6)
    assert_near(ref(back, 2, function(v) return lvar(v, 1) end), x:var(2, {ddof = 1}):totable(), 1e-5)
  end)

  it("reads strided rows for every kind of reduction", function()
    local t = {}
    for i = 1, 4 do t[i] = {{i}, {10 - i}, {(i - 2) ^ 2}} end
    local a = ml.array(t) -- 4x3x1: dim 1 is read with stride 3
    local v, i = a:max(1)
    assert.same({{4}, {9}, {4}}, v:totable())
    assert.same({{4}, {1}, {4}}, i:totable())
    assert.same({{1}, {6}, {0}}, a:min(1):totable())
    assert.same({{1}, {4}, {2}}, a:argmin(1):totable())
    assert.same({{24}, {3024}, {0}}, a:prod(1):totable())
    assert_near({{1.25}, {1.25}, {2.25}}, a:var(1):totable())
    assert.same({{1}, {1}, {0}}, a:all(1):totable())
  end)

  it("folds segments of long rows in order", function()
    local n = 200003
    local t = {}
    for k = 1, n do t[k] = 0 end
    t[70000], t[150000] = 5, 5
    t[140000], t[190000] = -1, -1
    local x = ml.array(t, {dtype = "float64"})
    assert.equal(70000, x:argmax())
    assert.equal(140000, x:argmin())
    assert.equal(5, x:max())
    assert.equal(8, x:sum())
    assert.equal(1, ml.zeros(n):argmax())
    assert.equal(1, ml.zeros(n):argmin())
    t[180000] = 0 / 0
    assert.equal(180000, ml.array(t):argmax())
    local r = ml.arange(n, {dtype = "float64"})
    assert_near((n * n - 1) / 12, r:var(), 1e-12)
    assert_near(n - 1 + math.log(1 / (1 - math.exp(-1))), r:logsumexp(), 1e-12)
    assert.equal(n - 1, r:norm({p = math.huge}))
  end)

  it("folds segments of tall columns in order", function()
    local n = 20000
    local t = {}
    for k = 1, n do t[k] = {k % 7, -(k % 5), 1} end
    t[9000][3], t[17000][3] = 2, 2
    local x = ml.array(t)
    local v, i = x:max(1)
    assert.same({6, 0, 2}, v:totable())
    assert.same({6, 5, 9000}, i:totable())
    v, i = x:min(1)
    assert.same({0, -4, 1}, v:totable())
    assert.same({7, 4, 1}, i:totable())
    local s = x:sum(1):totable()
    local want = {0, 0, n + 2}
    for k = 1, n do want[1] = want[1] + k % 7 want[2] = want[2] - k % 5 end
    assert.same(want, s)
  end)
end)

describe("determinism across thread counts", function()
  -- The same reductions in fresh processes with 1 and 2 OpenMP threads
  -- must print the same bits. The child exits without lua_close: unloading
  -- moonlab.so while OpenMP's idle threads live crashes the process.
  local script = [[
    local ml = require "moonlab"
    local s, t = 12345, {}
    local function r()
      s = (s * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
      return ((s >> 11) / 2 ^ 53) * 2 - 1
    end
    for i = 1, 300000 do t[i] = r() end
    local long = ml.array(t)
    local out = {}
    local function add(x)
      if type(x) == "number" then out[#out + 1] = string.format("%a", x) return end
      for _, v in ipairs(x:totable()) do out[#out + 1] = string.format("%a", v) end
    end
    add(long:sum())
    add(long:var())
    add(long:logsumexp())
    add(long:norm())
    add(long:astype("float32"):sum())
    local tall, rows = {}, {}
    for i = 1, 60000 do tall[i] = {t[3 * i - 2], t[3 * i - 1], t[3 * i]} end
    for i = 1, 600 do
      rows[i] = {}
      for j = 1, 500 do rows[i][j] = t[(i - 1) * 500 + j] end
    end
    tall, rows = ml.array(tall), ml.array(rows)
    add(tall:sum(1))
    add(tall:std(1))
    add(tall:logsumexp(1))
    add(rows:sum(2))
    add(rows:sum(1))
    add(rows:var(2))
    io.write(#out, " ", table.concat(out, " "))
    io.stdout:flush()
    os.exit(0) -- without closing the state: see the note above
  ]]

  local function run(threads)
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    local p = assert(io.popen(("OMP_NUM_THREADS=%d LUA_CPATH='%s' lua5.4 %s"):format(threads,
      package.cpath, path)))
    local out = p:read("a")
    p:close()
    os.remove(path)
    return out
  end

  it("gives identical bits with 1 and 2 threads", function()
    local one, two = run(1), run(2)
    local n = tonumber(one:match("^%d+"))
    assert.equal(1 + 1 + 1 + 1 + 1 + 3 * 3 + 600 + 500 + 600, n)
    local a, b = {}, {}
    for w in one:gmatch("%S+") do a[#a + 1] = w end
    for w in two:gmatch("%S+") do b[#b + 1] = w end
    assert.equal(#a, #b)
    for i = 1, #a do
      if a[i] ~= b[i] then
        error(string.format("value %d differs: %s with 1 thread, %s with 2", i - 1, a[i], b[i]))
      end
    end
  end)
end)
