local ml = require "moonlab"

-- Lines joined by newlines: the expected text of tostring(x). Footers are
-- written for the CPU; the arrays live on the default device.
local function lines(...)
  return (table.concat({...}, "\n"):gsub(" cpu%]$", " " .. ml.device() .. "]"))
end

local function rep(s, n, sep)
  local t = {}
  for i = 1, n do t[i] = s end
  return table.concat(t, sep)
end

describe("tostring of arrays", function()
  it("prints an integer matrix in right-aligned columns", function()
    assert.equal(lines(" 1  2  3", " 4  5  6", "[int64 2x3 cpu]"),
                 tostring(ml.array{{1, 2, 3}, {4, 5, 6}}))
    assert.equal(lines("   1   20", " 300    4", "[int64 2x2 cpu]"),
                 tostring(ml.array{{1, 20}, {300, 4}}))
  end)

  it("prints floats with four decimals in one shared width", function()
    assert.equal(lines(" 0.1000  2.5000", "-3.0000  4.0000",
                       "[float64 2x2 cpu]"),
                 tostring(ml.array{{0.1, 2.5}, {-3, 4}}))
    assert.equal(lines(" 0.3333  1.0000  0.0001", "[float64 3 cpu]"),
                 tostring(ml.array{1 / 3, 0.99999, 1e-4}))
  end)

  it("prints integral floats without decimals, as Torch7", function()
    assert.equal(lines(" 1  1  1", " 1  1  1", "[float64 2x3 cpu]"),
                 tostring(ml.ones(2, 3)))
    assert.equal(lines("  1   2", "  3  10", "[float64 2x2 cpu]"),
                 tostring(ml.array{{1.0, 2.0}, {3.0, 10.0}}))
    assert.equal(lines(" 12345678         0", "[float64 2 cpu]"),
                 tostring(ml.array{12345678.0, 0.0}))
  end)

  it("aligns negative numbers, leaving one place for the sign", function()
    assert.equal(lines(" -1.5000   2.0000", "  3.0000 -40.2500",
                       "[float64 2x2 cpu]"),
                 tostring(ml.array{{-1.5, 2}, {3, -40.25}}))
    assert.equal(lines(" -1  10", "-20   3", "[int64 2x2 cpu]"),
                 tostring(ml.array{{-1, 10}, {-20, 3}}))
    assert.equal(lines("-0  1", "[float64 2 cpu]"),
                 tostring(ml.array{-0.0, 1.0}))
  end)

  it("prints a 1-D array as one row", function()
    assert.equal(lines(" 0  1  2  3  4", "[int64 5 cpu]"),
                 tostring(ml.arange(5)))
    assert.equal(lines(" 0.0000  0.2500  0.5000  0.7500  1.0000",
                       "[float64 5 cpu]"),
                 tostring(ml.linspace(0, 1, 5)))
    assert.equal(lines(" 7", "[int64 1 cpu]"), tostring(ml.array{7}))
  end)

  it("prints a 0-d array as its value", function()
    assert.equal(lines("3.5000", "[float64 scalar cpu]"),
                 tostring(ml.full({}, 3.5)))
    assert.equal(lines("-2", "[int64 scalar cpu]"),
                 tostring(ml.full({}, -2)))
    assert.equal(lines("1.0000e+10", "[float64 scalar cpu]"),
                 tostring(ml.full({}, 1e10)))
  end)

  it("prints only the footer of an empty array", function()
    assert.equal(lines("[float64 0x3 cpu]"), tostring(ml.zeros(0, 3)))
    assert.equal(lines("[float64 0 cpu]"), tostring(ml.zeros(0)))
    assert.equal(lines("[int64 2x0x4 cpu]"),
                 tostring(ml.zeros(2, 0, 4, {dtype = "int64"})))
  end)

  it("prints more dimensions as headed 2-D blocks", function()
    assert.equal(lines("(1,.,.) =", " 1  2", " 3  4", "",
                       "(2,.,.) =", " 5  6", " 7  8",
                       "[int64 2x2x2 cpu]"),
                 tostring(ml.array{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}))
    assert.equal(lines("(1,1,.,.) =", " 0", "",
                       "(1,2,.,.) =", " 0", "",
                       "(2,1,.,.) =", " 0", "",
                       "(2,2,.,.) =", " 0",
                       "[float64 2x2x1x1 cpu]"),
                 tostring(ml.zeros(2, 2, 1, 1)))
    assert.equal(lines("[float64 2x0x3 cpu]"), tostring(ml.zeros(2, 0, 3)))
  end)

  it("shows the edges of a large matrix around '...'", function()
    local row = " 0  0  0 ...  0  0  0"
    assert.equal(lines(row, row, row, "...", row, row, row,
                       "[float64 100x100 cpu]"),
                 tostring(ml.zeros(100, 100)))
    row = " 1.5000  1.5000  1.5000 ...  1.5000  1.5000  1.5000"
    assert.equal(lines(row, row, row, "...", row, row, row,
                       "[float64 40x40 cpu]"),
                 tostring(ml.full({40, 40}, 1.5)))
    -- only the long dimension is cut
    row = " 2  2  2 ...  2  2  2"
    assert.equal(lines(row, row, row, row, "[int64 4x300 cpu]"),
                 tostring(ml.full({4, 300}, 2)))
  end)

  it("shows the edges of a large 1-D array", function()
    assert.equal(lines("    0     1     2 ...  1997  1998  1999",
                       "[int64 2000 cpu]"),
                 tostring(ml.arange(2000)))
    -- exactly the threshold: printed in full
    local s = tostring(ml.zeros(1000))
    assert.equal(lines(rep(" 0", 1000, " "), "[float64 1000 cpu]"), s)
  end)

  it("cuts every long dimension of a large N-D array", function()
    local row = " 2  2  2 ...  2  2  2"
    local function block(i)
      return lines("(" .. i .. ",.,.) =", row, row, row, "...",
                   row, row, row)
    end
    assert.equal(lines(block(1), "", block(2), "", block(3), "", "...", "",
                       block(9), "", block(10), "", block(11),
                       "[int64 11x10x10 cpu]"),
                 tostring(ml.full({11, 10, 10}, 2)))
  end)

  it("chooses the number format from the printed elements only", function()
    local t = {}
    for i = 1, 40 do
      t[i] = {}
      for j = 1, 40 do t[i][j] = 1.0 end
    end
    t[20][20] = 1e10
    t[21][21] = 0.5
    local row = " 1  1  1 ...  1  1  1"
    assert.equal(lines(row, row, row, "...", row, row, row,
                       "[float64 40x40 cpu]"),
                 tostring(ml.array(t)))
  end)

  it("prints nan, inf and -inf", function()
    assert.equal(lines("    nan     inf    -inf  1.5000", "[float64 4 cpu]"),
                 tostring(ml.array{0 / 0, 1 / 0, -1 / 0, 1.5}))
    -- a NaN with its sign bit set prints as nan too
    assert.equal(lines(" nan  nan  inf    2", "[float64 4 cpu]"),
                 tostring(ml.array{0 / 0, -(0 / 0), 1 / 0, 2.0}))
    assert.equal(lines(" nan", "[float32 1 cpu]"),
                 tostring(ml.array{0 / 0}:astype("float32")))
  end)

  it("switches to scientific notation for large or tiny magnitudes", function()
    assert.equal(lines(" 1.0000e-05  1.0000e+00  1.2346e+05",
                       "[float64 3 cpu]"),
                 tostring(ml.array{1e-5, 1, 123456.5}))
    assert.equal(lines(" 1.0000e+09  2.0000e+00", "[float64 2 cpu]"),
                 tostring(ml.array{1e9, 2.0}))
    assert.equal(lines("-2.5000e-07  0.0000e+00", "[float64 2 cpu]"),
                 tostring(ml.array{-2.5e-7, 0.0}))
    assert.equal(lines(" 1.0000e+100   1.0000e+00", "[float64 2 cpu]"),
                 tostring(ml.array{1e100, 1.5 - 0.5}))
  end)

  it("prints integer dtypes exactly", function()
    assert.equal(lines("   1    2  255", "[uint8 3 cpu]"),
                 tostring(ml.array{1, 2, 255}:astype("uint8")))
    assert.equal(lines(" 1099511627776             -5", "[int64 2 cpu]"),
                 tostring(ml.array{1 << 40, -5}))
    assert.equal(lines("-2147483648  2147483647", "[int32 2 cpu]"),
                 tostring(ml.array({-2147483648, 2147483647},
                                   {dtype = "int32"})))
  end)

  it("names each dtype in the footer", function()
    for _, dt in ipairs{"float32", "float64", "int32", "int64", "uint8"} do
      assert.equal(lines(" 0  0", "[" .. dt .. " 2 cpu]"),
                   tostring(ml.zeros(2, {dtype = dt})))
    end
    assert.equal(lines(" 0.1000  0.2500", "[float32 2 cpu]"),
                 tostring(ml.array{0.1, 0.25}:astype("float32")))
  end)
end)
