-- ml.load and ml.savez of NumPy's .npz (src/core/io_npz.c over libzip):
-- archives written by NumPy 1.24 (tests/fixtures/npz/make.py), stored and
-- deflated, load with their names, dtypes, shapes and values (each member
-- compared with the same array saved alone as .npy); ours round-trip and
-- load in NumPy when /usr/bin/python3 has it; errors name the file.
local ml = require "moonlab"
require "moonlab.test"

local DIR = "tests/fixtures/npz/"
local DEV = ml.device()
local MEMBERS = {"f32", "f64", "i32", "i64", "u8", "b1", "fortran", "big"}

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local function tmpfile()
  local path = os.tmpname()
  os.remove(path)
  return path
end

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function has_numpy()
  local f = io.open("/usr/bin/python3")
  if not f then return false end
  f:close()
  return os.execute("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == true
end

describe("load of .npz", function()
  for _, kind in ipairs({"stored", "deflated"}) do
    it("reads NumPy's " .. kind .. " archive by name, dtype, shape and value",
       function()
      local t = ml.load(DIR .. kind .. ".npz")
      assert.equal(#MEMBERS, count(t))
      for _, name in ipairs(MEMBERS) do
        local want = ml.load_npy(DIR .. name .. ".npy")
        assert.is_true(ml.is_array(t[name]), name)
        assert.equal(DEV, t[name].device)
        assert.array_equal(t[name]:cpu(), want)
      end
      assert.equal("float32", t.f32.dtype)
      assert.equal("uint8", t.b1.dtype)
      assert.same({}, t.i32.shape)
      assert.same({0, 5}, t.i64.shape)
      assert.same({3, 4}, t.fortran.shape)
      assert.equal(2^30, t.big[{2, 2}])
    end)
  end

  it("puts the arrays on the device it is given", function()
    local t = ml.load(DIR .. "stored.npz", {device = "cpu"})
    assert.equal("cpu", t.f64.device)
  end)

  it("still reads .npy files, as an array", function()
    local x = ml.load(DIR .. "f32.npy")
    assert.is_true(ml.is_array(x))
    assert.array_equal(x:cpu(), ml.load_npy(DIR .. "f32.npy"))
  end)

  it("names the file and the member in its errors", function()
    local missing = tmpfile()
    assert.truthy(errmsg(ml.load, missing):match("^load: cannot open '" ..
                  missing:gsub("%p", "%%%0") .. "': No such file"))
    local bad = tmpfile()
    local f = assert(io.open(bad, "wb"))
    f:write("PK\3\4 this is no zip archive at all")
    f:close()
    assert.truthy(errmsg(ml.load, bad):match(
      "^load: cannot read the zip archive '.*': Not a zip archive"),
      errmsg(ml.load, bad))
    f = assert(io.open(bad, "wb"))
    f:write("hello")
    f:close()
    assert.truthy(errmsg(ml.load, bad):match(
      "^load: '.*' is neither a .npy nor a .npz file %(bad magic%)$"))
    os.remove(bad)
    assert.equal("load: 'h.npy' in '" .. DIR .. "half.npz' has unsupported "
                 .. "dtype '<f2' (supported: <f4 <f8 <i4 <i8 |u1 |b1)",
                 errmsg(ml.load, DIR .. "half.npz"))
  end)
end)

describe("savez", function()
  local arrays = function()
    return {
      a = ml.arange(12, {dtype = "float32"}):reshape(3, 4):t(),
      b = ml.array({{1, -2}, {3, 4}}, {dtype = "int32"}),
      c = ml.zeros(0, {dtype = "int64"}),
      d = ml.array({0, 1, 255}, {dtype = "uint8"}),
      e = ml.full({}, 2.5),
    }
  end

  for _, compressed in ipairs({false, true}) do
    it(("round-trips names, dtypes, shapes and views (compressed=%s)")
       :format(compressed), function()
      local path, src = tmpfile(), arrays()
      ml.savez(path, src, {compressed = compressed})
      local t = ml.load(path)
      os.remove(path)
      assert.equal(count(src), count(t))
      for name, x in pairs(src) do
        assert.array_equal(t[name]:cpu(), x:cpu())
      end
    end)
  end

  it("deflates when compressed, stores otherwise", function()
    local stored, deflated = tmpfile(), tmpfile()
    ml.savez(stored, {z = ml.zeros(10000)})
    ml.savez(deflated, {z = ml.zeros(10000)}, {compressed = true})
    local size = function(p)
      local f = assert(io.open(p, "rb"))
      local n = f:seek("end")
      f:close()
      os.remove(p)
      return n
    end
    assert.is_true(size(stored) > 80000)
    assert.is_true(size(deflated) < 2000)
  end)

  it("writes archives that NumPy loads", function()
    if not has_numpy() then
      pending("no /usr/bin/python3 with NumPy")
      return
    end
    for _, compressed in ipairs({false, true}) do
      local path = tmpfile()
      ml.savez(path, arrays(), {compressed = compressed})
      local script = ([[
import sys, zipfile
import numpy as np
d = np.load(sys.argv[1])
print(' '.join('{}:{}:{}:{}'.format(k, d[k].dtype, d[k].shape, d[k].sum())
               for k in sorted(d.files)))
z = zipfile.ZipFile(sys.argv[1])
print(' '.join(str(i.compress_type) for i in z.infolist()))
]])
      local p = assert(io.popen("/usr/bin/python3 -c \"" .. script .. "\" "
                                .. path))
      local out = p:read("a")
      p:close()
      os.remove(path)
      assert.equal("a:float32:(4, 3):66.0 b:int32:(2, 2):6 c:int64:(0,):0 "
                   .. "d:uint8:(3,):256 e:float64:():2.5\n"
                   .. (compressed and "8 8 8 8 8" or "0 0 0 0 0") .. "\n", out)
    end
  end)

  it("checks its arguments", function()
    local path = tmpfile()
    assert.equal("savez: no arrays to save", errmsg(ml.savez, path, {}))
    assert.equal("savez: 'x' is a number, not an array",
                 errmsg(ml.savez, path, {x = 3}))
    assert.equal("savez: array names must be strings, not number",
                 errmsg(ml.savez, path, {ml.ones(2)}))
    assert.truthy(errmsg(ml.savez, "/nonexistent/dir/a.npz", {x = ml.ones(2)})
                  :match("^savez: cannot write '/nonexistent/dir/a.npz': "))
    assert.equal("savez: unknown option 'compress' (did you mean 'compressed'?)",
                 errmsg(ml.savez, path, {x = ml.ones(2)}, {compress = true}))
  end)
end)
