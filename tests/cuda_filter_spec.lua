-- The filters on the GPU against the CPU (kernels/filter.cu and
-- filter_fft.cu against src/cpu/cpu_filter.c), on random inputs of
-- awkward sizes that reach every path: one-row and two-dimensional tiles,
-- interior and border tiles, masks of 1, 3, 5 and 8-tap chunks, masks too
-- large for the tiles (corr_direct) and for the direct path (cuFFT), the
-- segments of long rows (filter_line.cu), the separable strips
-- (filter_strip.cu), the fused separable kernel and its two-pass fallback,
-- moving sums through tiles and through runs; every mode, both float
-- dtypes, views and empty inputs. Tolerances follow core/filter_backend.h:
-- float32 sums in float32 on the GPU, FFTs err norm-wise. Pending where
-- there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda filter", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

require "moonlab.test"
local H = require "tests.helpers.cuda"
local GPU, same_error, floats, input, shape_name = H.GPU, H.same_error, H.floats, H.input,
  H.shape_name

local MODES = {"reflect", "constant", "nearest", "mirror", "wrap"}
local U = {float32 = 2^-24, float64 = 2^-53}

-- g (GPU) against c (CPU): device, shape, dtype, then every element
-- within atol.
local function agree(g, c, what, atol)
  assert.equal(GPU, g.device, what .. ": device")
  assert.same(c.shape, g.shape, what .. ": shape")
  assert.equal(c.dtype, g.dtype, what .. ": dtype")
  if c:numel() == 0 then return end
  local err = (g:cpu() - c):abs():max()
  if not (err <= atol) then
    error(("%s: the GPU differs from the CPU by %g (tolerance %g)"):format(what, err, atol), 2)
  end
end

-- The direct sums' bound for k taps over samples of at most |x| max,
-- weights summing to |w| sw in absolute value.
local function bound(dt, k, xmax, sw)
  return 2 * (k + 2) * U[dt] * xmax * sw + 1e-300
end

local function absmax(x) return x:numel() > 0 and x:abs():max() or 0 end

describe("cuda filter: correlate", function()
  it("ndimage.correlate and convolve: tiles, chunks and modes", function()
    local cases = {
      {{1}, {1}}, {{7}, {3}}, {{31}, {8}}, {{257}, {5}}, {{4099}, {31}}, {{100003}, {15}},
      {{1, 1}, {3, 3}}, {{7, 31}, {2, 7}}, {{33, 130}, {5, 5}}, {{65, 257}, {15, 15}},
      {{3, 1000}, {3, 2}}, {{40, 9}, {9, 1}}, {{130, 70}, {1, 9}}, {{17, 11}, {20, 25}},
      {{2, 3, 17}, {3, 3, 3}}, {{5, 33, 40}, {2, 1, 5}}, {{3, 20, 140}, {1, 4, 8}},
      -- corr_fixed's masks: squares on 2-D tiles, rows on 2-D and one-row tiles
      {{17, 33}, {3, 3}}, {{70, 300}, {7, 7}}, {{40, 515}, {9, 9}}, {{3, 20, 140}, {1, 5, 5}},
      {{300, 21}, {1, 15}}, {{5, 5000}, {1, 33}}, {{2, 3, 700}, {1, 1, 31}}, {{9}, {33}},
    }
    for _, dt in ipairs(floats) do
      for _, case in ipairs(cases) do
        local x, w = input(case[1], dt), input(case[2], "float64", -1, 1)
        local xg, wg = x:cuda(), w:cuda()
        local tol = bound(dt, w:numel(), absmax(x) + 0.5, w:abs():sum())
        for _, fn in ipairs({"correlate", "convolve"}) do
          for _, mode in ipairs(MODES) do
            local o = {}
            for d = 1, w:dim() do o[d] = (w:size(d) - 1) // 2 end
            local opts = {mode = mode, cval = 0.5, origin = o}
            agree(ml.ndimage[fn](xg, wg, opts), ml.ndimage[fn](x, w, opts),
                  ("ndimage.%s %s %s mask %s %s"):format(fn, dt, shape_name(case[1]),
                                                       shape_name(case[2]), mode), tol)
          end
        end
      end
    end
  end)

  it("filter_reg's masks: rows of a multiple of 4, every window offset", function()
    local cases = {
      {{70, 260}, {5, 5}}, {{64, 516}, {3, 3}}, {{37, 1028}, {9, 9}}, {{9, 20, 12}, {1, 7, 7}},
      {{129, 68}, {33, 1}}, {{200, 36}, {15, 1}}, {{3, 4100}, {1, 5}}, {{4, 8}, {1, 7}},
      {{1, 20}, {1, 31}}, {{4100}, {31}}, {{12}, {33}}, {{300, 8}, {1, 9}},
    }
    for _, case in ipairs(cases) do
      local x, w = input(case[1], "float32"), input(case[2], "float64", -1, 1)
      local xg, wg = x:cuda(), w:cuda()
      local tol = bound("float32", w:numel(), absmax(x) + 0.5, w:abs():sum())
      for shift = -1, 2 do
        local o = {}
        for d = 1, w:dim() do
          o[d] = math.max(-(w:size(d) // 2), math.min((w:size(d) - 1) // 2, shift))
        end
        for _, mode in ipairs(MODES) do
          local opts = {mode = mode, cval = 0.5, origin = o}
          agree(ml.ndimage.correlate(xg, wg, opts), ml.ndimage.correlate(x, w, opts),
                ("ndimage.correlate %s mask %s %s origin %d"):format(shape_name(case[1]),
                                                                    shape_name(case[2]), mode,
                                                                    shift), tol)
        end
      end
    end
  end)

  it("filter_line's segments: long rows, odd lengths, misaligned rows and views", function()
    -- lengths around a segment (4096) and its window, rows of odd lengths
    -- (each row's window offset differs), more segments than the blocks
    -- (double-buffered), a view one sample in and a stepped view
    local cases = {{{1}, 31}, {{2}, 3}, {{5}, 33}, {{4095}, 31}, {{4096}, 15}, {{4097}, 33},
                   {{8195}, 7}, {{3, 4099}, 31}, {{15, 1001}, 33}, {{2, 3, 5000}, 5},
                   {{3, 700001}, 33}}
    for _, case in ipairs(cases) do
      local x, w = input(case[1], "float32"), input({case[2]}, "float64", -1, 1)
      local xg, wg = x:cuda(), w:cuda()
      local tol = bound("float32", case[2], absmax(x) + 0.5, w:abs():sum())
      for _, shift in ipairs({0, -(case[2] // 2), (case[2] - 1) // 2}) do
        for _, mode in ipairs(MODES) do
          local opts = {mode = mode, cval = 0.5, origin = shift}
          agree(ml.ndimage.convolve1d(xg, wg, opts), ml.ndimage.convolve1d(x, w, opts),
                ("convolve1d %s k=%d origin %d %s"):format(shape_name(case[1]), case[2], shift,
                                                         mode), tol)
        end
      end
    end
    local n = 2^22 + 5
    local x, w = input({n}, "float32"), input({31}, "float64", -1, 1)
    local xg, wg = x:cuda(), w:cuda()
    local tol = bound("float32", 31, absmax(x) + 0.5, w:abs():sum())
    for _, mode in ipairs({"constant", "reflect"}) do
      local opts = {mode = mode, cval = 0.5}
      agree(ml.ndimage.convolve1d(xg, wg, opts), ml.ndimage.convolve1d(x, w, opts),
            "convolve1d 2^22+5 " .. mode, tol)
      agree(ml.ndimage.correlate1d(xg[{{2, n}}], wg, opts),
            ml.ndimage.correlate1d(x[{{2, n}}], w, opts), "correlate1d one sample in " .. mode, tol)
      agree(ml.ndimage.correlate1d(xg[{{3, n, 3}}], wg, opts),
            ml.ndimage.correlate1d(x[{{3, n, 3}}], w, opts), "correlate1d stepped " .. mode, tol)
    end
  end)

  it("masks beyond the tiles (corr_direct) and beyond FFT_MIN_TAPS (cuFFT)", function()
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{{700, 40}, {600, 1}, false}, {{70, 90}, {40, 40}, true},
                             {{5000}, {1500}, true}, {{9, 30, 31}, {5, 17, 15}, true}}) do
        local x, w = input(case[1], dt), input(case[2], "float64", -1, 1)
        local scale = (absmax(x) + 0.5) * w:abs():sum()
        -- the FFT's error is bounded norm-wise: a looser bound against the same scale
        local tol = case[3] and (dt == "float32" and 1e-4 or 1e-11) * scale
          or bound(dt, w:numel(), absmax(x) + 0.5, w:abs():sum())
        for _, mode in ipairs(MODES) do
          local opts = {mode = mode, cval = 0.5}
          agree(ml.ndimage.correlate(x:cuda(), w:cuda(), opts), ml.ndimage.correlate(x, w, opts),
                ("ndimage.correlate %s %s mask %s %s"):format(dt, shape_name(case[1]),
                                                            shape_name(case[2]), mode), tol)
        end
      end
    end
  end)

  it("the fft option takes either path whatever the mask's size", function()
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{{33, 130}, {5, 5}, true}, {{7}, {3}, true},
                             {{70, 90}, {40, 40}, false}, {{9, 30, 31}, {5, 17, 15}, false},
                             {{60, 200}, {48, 48}, false}}) do
        local x, w = input(case[1], dt), input(case[2], "float64", -1, 1)
        local scale = (absmax(x) + 0.5) * w:abs():sum()
        local tol = case[3] and (dt == "float32" and 1e-4 or 1e-11) * scale
          or bound(dt, w:numel(), absmax(x) + 0.5, w:abs():sum())
        for _, mode in ipairs(MODES) do
          local opts = {mode = mode, cval = 0.5}
          local g = ml.ndimage.convolve(x:cuda(), w:cuda(),
                                        {mode = mode, cval = 0.5, fft = case[3]})
          agree(g, ml.ndimage.convolve(x, w, opts),
                ("ndimage.convolve fft=%s %s %s mask %s %s"):format(tostring(case[3]), dt,
                  shape_name(case[1]), shape_name(case[2]), mode), tol)
        end
      end
    end
  end)

  it("signal convolve and correlate: every size and boundary", function()
    local cases = {{{1}, {1}}, {{13}, {4}}, {{3}, {11}}, {{1000}, {37}}, {{3000}, {900}},
                   {{1, 1}, {2, 2}}, {{9, 14}, {4, 3}}, {{5, 6}, {8, 9}}, {{70, 133}, {6, 6}}}
    for _, dt in ipairs(floats) do
      for _, case in ipairs(cases) do
        local x, w = input(case[1], dt), input(case[2], dt, -1, 1)
        local tol = bound(dt, w:numel(), absmax(x) + 0.5, w:abs():sum())
        for _, fn in ipairs({"convolve", "correlate"}) do
          for _, size in ipairs({"full", "same", "valid"}) do
            for _, b in ipairs({"fill", "symm", "wrap"}) do
              local opts = {mode = size, boundary = b, fillvalue = 0.5}
              agree(ml[fn](x:cuda(), w:cuda(), opts), ml[fn](x, w, opts),
                    ("%s %s %s %s %s %s"):format(fn, dt, shape_name(case[1]),
                                                shape_name(case[2]), size, b), tol)
            end
          end
        end
      end
    end
  end)
end)

describe("cuda filter: separable passes", function()
  it("gaussian_filter: fused, two-pass fallback, one pass; modes per axis", function()
    local shapes = {{1}, {7}, {1, 1}, {33, 130}, {100, 257}, {3, 5, 7}, {2, 40, 50}, {1, 3000},
                    {64, 260}, {2, 130, 456}}
    for _, dt in ipairs(floats) do
      for _, shape in ipairs(shapes) do
        local x = input(shape, dt)
        local nd = #shape
        for _, s in ipairs({{0.5, {}}, {1.0, {mode = "constant", cval = 0.5}}, {4.0, {}},
                            {3.0, {mode = "constant", cval = -1}}, {2.0, {mode = "nearest"}},
                            {10.0, {mode = "wrap"}}, {2.0, {order = 1, mode = "mirror"}}}) do
          local modes = {}
          for d = 1, nd do modes[d] = MODES[(d + #s[2]) % 5 + 1] end
          for _, opts in ipairs({s[2], {mode = modes, cval = 0.5}}) do
            local k = 2 * math.floor(4 * s[1] + 0.5) + 1
            local tol = bound(dt, nd * k, absmax(x) + 0.5, (s[2].order and 2 or 1) ^ nd)
            agree(ml.ndimage.gaussian_filter(x:cuda(), s[1], opts),
                  ml.ndimage.gaussian_filter(x, s[1], opts),
                  ("gaussian_filter %s %s sigma %g"):format(dt, shape_name(shape), s[1]), tol)
          end
        end
      end
    end
  end)

  it("filter_strip's strips: every mask size, strip and chunk edges, modes per axis", function()
    -- widths around a strip (224 outputs for 33 taps, 252 for 3), one row
    -- or column, planes enough that every block walks a whole column in
    -- several steps, views
    local shapes = {{1, 1}, {1, 5}, {6, 1}, {2, 2}, {3, 300}, {300, 3}, {37, 224}, {37, 225},
                    {40, 253}, {65, 449}, {2, 50, 231}, {300, 100, 20}}
    for _, shape in ipairs(shapes) do
      local x = input(shape, "float32")
      local xg = x:cuda()
      local nd = #shape
      for _, s in ipairs({{0.25, "reflect"}, {0.5, "constant"}, {1.0, "nearest"},
                          {2.0, "mirror"}, {3.0, "wrap"}, {4.0, "reflect"}, {4.0, "constant"}}) do
        local k = 2 * math.floor(4 * s[1] + 0.5) + 1
        local tol = bound("float32", nd * k, absmax(x) + 0.5, 1)
        local modes = {}
        for d = 1, nd do modes[d] = MODES[(d + k) % 5 + 1] end
        for _, opts in ipairs({{mode = s[2], cval = 0.5}, {mode = modes, cval = -1}}) do
          agree(ml.ndimage.gaussian_filter(xg, s[1], opts),
                ml.ndimage.gaussian_filter(x, s[1], opts),
                ("gaussian_filter float32 %s sigma %g"):format(shape_name(shape), s[1]), tol)
        end
      end
      -- along axis 1 of three dimensions, the smoothing passes are a strip's
      for _, mode in ipairs(MODES) do
        local opts = {mode = mode, cval = 0.5, axis = 1}
        agree(ml.ndimage.sobel(xg, opts), ml.ndimage.sobel(x, opts),
              ("sobel float32 %s %s"):format(shape_name(shape), mode),
              bound("float32", 6, absmax(x) + 0.5, 4 ^ nd))
      end
    end
    local x = input({70, 300}, "float32")
    local t, tg = x:t(), x:cuda():t()
    agree(ml.ndimage.gaussian_filter(tg, 4), ml.ndimage.gaussian_filter(t, 4),
          "gaussian_filter of a transposed view", bound("float32", 66, absmax(x), 1))
    agree(ml.ndimage.gaussian_filter(tg[{{2, -1}, {3, -1}}], 2),
          ml.ndimage.gaussian_filter(t[{{2, -1}, {3, -1}}], 2),
          "gaussian_filter of a sliced view", bound("float32", 34, absmax(x), 1))
  end)

  it("correlate1d along every axis, sobel, and views", function()
    for _, dt in ipairs(floats) do
      for _, shape in ipairs({{1}, {301}, {7, 31}, {64, 129}, {3, 17, 40}}) do
        local x = input(shape, dt)
        for _, k in ipairs({1, 2, 5, 8, 33}) do
          local w = input({k}, "float64", -1, 1)
          for axis = 1, #shape do
            for _, mode in ipairs(MODES) do
              local opts = {axis = axis, mode = mode, cval = 0.5, origin = -(k // 2)}
              agree(ml.ndimage.convolve1d(x:cuda(), w:cuda(), opts),
                    ml.ndimage.convolve1d(x, w, opts),
                    ("convolve1d %s %s k=%d axis %d %s"):format(dt, shape_name(shape), k, axis, mode),
                    bound(dt, k, absmax(x) + 0.5, w:abs():sum()))
            end
            -- a mask on the CPU is uploaded with the call
            agree(ml.ndimage.convolve1d(x:cuda(), w, {axis = axis}),
                  ml.ndimage.convolve1d(x, w, {axis = axis}),
                  ("convolve1d %s %s k=%d axis %d, mask on the CPU"):format(dt, shape_name(shape),
                                                                           k, axis),
                  bound(dt, k, absmax(x), w:abs():sum()))
          end
        end
        for axis = 1, #shape do
          agree(ml.ndimage.sobel(x:cuda(), {axis = axis}), ml.ndimage.sobel(x, {axis = axis}),
                ("sobel %s %s axis %d"):format(dt, shape_name(shape), axis),
                bound(dt, 6, absmax(x), 4 ^ #shape))
        end
        if #shape >= 2 then
          local t, tg = x:transpose(1, 2), x:cuda():transpose(1, 2)
          agree(ml.ndimage.gaussian_filter(tg, 1.5), ml.ndimage.gaussian_filter(t, 1.5),
                "gaussian_filter of a transposed view", bound(dt, 30, absmax(x), 1))
          local m = #shape == 2 and {3, 2} or {3, 2, 2}
          agree(ml.ndimage.correlate(tg, ml.ones(m, {device = GPU}), {mode = "wrap"}),
                ml.ndimage.correlate(t, ml.ones(m, {device = "cpu"}), {mode = "wrap"}),
                "correlate of a transposed view", bound(dt, 12, absmax(x), 12))
        end
      end
    end
  end)
end)

describe("cuda filter: moving sums", function()
  it("window_sum and uniform_filter1d: tiles and runs, every axis and mode", function()
    for _, dt in ipairs(floats) do
      for _, shape in ipairs({{1}, {2047}, {2049}, {4097}, {100003}, {3, 5000}, {5000, 3},
                              {7, 9, 11}, {2, 300, 17}}) do
        local x = input(shape, dt)
        for _, r in ipairs({0, 1, 7, 1023, 1500}) do
          for axis = 1, #shape do
            for _, mode in ipairs(MODES) do
              local what = ("window_sum %s %s r=%d axis %d %s"):format(dt, shape_name(shape), r,
                                                                      axis, mode)
              local opts = {axis = axis, mode = mode, cval = 0.5}
              local tol = (dt == "float32" and 2^-22 or 2^-40) * (2 * r + 1) * (absmax(x) + 0.5)
              agree(ml.window_sum(x:cuda(), r, opts), ml.window_sum(x, r, opts), what, tol)
              agree(ml.ndimage.uniform_filter1d(x:cuda(), 2 * r + 2, opts),
                    ml.ndimage.uniform_filter1d(x, 2 * r + 2, opts), what .. " (uniform)",
                    tol / (2 * r + 1))
            end
          end
        end
      end
    end
  end)

  it("views, empty inputs, integers and errors", function()
    local x = input({50, 70}, "float64")
    local xt = x:cuda():t()
    agree(ml.window_sum(xt, 3, {axis = 1}), ml.window_sum(x:t(), 3, {axis = 1}), "view",
          2^-40 * 7 * absmax(x))
    local s = x:cuda()[{{1, -1, 3}, {2, -1, 2}}]
    agree(ml.ndimage.uniform_filter(s, 4), ml.ndimage.uniform_filter(x[{{1, -1, 3}, {2, -1, 2}}], 4),
          "stepped view", 2^-40 * absmax(x))
    local e = ml.zeros(0, 5, {device = GPU})
    assert.same({0, 5}, ml.window_sum(e, 2).shape)
    assert.same({0, 5}, ml.ndimage.gaussian_filter(e, 1).shape)
    assert.same({0, 5}, ml.ndimage.correlate(e, ml.ones(2, 2, {device = GPU})).shape)
    local u = input({9, 13}, "uint8")
    assert.same(ml.ndimage.uniform_filter(u, 4), ml.ndimage.uniform_filter(u:cuda(), 4):cpu())
    local i = input({9, 13}, "int32")
    assert.same(ml.ndimage.sobel(i), ml.ndimage.sobel(i:cuda()):cpu())
    same_error(function() return ml.ndimage.correlate(xt, ml.ones(3, 3, {device = GPU}),
                                                       {origin = {2, 0}}) end,
               function() return ml.ndimage.correlate(x:t(), ml.ones(3, 3, {device = "cpu"}),
                                                       {origin = {2, 0}}) end,
               "bad origin")
    same_error(function() return ml.convolve(x:cuda(), ml.ones(3, {device = GPU})) end,
               function() return ml.convolve(x, ml.ones(3, {device = "cpu"})) end, "ranks")
  end)
end)
