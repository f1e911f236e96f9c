-- Helpers shared by the view specs (views_compute_spec.lua and
-- views_data_spec.lua): random data, non-contiguous views of a shape, and
-- comparisons of an operation on a view with the same operation on a
-- contiguous clone of it. Load with `require "tests.helpers.views"` (busted
-- runs from the repository root).
local ml = require "moonlab"
local assert = require "luassert"
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
-- message. views_compute_spec.lua's first spec checks that it sees
-- differences.
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

return {
  FLOATS = FLOATS, DTYPES = DTYPES, SHAPES = SHAPES, BIG = BIG,
  is_float = is_float, tol_of = tol_of, gen = gen, views = views,
  permuted = permuted, shapes_with_big = shapes_with_big, name_of = name_of,
  each_view = each_view, near = near, same_on_clone = same_on_clone,
}
