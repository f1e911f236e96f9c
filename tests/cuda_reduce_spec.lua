-- Reductions and cumulative sums on the CUDA backend against the CPU
-- backend (kernels/reduce.cu's paths: lanes along contiguous rows, a
-- thread a row down strided columns with or without a tree, short rows
-- through shared memory, chunked long rows), on awkward sizes, views and
-- empty inputs; the rest of the backend is in cuda_spec.lua, the helpers
-- in tests/helpers/cuda.lua. Tolerances (relative, with a tiny absolute
-- floor): exact for integers and extremes, 1e-12 for float64 and 1e-6 for
-- float32 (both accumulate in double). Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda reductions", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, same2, same_error = H.same, H.same2, H.same_error
local floats, ints, dtypes, is_float = H.floats, H.ints, H.dtypes, H.is_float
local pair, shape_name = H.pair, H.shape_name

describe("cuda reductions", function()
  local red_shapes = {{1}, {7}, {257}, {7, 31}, {31, 7}, {1, 257}, {257, 1}, {2, 3, 127},
                      {3, 100003}, {100003, 3}}
  local function tol(dt) return dt == "float32" and 1e-6 or 1e-12 end

  it("agree over everything and along each dimension", function()
    for _, dt in ipairs(dtypes) do
      for _, s in ipairs(red_shapes) do
        local c, g = pair(s, dt)
        local name = dt .. " " .. shape_name(s)
        local rt = is_float(dt) and tol(dt) or 0
        for _, op in ipairs({"sum", "mean", "min", "max", "argmin", "argmax", "any", "all",
                             "var", "std", "logsumexp"}) do
          same(g[op](g), c[op](c), op .. " " .. name, rt, 1e-12)
          for d = 1, #s do
            if op == "min" or op == "max" then
              same2(function() return g[op](g, d) end, function() return c[op](c, d) end,
                    op .. "(" .. d .. ") " .. name)
            else
              same(g[op](g, d), c[op](c, d), op .. "(" .. d .. ") " .. name, rt, 1e-12)
            end
          end
          same(g[op](g, -1, {keepdim = true}), c[op](c, -1, {keepdim = true}),
               op .. " keepdim " .. name, rt, 1e-12)
        end
        same(g:var(1, {ddof = 1}), c:var(1, {ddof = 1}), "var ddof " .. name, rt, 1e-12)
        for _, p in ipairs({1, 2, math.huge}) do
          same(g:norm(-1, {p = p}), c:norm(-1, {p = p}), "norm " .. p .. " " .. name, rt, 1e-12)
        end
      end
    end
  end)

  it("reduces transposed and narrowed views", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({37, 129}, dt)
      local rt = is_float(dt) and tol(dt) or 0
      for _, op in ipairs({"sum", "max", "argmin", "mean"}) do
        for d = 1, 2 do
          same(g:t()[op](g:t(), d), c:t()[op](c:t(), d), op .. " of a transpose " .. dt, rt, 1e-12)
          same(g:narrow(2, 5, 100)[op](g:narrow(2, 5, 100), d),
               c:narrow(2, 5, 100)[op](c:narrow(2, 5, 100), d), op .. " of a narrow " .. dt, rt,
               1e-12)
        end
      end
    end
  end)

  it("reduces many short contiguous rows, at and past the shared-memory path's bound", function()
    -- rows of 1 KiB or less, one after another, go through shared memory
    -- (reduce.cu's short path); 129 doubles or 257 floats take the other
    local cases = {{"float64", {3001, 51}}, {"float64", {97, 128}}, {"float64", {97, 129}},
                   {"float64", {1000, 16}}, {"float32", {300, 256}}, {"float32", {300, 257}},
                   {"float32", {5, 700, 3}}, {"int64", {1001, 16}}, {"int32", {999, 33}},
                   {"uint8", {257, 1000}}, {"float64", {4099, 1}}}
    for _, case in ipairs(cases) do
      local dt, s = case[1], case[2]
      local c, g = pair(s, dt)
      local name = dt .. " " .. shape_name(s)
      local rt = is_float(dt) and tol(dt) or 0
      for _, op in ipairs({"sum", "mean", "argmin", "argmax", "any", "var", "logsumexp"}) do
        same(g[op](g, -1), c[op](c, -1), op .. " " .. name, rt, 1e-12)
      end
      same2(function() return g:max(-1) end, function() return c:max(-1) end, "max " .. name)
      same(g:norm(-1), c:norm(-1), "norm " .. name, rt, 1e-12)
      -- the block's span starting off 16-byte alignment, one element on
      local n = c:numel()
      local cv = c:reshape(n):narrow(1, 2, n - s[#s]):reshape(-1, s[#s])
      local gv = g:reshape(n):narrow(1, 2, n - s[#s]):reshape(-1, s[#s])
      same(gv:sum(2), cv:sum(2), "sum of a shifted view " .. name, rt, 1e-12)
      same(gv:argmax(2), cv:argmax(2), "argmax of a shifted view " .. name)
    end
  end)

  it("reduces down the columns of many rows, a thread a row", function()
    -- 2^18 outputs or more, each over a strided dimension (reduce.cu's
    -- outer path without its tree)
    for _, dt in ipairs({"float64", "float32", "int32"}) do
      local c, g = pair({9, (1 << 18) + 3}, dt)
      local rt = is_float(dt) and tol(dt) or 0
      for _, op in ipairs({"sum", "argmin", "var", "logsumexp"}) do
        same(g[op](g, 1), c[op](c, 1), op .. " down columns " .. dt, rt, 1e-12)
      end
      same(g:norm(1), c:norm(1), "norm down columns " .. dt, rt, 1e-12)
    end
  end)

  it("takes products, and NaN propagates to extremes", function()
    for _, dt in ipairs(floats) do
      local c, g = pair({5, 13}, dt, 0.5, 1.5)
      same(g:prod(2), c:prod(2), "prod " .. dt, tol(dt), 0)
      local s = ml.array({{1, 0 / 0, 3, 0 / 0}, {-1 / 0, -1 / 0, 2, 2}, {5, 5, 5, 5}},
                         {dtype = dt, device = "cpu"})
      for _, op in ipairs({"max", "min"}) do
        same2(function() return s:cuda()[op](s:cuda(), 2) end, function() return s[op](s, 2) end,
              op .. " with NaN and ties " .. dt)
      end
      same(s:cuda():argmax(2), s:argmax(2), "argmax with NaN " .. dt)
      same(s:cuda():logsumexp(2), s:logsumexp(2), "logsumexp with NaN and -inf " .. dt, tol(dt), 0)
    end
    for _, dt in ipairs(ints) do
      local c, g = pair({4, 9}, dt, 1, 4)
      same(g:prod(2), c:prod(2), "prod " .. dt)
    end
  end)

  it("is deterministic and matches a long float32 sum", function()
    local c, g = pair({(1 << 22) + 7}, "float32")
    local s1, s2 = g:sum(), g:sum()
    assert.equal(s1, s2)
    same(s1, c:sum(), "sum of 2^22 + 7", 1e-6, 1e-9)
    same(g:mean(), c:mean(), "mean of 2^22 + 7", 1e-6, 1e-9)
    same(g:var(), c:var(), "var of 2^22 + 7", 1e-6, 1e-9)
    assert.equal(g:max(), c:max())
    assert.equal(g:argmin(), c:argmin())
  end)

  it("handles empty inputs as the CPU does", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({3, 0}, dt)
      for _, op in ipairs({"sum", "mean", "var", "logsumexp", "any", "all"}) do
        same(g[op](g, 2), c[op](c, 2), op .. " of empty rows " .. dt)
        same(g[op](g, 1), c[op](c, 1), op .. " of no rows " .. dt)
      end
      for _, p in ipairs({1, 2, math.huge}) do
        same(g:norm(2, {p = p}), c:norm(2, {p = p}), "norm " .. p .. " of empty rows " .. dt)
      end
      same_error(function() return g:max(2) end, function() return c:max(2) end,
                 "max of empty rows " .. dt)
    end
  end)

  it("cumulative sums agree", function()
    for _, dt in ipairs(dtypes) do
      local rt = is_float(dt) and tol(dt) or 0
      for _, s in ipairs({{1}, {7}, {16}, {17}, {257}, {7, 31}, {31, 7}, {2, 3, 127},
                          {3, 200003}, {1, 700001}}) do
        local c, g = pair(s, dt)
        for d = 1, #s do
          same(g:cumsum(d), c:cumsum(d), "cumsum(" .. d .. ") " .. dt .. " " .. shape_name(s),
               rt, 1e-9)
        end
      end
      local c, g = pair({31, 37}, dt)
      same(g:t():cumsum(2), c:t():cumsum(2), "cumsum of a transpose " .. dt, rt, 1e-9)
    end
  end)
end)
