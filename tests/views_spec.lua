-- Every array operation on non-contiguous inputs: permuted and transposed,
-- stepped, narrowed, selected and expanded (zero-stride) views, and 0-size
-- and size-1 ones, each compared with the same operation on a contiguous
-- clone of the view; writes through views change their parent there and
-- nowhere else.
local ml = require "moonlab"
require "moonlab.test"

local FLOATS = {"float64", "float32"}
local DTYPES = {"float64", "float32", "int32", "int64", "uint8"}

local function is_float(t) return t == "float64" or t == "float32" end

-- Tolerances for results that may sum in another order on another layout.
local function tol_of(t) return t == "float32" and 1e-5 or 1e-12 end

-- Random data of the shape: normal floats, small integers of either sign,
-- or any uint8.
local function gen(shape, dtype)
  dtype = dtype or "float64"
  if is_float(dtype) then return ml.randn(shape, {dtype = dtype}) end
  if dtype == "uint8" then return ml.randint(0, 256, shape, {dtype = dtype}) end
  return ml.randint(-50, 50, shape, {dtype = dtype})
end

-- Non-contiguous views of the given shape (at least 1-D) over fresh random
-- data, as a list of {name, view}.
local function views(shape, dtype)
  local n, out = #shape, {}
  local function add(name, v)
    assert.same(shape, v.shape)
    out[#out + 1] = {name, v}
  end
  local rev, perm = {}, {}
  for i = 1, n do
    rev[i] = shape[n + 1 - i]
    perm[i] = n + 1 - i
  end
  add("permuted", gen(rev, dtype):permute(perm))
  if n == 2 then add("transposed", gen(rev, dtype):t()) end
  local big, spec = {}, {}
  for i = 1, n do
    big[i] = 2 * shape[i] + 1
    spec[i] = {2, 2 * shape[i], 2}
  end
  add("stepped", gen(big, dtype)[spec])
  local pad = {}
  for i = 1, n do pad[i] = shape[i] + 3 end
  local v = gen(pad, dtype)
  for i = 1, n do v = v:narrow(i, 2, shape[i]) end
  add("narrowed", v)
  local wide = {}
  for i = 1, n do wide[i] = shape[i] end
  wide[n + 1] = 3
  add("selected", gen(wide, dtype):select(n + 1, 2))
  local tail = {}
  for i = 2, n do tail[i - 1] = shape[i] end
  add("expanded", gen(tail, dtype):unsqueeze(1):expand(shape))
  return out
end

-- make(shape reversed), permuted back to shape: a non-contiguous array.
local function permuted(shape, make)
  local n, rev, perm = #shape, {}, {}
  for i = 1, n do
    rev[i] = shape[n + 1 - i]
    perm[i] = n + 1 - i
  end
  return make(rev):permute(perm)
end

local SHAPES = {{7, 31}, {257}, {1, 7}, {31, 1, 7}, {3, 1, 5, 2}, {0, 7}, {7, 0}, {1}}
local BIG = {257, 129} -- above CPU_PARALLEL_MIN: the threaded paths

local function shapes_with_big()
  local s = {}
  for i, v in ipairs(SHAPES) do s[i] = v end
  s[#s + 1] = BIG
  return s
end

local function name_of(shape) return table.concat(shape, "x") end

-- Calls fn(label, view) for every view of every shape.
local function each_view(shapes, dtype, fn)
  for _, shape in ipairs(shapes) do
    for _, nv in ipairs(views(shape, dtype)) do
      fn(nv[1] .. " " .. name_of(shape) .. " " .. (dtype or "float64"), nv[2])
    end
  end
end

-- Asserts arrays a and b have one shape and values within tol, as
-- assert.array_near does; the check runs in moonlab (these specs compare
-- many large arrays), and only a mismatch goes through array_near for its
-- message. The first spec below checks that it sees differences.
local function near(a, b, tol)
  tol = tol or 0
  if not ml.is_array(b) then return assert.array_near(a, b, tol) end
  local ok = ml.is_array(a) and #a.shape == #b.shape
  for i = 1, ok and #a.shape or 0 do ok = ok and a.shape[i] == b.shape[i] end
  if ok and a:numel() > 0 then
    local x, y = a:astype("float64"), b:astype("float64")
    local close = ml.eq(x, y) + ml.isnan(x) * ml.isnan(y)
    if tol > 0 then
      close = close + ml.le((x - y):abs(), (y:abs() + 1) * tol) * ml.isfinite(y)
    end
    ok = close:all()
  end
  if not ok then assert.array_near(a, b, tol) end
end

-- Asserts f(view) equals f(clone) within tol, and that f did not change
-- the view.
local function same_on_clone(label, v, f, tol)
  local before = v:clone()
  local c = v:clone()
  assert.is_true(c:is_contiguous())
  local ok, err = pcall(function()
    local r1, r2 = table.pack(f(v)), table.pack(f(c))
    assert.equal(r2.n, r1.n)
    for i = 1, r1.n do
      if ml.is_array(r2[i]) then
        assert.equal(r2[i].dtype, r1[i].dtype)
        near(r1[i], r2[i], tol)
      else
        assert.equal(type(r2[i]), type(r1[i]))
        if type(r2[i]) == "number" and r2[i] == r2[i] then
          assert.is_true(r1[i] == r2[i] or
            math.abs(r1[i] - r2[i]) <= (tol or 0) * (1 + math.abs(r2[i])),
            ("%.17g vs %.17g"):format(r1[i], r2[i]))
        elseif type(r2[i]) ~= "number" then
          assert.equal(r2[i], r1[i])
        end
      end
    end
    near(v, before)
  end)
  if not ok then error(label .. ": " .. tostring(err), 2) end
end

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
          for _, op in ipairs(BINARY) do
            near(a[op](a, b), ac[op](ac, bc), 0)
            near(ml[op](a, b), ac[op](ac, bc), 0)
          end
          for _, f in ipairs({function(x, y) return x + y end, function(x, y) return x - y end,
                              function(x, y) return x * y end, function(x, y) return x / y end,
                              function(x, y) return x % y end, function(x, y) return x // y end}) do
            local r, e = f(a, b), f(ac, bc)
            assert.equal(e.dtype, r.dtype, label)
            near(r, e, 0)
          end
          near(a ^ b, ac ^ bc, 0)
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

describe("views: indexing", function()
  before_each(function() ml.seed(15) end)

  it("index_select along each dimension with view inputs and view indices", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        for d = 1, v.ndim do
          local n = v.shape[d]
          if n > 0 then
            local idx = ml.randint(1, n + 1, 2 * 5 + 1)[{{1, -1, 2}}] -- stepped index
            same_on_clone(label .. " index_select " .. d, v,
              function(x) return x:index_select(d, idx) end)
            same_on_clone(label .. " index_select clone " .. d, v,
              function(x) return x:index_select(d, idx:clone()) end)
          end
          same_on_clone(label .. " index_select empty " .. d, v,
            function(x) return x:index_select(d, {}) end)
        end
      end)
    end
  end)

  it("gather and scatter along each dimension with view indices", function()
    for _, t in ipairs(DTYPES) do
      each_view(SHAPES, t, function(label, v)
        for d = 1, v.ndim do
          local n = v.shape[d]
          if n > 0 then
            local idx = permuted(v.shape, function(s) return ml.randint(1, n + 1, s) end)
            same_on_clone(label .. " gather " .. d, v,
              function(x) return x:gather(d, idx) end)
            near(v:gather(d, idx), v:clone():gather(d, idx:clone()), 0)
            -- scatter a permutation along d so that no index repeats
            local perm = v:argsort(d)
            local src = gen(v.shape, t)
            same_on_clone(label .. " scatter " .. d, v,
              function(x) return x:scatter(d, perm, src) end)
            local s = v:scatter(d, perm, src)
            near(s:gather(d, perm), src, 0)
            -- scatter from a larger, non-contiguous src (its leading block)
            local big = {}
            for k = 1, v.ndim do big[k] = v.shape[k] + 1 end
            local bsrc = permuted(big, function(s) return gen(s, t) end)
            local want = v:clone():scatter(d, perm, bsrc:clone())
            near(v:scatter(d, perm, bsrc), want, 0)
          end
        end
      end)
    end
  end)

  it("masked_select and masked_fill with view masks", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        local ms = views(v.shape, "float64")
        for _, m in ipairs(ms) do
          local mask = ml.gt(m[2], 0)
          local mask_view = ml.gt(ml.randn(v.shape), 0)
          same_on_clone(label .. " masked_select", v,
            function(x) return x:masked_select(mask) end)
          near(v:masked_select(mask), v:clone():masked_select(mask:clone()), 0)
          same_on_clone(label .. " masked_fill", v,
            function(x) return x:masked_fill(mask, 7) end)
          near(v:masked_fill(mask_view, 9), v:clone():masked_fill(mask_view, 9), 0)
        end
        -- a broadcast mask row (a zero-stride view)
        if v.ndim == 2 and v.shape[2] > 0 then
          local row = ml.gt(ml.randn(1, v.shape[2]), 0)
          same_on_clone(label .. " masked row", v, function(x) return x:masked_fill(row, 1) end)
          same_on_clone(label .. " masked row select", v,
            function(x) return x:masked_select(row:expand(v.shape)) end)
        end
      end)
    end
  end)

  it("subscripts of views read the same elements as of clones", function()
    ml.seed(2)
    local x = ml.randn(9, 13)
    local v = x:t()[{{2, -2, 3}, {1, 7}}]      -- 4x7 over a transposed view
    local c = v:clone()
    assert.same(c:totable(), v:totable())
    for i = 1, 4 do
      for j = 1, 7 do assert.equal(c[{i, j}], v[{i, j}]) end
    end
    assert.equal(x[{6, 8}], v[{3, 6}])
    near(v[2], c[2], 0)
    near(v[ml.gt(v, 0)], c[ml.gt(c, 0)], 0)
    near(v[ml.array({4, 1})], c[ml.array({4, 1})], 0)
  end)
end)

describe("views: conversions and copies", function()
  before_each(function() ml.seed(16) end)

  it("astype of views to every dtype", function()
    for _, from in ipairs(DTYPES) do
      each_view(shapes_with_big(), from, function(label, v)
        for _, to in ipairs(DTYPES) do
          same_on_clone(label .. " astype " .. to, v, function(x) return x:astype(to) end)
        end
        same_on_clone(label .. " contiguous", v, function(x) return x:contiguous() end)
      end)
    end
  end)

  it("totable and tostring of views equal those of clones", function()
    for _, t in ipairs(DTYPES) do
      each_view(SHAPES, t, function(label, v)
        assert.same(v:clone():totable(), v:totable(), label)
        assert.equal(tostring(v:clone()), tostring(v), label)
      end)
    end
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    assert.same({{1, 4}, {2, 5}, {3, 6}}, x:t():totable())
    assert.equal(tostring(ml.array({{1, 4}, {2, 5}, {3, 6}})), tostring(x:t()))
    assert.truthy(tostring(x:t()):find("[int64 3x2 " .. ml.device() .. "]", 1, true))
    local big = ml.randn(300, 200)
    assert.equal(tostring(big:t():clone()), tostring(big:t()))
    assert.same({{2}, {2}}, ml.array({{2, 3}}):narrow(2, 1, 1):expand(2, 1):totable())
  end)

  -- the flat indices (1-based, C order) of the parent that view(parent)
  -- covers, found by taking the same view of an arange
  local function covered(shape, take)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local pos = take(ml.arange(1, n + 1):reshape(shape))
    local set = {}
    for _, p in ipairs(pos:reshape(-1):totable()) do set[p] = true end
    return set, n
  end

  local TAKES = {
    {"transposed", {5, 7}, function(x) return x:t() end},
    {"stepped", {9, 13}, function(x) return x[{{2, -1, 3}, {1, -1, 4}}] end},
    {"narrowed", {9, 13}, function(x) return x:narrow(1, 3, 4):narrow(2, 2, 9) end},
    {"selected column", {9, 13}, function(x) return x:select(2, 5) end},
    {"selected row", {9, 13}, function(x) return x[4] end},
    {"permuted", {3, 4, 5}, function(x) return x:permute(3, 1, 2)[{{2, 4}}] end},
    {"empty", {4, 5}, function(x) return x:narrow(2, 3, 0) end},
    {"single", {4, 5}, function(x) return x[{{2}, {5}}] end},
  }

  it("fill and copy through a view change the parent there and nowhere else", function()
    for _, tk in ipairs(TAKES) do
      local name, shape, take = tk[1], tk[2], tk[3]
      local set, n = covered(shape, take)
      for _, t in ipairs(DTYPES) do
        local parent = gen(shape, t)
        local before = parent:reshape(-1):totable()
        take(parent):fill(3)
        local after = parent:reshape(-1):totable()
        for i = 1, n do
          assert.equal(set[i] and 3 or before[i], after[i], name .. " fill " .. t)
        end
        -- copy an array (of another dtype) into the view
        local parent2 = gen(shape, t)
        before = parent2:reshape(-1):totable()
        local v = take(parent2)
        local src = ml.randint(1, 100, v.shape)
        v:copy(src)
        near(take(parent2), src, 0)
        after = parent2:reshape(-1):totable()
        for i = 1, n do
          if not set[i] then assert.equal(before[i], after[i], name .. " copy " .. t) end
        end
        -- subscript assignment through the same view
        local parent3 = gen(shape, t)
        before = parent3:reshape(-1):totable()
        local v3 = take(parent3)
        if v3.ndim > 0 then
          local vv = v3:clone():fill(5)
          v3:copy(vv)
          after = parent3:reshape(-1):totable()
          for i = 1, n do assert.equal(set[i] and 5 or before[i], after[i], name) end
        end
      end
    end
  end)

  it("subscript assignment through a transposed view", function()
    local writes = {
      function(x) x[ml.gt(x, 0)] = 7 end,
      function(x) x[ml.gt(x, 0)] = x * 2 end,
      function(x) x[ml.lt(x, 0)] = ml.arange(6):astype("float64") end,
      function(x) x[ml.array({2, 4})] = -1 end,
      function(x) x[ml.array({4, 2})] = ml.array({{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}}) end,
      function(x) x[ml.array({1, 5})] = ml.arange(6) end,
      function(x) x[{{1, 2}, {2, 6, 2}}] = {{1, 2, 3}, {4, 5, 6}} end,
      function(x) x[{3, 4}] = 99 end,
      function(x) x[2] = 5 end,
      function(x) x[{{}, 3}] = ml.arange(5) end,
    }
    for i, write in ipairs(writes) do
      local parent = ml.randn(6, 5)
      local want = parent:t():clone()
      write(parent:t())
      write(want)
      near(parent:t(), want)
      near(parent, want:t())
    end
  end)

  it("copies a broadcast view into a view", function()
    local x = ml.zeros(4, 6)
    local v = x[{{}, {1, -1, 2}}]            -- 4x3, stride 2
    v:copy(ml.array({1, 2, 3}):unsqueeze(1):expand(4, 3))
    assert.same({{1, 0, 2, 0, 3, 0}, {1, 0, 2, 0, 3, 0}, {1, 0, 2, 0, 3, 0},
                 {1, 0, 2, 0, 3, 0}}, x:totable())
    x:t()[2]:copy(ml.array({9, 8, 7, 6}))    -- column 2 through a transposed view
    assert.same({9, 8, 7, 6}, x:select(2, 2):totable())
    x[{{}, 4}] = ml.array({5}):expand(4)
    assert.same({5, 5, 5, 5}, x:select(2, 4):totable())
  end)

  it("copies between overlapping views of one storage as if through a copy", function()
    local x = ml.arange(10)
    x:narrow(1, 2, 9):copy(x:narrow(1, 1, 9))
    assert.same({0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, x:totable())
    local y = ml.arange(10)
    y:narrow(1, 1, 9):copy(y:narrow(1, 2, 9))
    assert.same({1, 2, 3, 4, 5, 6, 7, 8, 9, 9}, y:totable())
    local m = ml.arange(9):reshape(3, 3)
    m:copy(m:t())
    assert.same({{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}, m:totable())
    local r = ml.arange(6):reshape(2, 3)
    r[2] = r[1]
    r[{{1}}] = r[{{2}}]:t():t()
    assert.same({{0, 1, 2}, {0, 1, 2}}, r:totable())
  end)

  it("fill through an expanded view lands in the parent's elements", function()
    local base = ml.zeros(1, 3)
    local e = base:expand(4, 3)
    e:fill(2)
    assert.same({{2, 2, 2}}, base:totable())
  end)
end)

describe("views: shapes", function()
  before_each(function() ml.seed(17) end)

  it("reshape of a non-contiguous view copies; view() refuses", function()
    each_view({{7, 31}, {31, 1, 7}, BIG}, "float64", function(label, v)
      local n = v:numel()
      local r = v:reshape(-1)
      assert.same({n}, r.shape)
      near(r, v:clone():reshape(-1), 0)
      local r2 = v:reshape(v.shape[#v.shape], -1)
      near(r2, v:clone():reshape(v.shape[#v.shape], -1), 0)
      near(v:flatten(), v:clone():flatten(), 0)
      if not v:is_contiguous() and not label:find("^expanded") then
        local ok, err = pcall(function() return v:view(-1) end)
        if not ok then
          assert.truthy(err:find("view: this non-contiguous view cannot be reshaped without a copy", 1, true))
        end
      end
    end)
    local t = ml.randn(4, 5):t()
    assert.has_error(function() t:view(20) end,
      "view: this non-contiguous view cannot be reshaped without a copy; use reshape or contiguous")
    -- a reshape that a view can express stays a view of the storage
    local sv = t:view(5, 1, 4)
    sv[{1, 1, 1}] = 42
    assert.equal(42, t[{1, 1}])
    -- reshape of a transposed view is a copy: writes do not reach the view
    local rc = t:reshape(20)
    rc[1] = -1
    assert.equal(42, t[{1, 1}])
  end)

  it("cat and stack of views equal cat and stack of clones", function()
    for _, t in ipairs(DTYPES) do
      for _, shape in ipairs({{7, 31}, {31, 1, 7}, {0, 7}, {1}}) do
        local vs = views(shape, t)
        local list, clones = {}, {}
        for i, nv in ipairs(vs) do
          list[i] = nv[2]
          clones[i] = nv[2]:clone()
        end
        for d = 1, #shape do
          near(ml.cat(list, d), ml.cat(clones, d), 0)
        end
        for d = 1, #shape + 1 do
          near(ml.stack(list, d), ml.stack(clones, d), 0)
        end
      end
    end
    -- mixed dtypes promote
    local a = ml.randint(0, 9, 3, 4, {dtype = "int32"}):t()
    local b = ml.randn(3, 2):t()
    local c = ml.cat({a, b}, 1)
    assert.equal("float64", c.dtype)
    near(c, ml.cat({a:clone():astype("float64"), b:clone()}, 1), 0)
  end)

  it("split, squeeze, unsqueeze, narrow and select of views are views", function()
    local x = ml.randn(6, 8)
    local v = x:t()                               -- 8x6
    local parts = v:split(3, 2)
    assert.equal(2, #parts)
    near(parts[2], v:clone():narrow(2, 4, 3), 0)
    parts[2]:fill(0)
    assert.equal(0, x[{5, 1}])
    near(v:unsqueeze(2):squeeze(2), v, 0)
    assert.same({8, 1, 6}, v:unsqueeze(2).shape)
  end)
end)

describe("views: files", function()
  before_each(function() ml.seed(18) end)

  it("save_npy of a view then load_npy gives the view's values", function()
    local path = os.tmpname()
    for _, t in ipairs(DTYPES) do
      each_view({{7, 31}, {257}, {31, 1, 7}, {0, 7}, {1}}, t, function(label, v)
        ml.save_npy(path, v)
        local r = ml.load_npy(path)
        assert.equal(t, r.dtype, label)
        assert.same(v.shape, r.shape, label)
        near(r, v:clone(), 0)
      end)
    end
    os.remove(path)
  end)

  it("save_csv of a transposed view then load_csv", function()
    local path = os.tmpname()
    local v = ml.randint(-9, 9, 3, 5):t()
    ml.save_csv(path, v)
    near(ml.load_csv(path), v:astype("float64"), 0)
    os.remove(path)
  end)
end)
