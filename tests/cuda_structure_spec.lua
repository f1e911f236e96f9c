-- The structure functions (tril, triu, diag, diagonal, trace, kron,
-- tensordot, diff, meshgrid, tile, repeat_interleave) on the GPU against
-- the CPU: awkward shapes (1, odd, prime, empty, batched), views, every
-- dtype, offsets past the edges. All but the sums (trace, tensordot's
-- GEMM, in other orders) are exact. Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda structure", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, pair, shape_name = H.same, H.pair, H.shape_name

local MATS = {{1, 1}, {7, 31}, {31, 7}, {3, 0}, {0, 5}, {127, 127}, {2, 3, 5, 7}}

local function tol(dt) return dt == "float32" and 1e-5 or 1e-12 end

-- c and g, and their transposed and stepped views.
local function views(c, g)
  local nd = c:dim()
  local idx = {}
  for i = 1, nd - 1 do idx[i] = {} end
  idx[nd] = {1, -1, 2}
  return {{"", c, g}, {" t", c:transpose(-2, -1), g:transpose(-2, -1)},
          {" s", c[idx], g[idx]}}
end

describe("cuda structure", function()
  it("tril, triu, diagonal, diag and trace agree with the CPU", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs(MATS) do
        local c0, g0 = pair(s, dt, 0, 50)
        for _, v in ipairs(views(c0, g0)) do
          local c, g = v[2], v[3]
          local m = math.max(c.shape[c:dim() - 1], c.shape[c:dim()]) + 1
          for _, k in ipairs({-m, -3, -1, 0, 1, 2, 5, m}) do
            local what = ("%s %s%s k=%d"):format(dt, shape_name(s), v[1], k)
            same(g:tril({k = k}), c:tril({k = k}), "tril " .. what)
            same(ml.triu(g, {k = k}), ml.triu(c, {k = k}), "triu " .. what)
            same(g:diagonal({offset = k}), c:diagonal({offset = k}), "diagonal " .. what)
            same(g:diagonal({offset = k, dim1 = -1, dim2 = 1}),
                 c:diagonal({offset = k, dim1 = -1, dim2 = 1}), "diagonal -1,1 " .. what)
            same(g:trace({offset = k}), c:trace({offset = k}), "trace " .. what, tol(dt), 0)
            if c:dim() == 2 then
              same(g:diag({k = k}), c:diag({k = k}), "diag " .. what)
            end
          end
        end
      end
      for _, n in ipairs({0, 1, 7, 31}) do
        local c, g = pair({n}, dt, 0, 50)
        for _, k in ipairs({-3, 0, 2}) do
          same(ml.diag(g, {k = k}), ml.diag(c, {k = k}), ("diag %s %d k=%d"):format(dt, n, k))
        end
      end
    end
  end)

  it("kron, tile, diff and repeat_interleave agree with the CPU", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs({{1}, {7}, {0}, {3, 5}, {2, 3, 4}}) do
        local c, g = pair(s, dt, 0, 50)
        local cb, gb = pair({2, 3}, dt, 0, 50)
        local what = dt .. " " .. shape_name(s)
        same(ml.kron(g, gb), ml.kron(c, cb), "kron " .. what)
        same(ml.kron(gb:t(), g), ml.kron(cb:t(), c), "kron t " .. what)
        same(g:tile({2, 1, 3}), c:tile({2, 1, 3}), "tile " .. what)
        same(g:tile(0), c:tile(0), "tile 0 " .. what)
        for _, n in ipairs({0, 1, 2, 9}) do
          same(g:diff({n = n, dim = 1}), c:diff({n = n, dim = 1}), "diff " .. what)
          same(g:diff({n = n}), c:diff({n = n}), "diff -1 " .. what)
        end
        same(g:repeat_interleave(3), c:repeat_interleave(3), "repeat 3 " .. what)
        local len = s[1]
        local reps = ml.randint(0, 4, len, {device = "cpu"})
        same(g:repeat_interleave(reps:cuda(), {dim = 1}), c:repeat_interleave(reps, {dim = 1}),
             "repeat array " .. what)
      end
    end
  end)

  it("tensordot and meshgrid agree with the CPU", function()
    for _, dt in ipairs(H.dtypes) do
      local ca, ga = pair({2, 3, 5, 7}, dt, 0, 10)
      local cb, gb = pair({7, 5, 3}, dt, 0, 10)
      local what = "tensordot " .. dt
      same(ml.tensordot(ga, gb, {dims = {{2, 3, 4}, {3, 2, 1}}}),
           ml.tensordot(ca, cb, {dims = {{2, 3, 4}, {3, 2, 1}}}), what, tol(dt), 0)
      same(ml.tensordot(ga:transpose(1, 4), gb, {dims = {{1}, {1}}}),
           ml.tensordot(ca:transpose(1, 4), cb, {dims = {{1}, {1}}}), what .. " view", tol(dt), 0)
      same(ml.tensordot(ga, gb, {dims = 0}), ml.tensordot(ca, cb, {dims = 0}), what .. " 0")
      local ce, ge = pair({3, 0}, dt)
      local cf, gf = pair({0, 4}, dt)
      same(ml.tensordot(ge, gf, {dims = 1}), ml.tensordot(ce, cf, {dims = 1}), what .. " empty")
      local cx, gx = pair({7}, dt, 0, 50)
      local cy, gy = pair({31}, dt, 0, 50)
      for _, idx in ipairs({"xy", "ij"}) do
        local g1, g2 = ml.meshgrid(gx, gy, {indexing = idx})
        local c1, c2 = ml.meshgrid(cx, cy, {indexing = idx})
        same(g1, c1, "meshgrid 1 " .. idx .. " " .. dt)
        same(g2, c2, "meshgrid 2 " .. idx .. " " .. dt)
      end
    end
  end)
end)
