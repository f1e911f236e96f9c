-- Data movement on non-contiguous inputs: indexing, conversions and
-- copies, shape functions and files, on permuted and transposed, stepped,
-- narrowed, selected and expanded (zero-stride) views, and 0-size and
-- size-1 ones, each compared with the same operation on a contiguous clone
-- of the view; writes through views change their parent there and nowhere
-- else. The views and the comparisons are in tests/helpers/views.lua.
local ml = require "moonlab"
require "moonlab.test"
local V = require "tests.helpers.views"

local DTYPES, SHAPES, BIG = V.DTYPES, V.SHAPES, V.BIG
local gen, views, permuted = V.gen, V.views, V.permuted
local shapes_with_big, each_view = V.shapes_with_big, V.each_view
local near, same_on_clone = V.near, V.same_on_clone

describe("views: indexing", function()
  before_each(function() ml.seed(15) end)

  it("index_select along each dimension with view inputs and view indices", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        for d = 1, v.ndim do
          local n = v.shape[d]
          if n > 0 then
            local idx = ml.randint(1, n + 1, 2 * 5 + 1)[{{1, -1, 2}}] -- stepped index
            same_on_clone(label .. " index_select " .. d, v,
              function(x) return x:index_select(d, idx) end)
            same_on_clone(label .. " index_select clone " .. d, v,
              function(x) return x:index_select(d, idx:clone()) end)
          end
          same_on_clone(label .. " index_select empty " .. d, v,
            function(x) return x:index_select(d, {}) end)
        end
      end)
    end
  end)

  it("gather and scatter along each dimension with view indices", function()
    for _, t in ipairs(DTYPES) do
      each_view(SHAPES, t, function(label, v)
        for d = 1, v.ndim do
          local n = v.shape[d]
          if n > 0 then
            local idx = permuted(v.shape, function(s) return ml.randint(1, n + 1, s) end)
            same_on_clone(label .. " gather " .. d, v,
              function(x) return x:gather(d, idx) end)
            near(v:gather(d, idx), v:clone():gather(d, idx:clone()), 0)
            -- scatter a permutation along d so that no index repeats
            local perm = v:argsort(d)
            local src = gen(v.shape, t)
            same_on_clone(label .. " scatter " .. d, v,
              function(x) return x:scatter(d, perm, src) end)
            local s = v:scatter(d, perm, src)
            near(s:gather(d, perm), src, 0)
            -- scatter from a larger, non-contiguous src (its leading block)
            local big = {}
            for k = 1, v.ndim do big[k] = v.shape[k] + 1 end
            local bsrc = permuted(big, function(s) return gen(s, t) end)
            local want = v:clone():scatter(d, perm, bsrc:clone())
            near(v:scatter(d, perm, bsrc), want, 0)
          end
        end
      end)
    end
  end)

  it("masked_select and masked_fill with view masks", function()
    for _, t in ipairs(DTYPES) do
      each_view(shapes_with_big(), t, function(label, v)
        local ms = views(v.shape, "float64")
        for _, m in ipairs(ms) do
          local mask = ml.gt(m[2], 0)
          local mask_view = ml.gt(ml.randn(v.shape), 0)
          same_on_clone(label .. " masked_select", v,
            function(x) return x:masked_select(mask) end)
          near(v:masked_select(mask), v:clone():masked_select(mask:clone()), 0)
          same_on_clone(label .. " masked_fill", v,
            function(x) return x:masked_fill(mask, 7) end)
          near(v:masked_fill(mask_view, 9), v:clone():masked_fill(mask_view, 9), 0)
        end
        -- a broadcast mask row (a zero-stride view)
        if v.ndim == 2 and v.shape[2] > 0 then
          local row = ml.gt(ml.randn(1, v.shape[2]), 0)
          same_on_clone(label .. " masked row", v, function(x) return x:masked_fill(row, 1) end)
          same_on_clone(label .. " masked row select", v,
            function(x) return x:masked_select(row:expand(v.shape)) end)
        end
      end)
    end
  end)

  it("subscripts of views read the same elements as of clones", function()
    ml.seed(2)
    local x = ml.randn(9, 13)
    local v = x:t()[{{2, -2, 3}, {1, 7}}]      -- 4x7 over a transposed view
    local c = v:clone()
    assert.same(c:totable(), v:totable())
    for i = 1, 4 do
      for j = 1, 7 do assert.equal(c[{i, j}], v[{i, j}]) end
    end
    assert.equal(x[{6, 8}], v[{3, 6}])
    near(v[2], c[2], 0)
    near(v[ml.gt(v, 0)], c[ml.gt(c, 0)], 0)
    near(v[ml.array({4, 1})], c[ml.array({4, 1})], 0)
  end)
end)

describe("views: conversions and copies", function()
  before_each(function() ml.seed(16) end)

  it("astype of views to every dtype", function()
    for _, from in ipairs(DTYPES) do
      each_view(shapes_with_big(), from, function(label, v)
        for _, to in ipairs(DTYPES) do
          same_on_clone(label .. " astype " .. to, v, function(x) return x:astype(to) end)
        end
        same_on_clone(label .. " contiguous", v, function(x) return x:contiguous() end)
      end)
    end
  end)

  it("totable and tostring of views equal those of clones", function()
    for _, t in ipairs(DTYPES) do
      each_view(SHAPES, t, function(label, v)
        assert.same(v:clone():totable(), v:totable(), label)
        assert.equal(tostring(v:clone()), tostring(v), label)
      end)
    end
    local x = ml.array({{1, 2, 3}, {4, 5, 6}})
    assert.same({{1, 4}, {2, 5}, {3, 6}}, x:t():totable())
    assert.equal(tostring(ml.array({{1, 4}, {2, 5}, {3, 6}})), tostring(x:t()))
    assert.truthy(tostring(x:t()):find("[int64 3x2 " .. ml.device() .. "]", 1, true))
    local big = ml.randn(300, 200)
    assert.equal(tostring(big:t():clone()), tostring(big:t()))
    assert.same({{2}, {2}}, ml.array({{2, 3}}):narrow(2, 1, 1):expand(2, 1):totable())
  end)

  -- the flat indices (1-based, C order) of the parent that view(parent)
  -- covers, found by taking the same view of an arange
  local function covered(shape, take)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local pos = take(ml.arange(1, n + 1):reshape(shape))
    local set = {}
    for _, p in ipairs(pos:reshape(-1):totable()) do set[p] = true end
    return set, n
  end

  local TAKES = {
    {"transposed", {5, 7}, function(x) return x:t() end},
    {"stepped", {9, 13}, function(x) return x[{{2, -1, 3}, {1, -1, 4}}] end},
    {"narrowed", {9, 13}, function(x) return x:narrow(1, 3, 4):narrow(2, 2, 9) end},
    {"selected column", {9, 13}, function(x) return x:select(2, 5) end},
    {"selected row", {9, 13}, function(x) return x[4] end},
    {"permuted", {3, 4, 5}, function(x) return x:permute(3, 1, 2)[{{2, 4}}] end},
    {"empty", {4, 5}, function(x) return x:narrow(2, 3, 0) end},
    {"single", {4, 5}, function(x) return x[{{2}, {5}}] end},
  }

  it("fill and copy through a view change the parent there and nowhere else", function()
    for _, tk in ipairs(TAKES) do
      local name, shape, take = tk[1], tk[2], tk[3]
      local set, n = covered(shape, take)
      for _, t in ipairs(DTYPES) do
        local parent = gen(shape, t)
        local before = parent:reshape(-1):totable()
        take(parent):fill(3)
        local after = parent:reshape(-1):totable()
        for i = 1, n do
          assert.equal(set[i] and 3 or before[i], after[i], name .. " fill " .. t)
        end
        -- copy an array (of another dtype) into the view
        local parent2 = gen(shape, t)
        before = parent2:reshape(-1):totable()
        local v = take(parent2)
        local src = ml.randint(1, 100, v.shape)
        v:copy(src)
        near(take(parent2), src, 0)
        after = parent2:reshape(-1):totable()
        for i = 1, n do
          if not set[i] then assert.equal(before[i], after[i], name .. " copy " .. t) end
        end
        -- subscript assignment through the same view
        local parent3 = gen(shape, t)
        before = parent3:reshape(-1):totable()
        local v3 = take(parent3)
        if v3.ndim > 0 then
          local vv = v3:clone():fill(5)
          v3:copy(vv)
          after = parent3:reshape(-1):totable()
          for i = 1, n do assert.equal(set[i] and 5 or before[i], after[i], name) end
        end
      end
    end
  end)

  it("subscript assignment through a transposed view", function()
    local writes = {
      function(x) x[ml.gt(x, 0)] = 7 end,
      function(x) local m = ml.gt(x, 0); x[m] = (x * 2):masked_select(m) end,
      function(x)
        local m = ml.lt(x, 0)
        x[m] = ml.arange(m:astype("int64"):sum()):astype("float64")
      end,
      function(x) x[ml.array({2, 4})] = -1 end,
      function(x) x[ml.array({4, 2})] = ml.array({{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}}) end,
      function(x) x[ml.array({1, 5})] = ml.arange(6) end,
      function(x) x[{{1, 2}, {2, 6, 2}}] = {{1, 2, 3}, {4, 5, 6}} end,
      function(x) x[{3, 4}] = 99 end,
      function(x) x[2] = 5 end,
      function(x) x[{{}, 3}] = ml.arange(5) end,
    }
    for i, write in ipairs(writes) do
      local parent = ml.randn(6, 5)
      local want = parent:t():clone()
      write(parent:t())
      write(want)
      near(parent:t(), want)
      near(parent, want:t())
    end
  end)

  it("copies a broadcast view into a view", function()
    local x = ml.zeros(4, 6)
    local v = x[{{}, {1, -1, 2}}]            -- 4x3, stride 2
    v:copy(ml.array({1, 2, 3}):unsqueeze(1):expand(4, 3))
    assert.same({{1, 0, 2, 0, 3, 0}, {1, 0, 2, 0, 3, 0}, {1, 0, 2, 0, 3, 0},
                 {1, 0, 2, 0, 3, 0}}, x:totable())
    x:t()[2]:copy(ml.array({9, 8, 7, 6}))    -- column 2 through a transposed view
    assert.same({9, 8, 7, 6}, x:select(2, 2):totable())
    x[{{}, 4}] = ml.array({5}):expand(4)
    assert.same({5, 5, 5, 5}, x:select(2, 4):totable())
  end)

  it("copies between overlapping views of one storage as if through a copy", function()
    local x = ml.arange(10)
    x:narrow(1, 2, 9):copy(x:narrow(1, 1, 9))
    assert.same({0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, x:totable())
    local y = ml.arange(10)
    y:narrow(1, 1, 9):copy(y:narrow(1, 2, 9))
    assert.same({1, 2, 3, 4, 5, 6, 7, 8, 9, 9}, y:totable())
    local m = ml.arange(9):reshape(3, 3)
    m:copy(m:t())
    assert.same({{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}, m:totable())
    local r = ml.arange(6):reshape(2, 3)
    r[2] = r[1]
    r[{{1}}] = r[{{2}}]:t():t()
    assert.same({{0, 1, 2}, {0, 1, 2}}, r:totable())
  end)

  it("fill through an expanded view lands in the parent's elements", function()
    local base = ml.zeros(1, 3)
    local e = base:expand(4, 3)
    e:fill(2)
    assert.same({{2, 2, 2}}, base:totable())
  end)
end)

describe("views: shapes", function()
  before_each(function() ml.seed(17) end)

  it("reshape of a non-contiguous view copies; view() refuses", function()
    each_view({{7, 31}, {31, 1, 7}, BIG}, "float64", function(label, v)
      local n = v:numel()
      local r = v:reshape(-1)
      assert.same({n}, r.shape)
      near(r, v:clone():reshape(-1), 0)
      local r2 = v:reshape(v.shape[#v.shape], -1)
      near(r2, v:clone():reshape(v.shape[#v.shape], -1), 0)
      near(v:flatten(), v:clone():flatten(), 0)
      if not v:is_contiguous() and not label:find("^expanded") then
        local ok, err = pcall(function() return v:view(-1) end)
        if not ok then
          assert.truthy(err:find("view: this non-contiguous view cannot be reshaped without a copy", 1, true))
        end
      end
    end)
    local t = ml.randn(4, 5):t()
    assert.has_error(function() t:view(20) end,
      "view: this non-contiguous view cannot be reshaped without a copy; use reshape or contiguous")
    -- a reshape that a view can express stays a view of the storage
    local sv = t:view(5, 1, 4)
    sv[{1, 1, 1}] = 42
    assert.equal(42, t[{1, 1}])
    -- reshape of a transposed view is a copy: writes do not reach the view
    local rc = t:reshape(20)
    rc[1] = -1
    assert.equal(42, t[{1, 1}])
  end)

  it("cat and stack of views equal cat and stack of clones", function()
    for _, t in ipairs(DTYPES) do
      for _, shape in ipairs({{7, 31}, {31, 1, 7}, {0, 7}, {1}}) do
        local vs = views(shape, t)
        local list, clones = {}, {}
        for i, nv in ipairs(vs) do
          list[i] = nv[2]
          clones[i] = nv[2]:clone()
        end
        for d = 1, #shape do
          near(ml.cat(list, d), ml.cat(clones, d), 0)
        end
        for d = 1, #shape + 1 do
          near(ml.stack(list, d), ml.stack(clones, d), 0)
        end
      end
    end
    -- mixed dtypes promote
    local a = ml.randint(0, 9, 3, 4, {dtype = "int32"}):t()
    local b = ml.randn(3, 2):t()
    local c = ml.cat({a, b}, 1)
    assert.equal("float64", c.dtype)
    near(c, ml.cat({a:clone():astype("float64"), b:clone()}, 1), 0)
  end)

  it("split, squeeze, unsqueeze, narrow and select of views are views", function()
    local x = ml.randn(6, 8)
    local v = x:t()                               -- 8x6
    local parts = v:split(3, 2)
    assert.equal(2, #parts)
    near(parts[2], v:clone():narrow(2, 4, 3), 0)
    parts[2]:fill(0)
    assert.equal(0, x[{5, 1}])
    near(v:unsqueeze(2):squeeze(2), v, 0)
    assert.same({8, 1, 6}, v:unsqueeze(2).shape)
  end)
end)

describe("views: files", function()
  before_each(function() ml.seed(18) end)

  it("save_npy of a view then load_npy gives the view's values", function()
    local path = os.tmpname()
    for _, t in ipairs(DTYPES) do
      each_view({{7, 31}, {257}, {31, 1, 7}, {0, 7}, {1}}, t, function(label, v)
        ml.save_npy(path, v)
        local r = ml.load_npy(path)
        assert.equal(t, r.dtype, label)
        assert.same(v.shape, r.shape, label)
        near(r, v:clone(), 0)
      end)
    end
    os.remove(path)
  end)

  it("save_csv of a transposed view then load_csv", function()
    local path = os.tmpname()
    local v = ml.randint(-9, 9, 3, 5):t()
    ml.save_csv(path, v)
    near(ml.load_csv(path), v:astype("float64"), 0)
    os.remove(path)
  end)
end)
