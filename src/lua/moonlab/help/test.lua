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
