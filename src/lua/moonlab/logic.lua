-- NumPy's logic and comparison functions and a few elementwise ones, as
-- compositions of the elementwise primitives (src/bindings/l_elementwise.c):
-- logical_and logical_or logical_xor isclose allclose array_equal, clip
-- (clamp under NumPy's name), relu and sign. init.lua installs them:
-- install(ml) adds them to ml and to the array methods (x:isclose(y) is
-- ml.isclose(x, y)).
local check_options = require("moonlab.options").check
local is_float = require("moonlab.args").is_float

local M = {}

local ml -- the module, given by install

-- Calls fn(...) and returns its result, or raises its error under the
-- name of the function the user called rather than the primitive's.
local function named(name, fn, ...)
  local ok, r = pcall(fn, ...)
  if ok then return r end
  local msg = tostring(r):gsub("^[^:\n]*:%d+: ", ""):gsub("^[%w_%.]+: ", "")
  error(name .. ": " .. msg, 3)
end

-- v as an array on like's device (like may be nil or not an array): a
-- number becomes a 0-d array of like's float dtype, else float64, as a
-- Lua number is a weak scalar.
local function array_of(v, like)
  if ml.is_array(v) then return v end
  like = ml.is_array(like) and like or nil
  local device = like and like.device or nil
  if type(v) == "number" then
    local dtype = like and is_float(like) and like.dtype or "float64"
    return ml.full({}, v, {dtype = dtype, device = device})
  end
  return ml.array(v, {device = device})
end

-- a and b as arrays on one device.
local function arrays(a, b)
  return array_of(a, b), array_of(b, a)
end

-- Truth as uint8 masks: logical_not(x) is 1 where x is 0, so that
-- NaN counts as true, as in NumPy.
local function falsity(a, b)
  a, b = arrays(a, b)
  return ml.logical_not(a), ml.logical_not(b)
end

function M.logical_and(a, b)
  return named("logical_and", function()
    local na, nb = falsity(a, b)
    return ml.logical_not(ml.maximum(na, nb))
  end)
end

function M.logical_or(a, b)
  return named("logical_or", function()
    local na, nb = falsity(a, b)
    return ml.logical_not(ml.minimum(na, nb))
  end)
end

function M.logical_xor(a, b)
  return named("logical_xor", function()
    local na, nb = falsity(a, b)
    return ml.ne(na, nb)
  end)
end

-- numpy.isclose: |a - b| <= atol + rtol * |b| where b is finite (b as a
-- float, integers as float64), a == b where it is not (an infinity is
-- close only to itself), and NaN close to NaN with equal_nan.
local function isclose(name, a, b, opts)
  check_options(name, opts)
  opts = opts or {}
  local rtol, atol = opts.rtol or 1e-5, opts.atol or 1e-8
  return named(name, function()
    a, b = arrays(a, b)
    if not is_float(b) then b = b:astype("float64") end
    local within = ml.le(ml.abs(ml.sub(a, b)), ml.abs(b) * rtol + atol)
    local close = ml.where(ml.isfinite(b), within, ml.eq(a, b))
    if opts.equal_nan then
      close = ml.maximum(close, ml.minimum(ml.isnan(a), ml.isnan(b)))
    end
    return close
  end)
end

function M.isclose(a, b, opts) return isclose("isclose", a, b, opts) end

function M.allclose(a, b, opts)
  return isclose("allclose", a, b, opts):all()
end

-- numpy.array_equal: the same shape and equal elements (NaN equal to NaN
-- with equal_nan); dtypes may differ.
function M.array_equal(a, b, opts)
  check_options("array_equal", opts)
  local equal_nan = opts and opts.equal_nan
  return named("array_equal", function()
    a, b = arrays(a, b)
    if a.ndim ~= b.ndim then return false end
    for d = 1, a.ndim do
      if a.shape[d] ~= b.shape[d] then return false end
    end
    local eq = ml.eq(a, b)
    if equal_nan then eq = ml.maximum(eq, ml.minimum(ml.isnan(a), ml.isnan(b))) end
    return eq:all()
  end)
end

function M.clip(x, lo, hi)
  return named("clip", ml.clamp, x, lo, hi)
end

-- max(x, 0); NaN stays NaN.
function M.relu(x)
  return named("relu", ml.clamp, x, 0)
end

-- numpy.sign: -1, 0 or 1 in x's dtype, NaN for NaN.
function M.sign(x)
  return named("sign", function()
    x = array_of(x)
    local s = ml.gt(x, 0):astype(x.dtype) - ml.lt(x, 0):astype(x.dtype)
    if is_float(x) then s = ml.where(ml.isnan(x), x, s) end
    return s
  end)
end

local NAMES = {"logical_and", "logical_or", "logical_xor", "isclose",
               "allclose", "array_equal", "clip", "relu", "sign"}

-- Adds the functions to ml and its methods.
function M.install(module)
  ml = module
  for _, name in ipairs(NAMES) do
    ml[name] = M[name]
    ml.methods[name] = M[name]
  end
end

return M
