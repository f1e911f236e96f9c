-- Test helpers for busted specs: `require "moonlab.test"` registers
--   assert.array_near(actual, expected, tol)
-- which compares shapes, then values elementwise within tol (absolute and
-- relative: |a - e| <= tol * (1 + |e|)); NaN matches NaN, infinities must
-- be equal. expected may be an array, a nested table or a number.
local ml = require "moonlab"
local assert = require "luassert"
local say = require "say"

local M = {}

local function flat(x)
  if type(x) == "number" then return {x}, {} end
  if not ml.is_array(x) then x = ml.array(x, {dtype = "float64"}) end
  local t = x:astype("float64"):reshape(-1):totable()
  return t, x.shape
end

-- Returns nil when they match, else a message naming the first mismatch.
function M.compare(actual, expected, tol)
  tol = tol or 1e-12
  if not ml.is_array(actual) then
    return "expected an array, got " .. type(actual)
  end
  local a, ashape = flat(actual)
  local e, eshape = flat(expected)
  if type(expected) ~= "number" then
    if #ashape ~= #eshape then
      return ("shape %s differs from %s"):format(table.concat(ashape, "x"), table.concat(eshape, "x"))
    end
    for i = 1, #ashape do
      if ashape[i] ~= eshape[i] then
        return ("shape %s differs from %s"):format(table.concat(ashape, "x"), table.concat(eshape, "x"))
      end
    end
  end
  for i = 1, #a do
    local x, y = a[i], e[#e == 1 and 1 or i]
    local ok
    if y ~= y then ok = x ~= x
    elseif y == math.huge or y == -math.huge then ok = x == y
    else ok = math.abs(x - y) <= tol * (1 + math.abs(y)) end
    if not ok then
      return ("element %d: %.17g differs from expected %.17g (tol %g)"):format(i, x, y, tol)
    end
  end
end

local function array_near(state, args)
  local msg = M.compare(args[1], args[2], args[3])
  if msg then
    state.failure_message = "arrays differ: " .. msg
    return false
  end
  return true
end

say:set("assertion.array_near.negative", "Expected arrays to differ")
assert:register("assertion", "array_near", array_near, "assertion.array_near.positive",
  "assertion.array_near.negative")

return M
