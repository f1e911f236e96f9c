-- Counting and statistics with NumPy's names and semantics, as
-- compositions of array operations (no loops over elements): unique,
-- bincount, histogram, median, quantile, percentile, nansum, nanmean,
-- nanmax and nanmin. Positions are 1-based (unique's index and inverse);
-- values stay values (bincount counts the value 0 in its first slot).
-- histogram's equal bins, bincount and the unique of integers in a
-- narrow range count through two primitives that are no public functions
-- (moonlab.count_core, from src/bindings/l_index.c); edges given as an
-- array go through searchsorted. init.lua installs them on ml and
-- on the arrays' methods.
local check_options = require("moonlab.options").check
local args = require "moonlab.args"
local fail, shape_str, array = args.fail, args.shape_str, args.array
local is_float, dim_of = args.is_float, args.dim_of
local count_core = require "moonlab.count_core"

local M = {}

local ml -- the module, given by install

-- The sorted 1-D elements of x, their 1-based positions, and the marks
-- (uint8, 1 where a run of equal values starts; NaNs are one run).
local function runs(x)
  local n = x:numel()
  local s, perm = x:reshape(n):sort()
  local first = ml.ones(n, {dtype = "uint8", device = x.device})
  if n > 1 then
    local a, b = s:narrow(1, 2, n - 1), s:narrow(1, 1, n - 1)
    local differ = ml.ne(a, b)
    if is_float(x) then
      differ = ml.logical_and(differ,
                              ml.logical_not(ml.logical_and(a:isnan(), b:isnan())))
    end
    first:narrow(1, 2, n - 1):copy(differ)
  end
  return s, perm, first
end

-- unique of integers whose range is at most DENSE_SPAN or twice their
-- number: one count of every value in the range (count_core.bincount, a
-- pass over x) instead of a sort. Returns nothing for a wider range.
local DENSE_SPAN = 1 << 16

local function dense_unique(x, opts)
  local n = x:numel()
  local lo, hi = x:min(), x:max()
  local span = hi - lo + 1 -- wraps below 1 when int64's range overflows
  if span < 1 or span > math.max(DENSE_SPAN, 2 * n) then return nil end
  local counts = count_core.bincount(x, lo, span)
  local present = ml.gt(counts, 0)
  local slots = present:nonzero()
  local values = (slots + (lo - 1)):astype(x.dtype)
  local inverse
  if opts.return_inverse then
    local rank = present:astype("int64"):cumsum()
    inverse = rank:index_select(1, x:reshape(n):astype("int64") - (lo - 1))
  end
  return values, inverse, opts.return_counts and counts:index_select(1, slots)
end

function M.unique(x, opts)
  check_options("unique", opts)
  opts = opts or {}
  x = array(x)
  local n = x:numel()
  local dev = {dtype = "int64", device = x.device}
  if n == 0 then
    local none = ml.zeros(0, dev)
    local out = {ml.zeros(0, {dtype = x.dtype, device = x.device})}
    if opts.return_index then out[#out + 1] = none end
    if opts.return_inverse then out[#out + 1] = none end
    if opts.return_counts then out[#out + 1] = none end
    return table.unpack(out)
  end
  if not is_float(x) and not opts.return_index and opts.sorted ~= false then
    local values, inverse, counts = dense_unique(x, opts)
    if values then
      local out = {values}
      if opts.return_inverse then out[#out + 1] = inverse end
      if opts.return_counts then out[#out + 1] = counts end
      return table.unpack(out)
    end
  end
  local s, perm, first = runs(x)
  local starts = first:nonzero()
  local k = starts:numel()
  local values = s:index_select(1, starts)
  local index = perm:index_select(1, starts)
  local inverse, counts
  if opts.return_inverse then
    local group = first:cumsum()
    inverse = ml.zeros(n, dev):scatter(1, perm, group)
  end
  if opts.return_counts then
    counts = ml.cat({starts:narrow(1, 2, k - 1),
                     ml.full({1}, n + 1, dev)}) - starts
  end
  if opts.sorted == false and k > 0 then
    local order = index:argsort()
    values, index = values:index_select(1, order), index:index_select(1, order)
    if counts then counts = counts:index_select(1, order) end
    if inverse then
      local rank = ml.zeros(k, dev):scatter(1, order, ml.arange(1, k + 1, dev))
      inverse = rank:index_select(1, inverse)
    end
  end
  local out = {values}
  if opts.return_index then out[#out + 1] = index end
  if inverse then out[#out + 1] = inverse end
  if counts then out[#out + 1] = counts end
  return table.unpack(out)
end

function M.bincount(x, opts)
  check_options("bincount", opts)
  opts = opts or {}
  x = array(x)
  if x:dim() ~= 1 then
    fail(2, "bincount: x must be 1-D, not %s", shape_str(x))
  end
  if is_float(x) then
    fail(2, "bincount: x must hold integers, not %s", x.dtype)
  end
  local minlength = opts.minlength or 0
  if minlength < 0 then
    fail(2, "bincount: minlength must be non-negative, not %d", minlength)
  end
  local len = minlength
  if x:numel() > 0 then
    local lo = x:min()
    if lo < 0 then fail(2, "bincount: x holds a negative value (%d)", lo) end
    len = math.max(len, x:max() + 1)
  end
  if opts.weights ~= nil then
    local index = x:astype("int64") + 1
    local w = array(opts.weights)
    if w:dim() ~= 1 or w:numel() ~= x:numel() then
      fail(2, "bincount: weights of shape %s do not match x's %s", shape_str(w), shape_str(x))
    end
    return ml.zeros(len, {device = x.device}):index_add(1, index, w:astype("float64"))
  end
  return count_core.bincount(x, 0, len)
end

-- NumPy's histogram over nb equal bins from lo to hi: counts, edges.
local function equal_bins(x, nb, lo, hi, w)
  local t = is_float(x) and x.dtype or "float64"
  local edges = ml.arange(nb + 1, {dtype = "float64", device = x.device}) * ((hi - lo) / nb) + lo
  edges[nb + 1] = hi
  edges = edges:astype(t)
  local counts = count_core.histogram(x, edges, hi - lo, w and w:astype("float64"))
  return counts, edges
end

-- NumPy's histogram over the ascending edges e: counts (or sums of w).
local function edge_bins(x, e, w)
  local nb = e:numel() - 1
  local s, perm = x:reshape(x:numel()):sort()
  local at = ml.cat({ml.searchsorted(s, e:narrow(1, 1, nb)),
                     ml.searchsorted(s, e:narrow(1, nb + 1, 1), {side = "right"})})
  if not w then
    return at:narrow(1, 2, nb) - at:narrow(1, 1, nb)
  end
  local cw = ml.cat({ml.zeros(1, {device = x.device}),
                     w:reshape(w:numel()):astype("float64"):index_select(1, perm):cumsum()})
  local c = cw:index_select(1, at)
  return c:narrow(1, 2, nb) - c:narrow(1, 1, nb)
end

function M.histogram(x, opts)
  check_options("histogram", opts)
  opts = opts or {}
  x = array(x)
  local w = opts.weights ~= nil and array(opts.weights) or nil
  if w and shape_str(w) ~= shape_str(x) then
    fail(2, "histogram: weights of shape %s do not match x's %s", shape_str(w), shape_str(x))
  end
  local bins = opts.bins or 10
  local counts, edges
  if type(bins) == "number" then
    if bins ~= math.floor(bins) or bins < 1 then
      fail(2, "histogram: bins must be a positive integer, not %s", tostring(bins))
    end
    local lo, hi
    if opts.range then
      lo, hi = opts.range[1], opts.range[2]
      if type(lo) ~= "number" or type(hi) ~= "number" then
        fail(2, "histogram: range must be {lo, hi}")
      end
      if lo > hi then fail(2, "histogram: range {%g, %g} has lo > hi", lo, hi) end
    elseif x:numel() == 0 then
      lo, hi = 0, 1
    else
      lo, hi = x:min() + 0.0, x:max() + 0.0
    end
    if lo ~= lo or hi ~= hi or math.abs(lo) == math.huge or math.abs(hi) == math.huge then
      fail(2, "histogram: the range {%g, %g} is not finite", lo, hi)
    end
    if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
    counts, edges = equal_bins(x, math.tointeger(bins), lo, hi, w)
  else
    edges = array(bins)
    if edges:dim() ~= 1 or edges:numel() < 2 then
      fail(2, "histogram: bins must be a 1-D array of 2 or more edges, not %s", shape_str(edges))
    end
    local nb = edges:numel() - 1
    if not ml.all(ml.ge(edges:narrow(1, 2, nb), edges:narrow(1, 1, nb))) then
      fail(2, "histogram: bins must increase monotonically")
    end
    counts = edge_bins(x, edges, w)
  end
  if w and not opts.density then counts = counts:astype(w.dtype) end
  if opts.density then
    local nb = edges:numel() - 1
    local width = (edges:narrow(1, 2, nb) - edges:narrow(1, 1, nb)):astype("float64")
    counts = counts:astype("float64") / width / counts:sum()
  end
  return counts, edges
end

-- x sorted along the dimension of a quantile (flattened when opts has
-- no dim): the sorted array, that dimension and the result's shape rule.
local function sorted_along(name, x, opts)
  x = array(x)
  local d
  local keep_all = false
  if opts.dim == nil then
    keep_all = opts.keepdim and x:dim() or false
    x = x:reshape(x:numel())
    d = 1
  else
    d = dim_of(3, name, opts.dim, x:dim())
  end
  if x.shape[d] == 0 then
    fail(3, "%s: dimension %d is empty", name, d)
  end
  return (x:sort(d)), d, keep_all
end

-- The result r (size m along d) with the dimension of q first, or d
-- removed when q is a number; keepdim keeps d with size 1.
local function shape_result(r, d, scalar, keepdim, keep_all)
  local nd = r:dim()
  if scalar then
    if keep_all then
      local ones = {}
      for i = 1, keep_all do ones[i] = 1 end
      return r:reshape(ones)
    end
    if keepdim then return r end
    if nd == 1 then return r:item() end
    return r:squeeze(d)
  end
  if d ~= 1 then
    local perm = {d}
    for i = 1, nd do
      if i ~= d then perm[#perm + 1] = i end
    end
    r = r:permute(perm):contiguous()
  end
  if keep_all then
    local shape = {r.shape[1]}
    for i = 1, keep_all do shape[i + 1] = 1 end
    return r:reshape(shape)
  end
  if keepdim then return r:unsqueeze(d + 1) end
  return r
end

-- Positions along d of shape {1, .., m, .., 1}: v broadcast along d.
local function along(v, d, nd)
  local shape = {}
  for i = 1, nd do shape[i] = 1 end
  shape[d] = v:numel()
  return v:reshape(shape)
end

local function quantile(name, x, q, opts, scale)
  check_options(name, opts)
  opts = opts or {}
  local scalar = type(q) == "number"
  local qa = array(scalar and {q} or q):astype("float64"):reshape(-1)
  if scale ~= 1 then qa = qa / scale end
  local s, d, keep_all = sorted_along(name, x, opts)
  local lo, hi = ml.ge(qa, 0), ml.le(qa, 1)
  if qa:numel() > 0 and not ml.all(ml.logical_and(lo, hi)) then
    fail(2, "%s: q must lie in [0, %g]", name, scale)
  end
  qa = qa:to(s.device)
  local n, nd = s.shape[d], s:dim()
  local virtual = qa * (n - 1)
  local prev = virtual:floor()
  local gamma = along(virtual - prev, d, nd)
  local pi = prev:astype("int64") + 1
  local ni = ml.minimum(pi + 1, n)
  local a, b = s:index_select(d, pi), s:index_select(d, ni)
  local diff = (b - a):astype("float64")
  a, b = a:astype("float64"), b:astype("float64")
  local r = ml.where(ml.ge(gamma, 0.5), b - diff * (1 - gamma), a + diff * gamma)
  if is_float(s) then
    r = ml.where(s:narrow(d, n, 1):isnan(), 0 / 0, r)
  end
  return shape_result(r, d, scalar, opts.keepdim, keep_all)
end

function M.quantile(x, q, opts)
  return quantile("quantile", x, q, opts, 1)
end

function M.percentile(x, q, opts)
  return quantile("percentile", x, q, opts, 100)
end

function M.median(x, opts)
  check_options("median", opts)
  opts = opts or {}
  local s, d, keep_all = sorted_along("median", x, opts)
  local n = s.shape[d]
  local k = n // 2
  if not is_float(s) then s = s:astype("float64") end
  local r
  if n % 2 == 1 then
    r = s:narrow(d, k + 1, 1)
  else
    r = (s:narrow(d, k, 1) + s:narrow(d, k + 1, 1)) / 2
  end
  r = ml.where(s:narrow(d, n, 1):isnan(), 0 / 0, r)
  return shape_result(r, d, true, opts.keepdim, keep_all)
end

-- The dimension and options of a call (x [, dim] [, opts]).
local function split(dim, opts)
  if type(dim) == "table" then return nil, dim end
  return dim, opts
end

-- x:method over dim (nil: every element) with opts.
local function reduce(x, method, dim, opts)
  if dim == nil then return x[method](x, opts) end
  return (x[method](x, dim, opts))
end

-- The reduction of x by method after replacing NaN by fill.
local function nan_reduce(name, x, dim, opts, method, fill)
  dim, opts = split(dim, opts)
  check_options(name, opts)
  x = array(x)
  if is_float(x) then x = ml.where(x:isnan(), fill, x) end
  return reduce(x, method, dim, opts)
end

function M.nansum(x, dim, opts)
  return nan_reduce("nansum", x, dim, opts, "sum", 0)
end

-- nanmax and nanmin: NaN where every element is NaN.
local function nan_extreme(name, method, fill)
  return function(x, dim, opts)
    x = array(x)
    local r = nan_reduce(name, x, dim, opts, method, fill)
    if not is_float(x) then return r end
    dim, opts = split(dim, opts)
    local none = reduce(x:isnan(), "all", dim, opts)
    if type(r) == "number" then return none and 0 / 0 or r end
    return ml.where(none, 0 / 0, r)
  end
end

M.nanmax = nan_extreme("nanmax", "max", -math.huge)
M.nanmin = nan_extreme("nanmin", "min", math.huge)

function M.nanmean(x, dim, opts)
  x = array(x)
  if not is_float(x) then
    dim, opts = split(dim, opts)
    check_options("nanmean", opts)
    return reduce(x, "mean", dim, opts)
  end
  local total = nan_reduce("nanmean", x, dim, opts, "sum", 0)
  dim, opts = split(dim, opts)
  return total / reduce(ml.logical_not(x:isnan()):astype(x.dtype), "sum", dim, opts)
end

local METHODS = {"unique", "bincount", "histogram", "quantile", "percentile", "median",
                 "nansum", "nanmean", "nanmax", "nanmin"}

function M.install(module)
  ml = module
  for _, k in ipairs(METHODS) do
    ml[k] = M[k]
    ml.methods[k] = M[k]
  end
end

return M
