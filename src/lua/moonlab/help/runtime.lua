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
