-- ml.binary and ml.knn's metric hamming on the default device
-- (MOONLAB_DEVICE=cuda runs them on a GPU): the packed words against
-- NumPy's packbits, products against NumPy's integer products and the
-- float product of the ±1 matrices, distances and neighbours against a
-- brute force with ties (tests/fixtures/binary/make.py); round trips,
-- views, batches, files, devices and errors.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/binary/"
local DEV = ml.device()

local function load(name) return ml.load_npy(DIR .. name .. ".npy"):to(DEV) end

-- ±1 of dtype t, drawn with a fixed seed.
local function pm1(shape, t)
  return ml.where(ml.ge(ml.randn(shape, {device = DEV}), 0), 1, -1):astype(t or "float64")
end

local function same(want, got, what)
  assert.same(want.shape, got.shape, what .. ": shape")
  assert.equal(want.dtype, got.dtype, what .. ": dtype")
  assert.is_true(ml.array_equal(want, got), what .. ": values")
end

describe("binary.pack", function()
  it("lays out the signs as numpy.packbits does, little-endian, padded to 256", function()
    local p = ml.binary.pack(load("words_x"))
    same(load("words_out"), p.words, "words")
    assert.equal(70, p.bits)
    assert.equal(-1, p.dim)
    assert.same({3, 70}, p.shape)
    assert.equal(DEV, p.device)
  end)

  it("round-trips through unpack along any dimension, for every dtype", function()
    ml.seed(1)
    for _, t in ipairs({"float64", "float32", "int32", "int64"}) do
      local x = pm1({4, 33, 5}, t)
      for _, dim in ipairs({1, 2, 3, -1, -2}) do
        local p = ml.binary.pack(x, {dim = dim})
        same(x, p:unpack({dtype = t}), t .. " dim " .. dim)
        assert.same({4, 33, 5}, p.shape)
      end
    end
  end)

  it("takes x >= 0 as +1 (zeros and -0 included) and NaN as -1", function()
    local x = ml.array({{0, -0.0, 0 / 0, -1, 2.5, -1e-300}}, {device = DEV})
    same(ml.array({{1, 1, -1, -1, 1, -1}}, {dtype = "float64", device = DEV}), ml.binary.unpack(ml.binary.pack(x)),
         "signs")
  end)

  it("packs views (transposed, sliced) like their copies", function()
    ml.seed(2)
    local x = ml.randn(40, 300, {device = DEV})
    for _, v in ipairs({x:t(), x[{{3, 40, 2}, {}}], x[{{}, {10, 271}}]}) do
      same(ml.binary.pack(v:clone()).words, ml.binary.pack(v).words, "view")
    end
  end)

  it("gives empty words for empty rows and rejects an empty packed dimension", function()
    local p = ml.binary.pack(ml.zeros(0, 9, {device = DEV}))
    assert.same({0, 8}, p.words.shape)
    assert.same({0, 9}, ml.binary.unpack(p).shape)
    assert.error_matches(function() ml.binary.pack(ml.zeros(3, 0)) end,
                         "binary.pack: cannot pack 3x0 along an empty dimension")
    assert.error_matches(function() ml.binary.pack(ml.zeros({})) end,
                         "binary.pack: cannot pack a scalar")
    assert.error_matches(function() ml.binary.pack(ml.zeros(2, 3), {dim = 3}) end,
                         "binary.pack: dimension 3 out of range for 2 dimensions")
  end)
end)

describe("binary.mm", function()
  it("equals NumPy's integer product for k = 1, 31, 33, 255, 257, 4097", function()
    for _, k in ipairs({1, 31, 33, 255, 257, 4097}) do
      local a, b = load("mm_k" .. k .. "_a"), load("mm_k" .. k .. "_b")
      local want = load("mm_k" .. k .. "_out")
      same(want, ml.binary.mm(a, b), "k = " .. k)
      same(want, ml.binary.mm(ml.binary.pack(a), ml.binary.pack(b, {dim = 1})), "packed k = " .. k)
      same(want, ml.binary.mm(a:astype("float32"), ml.binary.pack(b, {dim = -2})), "mixed")
    end
  end)

  it("equals the float product of the ±1 matrices for m, n = 1 and primes", function()
    ml.seed(3)
    for _, k in ipairs({1, 31, 33, 255, 257, 4097}) do
      for _, mn in ipairs({{1, 1}, {1, 7}, {13, 1}, {17, 19}, {37, 3}}) do
        local a, b = pm1({mn[1], k}), pm1({k, mn[2]})
        same(a:mm(b):astype("int32"), ml.binary.mm(a, b), ("%dx%dx%d"):format(mn[1], k, mn[2]))
      end
    end
  end)

  it("is batched over leading dimensions", function()
    ml.seed(4)
    local a, b = pm1({2, 3, 5, 70}), pm1({2, 3, 70, 4})
    local c = ml.binary.mm(a, b)
    assert.same({2, 3, 5, 4}, c.shape)
    same(ml.matmul(a, b):astype("int32"), c, "batch")
  end)

  it("rejects mismatched lengths, batches and wrongly packed operands", function()
    local a, b = ml.ones(3, 5), ml.ones(6, 2)
    assert.error_matches(function() ml.binary.mm(a, b) end,
                         "binary.mm: shapes 3x5 and 6x2: inner lengths 5 and 6 differ")
    assert.error_matches(function() ml.binary.mm(ml.binary.pack(a), ml.binary.pack(ml.ones(5, 2))) end,
                         "binary.mm: the second operand is packed along dimension %-1; it must be packed along %-2")
    assert.error_matches(function() ml.binary.mm(ml.binary.pack(a, {dim = 1}), ml.ones(5, 2)) end,
                         "binary.mm: the first operand is packed along dimension %-2; it must be packed along %-1")
    assert.error_matches(function() ml.binary.mm(ml.ones(2, 3, 5), ml.ones(3, 5, 2)) end,
                         "binary.mm: shapes 2x3x5 and 3x5x2: batch dimensions 2 and 3 differ")
    assert.error_matches(function() ml.binary.mm(ml.ones(5), ml.ones(5, 2)) end,
                         "binary.mm: the first operand 5 must have 2 or more dimensions")
  end)
end)

describe("binary.hamming", function()
  it("equals the brute-force distances and (k - dot) / 2", function()
    local q, r = load("codes_q"), load("codes_r")
    local h = ml.binary.hamming(q, r)
    same(load("hamming_out"), h, "hamming")
    same(load("hamming_out"), ml.binary.hamming(ml.binary.pack(q), ml.binary.pack(r)), "packed")
    local dot = ml.binary.mm(q, r:t())
    same(h, ((40 - dot) / 2):astype("int32"), "from the product")
  end)

  it("rejects codes of other lengths", function()
    assert.error_matches(function() ml.binary.hamming(ml.ones(2, 40), ml.ones(3, 41)) end,
                         "binary.hamming: codes of 40 and 41 bits %(shapes 2x40 and 3x41%)")
    assert.error_matches(function() ml.binary.hamming(ml.binary.pack(ml.ones(4, 3), {dim = 1}), ml.ones(3, 4)) end,
                         "binary.hamming: the first operand is packed along dimension %-2")
  end)
end)

describe("knn with metric hamming", function()
  it("finds the nearest codes, ties to the lower index", function()
    local q, r = load("codes_q"), load("codes_r")
    local d, i = ml.knn(ml.binary.pack(q), ml.binary.pack(r), 7, {metric = "hamming"})
    same(load("knn_dist"), d, "dist")
    same(load("knn_index"), i, "index")
    local d2, i2 = ml.knn(q, r, 7, {metric = "hamming"})
    same(d, d2, "unpacked dist")
    same(i, i2, "unpacked index")
  end)

  it("agrees with hamming and a stable sort for every k, and with k = n", function()
    ml.seed(5)
    local q, r = pm1({9, 12}), pm1({300, 12}) -- 12 bits: many ties
    local h = ml.binary.hamming(q, r):astype("int64")
    -- key distance * 1000 + index: a stable order of distances
    local key = h * 1000 + ml.arange(300, {dtype = "int64", device = DEV}):reshape(1, 300)
    for _, k in ipairs({1, 5, 64, 300}) do
      local d, i = ml.knn(q, r, k, {metric = "hamming"})
      local kv, ki = key:topk(k, 2, {largest = false})
      same((kv // 1000):astype("int32"), d, "k = " .. k .. " dist")
      same(ki, i, "k = " .. k .. " index")
    end
  end)

  it("rejects bad k, lengths, shapes and options", function()
    local q, r = ml.ones(2, 8), ml.ones(5, 8)
    assert.error_matches(function() ml.knn(q, r, 6, {metric = "hamming"}) end,
                         "knn: k = 6 is not in 1..5 %(the reference codes%)")
    assert.error_matches(function() ml.knn(q, ml.ones(5, 9), 2, {metric = "hamming"}) end,
                         "knn: codes of 8 and 9 bits")
    assert.error_matches(function() ml.knn(q, r, 2, {metric = "hamming", exclude_self = true}) end,
                         "knn: option 'exclude_self' does not apply to the metric hamming")
    assert.error_matches(function() ml.knn(ml.ones(2, 2, 8), r, 2, {metric = "hamming"}) end,
                         "knn: hamming queries 2x2x8 and references 5x8 must be matrices of codes")
    assert.error_matches(function() ml.knn(q, r, 2, {metric = "hamm"}) end,
                         "knn: unknown metric 'hamm' %(euclidean, sqeuclidean, cosine, ip or hamming%)")
  end)
end)

describe("packed arrays", function()
  it("save and load, moving between devices", function()
    ml.seed(6)
    local x = pm1({2, 3, 300})
    local p = ml.binary.pack(x, {dim = 2})
    local path = os.tmpname()
    ml.binary.save(p, path)
    local l = ml.binary.load(path, {device = DEV})
    os.remove(path)
    assert.equal(3, l.bits)
    assert.equal(-2, l.dim)
    assert.same({2, 3, 300}, l.shape)
    same(x, l:unpack(), "round trip")
    local c = p:to("cpu")
    assert.equal("cpu", c.device)
    same(x:cpu(), c:unpack(), "to cpu")
  end)

  it("reject what they are not", function()
    local path = os.tmpname()
    ml.save_npy(path, ml.zeros(3, 8, {dtype = "int32"}))
    assert.error_matches(function() ml.binary.load(path) end, "binary.load: .* holds no packed array")
    os.remove(path)
    assert.error_matches(function() ml.binary.unpack(ml.ones(3)) end,
                         "binary.unpack: its argument must be a packed array %(ml.binary.pack%), not an array")
    assert.error_matches(function() ml.binary.unpack(ml.binary.pack(ml.ones(3)), {dtype = "uint8"}) end,
                         "binary.unpack: dtype uint8 cannot hold %-1")
  end)
end)
