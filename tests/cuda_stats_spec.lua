-- Counting and statistics on the GPU against the CPU: unique, bincount,
-- histogram (equal bins through the shared-memory kernel and the
-- global-atomics one, and given edges), quantile, median, cumprod,
-- searchsorted and the nan-reductions, on awkward sizes (1, odd, prime,
-- empty, long enough for several scan chunks and many blocks) and
-- transposed views. Counts, positions and order statistics are exact;
-- weighted sums and float products within rounding. Pending where there
-- is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda stats", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, pair, shape_name = H.same, H.pair, H.shape_name

local SIZES = {{1}, {7}, {31}, {127}, {257}, {0}, {7, 31}, {3, 0}, {2, 3, 17}, {100003}}

-- The results of f on both devices, compared one by one.
local function both(f, c, g, what, rtol)
  local rc, rg = table.pack(f(c)), table.pack(f(g))
  assert.equal(rc.n, rg.n, what)
  for i = 1, rc.n do same(rg[i], rc[i], what .. " #" .. i, rtol or 0, 0) end
end

describe("cuda stats", function()
  it("unique agrees with the CPU, with index, inverse and counts", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs(SIZES) do
        local c, g = pair(s, dt, 0, 20)
        local what = "unique " .. dt .. " " .. shape_name(s)
        both(function(x)
          return x:unique({return_index = true, return_inverse = true, return_counts = true})
        end, c, g, what)
        both(function(x) return x:unique({sorted = false}) end, c, g, what .. " unsorted")
      end
    end
    local c = ml.array({0 / 0, 1, 0 / 0, -0.0, 0.0, 1})
    both(function(x) return x:unique({return_counts = true}) end, c, c:cuda(), "nan")
    -- integers counted over their range: slots in shared memory (a few
    -- thousand) and in global memory (tens of thousands), negative values
    for _, dt in ipairs({"uint8", "int32", "int64"}) do
      for _, r in ipairs({{0, 200}, {-3000, 3000}, {-40000, 9000}}) do
        if dt ~= "uint8" or r[1] == 0 then
          local cx, gx = pair({100003}, dt, r[1], r[2])
          both(function(x) return x:unique({return_inverse = true, return_counts = true}) end,
               cx, gx, ("unique counted %s [%d, %d)"):format(dt, r[1], r[2]))
        end
      end
    end
  end)

  it("bincount agrees with the CPU", function()
    for _, dt in ipairs({"uint8", "int32", "int64"}) do
      for _, hi in ipairs({1, 200, 9000, 70000}) do
        local c, g = pair({100003}, dt, 0, dt == "uint8" and math.min(hi, 256) or hi)
        both(function(x) return x:bincount() end, c, g, ("bincount %s < %d"):format(dt, hi))
        local v = g[{{2, 100003, 3}}]
        both(function(x) return x:bincount({minlength = 5}) end, v:cpu(), v, "strided " .. dt)
      end
    end
    for _, n in ipairs({1, 31, 257, 100003}) do
      local c, g = pair({n}, "int64", 0, 300)
      local wc, wg = pair({n}, "float64")
      both(function(x) return x:bincount() end, c, g, "bincount " .. n)
      same(g:bincount({weights = wg, minlength = 400}),
           c:bincount({weights = wc, minlength = 400}), "weighted " .. n, 1e-12, 1e-12)
    end
  end)

  it("histogram agrees with the CPU: few bins, many bins, edges", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs(SIZES) do
        local c, g = pair(s, dt, 0, 50)
        local what = "histogram " .. dt .. " " .. shape_name(s)
        for _, bins in ipairs({1, 10, 256, 5000, 20000}) do
          both(function(x) return x:histogram({bins = bins, range = {-1, 40}}) end, c, g,
               what .. " bins " .. bins)
        end
        if c:numel() > 0 then
          both(function(x) return x:histogram({bins = 7}) end, c, g, what .. " data range")
        end
        local e = {-3, 0.5, 1, 2, 10, 49}
        both(function(x) return x:histogram({bins = ml.array(e):to(x.device)}) end, c, g,
             what .. " edges")
        local wc = H.input(s, "float64", 0, 1)
        local wg = wc:cuda()
        for _, bins in ipairs({13, 6000}) do
          same(g:histogram({bins = bins, range = {0, 45}, weights = wg}),
               c:histogram({bins = bins, range = {0, 45}, weights = wc}),
               what .. " weights " .. bins, 1e-12, 1e-12)
        end
      end
    end
  end)

  it("histogram puts values at and beside the edges where the CPU does", function()
    -- the GPU estimates a bin by multiplying, the CPU divides as NumPy;
    -- in float32 the fifth range is too narrow for its magnitude and the
    -- sixth's scale overflows, both of which take the division on the GPU
    local cases = {{256, {0, 1}}, {7, {0.1, 0.7}}, {10, {-3.3, 1e3}}, {33, {-1e-30, 3e-30}},
                   {50, {1000, 1000.01}}, {10, {0, 1e-39}}}
    for _, dt in ipairs({"float32", "float64"}) do
      local ulp = dt == "float32" and 2^-23 or 2^-52
      for _, case in ipairs(cases) do
        local nb, range = case[1], case[2]
        local _, e = ml.zeros(1, {dtype = dt}):histogram({bins = nb, range = range})
        local v = {}
        for _, edge in ipairs(e:totable()) do
          local step = math.max(math.abs(edge), 1e-300) * ulp
          for k = -3, 3 do v[#v + 1] = edge + k * step end
        end
        local c = ml.cat({ml.array(v, {dtype = dt, device = "cpu"}),
                          H.input({1001}, dt, range[1], range[2])})
        both(function(x) return x:histogram({bins = nb, range = range}) end, c, c:cuda(),
             ("histogram edges %s %d bins in [%g, %g]"):format(dt, nb, range[1], range[2]))
      end
    end
  end)

  it("cumsum and cumprod of long rows: one pass, the same every run", function()
    for _, dt in ipairs({"float32", "float64"}) do
      for _, s in ipairs({{2^21 + 3}, {5, 2^16}, {2, 3, 40004}}) do
        local c = H.input(s, dt, -1, 1)
        local g = c:cuda()
        local what = dt .. " " .. shape_name(s)
        same(g:cumsum(#s), c:cumsum(#s), "cumsum " .. what, 1e-5, 1e-3)
        local p = c * 1e-4 + 1
        same(p:cuda():cumprod(#s), p:cumprod(#s), "cumprod " .. what, 1e-5, 0)
        assert.is_true(ml.array_equal(g:cumsum(#s), g:cumsum(#s)), "cumsum twice " .. what)
      end
    end
  end)

  it("quantile, median and the nan-reductions agree with the CPU", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs({{1}, {7}, {31}, {127}, {7, 31}, {2, 3, 17}}) do
        local c, g = pair(s, dt)
        local what = dt .. " " .. shape_name(s)
        for d = 1, #s do
          for _, x in ipairs({{c, g}, {c:transpose(1, #s), g:transpose(1, #s)}}) do
            both(function(v) return v:quantile({0, 0.25, 0.5, 1}, {dim = d}) end, x[1], x[2],
                 "quantile " .. what)
            both(function(v) return v:median({dim = d, keepdim = true}) end, x[1], x[2],
                 "median " .. what)
            for _, f in ipairs({"nansum", "nanmean", "nanmax", "nanmin"}) do
              both(function(v) return v[f](v, d) end, x[1], x[2], f .. " " .. what, 1e-12)
            end
          end
        end
        same(g:median(), c:median(), "median all " .. what)
        same(g:quantile(0.3), c:quantile(0.3), "quantile all " .. what)
      end
    end
    local c = ml.array({{1, 0 / 0, 3}, {0 / 0, 0 / 0, 0 / 0}})
    for _, f in ipairs({"nansum", "nanmean", "nanmax", "nanmin"}) do
      both(function(v) return v[f](v, 2) end, c, c:cuda(), f .. " nan rows")
    end
    both(function(v) return v:quantile(0.5, {dim = 2}) end, c, c:cuda(), "quantile nan rows")
  end)

  it("cumprod agrees with the CPU on short, long and strided rows", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs({{1}, {7}, {31}, {257}, {0}, {7, 31}, {3, 0}, {2, 3, 17},
                          {100003}, {3, 40000}, {40000, 3}}) do
        local c, g = pair(s, dt, -2, 3)
        if H.is_float(dt) then
          c = c * 0.001 + 1
          g = c:cuda()
        end
        local tol = H.is_float(dt) and 1e-5 or 0
        for d = 1, #s do
          both(function(v) return v:cumprod(d) end, c, g, "cumprod " .. dt .. " " .. d, tol)
        end
        both(function(v) return v:cumprod() end, c, g, "cumprod all " .. dt, tol)
        if #s == 2 then
          both(function(v) return v:t():cumprod(1) end, c, g, "cumprod view " .. dt, tol)
        end
      end
    end
  end)

  it("searchsorted agrees with the CPU, left and right", function()
    for _, dt in ipairs(H.dtypes) do
      for _, n in ipairs({0, 1, 7, 257, 100003}) do
        local a = H.input({n}, dt, 0, 30):sort()
        local v = H.input({3, 41}, dt, -5, 35)
        for _, side in ipairs({"left", "right"}) do
          same(a:cuda():searchsorted(v:cuda(), {side = side}),
               a:searchsorted(v, {side = side}), "searchsorted " .. dt .. " " .. n .. side)
        end
      end
    end
  end)
end)
