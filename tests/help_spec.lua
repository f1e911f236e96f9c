-- Help entries (src/lua/moonlab/help/*.lua): every public function has
-- one, they are well formed, their examples run and print what they say,
-- ml.help finds them by identity and by name, and docs/api.md is their
-- current rendering.
local ml = require "moonlab"
local help = require "moonlab.help"
local options = require "moonlab.options"

local ENTRY_FIELDS = {name = true, names = true, usage = true, doc = true, options = true,
                      returns = true, example = true, area = true}
local AREA_FIELDS = {name = true, title = true, intro = true, namespace = true, entries = true}
local OPTION_FIELDS = {name = true, type = true, default = true, doc = true}

local function each_entry(fn)
  for _, area in ipairs(help.areas()) do
    for _, e in ipairs(area.entries) do fn(e, area) end
  end
end

local function lines_within(text, width, where)
  for line in text:gmatch("[^\n]+") do
    assert.is_true(#line <= width, ("%s: line longer than %d: %s"):format(where, width, line))
  end
end

local function squeeze(s) return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")) end

-- Runs an entry's example with print captured line by line; every line
-- that printed and carries "--> text" must have printed text (compared
-- with runs of white space as one space).
local function run_example(e)
  local printed = {}
  local function capture(...)
    local info = debug.getinfo(2, "Sl")
    if info.source ~= "=example" then return end
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    local l = info.currentline
    printed[l] = (printed[l] and printed[l] .. " " or "") .. table.concat(parts, " ")
  end
  local env = setmetatable({ml = ml, print = capture}, {__index = _G})
  local chunk = assert(load(e.example, "=example", "t", env))
  local write = io.write
  io.write = function() end -- ml.help's own printing
  local ok, err = pcall(chunk)
  io.write = write
  assert(ok, e.names[1] .. ": the example raised: " .. tostring(err))
  local n, checked = 0, 0
  for line in (e.example .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local want = line:match("%-%->(.*)$")
    if want and printed[n] then
      assert.equal(squeeze(want), squeeze(printed[n]), e.names[1] .. ": example line " .. n)
      checked = checked + 1
    end
  end
  return checked
end

describe("help entries", function()
  it("are well formed, with unique names", function()
    local seen = {}
    for _, area in ipairs(help.areas()) do
      for k in pairs(area) do assert.truthy(AREA_FIELDS[k], area.name .. ": unknown field " .. k) end
      assert.equal("string", type(area.title))
      assert.equal("string", type(area.intro))
      lines_within(area.intro, 76, area.name)
      for _, e in ipairs(area.entries) do
        local where = area.name .. ": " .. tostring(e.names[1])
        for k in pairs(e) do assert.truthy(ENTRY_FIELDS[k], where .. ": unknown field " .. k) end
        assert.is_true(#e.names > 0, where)
        for _, n in ipairs(e.names) do
          assert.is_nil(seen[n], "two entries named " .. n)
          seen[n] = true
        end
        assert.is_true(#e.usage > 0, where)
        for _, u in ipairs(e.usage) do assert.equal("string", type(u), where) end
        for _, f in ipairs({"doc", "returns", "example"}) do
          assert.equal("string", type(e[f]), where .. ": " .. f)
        end
        assert.truthy(e.doc:match("%.%s*$"), where .. ": the doc ends a sentence")
        assert.truthy(e.returns:match("%.$"), where .. ": returns ends a sentence")
        lines_within(e.doc, 76, where)
        lines_within(e.example, 78, where)
        local optnames = {}
        for _, o in ipairs(e.options or {}) do
          for k in pairs(o) do assert.truthy(OPTION_FIELDS[k], where .. ": unknown option field " .. k) end
          for _, f in ipairs({"name", "type", "default", "doc"}) do
            assert.equal("string", type(o[f]), where .. ": option field " .. f)
          end
          assert.has_no_error(function() options.phrase(o.type) end, where .. ": type " .. o.type)
          assert.is_nil(optnames[o.name], where .. ": option " .. o.name .. " twice")
          optnames[o.name] = true
        end
      end
    end
    for name in pairs(package.preload) do
      local area = name:match("^moonlab%.help%.(.+)$")
      if area and area ~= "areas" then
        local listed = false
        for _, a in ipairs(help.AREAS) do listed = listed or a == area end
        assert.is_true(listed, name .. " is not in help.AREAS")
      end
    end
  end)

  it("cover every public function, method and class of ml", function()
    local missing = {}
    for _, p in ipairs(help.public(ml)) do
      local r = help.lookup(p.value)
      if not (r and r.entry) then missing[#missing + 1] = p.name end
    end
    assert.same({}, missing)
    assert.is_true(#help.public(ml) > 150)
  end)

  it("name only what exists, one entry for each value", function()
    each_entry(function(e)
      for _, n in ipairs(e.names) do
        local v = help.resolve(ml, n)
        assert.truthy(v ~= nil, n .. " names nothing in ml")
        local r = help.lookup(v)
        assert.equal(e, r and r.entry, n .. ": its value is another entry's")
      end
    end)
  end)

  it("have examples that run and print what their --> comments say", function()
    local state, dtype, device = ml.get_rng_state(), ml.get_default_dtype(), ml.device()
    local checked = 0
    -- the plot area's examples draw through gnuplot: where it is not
    -- installed (a GPU host with staged packages) they cannot run
    local gnuplot = os.execute("command -v gnuplot >/dev/null 2>&1")
    each_entry(function(e, area)
      if area.name ~= "plot" or gnuplot then checked = checked + run_example(e) end
    end)
    ml.set_rng_state(state)
    assert.equal(dtype, ml.get_default_dtype())
    assert.equal(device, ml.device())
    assert.is_true(checked > 100, "only " .. checked .. " lines checked")
  end)

  it("render as docs/api.md, which is current (make docs)", function()
    local f = assert(io.open("docs/api.md"))
    local committed = f:read("a")
    f:close()
    assert.is_true(committed == help.markdown(), "docs/api.md is stale: run make docs")
  end)
end)

describe("ml.help", function()
  local x = ml.zeros(2, 3)

  it("shows a function's usage, description, options, returns and example", function()
    local t = ml.help_text(ml.zeros)
    assert.equal("ml.zeros(shape... [, opts])", t:match("^[^\n]*"))
    for _, part in ipairs({"\nOptions:\n", "  dtype  string, default ml.get_default_dtype()",
                           "  device  string, default ml.device()", "\nReturns: a new",
                           "\nExample:\n  local x = ml.zeros(2, 3, {dtype = \"int32\"})"}) do
      assert.truthy(t:find(part, 1, true), part)
    end
    assert.equal(t, ml.help_text("zeros"))
    assert.equal(t, ml.help_text("ml.zeros"))
    assert.equal(t, ml.help_text(ml.ones))
  end)

  it("finds methods by identity and by name", function()
    local t = ml.help_text(x.sum)
    assert.equal("x:sum([dim] [, opts])", t:match("^[^\n]*"))
    assert.truthy(t:find("  keepdim  boolean, default false", 1, true))
    assert.equal(t, ml.help_text(ml.sum))
    assert.equal(t, ml.help_text(ml.methods.sum))
    assert.equal(t, ml.help_text("x:sum"))
    assert.equal(t, ml.help_text("sum"))
    assert.equal("x:cuda([index])", ml.help_text(x.cuda):match("^[^\n]*"))
    assert.equal("x:std([dim] [, opts])", ml.help_text(x.std):match("\n(x:std[^\n]*)"))
  end)

  it("shows a class with its methods, and each method", function()
    local t = ml.help_text(ml.KNNClassifier)
    assert.equal("ml.KNNClassifier([opts])", t:match("^[^\n]*"))
    assert.truthy(t:find("\nMethods:\n  clf:fit(X, y)\n", 1, true))
    assert.truthy(t:find("  clf:predict_proba(Q)\n", 1, true))
    local clf = ml.KNNClassifier{k = 1}
    assert.equal("clf:predict(Q)", ml.help_text(clf.predict):match("^[^\n]*"))
    assert.equal(ml.help_text(clf.fit), ml.help_text("KNNClassifier:fit"))
    assert.equal(ml.help_text(clf.fit), ml.help_text("KNNClassifier.fit"))
    assert.equal(ml.help_text(clf.kneighbors), ml.help_text("kneighbors"))
    local none, why = ml.help_text("fit")
    assert.is_nil(none)
    assert.equal("help: 'fit' is ambiguous: KNNClassifier:fit, KMeans:fit, "
                 .. "GaussianMixture:fit", why)
  end)

  it("shows namespaces' functions and areas", function()
    assert.equal("ml.cuda.memory([device])", ml.help_text(ml.cuda.memory):match("^[^\n]*"))
    assert.equal(ml.help_text(ml.cuda.memory), ml.help_text("cuda.memory"))
    assert.equal("ml.memory([device])", ml.help_text(ml.memory):match("^[^\n]*"))
    assert.equal("ml.datasets.fashion_mnist([opts])",
                 ml.help_text("fashion_mnist"):match("^[^\n]*"))
    local cuda = ml.help_text(ml.cuda)
    assert.equal('CUDA devices (help area "cuda")', cuda:match("^[^\n]*"))
    assert.truthy(cuda:find("\n  cuda.device_count\n      The number of GPUs", 1, true))
    assert.equal(cuda, ml.help_text("cuda"))
    local reduce = ml.help_text("reduce")
    assert.equal('Reductions (help area "reduce")', reduce:match("^[^\n]*"))
    assert.truthy(reduce:find("\n  var, std\n", 1, true))
    assert.equal('Arrays (help area "array")', ml.help_text(x):match("^[^\n]*"))
  end)

  it("lists every area and function for ml or no argument", function()
    local t = ml.help_text()
    assert.equal(t, ml.help_text(ml))
    assert.equal(t, ml.help_text("ml"))
    for _, area in ipairs(help.areas()) do
      assert.truthy(t:find("\n" .. area.name .. " +" .. area.title .. "\n"), area.name)
    end
    for _, name in ipairs({"zeros", "knn", "KNNClassifier:fit", "logsumexp", "philox4x32",
                           "fashion_mnist", "device_count", "help_text"}) do
      assert.truthy(t:find("[ \n]" .. name .. "[ \n]"), name)
    end
  end)

  it("says so when there is no entry", function()
    assert.same({nil, "help: no entry named 'nosuch'"}, {ml.help_text("nosuch")})
    assert.same({nil, "help: no entry for this function (try help() for the list)"},
                {ml.help_text(print)})
    assert.same({nil, "help: no entry for this nil (try help() for the list)"},
                {ml.help_text(nil)})
  end)

  it("prints the text and returns nothing", function()
    local out = {}
    local write = io.write
    io.write = function(...) for _, s in ipairs({...}) do out[#out + 1] = s end end
    local r = table.pack(ml.help(ml.knn))
    ml.help("nosuch")
    io.write = write
    assert.equal(0, r.n)
    assert.equal(ml.help_text(ml.knn) .. "help: no entry named 'nosuch'\n", table.concat(out))
  end)
end)
