-- ml.plot: figures drawn by gnuplot. A figure is a grid of panels, each
-- with its series (lines, points, bars, images) and its axes; the figure
-- writes every series' data as a binary .npy file (float64, copied to the
-- host once, whatever the array's device and dtype), a gnuplot script that
-- reads those files with `binary skip=... format=...`, runs gnuplot on it,
-- and removes what it wrote unless asked to keep it. Files are chosen by
-- their extension (.png through pngcairo, .svg, .pdf); without a file the
-- figure is drawn on the terminal (sixel when the terminal says it can,
-- else text). Each kind is one function that is both the figure's method
-- and a one-call form:
--
--   local f = ml.plot.figure{title = "fit"}
--   f:line(x, y, {label = "data"}); f:save("fit.png")
--   ml.plot.line(x, y, {file = "fit.png", logy = true})
local ml = require "moonlab"
local check_options = require("moonlab.options").check
local gnuplot = require "moonlab.gnuplot"
local fail = require("moonlab.args").fail
local quote = gnuplot.quote

local M = {}
local Figure = {}
Figure.__index = Figure

local DEFAULT_SIZE = {800, 600}
local TERMINALS = {
  png = "pngcairo size %d,%d noenhanced font 'sans,10'",
  svg = "svg size %d,%d noenhanced font 'sans,10' background '#ffffff'",
  pdf = "pdfcairo size %gin,%gin noenhanced font 'sans,10'",
}
local PALETTES = {
  grey = "set palette grey",
  viridis = "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', "
            .. "3 '#5ec962', 4 '#fde725')",
  hot = "set palette rgbformulae 21,22,23",
  blues = "set palette defined (0 '#f7fbff', 1 '#6baed6', 2 '#08306b')",
}
local STYLES = {lines = "lines", points = "points pt 7",
                linespoints = "linespoints pt 7"}
-- Options of the figure (one-call forms), and of a panel.
local FIGURE_OPTS = {file = true, size = true, layout = true}
local PANEL_OPTS = {"title", "xlabel", "ylabel", "logx", "logy", "xrange",
                    "yrange", "legend", "grid"}

-- Helpers ----------------------------------------------------------------

local function shape_of(a)
  local s = {}
  for i = 1, a.ndim do s[i] = tostring(a:size(i)) end
  return a.ndim == 0 and "a scalar" or table.concat(s, "x")
end

-- v (an array or a table of numbers) as an array with ndim dimensions (a
-- set of allowed counts), not empty.
local function data(level, op, what, v, ndims)
  local a = v
  if type(v) == "table" and not ml.is_array(v) then
    local ok, r = pcall(ml.array, v, {dtype = "float64", device = "cpu"})
    if not ok then fail(level + 1, "%s: %s: %s", op, what, r) end
    a = r
  elseif not ml.is_array(v) then
    fail(level + 1, "%s: %s must be an array or a table of numbers, not %s",
         op, what, type(v))
  end
  if not ndims[a.ndim] then
    local allowed = {}
    for n in pairs(ndims) do allowed[#allowed + 1] = n .. "-D" end
    table.sort(allowed)
    fail(level + 1, "%s: %s must be %s, not %s", op, what,
         table.concat(allowed, " or "), shape_of(a))
  end
  if a:numel() == 0 then
    fail(level + 1, "%s: empty data (%s is %s)", op, what, shape_of(a))
  end
  return a
end

local function same_length(level, op, a, an, b, bn)
  if a:size(1) ~= b:size(1) then
    fail(level + 1, "%s: %s has %d values but %s has %d", op, an, a:size(1),
         bn, b:size(1))
  end
end

-- Columns (1-D arrays of one length) as one n x c float64 host array.
local function host(cols)
  local c = {}
  for i, a in ipairs(cols) do c[i] = a:cpu():astype("float64") end
  return #c == 1 and c[1]:reshape(c[1]:size(1), 1) or ml.stack(c, 2)
end

local function check_pair(level, op, name, v)
  if v ~= nil and not (type(v[1]) == "number" and type(v[2]) == "number"
                       and #v == 2) then
    fail(level + 1, "%s: %s must be a table of two numbers", op, name)
  end
end

-- The figure --------------------------------------------------------------

local function new_panel() return {series = {}} end

local function set_panel(level, op, p, opts)
  check_pair(level + 1, op, "xrange", opts.xrange)
  check_pair(level + 1, op, "yrange", opts.yrange)
  for _, k in ipairs(PANEL_OPTS) do
    if opts[k] ~= nil then p[k] = opts[k] end
  end
end

local function make_figure(level, op, opts)
  local size = opts.size or DEFAULT_SIZE
  check_pair(level + 1, op, "size", opts.size)
  if size[1] < 1 or size[2] < 1 then
    fail(level + 1, "%s: size must be positive (got %gx%g)", op, size[1],
         size[2])
  end
  local layout = opts.layout or {1, 1}
  check_pair(level + 1, op, "layout", opts.layout)
  local rows, cols = math.tointeger(layout[1]), math.tointeger(layout[2])
  if not rows or not cols or rows < 1 or cols < 1 then
    fail(level + 1, "%s: layout must be two positive integers", op)
  end
  local f = setmetatable({size = {size[1], size[2]}, rows = rows,
                          cols = cols, panels = {}, current = 1}, Figure)
  for i = 1, rows * cols do f.panels[i] = new_panel() end
  if rows * cols > 1 then
    f.title = opts.title
  end
  local panel_opts = {}
  for _, k in ipairs(PANEL_OPTS) do panel_opts[k] = opts[k] end
  if rows * cols > 1 then panel_opts.title = nil end
  set_panel(level + 1, op, f.panels[1], panel_opts)
  return f
end

function M.figure(opts)
  check_options("plot.figure", opts)
  opts = opts or {}
  if opts.file then
    fail(2, "figure: option 'file' is for the one-call forms (use f:save)")
  end
  return make_figure(2, "figure", opts)
end

function M.panel(f, i, opts)
  check_options("plot.panel", opts)
  if getmetatable(f) ~= Figure then
    fail(2, "panel: expects a figure (f:panel(i)), not %s", type(f))
  end
  if math.type(i) ~= "integer" or i < 1 or i > #f.panels then
    fail(2, "panel: index %s out of range (the layout has %d panels)",
         tostring(i), #f.panels)
  end
  f.current = i
  set_panel(2, "panel", f.panels[i], opts or {})
  return f
end

-- Series kinds -------------------------------------------------------------
-- Each adds to panel p the series made of its arguments; `level` is the
-- level of the user's call.

-- The drawing of n points: past MANY_POINTS, points without a size are
-- dots (cairo draws a million circles in seconds, dots ten times faster).
local MANY_POINTS = 100000

local function style_of(level, op, opts, n)
  local s = opts.style or (op == "scatter" and "points" or "lines")
  if not STYLES[s] then
    fail(level + 1, "%s: style must be lines, points or linespoints, not %s",
         op, tostring(s))
  end
  if s == "points" and not opts.pointsize and n > MANY_POINTS then
    return "with dots"
  end
  local w = {"with " .. STYLES[s]}
  if opts.width then w[#w + 1] = ("lw %g"):format(opts.width) end
  if opts.pointsize then w[#w + 1] = ("ps %g"):format(opts.pointsize)
  elseif s ~= "lines" then w[#w + 1] = "ps 0.5" end
  return table.concat(w, " ")
end

local function color_of(opts)
  return opts.color and (" lc rgb " .. quote(opts.color)) or ""
end

local function add(p, s) p.series[#p.series + 1] = s end

-- x and y of line-like calls: (y) or (x, y).
local function xy(level, op, pos)
  if #pos == 1 then
    local y = data(level + 1, op, "y", pos[1], {[1] = true})
    return ml.arange(1, y:size(1) + 1, {dtype = "float64"}), y
  end
  local x = data(level + 1, op, "x", pos[1], {[1] = true})
  local y = data(level + 1, op, "y", pos[2], {[1] = true})
  same_length(level + 1, op, x, "x", y, "y")
  return x, y
end

local KINDS = {}

-- Whether tic names are too long to sit side by side.
local function long(names)
  local chars = 0
  for _, name in ipairs(names) do chars = chars + #tostring(name) + 2 end
  return chars > 60
end

function KINDS.line(level, p, pos, opts, op)
  local x, y = xy(level + 1, op, pos)
  add(p, {data = host({x, y}), using = "1:2", label = opts.label,
          with = style_of(level + 1, op, opts, x:size(1)) .. color_of(opts)})
end
KINDS.scatter = KINDS.line

function KINDS.errorbar(level, p, pos, opts, op)
  local x = data(level + 1, op, "x", pos[1], {[1] = true})
  local y = data(level + 1, op, "y", pos[2], {[1] = true})
  local e = data(level + 1, op, "err", pos[3], {[1] = true})
  same_length(level + 1, op, x, "x", y, "y")
  same_length(level + 1, op, x, "x", e, "err")
  local s = opts.style or "points"
  if s ~= "points" and s ~= "lines" then
    fail(level + 1, "errorbar: style must be points or lines, not %s",
         tostring(s))
  end
  local w = s == "lines" and "with yerrorlines pt 7 ps 0.5"
            or "with yerrorbars pt 7 ps 0.5"
  if opts.width then w = w .. (" lw %g"):format(opts.width) end
  add(p, {data = host({x, y, e}), using = "1:2:3", label = opts.label,
          with = w .. color_of(opts)})
end

-- Boxes: the one drawing of bars and histograms (centre, height, width).
local function boxes(p, x, h, width, opts)
  add(p, {data = host({x, h, width}), using = "1:2:3", label = opts.label,
          with = "boxes fs transparent solid 0.6 border" .. color_of(opts)})
end

function KINDS.hist(level, p, pos, opts, op)
  local x = data(level + 1, op, "x", pos[1], {[1] = true})
  local bins = opts.bins or 10
  if math.type(bins) ~= "integer" and not (bins == math.floor(bins)) or
      bins < 1 then
    fail(level + 1, "hist: bins must be a positive integer (got %s)", bins)
  end
  bins = math.tointeger(bins)
  x = x:astype("float64")
  local nan = ml.isnan(x)
  local lo, hi
  if opts.range then
    check_pair(level + 1, op, "range", opts.range)
    lo, hi = opts.range[1], opts.range[2]
    if not (lo < hi) then
      fail(level + 1, "hist: range must be increasing (got %g, %g)", lo, hi)
    end
  else
    lo = ml.where(nan, math.huge, x):min()
    hi = ml.where(nan, -math.huge, x):max()
    if lo == math.huge then fail(level + 1, "hist: every value is NaN") end
    if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
  end
  local w = (hi - lo) / bins
  local inside = ml.logical_and(ml.ge(x, lo), ml.le(x, hi))
  local bin = ml.where(inside, ((x - lo) / w):floor(), 0):clip(0, bins - 1)
  local counts = ml.zeros(bins, {device = x.device})
    :index_add(1, bin:astype("int64") + 1, inside:astype("float64"))
  if opts.density then
    counts = counts / (inside:sum() * w)
  end
  local centres = ml.arange(bins, {dtype = "float64"}) * w + (lo + w / 2)
  boxes(p, centres, counts, ml.full({bins}, w), opts)
end

function KINDS.bar(level, p, pos, opts, op)
  local h = data(level + 1, op, "heights", pos[1], {[1] = true, [2] = true})
  local n = h:size(1)
  local s = h.ndim == 2 and h:size(2) or 1
  local names = opts.names
  if names ~= nil and #names ~= n then
    fail(level + 1, "bar: %d names for %d bars", #names, n)
  end
  local labels = opts.label
  if s > 1 and labels ~= nil and (type(labels) ~= "table" or #labels ~= s) then
    fail(level + 1, "bar: label must list %d names, one per column", s)
  end
  local width = (opts.width or 0.8) / s
  for j = 1, s do
    local col = s > 1 and h:select(2, j) or h
    local x = ml.arange(1, n + 1, {dtype = "float64"})
              + (j - (s + 1) / 2) * width
    boxes(p, x, col, ml.full({n}, width),
          {label = s > 1 and labels and labels[j] or (s == 1 and labels
                                                        or nil),
           color = opts.color})
  end
  if names then
    local t = {}
    for i, name in ipairs(names) do t[i] = ("%s %d"):format(quote(name), i) end
    p.xtics = "(" .. table.concat(t, ", ") .. ")"
    p.xtics_rotate = long(names)
  end
  p.xrange_default = {0.5, n + 0.5}
  p.yrange_default = {0, nil}
end

-- Images: an h x w array, row 1 at the top.
local function image(level, op, p, img, opts)
  local cmap = opts.cmap or "grey"
  if not PALETTES[cmap] then
    fail(level + 1, "%s: cmap must be grey, viridis, hot or blues, not %s",
         op, tostring(cmap))
  end
  check_pair(level + 1, op, "range", opts.range)
  local h, w = img:size(1), img:size(2)
  add(p, {data = img:cpu():astype("float64"), image = {w, h},
          label = opts.label})
  p.palette = PALETTES[cmap]
  p.colorbar = opts.colorbar ~= false
  p.cbrange = opts.range
  p.image = {w, h}
end

function KINDS.imshow(level, p, pos, opts, op)
  local x = data(level + 1, op, "image", pos[1], {[2] = true, [3] = true})
  if x.ndim == 3 then
    local n, h, w = x:size(1), x:size(2), x:size(3)
    local cols = opts.cols or math.ceil(math.sqrt(n))
    if math.type(cols) ~= "integer" or cols < 1 then
      fail(level + 1, "imshow: cols must be a positive integer")
    end
    local rows = math.ceil(n / cols)
    local g = ml.full({rows * (h + 1) - 1, cols * (w + 1) - 1}, 0 / 0,
                      {device = x.device})
    for i = 1, n do
      local r, c = (i - 1) // cols, (i - 1) % cols
      g[{{r * (h + 1) + 1, r * (h + 1) + h}, {c * (w + 1) + 1,
         c * (w + 1) + w}}] = x[i]:astype("float64")
    end
    x = g
  elseif opts.cols then
    fail(level + 1, "imshow: cols is for an n x h x w stack, not %s",
         shape_of(x))
  end
  image(level + 1, op, p, x, opts)
end

function KINDS.heatmap(level, p, pos, opts, op)
  local m = data(level + 1, op, "matrix", pos[1], {[2] = true})
  local h, w = m:size(1), m:size(2)
  for _, k in ipairs({{"xnames", w}, {"ynames", h}}) do
    local names = opts[k[1]]
    if names ~= nil and #names ~= k[2] then
      fail(level + 1, "heatmap: %s has %d names for %d %s", k[1], #names,
           k[2], k[1] == "xnames" and "columns" or "rows")
    end
  end
  image(level + 1, op, p, m, {cmap = opts.cmap or "blues", range = opts.range,
                              colorbar = opts.colorbar, label = opts.label})
  if opts.counts ~= false then
    local v = m:cpu():astype("float64"):totable()
    local lo, hi = math.huge, -math.huge
    for i = 1, h do for j = 1, w do
      lo, hi = math.min(lo, v[i][j]), math.max(hi, v[i][j])
    end end
    if opts.range then lo, hi = opts.range[1], opts.range[2] end
    local fmt, mid, lines = opts.format or "%g", (lo + hi) / 2, {}
    for i = 1, h do for j = 1, w do
      lines[#lines + 1] = ('%d %d "%s" %d'):format(j - 1, i - 1,
        fmt:format(v[i][j]), v[i][j] > mid and 0xffffff or 0)
    end end
    p.labels = table.concat(lines, "\n")
  end
  local function tics(names)
    local t = {}
    for i, name in ipairs(names) do t[i] = ("%s %d"):format(quote(name), i - 1) end
    return "(" .. table.concat(t, ", ") .. ")"
  end
  if opts.xnames then
    p.xtics, p.xtics_rotate = tics(opts.xnames), long(opts.xnames)
  end
  if opts.ynames then p.ytics = tics(opts.ynames) end
end

-- The public kinds: f:kind(...) adds to the figure's current panel (and
-- takes the panel's options); ml.plot.kind(...) draws one figure made of
-- the series and the figure's options, to opts.file or the terminal. The
-- data arguments: POSITIONAL[kind] of them (line and scatter: y, or x and
-- y), then the options.
local POSITIONAL = {line = 2, scatter = 2, errorbar = 3, hist = 1, bar = 1,
                    imshow = 1, heatmap = 1}

local function is_options(v)
  return type(v) == "table" and not ml.is_array(v) and v[1] == nil
end

local function kind(name)
  local entry = "plot." .. name
  return function(first, ...)
    local is_method = getmetatable(first) == Figure
    local args = is_method and table.pack(...) or table.pack(first, ...)
    local npos = POSITIONAL[name]
    if npos == 2 and (args.n == 1 or is_options(args[2])) then npos = 1 end
    if args.n > npos + 1 then
      fail(2, "%s: %d arguments (expects %d data argument%s and options)",
           name, args.n, npos, npos > 1 and "s" or "")
    end
    local opts = args[npos + 1]
    if opts ~= nil and not is_options(opts) then
      fail(2, "%s: options must be a table, not %s", name,
           ml.is_array(opts) and "an array" or type(opts))
    end
    check_options(entry, opts)
    opts = opts or {}
    local pos = {}
    for i = 1, npos do
      if args[i] == nil then
        fail(2, "%s: argument %d (data) is missing", name, i)
      end
      pos[i] = args[i]
    end
    local f = first
    if is_method then
      for k in pairs(opts) do
        if FIGURE_OPTS[k] then
          fail(2, "%s: option '%s' is for the one-call form ml.plot.%s "
               .. "(give it to ml.plot.figure or f:save)", name, k, name)
        end
      end
      set_panel(2, name, f.panels[f.current], opts)
    else
      f = make_figure(2, name, opts)
    end
    KINDS[name](2, f.panels[f.current], pos, opts, name)
    if not is_method then
      if opts.file then f:save(opts.file) else f:show() end
    end
    return f
  end
end

for _, name in ipairs({"line", "scatter", "hist", "bar", "errorbar",
                       "imshow", "heatmap"}) do
  M[name] = kind(name)
  Figure[name] = M[name]
end
Figure.panel = M.panel

local function output_opts(op, opts)
  if opts ~= nil and opts.keep ~= nil and type(opts.keep) ~= "string" then
    fail(3, "%s: keep must be a directory name", op)
  end
  return opts and opts.keep
end

function M.save(f, path, opts)
  check_options("plot.save", opts)
  if getmetatable(f) ~= Figure then
    fail(2, "save: expects a figure (f:save(path)), not %s", type(f))
  end
  if type(path) ~= "string" then
    fail(2, "save: path must be a string, not %s", type(path))
  end
  local ext = path:match("%.(%w+)$")
  ext = ext and ext:lower()
  local term = TERMINALS[ext]
  if not term then
    fail(2, "save: cannot tell the format of '%s' (use .png, .svg or .pdf)",
         path)
  end
  local w, h = f.size[1], f.size[2]
  if ext == "pdf" then w, h = w / 96, h / 96 end
  gnuplot.render("save", f, term:format(w, h), path, output_opts("save", opts))
  return f
end

function M.show(f, opts)
  check_options("plot.show", opts)
  if getmetatable(f) ~= Figure then
    fail(2, "show: expects a figure (f:show()), not %s", type(f))
  end
  local term = opts and opts.terminal
  if term ~= nil and term ~= "dumb" and term ~= "sixel" then
    fail(2, "show: terminal must be dumb or sixel, not %s", tostring(term))
  end
  term = term or (gnuplot.sixel() and "sixel" or "dumb")
  local clause
  if term == "sixel" then
    clause = ("sixelgd size %d,%d truecolor noenhanced"):format(f.size[1],
                                                                 f.size[2])
  else
    local cols = math.tointeger(tonumber(os.getenv("COLUMNS") or "")) or 80
    local rows = math.tointeger(tonumber(os.getenv("LINES") or "")) or 25
    clause = ("dumb size %d,%d noenhanced"):format(cols, rows - 1)
  end
  io.write(gnuplot.render("show", f, clause, nil, output_opts("show", opts)))
  io.flush()
  return f
end

Figure.save = M.save
Figure.show = M.show

return M
