-- The logic functions, isclose, allclose, array_equal, clip, relu, sign
-- and erf on the GPU against the CPU: awkward sizes (1, odd, prime,
-- empty), broadcasting, transposed views, every dtype, NaN and
-- infinities. Comparisons and selections are exact; erf is CUDA's
-- against libm's, within a few ulps. Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda logic", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, pair, shape_name = H.same, H.pair, H.shape_name

-- x with NaN, infinities and zeros planted (floats), on the CPU.
local function special(c)
  if not H.is_float(c.dtype) or c:numel() < 4 then return c end
  local flat = c:clone():reshape(-1)
  flat[{1}] = 0 / 0
  flat[{2}] = math.huge
  flat[{3}] = -math.huge
  flat[{4}] = 0
  return flat:reshape(c.shape)
end

local function pair_special(shape, dt)
  local c = special(pair(shape, dt))
  return c, c:cuda()
end

describe("cuda logic", function()
  it("agrees with the CPU on awkward shapes and every dtype", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs(H.shapes) do
        local what = dt .. " " .. shape_name(s)
        local ca, ga = pair_special(s, dt)
        local cb = ca + (H.is_float(dt) and 1e-6 or 1)
        local gb = cb:cuda()
        for _, fn in ipairs({"logical_and", "logical_or", "logical_xor", "isclose"}) do
          same(ml[fn](ga, gb), ml[fn](ca, cb), fn .. " " .. what)
        end
        same(ml.isclose(ga, gb, {rtol = 0, atol = 1e-6, equal_nan = true}),
             ml.isclose(ca, cb, {rtol = 0, atol = 1e-6, equal_nan = true}), "isclose opts " .. what)
        assert.equal(ml.allclose(ca, cb), ml.allclose(ga, gb), "allclose " .. what)
        assert.equal(ml.array_equal(ca, ca, {equal_nan = true}),
                     ml.array_equal(ga, ga, {equal_nan = true}), "array_equal " .. what)
        for _, fn in ipairs({"sign", "relu"}) do
          same(ml[fn](ga), ml[fn](ca), fn .. " " .. what)
        end
        same(ml.clip(ga, -1, 2), ml.clip(ca, -1, 2), "clip " .. what)
        local tol = dt == "float32" and 1e-6 or 1e-15
        same(ml.erf(ga), ml.erf(ca), "erf " .. what, tol, 1e-300)
      end
    end
  end)

  it("agrees on broadcasting and transposed views", function()
    for _, dt in ipairs(H.floats) do
      local ca, ga = pair_special({7, 31}, dt)
      local cr, gr = pair({31}, dt)
      local ct, gt = ca:t(), ga:t()
      for _, fn in ipairs({"logical_and", "logical_xor", "isclose"}) do
        same(ml[fn](ga, gr), ml[fn](ca, cr), fn .. " row " .. dt)
        same(ml[fn](gt, gt:contiguous()), ml[fn](ct, ct:contiguous()), fn .. " view " .. dt)
      end
      same(ml.clip(ga, gr, 1), ml.clip(ca, cr, 1), "clip row " .. dt)
      same(gt:sign(), ct:sign(), "sign view " .. dt)
      same(gt:erf(), ct:erf(), "erf view " .. dt, dt == "float32" and 1e-6 or 1e-15, 1e-300)
    end
  end)
end)
