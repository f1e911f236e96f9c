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
      name = "bernoulli",
      usage = {"ml.bernoulli(p [, shape...] [, opts])"},
      doc = [[
Draws that are 1 with probability p and 0 otherwise: u < p for uniforms
u of rand, so the same on every device. p is a number in [0, 1] with a
shape, or an array of probabilities (then no shape; the result has its
shape and, when float, its dtype, as torch.bernoulli).]],
      options = {dtype("ml.get_default_dtype(), or p's float dtype",
                       "any (uint8 for masks)"), DEVICE},
      returns = "a new array of 0 and 1.",
      example = [[
ml.seed(1)
print(ml.bernoulli(0.25, 100000):mean() // 0.01 / 100)  --> 0.25]],
    },
    {
      name = "exponential",
      usage = {"ml.exponential(scale [, shape...] [, opts])"},
      doc = [[
Exponential draws of mean scale (> 0; a number, or an array giving the
result's shape), as numpy.random.exponential: -log(1 - u) scale for
uniforms u, the same on every device within a few ulp (log).]],
      options = {FLOAT, DEVICE},
      returns = "a new float array.",
      example = [[
ml.seed(1)
print(math.abs(ml.exponential(2, 100000):mean() - 2) < 0.05)  --> true]],
    },
    {
      name = "gamma",
      usage = {"ml.gamma(k [, shape...] [, opts])"},
      doc = [[
Gamma draws of shape k > 0 (a number, or an array giving the result's
shape) and a scale, mean k scale, as numpy.random.gamma. Marsaglia and
Tsang's method: each round draws one normal and one uniform for every
element still pending, in order, and keeps the accepted ones, so the
draws are the same on the CPU and the GPU (values within a few ulp of
each other; an acceptance could differ only on a rounding-level tie of
its test); k < 1 takes gamma(k + 1) u^(1/k).]],
      options = {
        {name = "scale", type = "number", default = "1",
         doc = "the scale theta > 0"},
        FLOAT, DEVICE,
      },
      returns = "a new float array.",
      example = [[
ml.seed(1)
local x = ml.gamma(3, 100000, {scale = 2})
print(math.abs(x:mean() - 6) < 0.1)  --> true]],
    },
    {
      name = "beta",
      usage = {"ml.beta(a, b [, shape...] [, opts])"},
      doc = [[
Beta draws of parameters a, b > 0 (numbers, or arrays that broadcast to
the result's shape), as numpy.random.beta: x / (x + y) of gamma draws x
of a and y of b, computed from their logarithms where u^(1/k) would
underflow, so small a and b give 0s and 1s, not NaN. Same on every
device as gamma.]],
      options = {FLOAT, DEVICE},
      returns = "a new float array in [0, 1].",
      example = [[
ml.seed(1)
print(math.abs(ml.beta(2, 6, 100000):mean() - 0.25) < 0.01)  --> true]],
    },
    {
      name = "multinomial",
      usage = {"ml.multinomial(weights, n [, opts])"},
      doc = [[
n category indices (1-based) drawn from each row of weights, as
torch.multinomial: weights 1-D (k categories) or 2-D (a distribution a
row), non-negative and finite, each row with a positive sum (they need
not sum to 1). With replacement, inverse-CDF search of uniforms in the
row's cumulative sums; without (the default), the n first of an
exponential race, E / w (Efraimidis-Spirakis), in the order drawn, and
n must not exceed a row's count of positive weights. Uniforms are the
same on every device; the cumulative sums and logarithms round within
an ulp, so an index can differ only where a draw ties a boundary there.]],
      options = {
        {name = "replacement", type = "boolean", default = "false",
         doc = "draw with replacement"},
      },
      returns = "a new int64 array of n (1-D weights) or rows x n indices.",
      example = [[
ml.seed(1)
local i = ml.multinomial(ml.array({0, 3, 1}), 1000, {replacement = true})
print(i:min(), i:max(), ml.eq(i, 2):sum() > 650)  --> 2 3 true]],
    },
    {
      name = "choice",
      usage = {"ml.choice(a [, size] [, opts])"},
      doc = [[
A random sample, as numpy.random.choice: from 1..a when a is an integer
(1-based), else from the elements of the 1-D array a. size is an integer
or a shape table (none: one value, returned as a number). Uniform draws
take randint (replace) or the smallest uniforms (without replacement);
weights p go through multinomial. Without replacement size must not
exceed a (or p's positive entries); p must sum to 1.]],
      options = {
        {name = "replace", type = "boolean", default = "true",
         doc = "sample with replacement"},
        {name = "p", type = "table|array", default = "uniform",
         doc = "the probability of each of the a entries"},
        {name = "device", type = "string", default = "a's, or ml.device()",
         doc = "where the result lives when a is a count"},
      },
      returns = "a new array of the size's shape, or a number.",
      example = [[
ml.seed(1)
local s = ml.choice(10, 10, {replace = false})
print(s:sort()[1], s:sort()[10], s:sum())  --> 1 10 55]],
    },
    {
      name = "shuffle",
      usage = {"ml.shuffle(x)"},
      doc = [[
x with its slices along dimension 1 in a random order (randperm, so the
same on every device). Returns a new array; x is unchanged (unlike
numpy.random.shuffle, which works in place).]],
      returns = "a new array of x's shape and dtype.",
      example = [[
ml.seed(1)
local y = ml.shuffle(ml.arange(1, 6))
print(y:sum(), y:sort()[5])  --> 15 5]],
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
