-- ml.binary on the GPU against the CPU (kernels/binary.cu against
-- src/cpu/cpu_binary.c), bit for bit, on random inputs of awkward sizes
-- that reach every path: words within and across the pack kernel's
-- groups of 8, products of one and many CTA tiles (128 x 256, and
-- 192 x 256 on a Hopper for long k) with k of
-- one, two and many stages (512 bits) and half stages, batches, views;
-- Hamming kNN through the counting selection (k <= 32: a row's pairs
-- held in registers, or through a histogram where they overflow), the
-- warp lists (k <= 256) and the block lists, over several reference
-- chunks, with ties, and 256-bit codes of every popcount (the stream
-- filter's rounds sorted by it). Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda binary", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

require "moonlab.test"

local GPU = "cuda:0"

local function equal(c, g, what)
  assert.equal(GPU, g.device, what .. ": device")
  assert.same(c.shape, g.shape, what .. ": shape")
  assert.equal(c.dtype, g.dtype, what .. ": dtype")
  assert.is_true(ml.array_equal(c, g:cpu()), what .. ": values")
end

-- ±1 float32 on the CPU.
local function pm1(shape)
  return ml.where(ml.ge(ml.randn(shape, {device = "cpu"}), 0), 1, -1):astype("float32")
end

describe("cuda binary.pack and unpack", function()
  it("pack as the CPU does, for both float dtypes, NaN and views", function()
    ml.seed(11)
    for _, len in ipairs({1, 31, 32, 33, 255, 256, 257, 1000, 4097}) do
      for _, t in ipairs({"float32", "float64", "int32"}) do
        local x = ml.randn(7, len, {device = "cpu"}):astype(t)
        equal(ml.binary.pack(x).words, ml.binary.pack(x:cuda()).words, t .. " len " .. len)
      end
    end
    local x = ml.randn(300, 70, {device = "cpu"})
    x[{3, 5}] = 0 / 0
    x[{4, 6}] = -0.0
    equal(ml.binary.pack(x, {dim = 1}).words, ml.binary.pack(x:cuda(), {dim = 1}).words, "dim 1")
    equal(ml.binary.pack(x:t()).words, ml.binary.pack(x:cuda():t()).words, "transposed")
  end)

  it("unpack as the CPU does, for every dtype", function()
    ml.seed(12)
    local p = ml.binary.pack(ml.randn(5, 3, 333, {device = "cpu"}), {dim = 2})
    for _, t in ipairs({"float32", "float64", "int32", "int64"}) do
      equal(p:unpack({dtype = t}), p:to(GPU):unpack({dtype = t}), t)
    end
  end)
end)

describe("cuda binary.mm and hamming", function()
  it("equal the CPU's on every size of tile and k", function()
    ml.seed(13)
    local sizes = {{1, 1}, {1, 300}, {129, 1}, {127, 257}, {131, 263}, {300, 520}}
    -- 4097: a last k-step of 256 bits, 5000: a whole one of 512
    for _, k in ipairs({1, 31, 33, 255, 256, 257, 511, 512, 513, 767, 1000, 4097, 5000}) do
      for _, mn in ipairs(sizes) do
        local a, b = pm1({mn[1], k}), pm1({k, mn[2]})
        local what = ("%dx%dx%d"):format(mn[1], k, mn[2])
        local c = ml.binary.mm(a, b)
        equal(c, ml.binary.mm(a:cuda(), b:cuda()), what)
        equal(a:mm(b):astype("int32"), c:cuda(), what .. " float product")
        equal(ml.binary.hamming(a, b:t()), ml.binary.hamming(a:cuda(), b:t():cuda()),
              what .. " hamming")
      end
    end
  end)

  it("batch as the CPU does", function()
    ml.seed(14)
    local a, b = pm1({3, 2, 130, 600}), pm1({3, 2, 600, 70})
    equal(ml.binary.mm(a, b), ml.binary.mm(a:cuda(), b:cuda()), "batch")
    a, b = pm1({2, 3, 130, 4200}), pm1({2, 3, 4200, 270})
    equal(ml.binary.mm(a, b), ml.binary.mm(a:cuda(), b:cuda()), "batch, long k")
  end)

  it("takes more tiles than the GPU has multiprocessors, each CTA several", function()
    ml.seed(20)
    -- k of 4096 bits and over: kernels/binary_wgmma.cu on a Hopper, whose
    -- resident CTAs take tiles of 192 x 256 in turn; 150 items of 2 x 2
    -- tiles, the second row and column tiles partial, and k of 4097 (five
    -- 1024-bit k-steps, the last with one bit)
    local a, b = pm1({150, 200, 4097}), pm1({150, 4097, 260})
    equal(ml.binary.mm(a, b), ml.binary.mm(a:cuda(), b:cuda()), "600 tiles")
    equal(ml.binary.hamming(a, b:transpose(-1, -2)),
          ml.binary.hamming(a:cuda(), b:transpose(-1, -2):cuda()), "600 tiles, hamming")
  end)
end)

-- ml.knn of the codes q and r (±1 on the CPU, packed here) on both
-- devices, for each k of ks.
local function knn_both(q, r, ks)
  local pq, pr = ml.binary.pack(q), ml.binary.pack(r)
  local gq, gr = pq:to(GPU), pr:to(GPU)
  for _, k in ipairs(ks) do
    local cd, ci = ml.knn(pq, pr, k, {metric = "hamming"})
    local gd, gi = ml.knn(gq, gr, k, {metric = "hamming"})
    equal(cd, gd, "k = " .. k .. " dist")
    equal(ci, gi, "k = " .. k .. " index")
  end
end

describe("cuda binary peak", function()
  it("measures the bare AND-popcount rate, at least that of the product it bounds", function()
    local core = require "moonlab.binary_core"
    local peak = core.peak(GPU)
    local a = ml.binary.pack(ml.randn(2048, 4096, {device = GPU}))
    local b = ml.binary.pack(ml.randn(4096, 2048, {device = GPU}), {dim = 1})
    ml.binary.mm(a, b)
    ml.synchronize(GPU)
    local t0 = ml.clock()
    ml.binary.mm(a, b)
    ml.synchronize(GPU)
    local rate = 2 * 2048 * 2048 * 4096 / (ml.clock() - t0)
    assert.is_true(peak > 1e12 and peak < 1e17, ("peak %g ops/s"):format(peak))
    assert.is_true(peak >= rate, ("peak %g below the product's %g ops/s"):format(peak, rate))
  end)
end)

describe("cuda knn hamming", function()
  it("equals the CPU's, ties to the lower index, for short and long lists", function()
    ml.seed(15)
    knn_both(pm1({37, 20}), pm1({3001, 20}), {1, 10, 32, 256, 257, 700, 3001}) -- 20 bits: many ties
  end)

  it("filters past the first chunk, and tiles every chunk for large k", function()
    ml.seed(16)
    -- 2048 queries: a first chunk of 1024 references (4864, 16 k rounded
    -- up to the tile, for k = 300), then rounds of the filter (3 for
    -- k = 10); tiles of 65536 for k > 8192 (kernels/binary.cu)
    knn_both(pm1({2048, 64}), pm1({70001, 64}), {10, 300, 9000})
  end)

  it("streams 256-bit codes for a partial and several query blocks", function()
    ml.seed(19)
    -- 500 and 1500 queries (one block and two of 1024 in
    -- kernels/binary_stream.cuh) against 40001 references: rounds of the
    -- filter split into work items, and a last partial step
    local r = pm1({40001, 256})
    knn_both(pm1({500, 256}), r, {1, 10})
    knn_both(pm1({1500, 256}), r, {1, 10, 40})
  end)

  it("streams 256-bit codes of every popcount, sorted by it in each round", function()
    ml.seed(21)
    -- rows whose share of +1 runs from about 0 to 1, so that the steps of
    -- kernels/binary_stream.cuh change popcount often and the least one
    -- of a step moves the limits (kernels/binary_order.cuh)
    local function spread(n)
      local z = ml.randn({n, 1}, {device = "cpu"}) * 1.5
      local x = ml.randn({n, 256}, {device = "cpu"})
      return ml.where(ml.ge(x, z), 1, -1):astype("float32")
    end
    knn_both(spread(700), spread(40001), {1, 10, 40})
  end)

  it("votes on two steps where few references pass, ties and copies among them", function()
    ml.seed(22)
    -- k = 1 and 2 against 140001 references: the rounds from 66560 (k =
    -- 1) and from 33792 (k = 2) to the end vote every two steps
    -- (kernels/binary.cu); copies of queries lie there, twice each, and
    -- the last step is partial
    local q = pm1({300, 256})
    local r = ml.cat({pm1({100000, 256}), q[{{1, 40}, {}}], pm1({20000, 256}),
                      q[{{1, 40}, {}}], pm1({19921, 256})}, 1)
    knn_both(q, r, {1, 2, 10})
  end)

  it("settles a warp's records of many ties and recomputes overflows, on 256-bit codes", function()
    ml.seed(20)
    -- 1100 copies of one code against 70000 random references, then 3000
    -- copies of it and 1001 more random ones: every step over the copies
    -- notes all 64 rows of every warp (32 records a step), and each query
    -- has 3000 pairs at distance 0 in a round of the filter, more than its
    -- candidates hold (256 for k = 10). The code has about 84% of its
    -- bits set, so that its copies sort last in their round (for k = 1
    -- one that votes every two steps) and fill its partial last step;
    -- there each warp keeps more pairs than its stage holds (256), and
    -- the rest go straight to the candidates. For k = 10 and 40 the
    -- first round tests quarter steps (kernels/binary.cu).
    local x = ml.where(ml.ge(ml.randn({1, 256}, {device = "cpu"}), -1), 1, -1):astype("float32")
    local q = ml.ones(1100, 1, {dtype = "float32", device = "cpu"}) * x
    local copies = ml.ones(3000, 1, {dtype = "float32", device = "cpu"}) * x
    knn_both(q, ml.cat({pm1({70000, 256}), copies, pm1({1001, 256})}, 1), {1, 10, 40})
  end)

  it("filters codes longer than 256 bits through the tiled kernel", function()
    ml.seed(18)
    -- 300-bit codes (two 256-bit planes): the filter's tiled path; 256
    -- bits and fewer stream (kernels/binary_stream.cuh)
    knn_both(pm1({700, 300}), pm1({30001, 300}), {1, 10})
  end)

  it("recomputes the queries whose candidates overflow", function()
    ml.seed(17)
    -- one code for every query, and 4096 copies of it in the last round
    -- of the filter: more references nearer than the list's k-th than a
    -- query's candidates a round hold (256 for k = 10, 2400 for k = 300)
    local q = ml.ones(2048, 1, {dtype = "float32", device = "cpu"}) * pm1({1, 64})
    knn_both(q, ml.cat({pm1({65536, 64}), q, q}, 1), {10, 300})
  end)
end)
