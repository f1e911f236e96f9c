-- The argument checks that the Lua compositions share. Each function that
-- raises takes a level, counted as error's is from the function that
-- calls it: 2 blames its caller's caller, the user's line when the caller
-- is the public function. init.lua installs this module first, as array
-- needs the module table.
local M = {}

local ml -- the module, given by install

-- Raises fmt:format(...) at the given level above the caller.
function M.fail(level, fmt, ...)
  error(fmt:format(...), level + 1)
end
local fail = M.fail

-- The shape of x (an array, or a shape as a table) as "2x3", "()" for 0-d.
function M.shape_str(x)
  local shape = type(x) == "table" and x or x.shape
  if #shape == 0 then return "()" end
  return table.concat(shape, "x")
end

-- x as an array: itself, or ml.array(x) for tables and numbers.
function M.array(x)
  if ml.is_array(x) then return x end
  return ml.array(x)
end

function M.is_float(x)
  return x.dtype == "float32" or x.dtype == "float64"
end

-- v as an integer (integral floats too, but not infinities or floats
-- beyond the integers' range), else an error naming it what.
function M.integer(level, name, what, v)
  local i = math.type(v) and math.tointeger(v)
  if not i then
    fail(level + 1, "%s: %s must be an integer, not %s", name, what,
         tostring(v))
  end
  return i
end
local integer = M.integer

-- The 1-based dimension d (negative from the end) of nd as 1..nd.
function M.dim_of(level, name, d, nd)
  d = integer(level + 1, name, "dimension", d)
  local a = d < 0 and nd + d + 1 or d
  if d == 0 or a < 1 or a > nd then
    fail(level + 1, "%s: dimension %d out of range for %d dimensions", name,
         d, nd)
  end
  return a
end

function M.install(module)
  ml = module
end

return M
