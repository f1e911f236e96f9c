local ml = require "moonlab"

local function T(x) return x:totable() end

local function m23() return ml.array({{1, 2, 3}, {4, 5, 6}}) end

describe("subscript reads", function()
  it("x[i] on a 1-D array is a Lua number", function()
    local x = ml.array({10, 20, 30, 40, 50})
    assert.equal(10, x[1])
    assert.equal(50, x[5])
    assert.equal("integer", math.type(x[2]))
    assert.equal(2.5, ml.array({1.5, 2.5})[2])
    assert.equal("float", math.type(ml.array({1.5, 2.5})[1]))
  end)

  it("negative i counts from the end", function()
    local x = ml.array({10, 20, 30, 40, 50})
    assert.equal(50, x[-1])
    assert.equal(10, x[-5])
    assert.same({4, 5, 6}, T(m23()[-1]))
  end)

  it("an integral float key is an integer", function()
    assert.equal(20, ml.array({10, 20})[2.0])
  end)

  it("x[i] on an N-D array is the (N-1)-D view along dimension 1", function()
    local x = m23()
    local r = x[2]
    assert.same({3}, r.shape)
    assert.same({4, 5, 6}, T(r))
    r[1] = 40
    assert.same({{1, 2, 3}, {40, 5, 6}}, T(x))
    local g = ml.array({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})
    assert.same({{5, 6}, {7, 8}}, T(g[2]))
    assert.equal(7, g[2][2][1])
  end)

  it("x[{i, j}] reads one element", function()
    local x = m23()
    assert.equal(6, x[{2, 3}])
    assert.equal(4, x[{-1, 1}])
    assert.equal(3, x[{1, -1}])
    local g = ml.array({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})
    assert.equal(7, g[{2, 2, 1}])
    assert.equal(1, ml.array({1, 2})[{1}])
  end)

  it("fewer specs than dimensions leave the rest whole", function()
    local x = m23()
    assert.same({1, 2, 3}, T(x[{1}]))
    assert.same({{1, 2, 3}, {4, 5, 6}}, T(x[{}]))
  end)

  it("x[{{a, b}, {}}] is a view sharing storage", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
    local v = x[{{1, 2}, {}}]
    assert.same({2, 3}, v.shape)
    assert.same({3, 1}, v:stride())
    assert.same({{1, 2, 3}, {4, 5, 6}}, T(v))
    v:fill(0)
    assert.same({{0, 0, 0}, {0, 0, 0}, {7, 8, 9}}, T(x))
  end)

  it("{a} keeps the dimension, an integer drops it", function()
    local x = m23()
    local v = x[{{2}, {}}]
    assert.same({1, 3}, v.shape)
    assert.same({{4, 5, 6}}, T(v))
    local c = x[{{}, 2}]
    assert.same({2}, c.shape)
    assert.same({3}, c:stride())
    assert.same({2, 5}, T(c))
    assert.same({{2}, {5}}, T(x[{{}, {2}}]))
  end)

  it("ranges take negatives, steps, and b = a - 1 for empty", function()
    local x = ml.array({1, 2, 3, 4, 5, 6, 7})
    assert.same({2, 3, 4, 5, 6, 7}, T(x[{{2, -1}}]))
    assert.same({5, 6}, T(x[{{-3, -2}}]))
    assert.same({1, 3, 5, 7}, T(x[{{1, 7, 2}}]))
    assert.same({2, 5}, T(x[{{2, 6, 3}}]))
    assert.same({3}, x[{{1, -1, 3}}]:stride())
    assert.same({1, 4, 7}, T(x[{{1, -1, 3}}]))
    assert.same({0}, x[{{4, 3}}].shape)
    assert.same({0}, x[{{8, 7}}].shape)
    local m = m23()
    assert.same({{1, 3}, {4, 6}}, T(m[{{}, {1, 3, 2}}]))
    assert.same({2, 0}, m[{{}, {1, 0}}].shape)
  end)

  it("mixes selections and ranges in 3-D", function()
    local g = ml.array({{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}})
    assert.same({{7, 8}, {10, 11}}, T(g[{2, {}, {1, 2}}]))
    assert.same({3, 9}, T(g[{{}, 1, 3}]))
    assert.same({{{5, 6}}}, T(g[{{1}, {2}, {2, 3}}]))
    assert.same({9, 12}, T(g[{2}][{{}, 3}]))
  end)

  it("reads through views of views", function()
    local x = ml.array({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}})
    local v = x[{{2, 3}, {2, 4}}]
    assert.same({{6, 7, 8}, {10, 11, 12}}, T(v))
    assert.same({7, 11}, T(v[{{}, 2}]))
    assert.equal(12, v[{2, 3}])
    assert.equal(10, v[2][1])
  end)

  it("x[mask] selects (a copy) and x[idx] picks rows", function()
    local x = m23()
    local m = ml.array({{1, 0, 1}, {0, 1, 0}}, {dtype = "uint8"})
    local r = x[m]
    assert.same({1, 3, 5}, T(r))
    r:fill(0)
    assert.same({{1, 2, 3}, {4, 5, 6}}, T(x))
    assert.same({{4, 5, 6}, {1, 2, 3}, {4, 5, 6}}, T(x[ml.array({2, 1, 2})]))
    assert.same({{4, 5, 6}}, T(x[ml.array({2}, {dtype = "int32"})]))
    assert.same({0}, x[ml.zeros(2, 3, {dtype = "uint8"})].shape)
  end)

  it("x[mask] with a mask over leading dimensions picks slices, as NumPy", function()
    local x = ml.array({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
    local rows = ml.array({1, 0, 1}, {dtype = "uint8"})
    assert.same({{1, 2, 3}, {7, 8, 9}}, T(x[rows])) -- rows, not columns
    assert.same({0, 3}, x[ml.zeros(3, {dtype = "uint8"})].shape)
    local y = ml.arange(24):reshape(2, 3, 4)
    assert.same({{0, 1, 2, 3}, {8, 9, 10, 11}, {16, 17, 18, 19}},
      T(y[ml.array({{1, 0, 1}, {0, 1, 0}}, {dtype = "uint8"})]))
    assert.same({{{12, 13, 14, 15}, {16, 17, 18, 19}, {20, 21, 22, 23}}},
      T(y[ml.array({0, 1}, {dtype = "uint8"})]))
    assert.same({1, 3, 3}, x[ml.full({}, 1, {dtype = "uint8"})].shape) -- NumPy's x[True]
    assert.same({0, 3, 3}, x[ml.full({}, 0, {dtype = "uint8"})].shape)
    assert.same({{2}, {5}, {8}}, T(x[{{}, {1, 2}}]:t()[ml.array({0, 1}, {dtype = "uint8"})]:t()))
    -- a mask of x's whole shape selects elements; one that only broadcasts
    -- (not a prefix of x's shape) broadcasts as masked_select
    assert.same({1, 5, 9}, T(x[ml.eq(ml.eye(3), 1)]))
    assert.same({1, 3, 4, 6}, T(ml.array({{1, 2, 3}, {4, 5, 6}})[rows]))
    assert.has_error(function() return x[ml.ones(2, {dtype = "uint8"})] end,
      "index: cannot expand shape 2 to 3x3")
  end)

  it("x[mask] = v with a mask over leading dimensions writes slices", function()
    local x = ml.zeros(3, 2, {dtype = "int64"})
    local rows = ml.array({1, 0, 1}, {dtype = "uint8"})
    x[rows] = 7
    assert.same({{7, 7}, {0, 0}, {7, 7}}, T(x))
    x[rows] = ml.array({1, 2})
    assert.same({{1, 2}, {0, 0}, {1, 2}}, T(x))
    x[rows] = {{3, 4}, {5, 6}}
    assert.same({{3, 4}, {0, 0}, {5, 6}}, T(x))
    local y = ml.arange(24):reshape(2, 3, 4)
    local t = y:transpose(1, 3) -- 4x3x2, written through a copy
    t[ml.array({1, 0, 0, 1}, {dtype = "uint8"})] = -1
    assert.same({{{-1, 1, 2, -1}, {-1, 5, 6, -1}, {-1, 9, 10, -1}},
                 {{-1, 13, 14, -1}, {-1, 17, 18, -1}, {-1, 21, 22, -1}}}, T(y))
    assert.has_error(function() x[rows] = {1, 2, 3} end, "index: cannot expand shape 3 to 2x2")
    assert.has_error(function() x[rows] = 1.5 * 1e300 end, "index: 1.5e+300 is out of range for int64")
  end)

  it("x[idx] counts negative entries from the end, as x[-1]", function()
    local x = m23()
    assert.same({{4, 5, 6}, {1, 2, 3}}, T(x[ml.array({-1, -2})]))
    assert.same({30, 10, 30}, T(ml.array({10, 20, 30})[ml.array({-1, 1, 3})]))
    assert.same({3, 0}, ml.zeros(2, 0)[ml.array({1, -1, 2})].shape)
  end)

  it("reports indices out of bounds", function()
    local x = ml.zeros(5)
    assert.has_error(function() return x[0] end,
      "index: index 0 is out of bounds for dimension 1 with size 5")
    assert.has_error(function() return x[6] end,
      "index: index 6 is out of bounds for dimension 1 with size 5")
    assert.has_error(function() return x[-6] end,
      "index: index -6 is out of bounds for dimension 1 with size 5")
    assert.has_error(function() return m23()[{1, 4}] end,
      "index: index 4 is out of bounds for dimension 2 with size 3")
    assert.has_error(function() return m23()[{{}, {5}}] end,
      "index: index 5 is out of bounds for dimension 2 with size 3")
    assert.has_error(function() return m23()[{{1, 3}}] end,
      "index: range 1..3 is out of bounds for dimension 1 with size 2")
    assert.has_error(function() return m23()[{{}, {0, 2}}] end,
      "index: range 0..2 is out of bounds for dimension 2 with size 3")
    assert.has_error(function() return m23()[ml.array({3})] end,
      "index: index 3 is out of bounds for dimension 1 with size 2")
  end)

  it("reports malformed keys", function()
    local x = m23()
    assert.has_error(function() return x[1.5] end, "index: 1.5 is not an integer")
    assert.has_error(function() return x[{1, 1.5}] end, "index: 1.5 is not an integer")
    assert.has_error(function() return x[true] end, "index: invalid key of type boolean")
    assert.has_error(function() return x[{1, 2, 3}] end,
      "index: 3 indices for an array of 2 dimensions")
    assert.has_error(function() return x[{{1, 2, 0}}] end, "index: step must be positive, got 0")
    assert.has_error(function() return x[{{1, 2, 1, 1}}] end,
      "index: a range has at most 3 entries (first, last, step), got 4")
    assert.has_error(function() return x[{"a"}] end,
      "index: entry 1 must be an integer or a table, got string")
    assert.has_error(function() return x[{{"a"}}] end, "index: expected an integer, got string")
    assert.has_error(function() return x[ml.array({1.0})] end,
      "index: indices must be integers, got float64")
    assert.has_error(function() return ml.full({}, 3)[1] end,
      "index: a 0-d array cannot be indexed by a number")
  end)

  it("x[{}] on a 0-d array is the array", function()
    local s = ml.full({}, 3)
    assert.equal(3, s[{}]:item())
  end)
end)

describe("subscript writes", function()
  it("x[i] = v sets an element of a 1-D array", function()
    local x = ml.array({1, 2, 3})
    x[2] = 20
    x[-1] = 30
    assert.same({1, 20, 30}, T(x))
    local f = ml.zeros(2, {dtype = "float32"})
    f[1] = 1.5
    assert.same({1.5, 0}, T(f))
  end)

  it("x[i] = v fills or copies a row of an N-D array", function()
    local x = m23()
    x[1] = 0
    assert.same({{0, 0, 0}, {4, 5, 6}}, T(x))
    x[2] = {7, 8, 9}
    assert.same({{0, 0, 0}, {7, 8, 9}}, T(x))
    x[1] = ml.array({1.9, 2.9, 3.9}) -- converted to int64 by truncation
    assert.same({{1, 2, 3}, {7, 8, 9}}, T(x))
  end)

  it("x[{i, j}] = number sets one element", function()
    local x = m23()
    x[{2, 3}] = 60
    x[{-2, -3}] = 10
    assert.same({{10, 2, 3}, {4, 5, 60}}, T(x))
  end)

  it("x[{...}] = v fills or copies with broadcasting", function()
    local x = ml.zeros(3, 3, {dtype = "int64"})
    x[{{1, 2}, {}}] = 1
    assert.same({{1, 1, 1}, {1, 1, 1}, {0, 0, 0}}, T(x))
    x[{{}, 2}] = {7, 8, 9}
    assert.same({{1, 7, 1}, {1, 8, 1}, {0, 9, 0}}, T(x))
    x[{{2, 3}, {2, 3}}] = {5, 6}
    assert.same({{1, 7, 1}, {1, 5, 6}, {0, 5, 6}}, T(x))
    x[{{}, {1, 3, 2}}] = ml.array({{-1}, {-2}, {-3}})
    assert.same({{-1, 7, -1}, {-2, 5, -2}, {-3, 5, -3}}, T(x))
    x[{}] = 0
    assert.same({{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, T(x))
  end)

  it("writes through a view change the parent", function()
    local x = ml.zeros(3, 4)
    local v = x[{{2, 3}, {2, 3}}]
    v[{1, 1}] = 5
    v[2] = {6, 7}
    assert.same({{0, 0, 0, 0}, {0, 5, 0, 0}, {0, 6, 7, 0}}, T(x))
    x[3][4] = 9
    assert.equal(9, x[{3, 4}])
  end)

  it("copies overlapping views correctly", function()
    local x = ml.array({1, 2, 3, 4})
    x[{{2, 4}}] = x[{{1, 3}}]
    assert.same({1, 1, 2, 3}, T(x))
  end)

  it("x[idx] = v writes the picked rows", function()
    local x = ml.zeros(3, 2, {dtype = "int64"})
    x[ml.array({3, 1})] = {{5, 6}, {7, 8}}
    assert.same({{7, 8}, {0, 0}, {5, 6}}, T(x))
    x[ml.array({2})] = 4
    assert.same({{7, 8}, {4, 4}, {5, 6}}, T(x))
    x[ml.array({1, 1})] = {{1, 1}, {2, 2}} -- the last one wins
    assert.same({{2, 2}, {4, 4}, {5, 6}}, T(x))
    local y = ml.array({1, 2, 3})
    y[ml.array({3, 1})] = y[{{1, 2}}]
    assert.same({2, 2, 1}, T(y))
  end)

  it("x[idx] = v counts negative entries from the end", function()
    local x = ml.zeros(3, 2, {dtype = "int64"})
    x[ml.array({-1, 1})] = {{5, 6}, {7, 8}}
    assert.same({{7, 8}, {0, 0}, {5, 6}}, T(x))
    x[ml.array({-2, 2})] = ml.array({{1, 1}, {2, 2}}) -- one row twice: the last wins
    assert.same({{7, 8}, {2, 2}, {5, 6}}, T(x))
    local y = ml.array({1, 2, 3})
    y[ml.array({-3, -1})] = 0
    assert.same({0, 2, 0}, T(y))
  end)

  it("x[idx] = v checks the index also when nothing is written", function()
    local e = ml.zeros(2, 0)
    e[ml.array({2, -2})] = 1
    assert.same({2, 0}, e.shape)
    assert.has_error(function() e[ml.array({1, 3})] = 1 end,
      "index: index 3 is out of bounds for dimension 1 with size 2")
    assert.has_error(function() e[ml.array({-3})] = 1 end,
      "index: index -3 is out of bounds for dimension 1 with size 2")
  end)

  it("reports values that do not fit or do not broadcast", function()
    local u = ml.zeros(3, {dtype = "uint8"})
    assert.has_error(function() u[1] = 300 end, "index: 300 is out of range for uint8")
    assert.has_error(function() u[{}] = -1 end, "index: -1 is out of range for uint8")
    assert.has_error(function() u[ml.array({1})] = 256 end, "index: 256 is out of range for uint8")
    local x = ml.zeros(2, 3)
    assert.has_error(function() x[{{1, 2}, {}}] = {1, 2} end, "index: cannot expand shape 2 to 2x3")
    assert.has_error(function() x[3] = 1 end, "index: index 3 is out of bounds for dimension 1 with size 2")
    assert.has_error(function() x.foo = 1 end, "cannot set field 'foo' of an array")
    assert.has_error(function() x[ml.array({5})] = 1 end,
      "index: index 5 is out of bounds for dimension 1 with size 2")
  end)

  -- x[mask] = number uses the backend's where (the elementwise area);
  -- x[mask] = array goes through masked_select and index_put.
  it("x[mask] = number sets in place", function()
    local x = m23()
    local v = x[{{}, {2, 3}}]
    x[ml.array({{1, 0, 1}, {0, 1, 0}}, {dtype = "uint8"})] = 0
    assert.same({{0, 2, 0}, {4, 0, 6}}, T(x))
    assert.same({{2, 0}, {0, 6}}, T(v))
  end)

  it("x[mask] = array sets the selected elements in order, as NumPy", function()
    local x = ml.zeros(2, 3)
    x[ml.array({{1, 0, 1}, {0, 1, 1}}, {dtype = "uint8"})] = ml.array({1, 2, 3, 4})
    assert.same({{1, 0, 2}, {0, 3, 4}}, T(x))
    x[ml.gt(x, 2)] = {30, 40} -- a table, converted to x's dtype
    assert.same({{1, 0, 2}, {0, 30, 40}}, T(x))
    x[ml.gt(x, 10)] = ml.array({7}) -- one value sets them all
    assert.same({{1, 0, 2}, {0, 7, 7}}, T(x))
    local v = x[{{}, 1}] -- a strided view written through
    v[ml.array({0, 1}, {dtype = "uint8"})] = ml.array({9})
    assert.same({{1, 0, 2}, {9, 7, 7}}, T(x))
    local i = ml.arange(6):reshape(2, 3)
    i[ml.array({1, 0, 1}, {dtype = "uint8"})] = ml.array({-1, -2, -3, -4})
    assert.same({{-1, 1, -2}, {-3, 4, -4}}, T(i)) -- the mask broadcast over rows
    x[ml.gt(x, 8)] = ml.array({{5}}) -- leading size-1 dimensions drop
    assert.same({{1, 0, 2}, {5, 7, 7}}, T(x))
    x[ml.gt(x, 6)] = ml.array({{8, 9}})
    assert.same({{1, 0, 2}, {5, 8, 9}}, T(x))
    x[ml.gt(x, 8)] = ml.array({{9}})
    assert.same({{1, 0, 2}, {5, 8, 9}}, T(x))
    x[2] = {9, 7, 7}
    x[ml.zeros(2, 3, {dtype = "uint8"})] = ml.zeros(0) -- nothing selected
    assert.same({{1, 0, 2}, {9, 7, 7}}, T(x))
    assert.has_error(function() x[ml.ones(2, 3, {dtype = "uint8"})] = {1, 2} end,
      "index: cannot expand shape 2 to 6")
    assert.has_error(function() x[ml.ones(2, 3, {dtype = "uint8"})] = ml.ones(2, 3) end,
      "index: cannot expand shape 2x3 to 6")
  end)

  it("drops a value's leading size-1 dimensions on assignment, as NumPy", function()
    local r = ml.arange(6):reshape(2, 3)
    r[1] = r[{{2}}]
    assert.same({{3, 4, 5}, {3, 4, 5}}, r:totable())
    r[{2, {}}] = ml.array({{{7, 8, 9}}})
    assert.same({{3, 4, 5}, {7, 8, 9}}, r:totable())
    assert.has_error(function() r[1] = ml.ones(2, 3) end,
      "index: cannot expand shape 2x3 to 3")
  end)
end)
