-- The compositions of linear algebra, in Lua over the primitives of
-- ml.linalg (src/bindings/l_linalg.c): ml.linalg.lstsq and
-- ml.linalg.norm as numpy.linalg's, and ml.cov as numpy.cov (its
-- weighted products through ml.linalg.gram). init.lua installs them:
-- install(ml) adds them to ml and ml.linalg.
local check_options = require("moonlab.options").check
local fail = require("moonlab.args").fail

local M = {}

local ml -- the module, given by install

local EPS = {float32 = 2^-23, float64 = 2^-52}

-- x as a float array on like's device (tables and numbers too): float
-- dtypes stay, integers become float64.
local function floats(x, like)
  if not ml.is_array(x) then
    x = ml.array(x, {device = like and like.device or nil,
                     dtype = like and like.dtype or nil})
  end
  if x.dtype ~= "float32" and x.dtype ~= "float64" then
    x = x:astype("float64")
  end
  return x
end

-- An error unless a and b live on one device, in the core's words, at
-- the given level above the caller.
local function same_device(level, name, a, b)
  if a.device ~= b.device then
    fail(level + 1, "%s: arrays on different devices (%s and %s); move one with :to()",
         name, a.device, b.device)
  end
end

-- The common float dtype of a and b.
local function promote(a, b)
  if a.dtype == b.dtype then return a, b end
  return a:astype("float64"), b:astype("float64")
end

-- lstsq ----------------------------------------------------------------

-- numpy.linalg.lstsq through the SVD: the minimum-norm x minimising
-- |a x - b|, singular values at most rcond * max(s) taken as zero.
function M.lstsq(a, b, opts)
  check_options("linalg.lstsq", opts)
  opts = opts or {}
  a = floats(a)
  b = floats(b, a)
  same_device(2, "linalg.lstsq", a, b)
  a, b = promote(a, b)
  if a:dim() ~= 2 then
    fail(2, "linalg.lstsq: a must be a matrix, got shape %s",
         table.concat(a.shape, "x"))
  end
  local vector = b:dim() == 1
  if vector then b = b:reshape(b:size(1), 1) end
  if b:dim() ~= 2 then
    fail(2, "linalg.lstsq: b must be a vector or a matrix, got shape %s",
         b:dim() == 0 and "scalar" or table.concat(b.shape, "x"))
  end
  local m, n = a:size(1), a:size(2)
  if b:size(1) ~= m then
    fail(2, "linalg.lstsq: a has %d rows but b has %d", m, b:size(1))
  end
  local rcond = opts.rcond or EPS[a.dtype] * math.max(m, n)
  if rcond < 0 then rcond = EPS[a.dtype] end
  local u, s, vh = ml.linalg.svd(a, {full_matrices = false})
  local k = s:size(1)
  local cut = k > 0 and rcond * s[{1}] or 0
  local small = s:le(cut)
  local rank = k > 0 and k - small:sum() or 0
  local inv = (1 / s):masked_fill(small, 0)
  local x = vh:t():mm(u:t():mm(b) * inv:unsqueeze(2))
  local residuals
  if rank == n and m > n then
    local r = a:mm(x) - b
    residuals = (r * r):sum(1)
  else
    residuals = ml.zeros(0, {dtype = a.dtype, device = a.device})
  end
  if vector then x = x:reshape(n) end
  return x, residuals, rank, s
end

-- norm -------------------------------------------------------------------

-- The values of a reduction that returns values and indices.
local function first(v) return v end

local function vector_norm(x, d, ord, keep)
  local o = {keepdim = keep}
  if ord == nil or ord == 2 then return x:norm(d, o) end
  if type(ord) == "string" then
    fail(3, "linalg.norm: invalid norm order '%s' for vectors", ord)
  end
  if ord == math.huge then return first(x:abs():max(d, o)) end
  if ord == -math.huge then return first(x:abs():min(d, o)) end
  if ord == 0 then return x:ne(0):astype(x.dtype):sum(d, o) end
  if ord == 1 then return x:abs():sum(d, o) end
  return (x:abs() ^ ord):sum(d, o) ^ (1 / ord)
end

-- The singular values of the matrices of x in dimensions r and c.
local function singular_values(x, r, c)
  local perm = {}
  for d = 1, x:dim() do
    if d ~= r and d ~= c then perm[#perm + 1] = d end
  end
  perm[#perm + 1], perm[#perm + 2] = r, c
  return ml.linalg.svd(x:permute(table.unpack(perm)), {compute_uv = false})
end

local function matrix_norm(x, r, c, ord, keep)
  local v
  if ord == nil or ord == "fro" or ord == "f" then
    v = (x * x):sum(c):sum(r > c and r - 1 or r):sqrt()
  elseif ord == "nuc" then
    v = singular_values(x, r, c):sum(-1)
  elseif ord == 2 or ord == -2 then
    local s = singular_values(x, r, c)
    if ord == 2 then v = first(s:max(-1)) else v = first(s:min(-1)) end
  elseif ord == 1 or ord == -1 then
    local sums = x:abs():sum(r)
    local cc = c > r and c - 1 or c
    if ord == 1 then v = first(sums:max(cc)) else v = first(sums:min(cc)) end
  elseif ord == math.huge or ord == -math.huge then
    local sums = x:abs():sum(c)
    local rr = r > c and r - 1 or r
    if ord > 0 then v = first(sums:max(rr)) else v = first(sums:min(rr)) end
  else
    fail(3, "linalg.norm: invalid norm order %s for matrices", tostring(ord))
  end
  if keep then
    v = v:unsqueeze(math.min(r, c)):unsqueeze(math.max(r, c))
  end
  return v
end

-- A 1-based dimension (negative from the end) of an nd-dimensional array.
local function dimension(d, nd)
  if math.type(d) ~= "integer" and not (type(d) == "number" and d == d // 1) then
    fail(4, "linalg.norm: dim must be an integer or a pair of them, not %s",
         tostring(d))
  end
  local k = d < 0 and nd + d + 1 or d
  if d == 0 or k < 1 or k > nd then
    fail(4, "linalg.norm: dimension %d out of range for %d dimension%s", d, nd,
         nd == 1 and "" or "s")
  end
  return math.tointeger(k)
end

-- numpy.linalg.norm: a vector norm along one dimension, a matrix norm
-- over two; without dim, the 2-norm of all elements unless ord asks for a
-- matrix or vector norm of a 2-D or 1-D x.
function M.norm(x, opts)
  check_options("linalg.norm", opts)
  opts = opts or {}
  x = floats(x)
  local ord, dim, keep = opts.ord, opts.dim, opts.keepdim or false
  local nd = x:dim()
  if dim == nil then
    if ord == nil or (ord == 2 and nd == 1)
        or ((ord == "fro" or ord == "f") and nd == 2) then
      return x:norm({keepdim = keep})
    end
    if nd ~= 1 and nd ~= 2 then
      fail(2, "linalg.norm: ord without dim needs a 1-D or 2-D array, got %d dimensions",
           nd)
    end
    dim = nd == 1 and {1} or {1, 2}
  end
  local dims = type(dim) == "table" and dim or {dim}
  if #dims < 1 or #dims > 2 then
    fail(2, "linalg.norm: dim must be one dimension or a pair, got %d", #dims)
  end
  for i, d in ipairs(dims) do dims[i] = dimension(d, nd) end
  local v
  if #dims == 1 then
    v = vector_norm(x, dims[1], ord, keep)
  elseif dims[1] == dims[2] then
    fail(2, "linalg.norm: dimension %d given twice", dims[1])
  else
    v = matrix_norm(x, dims[1], dims[2], ord, keep)
  end
  if opts.dim == nil and v:dim() == 0 then return v:item() end
  return v
end

-- cov ----------------------------------------------------------------------

-- A weights option of cov: a 1-D float array of n, checked as numpy does.
local function weights(w, name, n, like)
  w = floats(w, like)
  same_device(3, "cov", like, w)
  if w:dim() ~= 1 then
    fail(3, "cov: %s must be 1-D, got shape %s", name,
         w:dim() == 0 and "scalar" or table.concat(w.shape, "x"))
  end
  if w:size(1) ~= n then
    fail(3, "cov: %s has %d elements for %d observations", name, w:size(1), n)
  end
  if n > 0 and w:lt(0):any() then fail(3, "cov: %s cannot be negative", name) end
  if w.dtype ~= like.dtype then w = w:astype(like.dtype) end
  return w
end

-- numpy.cov: the covariance matrix of the variables in x's rows (columns
-- with rowvar false), the observations weighted by fweights * aweights.
function M.cov(x, opts)
  check_options("cov", opts)
  opts = opts or {}
  x = floats(x)
  if x:dim() > 2 then
    fail(2, "cov: x has more than 2 dimensions (shape %s)",
         table.concat(x.shape, "x"))
  end
  if x:dim() < 2 then x = x:reshape(1, x:numel()) end
  -- obs: the dimension that holds the observations
  local obs = (opts.rowvar == false and x:size(1) ~= 1) and 1 or 2
  local p, n = x:size(3 - obs), x:size(obs)
  if p == 0 then return ml.zeros(0, 0, {dtype = x.dtype, device = x.device}) end
  local ddof = opts.ddof or (opts.bias and 0 or 1)
  local fw = opts.fweights and weights(opts.fweights, "fweights", n, x)
  if fw and n > 0 and fw:ne(fw:round()):any() then
    fail(2, "cov: fweights must be integers")
  end
  local aw = opts.aweights and weights(opts.aweights, "aweights", n, x)
  local w = fw and aw and fw * aw or fw or aw
  local avg, fact
  if w then
    local shape = obs == 2 and {1, n} or {n, 1}
    local wsum = w:sum()
    avg = (x * w:reshape(table.unpack(shape))):sum(obs, {keepdim = true}) / wsum
    if ddof == 0 then
      fact = wsum
    elseif not aw then
      fact = wsum - ddof
    else
      fact = wsum - ddof * (w * aw):sum() / wsum
    end
  else
    avg = x:mean(obs, {keepdim = true})
    fact = n - ddof
  end
  if fact <= 0 then fact = 0.0 end
  local xc = x - avg
  -- the observations in rows: xc itself, or its transpose (a view)
  local rows = obs == 1 and xc or xc:t()
  local c = ml.linalg.gram(rows, w) * (1 / fact)
  if p == 1 then c = c:reshape() end
  return c
end

-- Adds the functions to ml (cov) and ml.linalg (lstsq, norm).
function M.install(module)
  ml = module
  ml.linalg.lstsq = M.lstsq
  ml.linalg.norm = M.norm
  ml.cov = M.cov
end

return M
