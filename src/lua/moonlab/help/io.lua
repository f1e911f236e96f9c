-- Help entries: files.
local DEVICE = {name = "device", type = "string", default = "ml.device()",
                doc = 'where the array goes: "cpu", "cuda" or "cuda:N"'}

return {
  title = "Files",
  intro = [[
Reading and writing arrays: IDX (the MNIST format), NumPy's .npy and
.npz (through libzip), and CSV. Loaders read into host memory and return
a new contiguous array on the default device (or options.device); savers
take an array on any device and of any strides. Errors name the
operation and the file: missing or unreadable files, bad magic numbers,
corrupt headers, truncated data.]],
  entries = {
    {
      name = "load_idx",
      usage = {"ml.load_idx(path [, opts])"},
      doc = [[
An IDX file, gzip-compressed or plain (MNIST's train-images-idx3-ubyte.gz
and the like): unsigned bytes give uint8, signed bytes, shorts and ints
int32, floats float32, doubles float64.]],
      options = {DEVICE},
      returns = "a new array of the file's shape.",
      example = [[
local d = os.getenv("MOONLAB_DATA") or "/usr/share/datasets/fashion-mnist"
local y = ml.load_idx(d .. "/t10k-labels-idx1-ubyte.gz")
print(y.dtype, y:numel(), y:max())  --> uint8 10000 9]],
    },
    {
      name = "load_npy",
      usage = {"ml.load_npy(path [, opts])"},
      doc = [[
A NumPy .npy file (format 1.0, 2.0 or 3.0) of dtype <f4, <f8, <i4, <i8,
|u1 or |b1 (as uint8); big-endian data is byte-swapped and
fortran_order arrays are made C-contiguous.]],
      options = {DEVICE},
      returns = "a new array of the file's shape and dtype.",
      example = [[
local path = os.tmpname()
ml.save_npy(path, ml.arange(6):reshape(2, 3))
local x = ml.load_npy(path)
os.remove(path)
print(x.dtype, x.shape[2], x:sum())  --> int64 3 15]],
    },
    {
      name = "save_npy",
      usage = {"ml.save_npy(path, x)"},
      doc = [[
Writes x as a .npy file (format 1.0, C order, little-endian; uint8 as
|u1) that numpy.load reads.]],
      returns = "nothing.",
      example = [[
local path = os.tmpname()
ml.save_npy(path, ml.eye(3, {dtype = "float32"}))
print(ml.load_npy(path).dtype)  --> float32
os.remove(path)]],
    },
    {
      name = "load",
      usage = {"ml.load(path [, opts])"},
      doc = [[
A NumPy file, told apart by its first bytes as numpy.load does: a .npy
gives one array (as load_npy), a .npz (numpy.savez, stored, or
numpy.savez_compressed, deflated; zip64 too) a table of its arrays by
name, the member name without ".npy". Errors name the file and the
member: a missing file, a file that is neither, a corrupt zip archive,
a member that is no .npy or has a dtype other than <f4 <f8 <i4 <i8 |u1
|b1.]],
      options = {DEVICE},
      returns = "a new array, or a table of new arrays by name.",
      example = [[
local path = os.tmpname()
ml.savez(path, {w = ml.ones(2, 3), labels = ml.arange(1, 5)})
local t = ml.load(path)
os.remove(path)
print(t.w.shape[2], t.labels.dtype, t.labels:sum())  --> 3 int64 10]],
    },
    {
      name = "savez",
      usage = {"ml.savez(path, arrays [, opts])"},
      doc = [[
Writes a table of arrays, name = array, as a NumPy .npz archive that
numpy.load reads: each array a member name.npy (format 1.0, C order),
in the order of the names, stored as numpy.savez does or deflated as
numpy.savez_compressed. Names are strings, the table not empty; arrays
may live on any device and have any strides.]],
      options = {
        {name = "compressed", type = "boolean", default = "false",
         doc = "deflate the members (numpy.savez_compressed)"},
      },
      returns = "nothing.",
      example = [[
local path = os.tmpname()
ml.savez(path, {x = ml.zeros(1000)}, {compressed = true})
local f = io.open(path, "rb")
print(f:seek("end") < 1000)  --> true
f:close()
os.remove(path)]],
    },
    {
      name = "load_csv",
      usage = {"ml.load_csv(path [, opts])"},
      doc = [[
A CSV file of numbers as a 2-D array, one row per line (a single column
gives n x 1; no rows give 0 x 0). Blank lines are ignored, spaces around
fields allowed, and every row must have the first row's number of
fields. Float dtypes parse "nan" and "inf"; integer dtypes take decimal
integers that fit. A bad field is an error naming its line and column.]],
      options = {
        {name = "delimiter", type = "string", default = '","',
         doc = "the field separator: one character, not a line end"},
        {name = "skip", type = "integer", default = "0",
         doc = "lines to skip at the start (a header)"},
        {name = "dtype", type = "string", default = "ml.get_default_dtype()",
         doc = "the element type of the result"},
        DEVICE,
      },
      returns = "a new 2-D array.",
      example = [[
local path = os.tmpname()
local f = io.open(path, "w")
f:write("a;b\n1;2\n3;4\n")
f:close()
local x = ml.load_csv(path, {delimiter = ";", skip = 1, dtype = "int32"})
os.remove(path)
print(x.dtype, x.shape[1], x:sum())  --> int32 2 10]],
    },
    {
      name = "save_csv",
      usage = {"ml.save_csv(path, x [, opts])"},
      doc = [[
Writes a 1-D array one value per line, or a 2-D array one row per line.
Floats are written with enough digits to read back exactly (%.17g for
float64, %.9g for float32), integers as integers.]],
      options = {
        {name = "delimiter", type = "string", default = '","',
         doc = "the field separator: one character, not a line end"},
      },
      returns = "nothing.",
      example = [[
local path = os.tmpname()
ml.save_csv(path, ml.array({{1, 2}, {3, 4}}), {delimiter = "\t"})
local f = io.open(path)
print((f:read("l"):gsub("\t", " ")))  --> 1 2
f:close()
os.remove(path)]],
    },
  },
}
