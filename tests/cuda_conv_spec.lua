-- ml.conv2d and ml.conv1d on the CUDA backend (cuDNN) against the CPU
-- backend (im2col and OpenBLAS), on random inputs of awkward sizes (1,
-- odd, prime, kernel = input, 1 x 1 kernels, depthwise groups, the
-- benchmark's layer) and views; full FP32 unless tf32 is asked for; the
-- same errors on both devices and the error for mixed devices. The
-- helpers are in tests/helpers/cuda.lua. Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda conv", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local GPU, same, same_error, floats, input = H.GPU, H.same, H.same_error, H.floats, H.input

-- Elementwise tolerance: per multiply-add of the sums (k of them an
-- output), times the size of the results; cuDNN's Winograd and FFT
-- algorithms round more than a plain sum, never by more than this.
local EPS = {float32 = 2e-6, float64 = 1e-14}

local function agree(g, c, what, k)
  same(g, c, what, 0, EPS[c.dtype] * (k + 8) * math.max(1, c:abs():max()))
end

-- x, w shapes and options; bias added to every other case.
local CASES = {
  {{1, 1, 1, 1}, {1, 1, 1, 1}, {}},
  {{2, 3, 7, 9}, {4, 3, 3, 3}, {}},
  {{3, 5, 13, 11}, {7, 5, 3, 2}, {stride = {2, 3}, padding = {1, 2}}},
  {{2, 6, 17, 19}, {9, 2, 3, 3}, {groups = 3, dilation = 2, padding = 2}},
  {{5, 8, 31, 29}, {8, 1, 5, 5}, {groups = 8, padding = "same"}},
  {{2, 3, 6, 7}, {4, 3, 4, 2}, {padding = "same", dilation = {1, 3}}},
  {{4, 16, 23, 23}, {32, 16, 1, 1}, {}},
  {{3, 7, 10, 10}, {5, 7, 1, 1}, {stride = 2, padding = 1}},
  {{2, 4, 5, 5}, {6, 4, 5, 5}, {}},
  {{1, 37, 17, 13}, {11, 37, 7, 5}, {stride = 3, padding = {2, 1}}},
  {{8, 64, 28, 28}, {64, 64, 3, 3}, {padding = 1}},
  {{2, 12, 9, 40}, {12, 4, 3, 3}, {groups = 3, stride = {1, 2}, padding = "valid"}},
}

local function with_bias(o, b)
  local r = {}
  for k, v in pairs(o) do r[k] = v end
  r.bias = b
  return r
end

describe("cuda conv", function()
  it("conv2d: the same values as the CPU, float32 and float64, bias and not", function()
    for i, c in ipairs(CASES) do
      for _, dt in ipairs(floats) do
        local x, w = input(c[1], dt), input(c[2], dt)
        local b = i % 2 == 0 and input({c[2][1]}, dt) or nil
        local k = c[2][2] * c[2][3] * c[2][4]
        local what = ("conv2d %s x %s w %s case %d"):format(
          dt, table.concat(c[1], "x"), table.concat(c[2], "x"), i)
        local want = ml.conv2d(x, w, with_bias(c[3], b))
        agree(ml.conv2d(x:cuda(), w:cuda(), with_bias(c[3], b and b:cuda())), want, what, k)
        -- again: the cached plan
        agree(ml.conv2d(x:cuda(), w:cuda(), with_bias(c[3], b and b:cuda())), want,
              what .. " (cached)", k)
      end
    end
  end)

  it("conv2d: views, one image, an empty batch", function()
    for _, dt in ipairs(floats) do
      local x, w = input({4, 6, 21, 18}, dt), input({6, 3, 3, 3}, dt)
      local o = {groups = 2, padding = 1, stride = {2, 1}}
      local xg = x:cuda()
      local views = {
        {xg:permute({1, 3, 2, 4}):contiguous():permute({1, 3, 2, 4}),
         x:permute({1, 3, 2, 4}):contiguous():permute({1, 3, 2, 4})},
        {xg[{{1, 4, 3}, {}, {2, 20, 2}, {1, -1, 3}}], x[{{1, 4, 3}, {}, {2, 20, 2}, {1, -1, 3}}]},
        {xg[3], x[3]},
        {xg[{{2, 4}}], x[{{2, 4}}]},
      }
      for i, v in ipairs(views) do
        agree(ml.conv2d(v[1], w:cuda(), o), ml.conv2d(v[2], w, o), "view " .. i .. " " .. dt, 27)
      end
      local wt = w:transpose(1, 2):contiguous():transpose(1, 2)
      agree(ml.conv2d(xg, wt:cuda(), o), ml.conv2d(x, w, o), "w view " .. dt, 27)
      local e = ml.conv2d(xg[{{1, 0}}], w:cuda(), o)
      assert.same({0, 6, 11, 18}, e.shape)
      assert.equal(GPU, e.device)
    end
  end)

  it("conv1d: the same values as the CPU", function()
    local cases = {
      {{2, 3, 17}, {4, 3, 5}, {}},
      {{3, 4, 31}, {6, 2, 3}, {stride = 2, padding = 3, dilation = 2, groups = 2}},
      {{2, 3, 10}, {2, 3, 4}, {padding = "same"}},
      {{5, 4, 1}, {4, 1, 1}, {groups = 4}},
      {{3, 8}, {5, 3, 3}, {padding = 1}},
    }
    for _, dt in ipairs(floats) do
      for i, c in ipairs(cases) do
        local x, w, b = input(c[1], dt), input(c[2], dt), input({c[2][1]}, dt)
        local k = c[2][2] * c[2][3]
        agree(ml.conv1d(x:cuda(), w:cuda(), with_bias(c[3], b:cuda())),
              ml.conv1d(x, w, with_bias(c[3], b)), ("conv1d %s case %d"):format(dt, i), k)
      end
    end
  end)

  it("float32 is full FP32 unless tf32 is set", function()
    local x, w = input({8, 64, 20, 20}, "float32"), input({32, 64, 3, 3}, "float32")
    local exact = ml.conv2d(x:astype("float64"), w:astype("float64"), {padding = 1})
    local scale = exact:abs():max()
    local fp32 = ml.conv2d(x:cuda(), w:cuda(), {padding = 1})
    local err = (fp32:cpu():astype("float64") - exact):abs():max() / scale
    -- FP32 sums (Winograd's included) err by some 1e-6 of the largest
    -- output here, TF32's by some 1e-4
    assert.is_true(err < 3e-5, "float32 error " .. err .. " of the largest output")
    local tf = ml.conv2d(x:cuda(), w:cuda(), {padding = 1, tf32 = true})
    local terr = (tf:cpu():astype("float64") - exact):abs():max() / scale
    assert.is_true(terr < 1e-2, "TF32 error " .. terr .. " of the largest output")
  end)

  it("the same errors on both devices; mixed devices named", function()
    local x, w = input({2, 3, 5, 5}, "float32"), input({4, 3, 3, 3}, "float32")
    local cases = {
      {x, input({4, 2, 3, 3}, "float32"), {}},
      {x, w, {groups = 2}},
      {x, input({4, 3, 6, 6}, "float32"), {}},
      {x, w, {padding = "same", stride = 2}},
      {x, w, {bias = input({3}, "float32")}},
      {x:astype("int32"), w, {}},
      {x, w:astype("float64"), {}},
    }
    for i, c in ipairs(cases) do
      local og = with_bias(c[3], c[3].bias and c[3].bias:cuda())
      same_error(function() return ml.conv2d(c[1]:cuda(), c[2]:cuda(), og) end,
                 function() return ml.conv2d(c[1], c[2], c[3]) end, "error case " .. i)
    end
    local function msg(fn)
      local ok, err = pcall(fn)
      assert.is_false(ok)
      return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
    end
    assert.equal("conv2d: arrays on different devices (cuda:0 and cpu); move one with :to()",
                 msg(function() return ml.conv2d(x:cuda(), w) end))
    assert.equal("conv2d: arrays on different devices (cuda:0 and cpu); move one with :to()",
                 msg(function() return ml.conv2d(x:cuda(), w:cuda(), {bias = input({4}, "float32")}) end))
    assert.equal("conv1d: arrays on different devices (cpu and cuda:0); move one with :to()",
                 msg(function() return ml.conv1d(x[1], w[{{}, {}, 1}]:cuda()) end))
  end)
end)
