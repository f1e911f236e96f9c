local ml = require "moonlab"

describe("constructors", function()
  it("zeros, ones, empty and full take shapes as varargs or a table", function()
    assert.same({{0, 0, 0}, {0, 0, 0}}, ml.zeros(2, 3):totable())
    assert.same({{1, 1}, {1, 1}}, ml.ones({2, 2}):totable())
    assert.same({2, 5}, ml.empty(2, 5).shape)
    assert.same({{7.5, 7.5}}, ml.full(1, 2, 7.5):totable())
    assert.same({3}, ml.full({3}, 2).shape)
  end)

  it("uses float64 by default and honours dtype and device options", function()
    assert.equal("float64", ml.zeros(2).dtype)
    assert.equal("float32", ml.ones(2, {dtype = "float32"}).dtype)
    assert.equal("int32", ml.zeros({2, 2}, {dtype = "int32"}).dtype)
    assert.equal("cpu", ml.zeros(2, {device = "cpu"}).device)
    assert.equal("uint8", ml.ones(3, {dtype = "bool"}).dtype)
  end)

  it("full infers int64 from an integer value, as NumPy", function()
    assert.equal("int64", ml.full(2, 7).dtype)
    assert.equal("float64", ml.full(2, 7.0).dtype)
    assert.equal("float32", ml.full(2, 7, {dtype = "float32"}).dtype)
  end)

  it("makes 0-d and empty arrays", function()
    local s = ml.full({}, 3.5)
    assert.equal(0, s.ndim)
    assert.equal(3.5, s:item())
    local e = ml.zeros(0, 3)
    assert.same({0, 3}, e.shape)
    assert.equal(0, e:numel())
    assert.same({}, e:totable())
  end)

  it("eye makes square and rectangular identities", function()
    assert.same({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, ml.eye(3):totable())
    assert.same({{1, 0, 0}, {0, 1, 0}}, ml.eye(2, 3):totable())
    assert.same({{1, 0}, {0, 1}, {0, 0}}, ml.eye(3, 2, {dtype = "int32"}):totable())
  end)

  it("arange excludes the stop, as NumPy, with integer or float steps", function()
    assert.same({0, 1, 2, 3, 4}, ml.arange(5):totable())
    assert.equal("int64", ml.arange(5).dtype)
    assert.same({2, 4, 6}, ml.arange(2, 8, 2):totable())
    assert.same({5, 3, 1}, ml.arange(5, 0, -2):totable())
    assert.same({}, ml.arange(3, 3):totable())
    assert.same({0, 0.5, 1, 1.5}, ml.arange(0, 2, 0.5):totable())
    assert.equal("float64", ml.arange(0, 2, 0.5).dtype)
    assert.has_error(function() ml.arange(0, 5, 0) end, "arange: step must be nonzero")
  end)

  it("linspace includes both ends exactly", function()
    local x = ml.linspace(0, 1, 5):totable()
    assert.same({0, 0.25, 0.5, 0.75, 1}, x)
    local y = ml.linspace(-1, 0.3, 7):totable()
    assert.equal(0.3, y[7])
    assert.equal(50, ml.linspace(0, 1):numel())
    assert.same({2}, ml.linspace(2, 5, 1):totable())
  end)

  it("array reads nested tables and infers int64 or float64", function()
    local a = ml.array({{1, 2, 3}, {4, 5, 6}})
    assert.same({2, 3}, a.shape)
    assert.equal("int64", a.dtype)
    assert.equal("float64", ml.array({1, 2.5}).dtype)
    assert.same({1, 0, 1}, ml.array({true, false, true}):totable())
    assert.equal("float32", ml.array({1, 2}, {dtype = "float32"}).dtype)
    assert.has_error(function() ml.array({{1, 2}, {3}}) end,
      "array: ragged nested table (expected 2 elements at depth 2)")
    assert.has_error(function() ml.array({1, "x"}) end, "array: expected numbers, found string")
  end)

  it("*_like copy shape, dtype and device", function()
    local a = ml.zeros(2, 3, {dtype = "int32"})
    local b = ml.ones_like(a)
    assert.same({2, 3}, b.shape)
    assert.equal("int32", b.dtype)
    assert.same({{1, 1, 1}, {1, 1, 1}}, b:totable())
    assert.equal("float32", ml.zeros_like(a, {dtype = "float32"}).dtype)
    assert.same({{4, 4, 4}, {4, 4, 4}}, ml.full_like(a, 4):totable())
    assert.same({2, 3}, ml.empty_like(a).shape)
  end)

  it("rejects bad shapes and options with named errors", function()
    assert.has_error(function() ml.zeros(-1) end, "zeros: negative dimension -1 in shape")
    assert.has_error(function() ml.zeros(2, {dtype = "complex"}) end,
      "zeros: unknown dtype 'complex' (float32, float64, int32, int64, uint8)")
    assert.has_error(function() ml.zeros(2, {device = "tpu"}) end,
      "zeros: unknown device 'tpu' (cpu, cuda, cuda:N)")
    assert.has_error(function() ml.zeros(1, 1, 1, 1, 1, 1, 1, 1, 1) end,
      "zeros: arrays have at most 8 dimensions")
  end)
end)

describe("conversions", function()
  it("astype converts with C rules (truncation toward zero, wrapping)", function()
    local x = ml.array({-1.7, 0.5, 2.9, 300})
    assert.same({-1, 0, 2, 300}, x:astype("int64"):totable())
    assert.same({255, 0, 2, 44}, x:astype("uint8"):totable())
    assert.same({1, 2}, ml.array({1, 2}):astype("float32"):totable())
    local big = ml.array({2^53 + 1}, {dtype = "int64"})
    assert.equal(2^53 + 1 | 0, big:astype("int64"):item())
  end)

  it("item reads the only element; totable nests", function()
    assert.equal(5, ml.array({{5}}):item())
    assert.equal(math.type(ml.array({5}):item()), "integer")
    assert.equal(math.type(ml.array({5.0}):item()), "float")
    assert.has_error(function() ml.zeros(2):item() end, "item: array of shape 2 has 2 elements, not 1")
  end)

  it("to, cpu and clone copy; contiguous shares when possible", function()
    local a = ml.array({1, 2, 3})
    local c = a:clone()
    c:fill(9)
    assert.same({1, 2, 3}, a:totable())
    assert.same({9, 9, 9}, c:totable())
    assert.same({1, 2, 3}, a:to("cpu"):totable())
    assert.equal("float32", a:to("float32").dtype)
    assert.same({1, 2, 3}, a:cpu():totable())
    assert.equal(a, a:contiguous())
  end)

  it("fill and copy write in place and return the array", function()
    local a = ml.zeros(2, 2)
    assert.equal(a, a:fill(3))
    assert.same({{3, 3}, {3, 3}}, a:totable())
    a:copy(ml.array({1, 2}))
    assert.same({{1, 2}, {1, 2}}, a:totable())
    assert.has_error(function() ml.zeros(2, {dtype = "uint8"}):fill(300) end,
      "fill: 300 is out of range for uint8")
  end)

  it("reports a missing CUDA device clearly", function()
    if ml.cuda.available() then return end
    assert.has_error(function() ml.zeros(2, {device = "cuda"}) end)
    local ok, err = pcall(ml.zeros, 2, {device = "cuda:3"})
    assert.is_false(ok)
    assert.truthy(err:find("cuda:3", 1, true))
  end)
end)

describe("lifetime", function()
  it("free releases the storage and later use is an error", function()
    local before = ml.memory().allocated
    local a = ml.zeros(1000)
    assert.equal(before + 8000, ml.memory().allocated)
    a:free()
    assert.equal(before, ml.memory().allocated)
    assert.has_error(function() a:sum() end)
    assert.equal("[freed array]", tostring(a))
  end)

  it("releases <close> variables at the end of their scope", function()
    local before = ml.memory().allocated
    do
      local a <close> = ml.zeros(1000)
      assert.equal(before + 8000, ml.memory().allocated)
    end
    assert.equal(before, ml.memory().allocated)
  end)

  it("collects garbage when temporaries pile up, without running out of memory", function()
    collectgarbage()
    local base = ml.memory().allocated
    local peak = 0
    for _ = 1, 200 do
      local _ = ml.empty(2^24) -- 128 MiB each, 25 GiB in all
      peak = math.max(peak, ml.memory().allocated - base)
    end
    assert.is_true(peak <= 2^30, ("peak %d bytes"):format(peak))
  end)

  it("runs a full collection for garbage, none for arrays freed as they go", function()
    collectgarbage()
    collectgarbage("stop") -- only moonlab's collections for memory pressure run
    local collected = false
    setmetatable({}, {__gc = function() collected = true end})
    for _ = 1, 8 do
      local x = ml.empty(2^25) -- 256 MiB each
      x:free()
    end
    local freed_as_they_go = collected
    for _ = 1, 8 do
      local _ = ml.empty(2^25)
    end
    collectgarbage("restart")
    assert.is_false(freed_as_they_go)
    assert.is_true(collected)
  end)
end)

-- NumPy 2 assigns a Python number to an integer array by truncating a
-- float toward zero and then requiring the integer to fit (u8[0] = 1.5
-- stores 1; u8[0] = 300.5, -1.5 or NaN raise): every path that stores a
-- Lua number does the same.
describe("storing numbers into integer arrays", function()
  local function u8(n) return ml.zeros(n, {dtype = "uint8"}) end

  it("truncates floats in range toward zero, as NumPy", function()
    local x = u8(4)
    x[1] = 1.5
    x[2] = -0.5
    x[3] = 255.9
    x[{{4}}] = 7.99
    assert.same({1, 0, 255, 7}, x:totable())
    local i = ml.zeros(2, {dtype = "int32"})
    i[1] = 2 ^ 31 - 0.5
    i[2] = -2 ^ 31
    assert.same({2147483647, -2147483648}, i:totable())
    local l = ml.zeros(1, {dtype = "int64"})
    l[1] = -2 ^ 63
    assert.equal(math.mininteger, l[1])
    assert.same({1, 2, 255}, ml.array({1.5, 2, 255.5}, {dtype = "uint8"}):totable())
    assert.same({-2, -2}, ml.full(2, -2.7, {dtype = "int32"}):totable())
    assert.same({3, 3}, u8(2):fill(3.25):totable())
  end)

  it("keeps integers exact in tables that mix integers and floats", function()
    local x = ml.array({math.maxinteger, 1.5, math.mininteger}, {dtype = "int64"})
    assert.same({math.maxinteger, 1, math.mininteger}, x:totable())
  end)

  it("refuses floats out of range, NaN and infinities through x[k] = v", function()
    local x = u8(3)
    assert.has_error(function() x[1] = -1.5 end, "index: -1.5 is out of range for uint8")
    assert.has_error(function() x[1] = 300.5 end, "index: 300.5 is out of range for uint8")
    assert.has_error(function() x[1] = 256.0 end, "index: 256 is out of range for uint8")
    assert.has_error(function() x[{{1, 2}}] = 1 / 0 end, "index: inf is out of range for uint8")
    local i = ml.zeros(3, {dtype = "int32"})
    assert.has_error(function() i[1] = 0 / 0 end, "index: nan is out of range for int32")
    assert.has_error(function() i[1] = -2 ^ 31 - 1 end,
      "index: -2147483649 is out of range for int32")
    assert.has_error(function() i[{{}}] = 2 ^ 31 end, "index: 2147483648 is out of range for int32")
    local l = ml.zeros(3, {dtype = "int64"})
    assert.has_error(function() l[1] = 2 ^ 63 end,
      "index: 9.2233720368548e+18 is out of range for int64")
    assert.has_error(function() x[ml.array({1, 0, 1}, {dtype = "uint8"})] = 300.5 end,
      "index: 300.5 is out of range for uint8")
    assert.has_error(function() x[ml.array({2})] = -1.5 end, "index: -1.5 is out of range for uint8")
    assert.has_error(function() x[ml.array({2})] = {300} end, "index: 300 is out of range for uint8")
    assert.has_error(function() x[{{1, 2}}] = {1, 0 / 0} end, "index: nan is out of range for uint8")
    assert.same({0, 0, 0}, x:totable())
    assert.same({0, 0, 0}, i:totable())
  end)

  it("refuses them in fill, copy, masked_fill and scatter", function()
    local x = u8(3)
    assert.has_error(function() x:fill(300.5) end, "fill: 300.5 is out of range for uint8")
    assert.has_error(function() x:fill(-1 / 0) end, "fill: -inf is out of range for uint8")
    assert.has_error(function() x:copy(256.5) end, "copy: 256.5 is out of range for uint8")
    assert.has_error(function() x:copy({1, 2, 256}) end, "copy: 256 is out of range for uint8")
    assert.has_error(function() x:masked_fill({1, 0, 1}, 0 / 0) end,
      "masked_fill: nan is out of range for uint8")
    assert.has_error(function() ml.masked_fill(x, {1, 0, 1}, -1.5) end,
      "masked_fill: -1.5 is out of range for uint8")
    assert.has_error(function() x:scatter(1, {1}, 300.5) end, "scatter: 300.5 is out of range for uint8")
    assert.has_error(function() x:scatter(1, {1, 2}, {1, -3}) end,
      "scatter: -3 is out of range for uint8")
    assert.same({0, 0, 0}, x:totable())
    assert.same({2, 2, 2}, x:copy(2.5):totable())
    assert.same({9, 2, 2}, x:scatter(1, {1}, 9.9):totable())
  end)

  it("refuses them in the constructors", function()
    assert.has_error(function() ml.array({300}, {dtype = "uint8"}) end,
      "array: 300 is out of range for uint8")
    assert.has_error(function() ml.array({{1, 2}, {3, 300.5}}, {dtype = "uint8"}) end,
      "array: 300.5 is out of range for uint8")
    assert.has_error(function() ml.array({0 / 0}, {dtype = "int64"}) end,
      "array: nan is out of range for int64")
    assert.has_error(function() ml.full(2, 300.5, {dtype = "uint8"}) end,
      "full: 300.5 is out of range for uint8")
    assert.has_error(function() ml.full(2, 0 / 0, {dtype = "int32"}) end,
      "full: nan is out of range for int32")
    assert.has_error(function() ml.full_like(u8(2), -1) end, "full_like: -1 is out of range for uint8")
    assert.has_error(function() ml.full_like(u8(2), 1e10) end,
      "full_like: 10000000000 is out of range for uint8")
    assert.has_error(function() ml.arange(0, 300, {dtype = "uint8"}) end,
      "arange: 299 is out of range for uint8")
    assert.has_error(function() ml.arange(-1, 3, {dtype = "uint8"}) end,
      "arange: -1 is out of range for uint8")
    assert.has_error(function() ml.linspace(0, 300, 3, {dtype = "uint8"}) end,
      "linspace: 300 is out of range for uint8")
    local r = ml.arange(0, 256, {dtype = "uint8"})
    assert.same({256, 0, 255}, {r:numel(), r[1], r[-1]})
    assert.same({0, 150, 300}, ml.linspace(0, 300, 3, {dtype = "int32"}):totable())
    assert.same({255, 254}, ml.arange(255, 253, -1, {dtype = "uint8"}):totable())
  end)
end)
