-- Rearranging, with NumPy's names and semantics, over views and copies
-- between them (no loops over elements): flipud and fliplr (views, over
-- the flip primitive), roll and pad. Each result is written once: roll
-- copies at most 2^k blocks for k rolled dimensions into a new array; pad
-- copies x into the middle of a new array and fills the margins from it,
-- one dimension after the other, as numpy.pad does; margins wider than
-- the array repeat its period, as from NumPy 1.25 on. init.lua
-- installs them: install(ml) adds them to ml and to the arrays' methods.
local check_options = require("moonlab.options").check
local args = require "moonlab.args"
local fail, shape_str, array = args.fail, args.shape_str, args.array
local integer, dim_of = args.integer, args.dim_of

local M = {}

local ml -- the module, given by install

function M.flipud(x)
  x = array(x)
  if x:dim() < 1 then fail(2, "flipud: expects an array of 1 or more dimensions, got a scalar") end
  return x:flip({dims = 1})
end

function M.fliplr(x)
  x = array(x)
  if x:dim() < 2 then
    fail(2, "fliplr: expects an array of 2 or more dimensions, got shape %s", shape_str(x))
  end
  return x:flip({dims = 2})
end

-- ---- roll ----

-- Copies the blocks of x into out, dimension by dimension from d: along a
-- dimension rolled by s (0 < s < n), x's first n - s go after out's first
-- s, and x's last s to the front.
local function roll_blocks(out, x, shifts, d)
  while d <= x:dim() and shifts[d] == 0 do d = d + 1 end
  if d > x:dim() then
    out:copy(x)
    return
  end
  local n, s = x.shape[d], shifts[d]
  roll_blocks(out:narrow(d, s + 1, n - s), x:narrow(d, 1, n - s), shifts, d + 1)
  roll_blocks(out:narrow(d, 1, s), x:narrow(d, n - s + 1, s), shifts, d + 1)
end

local function list(v)
  if type(v) == "table" and not ml.is_array(v) then return v end
  return {v}
end

function M.roll(x, shift, opts)
  local name = "roll"
  check_options(name, opts)
  x = array(x)
  local dims = (opts or {}).dims
  if dims == nil then
    return M.roll(x:reshape(-1), shift, {dims = 1}):reshape(x.shape)
  end
  local sh, ds = list(shift), list(dims)
  if #sh ~= #ds and #sh ~= 1 and #ds ~= 1 then
    fail(2, "roll: %d shifts do not match %d dimensions", #sh, #ds)
  end
  local shifts = {}
  for i = 1, x:dim() do shifts[i] = 0 end
  for i = 1, math.max(#sh, #ds) do
    local d = dim_of(2, name, ds[#ds == 1 and 1 or i], x:dim())
    shifts[d] = shifts[d] + integer(2, name, "shift", sh[#sh == 1 and 1 or i])
  end
  for d = 1, x:dim() do
    local n = x.shape[d]
    shifts[d] = n > 0 and shifts[d] % n or 0
  end
  local out = ml.empty(x.shape, {dtype = x.dtype, device = x.device})
  roll_blocks(out, x, shifts, 1)
  return out
end

-- ---- pad ----

local MODES = {constant = true, reflect = true, symmetric = true, edge = true, wrap = true}

-- pad_width as {{before, after}, ...}, one pair a dimension of nd.
local function pad_pairs(level, width, nd)
  local name = "pad"
  local function pair(v)
    if type(v) == "number" then
      local n = integer(level + 2, name, "pad_width", v)
      return {n, n}
    end
    if type(v) ~= "table" or #v < 1 or #v > 2 then
      fail(level + 2, "pad: pad_width must be a number, a pair {before, after} or one pair a dimension")
    end
    local b = integer(level + 2, name, "pad_width", v[1])
    return {b, integer(level + 2, name, "pad_width", v[#v])}
  end
  local pairs_ = {}
  if type(width) == "table" and type(width[1]) == "table" then
    if #width ~= 1 and #width ~= nd then
      fail(level + 1, "pad: pad_width has %d pairs for %d dimensions", #width, nd)
    end
    for d = 1, nd do pairs_[d] = pair(width[#width == 1 and 1 or d]) end
  else
    local p = pair(width)
    for d = 1, nd do pairs_[d] = p end
  end
  for d = 1, nd do
    if pairs_[d][1] < 0 or pairs_[d][2] < 0 then
      fail(level + 1, "pad: pad_width must be 0 or more, not %d", math.min(pairs_[d][1], pairs_[d][2]))
    end
  end
  return pairs_
end

-- numpy.pad's _set_reflect_both (NumPy 1.25 on): one round of
-- reflections into the margins lo and hi still to fill of v's dimension
-- d, whose middle n values are x's (edge 1 for symmetric, 0 for reflect);
-- a chunk is a whole number of periods long, so that the margins extend
-- x periodically. Returns what remains of them.
local function reflect_round(v, d, lo, hi, n, edge)
  local len = v.shape[d]
  local old = len - lo - hi
  if edge == 1 then
    old = old // n * n
  else
    old = (old - 1) // (n - 1) * (n - 1)
  end
  if lo > 0 then
    local chunk = math.min(old, lo)
    -- positions lo - edge + 1 + chunk down to lo - edge + 2, reversed
    local src = v:narrow(d, lo - edge + 2, chunk):flip({dims = d})
    v:narrow(d, lo - chunk + 1, chunk):copy(src)
    lo = lo - chunk
  end
  if hi > 0 then
    local chunk = math.min(old, hi)
    local last = len - hi -- the 1-based position of the last valid one
    local src = v:narrow(d, last - chunk + edge, chunk):flip({dims = d})
    v:narrow(d, last + 1, chunk):copy(src)
    hi = hi - chunk
  end
  return lo, hi
end

-- Fills the margins of dimension d of v (x's values in the middle n).
local function fill_margins(v, d, lo, hi, n, mode)
  if lo + hi == 0 then return end
  if mode == "edge" or (n == 1 and (mode == "reflect" or mode == "symmetric")) then
    if lo > 0 then v:narrow(d, 1, lo):copy(v:narrow(d, lo + 1, 1)) end
    if hi > 0 then v:narrow(d, lo + n + 1, hi):copy(v:narrow(d, lo + n, 1)) end
  elseif mode == "wrap" then
    -- out[i] = x[(i - lo) mod n]: each chunk copies the n values after it
    -- (before it, on the right), which are already in place
    local p = lo
    while p > 0 do
      local c = math.min(p, n)
      v:narrow(d, p - c + 1, c):copy(v:narrow(d, p - c + 1 + n, c))
      p = p - c
    end
    local q = lo + n
    while q < lo + n + hi do
      local c = math.min(lo + n + hi - q, n)
      v:narrow(d, q + 1, c):copy(v:narrow(d, q + 1 - n, c))
      q = q + c
    end
  else
    local edge = mode == "symmetric" and 1 or 0
    while lo > 0 or hi > 0 do lo, hi = reflect_round(v, d, lo, hi, n, edge) end
  end
end

function M.pad(x, pad_width, opts)
  local name = "pad"
  check_options(name, opts)
  opts = opts or {}
  x = array(x)
  local mode = opts.mode or "constant"
  if not MODES[mode] then
    fail(2, "pad: mode must be one of \"constant\", \"reflect\", \"symmetric\", \"edge\", \"wrap\", not \"%s\"",
         tostring(mode))
  end
  if opts.constant_values ~= nil and mode ~= "constant" then
    fail(2, "pad: constant_values is for mode \"constant\", not \"%s\"", mode)
  end
  local nd = x:dim()
  local w = pad_pairs(2, pad_width, nd)
  local shape = {}
  for d = 1, nd do
    shape[d] = x.shape[d] + w[d][1] + w[d][2]
    if mode ~= "constant" and x.shape[d] == 0 and shape[d] > 0 then
      fail(2, "pad: cannot extend the empty dimension %d of shape %s in mode \"%s\"",
           d, shape_str(x), mode)
    end
  end
  local out = ml.empty(shape, {dtype = x.dtype, device = x.device})
  local mid = out
  for d = 1, nd do mid = mid:narrow(d, w[d][1] + 1, x.shape[d]) end
  mid:copy(x)
  if mode == "constant" then
    local c = opts.constant_values or 0
    for d = 1, nd do
      if w[d][1] > 0 then out:narrow(d, 1, w[d][1]):fill(c) end
      if w[d][2] > 0 then out:narrow(d, w[d][1] + x.shape[d] + 1, w[d][2]):fill(c) end
    end
    return out
  end
  for d = 1, nd do
    -- the dimensions before d are complete, those after it not yet
    local v = out
    for e = d + 1, nd do v = v:narrow(e, w[e][1] + 1, x.shape[e]) end
    fill_margins(v, d, w[d][1], w[d][2], x.shape[d], mode)
  end
  return out
end

local METHODS = {"flipud", "fliplr", "roll", "pad"}

function M.install(module)
  ml = module
  for k, f in pairs(M) do
    if k ~= "install" then ml[k] = f end
  end
  for _, k in ipairs(METHODS) do ml.methods[k] = M[k] end
end

return M
