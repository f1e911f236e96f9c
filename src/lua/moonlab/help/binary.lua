-- Help entries: ±1 matrices packed into words (the ml.binary namespace,
-- moonlab/binary.lua).
return {
  title = "Binary matrices and Hamming search",
  namespace = "binary",
  intro = [[
±1 matrices packed 32 signs to an int32 word, their exact products and
Hamming distances, on the tensor cores on a GPU (AND and popcount) and
with hardware popcounts on the CPU. A packed array is an object with
fields words (the int32 array: the other dimensions, then the words of
each packed row, padded with zero bits to a multiple of 256), bits (the
logical length), dim (the packed dimension, counted from the end: -1
the last), shape (the logical shape) and device, and methods unpack, to
and save (ml.binary's functions). x >= 0 packs as +1, anything else
(NaN too) as -1. Products and distances are int32 and exact.
ml.knn(q, r, k, {metric = "hamming"}) searches packed codes.]],
  entries = {
    {
      name = "binary.pack",
      usage = {"ml.binary.pack(x [, opts])"},
      doc = [[
The signs of x (any dtype, any view, at least 1-D) along dimension dim
packed into words: +1 for x >= 0, -1 otherwise. The packed dimension
must not be empty.]],
      options = {
        {name = "dim", type = "integer", default = "-1",
         doc = "the dimension to pack (1-based, negative from the end)"},
      },
      returns = "a packed array on x's device.",
      example = [[
local p = ml.binary.pack(ml.array({{1, -2, 0}, {-1, -1, 3}}))
print(p.bits, p.words.shape[2], p.words.dtype)  --> 3 8 int32]],
    },
    {
      name = "binary.unpack",
      usage = {"ml.binary.unpack(p [, opts])", "p:unpack([opts])"},
      doc = [[
The ±1 array of a packed array, its packed dimension back in place.
uint8 cannot hold -1 and is an error.]],
      options = {
        {name = "dtype", type = "string", default = "ml.get_default_dtype()",
         doc = "the result's dtype"},
      },
      returns = "a new array of p.shape.",
      example = [[
local x = ml.array({{1, -2, 0}})
print(ml.binary.unpack(ml.binary.pack(x)):sum())  --> 1.0]],
    },
    {
      name = "binary.mm",
      usage = {"ml.binary.mm(a, b)"},
      doc = [[
The exact product of ±1 matrices a (... x m x k) and b (... x k x n),
batched over equal leading dimensions: each an array (packed here: a
along its last dimension, b along its second to last) or packed so
already. Other lengths of k than multiples of 32 or 256 are exact too.
A packed operand packed along another dimension, different k and
different batches are errors.]],
      returns = "a new int32 array ... x m x n.",
      example = [[
local a = ml.array({{1, -1, 1}, {-1, -1, -1}})
local c = ml.binary.mm(a, ml.binary.pack(a:t(), {dim = 1}))
print(c[{1, 1}], c[{1, 2}], c.dtype)  --> 3 -1 int32]],
    },
    {
      name = "binary.hamming",
      usage = {"ml.binary.hamming(a, b)"},
      doc = [[
The Hamming distances between the codes of a (... x m x bits) and those
of b (... x n x bits), both packed along their last dimension (arrays
are packed here), batched over equal leading dimensions. Codes of
different lengths are an error.]],
      returns = "a new int32 array ... x m x n.",
      example = [[
local h = ml.binary.hamming({{1, 1, -1}}, {{1, -1, 1}, {1, 1, -1}})
print(h[{1, 1}], h[{1, 2}])  --> 2 0]],
    },
    {
      name = "binary.to",
      usage = {"ml.binary.to(p, device)", "p:to(device)"},
      doc = [[
The packed array p on device ("cpu", "cuda", "cuda:N"), sharing p's
words when they are there already.]],
      returns = "a packed array.",
      example = [[
print(ml.binary.pack(ml.ones(2, 5)):to("cpu").device)  --> cpu]],
    },
    {
      name = "binary.save",
      usage = {"ml.binary.save(p, path)", "p:save(path)"},
      doc = [[
Writes a packed array to path as an int32 .npy file that NumPy reads:
header rows (a magic number, bits, dim and the words' shape), then the
packed rows.]],
      returns = "nothing.",
      example = [[
local path = os.tmpname()
ml.binary.pack(ml.ones(2, 5)):save(path)
print(ml.binary.load(path).bits)  --> 5
os.remove(path)]],
    },
    {
      name = "binary.load",
      usage = {"ml.binary.load(path [, opts])"},
      doc = [[
Reads a packed array written by ml.binary.save; a file that holds none
is an error.]],
      options = {
        {name = "device", type = "string", default = '"cpu"',
         doc = "the device to put it on"},
      },
      returns = "a packed array.",
      example = [[
local path = os.tmpname()
ml.binary.save(ml.binary.pack(ml.ones(4, 3), {dim = 1}), path)
local p = ml.binary.load(path)
print(p.bits, p.dim, p.shape[2])  --> 4 -2 3
os.remove(path)]],
    },
    {
      name = "binary.is_packed",
      usage = {"ml.binary.is_packed(v)"},
      doc = [[
Whether v is a packed array.]],
      returns = "a boolean.",
      example = [[
print(ml.binary.is_packed(ml.binary.pack(ml.ones(3))))  --> true]],
    },
  },
}
