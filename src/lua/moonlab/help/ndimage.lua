-- Help entries: scipy.ndimage's filters, the ml.ndimage namespace.
local MODE = {
  name = "mode", type = "string", default = '"reflect"',
  doc = '"reflect" (d c b a | a b c d | d c b a), "constant" (cval), '
        .. '"nearest" (a a | a b c d | d d), "mirror" (d c b | a b c d | '
        .. 'c b a) or "wrap" (periodic)',
}
local MODES = {
  name = "mode", type = "string|table", default = '"reflect"',
  doc = "a mode as correlate's, or a table of one for each dimension",
}
local CVAL = {
  name = "cval", type = "number", default = "0",
  doc = 'the value past the edges under "constant"',
}
local AXIS = {
  name = "axis", type = "integer", default = "-1",
  doc = "the axis to filter along, 1-based (negative from the end)",
}
local GAUSS = {
  {name = "order", type = "integer|table", default = "0",
   doc = "the derivative of the Gaussian to correlate with (0: the "
         .. "Gaussian itself), or one for each dimension"},
  MODES,
  CVAL,
  {name = "truncate", type = "number", default = "4.0",
   doc = "the mask's radius in standard deviations: int(truncate sigma "
         .. "+ 0.5) samples each side"},
  {name = "radius", type = "integer|table", default = "nil",
   doc = "the mask's radius in samples, instead of truncate's"},
}

return {
  title = "Image filters",
  namespace = "ndimage",
  intro = [[
scipy.ndimage's correlations and the filters built on them, with its
semantics and defaults, in the namespace ml.ndimage. Results have x's
shape and dtype: float32 and float64 compute in their dtype (the CPU
sums in double, as SciPy; a GPU sums float32 in float32, within (k + 2)
2^-24 sum |w x| for k taps, and large masks through FFTs); integers
compute in float64 and every pass converts back toward zero, as SciPy's
output arrays do. Masks convert to float64. Positions past the edges
read the mode's extension, repeated for masks longer than the input. A
mask of k samples along an axis is centred on sample k/2 (rounded
down), shifted by the origin, which lies in -(k/2)..(k-1)/2 and moves
the mask to the left when positive. Empty inputs give empty results;
empty masks are errors. correlate and convolve take 1- to 3-D arrays,
the others any number of dimensions.]],
  entries = {
    {
      names = {"ndimage.correlate", "ndimage.convolve"},
      usage = {
        "ml.ndimage.correlate(x, w [, opts])",
        "ml.ndimage.convolve(x, w [, opts])",
      },
      doc = [[
The correlation sum_j w[j] x[i + j - c] of x with a mask w of as many
dimensions, c its centre (k/2 + origin per dimension), or the
convolution, which reverses w and negates the origin (less one along
even dimensions), as scipy.ndimage's. x and w have 1 to 3 dimensions;
SciPy drops weights of magnitude 2.2e-16 or less from the sum, which
here multiply their samples (so a NaN or inf under a zero weight
propagates).]],
      options = {
        MODE,
        CVAL,
        {name = "origin", type = "integer|table", default = "0",
         doc = "the mask's shift, or a table of one for each dimension"},
        {name = "fft", type = "boolean", default = "nil",
         doc = "on a GPU, whether the sum goes through FFTs (true) or directly "
            .. "(false); nil: through FFTs for large masks (784 taps or more in "
            .. "float32, 1024 in float64), where they are faster; the CPU sums "
            .. "directly"},
      },
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({{1.0, 2.0}, {3.0, 4.0}})
local y = ml.ndimage.correlate(x, {{0, 1}, {0, 0}}, {mode = "constant"})
print(y[{1, 1}], y[{2, 2}])  --> 0.0 2.0
print(ml.ndimage.convolve(x, {{1, 1, 1}}, {mode = "wrap"})[{1, 1}])  --> 5.0]],
    },
    {
      names = {"ndimage.correlate1d", "ndimage.convolve1d"},
      usage = {
        "ml.ndimage.correlate1d(x, w [, opts])",
        "ml.ndimage.convolve1d(x, w [, opts])",
      },
      doc = [[
correlate or convolve with a 1-D mask w along one axis of x, as
scipy.ndimage's correlate1d and convolve1d. w (an array or a table of
numbers) may be on x's device or on the CPU.]],
      options = {
        AXIS,
        MODE,
        CVAL,
        {name = "origin", type = "integer", default = "0",
         doc = "the mask's shift"},
      },
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({{1.0, 2.0, 4.0}, {8.0, 16.0, 32.0}})
local d = ml.ndimage.correlate1d(x, {-1, 0, 1}, {mode = "nearest"})
print(d[{1, 1}], d[{1, 2}], d[{2, 3}])  --> 1.0 3.0 16.0
print(ml.ndimage.convolve1d(x, {1, 1}, {axis = 1})[{2, 1}])  --> 16.0]],
    },
    {
      name = "ndimage.uniform_filter1d",
      usage = {"ml.ndimage.uniform_filter1d(x, size [, opts])"},
      doc = [[
The mean of size samples along one axis, from size/2 + origin before
each (scipy.ndimage's uniform_filter1d), as a running sum in double:
its cost does not grow with size.]],
      options = {
        AXIS,
        MODE,
        CVAL,
        {name = "origin", type = "integer", default = "0",
         doc = "the window's shift, in -(size/2)..(size-1)/2"},
      },
      returns = "a new array of x's shape and dtype.",
      example = [[
local m = ml.ndimage.uniform_filter1d(ml.array({3.0, 6.0, 9.0}), 3)
print(m[{1}], m[{2}], m[{3}])  --> 4.0 6.0 8.0]],
    },
    {
      name = "ndimage.uniform_filter",
      usage = {"ml.ndimage.uniform_filter(x [, size] [, opts])"},
      doc = [[
The mean over a box of size samples along every axis (scipy.ndimage's
uniform_filter): uniform_filter1d along each axis in turn, those of size
1 left out. size is a number or a table of one for each dimension.]],
      options = {
        MODES,
        CVAL,
        {name = "origin", type = "integer|table", default = "0",
         doc = "the box's shift, or a table of one for each dimension"},
      },
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({{0.0, 0.0, 0.0}, {0.0, 9.0, 0.0}, {0.0, 0.0, 0.0}})
print(ml.ndimage.uniform_filter(x)[{2, 2}])  --> 1.0
local r = ml.ndimage.uniform_filter(x, {1, 3}, {mode = "constant"})
print(r[{2, 1}])  --> 3.0]],
    },
    {
      name = "ndimage.gaussian_filter",
      usage = {"ml.ndimage.gaussian_filter(x, sigma [, opts])"},
      doc = [[
The correlation with a Gaussian of standard deviation sigma (a number,
or a table of one for each dimension) along each axis in turn, as
scipy.ndimage's gaussian_filter: the mask has int(truncate sigma + 0.5)
samples each side (or radius), weights exp(-x^2 / (2 sigma^2))
normalised to sum 1; with order n, its n-th derivative's. Axes whose
sigma is 1e-15 or less are left out. On a GPU the last two axes run in
one kernel.]],
      options = GAUSS,
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.zeros(5, 5)
x[{3, 3}] = 1
local g = ml.ndimage.gaussian_filter(x, 1)
print(("%.4f %.4f"):format(g[{3, 3}], g:sum()))  --> 0.1592 1.0000
local d = ml.ndimage.gaussian_filter(x, 1, {order = {0, 1}})
print(("%.4f"):format(d[{3, 2}]))  --> 0.0963]],
    },
    {
      name = "ndimage.gaussian_filter1d",
      usage = {"ml.ndimage.gaussian_filter1d(x, sigma [, opts])"},
      doc = [[
gaussian_filter along one axis, sigma a positive number, as
scipy.ndimage's gaussian_filter1d.]],
      options = {
        AXIS, GAUSS[1], MODE, CVAL, GAUSS[4],
        {name = "radius", type = "integer", default = "nil",
         doc = "the mask's radius in samples, instead of truncate's"},
      },
      returns = "a new array of x's shape and dtype.",
      example = [[
local g = ml.ndimage.gaussian_filter1d(ml.array({0.0, 0.0, 1.0, 0.0, 0.0}), 1)
print(("%.4f %.4f"):format(g[{3}], g[{1}]))  --> 0.3989 0.0584]],
    },
    {
      name = "ndimage.sobel",
      usage = {"ml.ndimage.sobel(x [, opts])"},
      doc = [[
The Sobel derivative along axis (scipy.ndimage's sobel): the correlation
with {-1, 0, 1} along it, then with {1, 2, 1} along every other axis.]],
      options = {
        AXIS,
        MODES,
        CVAL,
      },
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.array({{0.0, 1.0, 2.0}, {0.0, 1.0, 2.0}, {0.0, 1.0, 2.0}})
print(ml.ndimage.sobel(x)[{2, 2}])  --> 8.0
print(ml.ndimage.sobel(x, {axis = 1})[{2, 2}])  --> 0.0]],
    },
  },
}
