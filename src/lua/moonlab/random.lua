-- Random draws built on the Philox stream's rand, randn, randint and
-- randperm (src/bindings/l_random.c): bernoulli, exponential, gamma, beta,
-- multinomial, choice and shuffle. Every draw is a composition of array
-- operations over those primitives, so it consumes the one stream and is
-- the same on the CPU and the GPU wherever its steps are exact there:
-- comparisons of uniforms, integer draws and permutations are bit for bit;
-- steps through log, pow or sqrt (exponential, gamma, beta) agree within a
-- few ulp, as randn does. init.lua installs them: install(ml) adds them to
-- ml (shuffle is no method: x:sh<TAB> completes to shape).
local check_options = require("moonlab.options").check

local M = {}

local ml -- the module, given by install

-- Calls fn() and returns its results, or raises its error under name.
local function named(name, fn)
  local ok, r, s = pcall(fn)
  if ok then return r, s end
  local msg = tostring(r):gsub("^[^:\n]*:%d+: ", ""):gsub("^[%w_%.]+: ", "")
  error(name .. ": " .. msg, 3)
end

local function fail(name, fmt, ...)
  error(name .. ": " .. fmt:format(...), 3)
end

local function is_float(t) return t == "float32" or t == "float64" end

-- The shape and options of a call's trailing arguments (shape as integers
-- or one table, then an options table): a last table that holds no [1]
-- and is not the only argument is the options.
local function shape_opts(...)
  local n, args = select("#", ...), {...}
  local opts
  if n >= 2 and type(args[n]) == "table" and args[n][1] == nil
     and not ml.is_array(args[n]) then
    opts, n = args[n], n - 1
  end
  if n == 1 and type(args[1]) == "table" then return args[1], opts end
  return table.move(args, 1, n, 1, {}), opts
end

-- A parameter (number or array) as an array of dtype t on device.
local function param(v, t, device)
  if ml.is_array(v) then return v:to(device):astype(t) end
  return ml.full({}, v, {dtype = t, device = device})
end

-- The result dtype and device of a draw: the options', else a float array
-- parameter's, else the defaults.
local function placement(opts, ...)
  local dtype, device = opts and opts.dtype, opts and opts.device
  for _, v in ipairs({...}) do
    if ml.is_array(v) then
      device = device or v.device
      dtype = dtype or (is_float(v.dtype) and v.dtype or nil)
    end
  end
  return dtype or ml.get_default_dtype(), device or ml.device()
end

-- The shape of the broadcast of arrays and numbers, or the given shape.
local function draw_shape(shape, ...)
  local arrays = {}
  for _, v in ipairs({...}) do
    if ml.is_array(v) then arrays[#arrays + 1] = v end
  end
  if #arrays == 0 then return shape end
  if #shape > 0 then
    error("give a shape or array parameters, not both", 0)
  end
  local s = arrays[1].shape
  for i = 2, #arrays do
    s = (ml.zeros(s, {dtype = "uint8"}) + ml.zeros(arrays[i].shape,
          {dtype = "uint8"})).shape
  end
  return s
end

-- Checks that v (number or array) lies within [lo, hi] (hi may be nil),
-- excluding lo when open; NaN fails.
local function check_range(name, what, v, lo, hi, open)
  local mn, mx
  if ml.is_array(v) then
    if v:numel() == 0 then return end
    local f = v:astype("float64")
    if ml.isnan(f):any() then fail(name, "%s must not be NaN", what) end
    mn, mx = f:min(), f:max()
  else
    if v ~= v then fail(name, "%s must not be NaN", what) end
    mn, mx = v, v
  end
  if (open and mn <= lo) or mn < lo or (hi and mx > hi) then
    local range = hi and ("[%g, %g]"):format(lo, hi)
                  or (open and "> %g" or ">= %g"):format(lo)
    fail(name, "%s must be %s (got %g)", what, range,
         (open and mn <= lo or mn < lo) and mn or mx)
  end
end

local function check_float(name, dtype)
  if not is_float(dtype) then
    fail(name, "dtype %s is not a float dtype", dtype)
  end
end

function M.bernoulli(p, ...)
  local shape, opts = shape_opts(...)
  check_options("bernoulli", opts)
  if type(p) ~= "number" and not ml.is_array(p) then
    fail("bernoulli", "p must be a number or an array, not %s", type(p))
  end
  check_range("bernoulli", "p", p, 0, 1)
  local dtype, device = placement(opts, p)
  return named("bernoulli", function()
    shape = draw_shape(shape, p)
    local t = ml.is_array(p) and is_float(p.dtype) and p.dtype or "float64"
    local u = ml.rand(shape, {dtype = t, device = device})
    return ml.lt(u, param(p, t, device)):astype(dtype)
  end)
end

function M.exponential(scale, ...)
  local shape, opts = shape_opts(...)
  check_options("exponential", opts)
  if type(scale) ~= "number" and not ml.is_array(scale) then
    fail("exponential", "scale must be a number or an array, not %s",
         type(scale))
  end
  check_range("exponential", "scale", scale, 0)
  local dtype, device = placement(opts, scale)
  check_float("exponential", dtype)
  return named("exponential", function()
    shape = draw_shape(shape, scale)
    local u = ml.rand(shape, {dtype = dtype, device = device})
    return ml.neg(ml.log1p(ml.neg(u))) * param(scale, dtype, device)
  end)
end

-- Marsaglia and Tsang's gamma(k) for k >= 1 over flat arrays of n
-- shapes: each round draws one normal and one uniform per pending element,
-- in the order of the pending elements, and keeps the accepted ones; the
-- rest draw again. Returns the n draws.
local function marsaglia_tsang(k, dtype, device)
  local n = k:numel()
  local out = ml.zeros(n, {dtype = dtype, device = device})
  local idx = ml.arange(1, n + 1, {device = device})
  local d = k - 1 / 3
  local c = ml.sqrt(d * 9):pow(-1)
  while idx:numel() > 0 do
    local m = idx:numel()
    local z = ml.randn(m, {dtype = dtype, device = device})
    local u = ml.rand(m, {dtype = dtype, device = device})
    local v = (z * c + 1):pow(3)
    local positive = ml.gt(v, 0)
    local lv = ml.log(ml.where(positive, v, 1))
    local bound = z * z * 0.5 + d - d * v + d * lv
    local ok = ml.logical_and(positive, ml.lt(ml.log(u), bound))
    out = ml.index_add(out, 1, ml.masked_select(idx, ok),
                       ml.masked_select(d * v, ok))
    local rest = ml.logical_not(ok)
    idx, d, c = ml.masked_select(idx, rest), ml.masked_select(d, rest),
                ml.masked_select(c, rest)
  end
  return out
end

-- gamma(k) draws for an array of shapes k > 0 (any shape) as g and a log
-- factor lf: the draw is g * exp(lf). Shapes below 1 take gamma(k + 1)
-- times u^(1/k) (lf = log(u) / k, one uniform per element drawn after
-- the rounds); lf is 0 for the others. Kept apart so that beta can divide
-- two draws whose factors underflow.
local function gamma_parts(k, dtype, device)
  local flat = k:flatten()
  local small = ml.lt(flat, 1)
  local g = marsaglia_tsang(flat + small:astype(dtype), dtype, device)
  local u = ml.rand(flat:numel(), {dtype = dtype, device = device})
  local lf = ml.where(small, ml.log1p(ml.neg(u)) / flat, 0)
  return g:reshape(k.shape), lf:reshape(k.shape)
end

function M.gamma(k, ...)
  local shape, opts = shape_opts(...)
  check_options("gamma", opts)
  if type(k) ~= "number" and not ml.is_array(k) then
    fail("gamma", "shape k must be a number or an array, not %s", type(k))
  end
  check_range("gamma", "shape k", k, 0, nil, true)
  local scale = opts and opts.scale or 1
  check_range("gamma", "scale", scale, 0)
  local dtype, device = placement(opts, k)
  check_float("gamma", dtype)
  return named("gamma", function()
    shape = draw_shape(shape, k)
    local karr = param(k, dtype, device):expand(shape):contiguous()
    local g, lf = gamma_parts(karr, dtype, device)
    return g * ml.exp(lf) * scale
  end)
end

function M.beta(a, b, ...)
  local shape, opts = shape_opts(...)
  check_options("beta", opts)
  for _, v in ipairs({{"a", a}, {"b", b}}) do
    if type(v[2]) ~= "number" and not ml.is_array(v[2]) then
      fail("beta", "%s must be a number or an array, not %s", v[1],
           type(v[2]))
    end
    check_range("beta", v[1], v[2], 0, nil, true)
  end
  local dtype, device = placement(opts, a, b)
  check_float("beta", dtype)
  return named("beta", function()
    shape = draw_shape(shape, a, b)
    local ka = param(a, dtype, device):expand(shape):contiguous()
    local kb = param(b, dtype, device):expand(shape):contiguous()
    local ga, la = gamma_parts(ka, dtype, device)
    local gb, lb = gamma_parts(kb, dtype, device)
    -- x / (x + y) = 1 / (1 + (gb / ga) exp(lb - la))
    return (gb / ga * ml.exp(lb - la) + 1):pow(-1)
  end)
end

-- Indices of n draws with replacement from each row of weights w (rows x
-- k, float64): the count of the row's normalized cumulative sums at or
-- below a uniform, plus one. The cumulative sum's last positive entry is
-- exactly 1, so no index passes k or falls on a zero weight. The
-- comparison runs over chunks of the draws of at most 2^24 elements.
local CHUNK = 1 << 24
local function with_replacement(w, n, device)
  local rows, k = w.shape[1], w.shape[2]
  local cdf = ml.cumsum(w, 2)
  cdf = cdf / cdf:narrow(2, k, 1)
  local u = ml.rand(rows, n, {dtype = "float64", device = device})
  local step = math.max(1, CHUNK // math.max(1, rows * k))
  local parts = {}
  for first = 1, n, step do
    local m = math.min(step, n - first + 1)
    local uc = u:narrow(2, first, m):unsqueeze(3)
    parts[#parts + 1] = ml.le(cdf:unsqueeze(2), uc):astype("int64"):sum(3) + 1
  end
  if #parts == 0 then return ml.zeros(rows, 0, {dtype = "int64", device = device}) end
  return #parts == 1 and parts[1] or ml.cat(parts, 2)
end

-- Without replacement: the n smallest of E / w (E exponential), an
-- exponential race (Efraimidis and Spirakis), in the order they finish.
local function without_replacement(w, n, device)
  local u = ml.rand(w.shape, {dtype = "float64", device = device})
  local keys = ml.neg(ml.log1p(ml.neg(u))) / w
  local _, idx = ml.topk(keys, n, 2, {largest = false})
  return idx
end

-- The weights of multinomial and choice as a rows x k float64 array,
-- checked: finite, non-negative, each row with a positive sum.
local function weights(name, probs)
  if not ml.is_array(probs) then
    if type(probs) ~= "table" then
      fail(name, "weights must be an array, not %s", type(probs))
    end
    probs = ml.array(probs, {dtype = "float64"})
  end
  if probs.ndim ~= 1 and probs.ndim ~= 2 then
    fail(name, "weights must be 1-D or 2-D (got %d dimensions)", probs.ndim)
  end
  local w = probs:astype("float64")
  if w.ndim == 1 then w = w:unsqueeze(1) end
  if w.shape[2] == 0 then fail(name, "weights must not be empty") end
  if w:numel() > 0 then
    if not ml.isfinite(w):all() then
      fail(name, "weights must be finite")
    end
    if ml.lt(w, 0):any() then fail(name, "weights must be non-negative") end
    if ml.le(w:sum(2), 0):any() then
      fail(name, "every row of weights must have a positive sum")
    end
  end
  return w, probs.ndim, probs.device
end

function M.multinomial(probs, n, opts)
  check_options("multinomial", opts)
  local w, ndim, device = weights("multinomial", probs)
  if math.type(n) ~= "integer" or n < 0 then
    fail("multinomial", "n must be a non-negative integer (got %s)",
         tostring(n))
  end
  local replacement = opts and opts.replacement or false
  if not replacement and n > 0 and w:numel() > 0 then
    local nonzero = ml.gt(w, 0):astype("int64"):sum(2):min()
    if n > nonzero then
      fail("multinomial", "cannot draw %d without replacement from %d "
           .. "categories of positive weight", n, nonzero)
    end
  end
  return named("multinomial", function()
    local idx = replacement and with_replacement(w, n, device)
                or without_replacement(w, n, device)
    return ndim == 1 and idx:squeeze(1) or idx
  end)
end

function M.choice(a, size, opts)
  if type(size) == "table" and size[1] == nil and opts == nil then
    size, opts = nil, size
  end
  check_options("choice", opts)
  opts = opts or {}
  local n, pool
  if math.type(a) == "integer" then
    if a < 1 then fail("choice", "a must be at least 1 (got %d)", a) end
    n = a
  elseif ml.is_array(a) then
    if a.ndim ~= 1 then
      fail("choice", "a must be 1-D (got %d dimensions)", a.ndim)
    end
    if a.shape[1] == 0 then fail("choice", "a must not be empty") end
    n, pool = a.shape[1], a
  else
    fail("choice", "a must be an integer or a 1-D array, not %s",
         math.type(a) or type(a))
  end
  local shape = size == nil and {} or type(size) == "table" and size
                or {size}
  local count = 1
  for _, s in ipairs(shape) do
    if math.type(s) ~= "integer" or s < 0 then
      fail("choice", "size must hold non-negative integers")
    end
    count = count * s
  end
  local replace = opts.replace
  if replace == nil then replace = true end
  if not replace and count > n then
    fail("choice", "cannot take %d samples from %d without replacement",
         count, n)
  end
  local device = pool and pool.device or opts.device or ml.device()
  local idx
  if opts.p ~= nil then
    local w = weights("choice", opts.p)
    if w.shape[1] ~= 1 or w.shape[2] ~= n then
      fail("choice", "p must be 1-D of %d probabilities", n)
    end
    if math.abs(w:sum() - 1) > 1.4901161193847656e-08 then
      fail("choice", "probabilities p do not sum to 1")
    end
    if not replace and count > ml.gt(w, 0):astype("int64"):sum() then
      fail("choice", "fewer nonzero entries in p than size")
    end
    idx = named("choice", function()
      w = w:to(device)
      return (replace and with_replacement(w, count, device)
              or without_replacement(w, count, device)):squeeze(1)
    end)
  elseif replace then
    idx = ml.randint(1, n + 1, count, {device = device})
  else
    local u = ml.rand(n, {dtype = "float64", device = device})
    local _
    _, idx = ml.topk(u, count, 1, {largest = false})
  end
  local r = pool and ml.index_select(pool, 1, idx) or idx
  if size == nil then return r[{1}] end
  return r:reshape(shape)
end

function M.shuffle(x)
  if not ml.is_array(x) then
    fail("shuffle", "x must be an array, not %s", type(x))
  end
  if x.ndim == 0 then fail("shuffle", "x must have a dimension to shuffle") end
  local perm = ml.randperm(x.shape[1], {device = x.device})
  return ml.index_select(x, 1, perm)
end

function M.install(module)
  ml = module
  for _, name in ipairs({"bernoulli", "exponential", "gamma", "beta",
                         "multinomial", "choice", "shuffle"}) do
    ml[name] = M[name]
  end
end

return M
