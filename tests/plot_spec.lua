-- ml.plot over gnuplot, without a display: every kind writes a PNG of the
-- requested size and an SVG that parses as XML (python3's xml.etree) with
-- one plot element per series; the data gnuplot read (kept with the keep
-- option) equal the arrays, on the default device and in any dtype; bad
-- data, unknown options and a missing or failing gnuplot are errors that
-- name the function; no temporary directory is left behind.
local ml = require "moonlab"
require "moonlab.test"

local DEV = ml.device()

local function errmsg(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:\n]*:%d+: ", ""))
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function tmp(ext)
  local base = os.tmpname()
  os.remove(base)
  return base .. ext
end

-- The temporary directories of ml.plot now present.
local function leftovers()
  local p = io.popen("ls -d /tmp/moonlab-plot.* 2>/dev/null")
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

-- The number of plot elements of an SVG, after parsing it as XML.
local function svg_series(path)
  local p = io.popen(("python3 -c \"import sys, xml.etree.ElementTree as E; "
    .. "r = E.parse(sys.argv[1]).getroot(); "
    .. "print(sum(1 for g in r.iter('{http://www.w3.org/2000/svg}g') "
    .. "if g.get('id', '').startswith('gnuplot_plot_')))\" '%s' 2>&1")
    :format(path))
  local out = p:read("a")
  p:close()
  return assert(math.tointeger(tonumber(out)), "svg did not parse: " .. out)
end

local function png_size(path)
  local s = read(path)
  assert.equal("\137PNG\r\n\26\n", s:sub(1, 8))
  return string.unpack(">I4I4", s, 17)
end

local x = ml.linspace(0, 6, 40, {device = DEV})
local KINDS = {
  {"line", function(f) f:line(x, x:sin(), {label = "sin"})
                       f:line(x, x:cos(), {label = "cos"}) end, 2},
  {"scatter", function(f) f:scatter(x, x * 2, {label = "a"}) end, 1},
  {"errorbar", function(f) f:errorbar(x, x, x * 0 + 0.1) end, 1},
  {"hist", function(f) f:hist(x, {bins = 7}) end, 1},
  {"bar", function(f) f:bar(ml.ones(3, 2, {device = DEV}),
                            {label = {"a", "b"}}) end, 2},
  {"imshow", function(f) f:imshow(ml.rand(3, 5, 6, {device = DEV})) end, 1},
  {"heatmap", function(f) f:heatmap(ml.eye(3, {device = DEV})) end, 2},
}

local have_gnuplot = os.execute("command -v gnuplot >/dev/null 2>&1")

describe("plot", function()
  if not have_gnuplot then
    pending("gnuplot is not installed (make deps installs gnuplot-nox)")
    return
  end
  local before = leftovers()
  after_each(function() assert.equal(before, leftovers()) end)

  it("writes each kind as a PNG of the requested size", function()
    for _, k in ipairs(KINDS) do
      local path = tmp(".png")
      local f = ml.plot.figure{size = {321, 207}, title = k[1]}
      k[2](f)
      f:save(path)
      local w, h = png_size(path)
      assert.equal(321, w, k[1])
      assert.equal(207, h, k[1])
      os.remove(path)
    end
  end)

  it("writes each kind as an SVG that parses, one element a series", function()
    for _, k in ipairs(KINDS) do
      local path = tmp(".svg")
      local f = ml.plot.figure()
      k[2](f)
      f:save(path)
      assert.equal(k[3], svg_series(path), k[1])
      assert.truthy(read(path):find('width="800"', 1, true), k[1])
      os.remove(path)
    end
  end)

  it("writes PDFs and draws text on a dumb terminal", function()
    local path = tmp(".pdf")
    ml.plot.line({1, 3, 2}, {file = path})
    assert.equal("%PDF", read(path):sub(1, 4))
    os.remove(path)
    local write, out = io.write, {}
    io.write = function(...) for _, s in ipairs({...}) do out[#out + 1] = s end end
    local ok, err = pcall(ml.plot.line, {1, 3, 2}, {title = "in text"})
    io.write = write
    assert(ok, err)
    local text = table.concat(out)
    assert.truthy(text:find("in text", 1, true))
    assert.truthy(text:find("*", 1, true))
  end)

  it("draws subplots in one figure, with log axes and ranges", function()
    local f = ml.plot.figure{layout = {2, 2}, title = "grid", size = {500, 400}}
    f:line({1, 10, 100}, {logy = true, xrange = {1, 3}})
    f:panel(3, {title = "three"}):scatter({1, 2}, {3, 4})
    f:panel(4):hist({1, 2, 2, 3})
    local dir = tmp("")
    local path = tmp(".svg")
    f:save(path, {keep = dir})
    assert.equal(3, svg_series(path))
    local gp = read(dir .. "/plot.gp")
    assert.truthy(gp:find("set multiplot layout 2,2 title 'grid'", 1, true))
    assert.truthy(gp:find("set logscale y", 1, true))
    assert.truthy(gp:find("set xrange [1:3]", 1, true))
    assert.truthy(gp:find("set multiplot next", 1, true))
    assert.truthy(gp:find("set title 'three'", 1, true))
    os.execute("rm -r '" .. dir .. "'")
    os.remove(path)
  end)

  it("gives gnuplot the arrays' values, as binary float64", function()
    local xs = ml.randn(1000, {dtype = "float32", device = DEV})
    local ys = ml.arange(1000, {dtype = "int32", device = DEV})
    local img = ml.rand(7, 5, {device = DEV})
    local f = ml.plot.figure{layout = {1, 2}}
    f:scatter(xs, ys)
    f:panel(2):imshow(img:t())
    local dir = tmp("")
    f:save(tmp(".png"):gsub("%.png$", "") .. ".png", {keep = dir})
    local d1 = ml.load_npy(dir .. "/p1_s1.npy")
    assert.equal("float64", d1.dtype)
    assert.same({1000, 2}, {d1:size(1), d1:size(2)})
    assert.is_true(ml.eq(d1:select(2, 1), xs:cpu():astype("float64")):all())
    assert.is_true(ml.eq(d1:select(2, 2), ys:cpu():astype("float64")):all())
    local d2 = ml.load_npy(dir .. "/p2_s1.npy")
    assert.is_true(ml.eq(d2, img:t():cpu()):all())
    local gp = read(dir .. "/plot.gp")
    local skip = 10 + string.unpack("<I2", read(dir .. "/p1_s1.npy"), 9)
    assert.truthy(gp:find(("p1_s1.npy' binary skip=%d endian=little "
                           .. "format='%%2float64' using 1:2"):format(skip), 1, true))
    assert.truthy(gp:find("array=(7,5) format='%float64' with image", 1, true))
    os.execute("rm -r '" .. dir .. "'")
  end)

  it("counts histograms on the data's device", function()
    local f = ml.plot.figure():hist(ml.array({0, 0.5, 1, 1, 2, 0 / 0},
                                             {device = DEV}), {bins = 2})
    local s = f.panels[1].series[1].data
    assert.same({0.5, 1.5}, s:select(2, 1):totable())
    assert.same({2, 3}, s:select(2, 2):totable())
    assert.same({1, 1}, s:select(2, 3):totable())
    f = ml.plot.figure():hist({1, 2, 3, 9}, {range = {0, 4}, bins = 4,
                                              density = true})
    assert.same({0, 1 / 3, 1 / 3, 1 / 3},
                f.panels[1].series[1].data:select(2, 2):totable())
  end)

  it("shows a stack of images as a grid", function()
    local st = ml.arange(4 * 2 * 3, {device = DEV}):reshape(4, 2, 3)
    local f = ml.plot.figure():imshow(st, {cols = 3})
    local g = f.panels[1].series[1].data
    assert.same({5, 11}, {g:size(1), g:size(2)})
    assert.is_true(ml.eq(g:narrow(1, 4, 2):narrow(2, 1, 3), st[4]:cpu()):all())
    assert.is_true(ml.isnan(g:select(1, 3)):all())
  end)

  it("raises on bad data and options, naming the function", function()
    assert.equal("line: x has 3 values but y has 2",
                 errmsg(ml.plot.line, {1, 2, 3}, {1, 2}, {file = "a.png"}))
    assert.equal("errorbar: x has 2 values but err has 1",
                 errmsg(ml.plot.errorbar, {1, 2}, {1, 2}, {1}))
    assert.equal("scatter: empty data (x is 0)",
                 errmsg(ml.plot.scatter, ml.zeros(0), ml.zeros(0)))
    assert.equal("hist: x must be 1-D, not 2x2",
                 errmsg(ml.plot.hist, ml.zeros(2, 2)))
    assert.equal("imshow: image must be 2-D or 3-D, not 4",
                 errmsg(ml.plot.imshow, ml.zeros(4)))
    assert.truthy(errmsg(ml.plot.line, {1, 2}, {colour = "red"})
      :find("line: unknown option 'colour' (did you mean 'color'?)", 1, true))
    assert.truthy(errmsg(ml.plot.figure, {sise = {1, 2}})
      :find("figure: unknown option 'sise'", 1, true))
    assert.equal("save: cannot tell the format of 'x.jpg' (use .png, .svg "
                 .. "or .pdf)", errmsg(ml.plot.figure():line({1}).save,
                                       ml.plot.figure():line({1}), "x.jpg"))
    assert.equal("save: the figure has nothing to draw",
                 errmsg(function() ml.plot.figure():save("x.png") end))
    assert.equal("line: option 'file' is for the one-call form ml.plot.line "
                 .. "(give it to ml.plot.figure or f:save)",
                 errmsg(function() ml.plot.figure():line({1}, {file = "a.png"}) end))
    assert.equal("panel: index 3 out of range (the layout has 2 panels)",
                 errmsg(function() ml.plot.figure{layout = {1, 2}}:panel(3) end))
    assert.equal("imshow: cmap must be grey, viridis, hot or blues, not jet",
                 errmsg(ml.plot.imshow, ml.zeros(2, 2), {cmap = "jet"}))
    assert.equal("bar: 2 names for 3 bars",
                 errmsg(ml.plot.bar, {1, 2, 3}, {names = {"a", "b"}}))
  end)

  it("passes gnuplot's message on when gnuplot fails", function()
    local f = ml.plot.figure{legend = "nowhere"}:line({1, 2})
    local msg = errmsg(function() f:save(tmp(".png")) end)
    assert.truthy(msg:find("^save: gnuplot failed: "), msg)
    assert.truthy(msg:find("unknown key option", 1, true), msg)
    msg = errmsg(function() ml.plot.line({1, 2}, {file = "/nonexistent/x.svg"}) end)
    assert.truthy(msg:find("cannot open file", 1, true), msg)
  end)

  it("says so when gnuplot is not on PATH, leaving nothing behind", function()
    local dir = tmp("")
    os.execute("mkdir " .. dir)
    local bin = assert(os.getenv("MOONLAB_BIN"), "MOONLAB_BIN")
    local p = io.popen(("cd %s && TMPDIR=%s PATH= %s -e "
      .. "'ml.plot.line({1, 2}, {file = \"x.png\"})' 2>&1"):format(dir, dir, bin))
    local out = p:read("a")
    p:close()
    assert.truthy(out:find("line: gnuplot not found on PATH (install "
                           .. "gnuplot-nox)", 1, true) or
                  out:find("save: gnuplot not found on PATH (install "
                           .. "gnuplot-nox)", 1, true), out)
    local ls = io.popen("ls -A " .. dir)
    assert.equal("", ls:read("a"))
    ls:close()
    os.remove(dir)
  end)
end)
