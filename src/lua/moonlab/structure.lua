-- Matrix structure and rearranging, with NumPy's names and semantics,
-- as compositions of array operations (no loops over elements): tril,
-- triu, diag, diagonal, trace, kron, tensordot, diff, meshgrid, tile and
-- repeat_interleave. Axes are 1-based; offsets are NumPy's k. The array
-- model has no view of arbitrary strides, so diagonal gathers its
-- elements (from the square block on the diagonal, reading no others). init.lua
-- installs them: install(ml) adds them to ml and, but for tensordot and
-- meshgrid, to the arrays' methods.
local check_options = require("moonlab.options").check
local args = require "moonlab.args"
local fail, shape_str, array = args.fail, args.shape_str, args.array
local integer, dim_of = args.integer, args.dim_of

local M = {}

local ml -- the module, given by install

-- The column-minus-row offsets of x's last two dimensions, as an
-- n x m int64 array on x's device.
local function offsets(x)
  local n, m = x.shape[x:dim() - 1], x.shape[x:dim()]
  local dev = {dtype = "int64", device = x.device}
  return ml.arange(m, dev):reshape(1, m) - ml.arange(n, dev):reshape(n, 1)
end

local function triangle(name, keep)
  return function(x, opts)
    check_options(name, opts)
    x = array(x)
    if x:dim() < 2 then
      fail(2, "%s: expects an array of 2 or more dimensions, got shape %s", name, shape_str(x))
    end
    local k = integer(2, name, "k", (opts or {}).k or 0)
    return ml.where(keep(offsets(x), k), x, 0)
  end
end

M.tril = triangle("tril", function(d, k) return ml.le(d, k) end)
M.triu = triangle("triu", function(d, k) return ml.ge(d, k) end)

-- x with dimensions d1 and d2 moved last, in that order.
local function move_last(x, d1, d2)
  local p = {}
  for i = 1, x:dim() do
    if i ~= d1 and i ~= d2 then p[#p + 1] = i end
  end
  p[#p + 1], p[#p + 2] = d1, d2
  return x:permute(p)
end

local function diagonal(level, name, x, k, d1, d2)
  local nd = x:dim()
  if nd < 2 then
    fail(level + 1, "%s: expects an array of 2 or more dimensions, got shape %s",
         name, shape_str(x))
  end
  d1, d2 = dim_of(level + 1, name, d1, nd), dim_of(level + 1, name, d2, nd)
  if d1 == d2 then
    fail(level + 1, "%s: dim1 and dim2 are both dimension %d of shape %s", name, d1, shape_str(x))
  end
  local y = move_last(x, d1, d2)
  local n, m = y.shape[nd - 1], y.shape[nd]
  local r0, c0 = math.max(-k, 0), math.max(k, 0)
  local len = math.max(0, math.min(n - r0, m - c0))
  -- the len x len block that starts on the diagonal, and from row i of
  -- it the element in column i
  local block = y:narrow(nd - 1, math.min(r0, n) + 1, len):narrow(nd, math.min(c0, m) + 1, len)
  local column, picks, out = {}, {}, {}
  for i = 1, nd - 2 do column[i], picks[i], out[i] = 1, y.shape[i], y.shape[i] end
  column[nd - 1], column[nd], picks[nd - 1], picks[nd], out[nd - 1] = len, 1, len, 1, len
  local idx = ml.arange(1, len + 1, {dtype = "int64", device = x.device}):reshape(column)
  return block:gather(nd, idx:expand(picks)):reshape(out)
end

function M.diagonal(x, opts)
  check_options("diagonal", opts)
  opts = opts or {}
  x = array(x)
  local k = integer(2, "diagonal", "offset", opts.offset or 0)
  return diagonal(2, "diagonal", x, k, opts.dim1 or 1, opts.dim2 or 2)
end

function M.diag(v, opts)
  check_options("diag", opts)
  v = array(v)
  local k = integer(2, "diag", "k", (opts or {}).k or 0)
  if v:dim() == 2 then return diagonal(2, "diag", v, k, 1, 2) end
  if v:dim() ~= 1 then
    fail(2, "diag: expects a 1-D or 2-D array, got shape %s", shape_str(v))
  end
  local a = math.abs(k)
  local n = v.shape[1] + a
  local vals = ml.cat({v, ml.zeros(a, {dtype = v.dtype, device = v.device})})
  vals = k >= 0 and vals:reshape(n, 1) or vals:reshape(1, n)
  local d = offsets(ml.zeros(n, n, {dtype = "uint8", device = v.device}))
  return ml.where(ml.eq(d, k), vals, ml.zeros(1, {dtype = v.dtype, device = v.device}))
end

function M.trace(x, opts)
  check_options("trace", opts)
  x = array(x)
  local k = integer(2, "trace", "offset", (opts or {}).offset or 0)
  local d = diagonal(2, "trace", x, k, 1, 2)
  if x:dim() == 2 then return d:sum() end
  return d:sum(-1)
end

-- s as a shape of nd dimensions, padded with leading ones.
local function padded(s, nd)
  local r = {}
  for i = 1, nd - #s do r[i] = 1 end
  for i = 1, #s do r[#r + 1] = s[i] end
  return r
end

-- An error unless a and b live on one device, in the core's words.
local function same_device(level, name, a, b)
  if a.device ~= b.device then
    fail(level + 1, "%s: arrays on different devices (%s and %s); move one with :to()",
         name, a.device, b.device)
  end
end

function M.kron(a, b)
  a, b = array(a), array(b)
  same_device(2, "kron", a, b)
  local nd = math.max(a:dim(), b:dim())
  local sa, sb = padded(a.shape, nd), padded(b.shape, nd)
  local ia, ib, out = {}, {}, {}
  for i = 1, nd do
    ia[2 * i - 1], ia[2 * i] = sa[i], 1
    ib[2 * i - 1], ib[2 * i] = 1, sb[i]
    out[i] = sa[i] * sb[i]
  end
  if nd == 0 then return a * b end
  return (a:reshape(ia) * b:reshape(ib)):reshape(out)
end

-- The contracted axes of tensordot as two lists of 1-based dimensions.
local function contracted(name, a, b, dims)
  local na, nb = a:dim(), b:dim()
  if type(dims) == "number" then
    local n = integer(3, name, "dims", dims)
    if n < 0 or n > na or n > nb then
      fail(3, "%s: dims %d out of range for shapes %s and %s", name, n,
           shape_str(a), shape_str(b))
    end
    local da, db = {}, {}
    for i = 1, n do da[i], db[i] = na - n + i, i end
    return da, db
  end
  if type(dims) ~= "table" or type(dims[1]) ~= "table" or type(dims[2]) ~= "table" then
    fail(3, "%s: dims must be an integer or a pair of tables of dimensions", name)
  end
  local da, db = {}, {}
  if #dims[1] ~= #dims[2] then
    fail(3, "%s: dims name %d dimensions of a and %d of b", name, #dims[1], #dims[2])
  end
  for i = 1, #dims[1] do
    da[i] = dim_of(3, name, dims[1][i], na)
    db[i] = dim_of(3, name, dims[2][i], nb)
  end
  return da, db
end

-- The dimensions of x not in list, in order, with their product.
local function free(x, list)
  local used, r, sizes, p = {}, {}, {}, 1
  for _, d in ipairs(list) do used[d] = true end
  for i = 1, x:dim() do
    if not used[i] then
      r[#r + 1], sizes[#sizes + 1] = i, x.shape[i]
      p = p * x.shape[i]
    end
  end
  return r, sizes, p
end

function M.tensordot(a, b, opts)
  local name = "tensordot"
  check_options(name, opts)
  a, b = array(a), array(b)
  same_device(2, name, a, b)
  local da, db = contracted(name, a, b, (opts or {}).dims or 2)
  local K = 1
  for i = 1, #da do
    if a.shape[da[i]] ~= b.shape[db[i]] then
      fail(2, "%s: shapes %s and %s differ in the contracted dimensions %d and %d (%d != %d)",
           name, shape_str(a), shape_str(b), da[i], db[i], a.shape[da[i]], b.shape[db[i]])
    end
    K = K * a.shape[da[i]]
  end
  local fa, sa, pa = free(a, da)
  local fb, sb, pb = free(b, db)
  local perm_a, perm_b = {}, {}
  for _, d in ipairs(fa) do perm_a[#perm_a + 1] = d end
  for _, d in ipairs(da) do perm_a[#perm_a + 1] = d end
  for _, d in ipairs(db) do perm_b[#perm_b + 1] = d end
  for _, d in ipairs(fb) do perm_b[#perm_b + 1] = d end
  local ap = a:dim() > 0 and a:permute(perm_a) or a
  local bp = b:dim() > 0 and b:permute(perm_b) or b
  local r = ml.matmul(ap:reshape(pa, K), bp:reshape(K, pb))
  local shape = {}
  for _, s in ipairs(sa) do shape[#shape + 1] = s end
  for _, s in ipairs(sb) do shape[#shape + 1] = s end
  return r:reshape(shape)
end

function M.diff(x, opts)
  local name = "diff"
  check_options(name, opts)
  opts = opts or {}
  x = array(x)
  if x:dim() < 1 then fail(2, "diff: expects an array of 1 or more dimensions, got a scalar") end
  local n = integer(2, name, "n", opts.n or 1)
  if n < 0 then fail(2, "diff: n must be 0 or more, not %d", n) end
  local d = dim_of(2, name, opts.dim or -1, x:dim())
  for _ = 1, n do
    local len = x.shape[d]
    if len <= 1 then return x:narrow(d, 1, 0):clone() end
    x = x:narrow(d, 2, len - 1) - x:narrow(d, 1, len - 1)
  end
  return n == 0 and x:clone() or x
end

function M.meshgrid(...)
  local name = "meshgrid"
  local args = table.pack(...)
  local opts
  if args.n > 0 and type(args[args.n]) == "table" and not ml.is_array(args[args.n])
      and args[args.n][1] == nil then
    opts, args.n = args[args.n], args.n - 1
  end
  check_options(name, opts)
  local indexing = (opts or {}).indexing or "xy"
  if indexing ~= "xy" and indexing ~= "ij" then
    fail(2, "meshgrid: indexing must be \"xy\" or \"ij\", not \"%s\"", tostring(indexing))
  end
  local n, xs, shape = args.n, {}, {}
  for i = 1, n do
    xs[i] = array(args[i])
    if xs[i]:dim() ~= 1 then
      fail(2, "meshgrid: array %d has shape %s, expected a 1-D array", i, shape_str(xs[i]))
    end
    shape[i] = xs[i].shape[1]
  end
  local function axis(i)
    if indexing == "xy" and n >= 2 and i <= 2 then return 3 - i end
    return i
  end
  local full = {}
  for i = 1, n do full[axis(i)] = shape[i] end
  local r = {}
  for i = 1, n do
    local s = {}
    for j = 1, n do s[j] = 1 end
    s[axis(i)] = shape[i]
    r[i] = xs[i]:reshape(s):expand(full):contiguous()
  end
  return table.unpack(r, 1, n)
end

function M.tile(x, reps)
  local name = "tile"
  x = array(x)
  if type(reps) == "number" then reps = {reps} end
  if type(reps) ~= "table" then
    fail(2, "tile: reps must be an integer or a table of integers, not %s", type(reps))
  end
  local r = {}
  for i = 1, #reps do
    r[i] = integer(2, name, "reps", reps[i])
    if r[i] < 0 then fail(2, "tile: reps must be 0 or more, not %d", r[i]) end
  end
  local nd = math.max(x:dim(), #r)
  local s, rp = padded(x.shape, nd), padded(r, nd)
  local view, big, out = {}, {}, {}
  for i = 1, nd do
    view[2 * i - 1], view[2 * i] = 1, s[i]
    big[2 * i - 1], big[2 * i] = rp[i], s[i]
    out[i] = rp[i] * s[i]
  end
  if nd == 0 then return x:clone() end
  return x:reshape(view):expand(big):reshape(out)
end

function M.repeat_interleave(x, repeats, opts)
  local name = "repeat_interleave"
  check_options(name, opts)
  x = array(x)
  local d
  if opts and opts.dim ~= nil then
    d = dim_of(2, name, opts.dim, x:dim())
  else
    x, d = x:reshape(-1), 1
  end
  local len = x.shape[d]
  if type(repeats) == "number" then
    local r = integer(2, name, "repeats", repeats)
    if r < 0 then fail(2, "repeat_interleave: repeats must be 0 or more, not %d", r) end
    local s, big, out = {}, {}, {}
    for i = 1, x:dim() do
      s[#s + 1], big[#big + 1] = x.shape[i], x.shape[i]
      out[i] = x.shape[i]
      if i == d then
        s[#s + 1], big[#big + 1] = 1, r
        out[i] = x.shape[i] * r
      end
    end
    return x:reshape(s):expand(big):reshape(out)
  end
  if not ml.is_array(repeats) then repeats = ml.array(repeats, {device = x.device}) end
  same_device(2, name, x, repeats)
  if repeats.dtype ~= "int64" then
    if repeats.dtype == "float32" or repeats.dtype == "float64" then
      fail(2, "repeat_interleave: repeats must be integers, not %s", repeats.dtype)
    end
    repeats = repeats:astype("int64")
  end
  if repeats:dim() ~= 1 or (repeats.shape[1] ~= len and repeats.shape[1] ~= 1) then
    fail(2, "repeat_interleave: repeats of shape %s do not match dimension %d of size %d",
         shape_str(repeats), d, len)
  end
  if repeats.shape[1] == 1 and len ~= 1 then
    return M.repeat_interleave(x, repeats:item(), {dim = d})
  end
  if len > 0 and repeats:min() < 0 then
    fail(2, "repeat_interleave: repeats must be 0 or more, not %d", repeats:min())
  end
  local total = len > 0 and repeats:sum() or 0
  -- a one at the start of each element's run (runs of zero repeats share
  -- the next start), whose running sum is the 1-based source index
  local ends = repeats:cumsum()
  local marks = ml.zeros(total + 1, {dtype = "int64", device = x.device})
  marks = marks:index_add(1, ends - repeats + 1, ml.ones_like(repeats))
  return x:index_select(d, marks:narrow(1, 1, total):cumsum())
end

local METHODS = {"tril", "triu", "diag", "diagonal", "trace", "kron", "diff",
                 "tile", "repeat_interleave"}

function M.install(module)
  ml = module
  for k, f in pairs(M) do
    if k ~= "install" then ml[k] = f end
  end
  for _, k in ipairs(METHODS) do ml.methods[k] = M[k] end
end

return M
