-- Test helpers for busted specs. `require "moonlab.test"` registers on
-- luassert's assert:
--   assert.array_equal(actual, desired)
--     numpy.testing.assert_array_equal: the same shape, the same dtype when
--     desired is an array too, and the same values (NaN equals NaN);
--   assert.allclose(actual, desired, {rtol = 1e-7, atol = 0, equal_nan = true})
--     numpy.testing.assert_allclose: the same shape and, elementwise,
--     |actual - desired| <= atol + rtol * |desired|;
--   assert.array_near(actual, expected, tol)
--     |actual - expected| <= tol * (1 + |expected|), NaN matches NaN;
-- and makes assert.same compare arrays, also inside tables, as array_equal
-- does. desired and expected may be arrays, nested tables or numbers; a
-- number or a 0-d array stands for every element, as in NumPy. Arrays on
-- any device are read back to the host once. A failure names the first
-- differing element by its 1-based index, both values and the number of
-- mismatches; every assertion also works negated (assert.is_not.allclose).
local ml = require "moonlab"
local check_options = require("moonlab.options").check
local assert = require "luassert"
local namespace = require "luassert.namespaces"
local util = require "luassert.util"
local say = require "say"

local M = {}

local function shape_string(shape)
  return #shape == 0 and "scalar" or table.concat(shape, "x")
end

local function same_shape(s, t)
  if #s ~= #t then return false end
  for i = 1, #s do
    if s[i] ~= t[i] then return false end
  end
  return true
end

-- The shortest decimal that reads back as v (in v's dtype for float32).
local function number_string(v, dtype)
  if math.type(v) == "integer" then return ("%d"):format(v) end
  if v ~= v then return "nan" end
  if v == math.huge or v == -math.huge then return v > 0 and "inf" or "-inf" end
  for digits = 1, 17 do
    local s = ("%." .. digits .. "g"):format(v)
    local back = tonumber(s)
    if dtype == "float32" then back = string.unpack("f", string.pack("f", back)) end
    if back == v then return s end
  end
end

-- The 1-based index {i, j, ...} of the i-th element in row-major order.
local function index_string(i, shape)
  local index = {}
  i = i - 1
  for d = #shape, 1, -1 do
    index[d] = i % shape[d] + 1
    i = i // shape[d]
  end
  return "{" .. table.concat(index, ", ") .. "}"
end

-- An operand as {values = its values on the host, flat, in its dtype;
-- shape; dtype (nil for a number); array = whether it was an array, whose
-- dtype then counts; scalar = whether it stands for every element}.
local function operand(v, fname, what)
  if type(v) == "number" then
    return {values = {v}, shape = {}, scalar = true}
  end
  local dtype
  if ml.is_array(v) then
    dtype = v.dtype
  elseif type(v) == "table" then
    v = ml.array(v)
  else
    error(("%s: %s must be an array, a table or a number, got %s"):format(fname, what, type(v)), 0)
  end
  local host = v.device == "cpu" and v or v:cpu()
  return {values = host:reshape(-1):totable(), shape = v.shape, dtype = dtype or v.dtype,
          array = dtype ~= nil, scalar = v.ndim == 0}
end

-- Compares every element with ok(a, d); returns nil when all pass, else
-- the lines that describe the mismatches, as numpy.testing prints them.
local function mismatches(actual, desired, ok)
  local a, d = actual.values, desired.values
  local count, first, max_abs, max_rel = 0, nil, nil, nil
  for i = 1, #a do
    local x, y = a[i], d[desired.scalar and 1 or i]
    if not ok(x, y) then
      count = count + 1
      first = first or i
      local diff = math.abs(x - y)
      if diff == diff and diff ~= math.huge then
        max_abs = math.max(max_abs or 0, diff)
        max_rel = math.max(max_rel or 0, y == 0 and math.huge or diff / math.abs(y))
      end
    end
  end
  if count == 0 then return nil end
  local x, y = a[first], d[desired.scalar and 1 or first]
  local lines = {
    ("Mismatched elements: %d / %d (%.3g%%)"):format(count, #a, 100 * count / #a),
    ("First mismatch at index %s: %s (actual), %s (desired)"):format(index_string(first, actual.shape),
      number_string(x, actual.dtype), number_string(y, desired.dtype)),
  }
  if max_abs then
    lines[3] = ("Max absolute difference among violations: %.5g"):format(max_abs)
    lines[4] = ("Max relative difference among violations: %.5g"):format(max_rel)
  end
  return table.concat(lines, "\n")
end

local function shapes_differ(actual, desired)
  if desired.scalar or same_shape(actual.shape, desired.shape) then return nil end
  return ("(shapes %s, %s mismatch)"):format(shape_string(actual.shape), shape_string(desired.shape))
end

local function equal(x, y) return x == y or (x ~= x and y ~= y) end

-- Returns nil when actual and desired are equal as array_equal sees them,
-- else a message that says how they differ.
function M.array_equal(actual, desired)
  local a = operand(actual, "array_equal", "actual")
  local d = operand(desired, "array_equal", "desired")
  local why = shapes_differ(a, d)
  if not why and a.array and d.array and a.dtype ~= d.dtype then
    why = ("(dtypes %s, %s mismatch)"):format(a.dtype, d.dtype)
  end
  why = why or mismatches(a, d, equal)
  return why and "Arrays are not equal\n" .. why
end

local function allclose_options(opts)
  check_options("test.allclose", opts)
  if opts == nil then return 1e-7, 0, true end
  local equal_nan = opts.equal_nan
  if equal_nan == nil then equal_nan = true end
  return opts.rtol or 1e-7, opts.atol or 0, equal_nan
end

-- Returns nil when actual and desired are close as allclose sees them, else
-- a message that says how they differ; then the tolerance ("rtol=..., atol=...").
function M.allclose(actual, desired, opts)
  local rtol, atol, equal_nan = allclose_options(opts)
  local tolerance = ("rtol=%g, atol=%g"):format(rtol, atol)
  local a = operand(actual, "allclose", "actual")
  local d = operand(desired, "allclose", "desired")
  local why = shapes_differ(a, d) or mismatches(a, d, function(x, y)
    if x == y then return true end
    if x ~= x or y ~= y then return equal_nan and x ~= x and y ~= y end
    if math.abs(x) == math.huge or math.abs(y) == math.huge then return false end
    return math.abs(x - y) <= atol + rtol * math.abs(y)
  end)
  return why and "Not equal to tolerance " .. tolerance .. "\n" .. why, tolerance
end

-- Returns nil when they match, else a message naming the first mismatch.
function M.compare(actual, expected, tol)
  tol = tol or 1e-12
  if not ml.is_array(actual) then
    return "expected an array, got " .. type(actual)
  end
  local a = operand(actual, "array_near", "actual")
  local e = operand(expected, "array_near", "expected")
  if type(expected) ~= "number" and not same_shape(a.shape, e.shape) then
    return ("shape %s differs from %s"):format(shape_string(a.shape), shape_string(e.shape))
  end
  for i = 1, #a.values do
    local x, y = a.values[i], e.values[e.scalar and 1 or i]
    local ok
    if y ~= y then ok = x ~= x
    elseif y == math.huge or y == -math.huge then ok = x == y
    else ok = math.abs(x - y) <= tol * (1 + math.abs(y)) end
    if not ok then
      return ("element %d: %.17g differs from expected %.17g (tol %g)"):format(i, x, y, tol)
    end
  end
end

-- Once compared, nested tables become arrays, which failure messages print
-- as the shell does.
local function tables_to_arrays(args)
  for i = 1, 2 do
    if type(args[i]) == "table" and not ml.is_array(args[i]) then args[i] = ml.array(args[i]) end
  end
end

local function array_equal(state, args)
  local why = M.array_equal(args[1], args[2])
  tables_to_arrays(args)
  state.failure_message = why or "Expected arrays to differ, but they are equal"
  return why == nil
end

local function allclose(state, args)
  local why, tolerance = M.allclose(args[1], args[2], args[3])
  tables_to_arrays(args)
  state.failure_message = why or "Expected arrays to differ, but they are equal to tolerance " .. tolerance
  return why == nil
end

local function array_near(state, args)
  local msg = M.compare(args[1], args[2], args[3])
  if msg then
    state.failure_message = "arrays differ: " .. msg
    return false
  end
  return true
end

-- assert.same: where either side holds an array, a deep comparison that
-- compares arrays as array_equal does; otherwise luassert's own.
local function holds_array(v, seen)
  if ml.is_array(v) then return true end
  if type(v) ~= "table" or seen[v] then return false end
  seen[v] = true
  for _, x in pairs(v) do
    if holds_array(x, seen) then return true end
  end
  return false
end

local function key_string(k)
  return type(k) == "string" and k:match("^[%a_][%w_]*$") and "." .. k or "[" .. tostring(k) .. "]"
end

-- Returns nil when expected and actual are the same, else a message that
-- starts with the path (e.g. ".weights[2]") where they differ.
local function deep_difference(expected, actual, path, seen)
  if ml.is_array(expected) and ml.is_array(actual) then
    local why = M.array_equal(actual, expected)
    return why and (path ~= "" and "at " .. path .. ": " or "") .. why
  end
  local function kind(v) return ml.is_array(v) and "array" or type(v) end
  if kind(expected) ~= "table" or kind(actual) ~= "table" then
    local where = path == "" and "value" or path
    if kind(expected) ~= kind(actual) then
      return ("%s: expected %s, got %s"):format(where, kind(expected), kind(actual))
    elseif expected ~= actual then
      return ("%s: expected %s, got %s"):format(where, tostring(expected), tostring(actual))
    end
    return nil
  end
  if seen[expected] == actual then return nil end
  seen[expected] = actual
  for k, v in pairs(expected) do
    local why = deep_difference(v, actual[k], path .. key_string(k), seen)
    if why then return why end
  end
  for k in pairs(actual) do
    if expected[k] == nil then
      return ("%s: unexpected key"):format(path .. key_string(k))
    end
  end
end

local entry = namespace.assertion.same
local luassert_same = entry.luassert_same or entry.callback

local function same(state, args, level)
  local expected, actual = args[1], args[2]
  if not (holds_array(expected, {}) or holds_array(actual, {})) then
    return luassert_same(state, args, level)
  end
  local why = deep_difference(expected, actual, "", {})
  local user = args[3]
  -- the standard message prints the actual value first, as luassert's does
  util.tinsert(args, 1, util.tremove(args, 2))
  state.failure_message = (user and tostring(user) .. "\n" or "") ..
    (why or "Expected objects to differ, but they are the same")
  return why == nil
end

assert:register("assertion", "same", same, "assertion.same.positive", "assertion.same.negative")
namespace.assertion.same.luassert_same = luassert_same

say:set("assertion.array_equal.positive", "Actual:\n%s\nDesired:\n%s")
say:set("assertion.array_equal.negative", "Actual:\n%s\nDesired:\n%s")
assert:register("assertion", "array_equal", array_equal, "assertion.array_equal.positive",
  "assertion.array_equal.negative")
say:set("assertion.allclose.positive", "Actual:\n%s\nDesired:\n%s")
say:set("assertion.allclose.negative", "Actual:\n%s\nDesired:\n%s")
assert:register("assertion", "allclose", allclose, "assertion.allclose.positive",
  "assertion.allclose.negative")
say:set("assertion.array_near.negative", "Expected arrays to differ")
assert:register("assertion", "array_near", array_near, "assertion.array_near.positive",
  "assertion.array_near.negative")

-- Failure messages print arrays as the shell does.
assert:add_formatter(function(v)
  if ml.is_array(v) then return tostring(v) end
end)

return M
