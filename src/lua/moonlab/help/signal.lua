-- Help entries: convolution and correlation as scipy.signal's, and
-- moving sums.
local SIGNAL_OPTIONS = {
  {name = "mode", type = "string", default = '"full"',
   doc = '"full" (n + k - 1 samples a dimension), "same" (n, centred) '
         .. 'or "valid" (|n - k| + 1, no sample past an edge)'},
  {name = "boundary", type = "string", default = '"fill"',
   doc = '"fill" (fillvalue past the edges), "symm" (reflected) or '
         .. '"wrap" (periodic)'},
  {name = "fillvalue", type = "number", default = "0",
   doc = 'the value past the edges under "fill"'},
}

return {
  title = "Convolution and correlation",
  intro = [[
scipy.signal's convolve, correlate, convolve2d and correlate2d, exactly:
both operands 1-D (convolve, correlate) or both 2-D (convolve2d,
correlate2d, with their boundary options), on one device. The result
has the promoted dtype of the two (NumPy's table); integers compute in
float64 and convert back. An empty operand is an error, as SciPy's 1-D
functions raise. Masks of any size work with every boundary, longer
than the input included: the boundaries extend it periodically (SciPy's
results). ml.window_sum is the moving sum of a line, at the cost of a
scan whatever its length; ml.ndimage holds scipy.ndimage's filters. The
CPU sums in double; a GPU sums float32 in float32 (within (k + 2) 2^-24
sum |w x| for k taps) and large masks through FFTs.]],
  entries = {
    {
      names = {"convolve", "correlate"},
      usage = {
        "ml.convolve(x, w [, opts])",
        "ml.correlate(x, w [, opts])",
      },
      doc = [[
The convolution sum_j w[j] x[i - j] or the correlation sum_j w[j]
x[i + j] of x with w, as scipy.signal's functions of 1-D arrays and
convolve2d and correlate2d of 2-D ones. "same" is centred as SciPy
centres it: on the full result's middle (k/2 rounded down samples
before x's first, for a mask of k), except that correlate of 2-D
arrays starts (k - 1)/2 before, as correlate2d does, one sample later
than correlate for even k. In "valid" mode one operand must be at least
as large as the other in every dimension; when x is the smaller, the
result is SciPy's (which swaps the operands, and reverses a
correlation). For real data correlate(x, w) is convolve(x, w reversed),
except for that centring.]],
      options = SIGNAL_OPTIONS,
      returns = "a new array of the promoted dtype.",
      example = [[
local x = ml.array({1.0, 2.0, 3.0})
local y = ml.convolve(x, {0, 1, 0.5})
print(y:size(1), y[{2}], y[{4}])  --> 5 1.0 4.0
print(ml.correlate(x, {1, 1}, {mode = "valid"})[{1}])  --> 3.0
local s = ml.convolve(x, {1, 1, 1}, {mode = "same", boundary = "wrap"})
print(s[{1}], s[{3}])  --> 6.0 6.0]],
    },
    {
      name = "window_sum",
      usage = {"ml.window_sum(x, radius [, opts])"},
      doc = [[
The moving sum of 2 radius + 1 samples along an axis: out[i] = x[i -
radius] + ... + x[i + radius], positions past the edges extended by the
mode as scipy.ndimage's (the default, "constant" with cval 0, counts
them as zeros). It runs as a scan (a running sum in double), so its
cost does not grow with the radius. Floats keep their dtype; integers
give float64. Empty inputs give empty results.]],
      options = {
        {name = "axis", type = "integer", default = "-1",
         doc = "the axis to sum along, 1-based (negative from the end)"},
        {name = "mode", type = "string", default = '"constant"',
         doc = '"reflect", "constant", "nearest", "mirror" or "wrap", as '
               .. "ml.ndimage's"},
        {name = "cval", type = "number", default = "0",
         doc = 'the value past the edges under "constant"'},
      },
      returns = "a new array of x's shape.",
      example = [[
local s = ml.window_sum(ml.array({1, 2, 3, 4}), 1)
print(s[{1}], s[{2}], s[{4}])  --> 3.0 6.0 7.0
local n = ml.window_sum(ml.array({1, 2, 3, 4}), 1, {mode = "nearest"})
print(n[{1}], n[{4}])  --> 4.0 11.0]],
    },
  },
}
