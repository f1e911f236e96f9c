-- ml.dist, the Lua half: algorithms over sharded arrays, on ml.dist's
-- collectives (src/bindings/l_dist.c). install(ml) adds them to ml.dist.
--
-- knn: each rank holds a shard of the references (consecutive rows, in
-- rank order) and all the queries; each searches its shard, the
-- candidates (k per shard, with global indices) are all-gathered and the
-- k best kept by a stable selection, so ties go to the lower global
-- index, as the one-process search's.
--
-- mm: SUMMA (van de Geijn and Watts) on a pr x pc grid of ranks: rank
-- (i, j) (row-major, rank = i pc + j) holds block (i, j) of A (M x K) and
-- of B (K x N), blocks as even as can be, and computes block (i, j) of C.
-- For each panel of K (the common refinement of A's pc column blocks and
-- B's pr row blocks) the owner of A's panel sends it along its grid row
-- and the owner of B's panel along its grid column, then every rank adds
-- the product of the two panels. With replication c > 1 (2.5D, Solomonik
-- and Demmel), the ranks form c layers of pr x pc grids; layer l runs
-- the panels l, l + c, ... and the layers' partial products are summed.
local ml -- set by install
local check_options = require("moonlab.options").check

local M = {}

-- The first row (1-based) and the length of part q (0-based) of n split
-- into parts as even as can be, the longer first.
local function part(n, parts, q)
  local base, extra = n // parts, n % parts
  return q * base + math.min(q, extra) + 1, base + (q < extra and 1 or 0)
end
M.part = part

local function knn(queries, refs, k, opts)
  check_options("dist.knn", opts)
  local dist = ml.dist
  local n = dist.all_reduce(refs:size(1))
  if math.type(k) ~= "integer" or k < 1 or k > n then
    error(("knn: k = %s must be 1 to the %d references of all ranks")
          :format(tostring(k), n), 2)
  end
  local counts = dist.all_gather(ml.full({}, refs:size(1),
                                         {dtype = "int64"}))
  local offset = counts:narrow(1, 1, dist.rank()):sum()
  local kk = math.min(k, refs:size(1))
  local d, index
  if kk > 0 then
    d, index = ml.knn(queries, refs, kk, opts)
    index = index + offset
  else
    local m = queries:size(1)
    d = ml.zeros(m, 0, {dtype = queries.dtype == "float32" and "float32"
                                or "float64", device = queries.device})
    index = ml.zeros(m, 0, {dtype = "int64", device = queries.device})
  end
  -- Gathered along the first dimension: shards' candidates as rows.
  local D = dist.all_gather(d:t():contiguous()):t()
  local I = dist.all_gather(index:t():contiguous()):t()
  local largest = opts ~= nil and opts.metric == "ip"
  local best, at = D:topk(k, 2, {largest = largest})
  return best, I:gather(2, at)
end

-- The grid of size ranks: pr x pc x c from opts, or the squarest pr x pc
-- with c = 1.
local function grid(size, opts)
  local c = opts.replication or 1
  local g = opts.grid
  local pr, pc
  if g then
    pr, pc = g[1], g[2]
  else
    pr = math.floor(math.sqrt(size // c))
    while (size // c) % pr ~= 0 do pr = pr - 1 end
    pc = size // c // pr
  end
  if pr * pc * c ~= size then
    error(("mm: a grid of %d x %d x %d ranks, but the job has %d")
          :format(pr, pc, c, size), 3)
  end
  return pr, pc, c
end

-- The panels of K: {first, length, owner column of A, owner row of B}.
local function panels(K, pr, pc)
  local cuts, seen = {}, {}
  for _, parts in ipairs({pr, pc}) do
    for q = 0, parts - 1 do
      local first = part(K, parts, q)
      if not seen[first] then seen[first] = true; cuts[#cuts + 1] = first end
    end
  end
  table.sort(cuts)
  local out = {}
  for i, first in ipairs(cuts) do
    local last = (cuts[i + 1] or K + 1) - 1
    if last >= first then
      local col, row
      for q = 0, pc - 1 do
        local f, l = part(K, pc, q)
        if first >= f and first < f + l then col = q end
      end
      for q = 0, pr - 1 do
        local f, l = part(K, pr, q)
        if first >= f and first < f + l then row = q end
      end
      out[#out + 1] = {first, last - first + 1, col, row}
    end
  end
  return out
end

-- Sends block x from rank owner to every rank in peers, or receives it;
-- returns the block and the elements received.
local function spread(x, me, owner, peers, shape, like)
  local dist = ml.dist
  if me == owner then
    for _, p in ipairs(peers) do
      if p ~= owner then dist.send(x, p) end
    end
    return x, 0
  end
  local y = ml.empty(shape[1], shape[2], like)
  dist.recv(y, owner)
  return y, shape[1] * shape[2]
end

local function mm(A, B, opts)
  check_options("dist.mm", opts)
  opts = opts or {}
  local dist = ml.dist
  local size, rank = dist.size(), dist.rank()
  local M_, K, N = opts.m, opts.k, opts.n
  local pr, pc, c = grid(size, opts)
  local layer, r2 = rank // (pr * pc), rank % (pr * pc)
  local i, j = r2 // pc, r2 % pc
  local base = layer * pr * pc
  local _, mi = part(M_, pr, i)
  local _, nj = part(N, pc, j)
  local _, ka = part(K, pc, j)
  local _, kb = part(K, pr, i)
  if A.ndim ~= 2 or A:size(1) ~= mi or A:size(2) ~= ka
     or B.ndim ~= 2 or B:size(1) ~= kb or B:size(2) ~= nj then
    error(("mm: rank %d (grid row %d, column %d) holds A %s and B %s, "
           .. "expected %dx%d and %dx%d"):format(rank, i, j,
           table.concat(A.shape, "x"), table.concat(B.shape, "x"),
           mi, ka, kb, nj), 2)
  end
  local like = {dtype = A.dtype, device = A.device}
  local C = ml.zeros(mi, nj, like)
  local row, col = {}, {}
  for q = 0, pc - 1 do row[#row + 1] = base + i * pc + q end
  for q = 0, pr - 1 do col[#col + 1] = base + q * pc + j end
  local words = 0
  for s, p in ipairs(panels(K, pr, pc)) do
    if (s - 1) % c == layer then
      local first, len, owner_col, owner_row = p[1], p[2], p[3], p[4]
      local a, b
      local fa = part(K, pc, owner_col)
      local fb = part(K, pr, owner_row)
      local ap = j == owner_col and A:narrow(2, first - fa + 1, len)
                 :contiguous() or nil
      local bp = i == owner_row and B:narrow(1, first - fb + 1, len)
                 :contiguous() or nil
      local got
      a, got = spread(ap, rank, base + i * pc + owner_col, row, {mi, len},
                      like)
      words = words + got
      b, got = spread(bp, rank, base + owner_row * pc + j, col, {len, nj},
                      like)
      words = words + got
      C = C + a:mm(b)
    end
  end
  if c > 1 then
    -- the layers' partial products summed on layer 0, which sends the
    -- sum back (no cycle of blocking sends)
    local peer = {}
    for l = 1, c - 1 do peer[l] = l * pr * pc + r2 end
    if layer == 0 then
      for _, p in ipairs(peer) do
        local y = ml.empty(mi, nj, like)
        dist.recv(y, p)
        words = words + mi * nj
        C = C + y
      end
      for _, p in ipairs(peer) do dist.send(C, p) end
    else
      dist.send(C, r2)
      dist.recv(C, r2)
      words = words + mi * nj
    end
  end
  if opts.verbose then
    local P = size
    local n3 = (M_ * N * K) ^ (1 / 3)
    local bound = n3 * n3 / math.sqrt(c * P)
    print(("mm: rank %d received %d words on a %d x %d x %d grid, %.2f "
           .. "times the lower bound (mnk)^(2/3) / sqrt(c p) = %.0f")
          :format(rank, words, pr, pc, c, words / bound, bound))
  end
  return C
end

function M.install(ml_)
  ml = ml_
  ml_.dist.knn = knn
  ml_.dist.mm = mm
  ml_.dist.part = part
end

return M
