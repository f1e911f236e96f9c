-- Help entries: flipping, rolling and padding (moonlab/rearrange.lua and
-- the flip view of bindings/l_shape.c).
return {
  title = "Flipping, rolling and padding",
  intro = [[
NumPy's flip, roll and pad, with its semantics, for every dtype on
either device; dimensions are 1-based (negative from the end). A flip is
a view whose strides step backwards, shared with x and copying nothing,
which every operation reads as any other view; roll and pad write a new
array in one pass. Every function is also a method: x:roll(1) is
ml.roll(x, 1).]],
  entries = {
    {
      name = "flip",
      usage = {"x:flip([opts])", "ml.flip(x [, opts])"},
      doc = [[
x with the order of its elements reversed along every dimension, or
along those of dims (numpy.flip, torch.flip), as a view with negative
strides: writing into it writes into x. A dimension repeated in dims is
an error.]],
      options = {
        {name = "dims", type = "integer|table", default = "nil",
         doc = "the dimension or list of dimensions to reverse (nil: all)"}},
      returns = "a view of x.",
      example = [[
local x = ml.array({{1, 2, 3}, {4, 5, 6}})
print(x:flip()[{1, 1}], x:flip({dims = 2})[{1, 1}])  --> 6 3
print(x:flip({dims = {1}}):contiguous()[{1, 3}])  --> 6]],
    },
    {
      names = {"flipud", "fliplr"},
      usage = {"x:flipud()", "ml.flipud(x)", "x:fliplr()", "ml.fliplr(x)"},
      doc = [[
x reversed along dimension 1 (flipud, up and down) or 2 (fliplr, left
and right), as numpy.flipud and numpy.fliplr: views, as flip's. fliplr
needs 2 or more dimensions, flipud 1 or more.]],
      returns = "a view of x.",
      example = [[
local x = ml.array({{1, 2}, {3, 4}})
print(x:flipud()[{1, 2}], x:fliplr()[{1, 2}])  --> 4 1]],
    },
    {
      name = "roll",
      usage = {"x:roll(shift [, opts])", "ml.roll(x, shift [, opts])"},
      doc = [[
x with its elements shifted shift places along dims, those pushed past
the end coming back at the start (numpy.roll): without dims, along the
flattened array, reshaped back. shift and dims may be lists of one
length (or one of them a single value); shifts of one dimension add up,
and a negative shift rolls backwards.]],
      options = {
        {name = "dims", type = "integer|table", default = "nil",
         doc = "the dimension or dimensions to roll (nil: the flattened array)"}},
      returns = "a new array of x's shape and dtype.",
      example = [[
local x = ml.arange(1, 6)
print(x:roll(2)[{1}], x:roll(-1)[{1}])  --> 4 2
local m = ml.arange(6):reshape(2, 3)
print(m:roll({1, 1}, {dims = {1, 2}})[{1, 1}])  --> 5]],
    },
    {
      name = "pad",
      usage = {"x:pad(pad_width [, opts])", "ml.pad(x, pad_width [, opts])"},
      doc = [[
x extended past its edges (numpy.pad). pad_width is n (n elements
before and after every dimension), {before, after} (the same for every
dimension) or one {before, after} for each dimension. Modes, as
NumPy's: "constant" (constant_values), "edge" (the edge value
repeated), "reflect" (mirrored about the edge, which is not repeated),
"symmetric" (mirrored, the edge repeated) and "wrap" (periodic);
margins wider than x reflect or wrap again, as NumPy does. Extending an
empty dimension is an error in every mode but "constant".]],
      options = {
        {name = "mode", type = "string", default = '"constant"',
         doc = '"constant", "edge", "reflect", "symmetric" or "wrap"'},
        {name = "constant_values", type = "number", default = "0",
         doc = 'the value of the margins in mode "constant"'}},
      returns = "a new array of x's dtype.",
      example = [[
local x = ml.array({1, 2, 3})
print(x:pad(2)[{1}], x:pad({0, 1}, {constant_values = 9})[{4}])  --> 0 9
print(x:pad(2, {mode = "reflect"})[{1}])  --> 3
print(x:pad(1, {mode = "wrap"})[{1}])  --> 3
print(ml.pad(ml.ones(2, 2), {{1, 0}, {0, 3}}).shape[2])  --> 5]],
    },
  },
}
