-- The CUDA backend against the CPU backend: every backend operation, run
-- through the Lua API on the same random inputs on both devices, on
-- awkward sizes (1, primes, 2^k + 1, empty), non-contiguous views and
-- broadcasts; then the device memory. Pending where there is no GPU.
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

local GPU = "cuda:0"

local function flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
    return out
  end
  for i = 1, #t do flatten(t[i], out) end
  return out
end

-- The elements of x as a flat list (x an array on any device, or a Lua
-- value such as the result of x:sum()).
local function values(x)
  if not ml.is_array(x) then return {x} end
  return flatten(x:cpu():totable())
end

local function close(a, b, rtol, atol)
  if a == b then return true end
  if type(a) ~= "number" or type(b) ~= "number" then return false end
  if a ~= a and b ~= b then return true end
  if a ~= a or b ~= b or math.abs(a) == math.huge or math.abs(b) == math.huge then
    return false
  end
  return math.abs(a - b) <= atol + rtol * math.abs(b)
end

-- g (computed on the GPU) against c (the same on the CPU): device, shape,
-- dtype, then every element within rtol/atol.
local function same(g, c, what, rtol, atol)
  if ml.is_array(c) then
    assert.is_true(ml.is_array(g), what .. ": not an array")
    assert.equal(GPU, g.device, what .. ": device")
    assert.same(c.shape, g.shape, what .. ": shape")
    assert.equal(c.dtype, g.dtype, what .. ": dtype")
  end
  local gv, cv = values(g), values(c)
  assert.equal(#cv, #gv, what .. ": number of elements")
  for i = 1, #cv do
    if not close(gv[i], cv[i], rtol or 0, atol or 0) then
      error(string.format("%s: element %d is %s on %s but %s on the cpu", what, i,
                          tostring(gv[i]), GPU, tostring(cv[i])), 2)
    end
  end
end

-- Both results of a function that returns two (max(dim), sort, topk).
local function same2(fg, fc, what, rtol, atol)
  local g1, g2 = fg()
  local c1, c2 = fc()
  same(g1, c1, what .. " (values)", rtol, atol)
  same(g2, c2, what .. " (indices)")
end

-- The same error on both devices (message without the position prefix).
local function same_error(fg, fc, what)
  local okc, ec = pcall(fc)
  local okg, eg = pcall(fg)
  assert.is_false(okc, what .. ": the cpu did not fail")
  assert.is_false(okg, what .. ": " .. GPU .. " did not fail")
  assert.equal(tostring(ec):gsub("^.-:%d+: ", ""), tostring(eg):gsub("^.-:%d+: ", ""))
end

local floats = {"float32", "float64"}
local ints = {"uint8", "int32", "int64"}
local dtypes = {"float32", "float64", "uint8", "int32", "int64"}

local function is_float(dt) return dt == "float32" or dt == "float64" end

-- Random inputs, made on the CPU (the GPU gets copies): floats uniform in
-- [lo, hi), integers in [lo, hi).
local seed = 1000
local function input(shape, dtype, lo, hi)
  seed = seed + 1
  ml.seed(seed)
  if is_float(dtype) then
    return ml.uniform(lo or -3, hi or 3, shape, {dtype = dtype, device = "cpu"})
  end
  if dtype == "uint8" then lo, hi = math.max(lo or 0, 0), math.min(hi or 50, 256) end
  return ml.randint(lo or -40, hi or 40, shape, {dtype = dtype, device = "cpu"})
end

-- A CPU input and its GPU copy.
local function pair(shape, dtype, lo, hi)
  local c = input(shape, dtype, lo, hi)
  return c, c:cuda()
end

local shapes = {{1}, {7}, {31}, {127}, {257}, {0}, {7, 31}, {3, 0}, {2, 3, 17}}

local function shape_name(s) return #s == 0 and "scalar" or table.concat(s, "x") end

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
      for _, op in ipairs({"idiv", "mod", "add", "sub", "mul", "pow"}) do
        same(ml[op](a:cuda(), b:cuda()), ml[op](a, b), op .. " corner cases " .. dt)
      end
    end
  end)

  it("where selects with broadcasting", function()
    for _, dt in ipairs(dtypes) do
      local ac, ag = pair({7, 31}, dt)
      local bc, bg = pair({1, 31}, dt)
      local cc = ml.gt(input({7, 1}, "float64"), 0)
      same(ml.where(cc:cuda(), ag, bg), ml.where(cc, ac, bc), "where " .. dt)
      same(ml.where(ml.gt(ag, bg), ag, 0), ml.where(ml.gt(ac, bc), ac, 0), "where scalar " .. dt)
    end
  end)
end)

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
        for _, k in ipairs({1, 5, 20, 32, 33, n}) do
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

describe("cuda knn", function()
  -- ml.knn on the GPU against the CPU: the same neighbours, nearest first,
  -- and the same distances (the exact keys are computed in the same
  -- operations on both, so they agree to the bit; the tolerances are
  -- 1e-6 for float32 and 1e-12 for float64, relative). Sizes reach every
  -- path of kernels/knn.cu: selection by a warp or by a block a row (lists
  -- of more than 256 candidates), refinement by a warp or a block
  -- (k > 256), tiles of queries and references, and the core's retries.
  local metrics = {"euclidean", "sqeuclidean", "cosine", "ip"}
  local rtol = {float32 = 1e-6, float64 = 1e-12}

  local function agree(qc, rc, k, opts, what)
    local dc, ic = ml.knn(qc, rc, k, opts)
    local dg, ig = ml.knn(qc:cuda(), rc:cuda(), k, opts)
    what = ("%s %s %dx%d against %d, k = %d"):format(what, qc.dtype, qc:size(1), qc:size(2),
                                                      rc:size(1), k)
    same(ig, ic, what .. " (indices)")
    same(dg, dc, what .. " (distances)", rtol[qc.dtype], 1e-300)
  end

  it("agrees on every metric and dtype, on awkward sizes", function()
    local cases = {{1, 1, 3, 1}, {1, 7, 5, 7}, {7, 1, 3, 1}, {13, 31, 7, 1}, {13, 31, 7, 31},
                   {37, 101, 17, 5}, {101, 257, 33, 20}, {3, 5, 0, 2}, {2, 127, 1, 127},
                   {17, 4099, 3, 9}}
    for _, dt in ipairs(floats) do
      for _, case in ipairs(cases) do
        local m, n, d, k = table.unpack(case)
        local q, r = input({m, d}, dt), input({n, d}, dt)
        for _, metric in ipairs(metrics) do agree(q, r, k, {metric = metric}, metric) end
      end
    end
  end)

  it("excludes each query's own row", function()
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{2, 1}, {29, 1}, {29, 28}, {130, 7}, {131, 130}}) do
        local n, k = case[1], case[2]
        local x = input({n, 5}, dt)
        for _, metric in ipairs(metrics) do
          agree(x, x, k, {metric = metric, exclude_self = true}, metric .. " exclude_self")
        end
      end
    end
  end)

  it("gives the same answer in tiles of queries and references", function()
    for _, dt in ipairs(floats) do
      for _, d in ipairs({6, 70}) do -- the filtered search and the general one
        local q, r = input({300, d}, dt), input({1009, d}, dt)
        for _, budget in ipairs({1, 4096, 20000, 300000}) do
          for _, metric in ipairs(metrics) do
            agree(q, r, 5, {metric = metric, budget = budget}, metric .. " budget " .. budget)
          end
          agree(r, r, 3, {budget = budget, exclude_self = true}, "exclude_self budget " .. budget)
        end
      end
    end
  end)

  it("keeps long candidate lists and large k", function()
    for _, dt in ipairs(floats) do
      local q, r = input({41, 4}, dt), input({2111, 4}, dt)
      for _, k in ipairs({121, 300, 2048, 2111}) do
        agree(q, r, k, {}, "long lists")
        agree(q, r, k, {metric = "ip", budget = 100000}, "long lists in tiles, ip")
      end
    end
  end)

  it("agrees on thousands of queries of every small dimension", function()
    local m = 5120
    for _, dt in ipairs(floats) do
      for _, d in ipairs({1, 3, 7, 16, 29, 37, 64, 65, 100}) do
        local q, r = input({m, d}, dt), input({611, d}, dt)
        agree(q, r, 20, {}, "d = " .. d)
        agree(q, r, 1, {metric = "cosine"}, "cosine d = " .. d)
      end
      local x = input({m, 8}, dt)
      agree(x, x, 10, {exclude_self = true}, "exclude_self")
      agree(x, x, 5, {metric = "ip", exclude_self = true, budget = 2 ^ 22},
            "exclude_self in tiles")
    end
  end)

  it("retries where the fast keys cancel, tie and meet NaN and inf", function()
    local cases = {float32 = {1e4, 2 ^ -10}, float64 = {1e8, 2 ^ -26}}
    for _, dt in ipairs(floats) do
      local center, ulp = cases[dt][1], cases[dt][2]
      ml.seed(31)
      local q = ml.randint(-20, 21, {40, 8}, {device = "cpu"}):astype(dt) * ulp + center
      local r = ml.randint(-20, 21, {700, 8}, {device = "cpu"}):astype(dt) * ulp + center
      for _, metric in ipairs(metrics) do agree(q, r, 4, {metric = metric}, "cancelling " .. metric) end
      agree(r, r, 3, {exclude_self = true}, "cancelling exclude_self")
      -- past d = 64 float32 ranks with TF32 first, whose wider bound
      -- leaves most of these to the float32 retry
      local qw = ml.randint(-20, 21, {40, 80}, {device = "cpu"}):astype(dt) * ulp + center
      local rw = ml.randint(-20, 21, {700, 80}, {device = "cpu"}):astype(dt) * ulp + center
      for _, metric in ipairs(metrics) do agree(qw, rw, 4, {metric = metric}, "cancelling d = 80 " .. metric) end
      agree(qw, rw, 4, {tf32 = false}, "cancelling d = 80 without TF32")
      -- few distinct points, each many times: ties everywhere
      local base = input({5, 3}, dt):round()
      local dup = ml.cat({base, base, base, base, base, base, base, base}, 1)
      for _, metric in ipairs(metrics) do
        for _, k in ipairs({1, 7, 23, 40}) do agree(dup, dup, k, {metric = metric}, "ties " .. metric) end
      end
      local nan, inf = 0 / 0, math.huge
      local rs = ml.array({{nan, 0}, {1, 1}, {inf, 0}, {0, 0}, {2, 0}, {-inf, 3}, {0, -0.0}},
                          {dtype = dt, device = "cpu"})
      local qs = ml.array({{nan, 1}, {0, 0}, {1, inf}, {-0.0, 2}}, {dtype = dt, device = "cpu"})
      for _, metric in ipairs(metrics) do
        for _, k in ipairs({1, 4, 7}) do agree(qs, rs, k, {metric = metric}, "nan and inf " .. metric) end
      end
    end
  end)

  it("reports bad arguments as the CPU does", function()
    local q, r = input({3, 2}, "float32"), input({5, 2}, "float32")
    same_error(function() return ml.knn(q:cuda(), r:cuda(), 6) end,
               function() return ml.knn(q, r, 6) end, "knn k > n")
    local ok, err = pcall(ml.knn, q:cuda(), r, 1)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("knn: arrays on different devices (" .. GPU .. " and cpu)", 1,
                                     true), tostring(err))
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
