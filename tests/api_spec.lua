-- The conventions of DESIGN.md across every area: methods are module
-- functions, errors name the operation, Lua numbers are weak scalars on
-- either side of an operator, indices are 1-based everywhere, dtypes promote
-- alike in every area, NaN and Inf pass through reductions and sorts, and
-- empty arrays pass through everything (the shell's survival of bad input:
-- shell_errors_spec.lua).
local ml = require "moonlab"
require "moonlab.test"

local nan, inf = 0 / 0, math.huge
local DTYPES = {"float64", "float32", "int32", "int64", "uint8"}

local function is_float(t) return t == "float64" or t == "float32" end

-- The message of the error fn raises, without the position prefix.
local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

-- Deep equality of results: arrays by dtype, shape and values (NaN equal
-- to NaN), tables recursively, other values by ==.
local function same_result(a, b, where)
  if ml.is_array(b) then
    assert.is_true(ml.is_array(a), where)
    assert.equal(b.dtype, a.dtype, where)
    assert.array_near(a, b, 0)
  elseif type(b) == "table" then
    assert.equal("table", type(a), where)
    assert.equal(#b, #a, where)
    for k, v in pairs(b) do same_result(a[k], v, where) end
  elseif b ~= b then
    assert.is_true(a ~= a, where)
  else
    assert.equal(b, a, where)
  end
end

local function mat(dtype)
  ml.seed(1)
  if dtype and not is_float(dtype) then return ml.randint(0, 9, 3, 4, {dtype = dtype}) end
  return ml.randn(3, 4, {dtype = dtype})
end
local function vec()
  ml.seed(2)
  return ml.randn(4)
end
local function one() return ml.array({{2.5}}) end
local function counts() return ml.array({0, 2, 2, 1}) end
local function sorted() return ml.array({1.0, 2.0, 2.0, 3.0}) end

-- Receiver and argument lists for every method.
local CASES = {
  abs = {mat, {{}}}, neg = {mat, {{}}}, sqrt = {mat, {{}}}, exp = {mat, {{}}},
  log = {mat, {{}}}, log1p = {mat, {{}}}, expm1 = {mat, {{}}}, sin = {mat, {{}}},
  cos = {mat, {{}}}, tanh = {mat, {{}}}, sigmoid = {mat, {{}}}, floor = {mat, {{}}},
  erf = {mat, {{}}}, relu = {mat, {{}}}, sign = {mat, {{}}},
  clip = {mat, {{-0.5, 0.5}, table.pack(nil, 0)}}, logical_and = {mat, {{0}, {{1, 0, 2, 0}}}},
  logical_or = {mat, {{0}}}, logical_xor = {mat, {{1}}}, isclose = {mat, {{0.5}, {0.5, {atol = 1}}}},
  allclose = {mat, {{0.5, {atol = 1}}}}, array_equal = {mat, {{0}}},
  ceil = {mat, {{}}}, round = {mat, {{}}}, logical_not = {mat, {{}}},
  isnan = {mat, {{}}}, isinf = {mat, {{}}}, isfinite = {mat, {{}}},
  clamp = {mat, {{-0.5, 0.5}, table.pack(nil, 0), {0}}},
  sum = {mat, {{}, {1}, {-1, {keepdim = true}}, {{keepdim = true}}}},
  mean = {mat, {{}, {2}}}, prod = {mat, {{}, {1}}},
  min = {mat, {{}, {1}, {2, {keepdim = true}}}}, max = {mat, {{}, {1}, {2}}},
  argmin = {mat, {{}, {1}}}, argmax = {mat, {{}, {2, {keepdim = true}}}},
  var = {mat, {{}, {1, {ddof = 1}}}}, std = {mat, {{}, {2}}},
  norm = {mat, {{}, {1, {p = 1}}, {{p = inf}}}}, logsumexp = {mat, {{}, {2}}},
  any = {mat, {{}, {1}}}, all = {mat, {{}, {2}}}, cumsum = {mat, {{}, {1}, {2}}},
  softmax = {mat, {{}, {1}}}, log_softmax = {mat, {{}, {2}}},
  astype = {mat, {{"int32"}, {"uint8"}}}, totable = {mat, {{}}}, item = {one, {{}}},
  to = {mat, {{"cpu"}, {"float32"}}}, cpu = {mat, {{}}},
  clone = {mat, {{}}}, contiguous = {mat, {{}}}, fill = {mat, {{3}}},
  copy = {mat, {{{1, 2, 3, 4}}}},
  matmul = {mat, {{{{1}, {2}, {3}, {4}}}}}, mm = {mat, {{{{1}, {2}, {3}, {4}}}}},
  mv = {mat, {{{1, 2, 3, 4}}}}, dot = {vec, {{{1, 2, 3, 4}}}}, outer = {vec, {{{1, 2}}}},
  reshape = {mat, {{2, 6}, {{-1}}}}, view = {mat, {{4, 3}}}, t = {mat, {{}}},
  transpose = {mat, {{1, 2}}}, permute = {mat, {{2, 1}, {{2, 1}}}},
  squeeze = {one, {{}, {1}}}, unsqueeze = {mat, {{1}, {3}}}, expand = {one, {{2, 3}}},
  narrow = {mat, {{2, 2, 2}}}, select = {mat, {{1, 2}, {2, -1}}},
  flatten = {mat, {{}}}, split = {mat, {{2, 2}, {{1, 2}}}},
  knn = {mat, {{{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 0}}, 2},
               {{{0, 0, 0, 0}, {1, 1, 1, 1}}, 1, {metric = "cosine"}}}},
  index_select = {mat, {{1, {3, 1}}, {2, ml.array({2})}}},
  index_add = {mat, {{1, {3, 1}, ml.ones(2, 4)}, {2, {1, 1}, ml.ones(3, 2)}}},
  gather = {mat, {{2, {{1}, {2}, {4}}}}},
  scatter = {mat, {{2, {{1}, {2}, {4}}, 9}}},
  masked_select = {mat, {{{1, 0, 0, 1}}}}, masked_fill = {mat, {{{1, 0, 0, 1}, -1}}},
  nonzero = {mat, {{}}}, argwhere = {mat, {{}}},
  sort = {mat, {{}, {1}, {{descending = true}}}}, argsort = {mat, {{}, {1}}},
  topk = {mat, {{2}, {1, 1, {largest = false}}}},
  add = {mat, {{2}, {{1, 2, 3, 4}}}}, sub = {mat, {{2}}}, mul = {mat, {{2}}},
  div = {mat, {{2}}}, pow = {mat, {{2}}}, idiv = {mat, {{2}}}, mod = {mat, {{2}}},
  minimum = {mat, {{0}}}, maximum = {mat, {{0}}}, eq = {mat, {{0}}}, ne = {mat, {{0}}},
  lt = {mat, {{0}}}, le = {mat, {{0}}}, gt = {mat, {{0}}}, ge = {mat, {{0}}},
  size = {mat, {{}, {2}}}, stride = {mat, {{}, {1}}}, numel = {mat, {{}}},
  dim = {mat, {{}}}, is_contiguous = {mat, {{}}},
  tril = {mat, {{}, {{k = 1}}}}, triu = {mat, {{}, {{k = -1}}}}, diag = {mat, {{}, {{k = 1}}}},
  diagonal = {mat, {{}, {{offset = -1}}}}, trace = {mat, {{}, {{offset = 2}}}},
  kron = {mat, {{{1, 2}}}}, diff = {mat, {{}, {{n = 2, dim = 1}}}}, tile = {mat, {{2}, {{2, 1}}}},
  repeat_interleave = {mat, {{2}, {{1, 0, 2}, {dim = 1}}}},
  flip = {mat, {{}, {{dims = 2}}}}, flipud = {mat, {{}}}, fliplr = {mat, {{}}},
  roll = {mat, {{1}, {{1, -1}, {dims = {1, 2}}}}},
  pad = {mat, {{1}, {{{1, 0}, {0, 2}}, {mode = "reflect"}}}},
  cumprod = {mat, {{}, {2}}}, unique = {mat, {{}, {{return_counts = true}}}},
  bincount = {counts, {{}, {{minlength = 5}}}}, histogram = {mat, {{}, {{bins = 3}}}},
  median = {mat, {{}, {{dim = 1}}}}, quantile = {mat, {{0.5}, {{0, 1}, {dim = 2}}}},
  percentile = {mat, {{50}}}, nansum = {mat, {{}, {1}}}, nanmean = {mat, {{}, {2}}},
  nanmax = {mat, {{}, {1}}}, nanmin = {mat, {{}, {{keepdim = true}}}},
  searchsorted = {sorted, {{2}, {{0, 2.5}, {side = "right"}}}},
}

describe("api: methods and module functions", function()
  -- ml.cuda is the CUDA namespace (ml.cuda.available()), as torch.cuda is;
  -- x:cuda() moves an array, and x:to("cuda") is its module form.
  local NAMESPACES = {cuda = true}

  it("every method is also a module function", function()
    local missing = {}
    for name in pairs(ml.methods) do
      if type(ml[name]) ~= "function" and not NAMESPACES[name] then
        missing[#missing + 1] = name
      end
    end
    table.sort(missing)
    assert.same({}, missing)
  end)

  it("x:op(...) equals ml.op(x, ...) for every method", function()
    local untested = {}
    for name in pairs(ml.methods) do
      if not (CASES[name] or NAMESPACES[name] or name == "free") then
        untested[#untested + 1] = name
      end
    end
    table.sort(untested)
    assert.same({}, untested)
    for name, case in pairs(CASES) do
      local make, arglists = case[1], case[2]
      for _, args in ipairs(arglists) do
        local n = args.n or #args
        local x1, x2 = make(), make()
        local r1 = table.pack(pcall(function() return x1[name](x1, table.unpack(args, 1, n)) end))
        local r2 = table.pack(pcall(function() return ml[name](x2, table.unpack(args, 1, n)) end))
        local where = name .. " with " .. n .. " arguments"
        assert.equal(r2[1], r1[1], where)
        if not r1[1] then
          assert.equal((tostring(r2[2]):gsub("^[^:]*:%d+: ", "")),
                       (tostring(r1[2]):gsub("^[^:]*:%d+: ", "")), where)
        end
        assert.equal(r2.n, r1.n, where)
        for i = 2, r1.n do same_result(r1[i], r2[i], where) end
        -- methods that write into x (fill, copy) wrote the same
        same_result(x1, x2, where)
      end
    end
    assert.equal("function", type(ml.cuda.available))
    assert.equal("function", type(ml.cuda.device_count))
  end)

  it("takes an options table whose fields are all nil as no options", function()
    local opts = {dtype = nil, device = nil}
    assert.same({3, 4}, ml.randn(3, 4, opts).shape)
    assert.same({3, 4}, ml.zeros(3, 4, {}).shape)
    assert.same({2}, ml.full(2, 7, {}).shape)
    assert.same({5}, ml.randint(0, 9, 5, {}).shape)
    assert.same({}, ml.zeros({}).shape)       -- alone, {} is the empty shape
    assert.same({}, ml.randint(0, 9, {}).shape)
    local x = ml.array({{3, 1}, {2, 4}})
    assert.equal(10, x:sum({}))
    assert.array_near(x:sort({}), {{1, 3}, {2, 4}}, 0)
    assert.array_near(x:topk(1, {}), {{3}, {4}}, 0)
    assert.array_near(ml.arange(3, {}), {0, 1, 2}, 0)
  end)

  it("free works as a method and as a module function", function()
    local x, y = ml.zeros(2), ml.zeros(2)
    x:free()
    ml.free(y)
    assert.equal("[freed array]", tostring(x))
    assert.equal("[freed array]", tostring(y))
    assert.truthy(errmsg(function() return x + 1 end):find("array was freed", 1, true))
  end)

  it("where is a module function only (a condition is not its receiver)", function()
    assert.is_nil(ml.methods.where)
    assert.array_near(ml.where(ml.array({1, 0}), 1, 2), {1, 2}, 0)
  end)
end)

describe("api: error messages name the operation", function()
  local x = ml.zeros(3, 4)
  local CASES_ERR = {
    {"construct", function() return ml.zeros(-1) end, "zeros: negative dimension -1 in shape"},
    {"construct", function() return ml.full(2, 300, {dtype = "uint8"}) end,
     "full: 300 is out of range for uint8"},
    {"elementwise", function() return x + ml.zeros(4, 3) end,
     "add: shapes 3x4 and 4x3 do not broadcast"},
    {"elementwise", function() return ml.zeros(2, {dtype = "int32"}) + (1 << 40) end,
     "add: 1099511627776 is out of range for int32"},
    {"elementwise", function() return ml.where(ml.ones(2), ml.ones(3), ml.ones(4)) end,
     "where: shapes 2, 3 and 4 do not broadcast"},
    {"reduce", function() return x:sum(3) end, "sum: dimension 3 out of range for 2 dimensions"},
    {"reduce", function() return ml.zeros(0, 3):max() end,
     "max: empty array of shape 0x3 has no maximum"},
    {"reduce", function() return x:mean(0) end, "mean: dimensions are 1-based (got 0)"},
    {"matmul", function() return x:mm(x) end, "mm: shapes 3x4 and 3x4 are not aligned (4 != 3)"},
    {"matmul", function() return x:dot(x) end, "dot: expects two 1-D arrays, got shapes 3x4 and 3x4"},
    {"shape", function() return x:reshape(5) end, "reshape: cannot reshape 12 elements into shape 5"},
    {"shape", function() return ml.cat({x, ml.zeros(4, 3)}) end,
     "cat: array 2 has shape 4x3, expected 3x4 except in dimension 1"},
    {"shape", function() return x:expand(5, 4) end, "expand: cannot expand shape 3x4 to 5x4"},
    {"shape", function() return ml.zeros(1, 1):expand(2 ^ 40, 2 ^ 40) end,
     "expand: shape 1099511627776x1099511627776 is too large"},
    {"index", function() return x:index_select(1, {4}) end,
     "index_select: index 4 is out of bounds for dimension 1 with size 3"},
    {"index", function() return x:gather(1, ml.ones(3, 4)) end,
     "gather: indices must be integers, got float64"},
    {"index", function() return x:masked_fill(ml.ones(3, 4), 1) end,
     "masked_fill: mask must be uint8, got float64"},
    {"sort", function() return x:topk(5) end, "topk: k = 5 exceeds the 4 elements of dimension 2"},
    {"sort", function() return x:sort(3) end, "sort: dimension 3 out of range for 2 dimensions"},
    {"subscript", function() return x[{1, 1, 1}] end, "index: 3 indices for an array of 2 dimensions"},
    {"random", function() return ml.randint(5, 1, 3) end,
     "randint: high (1) must be greater than low (5)"},
    {"random", function() return ml.rand(3, {dtype = "int32"}) end,
     "rand: dtype int32 is not a float dtype"},
    {"io", function() return ml.load_npy("/nonexistent/x.npy") end,
     "load_npy: cannot open '/nonexistent/x.npy': No such file or directory"},
    {"io", function() return ml.save_csv(os.tmpname(), ml.zeros(2, 2, 2)) end,
     "save_csv: expected a 1-D or 2-D array, got shape 2x2x2"},
  }

  it("samples one or more errors of every area", function()
    for _, c in ipairs(CASES_ERR) do
      assert.equal(c[3], errmsg(c[2]), c[1])
    end
  end)

  it("names the devices when a device is missing", function()
    local n = ml.cuda.device_count()
    local msg = errmsg(function() return x:to("cuda:" .. n) end)
    -- with no GPU, the reason the driver gave follows the count
    local present = ("to: device cuda:%d is not present (%d cuda device%s"):format(
      n, n, n == 1 and "" or "s")
    assert.truthy(msg == present .. ")"
                  or (n == 0 and msg:sub(1, #present + 2) == present .. ": "
                      and msg:sub(-1) == ")")
                  or msg == ("to: device cuda:%d: this moonlab was built without CUDA"):format(n),
                  msg)
  end)

  it("names the operation the user called, not the one underneath", function()
    -- out of memory: the allocator names no operation, the binding does
    -- (these sizes fail in malloc or cudaMalloc without touching memory)
    for _, c in ipairs({
      {"linspace", function() return ml.linspace(0, 1, 2 ^ 40) end},
      {"matmul", function() return ml.matmul(ml.zeros(2 ^ 20, 1, 1), ml.zeros(1, 2 ^ 20)) end},
      {"mm", function() return ml.zeros(2 ^ 20, 1):mm(ml.zeros(1, 2 ^ 20)) end},
      {"add", function() return ml.zeros(1):expand(2 ^ 40) + 1 end},
      {"full_like", function() return ml.full_like(ml.zeros(1):expand(2 ^ 40), 2) end},
      {"clone", function() return ml.zeros(1):expand(2 ^ 40):clone() end},
    }) do
      local msg = errmsg(c[2])
      assert.truthy(msg:find("^" .. c[1] .. ": out of memory allocating 8%.0 TiB on %a+"), msg)
    end
    collectgarbage()
    assert.equal("full_like: 300 is out of range for uint8",
                 errmsg(function() return ml.full_like(ml.zeros(2, {dtype = "uint8"}), 300) end))
    -- x[k] and x[k] = v are "index", whatever runs underneath
    local v = ml.zeros(4)
    for _, c in ipairs({
      {function() return v[{{1, 5}}] end, "index: range 1..5 is out of bounds for dimension 1 with size 4"},
      {function() return v[5] end, "index: index 5 is out of bounds for dimension 1 with size 4"},
      {function() return v[ml.array({5})] end, "index: index 5 is out of bounds for dimension 1 with size 4"},
      {function() v[ml.array({-5})] = 1 end, "index: index -5 is out of bounds for dimension 1 with size 4"},
      {function() return x[ml.ones(2, {dtype = "uint8"})] end, "index: cannot expand shape 2 to 3x4"},
      {function() x[ml.ones(3, {dtype = "uint8"})] = {1, 2} end, "index: cannot expand shape 2 to 3x4"},
      {function() v[ml.array({1.5})] = 1 end, "index: indices must be integers, got float64"},
      {function() x[1] = {1, 2} end, "index: cannot expand shape 2 to 4"},
      -- operations made of others, and tables made arrays on the way
      {function() return x:clamp(ml.zeros(2), 1) end, "clamp: shapes 3x4 and 2 do not broadcast"},
      {function() return x:clamp(nil, ml.zeros(2)) end, "clamp: shapes 3x4 and 2 do not broadcast"},
      {function() return x + {{1}, {2, 3}} end,
       "add: ragged nested table (expected 1 elements at depth 2)"},
      {function() return x:copy({{1}, {"a"}}) end, "copy: expected numbers, found string"},
      {function() x[1] = {1, {2}} end, "index: expected numbers, found table"},
    }) do
      assert.equal(c[2], errmsg(c[1]))
    end
  end)

  it("names the numbers the user gave, whatever their size", function()
    local mini = math.mininteger
    for _, c in ipairs({
      {function() return ml.ones(mini) end, "ones: negative dimension -9223372036854775808 in shape"},
      {function() return ml.zeros(2, -2 ^ 40) end, "zeros: negative dimension -1099511627776 in shape"},
      {function() return ml.rand({3, mini}) end, "rand: negative dimension -9223372036854775808 in shape"},
      {function() return ml.eye(3, mini) end, "eye: negative size 3x-9223372036854775808"},
      {function() return ml.linspace(0, 1, -2 ^ 40) end,
       "linspace: negative number of points -1099511627776"},
      {function() return ml.load_csv("/dev/null", {skip = mini}) end,
       "load_csv: skip must be non-negative (got -9223372036854775808)"},
    }) do
      assert.equal(c[2], errmsg(c[1]))
    end
  end)

  it("raises for freed arrays in every area", function()
    local y = ml.ones(2, 2)
    y:free()
    for _, f in ipairs({function() return y + 1 end, function() return y:sum() end,
                        function() return y:mm(y) end, function() return y:t() end,
                        function() return y:sort() end, function() return y[1] end,
                        function() return ml.cat({y}) end, function() return y:totable() end,
                        function() return ml.save_npy(os.tmpname(), y) end,
                        function() return x:copy(y) end}) do
      local msg = errmsg(f)
      assert.truthy(msg:find("freed", 1, true), msg)
    end
  end)
end)

describe("api: Lua numbers on either side of operators", function()
  local OPS = {
    {"+", function(a, b) return a + b end}, {"-", function(a, b) return a - b end},
    {"*", function(a, b) return a * b end}, {"/", function(a, b) return a / b end},
    {"^", function(a, b) return a ^ b end}, {"%", function(a, b) return a % b end},
    {"//", function(a, b) return a // b end},
  }

  it("an integer takes the array's dtype, on the left and on the right", function()
    for _, t in ipairs(DTYPES) do
      local x = ml.array({{1, 2, 3}, {4, 5, 6}}, {dtype = t})
      local two = ml.full_like(x, 2)
      for _, op in ipairs(OPS) do
        local r, e = op[2](x, 2), op[2](x, two)
        assert.equal(e.dtype, r.dtype, t .. " x " .. op[1] .. " 2")
        assert.array_near(r, e, 0)
        r, e = op[2](2, x), op[2](two, x)
        assert.equal(e.dtype, r.dtype, t .. " 2 " .. op[1] .. " x")
        assert.array_near(r, e, 0)
      end
      assert.array_near(-x, 0 - x, 0)
      assert.equal(t, (-x).dtype)
    end
  end)

  it("a float makes integer arrays float64 and keeps float dtypes", function()
    for _, t in ipairs(DTYPES) do
      local x = ml.array({1, 2, 3}, {dtype = t})
      local want = is_float(t) and t or "float64"
      assert.equal(want, (x + 2.5).dtype)
      assert.equal(want, (2.0 * x).dtype)
      assert.array_near(x * 0.5, {0.5, 1, 1.5}, 0)
      assert.array_near(1.5 - x, {0.5, -0.5, -1.5}, 0)
    end
  end)

  it("an integer out of the dtype's range is an error on either side", function()
    local u = ml.array({1, 2}, {dtype = "uint8"})
    assert.equal("add: 256 is out of range for uint8", errmsg(function() return u + 256 end))
    assert.equal("sub: 256 is out of range for uint8", errmsg(function() return 256 - u end))
    assert.equal("mul: -1 is out of range for uint8", errmsg(function() return -1 * u end))
    local i = ml.array({1, 2}, {dtype = "int32"})
    assert.equal("add: 4294967296 is out of range for int32",
                 errmsg(function() return (1 << 32) + i end))
    -- comparisons compare exactly instead
    assert.array_near(ml.lt(u, 1000), {1, 1}, 0)
    assert.array_near(ml.gt(1 << 40, i), {1, 1}, 0)
    assert.array_near(ml.eq(i, 1 << 33), {0, 0}, 0)
  end)

  it("booleans and nested tables mix with arrays as numbers and arrays", function()
    local x = ml.array({1, 2})
    assert.array_near(x + true, {2, 3}, 0)
    assert.array_near({10, 20} + x, {11, 22}, 0)
    assert.array_near(x * {{1}, {2}}, {{1, 2}, {2, 4}}, 0)
    assert.array_near(ml.add(2, x), {3, 4}, 0)
    assert.equal(5, ml.add(2, 3):item())
  end)
end)

describe("api: indices are 1-based everywhere", function()
  local x = ml.array({{5, 9, 1}, {7, 0, 8}})

  it("reductions", function()
    assert.equal(2, x[1]:argmax())
    assert.equal(3, x[1]:argmin())
    assert.equal(5, x:argmin())   -- flat, C order
    assert.equal(2, x:argmax())
    assert.array_near(x:argmax(1), {2, 1, 2}, 0)
    assert.array_near(x:argmin(2), {3, 2}, 0)
    local v, i = x:max(2)
    assert.array_near(v, {9, 8}, 0)
    assert.array_near(i, {2, 3}, 0)
    v, i = x:min(1, {keepdim = true})
    assert.array_near(i, {{1, 2, 1}}, 0)
    assert.equal("int64", i.dtype)
  end)

  it("sort, argsort and topk", function()
    local _, i = x:sort(2)
    assert.array_near(i, {{3, 1, 2}, {2, 1, 3}}, 0)
    assert.array_near(x:argsort(1, {descending = true}), {{2, 1, 2}, {1, 2, 1}}, 0)
    local tv, ti = x:topk(1)
    assert.array_near(tv, {{9}, {8}}, 0)
    assert.array_near(ti, {{2}, {3}}, 0)
    _, ti = x:topk(1, 1, {largest = false})
    assert.array_near(ti, {{1, 2, 1}}, 0)
  end)

  it("index_select, gather, scatter and subscripts", function()
    assert.array_near(x:index_select(2, {1, 3}), {{5, 1}, {7, 8}}, 0)
    assert.array_near(x:gather(2, {{3}, {1}}), {{1}, {7}}, 0)
    assert.array_near(x:scatter(2, {{1}, {3}}, 0), {{0, 9, 1}, {7, 0, 0}}, 0)
    assert.equal("index_select: index 0 is out of bounds for dimension 2 with size 3",
                 errmsg(function() return x:index_select(2, {0}) end))
    assert.equal("gather: index 4 is out of bounds for dimension 2 with size 3",
                 errmsg(function() return x:gather(2, {{4}, {1}}) end))
    assert.equal(5, x[{1, 1}])
    assert.equal(8, x[{-1, -1}])
    assert.array_near(x[1], {5, 9, 1}, 0)
    assert.array_near(x[{{}, {2, 3}}], {{9, 1}, {0, 8}}, 0)
    assert.array_near(x[ml.array({2})], {{7, 0, 8}}, 0)
    assert.truthy(errmsg(function() return x[0] end):find("index 0 is out of bounds", 1, true))
    assert.array_near(x:narrow(2, 1, 1), {{5}, {7}}, 0)
    assert.array_near(x:select(2, 3), {1, 8}, 0)
  end)

  it("randperm gives 1..n", function()
    ml.seed(4)
    for _, n in ipairs({1, 7, 257}) do
      local p = ml.randperm(n)
      local want = {}
      for k = 1, n do want[k] = k end
      assert.same(want, (p:sort()):totable())
    end
  end)

  it("dimensions are 1-based, negative from the end, 0 is an error", function()
    assert.array_near(x:sum(1), {12, 9, 9}, 0)
    assert.array_near(x:sum(-1), {15, 15}, 0)
    for _, f in ipairs({function() return x:sum(0) end, function() return x:cumsum(0) end,
                        function() return x:sort(0) end, function() return x:size(0) end,
                        function() return x:transpose(0, 1) end,
                        function() return x:index_select(0, {1}) end}) do
      assert.truthy(errmsg(f):find("dimensions are 1-based (got 0)", 1, true))
    end
  end)
end)

describe("api: dtype promotion agrees across areas", function()
  local function A(t, d) return ml.array(t, {dtype = d}) end

  it("matrix products promote as elementwise operations do", function()
    local pairs_ = {{"int32", "float32", "float64"}, {"uint8", "float32", "float32"},
                    {"int32", "int32", "int32"}, {"uint8", "int32", "int32"},
                    {"int64", "float64", "float64"}, {"float32", "float32", "float32"},
                    {"uint8", "uint8", "uint8"}, {"int32", "int64", "int64"}}
    for _, p in ipairs(pairs_) do
      local a, b = A({{1, 2}, {3, 4}}, p[1]), A({{1, 0}, {2, 1}}, p[2])
      local r = a:mm(b)
      assert.equal(p[3], r.dtype, p[1] .. " mm " .. p[2])
      assert.equal(p[3], (a + b).dtype)
      assert.array_near(r, {{5, 2}, {11, 4}}, 0)
      assert.equal(p[3], ml.matmul(b, a).dtype)
      assert.equal(p[3], a[1]:outer(b[1]).dtype)
    end
  end)

  it("cat, stack and where promote as add does", function()
    for _, ta in ipairs(DTYPES) do
      for _, tb in ipairs(DTYPES) do
        local a, b = A({1, 2}, ta), A({3, 4}, tb)
        local want = (a + b).dtype
        local c = ml.cat({a, b})
        assert.equal(want, c.dtype, ta .. " cat " .. tb)
        assert.array_near(c, {1, 2, 3, 4}, 0)
        assert.equal(want, ml.stack({a, b}).dtype)
        local w = ml.where(A({1, 0}, "uint8"), a, b)
        assert.equal(want, w.dtype, ta .. " where " .. tb)
        assert.array_near(w, {1, 4}, 0)
      end
    end
  end)

  it("where takes Lua numbers as weak scalars", function()
    local i = A({1, 2}, "int32")
    local c = A({1, 0}, "uint8")
    assert.equal("int32", ml.where(c, i, 7).dtype)
    assert.equal("int32", ml.where(c, 7, i).dtype)
    assert.equal("float64", ml.where(c, i, 2.5).dtype)
    assert.array_near(ml.where(c, i, 2.5), {1, 2.5}, 0)
    assert.equal("float32", ml.where(c, A({1, 2}, "float32"), 2.5).dtype)
  end)

  it("results of reductions, indexing and copies keep or widen dtypes as documented", function()
    local u = A({200, 100}, "uint8")
    assert.equal(300, u:sum())
    assert.equal("int64", u:sum(1).dtype)
    assert.equal("float64", A({1, 2}, "int32"):mean(1).dtype)
    assert.equal("float32", A({1, 2}, "float32"):var(1).dtype)
    assert.equal("uint8", u:max(1).dtype)
    assert.equal("int64", u:cumsum().dtype)
    assert.equal("uint8", u:index_select(1, {2}).dtype)
    assert.equal("uint8", u:masked_fill({1, 0}, 7).dtype)
    assert.equal("uint8", u:scatter(1, {2}, A({9.7}, "float64")).dtype)
    assert.array_near(u:scatter(1, {2}, A({9.7}, "float64")), {200, 9}, 0)
    local z = ml.zeros(2, {dtype = "int32"})
    z:copy(A({1.9, -1.9}, "float64"))
    assert.array_near(z, {1, -1}, 0)
    assert.equal("int32", select(1, A({3, 1}, "int32"):sort()).dtype)
  end)
end)

describe("api: NaN and Inf through reductions and sorting", function()
  for _, t in ipairs({"float64", "float32"}) do
    it("propagate through every reduction (" .. t .. ")", function()
      local x = ml.array({3, nan, 1, inf, -inf, 2}, {dtype = t})
      local function isnan(v) return v ~= v end
      assert.is_true(isnan(x:sum()))
      assert.is_true(isnan(x:mean()))
      assert.is_true(isnan(x:prod()))
      assert.is_true(isnan(x:max()))
      assert.is_true(isnan(x:min()))
      assert.equal(2, x:argmax())
      assert.equal(2, x:argmin())
      assert.is_true(isnan(x:var()))
      assert.is_true(isnan(x:norm()))
      assert.is_true(x:any())
      assert.is_true(x:all())
      local y = ml.array({1, inf, 2}, {dtype = t})
      assert.equal(inf, y:sum())
      assert.equal(inf, y:max())
      assert.equal(1, y:min())
      assert.equal(2, y:argmax())
      assert.equal(inf, y:norm())
      assert.equal(inf, y:norm({p = 1}))
      assert.equal(inf, y:norm({p = inf}))
      assert.equal(inf, y:logsumexp())
      assert.is_true(isnan(ml.array({inf, -inf}, {dtype = t}):sum()))
      assert.equal(-inf, ml.array({-inf, -inf}, {dtype = t}):logsumexp())
      assert.is_true(isnan(ml.array({0, inf}, {dtype = t}):prod()))
      assert.array_near(x:cumsum(), {3, nan, nan, nan, nan, nan}, 0)
      assert.array_near(y:cumsum(), {1, inf, inf}, 0)
      -- along a dimension: only the rows with NaN become NaN
      local m = ml.array({{1, nan}, {2, 3}}, {dtype = t})
      assert.array_near(m:sum(2), {nan, 5}, 0)
      assert.array_near(m:max(2), {nan, 3}, 0)
      local _, at = m:max(2)
      assert.array_near(at, {2, 2}, 0)
      assert.array_near(m:mean(1), {1.5, nan}, 0)
      assert.array_near(m:argmin(2), {2, 1}, 0)
    end)

    it("sort NaN last ascending and first descending (" .. t .. ")", function()
      local x = ml.array({3, nan, 1, inf, -inf, 2}, {dtype = t})
      local v, i = x:sort()
      assert.array_near(v, {-inf, 1, 2, 3, inf, nan}, 0)
      assert.array_near(i, {5, 3, 6, 1, 4, 2}, 0)
      v = x:sort({descending = true})
      assert.array_near(v, {nan, inf, 3, 2, 1, -inf}, 0)
      assert.array_near(x:argsort(), {5, 3, 6, 1, 4, 2}, 0)
      local tv, ti = x:topk(2)
      assert.array_near(tv, {nan, inf}, 0)
      assert.array_near(ti, {2, 4}, 0)
      tv = x:topk(2, 1, {largest = false})
      assert.array_near(tv, {-inf, 1}, 0)
    end)
  end
end)

describe("api: empty arrays through every area", function()
  local z = ml.zeros(0, 3)

  local function shaped(x, shape, dtype)
    assert.is_true(ml.is_array(x))
    assert.same(shape, x.shape)
    if dtype then assert.equal(dtype, x.dtype) end
  end

  it("constructors and random", function()
    shaped(ml.arange(0), {0}, "int64")
    shaped(ml.arange(3, 3), {0})
    shaped(ml.linspace(0, 1, 0), {0}, "float64")
    shaped(ml.eye(0), {0, 0})
    shaped(ml.eye(0, 3), {0, 3})
    shaped(ml.full({0, 2}, 5), {0, 2}, "int64")
    shaped(ml.array({}), {0})
    shaped(ml.array({{}, {}}), {2, 0})
    shaped(ml.rand(0, 3), {0, 3})
    shaped(ml.randn(3, 0), {3, 0})
    shaped(ml.randint(0, 5, 0), {0}, "int64")
    shaped(ml.randperm(0), {0}, "int64")
    shaped(ml.zeros_like(z), {0, 3})
    assert.same({}, z:totable())
    assert.same({{}, {}}, ml.zeros(2, 0):totable())
    assert.equal("[float64 0x3 " .. ml.device() .. "]", tostring(z))
  end)

  it("elementwise, with broadcasting against size 1 only", function()
    shaped(z + 1, {0, 3})
    shaped(1 - z, {0, 3})
    shaped(z * ml.ones(1, 3), {0, 3})
    shaped(z + ml.ones(3), {0, 3})
    shaped(ml.zeros(0, 1) + ml.ones(4), {0, 4})
    shaped(z:exp(), {0, 3})
    shaped(ml.isnan(z), {0, 3}, "uint8")
    shaped(ml.where(ml.zeros(0, 3, {dtype = "uint8"}), z, 1), {0, 3})
    shaped(z:clamp(0, 1), {0, 3})
    shaped(z:clamp(z, z), {0, 3})
    assert.equal("add: shapes 0x3 and 2x3 do not broadcast",
                 errmsg(function() return z + ml.ones(2, 3) end))
  end)

  it("reductions", function()
    assert.equal(0, z:sum())
    assert.equal(1, z:prod())
    assert.is_true(z:mean() ~= z:mean())
    assert.is_true(z:var() ~= z:var())
    assert.equal(0, z:norm())
    assert.equal(-inf, z:logsumexp())
    assert.is_false(z:any())
    assert.is_true(z:all())
    assert.array_near(z:sum(1), {0, 0, 0}, 0)
    shaped(z:sum(2), {0})
    shaped(z:sum(2, {keepdim = true}), {0, 1})
    shaped(z:sum({keepdim = true}), {1, 1})
    shaped(z:max(2), {0})
    shaped(z:argmin(2), {0}, "int64")
    shaped(z:cumsum(), {0})
    shaped(z:cumsum(1), {0, 3})
    assert.equal("max: dimension 1 of shape 0x3 is empty and has no maximum",
                 errmsg(function() return z:max(1) end))
    assert.equal("argmin: empty array of shape 0x3 has no minimum",
                 errmsg(function() return z:argmin() end))
  end)

  it("matrix products", function()
    shaped(z:mm(ml.ones(3, 4)), {0, 4})
    assert.array_near(ml.zeros(2, 0):mm(ml.zeros(0, 4)), ml.zeros(2, 4), 0)
    shaped(z:t():mm(z), {3, 3})
    assert.array_near(z:t():mm(z), ml.zeros(3, 3), 0)
    assert.equal(0, ml.zeros(0):dot(ml.zeros(0)))
    shaped(ml.zeros(0):outer(ml.ones(3)), {0, 3})
    assert.array_near(ml.zeros(3, 0):mv(ml.zeros(0)), {0, 0, 0}, 0)
    shaped(ml.matmul(ml.zeros(0, 2, 3), ml.ones(3, 4)), {0, 2, 4})
  end)

  it("shapes", function()
    shaped(z:reshape(3, 0), {3, 0})
    shaped(z:reshape(-1), {0})
    shaped(z:view(0, 1, 3), {0, 1, 3})
    shaped(z:t(), {3, 0})
    shaped(z:permute(2, 1), {3, 0})
    shaped(z:flatten(), {0})
    shaped(ml.cat({z, z}), {0, 3})
    shaped(ml.cat({z, ml.ones(2, 3)}), {2, 3})
    shaped(ml.stack({z, z}), {2, 0, 3})
    shaped(ml.zeros(1, 3):expand(0, 3), {0, 3})
    local parts = z:split(2)
    assert.equal(1, #parts)
    shaped(parts[1], {0, 3})
    shaped(z:unsqueeze(1), {1, 0, 3})
    shaped(z[{{}, 2}], {0})
    shaped(ml.ones(4, 3)[{{2, 1}}], {0, 3})
  end)

  it("indexing and sorting", function()
    shaped(z:index_select(1, {}), {0, 3})
    shaped(ml.ones(2, 3):index_select(2, {}), {2, 0})
    shaped(z:index_select(2, {1, 3}), {0, 2})
    shaped(z:gather(1, ml.zeros(0, 3, {dtype = "int64"})), {0, 3})
    shaped(z:scatter(1, ml.zeros(0, 3, {dtype = "int64"}), 1), {0, 3})
    shaped(z:masked_select(ml.zeros(0, 3, {dtype = "uint8"})), {0})
    shaped(ml.ones(2, 3):masked_select(ml.zeros(2, 3, {dtype = "uint8"})), {0})
    shaped(z:masked_fill(ml.zeros(0, 3, {dtype = "uint8"}), 1), {0, 3})
    shaped(z:sort(1), {0, 3})
    shaped(z:sort(2), {0, 3})
    shaped(z:argsort(), {0, 3}, "int64")
    shaped(z:topk(0, 1), {0, 3})
    shaped(ml.ones(2, 3):topk(0), {2, 0})
    local x = ml.ones(2, 3)
    x[ml.zeros(2, 3, {dtype = "uint8"})] = 5
    x[{{}, {2, 1}}] = 7
    assert.array_near(x, ml.ones(2, 3), 0)
  end)

  it("files", function()
    local path = os.tmpname()
    ml.save_npy(path, z)
    shaped(ml.load_npy(path), {0, 3}, "float64")
    ml.save_npy(path, ml.zeros(0, {dtype = "int32"}))
    shaped(ml.load_npy(path), {0}, "int32")
    os.remove(path)
  end)
end)

describe("api: extreme integers give errors or right answers, never a crash", function()
  local maxi, mini = math.maxinteger, math.mininteger

  it("reshape and view refuse sizes whose product overflows", function()
    local x = ml.zeros(4)
    -- (2^62 + 1) * 4 wraps around to 4
    assert.equal("view: cannot reshape 4 elements into shape 4611686018427387905x4",
                 errmsg(function() return x:view((1 << 62) + 1, 4) end))
    assert.equal("reshape: cannot reshape 4 elements into shape 4611686018427387905x4",
                 errmsg(function() return x:reshape((1 << 62) + 1, 4) end))
    assert.equal("reshape: cannot reshape 0 elements into shape 0x4611686018427387905x4",
                 errmsg(function() return ml.zeros(0):reshape(0, (1 << 62) + 1, 4) end))
    assert.same({5, 0}, ml.zeros(0):reshape(5, 0).shape)
  end)

  it("expand refuses shapes of more than 2^63 elements", function()
    assert.equal("expand: shape 4611686018427387904x2 is too large",
                 errmsg(function() return ml.zeros(1, 1):expand(1 << 62, 2) end))
    assert.equal("expand: shape 0x4611686018427387904x2 is too large",
                 errmsg(function() return ml.zeros(1, 1):expand(0, 1 << 62, 2) end))
    local e = ml.zeros(1):expand(1 << 40)
    assert.equal(1 << 40, e:numel())
    assert.equal(0, e[{(1 << 40) - 1}])
    assert.equal("zeros: shape 0x4611686018427387904x4 is too large",
                 errmsg(function() return ml.zeros(0, 1 << 62, 4) end))
  end)

  it("narrow and split check lengths without overflowing", function()
    local x = ml.arange(3)
    assert.equal("narrow: range 2..9223372036854775807 out of bounds for dimension 1 of size 3",
                 errmsg(function() return x:narrow(1, 2, maxi) end))
    local parts = x:split(maxi)
    assert.equal(1, #parts)
    assert.same({0, 1, 2}, parts[1]:totable())
    assert.equal("split: sizes add up to more than the size 3 of dimension 1",
                 errmsg(function() return x:split({3, maxi, maxi, 2}) end))
    assert.same({{0}, {4}, {8}}, ml.arange(12):reshape(3, 4)[{{}, {1, 4, maxi}}]:totable())
  end)

  it("arange counts ranges wider than 2^63 and refuses infinite ones", function()
    assert.same({mini, -(1 << 62), 0, 1 << 62}, ml.arange(mini, maxi, 1 << 62):totable())
    assert.same({maxi, (1 << 62) - 1, -1, -(1 << 62) - 1},
                ml.arange(maxi, mini, -(1 << 62)):totable())
    assert.equal("arange: shape 9223372036854775807 is too large",
                 errmsg(function() return ml.arange(mini, 2) end))
    assert.equal("arange: shape 9223372036854775807 is too large",
                 errmsg(function() return ml.arange(0, inf) end))
    assert.equal("arange: the range has no length (NaN bound or step)",
                 errmsg(function() return ml.arange(0, nan) end))
    assert.same({}, ml.arange(2, 1):totable())
    assert.same({0, 1 << 40}, ml.eye(0, 1 << 40).shape)
    assert.equal("eye: shape 0x9223372036854775807 is too large",
                 errmsg(function() return ml.eye(0, maxi) end))
  end)

  it("indices at the ends of int64 are out of bounds", function()
    local x = ml.array({{1, 2}, {3, 4}})
    for _, i in ipairs({mini, maxi, 0, -3}) do
      local idx = ml.array({{i, 1}, {1, 1}})
      assert.equal(("gather: index %d is out of bounds for dimension 1 with size 2"):format(i),
                   errmsg(function() return x:gather(1, idx) end))
      assert.equal(("scatter: index %d is out of bounds for dimension 1 with size 2"):format(i),
                   errmsg(function() return x:scatter(1, idx, 0) end))
      assert.equal(("index_select: index %d is out of bounds for dimension 1 with size 2"):format(i),
                   errmsg(function() return x:index_select(1, {i}) end))
    end
  end)
end)
