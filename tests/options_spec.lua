-- Options are checked: a key that a function's help entry does not
-- document, or a value of the wrong type, is an error that names the
-- function and the key (moonlab/options.lua, bindings/l_options.c).
local ml = require "moonlab"
local help = require "moonlab.help"
local options = require "moonlab.options"

-- The message of the error fn raises, without the position prefix.
local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local function tmpfile()
  local path = os.tmpname()
  os.remove(path)
  return path
end

local function csv_file()
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write("1,2\n3,4\n")
  f:close()
  return path
end

local function npy_file()
  local path = os.tmpname()
  ml.save_npy(path, ml.arange(3))
  return path
end

local IDX = (os.getenv("MOONLAB_DATA") or "/usr/share/datasets/fashion-mnist")
            .. "/t10k-labels-idx1-ubyte.gz"

-- A minimal valid call of every function that takes options, with opts
-- as its options table.
local PROBES = {
  unique = function(o) return ml.unique(ml.ones(3), o) end,
  bincount = function(o) return ml.bincount({0, 1}, o) end,
  histogram = function(o) return ml.histogram(ml.ones(3), o) end,
  quantile = function(o) return ml.quantile(ml.ones(3), 0.5, o) end,
  percentile = function(o) return ml.percentile(ml.ones(3), 50, o) end,
  median = function(o) return ml.median(ml.ones(3), o) end,
  nansum = function(o) return ml.nansum(ml.ones(3), o) end,
  nanmean = function(o) return ml.nanmean(ml.ones(3), o) end,
  nanmax = function(o) return ml.nanmax(ml.ones(3), o) end,
  nanmin = function(o) return ml.nanmin(ml.ones(3), o) end,
  searchsorted = function(o) return ml.searchsorted(ml.ones(3), 1, o) end,
  tril = function(o) return ml.tril(ml.ones(2, 2), o) end,
  timeit = function(o) return ml.timeit(function() end, o) end,
  bernoulli = function(o) return ml.bernoulli(0.5, 3, o) end,
  exponential = function(o) return ml.exponential(1, 3, o) end,
  gamma = function(o) return ml.gamma(2, 3, o) end,
  beta = function(o) return ml.beta(2, 3, 3, o) end,
  multinomial = function(o) return ml.multinomial(ml.ones(3), 2, o) end,
  choice = function(o) return ml.choice(5, 3, o) end,
  load = function(o) return ml.load(npy_file(), o) end,
  savez = function(o) return ml.savez(tmpfile(), {x = ml.ones(2)}, o) end,
  triu = function(o) return ml.triu(ml.ones(2, 2), o) end,
  diag = function(o) return ml.diag(ml.ones(2), o) end,
  diagonal = function(o) return ml.diagonal(ml.ones(2, 2), o) end,
  trace = function(o) return ml.trace(ml.ones(2, 2), o) end,
  tensordot = function(o) return ml.tensordot(ml.ones(2, 2), ml.ones(2, 2), o) end,
  diff = function(o) return ml.diff(ml.ones(3), o) end,
  flip = function(o) return ml.flip(ml.ones(2, 2), o) end,
  roll = function(o) return ml.roll(ml.ones(2, 2), 1, o) end,
  pad = function(o) return ml.pad(ml.ones(2, 2), 1, o) end,
  meshgrid = function(o) return ml.meshgrid(ml.ones(2), ml.ones(3), o) end,
  repeat_interleave = function(o) return ml.repeat_interleave(ml.ones(2), 2, o) end,
  zeros = function(o) return ml.zeros(2, o) end,
  isclose = function(o) return ml.isclose({1, 2}, {1, 3}, o) end,
  allclose = function(o) return ml.allclose({1, 2}, {1, 3}, o) end,
  array_equal = function(o) return ml.array_equal({1, 2}, {1, 3}, o) end,
  ones = function(o) return ml.ones(2, 3, o) end,
  empty = function(o) return ml.empty({2}, o) end,
  full = function(o) return ml.full(2, 7, o) end,
  eye = function(o) return ml.eye(2, o) end,
  arange = function(o) return ml.arange(1, 5, o) end,
  linspace = function(o) return ml.linspace(0, 1, 3, o) end,
  array = function(o) return ml.array({1, 2}, o) end,
  zeros_like = function(o) return ml.zeros_like(ml.zeros(2), o) end,
  ones_like = function(o) return ml.ones_like(ml.zeros(2), o) end,
  empty_like = function(o) return ml.empty_like(ml.zeros(2), o) end,
  full_like = function(o) return ml.full_like(ml.zeros(2), 3, o) end,
  sum = function(o) return ml.sum(ml.ones(2, 2), 1, o) end,
  prod = function(o) return ml.prod(ml.ones(2, 2), o) end,
  mean = function(o) return ml.ones(2, 2):mean(2, o) end,
  min = function(o) return ml.min(ml.ones(2, 2), 1, o) end,
  max = function(o) return ml.ones(2, 2):max(o) end,
  argmin = function(o) return ml.argmin(ml.ones(2, 2), 1, o) end,
  argmax = function(o) return ml.argmax(ml.ones(2, 2), o) end,
  var = function(o) return ml.var(ml.ones(2, 2), 1, o) end,
  std = function(o) return ml.ones(2, 2):std(o) end,
  norm = function(o) return ml.norm(ml.ones(2, 2), 2, o) end,
  logsumexp = function(o) return ml.logsumexp(ml.ones(2, 2), o) end,
  any = function(o) return ml.any(ml.ones(2, 2), 1, o) end,
  all = function(o) return ml.all(ml.ones(2, 2), o) end,
  sort = function(o) return ml.sort(ml.ones(2, 2), o) end,
  argsort = function(o) return ml.argsort(ml.ones(2, 2), 1, o) end,
  topk = function(o) return ml.topk(ml.ones(2, 2), 1, o) end,
  rand = function(o) return ml.rand(2, o) end,
  randn = function(o) return ml.randn(2, 2, o) end,
  uniform = function(o) return ml.uniform(0, 1, 2, o) end,
  normal = function(o) return ml.normal(0, 1, {2}, o) end,
  randint = function(o) return ml.randint(0, 5, 2, o) end,
  randperm = function(o) return ml.randperm(4, o) end,
  load_idx = function(o) return ml.load_idx(IDX, o) end,
  load_npy = function(o)
    local path = npy_file()
    local ok, err = pcall(ml.load_npy, path, o)
    os.remove(path)
    if not ok then error(err, 0) end
  end,
  load_csv = function(o)
    local path = csv_file()
    local ok, err = pcall(ml.load_csv, path, o)
    os.remove(path)
    if not ok then error(err, 0) end
  end,
  save_csv = function(o)
    local path = tmpfile()
    local ok, err = pcall(ml.save_csv, path, ml.ones(2), o)
    local written = io.open(path)
    if written then written:close() end
    os.remove(path)
    if not ok then
      assert.is_nil(written, "save_csv wrote its file before checking its options")
      error(err, 0)
    end
  end,
  knn = function(o) return ml.knn(ml.ones(2, 2), ml.ones(3, 2), 1, o) end,
  conv2d = function(o) return ml.conv2d(ml.ones(1, 2, 3, 3), ml.ones(2, 2, 2, 2), o) end,
  conv1d = function(o) return ml.conv1d(ml.ones(1, 2, 3), ml.ones(2, 2, 2), o) end,
  ["binary.pack"] = function(o) return ml.binary.pack(ml.ones(2), o) end,
  ["binary.unpack"] = function(o) return ml.binary.unpack(ml.binary.pack(ml.ones(2)), o) end,
  ["binary.load"] = function(o)
    local path = os.tmpname()
    ml.binary.save(ml.binary.pack(ml.ones(2)), path)
    local ok, r = pcall(ml.binary.load, path, o)
    os.remove(path)
    if not ok then error(r, 0) end
    return r
  end,
  ["dist.all_reduce"] = function(o) return ml.dist.all_reduce(ml.ones(2), o) end,
  ["dist.broadcast"] = function(o) return ml.dist.broadcast(ml.ones(2), o) end,
  ["dist.knn"] = function(o) return ml.dist.knn(ml.ones(1, 2), ml.ones(3, 2), 1, o) end,
  ["dist.mm"] = function(o)
    o = o or {}
    o.m, o.k, o.n = o.m or 1, o.k or 1, o.n or 1
    return ml.dist.mm(ml.ones(1, 1), ml.ones(1, 1), o)
  end,
  ["dist.reduce_scatter"] = function(o)
    return ml.dist.reduce_scatter(ml.ones(2), o)
  end,
  -- one process has no peer: only the options' errors propagate
  ["dist.recv"] = function(o)
    local ok, err = pcall(ml.dist.recv, 1, o)
    if not ok and not err:find("has no peer", 1, true) then error(err, 0) end
  end,
  ["linalg.cholesky"] = function(o) return ml.linalg.cholesky(ml.eye(2), o) end,
  ["linalg.inv_triangular"] = function(o) return ml.linalg.inv_triangular(ml.eye(2), o) end,
  ["linalg.solve_triangular"] = function(o)
    return ml.linalg.solve_triangular(ml.eye(2), ml.ones(2), o)
  end,
  ["linalg.cholesky_solve"] = function(o)
    return ml.linalg.cholesky_solve(ml.ones(2), ml.eye(2), o)
  end,
  ["linalg.eigh"] = function(o) return ml.linalg.eigh(ml.eye(2), o) end,
  ["linalg.eigvalsh"] = function(o) return ml.linalg.eigvalsh(ml.eye(2), o) end,
  ["linalg.qr"] = function(o) return ml.linalg.qr(ml.eye(2), o) end,
  ["linalg.svd"] = function(o) return ml.linalg.svd(ml.eye(2), o) end,
  ["linalg.lstsq"] = function(o) return ml.linalg.lstsq(ml.eye(2), ml.ones(2), o) end,
  ["linalg.norm"] = function(o) return ml.linalg.norm(ml.eye(2), o) end,
  cov = function(o) return ml.cov(ml.ones(2, 3), o) end,
  convolve = function(o) return ml.convolve(ml.ones(3), ml.ones(2), o) end,
  correlate = function(o) return ml.correlate(ml.ones(3), ml.ones(2), o) end,
  window_sum = function(o) return ml.window_sum(ml.ones(3), 1, o) end,
  ["ndimage.correlate"] = function(o) return ml.ndimage.correlate(ml.ones(3), ml.ones(2), o) end,
  ["ndimage.convolve"] = function(o) return ml.ndimage.convolve(ml.ones(3), ml.ones(2), o) end,
  ["ndimage.correlate1d"] = function(o)
    return ml.ndimage.correlate1d(ml.ones(3), ml.ones(2), o)
  end,
  ["ndimage.convolve1d"] = function(o) return ml.ndimage.convolve1d(ml.ones(3), ml.ones(2), o) end,
  ["ndimage.uniform_filter1d"] = function(o) return ml.ndimage.uniform_filter1d(ml.ones(3), 2, o) end,
  ["ndimage.uniform_filter"] = function(o) return ml.ndimage.uniform_filter(ml.ones(3), 2, o) end,
  ["ndimage.gaussian_filter"] = function(o) return ml.ndimage.gaussian_filter(ml.ones(3), 1, o) end,
  ["ndimage.gaussian_filter1d"] = function(o)
    return ml.ndimage.gaussian_filter1d(ml.ones(3), 1, o)
  end,
  ["ndimage.sobel"] = function(o) return ml.ndimage.sobel(ml.ones(3), o) end,
  KNNClassifier = function(o) return ml.KNNClassifier(o) end,
  KMeans = function(o) return ml.KMeans(o) end,
  GaussianMixture = function(o) return ml.GaussianMixture(o) end,
  ["datasets.fashion_mnist"] = function(o) return ml.datasets.fashion_mnist(o) end,
  ["plot.figure"] = function(o) return ml.plot.figure(o) end,
  ["plot.panel"] = function(o) return ml.plot.figure():panel(1, o) end,
  ["plot.line"] = function(o) return ml.plot.figure():line({1, 2}, o) end,
  ["plot.scatter"] = function(o) return ml.plot.figure():scatter({1}, {2}, o) end,
  ["plot.errorbar"] = function(o) return ml.plot.figure():errorbar({1}, {2}, {1}, o) end,
  ["plot.hist"] = function(o) return ml.plot.figure():hist({1, 2}, o) end,
  ["plot.bar"] = function(o) return ml.plot.figure():bar({1, 2}, o) end,
  ["plot.imshow"] = function(o) return ml.plot.figure():imshow(ml.ones(2, 2), o) end,
  ["plot.heatmap"] = function(o) return ml.plot.figure():heatmap(ml.ones(2, 2), o) end,
  ["plot.save"] = function(o)
    local path = os.tmpname()
    local ok, err = pcall(ml.plot.save, ml.plot.figure():line({1}), path .. ".svg", o)
    os.remove(path)
    os.remove(path .. ".svg")
    if not ok then error(err, 0) end
  end,
  ["plot.show"] = function(o)
    local write = io.write
    io.write = function() end
    local ok, err = pcall(ml.plot.show, ml.plot.figure():line({1}), o)
    io.write = write
    if not ok then error(err, 0) end
  end,
  set_printoptions = function(o)
    local saved = ml.get_printoptions()
    local ok, err = pcall(ml.set_printoptions, o or {})
    ml.set_printoptions(saved)
    if not ok then error(err, 0) end
  end,
  ["test.allclose"] = function(o)
    local msg = ml.test.allclose(ml.ones(2), 1, o)
    assert(msg == nil, msg)
  end,
}

describe("options", function()
  local x = ml.array({{1, 2, 3}, {4, 5, 6}})

  it("reject the issue's misspellings, suggesting the documented key", function()
    local q, r = ml.randn(3, 2), ml.randn(5, 2)
    local cases = {
      {function() return ml.zeros(2, {dtyp = "float32"}) end,
       "zeros: unknown option 'dtyp' (did you mean 'dtype'?)"},
      {function() return x:sum(2, {keepdims = true}) end,
       "sum: unknown option 'keepdims' (did you mean 'keepdim'?)"},
      {function() return ml.knn(q, r, 2, {metrik = "cosine"}) end,
       "knn: unknown option 'metrik' (did you mean 'metric'?)"},
      {function() return ml.KNNClassifier{metrc = "cosine"} end,
       "KNNClassifier: unknown option 'metrc' (did you mean 'metric'?)"},
      {function() return x:std(2, {dof = 1}) end,
       "std: unknown option 'dof' (did you mean 'ddof'?)"},
    }
    for _, c in ipairs(cases) do assert.equal(c[2], errmsg(c[1])) end
  end)

  it("list the options when no documented key is close", function()
    assert.equal("zeros: unknown option 'foo' (options: dtype, device)",
                 errmsg(function() return ml.zeros(2, {foo = 1}) end))
    assert.equal("topk: unknown option 'x' (options: largest, sorted)",
                 errmsg(function() return x:topk(1, {x = true}) end))
    assert.equal("KNNClassifier: unknown option [1] (options: k, weights, metric, budget)",
                 errmsg(function() return ml.KNNClassifier({5}) end))
  end)

  it("reject values of the wrong type, naming both types", function()
    assert.equal("zeros: option 'dtype' must be a string, not number",
                 errmsg(function() return ml.zeros(2, {dtype = 3}) end))
    assert.equal("sum: option 'keepdim' must be a boolean, not number",
                 errmsg(function() return x:sum(1, {keepdim = 1}) end))
    assert.equal("var: option 'ddof' must be an integer, not 0.5",
                 errmsg(function() return x:var({ddof = 0.5}) end))
    assert.equal("norm: option 'p' must be a number, not string",
                 errmsg(function() return x:norm({p = "inf"}) end))
    assert.equal("knn: option 'budget' must be an integer, not string",
                 errmsg(function() return ml.knn(x, x, 1, {budget = "1G"}) end))
    assert.equal("load_idx: option 'device' must be a string, not array",
                 errmsg(function() return ml.load_idx(IDX, {device = x}) end))
    assert.equal("array: options must be a table, not string",
                 errmsg(function() return ml.array({1}, "float32") end))
    assert.equal("fashion_mnist: options must be a table, not string",
                 errmsg(function() return ml.datasets.fashion_mnist("/tmp") end))
  end)

  it("accept every documented option, integers as integral floats", function()
    assert.equal("float32", ml.zeros(2, {dtype = "float32", device = "cpu"}).dtype)
    assert.same({2, 1}, x:sum(2, {keepdim = true}).shape)
    assert.equal(1.0, x[1]:var({ddof = 1.0}))
    local d = ml.knn(x, x, 1, {budget = 2^30, metric = "sqeuclidean", tf32 = false,
                               method = "tile", exclude_self = true})
    assert.equal(27, d[{1, 1}])
    assert.equal(3, ml.KNNClassifier{k = 3, weights = "distance", metric = "cosine",
                                     budget = 2^20}.k)
    -- nil and {} are no options
    assert.equal(21, x:sum(nil))
    assert.equal(21, x:sum({}))
    assert.equal(5, ml.KNNClassifier().k)
  end)

  it("point the error at the caller's line", function()
    local ok, err = pcall(function() local z = ml.zeros(2, {dtyp = "float32"}); return z end)
    assert.is_false(ok)
    assert.truthy(err:match("options_spec%.lua:%d+: zeros: unknown option"), err)
    ok, err = pcall(function() local c = ml.KNNClassifier{metrc = "cosine"}; return c end)
    assert.truthy(err:match("options_spec%.lua:%d+: KNNClassifier: unknown option"), err)
  end)

  it("suggest by edit distance, counting a transposition as one edit", function()
    assert.equal("keepdim", options.closest("keepdims", {"keepdim"}))
    assert.equal("descending", options.closest("decsending", {"descending"}))
    assert.equal("dtype", options.closest("DType", {"device", "dtype"}))
    assert.is_nil(options.closest("x", {"p"}))
    assert.is_nil(options.closest("exclude", {"exclude_self"}))
    assert.is_nil(options.closest("foo", {"dtype", "device"}))
  end)

  it("check every function that documents options, by a minimal call", function()
    local documented = {}
    for _, area in ipairs(help.areas()) do
      for _, e in ipairs(area.entries) do
        if e.options and #e.options > 0 then
          for _, n in ipairs(e.names) do documented[n] = e end
        end
      end
    end
    local unprobed, stale = {}, {}
    for n in pairs(documented) do
      if not PROBES[n] then unprobed[#unprobed + 1] = n end
    end
    for n in pairs(PROBES) do
      if not documented[n] then stale[#stale + 1] = n end
    end
    table.sort(unprobed)
    table.sort(stale)
    assert.same({}, unprobed)
    assert.same({}, stale)
    for n, e in pairs(documented) do
      local probe, short = PROBES[n], n:match("[^.:]*$")
      assert.has_no_error(function() probe({}) end, n)
      local msg = errmsg(probe, {not_an_option = 1})
      assert.equal(short .. ": unknown option 'not_an_option'", msg:match("^[^(]*[^ (]"), n)
      for _, o in ipairs(e.options) do
        msg = errmsg(probe, {[o.name] = print})
        assert.equal(("%s: option '%s' must be %s, not function"):format(
                       short, o.name, options.phrase(o.type)), msg, n)
      end
    end
  end)

  it("are checked by methods as by module functions", function()
    assert.equal(errmsg(function() return ml.sum(x, 2, {keepdims = true}) end),
                 errmsg(function() return x:sum(2, {keepdims = true}) end))
    assert.equal("sort: unknown option 'descend' (did you mean 'descending'?)",
                 errmsg(function() return x:sort({descend = true}) end))
  end)
end)
