-- Computations on non-contiguous inputs: elementwise functions and
-- operators, reductions and cumsum, matrix products and sorting, on
-- permuted and transposed, stepped, narrowed, selected and expanded
-- (zero-stride) views, and 0-size and size-1 ones, each compared with the
-- same operation on a contiguous clone of the view. The views and the
-- comparisons are in tests/helpers/views.lua.
local ml = require "moonlab"
require "moonlab.test"
local V = require "tests.helpers.views"

local FLOATS, DTYPES, SHAPES = V.FLOATS, V.DTYPES, V.SHAPES
local is_float, tol_of, gen, views = V.is_float, V.tol_of, V.gen, V.views
local shapes_with_big, name_of, each_view = V.shapes_with_big, V.name_of, V.each_view
local near, same_on_clone = V.near, V.same_on_clone

local UNARY = {"neg", "abs", "sqrt", "exp", "log", "log1p", "expm1", "sin", "cos",
               "tanh", "sigmoid", "floor", "ceil", "round", "logical_not",
               "isnan", "isinf", "isfinite"}
local INT_UNARY = {"neg", "abs", "floor", "ceil", "round", "logical_not", "isnan",
                   "isinf", "isfinite", "sqrt", "exp"}
local BINARY = {"add", "sub", "mul", "div", "pow", "idiv", "mod", "minimum",
                "maximum", "eq", "ne", "lt", "le", "gt", "ge"}

describe("views: elementwise", function()
  before_each(function() ml.seed(11) end)

  it("the spec's comparison sees every kind of difference", function()
    local a = ml.array({{1, 0 / 0, math.huge}, {-2, 5, 7}})
    near(a, a:clone())
    near(a, a + 1e-13, 1e-12)
    for _, b in ipairs({ml.array({{1, 0 / 0, math.huge}, {-2, 5, 8}}),
                        ml.array({{1, 1, math.huge}, {-2, 5, 7}}),
                        ml.array({{1, 0 / 0, -math.huge}, {-2, 5, 7}}),
                        ml.array({{1, 0 / 0, math.huge}, {-2, 5.5, 7}}),
                        ml.array({1, 0 / 0, math.huge, -2, 5, 7}),
                        ml.array({{1, 0 / 0, math.huge}}),
                        a + 1e-9}) do
      assert.has_error(function() near(a, b, 1e-12) end)
    end
    assert.has_error(function() near(ml.zeros(0, 3), ml.zeros(3, 0)) end)
    assert.has_error(function() near(ml.array({200}, {dtype = "uint8"}), ml.array({201})) end)
  end)

  it("unary functions and unary minus on float views", function()
    for _, t in ipairs(FLOATS) do
      each_view(shapes_with_big(), t, function(label, v)
        for _, op in ipairs(UNARY) do
          same_on_clone(label .. " " .. op, v, function(x) return x[op](x) end)
          same_on_clone(label .. " ml." .. op, v, function(x) return ml[op](x) end)
        end
        same_on_clone(label .. " unm", v, function(x) return -x end)
      end)
    end
  end)

  it("unary functions on integer views", function()
    for _, t in ipairs({"int32", "int64", "uint8"}) do
      each_view(SHAPES, t, function(label, v)
        for _, op in ipairs(INT_UNARY) do
          same_on_clone(label .. " " .. op, v, function(x) return x[op](x) end)
        end
      end)
    end
  end)

  it("binary functions and operators between two views", function()
    for _, t in ipairs(DTYPES) do
      for _, shape in ipairs(shapes_with_big()) do
        local va, vb = views(shape, t), views(shape, t)
        for i = 1, #va do
          local a, b = va[i][2], vb[#vb + 1 - i][2]
          local label = va[i][1] .. "/" .. vb[#vb + 1 - i][1] .. " " .. name_of(shape) .. " " .. t
          local ac, bc = a:clone(), b:clone()
          -- integers to negative powers are an error: non-negative exponents
          local e, ec = b, bc
          if t == "int32" or t == "int64" then e, ec = b % 7, bc % 7 end
          for _, op in ipairs(BINARY) do
            local y, yc = b, bc
            if op == "pow" then y, yc = e, ec end
            near(a[op](a, y), ac[op](ac, yc), 0)
            near(ml[op](a, y), ac[op](ac, yc), 0)
          end
          for _, f in ipairs({function(x, y) return x + y end, function(x, y) return x - y end,
                              function(x, y) return x * y end, function(x, y) return x / y end,
                              function(x, y) return x % y end, function(x, y) return x // y end}) do
            local r, e = f(a, b), f(ac, bc)
            assert.equal(e.dtype, r.dtype, label)
            near(r, e, 0)
          end
          near(a ^ e, ac ^ ec, 0)
        end
      end
    end
  end)

  it("operators with Lua numbers on either side of a view", function()
    for _, t in ipairs(DTYPES) do
      each_view(SHAPES, t, function(label, v)
        for _, f in ipairs({function(x) return x + 3 end, function(x) return 3 - x end,
                            function(x) return x * 2 end, function(x) return 7 / (x + 3) end,
                            function(x) return x % 5 end, function(x) return 100 // (x + 3) end,
                            function(x) return x ^ 2 end, function(x) return 2.5 * x end,
                            function(x) return ml.lt(x, 1) end, function(x) return ml.maximum(x, 2) end}) do
          same_on_clone(label, v, f)
        end
      end)
    end
  end)

  it("broadcasts between views of different shapes", function()
    ml.seed(3)
    local col = ml.randn(9, 7):narrow(2, 3, 1)            -- 9x1, strided
    local row = ml.randn(31, 2):t():narrow(1, 2, 1)       -- 1x31, stride 2
    local vec = ml.randn(63)[{{1, -1, 2}}]:narrow(1, 1, 31) -- 31, stride 2
    local exp = ml.randn(1, 31):expand(9, 31)
    local cc, rc_, vc, ec = col:clone(), row:clone(), vec:clone(), exp:clone()
    near(col + row, cc + rc_, 0)
    near(row * col, rc_ * cc, 0)
    near(col - vec, cc - vc, 0)
    near(exp / col, ec / cc, 0)
    near(ml.maximum(exp, vec), ml.maximum(ec, vc), 0)
    near(ml.le(row, exp), ml.le(rc_, ec), 0)
    assert.same({9, 31}, (col + row).shape)
    -- a 3-D permuted view against a 2-D transposed one
    local p = ml.randn(31, 5, 9):permute(3, 2, 1)        -- 9x5x31
    local q = ml.randn(31, 5):t()                         -- 5x31
    near(p * q, p:clone() * q:clone(), 0)
    -- a broadcast that fails names both shapes
    local ok, err = pcall(function() return col + ml.randn(4, 8):t() end)
    assert.is_false(ok)
    assert.truthy(err:find("add: shapes 9x1 and 8x4 do not broadcast", 1, true))
  end)

  it("where and clamp on views", function()
    for _, t in ipairs(DTYPES) do
      for _, shape in ipairs(shapes_with_big()) do
        local vs, cs, bs = views(shape, t), views(shape, "float64"), views(shape, t)
        for i = 1, #vs do
          local a, b = vs[i][2], bs[#bs + 1 - i][2]
          local cond = ml.gt(cs[(i % #cs) + 1][2], 0)
          local r = ml.where(cond, a, b)
          near(r, ml.where(cond:clone(), a:clone(), b:clone()), 0)
          -- non-uint8 condition: nonzero is true
          local icond = cond:astype("int32")
          near(ml.where(icond, a, 7), ml.where(cond:clone(), a:clone(), 7), 0)
          same_on_clone(t, a, function(x) return x:clamp(3, 60) end)
          same_on_clone(t, a, function(x) return x:clamp(nil, 10) end)
          same_on_clone(t, a, function(x) return ml.clamp(x, 2, nil) end)
          local lo, hi = b:clone(), b + 5
          near(a:clamp(b, hi), a:clone():clamp(lo, hi), 0)
        end
      end
    end
  end)
end)

local REDUCE = {"sum", "mean", "prod", "min", "max", "argmin", "argmax", "var", "std",
                "norm", "logsumexp", "any", "all"}

local function reduce_call(op, x, dim, opts)
  if dim then return x[op](x, dim, opts) end
  return x[op](x, opts)
end

describe("views: reductions", function()
  before_each(function() ml.seed(12) end)

  it("every reduction along each dimension and over all, every dtype", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        -- prod of many normals under/overflows in the same way either way
        for _, op in ipairs(REDUCE) do
          local empty = v:numel() == 0
          local extreme = op == "min" or op == "max" or op == "argmin" or op == "argmax"
          local tol = tol_of(t)
          if not (extreme and empty) then
            same_on_clone(label .. " " .. op, v, function(x) return reduce_call(op, x) end, tol)
            same_on_clone(label .. " " .. op .. " keepdim", v,
              function(x) return reduce_call(op, x, nil, {keepdim = true}) end, tol)
          end
          for d = 1, v.ndim do
            if not (extreme and v.shape[d] == 0) then
              same_on_clone(label .. " " .. op .. " dim " .. d, v,
                function(x) return reduce_call(op, x, d) end, tol)
            end
            local nd = v.ndim + 1 - d
            if not (extreme and v.shape[nd] == 0) then
              same_on_clone(label .. " " .. op .. " dim " .. -d, v,
                function(x) return reduce_call(op, x, -d, {keepdim = true}) end, tol)
            end
          end
        end
      end)
    end
  end)

  it("options: ddof and the norms on views", function()
    for _, t in ipairs(FLOATS) do
      each_view(shapes_with_big(), t, function(label, v)
        for d = 1, v.ndim do
          same_on_clone(label, v, function(x) return x:var(d, {ddof = 1}) end, tol_of(t))
          same_on_clone(label, v, function(x) return x:std(d, {ddof = 1}) end, tol_of(t))
          same_on_clone(label, v, function(x) return x:norm(d, {p = 1}) end, tol_of(t))
          same_on_clone(label, v, function(x) return x:norm(d, {p = math.huge}) end, tol_of(t))
        end
      end)
    end
  end)

  it("agrees with a plain Lua sum over a transposed view", function()
    ml.seed(5)
    local x = ml.randn(31, 7)
    local t = x:t()
    local tt = t:totable()
    local s = t:sum(2):totable()
    for i = 1, 7 do
      local acc = 0
      for j = 1, 31 do acc = acc + tt[i][j] end
      assert.is_true(math.abs(acc - s[i]) < 1e-12)
    end
    local mx, at = t:max(1)
    for j = 1, 31 do
      assert.equal(x[{j}]:max(), mx[j])
      assert.equal(x[{j}]:argmax(), at[j])
    end
  end)

  it("cumsum along each dimension and flattened", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        same_on_clone(label .. " cumsum", v, function(x) return x:cumsum() end, tol_of(t))
        for d = 1, v.ndim do
          same_on_clone(label .. " cumsum " .. d, v, function(x) return x:cumsum(d) end, tol_of(t))
        end
      end)
    end
  end)
end)

-- A plain Lua matrix product of nested tables.
local function ref_mm(a, b)
  local r = {}
  for i = 1, #a do
    r[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      r[i][j] = s
    end
  end
  return r
end

-- m x n matrices as several views.
local function mat_views(m, n, dtype)
  local out = {}
  out[#out + 1] = {"contiguous", gen({m, n}, dtype)}
  out[#out + 1] = {"transposed", gen({n, m}, dtype):t()}
  out[#out + 1] = {"row-stepped", gen({2 * m, n}, dtype)[{{1, -1, 2}}]}
  out[#out + 1] = {"col-stepped", gen({m, 2 * n + 1}, dtype)[{{}, {2, 2 * n, 2}}]}
  out[#out + 1] = {"narrowed", gen({m + 2, n + 5}, dtype):narrow(1, 2, m):narrow(2, 3, n)}
  out[#out + 1] = {"transposed-narrowed", gen({n + 4, m}, dtype):t():narrow(2, 3, n)}
  out[#out + 1] = {"row-expanded", gen({1, n}, dtype):expand(m, n)}
  out[#out + 1] = {"col-expanded", gen({m, 1}, dtype):expand(m, n)}
  out[#out + 1] = {"selected", gen({m, n, 2}, dtype):select(3, 2)}
  return out
end

describe("views: matrix products", function()
  before_each(function() ml.seed(13) end)

  it("mm of every pair of layouts equals mm of contiguous clones", function()
    for _, t in ipairs({"float64", "float32", "int32", "int64"}) do
      for _, dims in ipairs({{7, 31, 5}, {1, 7, 1}, {31, 1, 7}, {7, 0, 5}, {0, 7, 3}, {257, 7, 31}}) do
        local m, k, n = dims[1], dims[2], dims[3]
        local as, bs = mat_views(m, k, t), mat_views(k, n, t)
        for _, a in ipairs(as) do
          for _, b in ipairs(bs) do
            local r = a[2]:mm(b[2])
            local e = a[2]:clone():mm(b[2]:clone())
            assert.same({m, n}, r.shape)
            near(r, e, is_float(t) and tol_of(t) or 0)
            near(ml.matmul(a[2], b[2]), e, is_float(t) and tol_of(t) or 0)
          end
        end
      end
    end
  end)

  it("mm of views agrees with a plain Lua product", function()
    local as, bs = mat_views(7, 31, "float64"), mat_views(31, 5, "float64")
    for _, a in ipairs(as) do
      for _, b in ipairs(bs) do
        local e = ref_mm(a[2]:totable(), b[2]:totable())
        near(a[2]:mm(b[2]), e, 1e-12)
      end
    end
  end)

  it("mv, dot and outer of views", function()
    for _, t in ipairs({"float64", "float32", "int64"}) do
      local tol = is_float(t) and tol_of(t) or 0
      for _, a in ipairs(mat_views(31, 7, t)) do
        for _, nv in ipairs(views({7}, t)) do
          local r = a[2]:mv(nv[2])
          near(r, a[2]:clone():mv(nv[2]:clone()), tol)
          near(ml.matmul(a[2], nv[2]), r, tol)
          near(ml.matmul(nv[2], a[2]:t()), r, tol)
        end
      end
      for _, shape in ipairs({{257}, {7}, {1}, {0}}) do
        local xs, ys = views(shape, t), views(shape, t)
        for i = 1, #xs do
          local x, y = xs[i][2], ys[#ys + 1 - i][2]
          local d = x:dot(y)
          local e = x:clone():dot(y:clone())
          assert.is_true(math.abs(d - e) <= tol * (1 + math.abs(e)))
          near(x:outer(y), x:clone():outer(y:clone()), tol)
          near(ml.outer(x, y), x:clone():outer(y:clone()), tol)
        end
      end
    end
  end)

  it("reads transposed and row-stepped operands in place (BLAS flags, no copy)", function()
    local a, b = ml.randn(500, 400), ml.randn(500, 300)
    local s = ml.randn(1000, 400)[{{1, -1, 2}}]     -- rows 800 elements apart
    local w = ml.randn(400, 10)
    local v = ml.randn(500)
    local x, y = ml.randn(800)[{{1, -1, 2}}], ml.randn(800)[{{2, -1, 2}}]
    local bt = ml.randn(10, 50, 40):transpose(2, 3)
    local bb = ml.randn(10, 50, 30)
    -- the bytes allocated while f runs beyond its result's
    local function extra(f, result_bytes)
      collectgarbage()
      ml.reset_peak_memory()
      local base = ml.memory().allocated
      local r = f()
      assert.is_true(ml.is_array(r) or type(r) == "number")
      return ml.memory().peak - base - result_bytes
    end
    assert.equal(0, extra(function() return a:t():mm(b) end, 400 * 300 * 8))
    assert.equal(0, extra(function() return b:t():mm(a) end, 300 * 400 * 8))
    assert.equal(0, extra(function() return s:mm(w) end, 500 * 10 * 8))
    assert.equal(0, extra(function() return a:t():mv(v) end, 400 * 8))
    assert.equal(0, extra(function() return x:dot(y) end, 8))
    assert.equal(0, extra(function() return ml.matmul(bt, bb) end, 10 * 40 * 30 * 8))
    -- the results are right too
    near(a:t():mm(b), a:t():clone():mm(b), 1e-12)
    near(s:mm(w), s:clone():mm(w), 1e-12)
    near(ml.matmul(bt, bb), ml.matmul(bt:clone(), bb), 1e-12)
  end)

  it("batched matmul of permuted, expanded and stepped operands", function()
    local a = ml.randn(5, 3, 7):permute(2, 3, 1)          -- 3x7x5, permuted
    local b = ml.randn(5, 4):unsqueeze(1):expand(3, 5, 4)  -- batch stride 0
    local r = ml.matmul(a, b)
    assert.same({3, 7, 4}, r.shape)
    near(r, ml.matmul(a:clone(), b:clone()), 1e-12)
    for i = 1, 3 do
      near(r[i], ref_mm(a[i]:totable(), b[i]:totable()), 1e-12)
    end
    local c = ml.randn(2, 6, 7, 9)[{{}, {1, -1, 2}, {}, {2, 9, 2}}] -- 2x3x7x4
    local d = ml.randn(2, 1, 7, 4):transpose(3, 4)                   -- 2x1x4x7
    local r2 = ml.matmul(c, d)
    assert.same({2, 3, 7, 7}, r2.shape)
    near(r2, ml.matmul(c:clone(), d:clone()), 1e-12)
    -- 1-D operands against batches
    local v = ml.randn(14)[{{1, -1, 2}}]
    near(ml.matmul(c:permute(1, 2, 4, 3), v),
      ml.matmul(c:permute(1, 2, 4, 3):clone(), v:clone()), 1e-12)
  end)
end)

describe("views: sorting", function()
  before_each(function() ml.seed(14) end)

  it("sort, argsort and topk along each dimension", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        for d = 1, v.ndim do
          same_on_clone(label .. " sort " .. d, v, function(x) return x:sort(d) end)
          same_on_clone(label .. " sort desc " .. d, v,
            function(x) return x:sort(d, {descending = true}) end)
          same_on_clone(label .. " argsort " .. d, v, function(x) return x:argsort(d) end)
          local k = math.min(3, v.shape[d])
          same_on_clone(label .. " topk " .. d, v, function(x) return x:topk(k, d) end)
          same_on_clone(label .. " topk small " .. d, v,
            function(x) return x:topk(k, d, {largest = false, sorted = false}) end)
        end
        same_on_clone(label .. " sort default", v, function(x) return ml.sort(x) end)
      end)
    end
  end)

  it("sort of a transposed view gives 1-based indices into the view", function()
    local x = ml.array({{3, 1}, {1, 2}, {2, 0}})    -- t(): {{3, 1, 2}, {1, 2, 0}}
    local v, i = x:t():sort(2)
    assert.same({{1, 2, 3}, {0, 1, 2}}, v:totable())
    assert.same({{2, 3, 1}, {3, 1, 2}}, i:totable())
    local tv, ti = x:t():topk(1, 1)
    assert.same({{3, 2, 2}}, tv:totable())
    assert.same({{1, 2, 1}}, ti:totable())
  end)
end)
