local ml = require "moonlab"
local N = require "tests.helpers.numbers"

-- Values of x (any shape) in C order.
local function flat(x)
  local out = {}
  local function walk(t)
    if type(t) ~= "table" then
      out[#out + 1] = t
    else
      for _, v in ipairs(t) do walk(v) end
    end
  end
  walk(x:totable())
  return out
end

local near = N.assert_near

local function moments(t)
  local s, s2 = 0, 0
  for _, v in ipairs(t) do s = s + v end
  local mean = s / #t
  for _, v in ipairs(t) do s2 = s2 + (v - mean) ^ 2 end
  return mean, math.sqrt(s2 / (#t - 1))
end

local function raises(fn, msg)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert.is_truthy(string.find(tostring(err), msg, 1, true),
                   "message was: " .. tostring(err))
end

describe("Philox4x32-10", function()
  it("matches Random123's known answers", function()
    assert.same({0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                ml.philox4x32({0, 0, 0, 0}, {0, 0}))
    assert.same({0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                ml.philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                              {0xffffffff, 0xffffffff}))
    assert.same({0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
                ml.philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                              {0xa4093822, 0x299f31d0}))
  end)

  it("rejects words outside 32 bits", function()
    raises(function() ml.philox4x32({0, 0, 0, 2 ^ 32}, {0, 0}) end,
           "philox4x32: counter word 4 must be an integer in 0..2^32-1")
    raises(function() ml.philox4x32({0, 0, 0, 0}, {-1, 0}) end,
           "philox4x32: key word 1 must be an integer in 0..2^32-1")
    raises(function() ml.philox4x32({0, 0, 0}, {0, 0}) end,
           "philox4x32: counter word 4 must be an integer in 0..2^32-1")
  end)
end)

describe("the stream", function()
  -- Seed 0, offset 0 is counter {0,0,0,0} key {0,0}: the first answer.
  local w = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}

  it("maps block words to float32 uniforms as documented", function()
    ml.seed(0)
    local expect = {}
    for i = 1, 4 do expect[i] = (w[i] >> 8) * 2.0 ^ -24 end
    assert.same(expect, flat(ml.rand(4, {dtype = "float32"})))
  end)

  it("maps block words to float64 uniforms as documented", function()
    ml.seed(0)
    local x = flat(ml.rand(2, {dtype = "float64"}))
    assert.equal(((w[2] << 32 | w[1]) >> 11) * 2.0 ^ -53, x[1])
    assert.equal(((w[4] << 32 | w[3]) >> 11) * 2.0 ^ -53, x[2])
  end)

  it("maps block words to integers as documented", function()
    ml.seed(0)
    local v1, v2 = w[2] << 32 | w[1], w[4] << 32 | w[3]
    -- Power-of-two ranges: v mod 2^k is v & (2^k - 1) on the unsigned v.
    assert.same({10 + (v1 & 1023), 10 + (v2 & 1023)},
                flat(ml.randint(10, 10 + 1024, 2)))
    ml.seed(0)
    local m = (1 << 40) - 1
    assert.same({-5 + (v1 & m), -5 + (v2 & m)},
                flat(ml.randint(-5, -5 + (1 << 40), 2)))
  end)

  it("gives the reference values for seed 42", function()
    -- From an independent Python implementation of philox.h's stream.
    ml.seed(42)
    assert.same({0.46858651833910492, 0.34086154938517876, 0.32706338120338474,
                 0.45431560173488827, 0.65831552721230935}, flat(ml.rand(5)))
    assert.same({0.7295992374420166, 0.67063981294631958, 0.58640033006668091,
                 0.37912601232528687, 0.32641810178756714},
                flat(ml.rand(5, {dtype = "float32"})))
    near(flat(ml.randn(5)), {0.8065475570607904, 0.210366905122817,
                             0.6784414676956306, 1.5027128135627243,
                             0.42829939749678414}, 1e-12)
    near(flat(ml.randn(5, {dtype = "float32"})),
         {0.8371899724006653, 0.9419655799865723, -2.1742615699768066,
          0.012552107684314251, -0.6257368922233582}, 1e-6)
    assert.same({-4, -3, 2, 1, 2, -1}, flat(ml.randint(-5, 5, 6)))
    assert.same({8, 4, 6, 5, 3, 7, 9, 2, 10, 1}, flat(ml.randperm(10)))
    assert.same({2.6368401610307144, 2.1884124308538033, -1.2032755278888372},
                flat(ml.uniform(-2, 3, 3)))
    assert.equal(20, ml.get_rng_state().offset)
  end)
end)

describe("seed and state", function()
  it("repeats the numbers for the same seed", function()
    ml.seed(7)
    local a = flat(ml.rand(10))
    local b = flat(ml.randn(10, {dtype = "float32"}))
    ml.seed(7)
    assert.same(a, flat(ml.rand(10)))
    assert.same(b, flat(ml.randn(10, {dtype = "float32"})))
  end)

  it("gives different numbers for different seeds", function()
    ml.seed(1)
    local a = flat(ml.rand(8))
    ml.seed(2)
    local b = flat(ml.rand(8))
    for i = 1, 8 do assert.are_not.equal(a[i], b[i]) end
  end)

  it("takes any 64-bit seed", function()
    ml.seed(-1)
    local a = flat(ml.rand(4))
    ml.seed(math.maxinteger)
    local b = flat(ml.rand(4))
    assert.are_not.same(a, b)
    assert.same({seed = math.maxinteger, offset = 2}, ml.get_rng_state())
  end)

  it("gives different numbers on consecutive calls", function()
    ml.seed(3)
    local a, b = flat(ml.rand(8)), flat(ml.rand(8))
    for i = 1, 8 do assert.are_not.equal(a[i], b[i]) end
  end)

  it("advances the offset by whole blocks", function()
    ml.seed(5)
    ml.rand(3)
    assert.equal(2, ml.get_rng_state().offset) -- 2 float64 per block
    ml.rand(5, {dtype = "float32"})
    assert.equal(4, ml.get_rng_state().offset) -- 4 float32 per block
    ml.randn(1)
    ml.randint(0, 5, 3)
    assert.equal(7, ml.get_rng_state().offset)
    ml.rand(0)
    assert.equal(7, ml.get_rng_state().offset)
    ml.randperm(7)
    assert.equal(11, ml.get_rng_state().offset)
  end)

  it("starts each call on a fresh block", function()
    ml.seed(9)
    local x, y = flat(ml.rand(3)), flat(ml.rand(3))
    ml.seed(9)
    local z = flat(ml.rand(6))
    -- rand(3) used blocks 0 and 1 (dropping the second half of block 1),
    -- so the second call starts at block 2: z[5], z[6].
    assert.same({z[1], z[2], z[3]}, x)
    assert.same({z[5], z[6]}, {y[1], y[2]})
    assert.are_not.equal(z[4], y[1])
    ml.seed(9)
    local a, b = flat(ml.rand(4)), flat(ml.rand(4))
    ml.seed(9)
    local c = flat(ml.rand(8))
    assert.same(c, {a[1], a[2], a[3], a[4], b[1], b[2], b[3], b[4]})
  end)

  it("restores a saved state", function()
    ml.seed(11)
    ml.rand(7)
    local state = ml.get_rng_state()
    local a = flat(ml.randn(6))
    ml.rand(100)
    ml.set_rng_state(state)
    assert.same(a, flat(ml.randn(6)))
    raises(function() ml.set_rng_state({seed = 1}) end,
           "set_rng_state: field 'offset' must be an integer")
  end)

  it("does not depend on how a large call is split over threads", function()
    ml.seed(13)
    local big = flat(ml.rand(200001))
    local big32 = flat(ml.randn(200001, {dtype = "float32"}))
    for _, k in ipairs({0, 777, 31234, 99999}) do
      ml.set_rng_state({seed = 13, offset = k})
      assert.same({big[2 * k + 1], big[2 * k + 2]}, flat(ml.rand(2)))
    end
    ml.set_rng_state({seed = 13, offset = 100000})
    assert.same({big[200001]}, flat(ml.rand(1)))
    for _, k in ipairs({0, 4321, 49999}) do
      ml.set_rng_state({seed = 13, offset = 100001 + k})
      local part = flat(ml.randn(4, {dtype = "float32"}))
      assert.same({big32[4 * k + 1], big32[4 * k + 2], big32[4 * k + 3],
                   big32[4 * k + 4]}, part)
    end
  end)
end)

describe("shapes and options", function()
  it("takes shapes as varargs or a table, in C order of the stream", function()
    ml.seed(17)
    local x = ml.rand(2, 3)
    assert.same({2, 3}, x.shape)
    ml.seed(17)
    local y = ml.rand({2, 3})
    assert.same({2, 3}, y.shape)
    ml.seed(17)
    local z = flat(ml.rand(6))
    assert.same(z, flat(x))
    assert.same(z, flat(y))
  end)

  it("makes 0-d, empty and size-1 arrays", function()
    local s = ml.rand()
    assert.equal(0, s.ndim)
    assert.is_true(s:item() >= 0 and s:item() < 1)
    local e = ml.randn(0, 4)
    assert.same({0, 4}, e.shape)
    assert.equal(0, e:numel())
    assert.same({1, 1}, ml.randint(0, 3, 1, 1).shape)
    assert.same({0}, ml.randperm(0).shape)
    assert.same({1}, flat(ml.randperm(1)))
  end)

  it("uses the default float dtype and honours dtype and device", function()
    assert.equal("float64", ml.rand(2).dtype)
    ml.set_default_dtype("float32")
    local a, b = ml.randn(2), ml.uniform(0, 1, 2)
    ml.set_default_dtype("float64")
    assert.equal("float32", a.dtype)
    assert.equal("float32", b.dtype)
    assert.equal("float32", ml.normal(0, 1, 3, {dtype = "float32"}).dtype)
    assert.equal("int64", ml.randint(0, 2, 3).dtype)
    assert.equal("int32", ml.randint(0, 2, 3, {dtype = "int32"}).dtype)
    assert.equal("uint8", ml.randint(0, 256, 3, {dtype = "uint8"}).dtype)
    assert.equal("int64", ml.randperm(3).dtype)
    assert.equal("int32", ml.randperm(3, {dtype = "int32"}).dtype)
    assert.equal("cpu", ml.rand(2, {device = "cpu"}).device)
  end)

  it("makes the same int32 permutation as int64", function()
    ml.seed(19)
    local a = flat(ml.randperm(50))
    ml.seed(19)
    assert.same(a, flat(ml.randperm(50, {dtype = "int32"})))
  end)
end)

describe("distributions", function()
  local N = 100000

  it("rand is uniform on [0, 1)", function()
    for _, dt in ipairs({"float64", "float32"}) do
      ml.seed(23)
      local t = flat(ml.rand(N, {dtype = dt}))
      local lo, hi = math.huge, -math.huge
      for _, v in ipairs(t) do
        lo, hi = math.min(lo, v), math.max(hi, v)
      end
      assert.is_true(lo >= 0 and hi < 1)
      assert.is_true(lo < 1e-3 and hi > 1 - 1e-3)
      local mean, std = moments(t)
      assert.is_true(math.abs(mean - 0.5) < 0.01, dt .. " mean " .. mean)
      assert.is_true(math.abs(std - math.sqrt(1 / 12)) < 0.005, dt .. " std " .. std)
    end
  end)

  it("randn is standard normal", function()
    for _, dt in ipairs({"float64", "float32"}) do
      ml.seed(29)
      local t = flat(ml.randn(N, {dtype = dt}))
      local mean, std = moments(t)
      assert.is_true(math.abs(mean) < 0.02, dt .. " mean " .. mean)
      assert.is_true(math.abs(std - 1) < 0.02, dt .. " std " .. std)
      local within = 0
      for _, v in ipairs(t) do
        assert.is_true(v == v and math.abs(v) < 10)
        if math.abs(v) < 1 then within = within + 1 end
      end
      assert.is_true(math.abs(within / N - 0.6827) < 0.01)
    end
  end)

  it("uniform(low, high) stays in [low, high)", function()
    ml.seed(31)
    local t = flat(ml.uniform(-500, 500, N))
    local lo, hi = math.huge, -math.huge
    for _, v in ipairs(t) do lo, hi = math.min(lo, v), math.max(hi, v) end
    assert.is_true(lo >= -500 and lo < -499)
    assert.is_true(hi < 500 and hi > 499)
    local mean = moments(t)
    assert.is_true(math.abs(mean) < 10)
  end)

  it("maps results that round up to high below high", function()
    -- With high the next float after low, fma rounds half of the values
    -- to high; they must come back as low.
    local f32 = flat(ml.uniform(1, 1 + 2 ^ -23, 1000, {dtype = "float32"}))
    local f64 = flat(ml.uniform(1, 1 + 2 ^ -52, 1000))
    for i = 1, 1000 do
      assert.equal(1, f32[i])
      assert.equal(1, f64[i])
    end
    assert.same({3, 3}, flat(ml.uniform(3, 3, 2)))
  end)

  it("normal(mean, std) has that mean and std", function()
    ml.seed(37)
    local mean, std = moments(flat(ml.normal(5, 2, N)))
    assert.is_true(math.abs(mean - 5) < 0.04)
    assert.is_true(math.abs(std - 2) < 0.04)
    assert.same({-1, -1}, flat(ml.normal(-1, 0, 2)))
  end)

  it("randint stays in [low, high) and hits every value", function()
    ml.seed(41)
    local t = flat(ml.randint(-3, 4, 7000))
    local count = {}
    for _, v in ipairs(t) do
      assert.is_true(math.type(v) == "integer" and v >= -3 and v < 4)
      count[v] = (count[v] or 0) + 1
    end
    for v = -3, 3 do assert.is_true(count[v] > 850 and count[v] < 1150) end
    local u8 = flat(ml.randint(250, 256, 100, {dtype = "uint8"}))
    for _, v in ipairs(u8) do assert.is_true(v >= 250 and v <= 255) end
    local big = flat(ml.randint(-2 ^ 53, 2 ^ 53, 1000))
    local neg = 0
    for _, v in ipairs(big) do if v < 0 then neg = neg + 1 end end
    assert.is_true(neg > 400 and neg < 600)
  end)

  it("randperm is a permutation of 1..n", function()
    ml.seed(43)
    for _, n in ipairs({2, 3, 1000}) do
      local t = flat(ml.randperm(n))
      local seen = {}
      for _, v in ipairs(t) do
        assert.is_true(v >= 1 and v <= n and not seen[v])
        seen[v] = true
      end
      assert.equal(n, #t)
    end
    ml.seed(43)
    local fixed = 0
    local t = flat(ml.randperm(1000))
    for i, v in ipairs(t) do if i == v then fixed = fixed + 1 end end
    assert.is_true(fixed < 10)
  end)
end)

describe("errors", function()
  it("rejects bad ranges and parameters", function()
    raises(function() ml.randint(5, 5, 3) end,
           "randint: high (5) must be greater than low (5)")
    raises(function() ml.randint(5, 3, 3) end,
           "randint: high (3) must be greater than low (5)")
    raises(function() ml.randint(0, (1 << 53) + 1, 3) end,
           "randint: low and high must lie within -2^53..2^53")
    raises(function() ml.randint(0, 257, 3, {dtype = "uint8"}) end,
           "randint: range [0, 257) does not fit uint8")
    raises(function() ml.randint(-1, 1, 3, {dtype = "uint8"}) end,
           "randint: range [-1, 1) does not fit uint8")
    raises(function() ml.uniform(2, 1, 3) end,
           "uniform: low (2) must not exceed high (1)")
    raises(function() ml.uniform(0, 0 / 0, 3) end,
           "uniform: bounds 0 and -nan are not finite in float64")
    raises(function() ml.uniform(0, 1e39, 3, {dtype = "float32"}) end,
           "uniform: bounds 0 and 1e+39 are not finite in float32")
    raises(function() ml.uniform(-1e308, 1e308, 3) end,
           "uniform: range [-1e+308, 1e+308) is too wide for float64")
    raises(function() ml.normal(0, -1, 3) end,
           "normal: std must be finite and non-negative (got -1)")
    raises(function() ml.normal(math.huge, 1, 3) end,
           "normal: mean inf is not finite in float64")
  end)

  it("rejects wrong dtypes", function()
    raises(function() ml.randint(0, 3, 3, {dtype = "float64"}) end,
           "randint: dtype float64 is not an integer dtype")
    raises(function() ml.rand(3, {dtype = "int64"}) end,
           "rand: dtype int64 is not a float dtype")
    raises(function() ml.randn(3, {dtype = "uint8"}) end,
           "randn: dtype uint8 is not a float dtype")
    raises(function() ml.randperm(3, {dtype = "float32"}) end,
           "randperm: dtype float32 is not an integer dtype")
    raises(function() ml.randperm(300, {dtype = "uint8"}) end,
           "randperm: n = 300 does not fit uint8")
  end)

  it("rejects bad sizes", function()
    raises(function() ml.randperm(-1) end,
           "randperm: n must be non-negative (got -1)")
    raises(function() ml.rand(2, -3) end, "rand: negative dimension -3 in shape")
    raises(function() ml.randint(0, 3, 2.5) end,
           "randint: shape entries must be integers")
  end)

  it("consumes nothing when a call fails", function()
    ml.seed(47)
    pcall(ml.randint, 3, 3, 10)
    pcall(ml.rand, 4, {dtype = "int32"})
    assert.equal(0, ml.get_rng_state().offset)
  end)
end)
