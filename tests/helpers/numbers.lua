-- Comparing Lua numbers and nested tables of numbers (what x:totable()
-- gives) in specs. Load with `require "tests.helpers.numbers"`.
local M = {}

-- Whether a and e (numbers, or nested tables of one shape) agree within
-- tol, default 1e-12, relative to 1 + |e|; NaN matches NaN and infinities
-- match exactly.
function M.near(a, e, tol)
  tol = tol or 1e-12
  if type(a) == "table" or type(e) == "table" then
    if type(a) ~= "table" or type(e) ~= "table" or #a ~= #e then return false end
    for i = 1, #e do
      if not M.near(a[i], e[i], tol) then return false end
    end
    return true
  end
  if type(a) ~= "number" or type(e) ~= "number" then return false end
  if e ~= e then return a ~= a end
  if e == math.huge or e == -math.huge then return a == e end
  return math.abs(a - e) <= tol * (1 + math.abs(e))
end

-- Raises, naming both sides, unless actual and expected are near.
function M.assert_near(actual, expected, tol)
  if not M.near(actual, expected, tol) then
    local pretty = require("pl.pretty").write
    error(("expected %s, got %s"):format(pretty(expected), pretty(actual)), 2)
  end
end

return M
