local ml = require "moonlab"

-- Lines joined by newlines: the expected text of tostring(x). Footers are
-- written for the CPU; the arrays live on the default device.
local function lines(...)
  return (table.concat({...}, "\n"):gsub(" cpu%]$", " " .. ml.device() .. "]"))
end

local function message(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  return err
end

describe("ml.set_printoptions", function()
  local defaults = ml.get_printoptions()
  after_each(function() ml.set_printoptions(defaults) end)

  it("starts from today's format, which get_printoptions reports", function()
    assert.same({precision = 4, threshold = 1000, edgeitems = 3,
                 linewidth = math.huge}, defaults)
    assert.is_nil(defaults.sci_mode)
  end)

  it("sets the digits after the decimal point", function()
    ml.set_printoptions{precision = 2}
    assert.equal(lines(" 0.33  2.50", "-1.00  0.00", "[float64 2x2 cpu]"),
                 tostring(ml.array{{1 / 3, 2.5}, {-1, 0.001}}))
    assert.equal(lines(" 1.00e-05  1.23e+05", "[float64 2 cpu]"),
                 tostring(ml.array{1e-5, 123456.5}))
    assert.equal(lines(" 1  2", "[float64 2 cpu]"),
                 tostring(ml.array{1.0, 2.0}))
    assert.equal(lines(" 7", "[int64 1 cpu]"), tostring(ml.array{7}))
    ml.set_printoptions{precision = 0}
    assert.equal(lines(" 0  2", "[float64 2 cpu]"),
                 tostring(ml.array{0.25, 1.75}))
    ml.set_printoptions{precision = 12}
    assert.equal(lines("0.333333333333", "[float64 scalar cpu]"),
                 tostring(ml.full({}, 1 / 3)))
    -- the other options keep their values
    assert.same({precision = 12, threshold = 1000, edgeitems = 3,
                 linewidth = math.huge}, ml.get_printoptions())
  end)

  it("summarizes arrays of more than threshold elements", function()
    ml.set_printoptions{threshold = 10}
    assert.equal(lines(" 0  1  2  3  4  5  6  7  8  9", "[int64 10 cpu]"),
                 tostring(ml.arange(10)))
    assert.equal(lines("  0   1   2 ...   8   9  10", "[int64 11 cpu]"),
                 tostring(ml.arange(11)))
    ml.set_printoptions{threshold = math.huge}
    local body = tostring(ml.arange(5000)):match("^(.-)\n%[")
    assert.equal(5000, select(2, body:gsub("%d+", "")))
    assert.is_nil(body:find("...", 1, true))
    assert.equal(math.huge, ml.get_printoptions().threshold)
  end)

  it("shows edgeitems entries at each end of a summarized dimension", function()
    ml.set_printoptions{threshold = 10, edgeitems = 2}
    assert.equal(lines("  0   1 ...   8   9", " 10  11 ...  18  19", "...",
                       " 80  81 ...  88  89", " 90  91 ...  98  99",
                       "[int64 10x10 cpu]"),
                 tostring(ml.arange(100):reshape(10, 10)))
    -- a dimension of at most 2 * edgeitems is not cut
    assert.equal(lines("   0    1 ...   98   99", " 100  101 ...  198  199",
                       "[int64 2x100 cpu]"),
                 tostring(ml.arange(200):reshape(2, 100)))
    ml.set_printoptions{threshold = 10, edgeitems = 0}
    assert.equal(lines("...", "[int64 20 cpu]"), tostring(ml.arange(20)))
  end)

  it("wraps a 1-D row at linewidth", function()
    ml.set_printoptions{linewidth = 20}
    assert.equal(lines("  0   1   2   3   4", "  5   6   7   8   9",
                       " 10  11  12  13  14", " 15  16", "[int64 17 cpu]"),
                 tostring(ml.arange(17)))
    -- wider than the line: one element a line
    ml.set_printoptions{linewidth = 2}
    assert.equal(lines(" 1", " 2", "[int64 2 cpu]"), tostring(ml.array{1, 2}))
  end)

  it("splits a matrix into groups of columns that fit linewidth", function()
    ml.set_printoptions{linewidth = 30, precision = 2}
    local x = ml.arange(30):reshape(3, 10) * 1.5
    assert.equal(lines("Columns 1 to 4",
                       "  0.00   1.50   3.00   4.50",
                       " 15.00  16.50  18.00  19.50",
                       " 30.00  31.50  33.00  34.50",
                       "",
                       "Columns 5 to 8",
                       "  6.00   7.50   9.00  10.50",
                       " 21.00  22.50  24.00  25.50",
                       " 36.00  37.50  39.00  40.50",
                       "",
                       "Columns 9 to 10",
                       " 12.00  13.50",
                       " 27.00  28.50",
                       " 42.00  43.50",
                       "[float64 3x10 cpu]"), tostring(x))
    -- a row that fits prints as before
    assert.equal(lines(" 0  1", " 2  3", "[int64 2x2 cpu]"),
                 tostring(ml.arange(4):reshape(2, 2)))
  end)

  it("keeps the '...' column with the columns before it", function()
    ml.set_printoptions{threshold = 10, edgeitems = 2, linewidth = 12}
    assert.equal(lines("Columns 1 to 2", "  0   1 ...", " 10  11 ...", "...",
                       " 80  81 ...", " 90  91 ...", "",
                       "Columns 9 to 10", "  8   9", " 18  19", "...",
                       " 88  89", " 98  99", "[int64 10x10 cpu]"),
                 tostring(ml.arange(100):reshape(10, 10)))
  end)

  it("splits the columns of every block of an N-D array", function()
    ml.set_printoptions{linewidth = 5}
    assert.equal(lines("(1,.,.) =", "Columns 1 to 2", " 0  1", "",
                       "Columns 3 to 3", " 2", "",
                       "(2,.,.) =", "Columns 1 to 2", " 3  4", "",
                       "Columns 3 to 3", " 5", "[int64 2x1x3 cpu]"),
                 tostring(ml.arange(6):reshape(2, 1, 3)))
  end)

  it("forces or forbids the scientific format with sci_mode", function()
    ml.set_printoptions{sci_mode = true}
    assert.equal(lines(" 1.5000e+00 -2.0000e+00", "[float64 2 cpu]"),
                 tostring(ml.array{1.5, -2}))
    assert.equal(lines(" 1.0000e+00  1.0000e+00", "[float64 2 cpu]"),
                 tostring(ml.ones(2)))
    assert.equal(lines(" 0  1  2", "[int64 3 cpu]"), tostring(ml.arange(3)))
    assert.is_true(ml.get_printoptions().sci_mode)
    ml.set_printoptions{sci_mode = false}
    assert.equal(lines("      0.0000       1.0000  123456.5000",
                       "[float64 3 cpu]"),
                 tostring(ml.array{1e-5, 1, 123456.5}))
    -- integral values of 1e8 or more print with decimals
    assert.equal(lines(" 1000000000.0000           2.0000", "[float64 2 cpu]"),
                 tostring(ml.array{1e9, 2.0}))
    assert.is_false(ml.get_printoptions().sci_mode)
    -- left out, sci_mode is automatic again (as in PyTorch)
    ml.set_printoptions{precision = 4}
    assert.is_nil(ml.get_printoptions().sci_mode)
    assert.equal(lines(" 1.0000e-05  1.0000e+00  1.2346e+05",
                       "[float64 3 cpu]"),
                 tostring(ml.array{1e-5, 1, 123456.5}))
  end)

  it("prints huge values in full without the scientific format", function()
    ml.set_printoptions{sci_mode = false, precision = 50}
    local s = tostring(ml.array{-1.7976931348623157e308, 1.5})
    local first = s:match("^ *(%S+)")
    assert.equal(1 + 309 + 1 + 50, #first)
    assert.equal("-17976931348623157", first:sub(1, 18))
  end)

  it("rejects unknown options and values of the wrong type", function()
    assert.equal("set_printoptions: unknown option 'precison' (did you mean 'precision'?)",
                 message(ml.set_printoptions, {precison = 2}))
    assert.truthy(message(ml.set_printoptions, {2}):find(
                    "set_printoptions: unknown option [1]", 1, true))
    assert.equal("set_printoptions: option 'precision' must be an integer, not string",
                 message(ml.set_printoptions, {precision = "2"}))
    assert.equal("set_printoptions: option 'precision' must be an integer, not 2.5",
                 message(ml.set_printoptions, {precision = 2.5}))
    assert.equal("set_printoptions: precision must be an integer from 0 " ..
                 "to 50 (got 51)",
                 message(ml.set_printoptions, {precision = 51}))
    assert.equal("set_printoptions: threshold must be a nonnegative " ..
                 "integer or math.huge (got -1)",
                 message(ml.set_printoptions, {threshold = -1}))
    assert.equal("set_printoptions: option 'edgeitems' must be an integer, not inf",
                 message(ml.set_printoptions, {edgeitems = math.huge}))
    assert.equal("set_printoptions: linewidth must be a positive integer " ..
                 "or math.huge (got 0)",
                 message(ml.set_printoptions, {linewidth = 0}))
    assert.equal("set_printoptions: option 'sci_mode' must be a boolean, not string",
                 message(ml.set_printoptions, {sci_mode = "yes"}))
    assert.truthy(message(ml.set_printoptions):find("table expected", 1, true))
  end)

  it("changes nothing when an option is bad", function()
    ml.set_printoptions{precision = 2, sci_mode = true}
    message(ml.set_printoptions, {precision = 6, linewidth = "wide"})
    assert.same({precision = 2, threshold = 1000, edgeitems = 3,
                 linewidth = math.huge, sci_mode = true},
                ml.get_printoptions())
  end)

  it("takes back what get_printoptions returned", function()
    ml.set_printoptions{precision = 3, threshold = 7, edgeitems = 1,
                        linewidth = 40, sci_mode = false}
    local saved = ml.get_printoptions()
    ml.set_printoptions{precision = 9}
    ml.set_printoptions(saved)
    assert.same(saved, ml.get_printoptions())
  end)
end)
