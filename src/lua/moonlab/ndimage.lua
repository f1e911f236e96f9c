-- The filters of ml.ndimage that are compositions, in Lua, with
-- scipy.ndimage's semantics and defaults: gaussian_filter and
-- gaussian_filter1d (masks computed here as SciPy computes them),
-- uniform_filter (ml.ndimage.uniform_filter1d along each axis) and sobel.
-- The Gaussian's and Sobel's passes go through one primitive of
-- src/bindings/l_filter.c that is no public function, left in
-- package.loaded["moonlab.ndimage_core"]: one-dimensional masks along
-- some axes in order, each pass rounded to the dtype (on a GPU the last
-- two axes run in one kernel). init.lua installs them: install(ml) adds
-- them to ml.ndimage.
local check_options = require("moonlab.options").check
local core = require "moonlab.ndimage_core"
local args = require "moonlab.args"
local fail, array = args.fail, args.array

local M = {}

local ml -- the module, given by install

local MODES = {
  reflect = true, constant = true, nearest = true, mirror = true, wrap = true,
  ["grid-mirror"] = true, ["grid-constant"] = true, ["grid-wrap"] = true,
}

local function is_list(v)
  return type(v) == "table" and not ml.is_array(v)
end

-- v, or each entry of the list v (one per dimension), as a list of nd
-- values, each checked by ok (which returns the message's end when it
-- fails), at the given level above the caller.
local function per_axis(level, name, what, v, nd, ok)
  local t = {}
  if is_list(v) then
    if #v ~= nd then
      fail(level + 1, "%s: %s must have one entry for each of the %d dimensions, not %d",
           name, what, nd, #v)
    end
    for i = 1, nd do t[i] = v[i] end
  else
    for i = 1, nd do t[i] = v end
  end
  for i = 1, nd do
    local why = ok(t[i])
    if why then fail(level + 1, "%s: %s %s", name, what, why) end
  end
  return t
end

local function mode_ok(m)
  if type(m) ~= "string" or not MODES[m] then
    return ("'%s' is unknown (reflect, constant, nearest, mirror or wrap)"):format(tostring(m))
  end
end

local function integer_ok(lo)
  return function(v)
    if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
      return ("must be an integer, not %s"):format(tostring(v))
    end
    if v < lo then return ("must be %d or more, not %s"):format(lo, tostring(v)) end
  end
end

local function number_ok(v)
  if type(v) ~= "number" then return ("must be a number, not %s"):format(type(v)) end
end

-- The 1-based axis (negative counts from the end) as 1..nd.
local function axis_of(level, name, axis, nd)
  local a = axis < 0 and nd + axis + 1 or axis
  if axis == 0 or a < 1 or a > nd then
    fail(level + 1, "%s: axis %d is out of range for %d dimensions", name, axis, nd)
  end
  return a
end

-- The passes of masks (a list of nd masks, false for none) in axis order.
local function passes(name, x, masks, modes, cval)
  local origins = {}
  for i = 1, x:dim() do origins[i] = 0 end
  return core.separable(name, x, masks, origins, modes, cval)
end

-- The correlation mask of a Gaussian of the given order and radius, as
-- scipy.ndimage's _gaussian_kernel1d computes it (reversed for
-- correlate1d): phi(x) = exp(-x^2 / (2 sigma^2)) normalised to sum 1,
-- times the polynomial q with (q phi)^(order) = q phi. A list of numbers.
local function gaussian_mask(sigma, order, radius)
  local s2 = sigma * sigma
  local phi, sum = {}, 0
  for i = -radius, radius do
    local v = math.exp(-0.5 / s2 * (i * i))
    phi[#phi + 1] = v
    sum = sum + v
  end
  for k = 1, #phi do phi[k] = phi[k] / sum end
  local w = phi
  if order > 0 then
    local q = {[0] = 1}
    for i = 1, order do q[i] = 0 end
    for _ = 1, order do
      local nq = {}
      for i = 0, order do
        nq[i] = (i < order and (i + 1) * q[i + 1] or 0) + (i > 0 and -q[i - 1] / s2 or 0)
      end
      q = nq
    end
    w = {}
    for k = 1, #phi do
      local x, p, xp = k - radius - 1, 0, 1
      for i = 0, order do
        p = p + q[i] * xp
        xp = xp * x
      end
      w[k] = p * phi[k]
    end
  end
  local r = {}
  for k = 1, #w do r[k] = w[#w + 1 - k] end
  return r
end

-- A mask as core.separable takes it whatever x's device: a float64 array
-- on the CPU, a parameter that the GPU's kernels take in their arguments
-- (no copy to the device before them).
local function host_mask(values)
  return ml.array(values, {dtype = "float64", device = "cpu"})
end

-- The last Gaussian masks made, with their parameters, newest first, so
-- that a filter called in a loop does not compute its masks at every
-- call (compared as numbers: a key formatted from them costs more than
-- the rest of the call's Lua).
local MASKS_KEPT = 8
local masks_made = {}

local function gaussian_mask_of(sigma, order, radius)
  for i = 1, #masks_made do
    local e = masks_made[i]
    if e.sigma == sigma and e.order == order and e.radius == radius then return e.mask end
  end
  local e = {sigma = sigma, order = order, radius = radius,
             mask = host_mask(gaussian_mask(sigma, order, radius))}
  table.insert(masks_made, 1, e)
  masks_made[MASKS_KEPT + 1] = nil
  return e.mask
end

local function radius_of(sigma, truncate, radius)
  if radius then return radius end
  return math.floor(truncate * sigma + 0.5)
end

function M.gaussian_filter1d(x, sigma, opts)
  local name = "ndimage.gaussian_filter1d"
  check_options(name, opts)
  opts = opts or {}
  x = array(x)
  local nd = x:dim()
  if nd < 1 then fail(2, "%s: expects an array of 1 or more dimensions, got a scalar", name) end
  if type(sigma) ~= "number" or not (sigma > 0) then
    fail(2, "%s: sigma must be a positive number, not %s", name, tostring(sigma))
  end
  local order = opts.order or 0
  local why = integer_ok(0)(order)
  if why then fail(2, "%s: order %s", name, why) end
  why = opts.radius and integer_ok(0)(opts.radius)
  if why then fail(2, "%s: radius %s", name, why) end
  local mode = opts.mode or "reflect"
  if mode_ok(mode) then fail(2, "%s: mode %s", name, mode_ok(mode)) end
  local a = axis_of(2, name, opts.axis or -1, nd)
  local masks, modes = {}, {}
  for i = 1, nd do masks[i], modes[i] = false, mode end
  masks[a] = gaussian_mask_of(sigma, order, radius_of(sigma, opts.truncate or 4, opts.radius))
  return passes(name, x, masks, modes, opts.cval or 0)
end

function M.gaussian_filter(x, sigma, opts)
  local name = "ndimage.gaussian_filter"
  check_options(name, opts)
  opts = opts or {}
  x = array(x)
  local nd = x:dim()
  if nd < 1 then fail(2, "%s: expects an array of 1 or more dimensions, got a scalar", name) end
  local sigmas = per_axis(2, name, "sigma", sigma, nd, number_ok)
  local orders = per_axis(2, name, "order", opts.order or 0, nd, integer_ok(0))
  local modes = per_axis(2, name, "mode", opts.mode or "reflect", nd, mode_ok)
  local radii = opts.radius and per_axis(2, name, "radius", opts.radius, nd, integer_ok(0)) or {}
  local truncate = opts.truncate or 4
  local masks = {}
  for i = 1, nd do
    -- SciPy leaves out the axes whose sigma is 1e-15 or less
    masks[i] = sigmas[i] > 1e-15
      and gaussian_mask_of(sigmas[i], orders[i], radius_of(sigmas[i], truncate, radii[i]))
  end
  return passes(name, x, masks, modes, opts.cval or 0)
end

function M.uniform_filter(x, size, opts)
  local name = "ndimage.uniform_filter"
  if opts == nil and type(size) == "table" and not ml.is_array(size) and size[1] == nil then
    size, opts = nil, size
  end
  check_options(name, opts)
  opts = opts or {}
  x = array(x)
  local nd = x:dim()
  if nd < 1 then fail(2, "%s: expects an array of 1 or more dimensions, got a scalar", name) end
  local sizes = per_axis(2, name, "size", size or 3, nd, integer_ok(1))
  local origins = per_axis(2, name, "origin", opts.origin or 0, nd, integer_ok(-math.huge))
  local modes = per_axis(2, name, "mode", opts.mode or "reflect", nd, mode_ok)
  local y = x
  for i = 1, nd do
    if sizes[i] > 1 then
      y = ml.ndimage.uniform_filter1d(y, sizes[i], {axis = i, mode = modes[i],
                                      cval = opts.cval or 0, origin = origins[i]})
    end
  end
  return y == x and x:clone() or y
end

function M.sobel(x, opts)
  local name = "ndimage.sobel"
  check_options(name, opts)
  opts = opts or {}
  x = array(x)
  local nd = x:dim()
  if nd < 1 then fail(2, "%s: expects an array of 1 or more dimensions, got a scalar", name) end
  local a = axis_of(2, name, opts.axis or -1, nd)
  local modes = per_axis(2, name, "mode", opts.mode or "reflect", nd, mode_ok)
  local cval = opts.cval or 0
  local masks = {}
  for i = 1, nd do masks[i] = false end
  -- the derivative first, then the smoothing along the other axes, in
  -- SciPy's order (which matters at the edges in constant mode)
  masks[a] = host_mask({-1, 0, 1})
  local y = passes(name, x, masks, modes, cval)
  if nd == 1 then return y end
  local smooth = host_mask({1, 2, 1})
  for i = 1, nd do masks[i] = i ~= a and smooth end
  return passes(name, y, masks, modes, cval)
end

function M.install(module)
  ml = module
  for _, f in ipairs({"gaussian_filter", "gaussian_filter1d", "uniform_filter", "sobel"}) do
    ml.ndimage[f] = M[f]
  end
end

return M
