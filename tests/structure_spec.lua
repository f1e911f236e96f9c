-- tril, triu, diag, diagonal, trace, kron, tensordot, diff, meshgrid,
-- tile and repeat_interleave against NumPy (the fixtures of
-- tests/fixtures/structure/make.py: awkward shapes, batched inputs, the
-- views x^T and x[..., ::2], every k from -8 to 8), in every dtype, on
-- the default device; then their errors.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/structure/"
local DEV = ml.device()
local DTYPES = {"float64", "float32", "int32", "int64", "uint8"}
local SIGNED = {"float64", "float32", "int32", "int64"}
local MATS = {"m57", "b2345", "one", "col", "e03", "row"}
local VECS = {"v5", "v1", "v0", "v3"}

local function load(name)
  return ml.load_npy(DIR .. name .. ".npy"):to(DEV)
end

-- The input name in dtype dt, as make.py's views name it ("m57_t").
local function input(name, dt)
  local base, v = name:match("^(.-)(_[ts]?)$")
  if not base or base == "" then base, v = name, "" end
  local x = load("x_" .. base):astype(dt)
  if v == "_t" then return x:transpose(-2, -1) end
  if v == "_s" then
    local idx = {}
    for i = 1, x:dim() - 1 do idx[i] = {} end
    idx[x:dim()] = {1, -1, 2}
    return x[idx]
  end
  return x
end

local function check(got, want, dt, what)
  assert.is_true(ml.is_array(got), what)
  assert.equal(DEV, got.device, what)
  if dt then assert.equal(dt, got.dtype, what) end
  assert.same(want.shape, got.shape, what)
  assert.array_near(got:astype("float64"), want, 0)
end

local function each_view(fn)
  for _, n in ipairs(MATS) do
    for _, v in ipairs({"", "_t", "_s"}) do fn(n, v) end
  end
end

describe("structure", function()
  it("tril and triu match NumPy for every k, batched and on views", function()
    each_view(function(n, v)
      local tl, tu = load("tril_" .. n .. v), load("triu_" .. n .. v)
      for _, dt in ipairs(DTYPES) do
        local x = input(n .. v, dt)
        for i = 1, 17 do
          local k, what = i - 9, ("%s%s %s k=%d"):format(n, v, dt, i - 9)
          check(ml.tril(x, {k = k}), tl[i], dt, "tril " .. what)
          check(x:triu({k = k}), tu[i], dt, "triu " .. what)
        end
      end
    end)
  end)

  it("diagonal matches NumPy for every offset and pair of dimensions", function()
    each_view(function(n, v)
      local x = input(n .. v, "float64")
      local pairs = x:dim() == 2 and {{1, 2}, {2, 1}} or {{1, 2}, {2, 4}, {4, 1}, {3, 2}}
      for _, p in ipairs(pairs) do
        local want = load(("diagonal_%s%s_%d%d"):format(n, v, p[1], p[2]))
        for _, dt in ipairs(DTYPES) do
          local xd = x:astype(dt)
          for i = 1, 17 do
            local what = ("diagonal %s%s %s dims %d,%d offset %d"):format(n, v, dt, p[1], p[2],
                                                                         i - 9)
            local got = xd:diagonal({offset = i - 9, dim1 = p[1], dim2 = p[2]})
            local len = got.shape[got:dim()]
            local w = want[i]
            assert.is_true(w:narrow(w:dim(), len + 1, w.shape[w:dim()] - len):isnan():all(), what)
            check(got, w:narrow(w:dim(), 1, len), dt, what)
            if x:dim() == 2 and p[1] == 1 then
              check(ml.diag(xd, {k = i - 9}), w:narrow(1, 1, len), dt, "diag " .. what)
            end
          end
        end
      end
    end)
  end)

  it("trace matches NumPy: a number for a matrix, an array for more", function()
    each_view(function(n, v)
      local want = load("trace_" .. n .. v)
      local x = input(n .. v, "float64")
      for i = 1, 17 do
        local t = x:trace({offset = i - 9})
        if x:dim() == 2 then
          assert.equal(want[i], t)
          assert.equal(want[i], ml.trace(x:astype("int32"), {offset = i - 9}))
        else
          check(t, want[i], "float64", "trace " .. n .. v)
        end
      end
    end)
  end)

  it("diag makes a matrix of a vector for every k and dtype", function()
    for _, n in ipairs(VECS) do
      for _, k in ipairs({-3, -1, 0, 2}) do
        local want = load(("diag_%s_%d"):format(n, k))
        for _, dt in ipairs(DTYPES) do
          check(ml.diag(input(n, dt), {k = k}), want, dt, ("diag %s k=%d %s"):format(n, k, dt))
        end
      end
    end
    assert.array_near(ml.diag({1, 2}), ml.diag(ml.array({1, 2})), 0)
  end)

  it("kron matches NumPy, shapes padded with leading ones", function()
    local CASES = {{"col", "row"}, {"v5", "m57"}, {"b2345", "one"}, {"v5", "v1"},
                   {"e03", "col"}, {"m57_t", "v3"}}
    for i, c in ipairs(CASES) do
      for _, dt in ipairs(DTYPES) do
        check(ml.kron(input(c[1], dt), input(c[2], dt)), load("kron_" .. i), dt,
              "kron " .. i .. " " .. dt)
      end
    end
    local p = ml.kron(input("m57_t", "int32"), input("v3", "float32"))
    check(p, load("kron_6"), "float64", "kron promotes as mul (int32, float32: float64)")
  end)

  it("tensordot matches NumPy for integer and listed dims", function()
    for _, dt in ipairs(SIGNED) do
      local function x(n) return input(n, dt) end
      local what = "tensordot " .. dt
      check(ml.tensordot(x("b2345"), x("m45")), load("tensordot_1"), dt, what .. " 1")
      check(ml.tensordot(x("b2345"), x("c534"), {dims = {{2, 4}, {2, 1}}}),
            load("tensordot_2"), dt, what .. " 2")
      check(ml.tensordot(x("v5"), x("v1"), {dims = 0}), load("tensordot_3"), dt, what .. " 3")
      check(ml.tensordot(x("m57"), x("m72"), {dims = 1}), load("tensordot_4"), dt, what .. " 4")
      check(ml.tensordot(x("e03"):t(), x("e02"), {dims = 1}), load("tensordot_5"), dt,
            what .. " 5")
      check(ml.tensordot(x("m57_t"), x("m72"), {dims = {{1}, {-2}}}), load("tensordot_6"), dt,
            what .. " 6")
    end
  end)

  it("diff matches NumPy for every n and dim, and wraps in uint8", function()
    local CASES = {{"m57", 0, -1}, {"m57", 1, -1}, {"m57", 3, 1}, {"m57", 2, 2},
                   {"b2345", 1, 2}, {"b2345", 2, 4}, {"v1", 1, 1}, {"v5", 6, 1},
                   {"e03", 1, 1}, {"m57_t", 2, -1}}
    for i, c in ipairs(CASES) do
      for _, dt in ipairs(SIGNED) do
        check(ml.diff(input(c[1], dt), {n = c[2], dim = c[3]}), load("diff_" .. i), dt,
              "diff " .. i .. " " .. dt)
      end
    end
    check(input("m57", "uint8"):diff({dim = 2}), load("diff_u8"), "uint8", "diff uint8")
  end)

  it("meshgrid matches NumPy for xy and ij indexing", function()
    for _, idx in ipairs({"xy", "ij"}) do
      for _, dt in ipairs(DTYPES) do
        local a, b = ml.meshgrid(input("v5", dt), input("v3", dt), {indexing = idx})
        check(a, load("meshgrid2_" .. idx .. "_1"), dt, "meshgrid2 " .. idx)
        check(b, load("meshgrid2_" .. idx .. "_2"), dt, "meshgrid2 " .. idx)
        local r = table.pack(ml.meshgrid(input("v5", dt), input("v3", dt), input("v1", dt),
                                         {indexing = idx}))
        assert.equal(3, r.n)
        for i = 1, 3 do check(r[i], load("meshgrid3_" .. idx .. "_" .. i), dt, "meshgrid3") end
        a, b = ml.meshgrid(input("v0", dt), input("v3", dt), {indexing = idx})
        check(a, load("meshgrid0_" .. idx .. "_1"), dt, "meshgrid0 " .. idx)
        check(b, load("meshgrid0_" .. idx .. "_2"), dt, "meshgrid0 " .. idx)
      end
    end
    check(ml.meshgrid(input("v5", "float64")), load("meshgrid1"), "float64", "meshgrid1")
    assert.is_true(ml.meshgrid(input("v5", "float64"), input("v3", "float64")):is_contiguous())
  end)

  it("tile matches NumPy, reps an integer or a table", function()
    local CASES = {{"m57", 2}, {"m57", {2, 1}}, {"m57", {1, 2, 3}}, {"m57", {0, 2}},
                   {"v5", {3, 1, 2}}, {"one", 3}, {"e03", {2, 2}}, {"m57_t", {2, 1}}}
    for i, c in ipairs(CASES) do
      for _, dt in ipairs(DTYPES) do
        check(ml.tile(input(c[1], dt), c[2]), load("tile_" .. i), dt, "tile " .. i .. " " .. dt)
      end
    end
  end)

  it("repeat_interleave matches numpy.repeat, flattened without dim", function()
    local r5, r7 = load("r5"), load("r7")
    for _, dt in ipairs(DTYPES) do
      local function x(n) return input(n, dt) end
      local what = "repeat_interleave " .. dt
      check(ml.repeat_interleave(x("m57"), 2), load("repeat_1"), dt, what .. " 1")
      check(x("m57"):repeat_interleave(r5, {dim = 1}), load("repeat_2"), dt, what .. " 2")
      check(x("m57"):repeat_interleave(r7:totable(), {dim = -1}), load("repeat_3"), dt,
            what .. " 3")
      check(ml.repeat_interleave(x("v5"), 0), load("repeat_4"), dt, what .. " 4")
      check(ml.repeat_interleave(x("e03"), 2, {dim = 1}), load("repeat_5"), dt, what .. " 5")
      check(ml.repeat_interleave(x("m57_t"), r5:astype("int32"), {dim = 2}), load("repeat_6"),
            dt, what .. " 6")
      check(ml.repeat_interleave(x("b2345"), 3, {dim = 3}), load("repeat_7"), dt, what .. " 7")
      check(ml.repeat_interleave(x("e03"), ml.zeros(0, {dtype = "int64"}), {dim = 1}),
            x("e03"), dt, what .. " empty repeats")
    end
  end)

  it("raises errors that name the function and the shapes", function()
    local function err(fn)
      local ok, e = pcall(fn)
      assert.is_false(ok)
      return (tostring(e):gsub("^[^:\n]*:%d+: ", ""))
    end
    local v, m = ml.zeros(3, {device = DEV}), ml.zeros(3, 4, {device = DEV})
    assert.equal("tril: expects an array of 2 or more dimensions, got shape 3",
                 err(function() return ml.tril(v) end))
    assert.equal("triu: option 'k' must be an integer, not 0.5",
                 err(function() return m:triu({k = 0.5}) end))
    assert.equal("diag: expects a 1-D or 2-D array, got shape 2x2x2",
                 err(function() return ml.diag(ml.zeros(2, 2, 2)) end))
    assert.equal("diagonal: dim1 and dim2 are both dimension 2 of shape 3x4",
                 err(function() return m:diagonal({dim1 = 2, dim2 = -1}) end))
    assert.equal("diagonal: dimension 3 out of range for 2 dimensions",
                 err(function() return m:diagonal({dim2 = 3}) end))
    assert.equal("trace: expects an array of 2 or more dimensions, got shape 3",
                 err(function() return v:trace() end))
    assert.equal("tensordot: shapes 3x4 and 3x4 differ in the contracted dimensions 2 and 1"
                 .. " (4 != 3)", err(function() return ml.tensordot(m, m, {dims = 1}) end))
    assert.equal("tensordot: dims 3 out of range for shapes 3x4 and 3x4",
                 err(function() return ml.tensordot(m, m, {dims = 3}) end))
    assert.equal("tensordot: dims name 1 dimensions of a and 2 of b",
                 err(function() return ml.tensordot(m, m, {dims = {{1}, {1, 2}}}) end))
    assert.equal("diff: n must be 0 or more, not -1",
                 err(function() return v:diff({n = -1}) end))
    assert.equal("diff: dimension 2 out of range for 1 dimensions",
                 err(function() return v:diff({dim = 2}) end))
    assert.equal('meshgrid: indexing must be "xy" or "ij", not "yx"',
                 err(function() return ml.meshgrid(v, v, {indexing = "yx"}) end))
    assert.equal("meshgrid: array 2 has shape 3x4, expected a 1-D array",
                 err(function() return ml.meshgrid(v, m) end))
    assert.equal("tile: reps must be 0 or more, not -1", err(function() return m:tile({-1}) end))
    assert.equal("repeat_interleave: repeats of shape 2 do not match dimension 1 of size 3",
                 err(function() return v:repeat_interleave({1, 2}, {dim = 1}) end))
    assert.equal("repeat_interleave: repeats must be 0 or more, not -1",
                 err(function() return v:repeat_interleave({1, -1, 2}) end))
    assert.equal("repeat_interleave: repeats must be integers, not float64",
                 err(function() return v:repeat_interleave(ml.ones(3)) end))
    if DEV ~= "cpu" then
      local where = "(cpu and " .. DEV .. "); move one with :to()"
      assert.equal("kron: arrays on different devices " .. where,
                   err(function() return ml.kron(v:cpu(), v) end))
      assert.equal("tensordot: arrays on different devices " .. where,
                   err(function() return ml.tensordot(m:cpu(), m, {dims = 0}) end))
      assert.equal("repeat_interleave: arrays on different devices (" .. DEV
                   .. " and cpu); move one with :to()",
                   err(function() return v:repeat_interleave(ml.ones(3, {device = "cpu"})) end))
    end
  end)
end)
