-- Helpers shared by the CUDA specs (cuda_spec.lua, cuda_knn_spec.lua):
-- random inputs made on the CPU and compared on both devices. Load with
-- `require "tests.helpers.cuda"` on a machine with a GPU.
local ml = require "moonlab"
local assert = require "luassert"

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

return {
  GPU = GPU, values = values, close = close, same = same, same2 = same2,
  same_error = same_error, floats = floats, ints = ints, dtypes = dtypes,
  is_float = is_float, input = input, pair = pair, shapes = shapes,
  shape_name = shape_name,
}
