-- flip, flipud, fliplr, roll, pad and einsum against NumPy (the fixtures
-- of tests/fixtures/rearrange/make.py: awkward shapes, views, margins
-- wider than the array), in every dtype, on the default device; the
-- operations that read flipped views (negative strides); then errors.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/rearrange/"
local DEV = ml.device()
local DTYPES = {"float64", "float32", "int32", "int64", "uint8"}

local function load(name)
  return ml.load_npy(DIR .. name .. ".npy"):to(DEV)
end

local function input(name, dt)
  if name == "pt" then return load("x_p"):astype(dt):t() end
  return load("x_" .. name):astype(dt)
end

local function check(got, want, dt, what)
  assert.is_true(ml.is_array(got), what)
  assert.equal(DEV, got.device, what)
  if dt then assert.equal(dt, got.dtype, what) end
  assert.same(want.shape, got.shape, what)
  assert.array_near(got:astype("float64"), want:astype("float64"), 0)
end

local function lines(file)
  local r = {}
  for l in io.lines(DIR .. file) do
    local f = {}
    for v in (l .. "|"):gmatch("([^|]*)|") do f[#f + 1] = v end
    r[#r + 1] = f
  end
  return r
end

describe("flip", function()
  it("matches NumPy along every dimension, some, or a negative one", function()
    for _, dt in ipairs(DTYPES) do
      local a = input("a", dt)
      check(a:flip(), load("flip_a"), dt, "flip " .. dt)
      for d = 1, 3 do check(ml.flip(a, {dims = d}), load("flip_a_" .. d), dt, "flip d") end
      check(a:flip({dims = {1, 3}}), load("flip_a_13"), dt, "flip 1 3")
      check(a:flip({dims = {-1, 1}}), load("flip_a_13"), dt, "flip -1 1")
      check(input("m", dt):flip(), load("flip_m"), dt, "flip m")
      check(input("e", dt):flip(), load("flip_e"), dt, "flip e")
      check(input("one", dt):flip(), load("x_one"), dt, "flip one")
    end
  end)

  it("is a view that shares x's storage, with negative strides", function()
    local a = input("a", "float64")
    local f = a:flip({dims = 2})
    assert.is_false(f:is_contiguous())
    f[{1, 1, 1}] = 100
    assert.equal(100, a[{1, 4, 1}])
    assert.same(a.shape, f:flip({dims = 2}).shape)
    check(f:flip({dims = 2}), a, "float64", "flip twice")
    local s = ml.full({}, 3, {device = DEV})
    check(ml.flip(s), s, nil, "0-d")
  end)

  it("flipud and fliplr are flips of dimensions 1 and 2", function()
    local m = input("m", "int32")
    check(m:flipud(), m:flip({dims = 1}):contiguous(), "int32", "flipud")
    check(ml.fliplr(m), m:flip({dims = 2}):contiguous(), "int32", "fliplr")
    check(input("v", "int32"):flipud(), input("v", "int32"):flip(), "int32", "flipud 1-D")
  end)

  it("is read right by reductions, scans, sorts, products and copies", function()
    for _, dt in ipairs({"float64", "float32", "int64"}) do
      local a = input("a", dt)
      local fa = a:flip({dims = {1, 3}})
      check(fa:sum(2), load("fa_sum2"), nil, "sum " .. dt)
      check(fa:max(1), load("fa_max1"), dt, "max " .. dt)
      check(fa:cumsum(3), load("fa_cumsum3"), nil, "cumsum " .. dt)
      check(fa:sort(3), load("fa_sort3"), dt, "sort " .. dt)
      check(fa:argmax(3), load("fa_argmax3"), "int64", "argmax " .. dt)
      check(fa + a:flip({dims = 2}) * 2, load("fa_add"), dt, "add " .. dt)
      check(fa:reshape(12, 5), load("fa_reshape"), dt, "reshape " .. dt)
      check(fa:contiguous(), load("flip_a_13"), dt, "contiguous " .. dt)
      check(fa:clone(), load("flip_a_13"), dt, "clone " .. dt)
      local m = input("m", dt)
      local fm = m:flip()
      check(fm:mm(fm:t()), load("fm_mmt"), dt, "mm " .. dt)
      check(m:flip({dims = 1}):t():mm(m), load("fm_rows_mm"), dt, "mm rows " .. dt)
      local bc = input("c", dt):flip({dims = 1})
      local bd = input("d", dt):flip({dims = {1, 3}})
      check(ml.matmul(bc, bd), load("bmm_flip"), dt, "bmm " .. dt)
      local idx = ml.array({5, 1, 3}, {device = DEV})
      check(fm:index_select(2, idx), load("fm_cols"), dt, "index_select " .. dt)
      check(fm:to("cpu"):to(DEV), load("flip_m"), dt, "to " .. dt)
    end
  end)

  it("is written through, saved and printed as its contiguous copy", function()
    local m = input("m", "float64")
    local dst = ml.zeros(5, 6, {device = DEV})
    dst:flip():copy(m)
    check(dst, load("flip_m"), "float64", "copy into a flipped view")
    local self = m:clone()
    self:copy(self:flip()) -- overlapping: read before written
    check(self, load("flip_m"), "float64", "copy from itself flipped")
    local path = os.tmpname()
    ml.save_npy(path, m:flip())
    check(ml.load_npy(path):to(DEV), load("flip_m"), "float64", "save_npy")
    os.remove(path)
    assert.equal(tostring(m:flip():contiguous()), tostring(m:flip()))
  end)

  it("rejects bad dims", function()
    local x = ml.ones(2, 3, {device = DEV})
    assert.error_matches(function() x:flip({dims = 3}) end, "flip: dimension 3 out of range")
    assert.error_matches(function() x:flip({dims = {1, -2}}) end,
                         "flip: dimension 1 repeated in dims")
    assert.error_matches(function() x:flip({dim = 1}) end, "unknown option 'dim'")
    assert.error_matches(function() ml.fliplr(ml.ones(3)) end,
                         "fliplr: expects an array of 2 or more dimensions, got shape 3")
  end)
end)

describe("roll", function()
  it("matches NumPy, flattened or along dimensions, on views", function()
    local cases = {
      {"v_3", "v", 3}, {"v_m10", "v", -10}, {"a_7", "a", 7},
      {"a_1m2_13", "a", {1, -2}, {1, 3}}, {"a_2_23", "a", 2, {2, 3}},
      {"a_11_22", "a", {1, 1}, {2, 2}}, {"e_1", "e", 1}, {"e_1_2", "e", 1, 2},
      {"one_5", "one", 5},
    }
    for _, dt in ipairs(DTYPES) do
      for _, c in ipairs(cases) do
        local x = input(c[2], dt)
        local opts = c[4] and {dims = c[4]} or nil
        check(ml.roll(x, c[3], opts), load("roll_" .. c[1]), dt, "roll " .. c[1] .. " " .. dt)
      end
      check(input("m", dt):t():roll(2, {dims = 1}), load("roll_mt_2_1"), dt, "roll view")
      check(input("a", dt):flip():roll(7), load("flip_a"):roll(7), dt, "roll flipped")
    end
  end)

  it("rejects shifts and dims that do not match", function()
    local x = ml.ones(2, 3, {device = DEV})
    assert.error_matches(function() x:roll({1, 2, 3}, {dims = {1, 2}}) end,
                         "roll: 3 shifts do not match 2 dimensions")
    assert.error_matches(function() x:roll(1.5) end, "roll: shift must be an integer")
    assert.error_matches(function() x:roll(1, {dims = 3}) end, "roll: dimension 3 out of range")
  end)
end)

describe("pad", function()
  it("matches NumPy in every mode and form of pad_width", function()
    local cases = lines("pad_cases.txt")
    for _, dt in ipairs(DTYPES) do
      for _, c in ipairs(cases) do
        local name, inp, mode, width, cval = c[1], c[2], c[3], c[4], c[5]
        if not (dt == "uint8" and cval ~= "") then
          local opts = {mode = mode}
          if cval ~= "" then opts.constant_values = tonumber(cval) end
          local w = _G.load("return " .. width)()
          check(ml.pad(input(inp, dt), w, opts), load(name), dt, name .. " " .. dt)
        end
      end
    end
  end)

  it("pads flipped views", function()
    local got = input("p", "float64"):flip():pad(2, {mode = "reflect"})
    local want = load("pad_reflect_p_2"):flip()
    check(got, want, "float64", "pad of a flip")
  end)

  it("rejects bad widths, modes and empty dimensions", function()
    local x = ml.ones(2, 3, {device = DEV})
    assert.error_matches(function() x:pad(-1) end, "pad: pad_width must be 0 or more, not %-1")
    assert.error_matches(function() x:pad({{1, 1}, {1, 1}, {1, 1}}) end,
                         "pad: pad_width has 3 pairs for 2 dimensions")
    assert.error_matches(function() x:pad(1, {mode = "mirror"}) end,
                         "pad: mode must be one of")
    assert.error_matches(function() x:pad(1, {mode = "edge", constant_values = 1}) end,
                         "pad: constant_values is for mode \"constant\"")
    assert.error_matches(function() ml.zeros(0, 2):pad(1, {mode = "wrap"}) end,
                         "pad: cannot extend the empty dimension 1 of shape 0x2")
    assert.error_matches(function() x:pad(1, {mode = 1}) end, "option 'mode' must be a string")
  end)
end)

describe("einsum", function()
  local cases = lines("einsum_cases.txt")

  it("matches NumPy: products, diagonals, sums, broadcasting, implicit output", function()
    for _, dt in ipairs({"float64", "float32", "int64", "int32"}) do
      for _, c in ipairs(cases) do
        local ops = {}
        for o in c[3]:gmatch("[^,]+") do ops[#ops + 1] = input(o, dt) end
        local got = ml.einsum(c[2], table.unpack(ops))
        check(got, load("einsum_" .. c[1]), nil, c[1] .. " " .. dt)
      end
    end
  end)

  it("reads transposed and flipped operands", function()
    local a, b = input("A", "float64"), input("B", "float64")
    check(ml.einsum("ji,jk->ik", a:t():contiguous(), b), load("einsum_mm"), nil, "ji")
    check(ml.einsum("ij,jk->ik", a:t():contiguous():t(), b), load("einsum_mm"), nil, "t")
    check(ml.einsum("ij,jk->ik", a:flip():flip(), b:flip():contiguous():flip()),
          load("einsum_mm"), nil, "flipped")
  end)

  it("maps bij,bjk->bik and ij,kj->ik to one product, copying nothing", function()
    local function allocated(fn)
      collectgarbage()
      ml.synchronize()
      ml.reset_peak_memory()
      local base = ml.memory().allocated
      local r = fn()
      return ml.memory().peak - base, r
    end
    local a, c = ml.rand(30, 20, {device = DEV}), ml.rand(40, 20, {device = DEV})
    local bytes, r = allocated(function() return ml.einsum("ij,kj->ik", a, c) end)
    assert.equal(30 * 40 * 8, bytes)
    assert.array_near(r, a:mm(c:t()), 1e-12)
    local p, q = ml.rand(3, 30, 20, {device = DEV}), ml.rand(3, 20, 40, {device = DEV})
    bytes, r = allocated(function() return ml.einsum("bij,bjk->bik", p, q) end)
    assert.equal(3 * 30 * 40 * 8, bytes)
    assert.array_near(r, ml.matmul(p, q), 1e-12)
    bytes = allocated(function() return ml.einsum("bji,bjk->bik", p:transpose(2, 3), q) end)
    assert.equal(3 * 30 * 40 * 8, bytes)
  end)

  it("rejects bad subscripts", function()
    local a = ml.ones(2, 3, {device = DEV})
    assert.error_matches(function() ml.einsum("ij,jk", a) end,
                         "einsum: subscripts 'ij,jk' name 2 operands, got 1")
    assert.error_matches(function() ml.einsum("ijk", a) end,
                         "einsum: term 'ijk' has 3 indices for operand 1 of 2 dimensions")
    assert.error_matches(function() ml.einsum("ij,ij", a, a:t()) end,
                         "einsum: index i has size 3 in operand 2 and 2 before")
    assert.error_matches(function() ml.einsum("ii", a) end,
                         "einsum: index i repeated in operand 1 over sizes 2 and 3")
    assert.error_matches(function() ml.einsum("ij->ik", a) end,
                         "einsum: output index k is in no operand")
    assert.error_matches(function() ml.einsum("ij->ii", a) end,
                         "einsum: index i repeated in the output")
    assert.error_matches(function() ml.einsum("i1", a) end,
                         "einsum: invalid character '1' in subscripts")
    assert.error_matches(function() ml.einsum(3, a) end, "einsum: subscripts must be a string")
  end)
end)
