-- unique, bincount, histogram, quantile, percentile, median, cumprod,
-- searchsorted, argsort's options and the nan-reductions against NumPy
-- (the fixtures of tests/fixtures/stats/make.py: empty, 1, prime and 2-D
-- inputs, NaN rows, transposed views), on the default device; then their
-- errors. NumPy's 0-based positions are 1-based here.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/stats/"
local DEV = ml.device()

local function load(name)
  return ml.load_npy(DIR .. name .. ".npy"):to(DEV)
end

local function check(got, want, dt, tol, what)
  assert.is_true(ml.is_array(got), what)
  assert.equal(DEV, got.device, what)
  if dt then assert.equal(dt, got.dtype, what) end
  assert.same(want.shape, got.shape, what)
  assert.array_near(got:astype("float64"), want:astype("float64"), tol or 0)
end

describe("stats", function()
  it("unique matches NumPy with index, inverse and counts", function()
    for _, n in ipairs({"i711", "f13", "one", "empty"}) do
      local x = load("u_x_" .. n)
      local v, i, inv, c = ml.unique(x, {return_index = true, return_inverse = true,
                                         return_counts = true})
      check(v, load("u_v_" .. n), x.dtype, 0, n)
      check(i, load("u_i_" .. n) + 1, "int64", 0, n .. " index")
      check(inv, load("u_inv_" .. n) + 1, "int64", 0, n .. " inverse")
      check(c, load("u_c_" .. n), "int64", 0, n .. " counts")
      if x:numel() > 0 then
        check(v:index_select(1, inv), x:reshape(x:numel()), x.dtype, 0, n .. " v[inv]")
      end
      -- without return_index, integers in a narrow range count instead of sorting
      v, inv, c = ml.unique(x, {return_inverse = true, return_counts = true})
      check(v, load("u_v_" .. n), x.dtype, 0, n .. " counted")
      check(inv, load("u_inv_" .. n) + 1, "int64", 0, n .. " counted inverse")
      check(c, load("u_c_" .. n), "int64", 0, n .. " counted counts")
    end
    local x = load("u_x_i711")
    check(x:t():unique(), load("u_v_i711"), "int32", 0, "view")
    local v, c = x:unique({return_counts = true})
    check(c, load("u_c_i711"), "int64", 0, "counts alone")
    assert.equal(v.shape[1], c.shape[1])
  end)

  it("unique counts integers of a narrow range as it sorts a wide one", function()
    ml.seed(7)
    for _, dt in ipairs({"uint8", "int32", "int64"}) do
      local x = ml.randint(dt == "uint8" and 0 or -60, 60, 3001, {dtype = dt, device = DEV})
      -- the same order spread past twice the count: the sorting path
      local wide = x:astype("int64") * 1000003
      local v, inv, c = x:unique({return_inverse = true, return_counts = true})
      local wv, winv, wc = wide:unique({return_inverse = true, return_counts = true})
      check(v:astype("int64") * 1000003, wv, "int64", 0, dt .. " values")
      check(inv, winv, "int64", 0, dt .. " inverse")
      check(c, wc, "int64", 0, dt .. " counts")
      check(v, x:unique({return_index = true}), dt, 0, dt .. " sorted path")
    end
    local big = ml.array({math.maxinteger, 0, math.mininteger, 0}, {dtype = "int64", device = DEV})
    local v, c = big:unique({return_counts = true})
    assert.same({math.mininteger, 0, math.maxinteger}, v:cpu():totable())
    assert.same({1, 2, 1}, c:cpu():totable())
  end)

  it("unique keeps the order of first occurrence when not sorted", function()
    local v, i, inv = ml.unique(ml.array({3, 1, 3, 2, 1}, {device = DEV}),
                                {sorted = false, return_index = true, return_inverse = true})
    assert.same({3, 1, 2}, v:cpu():totable())
    assert.same({1, 2, 4}, i:cpu():totable())
    assert.same({1, 2, 1, 3, 2}, inv:cpu():totable())
  end)

  it("bincount matches NumPy, with weights and minlength", function()
    local x, w = load("b_x"), load("b_w")
    check(x:bincount(), load("b_plain"), "int64", 0, "plain")
    check(ml.bincount(x, {weights = w}), load("b_weights"), "float64", 1e-12, "weights")
    check(ml.bincount(x:astype("int32"), {minlength = 15}), load("b_minlength"), "int64", 0,
          "minlength")
    check(ml.bincount(ml.zeros(0, {dtype = "int64", device = DEV}), {minlength = 2}),
          ml.zeros(2), "int64", 0, "empty")
  end)

  it("histogram matches NumPy's counts and edges", function()
    for _, n in ipairs({"x32", "x64", "xi"}) do
      local x = load("h_" .. n)
      local et = x.dtype == "float32" and "float32" or "float64"
      local c, e = ml.histogram(x)
      check(c, load("h_" .. n .. "_c"), "int64", 0, n)
      check(e, load("h_" .. n .. "_e"), et, 0, n .. " edges")
      c, e = x:histogram({bins = 7, range = {-1.1, 1.7}})
      check(c, load("h_" .. n .. "_rc"), "int64", 0, n .. " range")
      check(e, load("h_" .. n .. "_re"), et, 0, n .. " range edges")
    end
    local x, w = load("h_x64"), load("h_w")
    local c, e = ml.histogram(x, {bins = 13, weights = w})
    check(c, load("h_x64_wc"), "float64", 1e-12, "weights")
    check(e, load("h_x64_we"), "float64", 0, "weights edges")
    c = ml.histogram(load("h_x32"), {bins = 256, density = true})
    check(c, load("h_x32_dc"), "float64", 1e-12, "density")
    local edges = load("h_edges")
    check(ml.histogram(x, {bins = edges}), load("h_x64_ec"), "int64", 0, "edges")
    check(ml.histogram(x:reshape(1009, 1):t(), {bins = edges, weights = w:reshape(1, 1009)}),
          load("h_x64_ewc"), "float64", 1e-12, "edges weights")
  end)

  it("quantile, percentile and median match NumPy along a dim or all", function()
    local q = load("q"):cpu()
    for _, n in ipairs({"f", "n", "i", "s"}) do
      local x = load("q_x_" .. n)
      local mt = n == "s" and "float32" or "float64"
      for _, d in ipairs({{"all", nil}, {"d1", 1}, {"d2", 2}}) do
        local what = n .. " " .. d[1]
        local opts = {dim = d[2]}
        check(x:quantile(q, opts), load("q_" .. n .. "_" .. d[1]), "float64", 1e-12, what)
        check(ml.percentile(x, q * 100, opts), load("p_" .. n .. "_" .. d[1]), "float64",
              1e-12, "percentile " .. what)
        local q03, m = x:quantile(0.3, opts), x:median(opts)
        local wq, wm = load("q_" .. n .. "_" .. d[1] .. "_03"), load("m_" .. n .. "_" .. d[1])
        if d[2] then
          check(q03, wq, "float64", 1e-12, "q=0.3 " .. what)
          check(m, wm, mt, 0, "median " .. what)
        else
          assert.array_near(ml.array({q03}), wq:reshape(1), 1e-12)
          assert.array_near(ml.array({m}), wm:reshape(1), n == "s" and 1e-7 or 0)
        end
      end
    end
    local x = load("q_x_f")
    check(x:t():quantile(q, {dim = 2}), load("q_f_d1"), "float64", 1e-12, "view")
    check(x:quantile(q, {dim = 1, keepdim = true}), load("q_f_d1"):reshape(5, 1, 7),
          "float64", 1e-12, "keepdim")
    check(x:median({dim = 2, keepdim = true}), load("m_f_d2"):reshape(5, 1), "float64", 0,
          "median keepdim")
    check(load("q_x_one"):quantile(q, {dim = 2}), load("q_one"), "float64", 0, "one")
  end)

  it("cumprod matches NumPy along each dim, flattened and on a view", function()
    for _, n in ipairs({"x", "xi"}) do
      local x = load("c_" .. n)
      local dt = n == "x" and "float64" or "int64"
      check(x:cumprod(), load("c_" .. n .. "_all"), dt, 1e-12, n .. " all")
      check(ml.cumprod(x, 1), load("c_" .. n .. "_d1"), dt, 1e-12, n .. " d1")
      check(x:cumprod(2), load("c_" .. n .. "_d2"), dt, 1e-12, n .. " d2")
      check(x:t():cumprod(2), load("c_" .. n .. "_t"), dt, 1e-12, n .. " view")
    end
    local long = ml.full(5000, 1.0001, {device = DEV})
    assert.near(1.0001 ^ 5000, long:cumprod()[5000], 1e-9)
    check(ml.zeros(0, 3, {device = DEV}):cumprod(1), ml.zeros(0, 3), "float64", 0, "empty")
  end)

  it("searchsorted matches NumPy + 1, left, right and with a sorter", function()
    local a, v = load("s_a"), load("s_v")
    check(ml.searchsorted(a, v), load("s_left") + 1, "int64", 0, "left")
    check(a:searchsorted(v:t(), {side = "right"}), (load("s_right") + 1):t(), "int64", 0,
          "right")
    check(ml.searchsorted(load("s_shuffled"), v, {sorter = load("s_sorter") + 1}),
          load("s_left") + 1, "int64", 0, "sorter")
    assert.equal(1, a:searchsorted(-5))
    assert.equal(a:numel() + 1, a:searchsorted(0 / 0, {side = "right"}))
    check(a:searchsorted(ml.zeros(0, {device = DEV})), ml.zeros(0), "int64", 0, "empty")
  end)

  it("argsort accepts stable and descending stays stable", function()
    local x = ml.array({2, 1, 2, 1}, {device = DEV})
    assert.same({1, 3, 2, 4}, x:argsort({descending = true, stable = true}):cpu():totable())
    assert.has_error(function() x:argsort({stable = false}) end,
                     "argsort: stable = false is not offered (every sort is stable)")
  end)

  it("nansum, nanmean, nanmax and nanmin match NumPy", function()
    local x = load("n_x")
    for _, f in ipairs({"nansum", "nanmean", "nanmax", "nanmin"}) do
      local all = x:narrow(1, 1, 3)[f](x:narrow(1, 1, 3))
      assert.array_near(ml.array({all}), load("n_" .. f .. "_all"):reshape(1), 1e-12)
      check(x[f](x, 1), load("n_" .. f .. "_d1"), "float64", 1e-12, f .. " d1")
      check(ml[f](x, 2), load("n_" .. f .. "_d2"), "float64", 1e-12, f .. " d2")
      check(ml[f](x:t(), 1), load("n_" .. f .. "_t"), "float64", 1e-12, f .. " view")
      check(x[f](x, 2, {keepdim = true}), load("n_" .. f .. "_d2"):reshape(4, 1), "float64",
            1e-12, f .. " keepdim")
    end
    local nan = ml.full(3, 0 / 0, {device = DEV})
    assert.equal(0, nan:nansum())
    assert.is_true(nan:nanmax() ~= nan:nanmax())
    assert.is_true(nan:nanmean() ~= nan:nanmean())
    assert.equal(6, ml.array({1, 2, 3}, {dtype = "int32", device = DEV}):nansum())
  end)

  it("raises clear errors", function()
    local x = ml.array({1, 2, 3}, {device = DEV})
    assert.has_error(function() x:quantile(1.5) end, "quantile: q must lie in [0, 1]")
    assert.has_error(function() x:percentile(101) end, "percentile: q must lie in [0, 100]")
    assert.has_error(function() ml.zeros(0):median() end, "median: dimension 1 is empty")
    assert.has_error(function() x:median({dim = 3}) end,
                     "median: dimension 3 out of range for 1 dimensions")
    assert.has_error(function() ml.bincount(ml.array({1, -2}, {dtype = "int64"})) end,
                     "bincount: x holds a negative value (-2)")
    assert.has_error(function() ml.bincount({0.5}) end, "bincount: x must hold integers, not float64")
    assert.has_error(function() x:histogram({bins = 0}) end,
                     "histogram: bins must be a positive integer, not 0")
    assert.has_error(function() x:histogram({bins = {3, 1, 2}}) end,
                     "histogram: bins must increase monotonically")
    assert.has_error(function() x:histogram({range = {2, 1}}) end,
                     "histogram: range {2, 1} has lo > hi")
    -- widths whose arithmetic in the dtype would overflow or vanish
    local f32 = {dtype = "float32", device = DEV}
    assert.has_error(function() ml.array({-3e38, 3e38}, f32):histogram() end,
                     "histogram: the range's width 6e+38 is too wide for float32 (at most 3.40282e+38)")
    assert.has_error(function() x:histogram({range = {-1e308, 1e308}}) end,
                     "histogram: the range's width inf is too wide for float64 (at most 1.79769e+308)")
    assert.has_error(function() ml.array({0}, f32):histogram({range = {0, 1e-46}}) end,
                     "histogram: the range's width 1e-46 is too narrow for float32")
    assert.has_error(function() ml.searchsorted(ml.zeros(2, 2), 1) end,
                     "searchsorted: a must be 1-D, not 2x2")
    assert.has_error(function() x:searchsorted(1, {side = "middle"}) end,
                     'searchsorted: side must be "left" or "right", not "middle"')
    assert.has_error(function() x:unique({return_count = true}) end,
                     "unique: unknown option 'return_count' (did you mean 'return_counts'?)")
  end)
end)
