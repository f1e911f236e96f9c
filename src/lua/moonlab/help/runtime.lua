-- Help entries: defaults, devices, memory, timing and help.
return {
  title = "Runtime",
  intro = [[
Process-wide settings (the default dtype and device), memory accounting,
synchronisation, a wall clock, and this help. The default device is the
first GPU when the build has CUDA and a GPU is present, else the CPU;
MOONLAB_DEVICE=cpu|cuda|cuda:N in the environment or ml.set_device
overrides it.]],
  entries = {
    {
      name = "set_default_dtype",
      usage = {"ml.set_default_dtype(dtype)"},
      doc = [[
Sets the float dtype that constructors, random functions and float
tables use when no dtype is named: "float64" (the default at start-up)
or "float32".]],
      returns = "nothing.",
      example = [[
ml.set_default_dtype("float32")
print(ml.zeros(2).dtype, ml.array({0.5}).dtype)  --> float32 float32
ml.set_default_dtype("float64")]],
    },
    {
      name = "get_default_dtype",
      usage = {"ml.get_default_dtype()"},
      doc = [[The default float dtype (see set_default_dtype).]],
      returns = 'a string, "float64" or "float32".',
      example = [[
print(ml.get_default_dtype())  --> float64]],
    },
    {
      name = "set_device",
      usage = {"ml.set_device(device)"},
      doc = [[
Sets the device on which new arrays are made when no device is named:
"cpu", "cuda" (cuda:0) or "cuda:N". A device that is not present is an
error.]],
      returns = "nothing.",
      example = [[
local before = ml.device()
ml.set_device("cpu")
print(ml.zeros(2).device)  --> cpu
ml.set_device(before)]],
    },
    {
      name = "device",
      usage = {"ml.device()"},
      doc = [[The default device's name.]],
      returns = 'a string: "cpu" or "cuda:N".',
      example = [[
print(ml.device() == ml.zeros(1).device)  --> true]],
    },
    {
      name = "memory",
      usage = {"ml.memory([device])"},
      doc = [[
Memory held by arrays on a device (default the default device): bytes
allocated by live arrays, the peak since start-up (or
reset_peak_memory), the number of live arrays, and the bytes a GPU's
caching allocator keeps for reuse (0 on the CPU).]],
      returns = "a table {allocated, peak, arrays, cached} of integers.",
      example = [[
collectgarbage() -- so that no garbage array goes in between
local before = ml.memory("cpu").allocated
local x = ml.zeros(1000, {device = "cpu"})
print(ml.memory("cpu").allocated - before)  --> 8000]],
    },
    {
      name = "reset_peak_memory",
      usage = {"ml.reset_peak_memory([device])"},
      doc = [[
Restarts the peak count of memory() at what is allocated now.]],
      returns = "nothing.",
      example = [[
ml.reset_peak_memory("cpu")
local m = ml.memory("cpu")
print(m.peak == m.allocated)  --> true]],
    },
    {
      name = "empty_cache",
      usage = {"ml.empty_cache([device])"},
      doc = [[
Returns the blocks a GPU's caching allocator keeps for reuse to the
driver (nothing to do on the CPU), as torch.cuda.empty_cache.]],
      returns = "nothing.",
      example = [[
ml.empty_cache()
print(ml.memory().cached)  --> 0]],
    },
    {
      name = "set_printoptions",
      usage = {"ml.set_printoptions(opts)"},
      doc = [[
How arrays print, as NumPy's set_printoptions: an option left out keeps
its value, except sci_mode, which as in PyTorch returns to automatic
unless given. math.huge means no limit for threshold and linewidth. A bad
option raises and changes nothing.]],
      options = {
        {name = "precision", type = "integer", default = "4",
         doc = "digits after the decimal point of floats"},
        {name = "threshold", type = "number", default = "1000",
         doc = "arrays of more elements print only their corners"},
        {name = "edgeitems", type = "integer", default = "3",
         doc = "the corners' rows and columns, at each end"},
        {name = "linewidth", type = "number", default = "math.huge",
         doc = "wider rows continue on further lines (matrices in column blocks)"},
        {name = "sci_mode", type = "boolean", default = "automatic",
         doc = "true forces the scientific format, false forbids it"},
      },
      returns = "nothing.",
      example = [[
local saved = ml.get_printoptions()
ml.set_printoptions({precision = 2})
print(ml.array({1 / 3}))
ml.set_printoptions(saved)]],
    },
    {
      name = "get_printoptions",
      usage = {"ml.get_printoptions()"},
      doc = [[
The print options now in force, as set_printoptions takes them (so
that set_printoptions(get_printoptions()) restores them).]],
      returns = "a table {precision, threshold, edgeitems, linewidth, sci_mode}.",
      example = [[
print(ml.get_printoptions().edgeitems)  --> 3]],
    },
    {
      name = "synchronize",
      usage = {"ml.synchronize([device])"},
      doc = [[
Waits until the work queued on a device (default the default device) is
done, for timing. Reading values back (item, totable, printing, full
reductions) waits by itself.]],
      returns = "nothing.",
      example = [[
local t = ml.clock()
local y = ml.randn(1000, 1000):mm(ml.randn(1000, 1000))
ml.synchronize()
print(ml.clock() - t > 0)  --> true]],
    },
    {
      name = "clock",
      usage = {"ml.clock()"},
      doc = [[
Seconds on a monotonic wall clock, for timing (os.clock counts the CPU
time of every thread instead).]],
      returns = "a number.",
      example = [[
local t0 = ml.clock()
print(ml.clock() >= t0)  --> true]],
    },
    {
      name = "timeit",
      usage = {"ml.timeit(fn [, opts])"},
      doc = [[
The time of one call of fn(), as Python's timeit: after warmup calls,
`repeat` runs of `number` calls each, the default device synchronized
before and after each run so that the queued work is counted. Without
number, the first of 1, 2, 5, 10, 20, ... calls whose run takes 0.2 s
or more. Printing the result (tostring, or the shell) gives one line,
e.g. "1.23 ms ± 0.04 ms (median of 7 runs, 10 loops each)". As
`repeat` is a Lua keyword, the option is also spelled `repeats`.]],
      options = {
        {name = "repeat", type = "integer", default = "7",
         doc = 'timed runs, at least 1 (a keyword: {["repeat"] = 7})'},
        {name = "repeats", type = "integer", default = "7",
         doc = "the same as repeat, without the brackets"},
        {name = "number", type = "integer", default = "automatic",
         doc = "the calls of fn in each run (at least 1)"},
        {name = "warmup", type = "integer", default = "1",
         doc = "untimed calls before the first run"},
      },
      returns = [[
a table of seconds per call: median, min, max, mean, stdev (when repeat
> 1), times (each run's), and repeat and number.]],
      example = [[
local a = ml.randn(200, 200)
local r = ml.timeit(function() return a:mm(a) end, {repeats = 3, number = 2})
print(r["repeat"], r.number, #r.times, r.min <= r.median)  --> 3 2 3 true]],
    },
    {
      name = "help",
      usage = {"ml.help([f])"},
      doc = [[
Prints the help entry of f: a module function (ml.knn), a method (x.sum
or ml.methods.sum), a class or its method (ml.KNNClassifier,
clf.predict), a namespace (ml.cuda), or a name ("knn", "x:sum",
"datasets.fashion_mnist", or an area such as "reduce"). Without f,
the areas and their functions. The shell's help(f) and ?f call it.]],
      returns = "nothing.",
      example = [[
ml.help(ml.zeros)
ml.help("reduce")]],
    },
    {
      name = "help_text",
      usage = {"ml.help_text([f])"},
      doc = [[The text that ml.help(f) prints, to use rather than print.]],
      returns = "a string, or nil and a message when f has no entry.",
      example = [[
local text = ml.help_text(ml.zeros)
print(text:match("^[^\n]*"))  --> ml.zeros(shape... [, opts])
print(ml.help_text("nosuch"))  --> nil help: no entry named 'nosuch']],
    },
  },
}
