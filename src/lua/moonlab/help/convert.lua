-- Help entries: conversions, moves and copies.
return {
  title = "Conversions and copies",
  intro = [[
Changing an array's dtype or device, reading its values into Lua, and
writing into it. Moving between devices is always explicit: operations
on arrays of two devices are an error that names both. Each function is
also a method (x:astype("float32") is ml.astype(x, "float32")), except
x:cuda(), whose module name ml.cuda is the CUDA namespace; ml.to(x,
"cuda") is its module form.]],
  entries = {
    {
      name = "astype",
      usage = {"x:astype(dtype)", "ml.astype(x, dtype)"},
      doc = [[
A copy of x converted to dtype (float32, float64, int32, int64 or
uint8), on x's device. It always copies, also when x already has that
dtype. Floats become integers by truncation toward zero.]],
      returns = "a new contiguous array.",
      example = [[
local x = ml.array({1.5, -2.7})
print(x:astype("int32"):sum(), x:astype("float32").dtype)  --> -1 float32]],
    },
    {
      name = "totable",
      usage = {"x:totable()", "ml.totable(x)"},
      doc = [[
x's values as nested Lua tables (a number for a 0-d array): integers for
integer dtypes, floats for float dtypes. Waits for the device.]],
      returns = "a table, or a number for a 0-d array.",
      example = [[
local t = ml.array({{1, 2}, {3, 4}}):totable()
print(#t, t[2][1])  --> 2 3]],
    },
    {
      name = "item",
      usage = {"x:item()", "ml.item(x)"},
      doc = [[
The value of an array of exactly one element (of any shape) as a Lua
number: an integer for integer dtypes. Waits for the device.]],
      returns = "a number.",
      example = [[
print(ml.array({{5}}):item(), ml.full({}, 2.5):item())  --> 5 2.5]],
    },
    {
      name = "to",
      usage = {"x:to(device)", "x:to(dtype)", "ml.to(x, device or dtype)"},
      doc = [[
x on another device ("cpu", "cuda", "cuda:N"), or converted to a dtype
(as astype). A device move always copies, also to x's own device.]],
      returns = "a new array.",
      example = [[
local x = ml.array({1, 2})
print(x:to("cpu").device, x:to("float32").dtype)  --> cpu float32]],
    },
    {
      name = "cpu",
      usage = {"x:cpu()", "ml.cpu(x)"},
      doc = [[A copy of x in host memory, as x:to("cpu").]],
      returns = "a new array on the CPU.",
      example = [[
print(ml.ones(3):cpu().device)  --> cpu]],
    },
    {
      name = "x:cuda",
      usage = {"x:cuda([index])"},
      doc = [[
A copy of x on GPU index (0-based, as in "cuda:0"; default 0), as
x:to("cuda:N"). Raises when there is no such GPU or the build has no
CUDA.]],
      returns = "a new array on the GPU.",
      example = [[
if ml.cuda.available() then
  print(ml.ones(3):cuda().device)  --> cuda:0
end]],
    },
    {
      name = "clone",
      usage = {"x:clone()", "ml.clone(x)"},
      doc = [[
A contiguous copy of x, of the same dtype and device, sharing nothing.]],
      returns = "a new contiguous array.",
      example = [[
local x = ml.zeros(2)
local y = x:clone()
y:fill(1)
print(x:sum(), y:sum())  --> 0.0 2.0]],
    },
    {
      name = "contiguous",
      usage = {"x:contiguous()", "ml.contiguous(x)"},
      doc = [[
x itself when it is contiguous, else a contiguous copy (as Torch's
contiguous).]],
      returns = "x or a new contiguous array.",
      example = [[
local x = ml.zeros(2, 3)
local c = x:t():contiguous()
print(x:contiguous() == x, c:is_contiguous())  --> true true]],
    },
    {
      name = "fill",
      usage = {"x:fill(value)", "ml.fill(x, value)"},
      doc = [[
Sets every element of x (a view writes through to its base) to value, a
number or boolean that must fit x's dtype.]],
      returns = "x.",
      example = [[
local x = ml.zeros(2, 3)
x[1]:fill(4)
print(x:sum())  --> 12.0]],
    },
    {
      name = "copy",
      usage = {"x:copy(src)", "ml.copy(x, src)"},
      doc = [[
Copies src (an array on x's device, a nested table or a number) into x,
broadcasting src to x's shape and converting it to x's dtype; a view
writes through to its base.]],
      returns = "x.",
      example = [[
local x = ml.zeros(2, 2)
x:copy({1, 2})
print(x:sum(), x[{2, 2}])  --> 6.0 2.0]],
    },
  },
}
