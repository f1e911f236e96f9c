-- einsum: Einstein summation with numpy.einsum's subscripts, as views,
-- sums and matrix products (no loops over elements). An index repeated
-- in one operand takes the diagonal; an index of one operand alone that
-- the output lacks is summed first; operands are then contracted left to
-- right, two at a time: each pair is permuted (a view) into batch x rows
-- x contracted and batch x contracted x columns and goes to one matmul,
-- which reads transposed views without copying, or, when nothing is
-- contracted, is multiplied elementwise with broadcasting. "..." stands
-- for broadcast dimensions, aligned from the right as NumPy does; their
-- internal labels are ".1" (the last), ".2", ... init.lua installs it.
local args = require "moonlab.args"
local fail, shape_str = args.fail, args.shape_str

local M = {}

local ml -- the module, given by install

-- The labels of one term for an operand of nd dimensions (nd nil: the
-- output, whose "..." takes ell dimensions).
local function labels(term, nd, ell, k)
  local r, letters, has = {}, 0, false
  local i = 1
  while i <= #term do
    if term:sub(i, i + 2) == "..." then
      if has then fail(3, "einsum: more than one \"...\" in term '%s'", term) end
      has, r[#r + 1], i = true, "...", i + 3
    else
      local c = term:sub(i, i)
      if not c:match("%a") then fail(3, "einsum: invalid character '%s' in subscripts", c) end
      r[#r + 1], letters, i = c, letters + 1, i + 1
    end
  end
  local n = nd and nd - letters or ell
  if nd and (n < 0 or (n > 0 and not has)) then
    fail(3, "einsum: term '%s' has %d indices for operand %d of %d dimensions",
         term, letters, k, nd)
  end
  local out = {}
  for _, l in ipairs(r) do
    if l == "..." then
      for e = n, 1, -1 do out[#out + 1] = "." .. e end
    else
      out[#out + 1] = l
    end
  end
  return out, has and n or 0
end

local function index_of(list, v)
  for i, w in ipairs(list) do if w == v then return i end end
end

local function label_str(l)
  return l:sub(1, 1) == "." and "..." or l
end

-- x (labels l) with every index repeated in it (over one size, checked)
-- reduced to its diagonal.
local function diagonals(x, l)
  local i = 1
  while i <= #l do
    local j = index_of({table.unpack(l, i + 1)}, l[i])
    if j then
      j = i + j
      local lab = l[i]
      x = ml.diagonal(x, {dim1 = i, dim2 = j})
      table.remove(l, j)
      table.remove(l, i)
      l[#l + 1] = lab
    else
      i = i + 1
    end
  end
  return x
end

-- x summed over its indices that are not in keep (a set).
local function sum_unkept(x, l, keep)
  for d = #l, 1, -1 do
    if not keep[l[d]] then
      x = x:sum(d)
      table.remove(l, d)
    end
  end
  return x
end

local function concat(...)
  local r = {}
  for _, list in ipairs({...}) do
    for _, v in ipairs(list) do r[#r + 1] = v end
  end
  return r
end

local function set(...)
  local s = {}
  for _, list in ipairs({...}) do
    for _, v in ipairs(list) do s[v] = true end
  end
  return s
end

-- x (labels l) permuted into the order of list, with dimensions of size 1
-- for the indices of list that x lacks.
local function arrange(x, l, list)
  local perm, shape = {}, {}
  for _, v in ipairs(list) do
    local d = index_of(l, v)
    if d then perm[#perm + 1] = d end
    shape[#shape + 1] = d and x.shape[d] or 1
  end
  local identity = true
  for i, d in ipairs(perm) do identity = identity and i == d end
  if not identity then x = x:permute(perm) end
  if #shape ~= x:dim() then x = x:reshape(shape) end
  return x
end

-- The product of the sizes of x's indices in list (all present).
local function extent(x, l, list)
  local p = 1
  for _, v in ipairs(list) do p = p * x.shape[index_of(l, v)] end
  return p
end

-- The pair a (labels la), b (labels lb) contracted over the indices they
-- share that keep lacks; returns the result and its labels.
local function contract(a, la, b, lb, keep, order)
  local ka, kb = set(lb), set(la)
  for v in pairs(keep) do ka[v], kb[v] = true, true end
  a = sum_unkept(a, la, ka)
  b = sum_unkept(b, lb, kb)
  -- an index shared but of size 1 in one operand is summed in the other
  for _, v in ipairs({table.unpack(la)}) do
    local i, j = index_of(la, v), index_of(lb, v)
    if j and not keep[v] and a.shape[i] ~= b.shape[j] then
      if a.shape[i] == 1 then
        a, b = a:squeeze(i), b:sum(j)
      else
        a, b = a:sum(i), b:squeeze(j)
      end
      table.remove(la, i)
      table.remove(lb, j)
    end
  end
  local batch, rows, inner, cols = {}, {}, {}, {}
  local sa, sb = set(la), set(lb)
  for _, v in ipairs(order) do
    if sa[v] and sb[v] then
      if keep[v] then batch[#batch + 1] = v end
    elseif sa[v] then
      rows[#rows + 1] = v
    elseif sb[v] then
      cols[#cols + 1] = v
    end
  end
  for _, v in ipairs(la) do
    if sb[v] and not keep[v] then inner[#inner + 1] = v end
  end
  local out = concat(batch, rows, cols)
  if #inner == 0 then
    return arrange(a, la, out) * arrange(b, lb, out), out
  end
  local ap = arrange(a, la, concat(batch, rows, inner))
  local bp = arrange(b, lb, concat(batch, inner, cols))
  local bsa, bsb, shape = {}, {}, {}
  for i = 1, #batch do
    bsa[i], bsb[i] = ap.shape[i], bp.shape[i]
    shape[i] = math.max(bsa[i], bsb[i])
  end
  local m, k, n = extent(a, la, rows), extent(a, la, inner), extent(b, lb, cols)
  -- a single index on each side needs no reshape: matmul reads the
  -- permuted views as they are
  local function batched(x, bs, r, c)
    if x:dim() == #bs + 2 and x.shape[#bs + 1] == r and x.shape[#bs + 2] == c then
      return x
    end
    return x:reshape(concat(bs, {r, c}))
  end
  local r = ml.matmul(batched(ap, bsa, m, k), batched(bp, bsb, k, n))
  for _, v in ipairs(rows) do shape[#shape + 1] = a.shape[index_of(la, v)] end
  for _, v in ipairs(cols) do shape[#shape + 1] = b.shape[index_of(lb, v)] end
  local same = #shape == r:dim()
  for i = 1, #shape do same = same and shape[i] == r.shape[i] end
  if not same then r = r:reshape(shape) end
  return r, out
end

function M.einsum(subscripts, ...)
  if type(subscripts) ~= "string" then
    fail(2, "einsum: subscripts must be a string, not %s", type(subscripts))
  end
  local ops = table.pack(...)
  local spec = subscripts:gsub("%s", "")
  local lhs, rhs = spec:match("^(.-)%->(.*)$")
  if not lhs then lhs = spec end
  local terms = {}
  for t in (lhs .. ","):gmatch("([^,]*),") do terms[#terms + 1] = t end
  if #terms ~= ops.n then
    fail(2, "einsum: subscripts '%s' name %d operands, got %d", subscripts, #terms, ops.n)
  end
  if ops.n == 0 then fail(2, "einsum: expects at least one operand") end
  local xs, ls, ell, count = {}, {}, 0, {}
  for k = 1, ops.n do
    local x = ops[k]
    if not ml.is_array(x) then x = ml.array(x) end
    if k > 1 and x.device ~= xs[1].device then
      fail(2, "einsum: arrays on different devices (%s and %s); move one with :to()",
           xs[1].device, x.device)
    end
    local e
    ls[k], e = labels(terms[k], x:dim(), nil, k)
    ell = math.max(ell, e)
    xs[k] = x
    for _, v in ipairs(ls[k]) do count[v] = (count[v] or 0) + 1 end
  end
  -- the size of each index, broadcasting those of size 1
  local size = {}
  for k = 1, ops.n do
    local own = {}
    for d, v in ipairs(ls[k]) do
      local s = xs[k].shape[d]
      if own[v] and own[v] ~= s then
        fail(2, "einsum: index %s repeated in operand %d over sizes %d and %d",
             label_str(v), k, own[v], s)
      end
      own[v] = s
      if size[v] and size[v] ~= s and size[v] ~= 1 and s ~= 1 then
        fail(2, "einsum: index %s has size %d in operand %d and %d before (shapes %s)",
             label_str(v), s, k, size[v], shape_str(xs[k]))
      end
      if not size[v] or size[v] == 1 then size[v] = s end
    end
  end
  local out
  if rhs then
    out = labels(rhs, nil, ell)
    local seen = {}
    for _, v in ipairs(out) do
      if seen[v] then fail(2, "einsum: index %s repeated in the output", label_str(v)) end
      if not size[v] then fail(2, "einsum: output index %s is in no operand", label_str(v)) end
      seen[v] = true
    end
  else
    out = {}
    for e = ell, 1, -1 do out[#out + 1] = "." .. e end
    local once = {}
    for v, c in pairs(count) do
      if c == 1 and v:sub(1, 1) ~= "." then once[#once + 1] = v end
    end
    table.sort(once)
    for _, v in ipairs(once) do out[#out + 1] = v end
  end
  local keep_out = set(out)
  for k = 1, ops.n do
    xs[k] = diagonals(xs[k], ls[k])
    local others = {}
    for j = 1, ops.n do
      if j ~= k then others[#others + 1] = ls[j] end
    end
    xs[k] = sum_unkept(xs[k], ls[k], set(out, table.unpack(others)))
  end
  -- every index in an order that puts the output's first
  local order, listed = {}, {}
  for _, list in ipairs({out, table.unpack(ls, 1, ops.n)}) do
    for _, v in ipairs(list) do
      if not listed[v] then order[#order + 1], listed[v] = v, true end
    end
  end
  local r, lr = xs[1], ls[1]
  for k = 2, ops.n do
    local keep = set(out, table.unpack(ls, k + 1, ops.n))
    r, lr = contract(r, lr, xs[k], ls[k], keep, order)
  end
  r = sum_unkept(r, lr, keep_out)
  return arrange(r, lr, out)
end

function M.install(module)
  ml = module
  ml.einsum = M.einsum
end

return M
