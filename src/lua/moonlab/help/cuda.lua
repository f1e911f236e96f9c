-- Help entries: the ml.cuda namespace.
return {
  title = "CUDA devices",
  namespace = "cuda",
  intro = [[
The GPUs, their caching allocators and their streams, in the namespace
ml.cuda (as torch.cuda). It exists in every build: without CUDA, or on a
machine without a GPU, there are no devices, available() is false, and
the functions that name a device raise. A device is given as a number N
(0-based, as in "cuda:N") or by its name; by default the default device
when it is a GPU, else cuda:0. Arrays move with x:cuda(), x:cpu() and
x:to(device).]],
  entries = {
    {
      name = "cuda.available",
      usage = {"ml.cuda.available()"},
      doc = [[Whether there is at least one GPU that moonlab can use.]],
      returns = "a boolean.",
      example = [[
print(ml.cuda.available() == (ml.cuda.device_count() > 0))  --> true]],
    },
    {
      name = "cuda.device_count",
      usage = {"ml.cuda.device_count()"},
      doc = [[The number of GPUs (0 in a build without CUDA).]],
      returns = "an integer.",
      example = [[
print(math.type(ml.cuda.device_count()))  --> integer]],
    },
    {
      name = "cuda.device_name",
      usage = {"ml.cuda.device_name([device])"},
      doc = [[The GPU's model name, as the driver reports it.]],
      returns = "a string.",
      example = [[
if ml.cuda.available() then print(ml.cuda.device_name(0)) end]],
    },
    {
      name = "cuda.synchronize",
      usage = {"ml.cuda.synchronize([device])"},
      doc = [[Waits until the work queued on the GPU is done.]],
      returns = "nothing.",
      example = [[
if ml.cuda.available() then ml.cuda.synchronize() end]],
    },
    {
      name = "cuda.memory",
      usage = {"ml.cuda.memory([device])"},
      doc = [[
The GPU's memory in bytes: held by arrays (rounded up to the caching
allocator's size classes), kept by the allocator for reuse, the most
ever allocated, and the device's total.]],
      returns = "a table {allocated, cached, peak, total} of integers.",
      example = [[
if ml.cuda.available() then
  local m = ml.cuda.memory()
  print(m.total > 0)  --> true
end]],
    },
    {
      name = "cuda.empty_cache",
      usage = {"ml.cuda.empty_cache([device])"},
      doc = [[
Returns the blocks the GPU's caching allocator keeps for reuse to the
driver.]],
      returns = "nothing.",
      example = [[
if ml.cuda.available() then
  ml.cuda.empty_cache()
  print(ml.cuda.memory().cached)  --> 0
end]],
    },
  },
}
