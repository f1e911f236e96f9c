-- ml.binary: ±1 matrices packed 32 signs to an int32 word, their exact
-- products and Hamming distances, and the Hamming kNN search that
-- ml.knn's metric "hamming" calls. A packed array is a Lua object over an
-- int32 array of words (src/core/binary_backend.h lays out the rows: the
-- signs of a row in order, padded with zero bits to a multiple of 256)
-- that keeps what the words cannot say: the logical length (bits) and the
-- dimension it was packed along (dim, counted from the end, -1 for the
-- last). The primitives are src/bindings/l_binary.c's, left in
-- package.loaded["moonlab.binary_core"]. init.lua installs ml.binary.
local check_options = require("moonlab.options").check
local core = require "moonlab.binary_core"
local args = require "moonlab.args"
local fail, shape_str, array = args.fail, args.shape_str, args.array

local M = {}

local ml -- the module, given by install

local Packed = {}
Packed.__index = Packed

local function is_packed(x)
  return getmetatable(x) == Packed
end

-- The logical shape of a packed array: its words' shape with the bits in
-- place of the words, moved to dim.
local function logical_shape(p)
  local s = {}
  local ws = p.words.shape
  for d = 1, #ws - 1 do s[#s + 1] = ws[d] end
  table.insert(s, #ws + p.dim + 1, p.bits)
  return s
end

local function new(words, bits, dim)
  local p = setmetatable({words = words, bits = bits, dim = dim}, Packed)
  p.shape = logical_shape(p)
  p.device = words.device
  return p
end

-- The dimension d (1-based, negative from the end) of nd dimensions, as a
-- negative one.
local function from_end(level, name, d, nd)
  if math.type(d) ~= "integer" then
    fail(level + 1, "%s: dim must be an integer, not %s", name, tostring(d))
  end
  local a = d < 0 and nd + d + 1 or d
  if d == 0 or a < 1 or a > nd then
    fail(level + 1, "%s: dimension %d out of range for %d dimensions", name, d, nd)
  end
  return a - nd - 1
end

function M.pack(x, opts)
  check_options("binary.pack", opts)
  x = array(x)
  local nd = x:dim()
  if nd == 0 then fail(2, "binary.pack: cannot pack a scalar") end
  local dim = from_end(2, "binary.pack", opts and opts.dim or -1, nd)
  if x.shape[nd + dim + 1] == 0 then
    fail(2, "binary.pack: cannot pack %s along an empty dimension", shape_str(x.shape))
  end
  return new(core.pack(x, nd + dim), x.shape[nd + dim + 1], dim)
end

local function check_packed(level, name, what, p)
  if not is_packed(p) then
    fail(level + 1, "%s: %s must be a packed array (ml.binary.pack), not %s", name, what,
         ml.is_array(p) and "an array" or type(p))
  end
end

function M.unpack(p, opts)
  check_options("binary.unpack", opts)
  check_packed(2, "binary.unpack", "its argument", p)
  local dtype = opts and opts.dtype or ml.get_default_dtype()
  local nd = #p.shape
  return core.unpack(p.words, p.bits, dtype, nd + p.dim)
end

function M.to(p, device)
  check_packed(2, "binary.to", "its first argument", p)
  return new(p.words:to(device), p.bits, p.dim)
end

-- The file: an int32 .npy of h + r rows of w words, h header rows (the
-- magic number, bits, dim, the words' ndim and shape, zeros after) then
-- the r = prod(shape[1..nd-1]) rows of words.
local MAGIC = 0x4d4c4231 -- "MLB1"

function M.save(p, path)
  check_packed(2, "binary.save", "its first argument", p)
  if type(path) ~= "string" then
    fail(2, "binary.save: path must be a string, not %s", type(path))
  end
  local ws = p.words.shape
  local w, rows = ws[#ws], 1
  for d = 1, #ws - 1 do rows = rows * ws[d] end
  local head = {MAGIC, p.bits, p.dim, #ws}
  for d = 1, #ws do head[#head + 1] = ws[d] end
  local h = (#head + w - 1) // w
  for i = #head + 1, h * w do head[i] = 0 end
  local file = ml.zeros(h + rows, w, {dtype = "int32", device = "cpu"})
  file[{{1, h}, {}}] = ml.array(head, {dtype = "int32", device = "cpu"}):reshape(h, w)
  if rows > 0 then
    file[{{h + 1, h + rows}, {}}] = p.words:cpu():reshape(rows, w)
  end
  ml.save_npy(path, file)
end

function M.load(path, opts)
  check_options("binary.load", opts)
  local file = ml.load_npy(path)
  local bad = file.dtype ~= "int32" or file:dim() ~= 2 or file.shape[2] < 8
  local w = not bad and file.shape[2]
  if bad or file[{1, 1}] ~= MAGIC then
    fail(2, "binary.load: %s holds no packed array (ml.binary.save)", path)
  end
  local nd = file[{1, 4}]
  local head = file[{{1, (4 + nd + w - 1) // w}, {}}]:reshape(-1)
  local ws, rows = {}, 1
  for d = 1, nd do ws[d] = head[5 + d - 1] end
  for d = 1, nd - 1 do rows = rows * ws[d] end
  local h = (4 + nd + w - 1) // w
  if file.shape[1] ~= h + rows or ws[nd] ~= w then
    fail(2, "binary.load: %s is truncated or corrupt", path)
  end
  local words = file[{{h + 1, h + rows}, {}}]:clone():reshape(table.unpack(ws))
  if opts and opts.device then words = words:to(opts.device) end
  return new(words, file[{1, 2}], file[{1, 3}])
end

-- A ±1 operand of mm or hamming as packed words along dimension `along`
-- (from the end), and its shape.
local function operand(level, name, what, x, along, hint)
  if is_packed(x) then
    if x.dim ~= along then
      fail(level + 1, "%s: %s is packed along dimension %d; it must be packed along %d (%s)",
           name, what, x.dim, along, hint)
    end
  else
    x = array(x)
    if x:dim() < 2 or x.shape[x:dim() + along + 1] == 0 then
      fail(level + 1, "%s: %s %s must have 2 or more dimensions and a nonempty %s",
           name, what, shape_str(x.shape), hint)
    end
    x = new(core.pack(x, x:dim() + along), x.shape[x:dim() + along + 1], along)
  end
  if #x.shape < 2 then
    fail(level + 1, "%s: %s %s must have 2 or more dimensions", name, what, shape_str(x.shape))
  end
  return x
end

local function batch_str(s)
  local t = {}
  for d = 1, #s - 2 do t[d] = s[d] end
  return shape_str(t)
end

local function same_batch(a, b)
  if #a ~= #b then return false end
  for d = 1, #a - 2 do
    if a[d] ~= b[d] then return false end
  end
  return true
end

function M.mm(a, b)
  local name = "binary.mm"
  a = operand(2, name, "the first operand", a, -1, "its k, the last")
  b = operand(2, name, "the second operand", b, -2, "its k, the second to last")
  local sa, sb = a.shape, b.shape
  if a.bits ~= b.bits then
    fail(2, "%s: shapes %s and %s: inner lengths %d and %d differ", name, shape_str(sa),
         shape_str(sb), a.bits, b.bits)
  end
  if not same_batch(sa, sb) then
    fail(2, "%s: shapes %s and %s: batch dimensions %s and %s differ", name, shape_str(sa),
         shape_str(sb), batch_str(sa), batch_str(sb))
  end
  return core.mm(a.words, b.words, a.bits, false, name)
end

function M.hamming(a, b)
  local name = "binary.hamming"
  a = operand(2, name, "the first operand", a, -1, "its code, the last")
  b = operand(2, name, "the second operand", b, -1, "its code, the last")
  local sa, sb = a.shape, b.shape
  if a.bits ~= b.bits then
    fail(2, "%s: codes of %d and %d bits (shapes %s and %s)", name, a.bits, b.bits,
         shape_str(sa), shape_str(sb))
  end
  if not same_batch(sa, sb) then
    fail(2, "%s: shapes %s and %s: batch dimensions %s and %s differ", name, shape_str(sa),
         shape_str(sb), batch_str(sa), batch_str(sb))
  end
  return core.mm(a.words, b.words, a.bits, true, name)
end

-- ml.knn(q, r, k, {metric = "hamming"}), from src/bindings/l_knn.c.
function M.knn(q, r, k, opts)
  for key in pairs(opts) do
    if key ~= "metric" then
      fail(3, "knn: option '%s' does not apply to the metric hamming", tostring(key))
    end
  end
  q = operand(3, "knn", "the queries", q, -1, "its code, the last")
  r = operand(3, "knn", "the references", r, -1, "its code, the last")
  if #q.shape ~= 2 or #r.shape ~= 2 then
    fail(3, "knn: hamming queries %s and references %s must be matrices of codes",
         shape_str(q.shape), shape_str(r.shape))
  end
  if q.bits ~= r.bits then
    fail(3, "knn: codes of %d and %d bits (queries %s, references %s)", q.bits, r.bits,
         shape_str(q.shape), shape_str(r.shape))
  end
  if math.type(k) ~= "integer" then
    fail(3, "knn: k must be an integer, not %s", tostring(k))
  end
  return core.knn(q.words, r.words, q.bits, k, "knn")
end

Packed.unpack = M.unpack
Packed.to = M.to
Packed.save = M.save
Packed.__tostring = function(p)
  return ("packed ±1 %s (%d bits along dimension %d) [%s]"):format(
    shape_str(p.shape), p.bits, p.dim, p.device)
end

M.is_packed = is_packed

function M.install(module)
  ml = module
  ml.binary = {
    pack = M.pack, unpack = M.unpack, mm = M.mm, hamming = M.hamming,
    to = M.to, save = M.save, load = M.load, is_packed = M.is_packed,
  }
end

return M
