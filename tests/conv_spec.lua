-- ml.conv2d and ml.conv1d (PyTorch's semantics) on the default device
-- (MOONLAB_DEVICE=cuda runs them on a GPU): against the fixtures of
-- tests/fixtures/conv/make.py (NumPy loops checked by SciPy's correlate)
-- for stride, padding, dilation, groups and bias; against a direct loop
-- written here in plain Lua on small random cases; against a sum of one
-- matrix product per kernel tap on larger ones (chunked windows, threads);
-- awkward sizes and views; then every error.
local ml = require "moonlab"
require "moonlab.test"

local DEV = ml.device()
local DIR = "tests/fixtures/conv/"

-- Absolute tolerance a multiply-add of the sums (k of them an output) and
-- a unit of their size (about sqrt(k) for inputs of size 1): float32
-- results against float64 references (cuDNN's Winograd and FFT
-- algorithms round more than a plain sum).
local EPS = {float32 = 2e-6, float64 = 1e-14}
local function tol(dt, k) return {rtol = 0, atol = EPS[dt] * (k + 8) ^ 1.5} end

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local seed = 500
local function randn(shape, dt)
  seed = seed + 1
  ml.seed(seed)
  return ml.randn(shape, {dtype = dt or "float64", device = "cpu"})
end

-- The fixture cases' options, as make.py's CASES, in the API's forms.
local CASES = {
  basic = {},
  stride = {stride = {2, 3}},
  pad = {padding = {1, 2}},
  dil = {dilation = {2, 3}, padding = 2},
  groups = {groups = 3, stride = 2, padding = {1, 1}, bias = true},
  depthwise = {groups = 5, padding = 2, bias = true},
  same_odd = {padding = "same", dilation = {1, 2}},
  same_even = {padding = "same", dilation = {1, 3}},
  valid = {padding = "valid"},
  all = {stride = {2, 1}, padding = {3, 0}, dilation = 2, groups = 2, bias = true},
  k1 = {bias = true},
  k1_stride = {stride = 2, padding = 1},
  whole = {bias = true},
  prime = {stride = 3, padding = {2, 1}},
  wide = {padding = 1},
  c1_basic = {},
  c1_all = {stride = {2}, padding = 3, dilation = {2}, groups = 2, bias = true},
  c1_same_even = {padding = "same"},
  c1_depthwise = {groups = 4, padding = "valid", bias = true},
}

-- The shape, padding (before, after) and output size of conv2d along one
-- dimension, PyTorch's rules.
local function padding_of(o, i, k, d)
  local p = o.padding or 0
  if p == "valid" then return 0, 0 end
  if p == "same" then
    local t = d * (k - 1)
    return t // 2, t - t // 2
  end
  p = type(p) == "table" and p[i] or p
  return p, p
end

local function pair(v, i, dflt)
  if v == nil then return dflt end
  return type(v) == "table" and v[i] or v
end

-- conv2d by a plain loop over nested tables (x, w CPU arrays, 4-D; o as
-- the API's options, bias an array or nil): a nested table of y.
local function direct(x, w, o)
  local xt, wt = x:totable(), w:totable()
  local bt = o.bias and o.bias:cpu():totable()
  local n, c, h, wd = table.unpack(x.shape)
  local oc, cg, kh, kw = table.unpack(w.shape)
  local s0, s1 = pair(o.stride, 1, 1), pair(o.stride, 2, 1)
  local d0, d1 = pair(o.dilation, 1, 1), pair(o.dilation, 2, 1)
  local t = padding_of(o, 1, kh, d0)
  local l = padding_of(o, 2, kw, d1)
  local _, b = padding_of(o, 1, kh, d0)
  local _, r = padding_of(o, 2, kw, d1)
  local oh = (h + t + b - d0 * (kh - 1) - 1) // s0 + 1
  local ow = (wd + l + r - d1 * (kw - 1) - 1) // s1 + 1
  local og = oc // (o.groups or 1)
  local y = {}
  for i = 1, n do
    y[i] = {}
    for q = 1, oc do
      local g = (q - 1) // og
      y[i][q] = {}
      for p = 1, oh do
        y[i][q][p] = {}
        for rr = 1, ow do
          local sum = bt and bt[q] or 0
          for j = 1, cg do
            local plane = xt[i][g * cg + j]
            for a = 1, kh do
              local ih = (p - 1) * s0 - t + (a - 1) * d0 + 1
              if ih >= 1 and ih <= h then
                for bb = 1, kw do
                  local iw = (rr - 1) * s1 - l + (bb - 1) * d1 + 1
                  if iw >= 1 and iw <= wd then
                    sum = sum + wt[q][j][a][bb] * plane[ih][iw]
                  end
                end
              end
            end
          end
          y[i][q][p][rr] = sum
        end
      end
    end
  end
  return y
end

-- conv2d as one matrix product a kernel tap: the view of the padded input
-- that tap (a, b) reads, N x C' x OH x OW, times w[:, :, a, b], summed;
-- float64 on the CPU, for cases too large for the loop.
local function by_taps(x, w, o)
  x, w = x:cpu():astype("float64"), w:cpu():astype("float64")
  local n, c, h, wd = table.unpack(x.shape)
  local oc, cg, kh, kw = table.unpack(w.shape)
  local s0, s1 = pair(o.stride, 1, 1), pair(o.stride, 2, 1)
  local d0, d1 = pair(o.dilation, 1, 1), pair(o.dilation, 2, 1)
  local t, b = padding_of(o, 1, kh, d0)
  local l, r = padding_of(o, 2, kw, d1)
  local xp = ml.zeros(n, c, h + t + b, wd + l + r, {device = "cpu"})
  xp[{{}, {}, {t + 1, t + h}, {l + 1, l + wd}}] = x
  local oh = (h + t + b - d0 * (kh - 1) - 1) // s0 + 1
  local ow = (wd + l + r - d1 * (kw - 1) - 1) // s1 + 1
  local groups = o.groups or 1
  local og = oc // groups
  local y = ml.zeros(n, oc, oh * ow, {device = "cpu"})
  for g = 1, groups do
    local chans, outs = {(g - 1) * cg + 1, g * cg}, {(g - 1) * og + 1, g * og}
    for a = 1, kh do
      for bb = 1, kw do
        local r0, c0 = (a - 1) * d0 + 1, (bb - 1) * d1 + 1
        local v = xp[{{}, chans, {r0, r0 + (oh - 1) * s0, s0},
                      {c0, c0 + (ow - 1) * s1, s1}}]
        local tap = w[{outs, {}, {a}, {bb}}]:reshape(og, cg)
        y[{{}, outs, {}}] = y[{{}, outs, {}}]
                            + ml.matmul(tap, v:contiguous():reshape(n, cg, oh * ow))
      end
    end
  end
  if o.bias then y = y + o.bias:cpu():astype("float64"):reshape(1, oc, 1) end
  return y:reshape(n, oc, oh, ow)
end

-- o with the bias moved to dev (and dtype dt).
local function on(o, dev, dt)
  local r = {}
  for k, v in pairs(o) do r[k] = v end
  if o.bias then r.bias = o.bias:astype(dt):to(dev) end
  return r
end

describe("conv2d and conv1d", function()
  it("match the NumPy fixtures: stride, padding, dilation, groups, bias", function()
    for case, opts in pairs(CASES) do
      local function load(name) return ml.load_npy(DIR .. case .. "_" .. name .. ".npy") end
      local x, w, y = load("x"), load("w"), load("y")
      local conv = x:dim() == 3 and ml.conv1d or ml.conv2d
      for _, dt in ipairs({"float64", "float32"}) do
        local o = {}
        for k, v in pairs(opts) do o[k] = v end
        if opts.bias then o.bias = load("b"):astype(dt):to(DEV) end
        local got = conv(x:astype(dt):to(DEV), w:astype(dt):to(DEV), o)
        assert.equal(dt, got.dtype, case)
        assert.equal(DEV, got.device, case)
        local k = w:numel() // w:size(1)
        assert.allclose(got, y, tol(dt, k))
      end
    end
  end)

  it("match a plain loop on small random cases, views included", function()
    local cases = {
      {{2, 4, 7, 6}, {4, 4, 3, 3}, {}},
      {{1, 3, 5, 8}, {2, 3, 2, 3}, {stride = {1, 2}, padding = {0, 1}}},
      {{3, 6, 9, 7}, {6, 2, 3, 2}, {groups = 3, dilation = {2, 1}, padding = 1}},
      {{2, 2, 6, 6}, {3, 2, 4, 4}, {padding = "same", dilation = 2}},
      {{2, 3, 5, 7}, {5, 3, 2, 2}, {padding = "same"}},
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {}},
      {{2, 5, 4, 4}, {5, 1, 4, 4}, {groups = 5}},
      {{2, 3, 13, 11}, {4, 3, 5, 3}, {stride = {3, 2}, padding = {2, 0},
                                      dilation = {1, 3}}},
    }
    for i, c in ipairs(cases) do
      for _, dt in ipairs({"float64", "float32"}) do
        local x, w = randn(c[1], dt), randn(c[2], dt)
        local o = on(c[3], DEV, dt)
        o.bias = i % 2 == 0 and randn({c[2][1]}, dt):to(DEV) or nil
        local want = direct(x, w, o)
        local k = c[2][2] * c[2][3] * c[2][4]
        assert.allclose(ml.conv2d(x:to(DEV), w:to(DEV), o), want, tol(dt, k))
        -- the same through views: x's channels and w's filters transposed
        local xv = x:permute({1, 3, 2, 4}):contiguous():to(DEV):permute({1, 3, 2, 4})
        local wv = w:transpose(1, 2):contiguous():to(DEV):transpose(1, 2)
        assert.is_true(c[1][2] == 1 or not xv:is_contiguous())
        assert.allclose(ml.conv2d(xv, wv, o), want, tol(dt, k))
      end
    end
  end)

  it("take strided views of x and one image without its batch", function()
    local x, w = randn({3, 4, 20, 18}), randn({6, 4, 3, 3})
    local o = {stride = 2, padding = 1, bias = randn({6}):to(DEV)}
    local xs = x:to(DEV)[{{1, 3, 2}, {}, {2, 19, 3}, {1, -1, 2}}]
    local want = direct(xs:cpu(), w, o)
    assert.allclose(ml.conv2d(xs, w:to(DEV), o), want, tol("float64", 36))
    local one = ml.conv2d(x:to(DEV)[2], w:to(DEV), o)
    assert.same({6, 10, 9}, one.shape)
    assert.allclose(one, ml.conv2d(x:to(DEV), w:to(DEV), o)[2], {rtol = 0, atol = 0})
  end)

  it("conv1d is conv2d with a height of 1; one signal without its batch", function()
    local x, w = randn({3, 4, 29}), randn({6, 2, 5})
    local b = randn({6}):to(DEV)
    local o1 = {stride = 2, padding = {3}, dilation = 2, groups = 2, bias = b}
    local o2 = {stride = {1, 2}, padding = {0, 3}, dilation = {1, 2}, groups = 2, bias = b}
    local y1 = ml.conv1d(x:to(DEV), w:to(DEV), o1)
    local y2 = ml.conv2d(x:to(DEV):reshape(3, 4, 1, 29), w:to(DEV):reshape(6, 2, 1, 5), o2)
    assert.same({3, 6, 14}, y1.shape)
    assert.allclose(y1, y2:reshape(3, 6, 14), {rtol = 0, atol = 0})
    local s = ml.conv1d(x:to(DEV)[3], w:to(DEV), o1)
    assert.same({6, 14}, s.shape)
    assert.allclose(s, y1[3], {rtol = 0, atol = 0})
    local same = ml.conv1d(x:to(DEV), randn({2, 4, 6}):to(DEV), {padding = "same", dilation = 3})
    assert.same({3, 2, 29}, same.shape)
  end)

  it("match the product per tap on larger cases (chunked windows, threads)", function()
    local cases = {
      {{1, 64, 64, 64}, {4, 64, 3, 3}, {padding = 1}},
      {{16, 8, 10, 10}, {8, 4, 3, 3}, {groups = 2, padding = 1}},
      {{2, 16, 37, 41}, {16, 16, 3, 3}, {stride = 2, dilation = 2, padding = 3}},
      {{4, 32, 23, 19}, {32, 1, 3, 3}, {groups = 32, padding = "same"}},
      {{2, 96, 12, 12}, {24, 96, 1, 1}, {}},
    }
    for _, c in ipairs(cases) do
      for _, dt in ipairs({"float64", "float32"}) do
        local x, w = randn(c[1], dt), randn(c[2], dt)
        local o = on(c[3], DEV, dt)
        o.bias = randn({c[2][1]}, dt):to(DEV)
        local k = c[2][2] * c[2][3] * c[2][4]
        assert.allclose(ml.conv2d(x:to(DEV), w:to(DEV), o), by_taps(x, w, o), tol(dt, k))
      end
    end
  end)

  it("give an empty result for an empty batch; keep tf32 off the CPU's result", function()
    local y = ml.conv2d(ml.zeros(0, 3, 5, 5, {device = DEV}), ml.ones(4, 3, 3, 3, {device = DEV}),
                        {padding = 1})
    assert.same({0, 4, 5, 5}, y.shape)
    assert.same({0, 4, 3}, ml.conv1d(ml.zeros(0, 3, 5, {device = DEV}),
                                     ml.ones(4, 3, 3, {device = DEV})).shape)
    local x, w = randn({2, 3, 9, 9}, "float32"), randn({4, 3, 3, 3}, "float32")
    local tf = ml.conv2d(x:to(DEV), w:to(DEV), {tf32 = true})
    assert.equal("float32", tf.dtype)
    if DEV == "cpu" then
      assert.allclose(tf, ml.conv2d(x, w), {rtol = 0, atol = 0})
    else
      -- TF32 keeps 10 bits of each input's mantissa
      assert.allclose(tf, direct(x, w, {}), {rtol = 0, atol = 27 * 2e-3})
    end
  end)

  it("name the function and the shapes in every error", function()
    local function arr(...) return ml.ones({...}, {device = DEV}) end
    local x, w = arr(2, 3, 5, 5), arr(4, 3, 3, 3)
    local cases = {
      {function() ml.conv2d(arr(3, 5), w) end,
       "conv2d: x must be N x C x H x W or C x H x W, got shape 3x5"},
      {function() ml.conv1d(arr(1, 2, 3, 4), arr(1, 2, 3)) end,
       "conv1d: x must be N x C x L or C x L, got shape 1x2x3x4"},
      {function() ml.conv2d(x, arr(4, 3, 3)) end,
       "conv2d: w must be O x C/groups x kH x kW, got shape 4x3x3"},
      {function() ml.conv2d(x:astype("int64"), w) end,
       "conv2d: x has dtype int64; conv2d takes float32 or float64"},
      {function() ml.conv2d(x, w:astype("float32")) end,
       "conv2d: x is float64 but w is float32 (x, w and bias must have one dtype)"},
      {function() ml.conv2d(x, w, {bias = ml.ones(4, {dtype = "float32", device = DEV})}) end,
       "conv2d: x is float64 but bias is float32 (x, w and bias must have one dtype)"},
      {function() ml.conv2d(x, arr(4, 2, 3, 3)) end,
       "conv2d: x 2x3x5x5 has 3 channels but w 4x2x3x3 with groups = 1 takes 2"},
      {function() ml.conv2d(arr(2, 6, 5, 5), arr(4, 3, 3, 3), {groups = 3}) end,
       "conv2d: groups = 3 does not divide the 4 output channels of w 4x3x3x3"},
      {function() ml.conv2d(arr(2, 6, 5, 5), arr(6, 3, 3, 3), {groups = 3}) end,
       "conv2d: x 2x6x5x5 has 6 channels but w 6x3x3x3 with groups = 3 takes 9"},
      {function() ml.conv2d(x, w, {bias = arr(3)}) end,
       "conv2d: bias must be a vector of the 4 output channels of w 4x3x3x3, got shape 3"},
      {function() ml.conv2d(x, w, {bias = arr(4, 1)}) end,
       "conv2d: bias must be a vector of the 4 output channels of w 4x3x3x3, got shape 4x1"},
      {function() ml.conv2d(arr(2, 3, 0, 5), w) end,
       "conv2d: x 2x3x0x5 is empty (only its batch may be)"},
      {function() ml.conv2d(arr(2, 0, 5, 5), arr(4, 0, 3, 3)) end,
       "conv2d: x 2x0x5x5 is empty (only its batch may be)"},
      {function() ml.conv2d(x, arr(0, 3, 3, 3)) end, "conv2d: w 0x3x3x3 is empty"},
      {function() ml.conv2d(x, arr(4, 3, 6, 3)) end,
       "conv2d: the padded input (5x5) is smaller than the dilated kernel (6x3): "
       .. "x 2x3x5x5, w 4x3x6x3"},
      {function() ml.conv2d(x, w, {dilation = {1, 4}, padding = {0, 1}}) end,
       "conv2d: the padded input (5x7) is smaller than the dilated kernel (3x9): "
       .. "x 2x3x5x5, w 4x3x3x3"},
      {function() ml.conv1d(arr(2, 3, 4), arr(1, 3, 5)) end,
       "conv1d: the padded input (4) is smaller than the dilated kernel (5): x 2x3x4, w 1x3x5"},
      {function() ml.conv2d(x, w, {stride = 0}) end,
       "conv2d: stride must be at least 1 (and below 2^31), got 0x0"},
      {function() ml.conv2d(x, w, {dilation = {1, -2}}) end,
       "conv2d: dilation must be at least 1 (and below 2^31), got 1x-2"},
      {function() ml.conv2d(x, w, {padding = -1}) end,
       "conv2d: padding must be at least 0 (and below 2^31), got -1x-1"},
      {function() ml.conv2d(x, w, {stride = 2^31}) end,
       "conv2d: stride must be at least 1 (and below 2^31), got 2147483648x2147483648"},
      {function() ml.conv2d(x, w, {groups = 0}) end,
       "conv2d: groups must be at least 1 (and below 2^31), got 0"},
      {function() ml.conv2d(x, w, {padding = "same", stride = {1, 2}}) end,
       "conv2d: padding \"same\" needs stride 1 (as PyTorch's), got stride 1x2"},
      {function() ml.conv2d(x, w, {padding = "full"}) end,
       "conv2d: padding must be \"valid\", \"same\" or sizes, not \"full\""},
      {function() ml.conv2d(x, w, {stride = {1, 2, 3}}) end,
       "conv2d: stride must be an integer or a table of 2 integers, got a table of 3"},
      {function() ml.conv1d(arr(2, 3, 5), arr(1, 3, 2), {padding = {1, 1}}) end,
       "conv1d: padding must be an integer or a table of 1 integer, got a table of 2"},
      {function() ml.conv2d(x, w, {dilation = {1, 1.5}}) end,
       "conv2d: dilation must hold integers, got 1.5"},
      {function() ml.conv2d(x, w, {strides = 1}) end,
       "conv2d: unknown option 'strides' (did you mean 'stride'?)"},
      {function() ml.conv2d(x, w, {bias = {1, 2, 3, 4}}) end,
       "conv2d: option 'bias' must be an array, not table"},
      {function() ml.conv2d(x, w, {}, 1) end,
       "conv2d: expected (x, w [, opts]), got 4 arguments"},
    }
    for _, c in ipairs(cases) do assert.equal(c[2], errmsg(c[1])) end
  end)
end)
