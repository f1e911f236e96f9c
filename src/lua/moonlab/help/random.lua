-- Help entries: random numbers.
local function dtype(default, which)
  return {name = "dtype", type = "string", default = default,
          doc = "the element type: " .. which}
end
local FLOAT = dtype("ml.get_default_dtype()", "float32 or float64")
local INT = dtype('"int64"', "int32, int64 or uint8 (the values must fit)")
local DEVICE = {name = "device", type = "string", default = "ml.device()",
                doc = 'where the array lives: "cpu", "cuda" or "cuda:N"'}

return {
  title = "Random numbers",
  intro = [[
Every random function draws from one counter-based generator,
Philox4x32-10, defined so that a seed gives the same numbers on the CPU
and on a GPU (randn within 1e-6 relative in float32, 1e-12 in float64).
The state is a seed (0 at start-up, so a fresh process draws the same
numbers every run) and a counter offset; each call starts on a fresh
block of the stream, so rand(3) twice is not rand(6). Shapes are given
as integers or one table; a trailing options table {dtype=, device=}
picks the result's dtype and device.]],
  entries = {
    {
      name = "seed",
      usage = {"ml.seed(s)"},
      doc = [[
Restarts the generator on seed s (any integer, taken as 64 bits), at
offset 0.]],
      returns = "nothing.",
      example = [[
ml.seed(7)
local a = ml.rand(3)
ml.seed(7)
print(ml.eq(a, ml.rand(3)):all())  --> true]],
    },
    {
      name = "get_rng_state",
      usage = {"ml.get_rng_state()"},
      doc = [[
The generator's state: its seed and its offset in the stream.]],
      returns = "a table {seed = s, offset = o} of two integers.",
      example = [[
ml.seed(3)
local s = ml.get_rng_state()
print(s.seed, s.offset)  --> 3 0]],
    },
    {
      name = "set_rng_state",
      usage = {"ml.set_rng_state(state)"},
      doc = [[
Puts the generator back in a state that get_rng_state returned (a table
with integer fields seed and offset), so that the same draws repeat.]],
      returns = "nothing.",
      example = [[
local s = ml.get_rng_state()
local a = ml.randn(4)
ml.set_rng_state(s)
print(ml.eq(a, ml.randn(4)):all())  --> true]],
    },
    {
      name = "rand",
      usage = {"ml.rand(shape... [, opts])"},
      doc = [[Uniform random numbers in [0, 1).]],
      options = {FLOAT, DEVICE},
      returns = "a new float array of the shape.",
      example = [[
ml.seed(1)
local x = ml.rand(1000, {dtype = "float32"})
print(x.dtype, x:min() >= 0, x:max() < 1)  --> float32 true true]],
    },
    {
      name = "randn",
      usage = {"ml.randn(shape... [, opts])"},
      doc = [[
Standard normal random numbers (mean 0, standard deviation 1).]],
      options = {FLOAT, DEVICE},
      returns = "a new float array of the shape.",
      example = [[
ml.seed(1)
local x = ml.randn(100000)
print(math.abs(x:mean()) < 0.01)  --> true
print(math.abs(x:std() - 1) < 0.01)  --> true]],
    },
    {
      name = "uniform",
      usage = {"ml.uniform(low, high, shape... [, opts])"},
      doc = [[
Uniform random numbers in [low, high); low <= high, both finite in the
dtype.]],
      options = {FLOAT, DEVICE},
      returns = "a new float array of the shape.",
      example = [[
ml.seed(1)
local x = ml.uniform(-500, 500, 1000, 4)
print(x.shape[2], x:min() >= -500, x:max() < 500)  --> 4 true true]],
    },
    {
      name = "normal",
      usage = {"ml.normal(mean, std, shape... [, opts])"},
      doc = [[
Normal random numbers of a mean and a standard deviation std >= 0.]],
      options = {FLOAT, DEVICE},
      returns = "a new float array of the shape.",
      example = [[
ml.seed(1)
print(math.abs(ml.normal(10, 2, 100000):mean() - 10) < 0.05)  --> true]],
    },
    {
      name = "randint",
      usage = {"ml.randint(low, high, shape... [, opts])"},
      doc = [[
Random integers in [low, high) (high excluded, as NumPy), each equally
likely; high > low, and |low|, |high| <= 2^53.]],
      options = {INT, DEVICE},
      returns = "a new integer array of the shape.",
      example = [[
ml.seed(1)
local x = ml.randint(0, 10, 1000)
print(x.dtype, x:min(), x:max())  --> int64 0 9]],
    },
    {
      name = "randperm",
      usage = {"ml.randperm(n [, opts])"},
      doc = [[
A random permutation of 1..n (Fisher-Yates on the host from the
generator's stream, then moved to the device, so the same on every
device).]],
      options = {INT, DEVICE},
      returns = "a new 1-D integer array of n elements.",
      example = [[
ml.seed(1)
local p = ml.randperm(5)
print(p:sum(), p:sort()[5])  --> 15 5]],
    },
    {
      name = "philox4x32",
      usage = {"ml.philox4x32(counter, key)"},
      doc = [[
The raw Philox4x32-10 bijection, for checking the generator against
other implementations: counter is a table of four 32-bit words, key of
two. The stream of seed s draws block b from counter {b % 2^32, b //
2^32, 0, 0} and key {s % 2^32, s // 2^32}.]],
      returns = "a table of four 32-bit integers.",
      example = [[
local w = ml.philox4x32({0, 0, 0, 0}, {0, 0})
print(#w, string.format("%08x", w[1]))  --> 4 6627e8d5]],
    },
  },
}
