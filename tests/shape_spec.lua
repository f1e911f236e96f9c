-- Shapes: reshape view flatten t transpose permute squeeze unsqueeze expand
-- narrow select cat stack split. Values are checked through totable().
local ml = require "moonlab"

-- 0..n-1 as an int64 array of the given shape (through reshape).
local function range(...)
  local n = 1
  for _, s in ipairs({...}) do n = n * s end
  return ml.arange(n):reshape(...)
end

-- Whether x and y share storage: writing through x shows in y.
local function shares(x, y)
  local before = y:clone()
  x:fill(-7)
  local same = false
  local a, b = y:totable(), before:totable()
  local function walk(p, q)
    if type(p) == "table" then
      for i = 1, #p do walk(p[i], q[i]) end
    elseif p ~= q then
      same = true
    end
  end
  walk(a, b)
  return same
end

describe("reshape", function()
  it("reshapes contiguous arrays as views", function()
    local x = ml.arange(6)
    local r = x:reshape(2, 3)
    assert.same({{0, 1, 2}, {3, 4, 5}}, r:totable())
    assert.same({3, 1}, r:stride())
    assert.same({{0, 1}, {2, 3}, {4, 5}}, x:reshape({3, 2}):totable())
    assert.same({{0, 1, 2}, {3, 4, 5}}, ml.reshape(x, 2, -1):totable())
    assert.same({6}, r:reshape(-1).shape)
    assert.is_true(shares(r, x))
  end)

  it("copies when the strides do not allow a view", function()
    local x = range(2, 3)
    local r = x:t():reshape(-1)
    assert.same({0, 3, 1, 4, 2, 5}, r:totable())
    assert.is_true(r:is_contiguous())
    assert.is_false(shares(r, x))
  end)

  it("handles 0-d, size-1 and empty shapes", function()
    local s = ml.arange(1):reshape()
    assert.same({}, s.shape)
    assert.equal(0, s:item())
    assert.same({1, 1, 1}, s:reshape(1, 1, 1).shape)
    local e = ml.zeros(0, 3)
    assert.same({3, 0}, e:reshape(3, 0).shape)
    assert.same({0}, e:reshape(-1).shape)
    assert.same({2, 0, 5}, ml.zeros(10, 0):reshape(2, 0, 5).shape)
  end)

  it("reports bad shapes", function()
    assert.has_error(function() ml.arange(6):reshape(4, 2) end,
      "reshape: cannot reshape 6 elements into shape 4x2")
    assert.has_error(function() ml.arange(6):reshape(-1, -1) end,
      "reshape: only one dimension can be -1")
    assert.has_error(function() ml.arange(6):reshape(-2, -3) end,
      "reshape: invalid size -2")
    assert.has_error(function() ml.arange(6):reshape(4, -1) end)
  end)
end)

describe("view", function()
  it("never copies", function()
    local x = range(2, 6)
    local v = x:view(3, 4)
    assert.same({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}, v:totable())
    assert.is_true(shares(v, x))
    assert.has_error(function() x:t():view(-1) end,
      "view: this non-contiguous view cannot be reshaped without a copy; use reshape or contiguous")
  end)

  it("views non-contiguous arrays whose groups stay contiguous", function()
    local x = range(4, 6)
    local n = x:narrow(2, 1, 3) -- 4x3, strides 6, 1
    local v = n:view(2, 2, 3)
    assert.same({12, 6, 1}, v:stride())
    assert.same({{{0, 1, 2}, {6, 7, 8}}, {{12, 13, 14}, {18, 19, 20}}}, v:totable())
    assert.is_true(shares(v, x))
    -- a permutation whose inner group is contiguous: 3x4x2, strides 4, 1, 12
    local p = range(2, 3, 4):permute(2, 3, 1)
    local pv = p:view(12, 2)
    assert.same({1, 12}, pv:stride())
    assert.same(p:reshape(-1):totable(), pv:reshape(-1):totable())
    -- transposed then split and given trailing size-1 dimensions
    local t = range(3, 4):t() -- 4x3, strides 1, 4
    local tv = t:view(2, 2, 3, 1)
    assert.same({2, 1, 4, 1}, tv:stride())
    assert.same(t:totable(), tv:reshape(4, 3):totable())
    assert.same({1, 4, 1, 3, 1}, t:view(1, 4, 1, 3, 1).shape)
  end)

  it("ignores the strides of size-1 dimensions (squeezed first)", function()
    -- 4x1x3 with strides 6, 6, 1 (the middle stride is arbitrary)
    local x = range(4, 1, 6):narrow(3, 2, 3)
    assert.same({6, 6, 1}, x:stride())
    local v = x:view(4, 3)
    assert.same({6, 1}, v:stride())
    assert.same({{1, 2, 3}, {7, 8, 9}, {13, 14, 15}, {19, 20, 21}}, v:totable())
    -- 1x4 taken as a column of a wider array, then viewed as 2x2
    local col = range(4, 3):narrow(2, 2, 1):t() -- 1x4, strides 1, 3
    local c = col:view(2, 2)
    assert.same({6, 3}, c:stride())
    assert.same({{1, 4}, {7, 10}}, c:totable())
    local u = range(2, 1, 3, 1):narrow(3, 1, 2):view(2, 2, 1)
    assert.same({{{0}, {1}}, {{3}, {4}}}, u:totable())
    assert.has_error(function() range(4, 1, 6):narrow(3, 2, 3):view(12) end,
      "view: this non-contiguous view cannot be reshaped without a copy; use reshape or contiguous")
  end)
end)

describe("view over permuted and narrowed arrays", function()
  -- Every ordered factorisation of n into at most maxd sizes, with 1s.
  local function shapes(n, maxd, acc, out)
    acc, out = acc or {}, out or {}
    if n == 1 then out[#out + 1] = {table.unpack(acc)} end
    if #acc == maxd then return out end
    for f = 1, n do
      if n % f == 0 and (f > 1 or acc[#acc] ~= 1) then
        acc[#acc + 1] = f
        shapes(n // f, maxd, acc, out)
        acc[#acc] = nil
      end
    end
    return out
  end

  it("gives the values of a copy whenever it succeeds", function()
    local perms = {{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}}
    local views, copies = 0, 0
    for _, base in ipairs({{2, 3, 4}, {4, 1, 3}, {1, 6, 2}}) do
      for _, p in ipairs(perms) do
        for nd = 0, 3 do
          local x = range(table.unpack(base)):permute(p)
          if nd > 0 and x:size(nd) > 1 then x = x:narrow(nd, 2, x:size(nd) - 1) end
          local flat = x:contiguous():reshape(-1):totable()
          for _, s in ipairs(shapes(x:numel(), 4)) do
            local ok, v = pcall(x.view, x, s)
            if ok then
              views = views + 1
              assert.same(s, v.shape)
              assert.same(flat, v:contiguous():reshape(-1):totable())
            else
              copies = copies + 1
              assert.truthy(v:find("cannot be reshaped without a copy", 1, true))
            end
            assert.same(flat, x:reshape(s):reshape(-1):totable())
          end
        end
      end
    end
    -- NumPy (setting .shape, which never copies) decides the same 2928 cases
    assert.same({1505, 1423}, {views, copies})
  end)
end)

describe("flatten", function()
  it("merges a range of dimensions", function()
    local x = range(2, 3, 4)
    assert.same({24}, x:flatten().shape)
    assert.same({6, 4}, x:flatten(1, 2).shape)
    assert.same({2, 12}, x:flatten(2).shape)
    assert.same({2, 12}, x:flatten(-2, -1).shape)
    assert.same({2, 3, 4}, x:flatten(2, 2).shape)
    assert.same({0, 1, 2, 3, 12, 13, 14, 15}, x:narrow(2, 1, 1):flatten():totable())
    assert.same({1}, ml.arange(1):reshape():flatten().shape)
    assert.same({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, range(3, 4):t():flatten():totable())
    assert.has_error(function() x:flatten(3, 1) end,
      "flatten: start dimension 3 is after end dimension 1")
  end)
end)

describe("transposes", function()
  it("t swaps 2-D arrays and returns lower ones unchanged", function()
    local x = range(2, 3)
    assert.same({{0, 3}, {1, 4}, {2, 5}}, x:t():totable())
    assert.same({1, 3}, x:t():stride())
    assert.is_true(shares(x:t(), x))
    local v = ml.arange(3)
    assert.same({0, 1, 2}, v:t():totable())
    assert.is_true(shares(v:t(), v))
    assert.equal(5, ml.full(5):t():item())
    assert.has_error(function() range(2, 2, 2):t() end,
      "t: expects at most 2 dimensions, got 3")
  end)

  it("transpose swaps any two dimensions", function()
    local x = range(2, 3, 4)
    local y = x:transpose(1, 3)
    assert.same({4, 3, 2}, y.shape)
    assert.same({1, 4, 12}, y:stride())
    assert.equal(x:totable()[2][3][4], y:totable()[4][3][2])
    assert.same(x:transpose(-1, 1):totable(), y:totable())
    assert.has_error(function() x:transpose(1, 4) end,
      "transpose: dimension 4 out of range for 3 dimensions")
    assert.has_error(function() x:transpose(0, 1) end,
      "transpose: dimensions are 1-based (got 0)")
  end)

  it("permute reorders dimensions from varargs or a table", function()
    local x = range(2, 3, 4)
    local y = x:permute(3, 1, 2)
    assert.same({4, 2, 3}, y.shape)
    assert.same({1, 12, 4}, y:stride())
    assert.same(y:totable(), x:permute({3, 1, 2}):totable())
    assert.same(y:totable(), ml.permute(x, -1, 1, 2):totable())
    local t = x:totable()
    assert.equal(t[2][1][4], y:totable()[4][2][1])
    assert.has_error(function() x:permute(1, 2) end, "permute: expected 3 dimensions, got 2")
    assert.has_error(function() x:permute(1, 1, 2) end,
      "permute: the dimensions do not form a permutation of 1..3")
  end)
end)

describe("squeeze and unsqueeze", function()
  it("drop and add size-1 dimensions", function()
    local x = range(1, 3, 1)
    assert.same({3}, x:squeeze().shape)
    assert.same({3, 1}, x:squeeze(1).shape)
    assert.same({1, 3}, x:squeeze(-1).shape)
    assert.same({1, 3, 1}, x:squeeze(2).shape) -- size 3: unchanged
    assert.same({}, ml.zeros(1, 1):squeeze().shape)
    local v = ml.arange(3)
    assert.same({{0, 1, 2}}, v:unsqueeze(1):totable())
    assert.same({{0}, {1}, {2}}, v:unsqueeze(2):totable())
    assert.same({3, 1}, v:unsqueeze(-1).shape)
    assert.same({1}, ml.full(4):unsqueeze(1).shape)
    assert.is_true(shares(v:unsqueeze(1), v))
    assert.has_error(function() v:unsqueeze(3) end,
      "unsqueeze: dimension 3 out of range for 2 dimensions")
  end)
end)

describe("expand", function()
  it("broadcasts size-1 dimensions without copying", function()
    local x = ml.array({{1}, {2}})
    local e = x:expand(2, 3)
    assert.same({{1, 1, 1}, {2, 2, 2}}, e:totable())
    assert.same({1, 0}, e:stride())
    assert.same({{1, 1, 1}, {2, 2, 2}}, x:expand(-1, 3):totable())
    assert.same({4, 2, 3}, x:expand({4, 2, 3}).shape)
    assert.same({0, 1, 0}, x:expand(4, 2, 3):stride())
    assert.same({0, 2, 1}, x:expand(0, 2, 1).shape)
    assert.has_error(function() x:expand(3, 3) end, "expand: cannot expand shape 2x1 to 3x3")
    assert.has_error(function() x:expand(-1, 2, 3) end,
      "expand: -1 is not allowed for the new dimension 1")
    assert.has_error(function() x:expand(3) end, "expand: cannot expand shape 2x1 to 3")
  end)
end)

describe("narrow and select", function()
  it("narrow takes a range of one dimension", function()
    local x = range(3, 4)
    assert.same({{1, 2}, {5, 6}, {9, 10}}, x:narrow(2, 2, 2):totable())
    assert.same({{8, 9, 10, 11}}, x:narrow(1, -1, 1):totable())
    assert.same({3, 0}, x:narrow(2, 5, 0).shape)
    assert.same({4, 1}, x:narrow(2, 2, 2):stride())
    assert.is_true(shares(x:narrow(1, 2, 1), x))
    assert.has_error(function() x:narrow(2, 3, 3) end,
      "narrow: range 3..5 out of bounds for dimension 2 of size 4")
    assert.has_error(function() x:narrow(2, 6, 0) end,
      "narrow: index 6 out of bounds for dimension 2 of size 4")
  end)

  it("select takes one index and drops the dimension", function()
    local x = range(3, 4)
    assert.same({4, 5, 6, 7}, x:select(1, 2):totable())
    assert.same({3, 7, 11}, x:select(2, -1):totable())
    assert.same({4}, x:select(2, 1):stride())
    assert.equal(6, x:select(1, 2):select(1, 3):item())
    assert.has_error(function() x:select(1, 4) end,
      "select: index 4 out of bounds for dimension 1 of size 3")
    assert.has_error(function() x:select(2, -5) end,
      "select: index -5 out of bounds for dimension 2 of size 4")
    assert.has_error(function() x:select(1, 0) end,
      "select: index 0 out of bounds for dimension 1 of size 3")
  end)
end)

describe("cat", function()
  it("joins along a dimension", function()
    local a, b = range(2, 2), ml.array({{7}, {8}})
    assert.same({{0, 1, 7}, {2, 3, 8}}, ml.cat({a, b}, 2):totable())
    assert.same({{0, 1, 7}, {2, 3, 8}}, ml.cat({a, b}, -1):totable())
    assert.same({{0, 1}, {2, 3}, {0, 1}}, ml.cat({a, a:narrow(1, 1, 1)}):totable())
    assert.same({0, 1, 2, 5, 6}, ml.cat({ml.arange(3), ml.zeros(0, {dtype = "int64"}), ml.arange(5, 7)}):totable())
    local one = ml.cat({a})
    assert.same(a:totable(), one:totable())
    assert.is_false(shares(one, a))
  end)

  it("copies from non-contiguous inputs and promotes dtypes", function()
    local x = range(3, 4)
    local r = ml.cat({x:t(), ml.array({{0.5, 0.5, 0.5}})})
    assert.equal("float64", r.dtype)
    assert.same({{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}, {0.5, 0.5, 0.5}}, r:totable())
    local u = ml.cat({ml.array({1, 2}, {dtype = "uint8"}), ml.array({300}, {dtype = "int32"})})
    assert.equal("int32", u.dtype)
    assert.same({1, 2, 300}, u:totable())
    assert.same({4, 0}, ml.cat({ml.zeros(2, 0), ml.zeros(2, 0)}).shape)
  end)

  it("names the offending array", function()
    assert.has_error(function() ml.cat({ml.zeros(2, 3), ml.zeros(2, 4)}) end,
      "cat: array 2 has shape 2x4, expected 2x3 except in dimension 1")
    assert.has_error(function() ml.cat({ml.zeros(2, 3), ml.zeros(3, 3)}, 2) end,
      "cat: array 2 has shape 3x3, expected 2x3 except in dimension 2")
    assert.has_error(function() ml.cat({ml.zeros(2, 3), ml.zeros(3)}) end,
      "cat: array 2 has 1 dimension, expected 2")
    assert.has_error(function() ml.cat({}) end, "cat: expects a non-empty list of arrays")
    assert.has_error(function() ml.cat({ml.full(1), ml.full(2)}) end,
      "cat: 0-d arrays cannot be concatenated; use stack")
    assert.has_error(function() ml.cat({ml.zeros(2), 3}) end,
      "cat: element 2 of the list is not an array")
    assert.has_error(function() ml.cat({ml.zeros(2)}, 2) end,
      "cat: dimension 2 out of range for 1 dimension")
  end)
end)

describe("stack", function()
  it("joins along a new dimension", function()
    local a, b = ml.arange(3), ml.arange(3, 6)
    assert.same({{0, 1, 2}, {3, 4, 5}}, ml.stack({a, b}):totable())
    assert.same({{0, 3}, {1, 4}, {2, 5}}, ml.stack({a, b}, 2):totable())
    assert.same({{0, 3}, {1, 4}, {2, 5}}, ml.stack({a, b}, -1):totable())
    assert.same({1, 2, 3}, ml.stack({ml.full(1), ml.full(2), ml.full(3)}):totable())
    local m = range(2, 2)
    assert.same({{{0, 0}, {1, 2}}, {{2, 1}, {3, 3}}},
      ml.stack({m, m:t()}, 3):totable())
    local f = ml.stack({a, ml.array({0.5, 0.5, 0.5})})
    assert.equal("float64", f.dtype)
    assert.same({2, 0}, ml.stack({ml.zeros(0), ml.zeros(0)}).shape)
  end)

  it("needs equal shapes", function()
    assert.has_error(function() ml.stack({ml.zeros(2, 3), ml.zeros(2, 4)}) end,
      "stack: array 2 has shape 2x4, expected 2x3")
    assert.has_error(function() ml.stack({ml.zeros(2), ml.zeros(2)}, 4) end,
      "stack: dimension 4 out of range for 2 dimensions")
  end)
end)

describe("split", function()
  it("splits into pieces of a size", function()
    local x = ml.arange(7)
    local parts = x:split(3)
    assert.equal(3, #parts)
    assert.same({0, 1, 2}, parts[1]:totable())
    assert.same({3, 4, 5}, parts[2]:totable())
    assert.same({6}, parts[3]:totable())
    assert.is_true(shares(parts[2], x))
    assert.equal(1, #ml.arange(3):split(5))
    assert.equal(1, #ml.zeros(0):split(2))
    assert.same({0}, ml.zeros(0):split(2)[1].shape)
  end)

  it("splits into given sizes along a dimension", function()
    local x = range(2, 6)
    local p = x:split({1, 0, 5}, 2)
    assert.equal(3, #p)
    assert.same({{0}, {6}}, p[1]:totable())
    assert.same({2, 0}, p[2].shape)
    assert.same({{1, 2, 3, 4, 5}, {7, 8, 9, 10, 11}}, p[3]:totable())
    local q = ml.split(x, 1, 1)
    assert.same({{0, 1, 2, 3, 4, 5}}, q[1]:totable())
    assert.same({{6, 7, 8, 9, 10, 11}}, q[2]:totable())
    assert.same({{4, 5}, {10, 11}}, x:split(2, -1)[3]:totable())
  end)

  it("checks the sizes", function()
    local x = range(2, 6)
    assert.has_error(function() x:split({1, 2}, 2) end,
      "split: sizes add up to 3 but dimension 2 has size 6")
    assert.has_error(function() x:split({7, -1}, 2) end, "split: negative size -1")
    assert.has_error(function() x:split(0) end, "split: split size must be positive, got 0")
    assert.has_error(function() ml.full(1):split(1) end, "split: cannot split a 0-d array")
  end)
end)
