-- The CUDA backend against the CPU backend: every backend operation, run
-- through the Lua API on the same random inputs on both devices, on
-- awkward sizes (1, primes, 2^k + 1, empty), non-contiguous views and
-- broadcasts; then the device memory (reductions: cuda_reduce_spec.lua;
-- kNN: cuda_knn_spec.lua; shared helpers: tests/helpers/cuda.lua).
-- Pending where there is no GPU.
--
-- Tolerances (relative, with a tiny absolute floor for results near 0):
--   exact: integers, moves (copies, indexing, sorting), conversions,
--     comparisons, min/max/argmin/argmax, uniform and integer random draws;
--   float64 arithmetic 1e-15, math functions 1e-14, reductions 1e-12,
--     matrix products 1e-12 of sqrt(k) (entries of random inputs grow so);
--   float32 arithmetic exact (IEEE on both), math functions 2e-6 (CUDA's
--     float functions are within 2 ulp), reductions 1e-6 (both accumulate
--     in double), matrix products 1e-5 of sqrt(k);
--   normal draws 1e-6 (float32) and 1e-12 (float64): log, sqrt, sin, cos.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda backend", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local GPU, same, same2, same_error = H.GPU, H.same, H.same2, H.same_error
local floats, ints, dtypes, is_float = H.floats, H.ints, H.dtypes, H.is_float
local input, pair, shapes, shape_name = H.input, H.pair, H.shapes, H.shape_name

describe("cuda transfers and copies", function()
  it("round-trips every dtype and shape exactly", function()
    for _, dt in ipairs(dtypes) do
      for _, s in ipairs(shapes) do
        local c, g = pair(s, dt)
        same(g, c, dt .. " " .. shape_name(s))
        local back = c:to(GPU):to("cpu")
        assert.equal("cpu", back.device)
        assert.same(c:totable(), back:totable())
      end
    end
  end)

  it("moves non-contiguous views both ways", function()
    local c, g = pair({31, 7}, "float64")
    same(g:t(), c:t(), "transposed view")
    same(g:t():contiguous(), c:t():contiguous(), "contiguous copy of a transpose")
    same(g:narrow(1, 3, 11), c:narrow(1, 3, 11), "narrowed view")
    same(c:t():cuda(), c:t(), "upload of a transpose")
  end)

  it("converts between dtypes as the CPU does", function()
    local c = ml.array({0 / 0, 1 / 0, -1 / 0, -0.0, 0.5, -0.5, 1.5, -2.5, 255.9, 256, -129,
                        3e9, -3e9, 1e19, -1e19, 2 ^ 53 + 1}, {device = "cpu"})
    local g = c:cuda()
    for _, from in ipairs(dtypes) do
      for _, to in ipairs(dtypes) do
        same(g:astype(from):astype(to), c:astype(from):astype(to), from .. " -> " .. to)
      end
    end
    local big = ml.array({2 ^ 62 + 1, -(2 ^ 62) - 3, 123456789012345}, {dtype = "int64"})
    same(big:cuda():astype("float32"), big:cpu():astype("float32"), "int64 -> float32")
  end)

  it("copies into strided views of the device", function()
    for _, dt in ipairs(dtypes) do
      local src_c, src_g = pair({5, 3}, dt)
      local c = ml.zeros(5, 7, {dtype = dt, device = "cpu"})
      local g = ml.zeros(5, 7, {dtype = dt, device = GPU})
      c:narrow(2, 2, 3):copy(src_c)
      g:narrow(2, 2, 3):copy(src_g)
      same(g, c, "copy into a narrowed view " .. dt)
      c:t():narrow(1, 1, 2):copy(c:t():narrow(1, 4, 2):astype("float64"))
      g:t():narrow(1, 1, 2):copy(g:t():narrow(1, 4, 2):astype("float64"))
      same(g, c, "converting copy between views " .. dt)
    end
  end)

  it("fills, ranges and constructors agree", function()
    for _, dt in ipairs(dtypes) do
      local o = {dtype = dt, device = GPU}
      local oc = {dtype = dt, device = "cpu"}
      same(ml.full({3, 5}, 7, o), ml.full({3, 5}, 7, oc), "full " .. dt)
      same(ml.eye(5, 7, o), ml.eye(5, 7, oc), "eye " .. dt)
      same(ml.arange(3, 200, 7, o), ml.arange(3, 200, 7, oc), "arange " .. dt)
      same(ml.zeros(0, o), ml.zeros(0, oc), "empty zeros " .. dt)
      local g, c = ml.zeros(6, 5, o), ml.zeros(6, 5, oc)
      g:t():narrow(1, 2, 3):fill(9)
      c:t():narrow(1, 2, 3):fill(9)
      same(g, c, "fill of a strided view " .. dt)
    end
    for _, dt in ipairs(floats) do
      same(ml.linspace(-1, 1, 257, {dtype = dt, device = GPU}),
           ml.linspace(-1, 1, 257, {dtype = dt, device = "cpu"}), "linspace " .. dt)
      same(ml.arange(0.1, 3.7, 0.3, {dtype = dt, device = GPU}),
           ml.arange(0.1, 3.7, 0.3, {dtype = dt, device = "cpu"}), "float arange " .. dt)
      same(ml.full({3}, -0.0, {dtype = dt, device = GPU}),
           ml.full({3}, -0.0, {dtype = dt, device = "cpu"}), "full -0 " .. dt)
    end
  end)

  it("reads single elements and tables back", function()
    local c, g = pair({7, 31}, "float64")
    assert.equal(c[{3, 5}], g[{3, 5}])
    same(g:narrow(2, 31, 1):sum(), c:narrow(2, 31, 1):sum(), "sum of a column", 1e-12, 0)
    assert.same(c:totable(), g:totable())
  end)
end)

describe("cuda elementwise", function()
  local binary = {"add", "sub", "mul", "minimum", "maximum", "eq", "ne", "lt", "le",
                  "gt", "ge", "idiv", "mod"}

  it("binary operations agree on every dtype and shape", function()
    for _, dt in ipairs(dtypes) do
      for _, s in ipairs(shapes) do
        local ac, ag = pair(s, dt)
        local bc, bg = pair(s, dt, 1, 9)
        for _, op in ipairs(binary) do
          same(ml[op](ag, bg), ml[op](ac, bc), op .. " " .. dt .. " " .. shape_name(s))
        end
        if is_float(dt) then
          same(ag / bg, ac / bc, "div " .. dt .. " " .. shape_name(s))
          same(ag:abs() ^ bg, ac:abs() ^ bc, "pow " .. dt, 1e-15)
        else
          same(ag ^ (bg % 5), ac ^ (bc % 5), "pow " .. dt)
        end
      end
    end
  end)

  it("covers the flat path's vector body, tail and misaligned views", function()
    for _, dt in ipairs(dtypes) do
      local ac, ag = pair({(1 << 20) + 3}, dt)
      local bc, bg = pair({(1 << 20) + 3}, dt)
      same(ag + bg, ac + bc, "add, 2^20 + 3 " .. dt)
      local n = (1 << 20) + 2
      same(ag:narrow(1, 2, n) * bg:narrow(1, 1, n), ac:narrow(1, 2, n) * bc:narrow(1, 1, n),
           "mul of misaligned views " .. dt)
    end
  end)

  it("broadcasts, takes scalars and non-contiguous operands", function()
    for _, dt in ipairs(dtypes) do
      local ac, ag = pair({7, 1}, dt)
      local bc, bg = pair({1, 31}, dt)
      same(ag + bg, ac + bc, "broadcast add " .. dt)
      same(ml.maximum(ag, bg), ml.maximum(ac, bc), "broadcast maximum " .. dt)
      local xc, xg = pair({31, 7}, dt)
      local yc, yg = pair({7, 31}, dt)
      same(xg:t() - yg, xc:t() - yc, "transposed sub " .. dt)
      same(xg + 2, xc + 2, "x + 2 " .. dt)
      same(2 - xg, 2 - xc, "2 - x " .. dt)
      same(xg * 3, xc * 3, "x * 3 " .. dt)
      same(ml.lt(xg, 5), ml.lt(xc, 5), "x < 5 " .. dt)
      same(xg * 2.5, xc * 2.5, "x * 2.5 " .. dt)
      local zc = ml.full({}, 5, {dtype = dt, device = "cpu"})
      same(xg + zc:cuda(), xc + zc, "x + 0-d array " .. dt)
    end
  end)

  it("unary operations agree", function()
    local math_ops = {"exp", "log1p", "expm1", "sin", "cos", "tanh", "sigmoid"}
    local exact_ops = {"neg", "abs", "floor", "ceil", "round", "logical_not", "isnan",
                       "isinf", "isfinite"}
    for _, dt in ipairs(floats) do
      local rt = dt == "float32" and 2e-6 or 1e-14
      local at = dt == "float32" and 1e-7 or 1e-300
      for _, s in ipairs(shapes) do
        local c, g = pair(s, dt, -4, 4)
        for _, op in ipairs(math_ops) do
          same(ml[op](g), ml[op](c), op .. " " .. dt .. " " .. shape_name(s), rt, at)
        end
        same(g:abs():sqrt(), c:abs():sqrt(), "sqrt " .. dt)
        same((g:abs() + 0.1):log(), (c:abs() + 0.1):log(), "log " .. dt, rt, at)
        for _, op in ipairs(exact_ops) do
          same(ml[op](g), ml[op](c), op .. " " .. dt .. " " .. shape_name(s))
        end
      end
      local special = ml.array({0 / 0, 1 / 0, -1 / 0, 0, -0.0, 1, -1, 2.5, -2.5, 0.5, 700,
                                -700, 1e-30}, {dtype = dt, device = "cpu"})
      for _, op in ipairs(math_ops) do
        same(ml[op](special:cuda()), ml[op](special), op .. " of specials " .. dt, rt, at)
      end
      for _, op in ipairs(exact_ops) do
        same(ml[op](special:cuda()), ml[op](special), op .. " of specials " .. dt)
      end
      same(ml.minimum(special:cuda(), 0), ml.minimum(special, 0), "minimum with NaN " .. dt)
      same(ml.mod(special:cuda(), 0.75), ml.mod(special, 0.75), "mod of specials " .. dt)
      same(ml.idiv(special:cuda(), -0.75), ml.idiv(special, -0.75), "idiv of specials " .. dt)
    end
    for _, dt in ipairs(ints) do
      local c, g = pair({257}, dt)
      for _, op in ipairs({"neg", "abs", "floor", "ceil", "round", "logical_not", "isnan",
                           "isinf", "isfinite"}) do
        same(ml[op](g), ml[op](c), op .. " " .. dt)
      end
    end
  end)

  it("integer corner cases wrap and divide as on the CPU", function()
    local c = ml.array({-7, 7, 0, -1, 1, 2147483647, -2147483648, 13}, {dtype = "int64"})
    local d = ml.array({2, -2, 3, -1, 0, 2, -1, 0}, {dtype = "int64"})
    for _, dt in ipairs({"int32", "int64"}) do
      local a, b = c:astype(dt), d:astype(dt)
      for _, op in ipairs({"idiv", "mod", "add", "sub", "mul"}) do
        same(ml[op](a:cuda(), b:cuda()), ml[op](a, b), op .. " corner cases " .. dt)
      end
      same(a:cuda() ^ b:cuda():abs(), a ^ b:abs(), "pow corner cases " .. dt)
      -- integers to negative integer powers: the same error, found on the device
      same_error(function() return a:cuda() ^ b:cuda() end, function() return a ^ b end,
                 "pow by negative exponents " .. dt)
      same_error(function() return 2 ^ b:cuda() end, function() return 2 ^ b end,
                 "2 ^ negative exponents " .. dt)
      same_error(function() return a:cuda() ^ -1 end, function() return a ^ -1 end,
                 "pow -1 " .. dt)
    end
  end)

  it("divides by integers out of an integer array's range in float64", function()
    local c = ml.array({1, 2, 255}, {dtype = "uint8", device = "cpu"})
    same(300 / c:cuda(), 300 / c, "300 / uint8")
    same(c:cuda() / 300, c / 300, "uint8 / 300")
    local i = ml.array({-7, 1, 2147483647}, {dtype = "int32", device = "cpu"})
    same(i:cuda() / 2 ^ 40, i / 2 ^ 40, "int32 / 2^40")
    same(math.mininteger / i:cuda(), math.mininteger / i, "mininteger / int32")
  end)

  it("where selects with broadcasting", function()
    for _, dt in ipairs(dtypes) do
      local ac, ag = pair({7, 31}, dt)
      local bc, bg = pair({1, 31}, dt)
      local cc = ml.gt(input({7, 1}, "float64"), 0)
      same(ml.where(cc:cuda(), ag, bg), ml.where(cc, ac, bc), "where " .. dt)
      same(ml.where(ml.gt(ag, bg), ag, 0), ml.where(ml.gt(ac, bc), ac, 0), "where scalar " .. dt)
    end
    -- two numbers: the result lives on the condition's device
    local cc = ml.gt(input({7, 3}, "float64"), 0)
    same(ml.where(cc:cuda(), 1, -1.5), ml.where(cc, 1, -1.5), "where two numbers")
    assert.equal("cpu", ml.where(cc, 1, -1).device)
  end)
end)

describe("cuda elementwise batch", function()
  -- Small contiguous operations wait in a batch on the host and run as one
  -- launch (kernels/elementwise_batch.cuh): the results must be those of
  -- the stream, whatever comes between them.
  it("chains dependent operations across many batches", function()
    for _, dt in ipairs({"float32", "float64", "int32"}) do
      local c, g = pair({257}, dt)
      local c1, g1 = pair({257}, dt)
      for i = 1, 100 do
        c = (c + c1) * 3 - i
        g = (g + g1) * 3 - i
        if dt ~= "int32" then
          c, g = c / 2, g / 2
        end
      end
      same(g, c, "chain " .. dt, 1e-15, 0)
    end
  end)

  it("mixes every kind of operation with launched work between them", function()
    local c, g = pair({3, 5, 7}, "float64")
    local cb, gb = pair({5, 1}, "float64")
    local cw = ml.zeros(3, 5, 7, {device = "cpu"})
    local gw = ml.zeros(3, 5, 7, {device = GPU})
    for i = 1, 40 do
      local cm, gm = ml.gt(c, cb), ml.gt(g, gb)           -- broadcast compare
      cw = ml.where(cm, c:abs():sqrt() - i, -cw)          -- unary, scalar, where
      gw = ml.where(gm, g:abs():sqrt() - i, -gw)
      c, g = c * 0.5 + cw:narrow(1, 1, 1), g * 0.5 + gw:narrow(1, 1, 1)
      if i % 7 == 0 then                                  -- launched, not batched
        same(g:sum(2), c:sum(2), "sum after step " .. i, 1e-12, 1e-300)
      end
      if i % 11 == 0 then c:narrow(3, 2, 3):fill(i); g:narrow(3, 2, 3):fill(i) end
    end
    same(gw, cw, "where chain", 1e-12, 1e-300)
    same(g, c, "operand chain", 1e-12, 1e-300)
  end)

  it("keeps results when temporaries are collected and the cache emptied", function()
    local c, g = pair({1001}, "float32")
    local cacc, gacc = c:clone(), g:clone()
    for i = 1, 50 do
      do local _ = g * i + 1 end                          -- garbage while queued
      gacc = gacc + g * (i % 3)
      cacc = cacc + c * (i % 3)
      if i % 10 == 0 then
        collectgarbage()
        ml.cuda.empty_cache()
      end
    end
    same(gacc, cacc, "accumulated")
  end)

  it("hands elements between threads from one operation to the next", function()
    -- uint8 results take 16 elements a thread, float64 ones 2, views that
    -- start off 16 bytes one; a one-element array is read by every thread.
    local c, g = pair({1000}, "float64")
    local one_c, one_g = ml.array({0.25}, {device = "cpu"}), ml.array({0.25}, {device = GPU})
    for i = 1, 40 do
      local cm, gm = ml.gt(c, one_c * i), ml.gt(g, one_g * i)
      local cu, gu = cm + cm, gm + gm                     -- uint8, 16 a thread
      c = ml.where(cu, c - one_c, c + 1.5)
      g = ml.where(gu, g - one_g, g + 1.5)
      local cs, gs = c:narrow(1, 2, 999) * 0.5, g:narrow(1, 2, 999) * 0.5
      c = c * 0.75 + ml.sum(cs) * 0                       -- launched reduction between
      g = g * 0.75 + ml.sum(gs) * 0
      c:narrow(1, 2, 999):copy(cs - c:narrow(1, 1, 999) * 0.5)
      g:narrow(1, 2, 999):copy(gs - g:narrow(1, 1, 999) * 0.5)
    end
    same(g, c, "threads' hand-over", 1e-15, 0)
  end)

  it("copies into the arrays of earlier operations", function()
    local c, g = pair({64}, "float64")
    local cv, gv = c:narrow(1, 1, 32), g:narrow(1, 1, 32)
    for i = 1, 70 do
      cv:copy(cv * 2 + c:narrow(1, 33, 32))
      gv:copy(gv * 2 + g:narrow(1, 33, 32))
      c:narrow(1, 33, 32):copy(c:narrow(1, 33, 32) - i)
      g:narrow(1, 33, 32):copy(g:narrow(1, 33, 32) - i)
    end
    same(g, c, "in place", 1e-15, 0)
  end)
end)

describe("cuda matrix products", function()
  local sizes = {{1, 1, 1}, {7, 31, 5}, {31, 7, 127}, {127, 257, 33}, {0, 5, 3}, {5, 0, 3},
                 {5, 3, 0}}

  local function tol(dt, k)
    if not is_float(dt) then return 0, 0 end
    local e = dt == "float32" and 1e-5 or 1e-12
    return e, e * math.sqrt(math.max(k, 1))
  end

  it("mm agrees, with transposed operands", function()
    for _, dt in ipairs(dtypes) do
      for _, z in ipairs(sizes) do
        local m, k, n = z[1], z[2], z[3]
        local ac, ag = pair({m, k}, dt, -5, 5)
        local bc, bg = pair({k, n}, dt, -5, 5)
        local name = dt .. " " .. m .. "x" .. k .. "x" .. n
        local rt, at = tol(dt, k)
        same(ag:mm(bg), ac:mm(bc), "mm " .. name, rt, at)
        same(ag:t():contiguous():t():mm(bg), ac:mm(bc), "mm of A^T stored " .. name, rt, at)
        same(ag:mm(bg:t():contiguous():t()), ac:mm(bc), "mm of B^T stored " .. name, rt, at)
        local tc, tg = pair({k, m}, dt, -5, 5)
        same(tg:t():mm(bg), tc:t():mm(bc), "mm of a transposed view " .. name, rt, at)
      end
    end
  end)

  it("matmul batches and broadcasts", function()
    for _, dt in ipairs(dtypes) do
      local rt, at = tol(dt, 31)
      local ac, ag = pair({4, 7, 31}, dt, -5, 5)
      local bc, bg = pair({31, 5}, dt, -5, 5)
      same(ml.matmul(ag, bg), ml.matmul(ac, bc), "batch x matrix " .. dt, rt, at)
      local cc, cg = pair({4, 31, 5}, dt, -5, 5)
      same(ml.matmul(ag, cg), ml.matmul(ac, cc), "batch x batch " .. dt, rt, at)
      local dc, dg = pair({3, 1, 7, 31}, dt, -5, 5)
      local ec, eg = pair({2, 31, 5}, dt, -5, 5)
      same(ml.matmul(dg, eg), ml.matmul(dc, ec), "broadcast batches " .. dt, rt, at)
      local vc, vg = pair({31}, dt, -5, 5)
      same(ml.matmul(ag, vg), ml.matmul(ac, vc), "batch x vector " .. dt, rt, at)
    end
  end)
end)

describe("cuda indexing", function()
  it("index_select and gather agree", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({7, 31, 5}, dt)
      for d = 1, 3 do
        local n = c:size(d)
        local idx = {n, 1, 2, n, 1, math.max(n - 1, 1)}
        same(g:index_select(d, idx), c:index_select(d, idx), "index_select dim " .. d .. " " .. dt)
        local ic = ml.randint(1, n + 1, {4, 6, 3}, {device = "cpu"})
        same(g:gather(d, ic:cuda()), c:gather(d, ic), "gather dim " .. d .. " " .. dt)
      end
      same(g:transpose(1, 3):index_select(1, {2, 2, 1}), c:transpose(1, 3):index_select(1, {2, 2, 1}),
           "index_select of a view " .. dt)
    end
  end)

  it("scatter agrees, the last of duplicate indices winning", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({5, 8}, dt)
      local sc, sg = pair({5, 6}, dt)
      local ic = ml.randint(1, 9, {5, 6}, {device = "cpu"})
      same(g:scatter(2, ic:cuda(), sg), c:scatter(2, ic, sc), "scatter dim 2 " .. dt)
      local jc = ml.randint(1, 6, {3, 8}, {device = "cpu"})
      local tc, tg = pair({3, 8}, dt)
      same(g:scatter(1, jc:cuda(), tg), c:scatter(1, jc, tc), "scatter dim 1 " .. dt)
    end
  end)

  it("masked_select agrees, on views too", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({31, 17}, dt)
      local m = ml.gt(input({31, 17}, "float64"), 0)
      same(g:masked_select(m:cuda()), c:masked_select(m), "masked_select " .. dt)
      same(g:t():masked_select(m:t():cuda()), c:t():masked_select(m:t()),
           "masked_select of transposes " .. dt)
      local none = ml.zeros(31, 17, {dtype = "uint8", device = "cpu"})
      same(g:masked_select(none:cuda()), c:masked_select(none), "masked_select of nothing " .. dt)
    end
  end)

  it("x[mask] = v agrees: one value, and values in order, on views too", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({31, 17}, dt)
      local m = ml.gt(input({31, 17}, "float64"), 0)
      local count = m:astype("int64"):sum()
      local v = input({count}, dt)
      c[m] = v
      g[m:cuda()] = v:cuda()
      same(g, c, "x[mask] = values " .. dt)
      c[m] = 3
      g[m:cuda()] = 3
      same(g, c, "x[mask] = 3 " .. dt)
      local ct, gt = c:t(), g:t()
      ct[m:t()] = v
      gt[m:t():cuda()] = v:cuda()
      same(g, c, "x:t()[mask] = values " .. dt)
    end
  end)

  it("nonzero, argwhere and x[mask] over leading dimensions agree", function()
    for _, dt in ipairs(dtypes) do
      local c = input({31, 7, 3}, dt, -2, 2)
      if is_float(dt) then c = ml.where(ml.gt(c, 1), 0, c) end
      local g = c:cuda()
      same(g:argwhere(), c:argwhere(), "argwhere " .. dt)
      local gi, gj, gk = g:nonzero()
      local ci, cj, ck = c:nonzero()
      same(gi, ci, "nonzero 1 " .. dt)
      same(gj, cj, "nonzero 2 " .. dt)
      same(gk, ck, "nonzero 3 " .. dt)
      same(g:transpose(1, 3):argwhere(), c:transpose(1, 3):argwhere(), "argwhere of a view " .. dt)
      local m = ml.gt(input({31}, "float64"), 0)
      same(g[m:cuda()], c[m], "x[rows mask] " .. dt)
      local m2 = ml.gt(input({31, 7}, "float64"), 0)
      same(g[m2:cuda()], c[m2], "x[2-D prefix mask] " .. dt)
      c[m] = 1
      g[m:cuda()] = 1
      same(g, c, "x[rows mask] = 1 " .. dt)
      local v = input({31}, dt)
      c:transpose(1, 3)[ml.array({1, 0, 1}, {dtype = "uint8", device = "cpu"})] = v
      g:transpose(1, 3)[ml.array({1, 0, 1}, {dtype = "uint8", device = GPU})] = v:cuda()
      same(g, c, "x:transpose()[mask] = v " .. dt)
    end
    same(ml.zeros(0, 3, {device = GPU}):argwhere(), ml.zeros(0, 3, {device = "cpu"}):argwhere(),
         "argwhere of nothing")
  end)

  it("counts negative indices from the end as the CPU does", function()
    for _, dt in ipairs(dtypes) do
      local c, g = pair({7, 31, 5}, dt)
      for d = 1, 3 do
        local n = c:size(d)
        local idx = {-1, 1, -n, n, -2}
        same(g:index_select(d, idx), c:index_select(d, idx), "index_select negative dim " .. d .. " " .. dt)
        local ic = ml.randint(-n, n, {4, 6, 3}, {device = "cpu"})
        ic = ml.where(ml.eq(ic, 0), -1, ic)
        same(g:gather(d, ic:cuda()), c:gather(d, ic), "gather negative dim " .. d .. " " .. dt)
      end
      local sc, sg = pair({5, 6}, dt)
      local ic = ml.randint(-8, 0, {5, 6}, {device = "cpu"})
      local tc, tg = pair({5, 8}, dt)
      same(tg:scatter(2, ic:cuda(), sg), tc:scatter(2, ic, sc), "scatter negative " .. dt)
      local rows = ml.array({-1, 2, -7, -1}, {device = "cpu"})
      same(g[rows:cuda()], c[rows], "x[idx] negative " .. dt)
      c[rows] = 3
      g[rows:cuda()] = 3
      same(g, c, "x[idx] = v negative " .. dt)
    end
  end)

  it("checks indices on empty results and negative bad indices as the CPU does", function()
    local ec, eg = ml.zeros(3, 0, {device = "cpu"}), ml.zeros(3, 0, {device = GPU})
    same(eg:index_select(1, {3, -3}), ec:index_select(1, {3, -3}), "empty index_select")
    same_error(function() return eg:index_select(1, ml.array({4}, {device = GPU})) end,
               function() return ec:index_select(1, ml.array({4}, {device = "cpu"})) end,
               "index_select on an empty result")
    same_error(function() eg[ml.array({-4}, {device = GPU})] = 1 end,
               function() ec[ml.array({-4}, {device = "cpu"})] = 1 end, "x[idx] = v on an empty result")
    local c, g = pair({4, 10}, "float32")
    same_error(function() return g:index_select(2, {3, -11}) end,
               function() return c:index_select(2, {3, -11}) end, "index_select -11")
    local bad = ml.array({{1, 2}, {-10, -11}}, {device = "cpu"})
    same_error(function() return g:gather(2, bad:cuda()) end, function() return c:gather(2, bad) end,
               "gather -11")
    same_error(function() return g:scatter(2, bad:cuda(), g:narrow(2, 1, 2)) end,
               function() return c:scatter(2, bad, c:narrow(2, 1, 2)) end, "scatter -11")
  end)

  it("reports bad indices as the CPU does, and carries on", function()
    local c, g = pair({4, 10}, "float32")
    same_error(function() return g:index_select(2, {3, 11, 0}) end,
               function() return c:index_select(2, {3, 11, 0}) end, "index_select")
    local bad = ml.array({{1, 2}, {0, 12}, {3, 4}, {5, 6}}, {device = "cpu"})
    same_error(function() return g:gather(2, bad:cuda()) end, function() return c:gather(2, bad) end,
               "gather")
    same_error(function() return g:scatter(2, bad:cuda(), g:narrow(2, 1, 2)) end,
               function() return c:scatter(2, bad, c:narrow(2, 1, 2)) end, "scatter")
    local ok, err = pcall(function() return g:index_select(2, {11}) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("index_select: index 11 is out of bounds for dimension 2 with size 10",
                                      1, true))
    same(g + 1, c + 1, "after the errors")
  end)
end)

describe("cuda sort and topk", function()
  local function with_specials(dt, shape)
    local c = input(shape, dt, -5, 5)
    if is_float(dt) then
      c = c:round()
      local flat = c:reshape(-1)
      local n = flat:size(1)
      for _, i in ipairs({1, 3, n}) do
        if i >= 1 and i <= n then flat[{i}] = 0 / 0 end
      end
      if n >= 5 then flat[{5}] = -0.0 end
    end
    return c, c:cuda()
  end

  it("sorts rows stably, NaN last, ascending and descending", function()
    for _, dt in ipairs(dtypes) do
      for _, s in ipairs({{1}, {7}, {257}, {7, 31}, {31, 7}, {3, 0}, {2, 100003}, {1, 300007}}) do
        local c, g = with_specials(dt, s)
        for d = 1, #s do
          for _, desc in ipairs({false, true}) do
            same2(function() return g:sort(d, {descending = desc}) end,
                  function() return c:sort(d, {descending = desc}) end,
                  "sort(" .. d .. (desc and ", desc) " or ") ") .. dt .. " " .. shape_name(s))
          end
        end
      end
    end
  end)

  it("topk agrees for small and large k, long and many rows", function()
    for _, dt in ipairs(dtypes) do
      for _, s in ipairs({{1}, {7}, {257}, {7, 31}, {300, 1000}, {3, 100003}, {1, 200003},
                          {33, 5}}) do
        local c, g = with_specials(dt, s)
        local n = s[#s]
        for _, k in ipairs({1, 5, 20, 32, 33, 100, 256, 257, n}) do
          if k <= n then
            for _, largest in ipairs({true, false}) do
              same2(function() return g:topk(k, -1, {largest = largest}) end,
                    function() return c:topk(k, -1, {largest = largest}) end,
                    "topk(" .. k .. (largest and ") " or ", smallest) ") .. dt .. " " ..
                      shape_name(s))
            end
          end
        end
        if #s == 2 and s[1] >= 5 then
          same2(function() return g:topk(5, 1) end, function() return c:topk(5, 1) end,
                "topk along dim 1 " .. dt .. " " .. shape_name(s))
        end
      end
    end
  end)
end)

describe("cuda random numbers", function()
  local sizes = {{1}, {3}, {7}, {257}, {1001}, {3, 5, 7}}

  it("rand and uniform are bit-identical to the CPU's", function()
    for _, dt in ipairs(floats) do
      for _, s in ipairs(sizes) do
        ml.seed(77)
        local c = ml.rand(s, {dtype = dt, device = "cpu"})
        local c2 = ml.uniform(-2, 5, s, {dtype = dt, device = "cpu"})
        ml.seed(77)
        local g = ml.rand(s, {dtype = dt, device = GPU})
        local g2 = ml.uniform(-2, 5, s, {dtype = dt, device = GPU})
        same(g, c, "rand " .. dt .. " " .. shape_name(s))
        same(g2, c2, "uniform after rand " .. dt .. " " .. shape_name(s))
      end
    end
  end)

  it("randn and normal agree to the last bits of the math library", function()
    for _, dt in ipairs(floats) do
      local rt = dt == "float32" and 1e-6 or 1e-12
      for _, s in ipairs(sizes) do
        ml.seed(5)
        local c = ml.randn(s, {dtype = dt, device = "cpu"})
        local c2 = ml.normal(3, 0.5, s, {dtype = dt, device = "cpu"})
        ml.seed(5)
        local g = ml.randn(s, {dtype = dt, device = GPU})
        local g2 = ml.normal(3, 0.5, s, {dtype = dt, device = GPU})
        same(g, c, "randn " .. dt .. " " .. shape_name(s), rt, rt)
        same(g2, c2, "normal " .. dt .. " " .. shape_name(s), rt, rt)
      end
    end
  end)

  it("draws across a multiple of 2^32 blocks and across the counter's wrap", function()
    -- offsets a few blocks before 2^32, 3 * 2^32 and 2^64 (-2 as a Lua integer)
    for _, offset in ipairs({(1 << 32) - 3, (3 << 32) - 1, -2}) do
      for _, dt in ipairs(floats) do
        local rt = dt == "float32" and 1e-6 or 1e-12
        for _, draw in ipairs({{"rand", ml.rand, 0}, {"randn", ml.randn, rt}}) do
          local state = {seed = 31, offset = offset}
          ml.set_rng_state(state)
          local c = draw[2](1001, {dtype = dt, device = "cpu"})
          ml.set_rng_state(state)
          local g = draw[2](1001, {dtype = dt, device = GPU})
          same(g, c, draw[1] .. " " .. dt .. " at offset " .. offset, draw[3], draw[3])
        end
      end
    end
  end)

  it("randint is bit-identical for every integer dtype", function()
    for _, dt in ipairs(ints) do
      for _, s in ipairs(sizes) do
        ml.seed(123)
        local c = ml.randint(0, 200, s, {dtype = dt, device = "cpu"})
        ml.seed(123)
        local g = ml.randint(0, 200, s, {dtype = dt, device = GPU})
        same(g, c, "randint " .. dt .. " " .. shape_name(s))
      end
    end
    ml.seed(9)
    local c = ml.randint(-(2 ^ 40), 2 ^ 40, {1001}, {device = "cpu"})
    ml.seed(9)
    same(ml.randint(-(2 ^ 40), 2 ^ 40, {1001}, {device = GPU}), c, "randint wide range")
  end)
end)

describe("cuda memory", function()
  it("reports allocated, cached, peak and total bytes", function()
    collectgarbage()
    collectgarbage("stop") -- no finalizer may free arrays while we count
    local m = ml.cuda.memory()
    for _, f in ipairs({"allocated", "cached", "peak", "total"}) do
      assert.is_true(math.type(m[f]) == "integer" and m[f] >= 0, f)
    end
    assert.is_true(m.peak >= m.allocated)
    local x = ml.empty(1 << 18, {dtype = "float32", device = GPU})
    local m1 = ml.cuda.memory()
    assert.is_true(m1.allocated >= m.allocated + (1 << 20))
    x:free()
    local m2 = ml.cuda.memory()
    assert.equal(m1.allocated - (1 << 20), m2.allocated)
    assert.is_true(m2.cached >= 1 << 20)
    ml.cuda.empty_cache()
    assert.equal(0, ml.cuda.memory().cached)
    collectgarbage("restart")
    assert.equal("string", type(ml.cuda.device_name(0)))
    assert.is_true(#ml.cuda.device_name(0) > 0)
    assert.is_true(ml.cuda.device_count() >= 1)
    ml.cuda.synchronize()
  end)

  it("survives 200 arrays of 512 MiB made in a loop and never freed", function()
    local total = ml.cuda.memory().total
    for _ = 1, 200 do
      local x = ml.empty(2 ^ 27, {dtype = "float32", device = GPU})
      assert.equal(2 ^ 27, x:numel())
    end
    local m = ml.cuda.memory()
    assert.is_true(m.peak <= total, "peak " .. m.peak .. " above the device's " .. total)
    collectgarbage()
    collectgarbage()
    assert.is_true(ml.cuda.memory().allocated < 1 << 30)
    ml.cuda.empty_cache()
  end)

  it("raises out of memory for an impossible request and carries on", function()
    local ok, err = pcall(ml.empty, 2 ^ 50, {dtype = "uint8", device = GPU})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("out of memory", 1, true), tostring(err))
    assert.truthy(tostring(err):find("cuda:0", 1, true), tostring(err))
    local x = ml.ones(1000, {device = GPU})
    assert.equal(1000, x:sum())
  end)
end)
