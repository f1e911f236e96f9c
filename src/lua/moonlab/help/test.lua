-- Help entries: the ml.test namespace (busted helpers).
return {
  title = "Test helpers",
  namespace = "test",
  intro = [[
Helpers for busted specs: require "moonlab.test" (or touching ml.test)
registers the assertion assert.array_near(actual, expected, tol), which
compares shapes, then values within tol (absolute and relative:
|a - e| <= tol * (1 + |e|)); NaN matches NaN and infinities must be
equal; expected may be an array, a nested table or a number.]],
  entries = {
    {
      name = "test.array_equal",
      usage = {"ml.test.array_equal(actual, desired)",
               "assert.array_equal(actual, desired)"},
      doc = [[
Exact equality as numpy.testing.assert_array_equal: the same shape, the
same dtype when both are arrays, and equal values, NaN matching NaN.
desired may be an array, a nested table or a number.]],
      returns = "nil when they are equal, else a message: the count of "
                .. "mismatches, the first by its 1-based index with both values.",
      example = [[
print(ml.test.array_equal(ml.array({1, 2}), {1, 2}) == nil)  --> true]],
    },
    {
      name = "test.allclose",
      usage = {"ml.test.allclose(actual, desired [, opts])",
               "assert.allclose(actual, desired [, opts])"},
      doc = [[
Closeness as numpy.testing.assert_allclose: the same shape (desired may
be a number) and |actual - desired| <= atol + rtol * |desired| for
every element; infinities must be equal.]],
      options = {
        {name = "rtol", type = "number", default = "1e-7", doc = "relative tolerance"},
        {name = "atol", type = "number", default = "0", doc = "absolute tolerance"},
        {name = "equal_nan", type = "boolean", default = "true",
         doc = "NaN matches NaN"},
      },
      returns = "nil when they are close, else a message as array_equal's, "
                .. "and the tolerance as a string.",
      example = [[
print(ml.test.allclose(ml.array({1, 2}), {1, 2 + 1e-9}) == nil)  --> true]],
    },
    {
      name = "test.compare",
      usage = {"ml.test.compare(actual, expected [, tol])"},
      doc = [[
The comparison behind assert.array_near: actual must be an array,
expected an array, a nested table or a number (compared with every
element); tol defaults to 1e-12.]],
      returns = "nil when they match, else a message naming the first "
                .. "mismatch.",
      example = [[
print(ml.test.compare(ml.array({1, 2}), {1, 2}) == nil)  --> true
print(ml.test.compare(ml.array({1, 2}), {1, 3}))]],
    },
  },
}
