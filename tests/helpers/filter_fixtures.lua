-- The fixtures of tests/fixtures/filter/make.py as the filter specs read
-- them, on the default device: a group's inputs (x1, x2, ... or w1, ...)
-- and its results, all flattened one after the other into one file in
-- make.py's order.
local ml = require "moonlab"

local M = {}

local DIR = "tests/fixtures/filter/"

function M.load(name) return ml.load_npy(DIR .. name .. ".npy"):to(ml.device()) end

-- The inputs of a group (x1, x2, ... or w1, ...) until one is missing.
function M.inputs(group, kind)
  local t = {}
  while true do
    local path = ("%s%s_%s%d.npy"):format(DIR, group, kind, #t + 1)
    local f = io.open(path)
    if not f then return t end
    f:close()
    t[#t + 1] = ml.load_npy(path):to(ml.device())
  end
end

-- The group's results in make.py's order: next(shape) returns the next
-- one; done() tells whether all were read.
function M.results(group)
  local ref, pos = M.load(group .. "_out"), 0
  local function next_result(shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local r = ref:narrow(1, pos + 1, n):reshape(shape)
    pos = pos + n
    return r
  end
  return next_result, function() return pos == ref:numel() end
end

-- Tolerance for a result summing k taps of |w| |x| at most scale: double
-- sums, or float32 ones on a GPU (core/filter_backend.h).
function M.tol(dt, k, scale)
  if dt == "float64" then return {rtol = 1e-12, atol = 1e-12 * scale} end
  return {rtol = 2^-22, atol = 2^-23 * (k + 2) * scale}
end

return M
