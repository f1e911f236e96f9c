local ml = require "moonlab"

local FIX = "tests/fixtures/io/"
local FMNIST = (os.getenv("MOONLAB_DATA") or "/usr/share/datasets/fashion-mnist") .. "/"

local function raises(fn, msg)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  assert.is_truthy(string.find(tostring(err), msg, 1, true),
                   "message was: " .. tostring(err))
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write_file(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A scratch file name, removed after each test.
local tmp
before_each(function() tmp = os.tmpname() end)
after_each(function() os.remove(tmp) end)

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- An IDX header: type code and sizes.
local function idx_header(code, ...)
  local dims = {...}
  local s = string.char(0, 0, code, #dims)
  for _, d in ipairs(dims) do s = s .. string.pack(">I4", d) end
  return s
end

describe("load_idx", function()
  it("reads every IDX type, plain and gzip-compressed", function()
    local x = ml.load_idx(FIX .. "u8_2x3.idx")
    assert.equal("uint8", x.dtype)
    assert.same({{0, 1, 2}, {253, 254, 255}}, x:totable())
    local z = ml.load_idx(FIX .. "u8_2x3.idx.gz")
    assert.equal("uint8", z.dtype)
    assert.same({{0, 1, 2}, {253, 254, 255}}, z:totable())
    local s8 = ml.load_idx(FIX .. "i8_4.idx")
    assert.equal("int32", s8.dtype)
    assert.same({-1, 2, -128, 127}, s8:totable())
    local s16 = ml.load_idx(FIX .. "i16_2x2.idx")
    assert.equal("int32", s16.dtype)
    assert.same({{-300, 2}, {32767, -32768}}, s16:totable())
    local s32 = ml.load_idx(FIX .. "i32_2x2.idx.gz")
    assert.equal("int32", s32.dtype)
    assert.same({{-70000, 1}, {2, 2147483647}}, s32:totable())
    local fl = ml.load_idx(FIX .. "f32_2.idx")
    assert.equal("float32", fl.dtype)
    assert.same({1.5, f32(-0.1)}, fl:totable())
    local db = ml.load_idx(FIX .. "f64_1x2x1.idx")
    assert.equal("float64", db.dtype)
    assert.same({{{1 / 3}, {-1e300}}}, db:totable())
  end)

  it("reads empty arrays", function()
    write_file(tmp, idx_header(0x0D, 0, 5))
    local x = ml.load_idx(tmp)
    assert.same({0, 5}, x.shape)
    assert.equal("float32", x.dtype)
  end)

  it("reads Fashion-MNIST", function()
    local labels = ml.load_idx(FMNIST .. "train-labels-idx1-ubyte.gz")
    assert.same({60000}, labels.shape)
    local t = labels:totable()
    assert.same({9, 0, 0, 3, 0, 2, 7, 2, 5, 5},
                {table.unpack(t, 1, 10)})
    assert.same({3, 0, 5}, {t[59998], t[59999], t[60000]})
    local images = ml.load_idx(FMNIST .. "train-images-idx3-ubyte.gz")
    assert.same({60000, 28, 28}, images.shape)
    assert.equal("uint8", images.dtype)
    -- Pixels read back through save_npy's C-order bytes after its header.
    local test = ml.load_idx(FMNIST .. "t10k-images-idx3-ubyte.gz")
    assert.same({10000, 28, 28}, test.shape)
    ml.save_npy(tmp, test)
    local f = assert(io.open(tmp, "rb"))
    local function pixel(image, flat)
      f:seek("set", 128 + (image - 1) * 784 + flat)
      return f:read(1):byte()
    end
    assert.equal(115, pixel(1, 350))
    assert.equal(45, pixel(10000, 400))
    assert.equal(0, pixel(6, 405))
    f:close()
  end)

  it("explains missing, corrupt and truncated files", function()
    raises(function() ml.load_idx("/nonexistent/x.idx") end,
           "load_idx: cannot open '/nonexistent/x.idx': No such file or directory")
    raises(function() ml.load_idx("tests") end,
           "load_idx: cannot open 'tests': Is a directory")
    write_file(tmp, "hello, world")
    raises(function() ml.load_idx(tmp) end,
           "load_idx: '" .. tmp .. "' is not an IDX file (bad magic)")
    write_file(tmp, "")
    raises(function() ml.load_idx(tmp) end, "is not an IDX file (bad magic)")
    write_file(tmp, idx_header(0x07, 3) .. "abc")
    raises(function() ml.load_idx(tmp) end,
           "load_idx: '" .. tmp .. "' has unknown data type 0x07")
    write_file(tmp, string.char(0, 0, 8, 9))
    raises(function() ml.load_idx(tmp) end, "has 9 dimensions (at most 8)")
    write_file(tmp, idx_header(0x08, 2, 3):sub(1, 9))
    raises(function() ml.load_idx(tmp) end,
           "load_idx: truncated header in '" .. tmp .. "'")
    write_file(tmp, idx_header(0x08, 2, 3) .. "abcd")
    raises(function() ml.load_idx(tmp) end,
           "load_idx: truncated file (expected 6 bytes of data, found 4)")
    write_file(tmp, idx_header(0x0E, 60000, 784) .. string.rep("x", 1024))
    raises(function() ml.load_idx(tmp) end,
           "load_idx: truncated file (expected 376320000 bytes of data, found 1024)")
    write_file(tmp, idx_header(0x08, 2) .. "abc")
    raises(function() ml.load_idx(tmp) end,
           "load_idx: '" .. tmp .. "' has bytes after the 2 bytes of data its header announces")
  end)

  it("checks a header's size against the file's before allocating", function()
    ml.reset_peak_memory("cpu")
    local before = ml.memory("cpu").peak
    raises(function() ml.load_idx(FIX .. "u8_8gib_header.idx") end,
           "load_idx: truncated file (expected 8589934592 bytes of data, found 16)")
    raises(function() ml.load_idx(FIX .. "u8_8gib_header.idx.gz") end,
           "load_idx: '" .. FIX .. "u8_8gib_header.idx.gz' is truncated or corrupt: its header " ..
           "announces 8589934592 bytes of data, more than its 51 compressed bytes can hold")
    assert.is_true(ml.memory("cpu").peak < before + 2 ^ 20)
  end)

  it("explains truncated and corrupt gzip streams", function()
    local gz = read_file(FMNIST .. "train-labels-idx1-ubyte.gz")
    write_file(tmp, gz:sub(1, 300))
    raises(function() ml.load_idx(tmp) end,
           "load_idx: truncated file (expected 60000 bytes of data, found")
    local small = read_file(FIX .. "u8_2x3.idx.gz")
    write_file(tmp, small:sub(1, 12) .. string.rep("\255", 10) .. small:sub(23))
    raises(function() ml.load_idx(tmp) end, "load_idx: cannot read '" .. tmp .. "': ")
  end)

  it("honours the device option", function()
    assert.equal("cpu", ml.load_idx(FIX .. "u8_2x3.idx", {device = "cpu"}).device)
  end)
end)

describe("load_npy", function()
  it("reads the supported dtypes", function()
    local x = ml.load_npy(FIX .. "f8_2x3.npy")
    assert.equal("float64", x.dtype)
    local t = x:totable()
    assert.same({1.5, -2.25, 1e-300}, t[1])
    assert.same({math.huge, 1 / 3}, {t[2][1], t[2][3]})
    assert.equal(-math.huge, 1 / t[2][2]) -- -0.0 kept
    local a = ml.load_npy(FIX .. "f4_3.npy")
    assert.equal("float32", a.dtype)
    assert.same({f32(0.1), f32(-1e30), 3.5}, a:totable())
    local b = ml.load_npy(FIX .. "i4_2x2.npy")
    assert.equal("int32", b.dtype)
    assert.same({{1, -2}, {2147483647, -2147483648}}, b:totable())
    local c = ml.load_npy(FIX .. "i8_3.npy")
    assert.equal("int64", c.dtype)
    assert.same({1, -1, 1 << 62}, c:totable())
    local d = ml.load_npy(FIX .. "u1_4.npy")
    assert.equal("uint8", d.dtype)
    assert.same({0, 1, 128, 255}, d:totable())
    local e = ml.load_npy(FIX .. "b1_3.npy")
    assert.equal("uint8", e.dtype)
    assert.same({1, 0, 1}, e:totable())
    -- the bytes 0 2 255 1 0, read as NumPy reads them: nonzero is true
    local b = ml.load_npy(FIX .. "b1_bytes.npy")
    assert.equal("uint8", b.dtype)
    assert.same({0, 1, 1, 1, 0}, b:totable())
    assert.same({2, 3, 4}, ml.nonzero(b):totable())
  end)

  it("reads Fortran order as the same logical array", function()
    local x = ml.load_npy(FIX .. "f8_fortran_2x3x4.npy")
    assert.same({2, 3, 4}, x.shape)
    assert.is_true(x:is_contiguous())
    local t = x:totable()
    for i = 1, 2 do
      for j = 1, 3 do
        for k = 1, 4 do
          assert.equal((i - 1) * 12 + (j - 1) * 4 + (k - 1), t[i][j][k])
        end
      end
    end
    assert.same({{1, 2, 3}, {4, 5, 6}},
                ml.load_npy(FIX .. "i4_fortran_2x3.npy"):totable())
  end)

  it("byte-swaps big-endian data", function()
    local x = ml.load_npy(FIX .. "f4_be.npy")
    assert.equal("float32", x.dtype)
    assert.same({1.5, -2, 3.25}, x:totable())
    assert.same({1, -2, 1 << 40}, ml.load_npy(FIX .. "i8_be.npy"):totable())
  end)

  it("reads format versions 2.0 and 3.0, 0-d and empty arrays", function()
    assert.same({{1, 2}}, ml.load_npy(FIX .. "f8_v2.npy"):totable())
    assert.same({7, 8}, ml.load_npy(FIX .. "f8_v3.npy"):totable())
    local s = ml.load_npy(FIX .. "f8_scalar.npy")
    assert.equal(0, s.ndim)
    assert.equal(2.5, s:item())
    local e = ml.load_npy(FIX .. "f8_empty.npy")
    assert.same({0, 3}, e.shape)
  end)

  it("explains bad files", function()
    raises(function() ml.load_npy("/nonexistent.npy") end,
           "load_npy: cannot open '/nonexistent.npy': No such file or directory")
    raises(function() ml.load_npy(FIX .. "u8_2x3.idx") end,
           "load_npy: '" .. FIX .. "u8_2x3.idx' is not a .npy file (bad magic)")
    raises(function() ml.load_npy(FIX .. "c16.npy") end,
           "load_npy: '" .. FIX .. "c16.npy' has unsupported dtype '<c16' " ..
           "(supported: <f4 <f8 <i4 <i8 |u1 |b1)")
    raises(function() ml.load_npy(FIX .. "f8_9d.npy") end,
           "load_npy: '" .. FIX .. "f8_9d.npy' has 9 dimensions (at most 8)")
    raises(function() ml.load_npy(FIX .. "structured.npy") end,
           "load_npy: '" .. FIX .. "structured.npy' has a structured dtype (fields), " ..
           "which is not supported")
    local good = read_file(FIX .. "f8_2x3.npy")
    write_file(tmp, good:sub(1, #good - 8))
    raises(function() ml.load_npy(tmp) end,
           "load_npy: truncated file (expected 48 bytes of data, found 40)")
    write_file(tmp, good:sub(1, 40))
    raises(function() ml.load_npy(tmp) end,
           "load_npy: truncated header in '" .. tmp .. "'")
    write_file(tmp, good:sub(1, 6) .. "\4\0" .. good:sub(9))
    raises(function() ml.load_npy(tmp) end,
           "load_npy: '" .. tmp .. "' has unsupported format version 4.0")
    for _, bad in ipairs({
      {"'shape'", "'shapf'"}, {"(2, 3)", "(2, x)"}, {"False", "Nope!"},
      {"{", "["}, {"'descr': '<f8', ", "'descr': '<f8' "},
      {"'<f8'", "[('a'"}, {"(2, 3)", "(2, 3, 4, 5, 6, 7, 8, 9, x)"},
    }) do
      local i, j = good:find(bad[1], 1, true)
      write_file(tmp, good:sub(1, i - 1) .. bad[2] .. good:sub(j + 1))
      raises(function() ml.load_npy(tmp) end,
             "load_npy: corrupt header in '" .. tmp .. "'")
    end
    -- A huge shape (same header length) fails before allocating.
    local huge = good:gsub("%(2, 3%)", "(99999, 9999999)"):gsub(
      string.rep(" ", 10) .. "\n", "\n")
    write_file(tmp, huge)
    raises(function() ml.load_npy(tmp) end,
           ("load_npy: truncated file (expected %d bytes of data, found 48)")
           :format(99999 * 9999999 * 8))
  end)
end)

describe("save_npy", function()
  it("writes what np.save writes", function()
    ml.save_npy(tmp, ml.array({{1.5, 2, 3}, {4, 5, 6.25}}))
    assert.equal(read_file(FIX .. "save_f8.npy"), read_file(tmp))
    ml.save_npy(tmp, ml.array({3, 0, 255}, {dtype = "uint8"}))
    assert.equal(read_file(FIX .. "save_u1.npy"), read_file(tmp))
    ml.save_npy(tmp, ml.full({}, -7, {dtype = "int32"}))
    assert.equal(read_file(FIX .. "save_i4_scalar.npy"), read_file(tmp))
  end)

  it("round-trips every dtype and shape", function()
    ml.seed(1)
    local cases = {
      ml.rand(3, 4, 5), ml.randn(7, {dtype = "float32"}),
      ml.randint(-1000, 1000, 2, 2, {dtype = "int32"}),
      ml.randint(-2 ^ 40, 2 ^ 40, 6), ml.randint(0, 256, 1, 9, {dtype = "uint8"}),
      ml.zeros(0, 2), ml.ones(1, 1, 1, 1, 1, 1, 1, 1),
    }
    for _, x in ipairs(cases) do
      ml.save_npy(tmp, x)
      local y = ml.load_npy(tmp)
      assert.equal(x.dtype, y.dtype)
      assert.same(x.shape, y.shape)
      assert.same(x:totable(), y:totable())
    end
  end)

  it("explains write failures", function()
    raises(function() ml.save_npy("/nonexistent/x.npy", ml.zeros(2)) end,
           "save_npy: cannot open '/nonexistent/x.npy': No such file or directory")
    raises(function() ml.save_npy("/dev/full", ml.zeros(2)) end,
           "save_npy: cannot write '/dev/full': No space left on device")
  end)
end)

describe("load_csv", function()
  it("reads rows of numbers", function()
    write_file(tmp, "1,2.5,-3\n4e2, 5 ,nan\r\n\n-inf,0x10,7\n")
    local x = ml.load_csv(tmp)
    assert.equal("float64", x.dtype)
    assert.same({3, 3}, x.shape)
    local t = x:totable()
    assert.same({1, 2.5, -3}, t[1])
    assert.same({400, 5}, {t[2][1], t[2][2]})
    assert.is_true(t[2][3] ~= t[2][3])
    assert.same({-math.huge, 16, 7}, t[3])
  end)

  it("reads a single column as n x 1, and no rows as 0 x 0", function()
    write_file(tmp, "1\n2\n3")
    assert.same({{1}, {2}, {3}}, ml.load_csv(tmp):totable())
    assert.same({3, 1}, ml.load_csv(tmp).shape)
    write_file(tmp, "")
    assert.same({0, 0}, ml.load_csv(tmp).shape)
    write_file(tmp, "a,b\n")
    assert.same({0, 0}, ml.load_csv(tmp, {skip = 1}).shape)
  end)

  it("honours delimiter, skip and dtype", function()
    write_file(tmp, "x;y\n# units\n1;2\n3;4\n")
    local x = ml.load_csv(tmp, {delimiter = ";", skip = 2, dtype = "int64"})
    assert.equal("int64", x.dtype)
    assert.same({{1, 2}, {3, 4}}, x:totable())
    write_file(tmp, "1\t2\n3\t255\n")
    local u = ml.load_csv(tmp, {delimiter = "\t", dtype = "uint8"})
    assert.same({{1, 2}, {3, 255}}, u:totable())
    write_file(tmp, "0.1,1e39\n")
    local f = ml.load_csv(tmp, {dtype = "float32"})
    assert.equal("float32", f.dtype)
    assert.same({{f32(0.1), math.huge}}, f:totable())
    assert.equal("cpu", ml.load_csv(tmp, {device = "cpu"}).device)
  end)

  it("names the line and column of a bad field", function()
    write_file(tmp, "1,2\n3,\n")
    raises(function() ml.load_csv(tmp) end,
           "load_csv: '" .. tmp .. "' line 2, column 2: empty field")
    write_file(tmp, "h\n1,2\n3,abc\n")
    raises(function() ml.load_csv(tmp, {skip = 1}) end,
           "load_csv: '" .. tmp .. "' line 3, column 2: 'abc' is not a number")
    write_file(tmp, "1,2\n3,4,5\n")
    raises(function() ml.load_csv(tmp) end,
           "load_csv: '" .. tmp .. "' line 2 has 3 fields, expected 2")
    write_file(tmp, "1,2.5\n")
    raises(function() ml.load_csv(tmp, {dtype = "int32"}) end,
           "load_csv: '" .. tmp .. "' line 1, column 2: '2.5' is not an integer")
    write_file(tmp, "1,256\n")
    raises(function() ml.load_csv(tmp, {dtype = "uint8"}) end,
           "load_csv: '" .. tmp .. "' line 1, column 2: 256 is out of range for uint8")
    write_file(tmp, "99999999999999999999\n")
    raises(function() ml.load_csv(tmp, {dtype = "int64"}) end,
           "line 1, column 1: 99999999999999999999 is out of range for int64")
    write_file(tmp, "1 2\n")
    raises(function() ml.load_csv(tmp) end, "line 1, column 1: '1 2' is not a number")
  end)

  it("rejects bad options and files", function()
    raises(function() ml.load_csv("/nonexistent.csv") end,
           "load_csv: cannot open '/nonexistent.csv': No such file or directory")
    raises(function() ml.load_csv(tmp, {delimiter = ",,"}) end,
           "load_csv: delimiter must be one character (not a line end)")
    raises(function() ml.load_csv(tmp, {delimiter = "\n"}) end,
           "load_csv: delimiter must be one character (not a line end)")
    raises(function() ml.load_csv(tmp, {skip = -1}) end,
           "load_csv: skip must be non-negative (got -1)")
  end)

  it("streams files larger than its buffer, lines across reads", function()
    local rows = {}
    for i = 1, 30000 do rows[i] = ("%d, %.17g,%d"):format(i, i / 7, -i) end
    write_file(tmp, "a,b,c\r\n" .. table.concat(rows, "\r\n")) -- no final line end
    local x = ml.load_csv(tmp, {skip = 1})
    assert.same({30000, 3}, x.shape)
    local t = x:totable()
    for _, i in ipairs({1, 2, 2730, 2731, 9999, 29999, 30000}) do
      assert.same({i, i / 7, -i}, t[i])
    end
    local long = {}
    for j = 1, 100000 do long[j] = tostring(j) end
    write_file(tmp, table.concat(long, ",") .. "\n" .. table.concat(long, ",") .. "\n")
    local y = ml.load_csv(tmp, {dtype = "int32"})
    assert.same({2, 100000}, y.shape)
    assert.same({100000, 100000}, {y[{1, -1}], y[{2, -1}]})
  end)

  it("refuses NUL bytes and endless lines at once, not after reading them whole", function()
    write_file(tmp, "1,2\n3,4\n5\0,6\n")
    raises(function() ml.load_csv(tmp) end,
           "load_csv: '" .. tmp .. "' line 3 has a NUL byte (not a text file)")
    raises(function() ml.load_csv("/dev/zero") end,
           "load_csv: '/dev/zero' line 1 has a NUL byte (not a text file)")
    write_file(tmp, "1\n" .. string.rep("7", 64 * 2 ^ 20 + 1))
    raises(function() ml.load_csv(tmp) end,
           "load_csv: '" .. tmp .. "' line 2 is longer than 64 MiB (not a CSV file of numbers?)")
  end)
end)

describe("save_csv", function()
  it("writes 1-D and 2-D arrays as text", function()
    ml.save_csv(tmp, ml.array({{1.5, 2, 3}, {4, 5, 6.25}}))
    assert.equal("1.5,2,3\n4,5,6.25\n", read_file(tmp))
    ml.save_csv(tmp, ml.array({1, -2, 3}), {delimiter = "\t"})
    assert.equal("1\n-2\n3\n", read_file(tmp))
    ml.save_csv(tmp, ml.array({{1, 255}}, {dtype = "uint8"}), {delimiter = ";"})
    assert.equal("1;255\n", read_file(tmp))
    ml.save_csv(tmp, ml.array({0.1}, {dtype = "float32"}))
    assert.equal("0.100000001\n", read_file(tmp))
    ml.save_csv(tmp, ml.zeros(0))
    assert.equal("", read_file(tmp))
  end)

  it("round-trips floats exactly", function()
    ml.seed(3)
    for _, x in ipairs({ml.randn(20, 3), ml.randn(10, 4, {dtype = "float32"}),
                        ml.array({{1 / 0, -1 / 0, 1e-320, 2 ^ 60}})}) do
      ml.save_csv(tmp, x)
      local y = ml.load_csv(tmp, {dtype = x.dtype})
      assert.same(x.shape, y.shape)
      assert.same(x:totable(), y:totable())
    end
    ml.save_csv(tmp, ml.array({0 / 0, 1}))
    local t = ml.load_csv(tmp):totable()
    assert.is_true(t[1][1] ~= t[1][1])
    assert.same({1}, t[2])
  end)

  it("rejects arrays that are not 1-D or 2-D", function()
    raises(function() ml.save_csv(tmp, ml.zeros(2, 2, 2)) end,
           "save_csv: expected a 1-D or 2-D array, got shape 2x2x2")
    raises(function() ml.save_csv(tmp, ml.full({}, 1)) end,
           "save_csv: expected a 1-D or 2-D array, got shape scalar")
    raises(function() ml.save_csv("/nonexistent/x.csv", ml.zeros(2)) end,
           "save_csv: cannot open '/nonexistent/x.csv': No such file or directory")
    raises(function() ml.save_csv("/dev/full", ml.zeros(2)) end,
           "save_csv: cannot write '/dev/full': No space left on device")
  end)
end)
