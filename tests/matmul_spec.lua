-- Matrix products: mm mv dot outer matmul, checked against plain Lua loops.
local ml = require "moonlab"
local N = require "tests.helpers.numbers"

-- A deterministic "random" m x n nested table (small integers, or halves
-- of them when frac is set, so float results are exact or nearly so).
local function mat(m, n, seed, frac)
  local t = {}
  for i = 1, m do
    t[i] = {}
    for j = 1, n do
      local v = ((i * 7 + j * 13 + seed * 5) % 11) - 5
      t[i][j] = frac and v / 2 + 0.25 or v
    end
  end
  return t
end

local function vec(n, seed, frac)
  local t = {}
  for i = 1, n do
    local v = ((i * 7 + seed * 3) % 11) - 5
    t[i] = frac and v / 2 - 0.25 or v
  end
  return t
end

local function transpose(a)
  local t = {}
  for j = 1, #a[1] do
    t[j] = {}
    for i = 1, #a do t[j][i] = a[i][j] end
  end
  return t
end

-- The product of nested tables a (m x k) and b (k x n); k = 0 allowed.
local function ref_mm(a, b, m, k, n)
  local c = {}
  for i = 1, m do
    c[i] = {}
    for j = 1, n do
      local s = 0
      for p = 1, k do s = s + a[i][p] * b[p][j] end
      c[i][j] = s
    end
  end
  return c
end

local near, assert_near = N.near, N.assert_near

local function shape_of(x) return table.concat(x.shape, "x") end

describe("mm", function()
  it("matches a triple loop for awkward sizes (float64)", function()
    local sizes = {{1, 1, 1}, {1, 7, 1}, {3, 1, 5}, {7, 13, 5}, {17, 3, 19},
                   {2, 31, 2}, {29, 11, 1}, {1, 11, 29}, {13, 64, 37}}
    for _, s in ipairs(sizes) do
      local m, k, n = s[1], s[2], s[3]
      local a, b = mat(m, k, 1, true), mat(k, n, 2, true)
      local c = ml.mm(ml.array(a), ml.array(b))
      assert.same({m, n}, c.shape)
      assert.equal("float64", c.dtype)
      assert_near(c:totable(), ref_mm(a, b, m, k, n))
    end
  end)

  it("computes float32 products in float32", function()
    local a, b = mat(9, 23, 3, true), mat(23, 6, 4, true)
    local c = ml.array(a, {dtype = "float32"}):mm(ml.array(b, {dtype = "float32"}))
    assert.equal("float32", c.dtype)
    assert_near(c:totable(), ref_mm(a, b, 9, 23, 6), 1e-6)
  end)

  it("multiplies larger matrices (threaded OpenBLAS path)", function()
    local a, b = mat(70, 80, 5, true), mat(80, 90, 6, true)
    assert_near(ml.mm(ml.array(a), ml.array(b)):totable(), ref_mm(a, b, 70, 80, 90))
    local c = ml.array(a, {dtype = "float32"}):mm(ml.array(b, {dtype = "float32"}))
    assert_near(c:totable(), ref_mm(a, b, 70, 80, 90), 1e-5)
  end)

  it("multiplies integer dtypes exactly", function()
    local a, b = mat(5, 7, 1), mat(7, 3, 2)
    local want = ref_mm(a, b, 5, 7, 3)
    for _, t in ipairs({"int64", "int32"}) do
      local c = ml.array(a, {dtype = t}):mm(ml.array(b, {dtype = t}))
      assert.equal(t, c.dtype)
      assert.same(want, c:totable())
    end
    local big_a, big_b = mat(60, 70, 3), mat(70, 50, 4)
    assert.same(ref_mm(big_a, big_b, 60, 70, 50), ml.array(big_a):mm(ml.array(big_b)):totable())
  end)

  it("wraps around in uint8 and int32 as NumPy does", function()
    local u = ml.array({{16, 1}, {3, 4}}, {dtype = "uint8"})
    local v = ml.array({{16, 0}, {200, 1}}, {dtype = "uint8"})
    -- 16*16 + 1*200 = 456 -> 200; 3*16 + 4*200 = 848 -> 80
    assert.same({{200, 1}, {80, 4}}, u:mm(v):totable())
    assert.equal("uint8", u:mm(v).dtype)
    local p = ml.array({{50000}}, {dtype = "int32"})
    assert.same({{2500000000 - 4294967296}}, p:mm(p):totable())
    local q = ml.array({{math.maxinteger}}, {dtype = "int64"})
    assert.same({{1}}, q:mm(q):totable()) -- (2^63-1)^2 mod 2^64 = 1
  end)

  it("reads transposed operands", function()
    local a, b = mat(6, 4, 1, true), mat(6, 5, 2, true)
    local A, B = ml.array(a), ml.array(b)
    -- A^T B: A is read through the transpose flag
    assert_near(A:t():mm(B):totable(), ref_mm(transpose(a), b, 4, 6, 5))
    local c = mat(5, 4, 3, true)
    assert_near(B:mm(ml.array(c)):totable(), ref_mm(b, c, 6, 5, 4))
    -- A B^T and A^T B^T
    local d = mat(7, 4, 4, true)
    assert_near(A:mm(ml.array(d):t()):totable(), ref_mm(a, transpose(d), 6, 4, 7))
    local e = mat(3, 6, 5, true)
    assert_near(A:t():mm(ml.array(e):t()):totable(),
                ref_mm(transpose(a), transpose(e), 4, 6, 3))
    -- integer transposes go through the loops
    local ia = ml.array(mat(6, 4, 1))
    assert.same(ref_mm(transpose(mat(6, 4, 1)), transpose(mat(3, 6, 5)), 4, 6, 3),
                ia:t():mm(ml.array(mat(3, 6, 5)):t()):totable())
  end)

  it("reads non-contiguous views from narrow, select and permute", function()
    local big = mat(9, 12, 7, true)
    local X = ml.array(big)
    -- columns 3..7 of rows 2..6: rows 12 apart, 5 columns
    local sub = X:narrow(1, 2, 5):narrow(2, 3, 5)
    local s = {}
    for i = 1, 5 do
      s[i] = {}
      for j = 1, 5 do s[i][j] = big[i + 1][j + 2] end
    end
    local b = mat(5, 4, 8, true)
    assert_near(sub:mm(ml.array(b)):totable(), ref_mm(s, b, 5, 5, 4))
    assert_near(sub:t():mm(ml.array(b)):totable(), ref_mm(transpose(s), b, 5, 5, 4))
    -- every third element along both axes: no unit stride, copied first
    local cube = ml.array({mat(4, 3, 1, true), mat(4, 3, 2, true)}) -- 2x4x3
    local sel = cube:select(3, 2) -- 2x4, strides 12, 3
    local want = {}
    for i = 1, 2 do
      want[i] = {}
      for j = 1, 4 do want[i][j] = mat(4, 3, i, true)[j][2] end
    end
    local w = mat(4, 3, 9, true)
    assert_near(sel:mm(ml.array(w)):totable(), ref_mm(want, w, 2, 4, 3))
    -- a permuted 3-D array as a batch
    local p = cube:permute(1, 3, 2) -- 2x3x4
    local r = ml.matmul(p, ml.array(w)) -- 2x3x3
    for i = 1, 2 do
      assert_near(r:select(1, i):totable(), ref_mm(transpose(mat(4, 3, i, true)), w, 3, 4, 3))
    end
  end)

  it("reads broadcast (expanded) operands", function()
    local row = ml.array({{1, 2, 3}}):expand(4, 3) -- stride 0 rows
    local b = mat(3, 2, 1)
    assert.same(ref_mm({{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, b, 4, 3, 2),
                row:mm(ml.array(b)):totable())
    local col = ml.array({{2}, {5}}):expand(2, 3)
    assert.same(ref_mm({{2, 2, 2}, {5, 5, 5}}, b, 2, 3, 2), col:mm(ml.array(b)):totable())
  end)

  it("gives zeros for k = 0 and empty results for m or n = 0", function()
    local c = ml.mm(ml.zeros(3, 0), ml.zeros(0, 4))
    assert.same({3, 4}, c.shape)
    assert.same({{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, c:totable())
    local ci = ml.mm(ml.zeros(2, 0, {dtype = "int32"}), ml.zeros(0, 2, {dtype = "int32"}))
    assert.same({{0, 0}, {0, 0}}, ci:totable())
    assert.same({0, 4}, ml.mm(ml.zeros(0, 3), ml.ones(3, 4)).shape)
    assert.same({3, 0}, ml.mm(ml.ones(3, 5), ml.zeros(5, 0)).shape)
    assert.same({0, 0}, ml.mm(ml.zeros(0, 5), ml.zeros(5, 0)).shape)
    assert.same({0, 3, 2}, ml.matmul(ml.zeros(0, 3, 4), ml.ones(4, 2)).shape)
  end)

  it("propagates NaN and Inf", function()
    local a = ml.array({{0 / 0, 1}, {1, 2}})
    local b = ml.array({{1, 0}, {0, 1}})
    local c = a:mm(b):totable()
    assert.is_true(c[1][1] ~= c[1][1] and c[1][2] ~= c[1][2])
    assert.same({1, 2}, c[2])
    local inf = ml.array({{math.huge, 1}}):mm(ml.array({{1}, {1}})):totable()
    assert.equal(math.huge, inf[1][1])
  end)

  it("returns a new contiguous array", function()
    local a = ml.ones(3, 4)
    local c = a:t():mm(a)
    assert.same({4, 1}, c:stride())
    assert.is_true(c:is_contiguous())
  end)

  it("names shapes in its errors", function()
    assert.has_error(function() ml.mm(ml.zeros(2, 3), ml.zeros(4, 5)) end,
      "mm: shapes 2x3 and 4x5 are not aligned (3 != 4)")
    assert.has_error(function() ml.mm(ml.zeros(2, 3, 4), ml.zeros(4, 5)) end,
      "mm: expects two 2-D arrays, got shapes 2x3x4 and 4x5")
    assert.has_error(function() ml.zeros(3):mm(ml.zeros(3, 2)) end,
      "mm: expects two 2-D arrays, got shapes 3 and 3x2")
  end)
end)

describe("mv", function()
  it("multiplies a matrix by a vector", function()
    local a, v = mat(7, 5, 1, true), vec(5, 2, true)
    local want = {}
    for i = 1, 7 do
      want[i] = 0
      for j = 1, 5 do want[i] = want[i] + a[i][j] * v[j] end
    end
    local r = ml.mv(ml.array(a), ml.array(v))
    assert.same({7}, r.shape)
    assert_near(r:totable(), want)
  end)

  it("covers the large matrix-vector paths with transposes and strides", function()
    -- m * k above the gemv threshold; A plain, transposed, strided vector
    local m, k = 300, 250
    local a, v = mat(m, k, 3, true), vec(k, 4, true)
    local A = ml.array(a)
    local function mv_ref(mm, kk, get)
      local r = {}
      for i = 1, mm do
        local s = 0
        for p = 1, kk do s = s + get(i, p) * v[p] end
        r[i] = s
      end
      return r
    end
    assert_near(A:mv(ml.array(v)):totable(), mv_ref(m, k, function(i, p) return a[i][p] end))
    local at = ml.array(transpose(a)) -- k x m, so at:t() is A read transposed
    assert_near(at:t():mv(ml.array(v)):totable(), mv_ref(m, k, function(i, p) return a[i][p] end))
    -- the vector as a column of a matrix (stride 3)
    local vm = {}
    for p = 1, k do vm[p] = {7, v[p], -1} end
    local col = ml.array(vm):select(2, 2)
    assert.same({3}, col:stride())
    assert_near(A:mv(col):totable(), mv_ref(m, k, function(i, p) return a[i][p] end))
    -- a row vector times a matrix (m == 1), plain and transposed
    local vA = ml.matmul(ml.array(vec(m, 5, true)), A)
    local u = vec(m, 5, true)
    local want = {}
    for j = 1, k do
      local s = 0
      for i = 1, m do s = s + u[i] * a[i][j] end
      want[j] = s
    end
    assert_near(vA:totable(), want)
    assert_near(ml.matmul(ml.array(u), at:t()):totable(), want)
    assert_near(ml.mm(ml.array({u}), A):totable(), {want})
    local ucol = {}
    for i = 1, m do ucol[i] = {u[i], 0} end
    assert_near(ml.array(ucol):narrow(2, 1, 1):t():mm(A):totable(), {want})
  end)

  it("checks its operands", function()
    assert.has_error(function() ml.mv(ml.zeros(2, 3), ml.zeros(4)) end,
      "mv: shapes 2x3 and 4 are not aligned (3 != 4)")
    assert.has_error(function() ml.mv(ml.zeros(2, 3), ml.zeros(3, 1)) end,
      "mv: expects a 2-D and a 1-D array, got shapes 2x3 and 3x1")
  end)
end)

describe("dot", function()
  it("returns a Lua number", function()
    local a, b = vec(13, 1, true), vec(13, 2, true)
    local want = 0
    for i = 1, 13 do want = want + a[i] * b[i] end
    local d = ml.dot(ml.array(a), ml.array(b))
    assert.equal("number", type(d))
    assert.is_true(near(d, want))
    assert.equal(math.type(ml.array({1, 2}):dot(ml.array({3, 4}))), "integer")
    assert.equal(11, ml.array({1, 2}):dot(ml.array({3, 4})))
    assert.equal(11.0, ml.array({1, 2}):dot(ml.array({3.0, 4.0})))
    assert.equal(0.0, ml.dot(ml.zeros(0), ml.zeros(0)))
  end)

  it("handles long and strided vectors", function()
    local n = 70000
    local x = ml.arange(n, {dtype = "float64"})
    -- sum of i^2 for i < n
    local want = (n - 1) * n * (2 * n - 1) / 6
    assert.is_true(near(ml.dot(x, x), want))
    local m = ml.array(mat(6, 4, 1, true))
    local c1, c2 = m:select(2, 1), m:select(2, 3)
    local s = 0
    for i = 1, 6 do s = s + mat(6, 4, 1, true)[i][1] * mat(6, 4, 1, true)[i][3] end
    assert.is_true(near(ml.dot(c1, c2), s))
  end)

  it("checks its operands", function()
    assert.has_error(function() ml.dot(ml.zeros(3), ml.zeros(4)) end,
      "dot: shapes 3 and 4 are not aligned (3 != 4)")
    assert.has_error(function() ml.dot(ml.zeros(3, 1), ml.zeros(3)) end,
      "dot: expects two 1-D arrays, got shapes 3x1 and 3")
  end)
end)

describe("outer", function()
  it("multiplies every pair", function()
    local r = ml.outer(ml.array({1, 2, 3}), ml.array({4, 5}))
    assert.same({{4, 5}, {8, 10}, {12, 15}}, r:totable())
    local m = ml.array({{1, 2}, {3, 4}, {5, 6}})
    assert.same({{2, 4, 6}, {4, 8, 12}}, ml.outer(m:select(1, 1), m:select(2, 2)):totable())
    assert.same({0, 3}, ml.outer(ml.zeros(0), ml.ones(3)).shape)
    local f = ml.outer(ml.array({0.5, -1}), ml.array({2, 4}, {dtype = "float32"}))
    assert.equal("float64", f.dtype)
    assert.same({{1, 2}, {-2, -4}}, f:totable())
  end)

  it("checks its operands", function()
    assert.has_error(function() ml.outer(ml.zeros(2, 2), ml.zeros(3)) end,
      "outer: expects two 1-D arrays, got shapes 2x2 and 3")
  end)
end)

describe("matmul", function()
  it("broadcasts batch dimensions (2x1x3x4 @ 5x4x2 -> 2x5x3x2)", function()
    local a, b = {}, {}
    for i = 1, 2 do a[i] = {mat(3, 4, i, true)} end
    for j = 1, 5 do b[j] = mat(4, 2, 10 + j, true) end
    local r = ml.matmul(ml.array(a), ml.array(b))
    assert.same({2, 5, 3, 2}, r.shape)
    local t = r:totable()
    for i = 1, 2 do
      for j = 1, 5 do
        assert_near(t[i][j], ref_mm(a[i][1], b[j], 3, 4, 2))
      end
    end
  end)

  it("batches 3-D with 2-D and 2-D with 3-D", function()
    local a, b = {}, mat(4, 3, 1, true)
    for i = 1, 3 do a[i] = mat(2, 4, i, true) end
    local r = ml.matmul(ml.array(a), ml.array(b)):totable()
    for i = 1, 3 do assert_near(r[i], ref_mm(a[i], b, 2, 4, 3)) end
    local c = {}
    for i = 1, 3 do c[i] = mat(3, 5, i + 4, true) end
    local r2 = ml.matmul(ml.array(b), ml.array(c)):totable()
    for i = 1, 3 do assert_near(r2[i], ref_mm(b, c[i], 4, 3, 5)) end
  end)

  it("batches many small products (parallel path) and 4-D broadcasts both ways", function()
    local n = 1500
    local x = ml.arange(n * 12):astype("float64")
    -- x as n 4x3 matrices: entry (b, i, j) = b*12 + i*3 + j (0-based)
    local a = x:reshape(n, 4, 3)
    local w = ml.array({{1, 0}, {0, 1}, {1, 1}})
    local r = ml.matmul(a, w)
    assert.same({n, 4, 2}, r.shape)
    local t = r:totable()
    for _, bi in ipairs({1, 2, 777, n}) do
      for i = 1, 4 do
        local base = (bi - 1) * 12 + (i - 1) * 3
        assert.same({base + base + 2, base + 1 + base + 2}, t[bi][i])
      end
    end
    -- 3x1x2x2 @ 1x4x2x2: both operands broadcast
    local p, q = {}, {}
    for i = 1, 3 do p[i] = {mat(2, 2, i)} end
    q[1] = {}
    for j = 1, 4 do q[1][j] = mat(2, 2, j + 5) end
    local s = ml.matmul(ml.array(p), ml.array(q)):totable()
    for i = 1, 3 do
      for j = 1, 4 do assert.same(ref_mm(p[i][1], q[1][j], 2, 2, 2), s[i][j]) end
    end
  end)

  it("promotes and drops the dimensions of 1-D operands", function()
    local v, m = vec(4, 1, true), mat(4, 3, 2, true)
    local r = ml.matmul(ml.array(v), ml.array(m))
    assert.same({3}, r.shape)
    assert_near(r:totable(), ref_mm({v}, m, 1, 4, 3)[1])
    local r2 = ml.matmul(ml.array(transpose(m)), ml.array(v))
    assert.same({3}, r2.shape)
    local r3 = ml.matmul(ml.array(v), ml.array(v))
    assert.same({}, r3.shape)
    local s = 0
    for i = 1, 4 do s = s + v[i] * v[i] end
    assert.is_true(near(r3:item(), s))
    -- 1-D with a batch: 4 @ 2x4x3 -> 2x3, 2x3x4 @ 4 -> 2x3
    local b = ml.array({m, m})
    assert.same({2, 3}, ml.matmul(ml.array(v), b).shape)
    assert_near(ml.matmul(ml.array(v), b):totable(), {r:totable(), r:totable()})
    local bt = ml.array({transpose(m), transpose(m)})
    assert_near(ml.matmul(bt, ml.array(v)):totable(), {r:totable(), r:totable()})
  end)

  it("promotes mixed dtypes", function()
    local i64 = ml.array({{1, 2}, {3, 4}})
    local f64 = ml.array({{0.5, 0}, {0, 0.5}})
    local r = ml.matmul(i64, f64)
    assert.equal("float64", r.dtype)
    assert.same({{0.5, 1}, {1.5, 2}}, r:totable())
    local f32 = ml.array({{0.5, 0}, {0, 0.5}}, {dtype = "float32"})
    assert.equal("float64", ml.matmul(f32, f64).dtype)
    assert.equal("float64", ml.matmul(i64, f32).dtype)
    local u8 = ml.array({{1, 2}, {3, 4}}, {dtype = "uint8"})
    local i32 = ml.array({{300, 0}, {0, 300}}, {dtype = "int32"})
    local ri = ml.matmul(u8, i32)
    assert.equal("int32", ri.dtype)
    assert.same({{300, 600}, {900, 1200}}, ri:totable())
    assert.equal("int64", ml.matmul(u8, i64).dtype)
  end)

  it("is also a method and accepts nested tables", function()
    local a = ml.array({{1, 2}, {3, 4}})
    assert.same({{7, 10}, {15, 22}}, a:matmul(a):totable())
    assert.same({{7, 10}, {15, 22}}, a:matmul({{1, 2}, {3, 4}}):totable())
  end)

  it("names shapes in its errors", function()
    assert.has_error(function() ml.matmul(ml.zeros(2, 3, 4), ml.zeros(3, 5, 6)) end,
      "matmul: shapes 2x3x4 and 3x5x6 are not aligned (4 != 5)")
    assert.has_error(function() ml.matmul(ml.zeros(2, 3, 4), ml.zeros(3, 4, 6)) end,
      "matmul: shapes 2x3x4 and 3x4x6 do not broadcast in the batch dimensions")
    assert.has_error(function() ml.matmul(ml.zeros(3), 2) end,
      "matmul: expects arrays of at least 1 dimension, got shapes 3 and scalar")
    assert.has_error(function() ml.matmul(ml.zeros(3), ml.zeros(4)) end,
      "matmul: shapes 3 and 4 are not aligned (3 != 4)")
    local ok, msg = pcall(ml.matmul, ml.zeros(2, 5), ml.zeros(4, 2))
    assert.is_false(ok)
    assert.truthy(msg:find("2x5 and 4x2", 1, true), shape_of(ml.zeros(2, 5)))
  end)
end)
