-- Help entries: plots (the ml.plot namespace).
local function opt(name, type, default, doc)
  return {name = name, type = type, default = default, doc = doc}
end

-- Options of a panel: ml.plot.figure, f:panel and every kind take them.
local PANEL = {
  opt("title", "string", "none", "the panel's title (the figure's title, "
      .. "for ml.plot.figure with several panels)"),
  opt("xlabel", "string", "none", "the x axis' label"),
  opt("ylabel", "string", "none", "the y axis' label"),
  opt("logx", "boolean", "false", "a logarithmic x axis"),
  opt("logy", "boolean", "false", "a logarithmic y axis"),
  opt("xrange", "table", "automatic", "{lo, hi} of the x axis"),
  opt("yrange", "table", "automatic", "{lo, hi} of the y axis"),
  opt("legend", "string|boolean", '"top right"',
      "where the legend goes (gnuplot's key position), false: none"),
  opt("grid", "boolean", "false", "grid lines at the tics"),
}
-- Options of the one-call forms only.
local ONE_CALL = {
  opt("file", "string", "none",
      "draw into this .png, .svg or .pdf file; none: on the terminal"),
  opt("size", "table", "{800, 600}", "{width, height} in pixels"),
}
local LABEL = opt("label", "string", "none", "the series' name in the legend")
local COLOR = opt("color", "string", "gnuplot's cycle",
                  'a colour: a name ("red") or "#rrggbb"')
local CMAP = opt("cmap", "string", '"grey"',
                 'the colour map: "grey", "viridis", "hot" or "blues"')
local COLORBAR = opt("colorbar", "boolean", "true", "draw the colour bar")
local RANGE = opt("range", "table", "the data's", "{lo, hi} of the colour map")

local function options(...)
  local list = {}
  for _, group in ipairs({...}) do
    for _, o in ipairs(group) do list[#list + 1] = o end
  end
  return list
end

local function kind(name, usage, doc, own, example)
  return {
    name = "plot." .. name,
    usage = usage,
    doc = doc,
    options = options(own, PANEL, ONE_CALL),
    returns = "the figure (a new one for the one-call form).",
    example = example,
  }
end

local LINE_STYLE = {
  LABEL, COLOR,
  opt("style", "string", '"lines"', '"lines", "points" or "linespoints"'),
  opt("width", "number", "1", "the line width"),
  opt("pointsize", "number", "0.5", "the size of the points"),
}

return {
  title = "Plots",
  namespace = "plot",
  intro = [[
Figures drawn by gnuplot (the Debian package gnuplot-nox). A figure,
made by ml.plot.figure, is a grid of panels, each with its series and its
axes; f:line(...), f:scatter(...), ... add a series to the current panel
(f:panel(i) selects one) and f:save(file) or f:show() draw it. Each kind
is also a one-call form, ml.plot.line(x, y, {file = "x.png"}), which
draws a figure of that one series, into opts.file or, without a file, on
the terminal. Data are arrays of any device and dtype, or tables of
numbers; each goes to gnuplot once, as binary float64 (a file of a
private temporary directory, removed afterwards), so a 1e7-point scatter
takes seconds. A file's format follows its extension: .png (cairo), .svg
or .pdf; the terminal gets sixel graphics when it says it can draw them
(or MOONLAB_PLOT_TERMINAL=sixel), else text. Errors: data of mismatched
lengths, empty data, unknown options, gnuplot missing from PATH, and
gnuplot's own failures, with its message.]],
  entries = {
    {
      name = "plot.figure",
      usage = {"ml.plot.figure([opts])"},
      doc = [[
A new empty figure of layout[1] x layout[2] panels, filled row by row,
the first one current; the panel options given here apply to the first
panel, but for title, which titles the whole figure when there are
several panels.]],
      options = options({
        opt("size", "table", "{800, 600}", "{width, height} in pixels"),
        opt("layout", "table", "{1, 1}", "{rows, columns} of panels"),
      }, PANEL),
      returns = "a new figure.",
      example = [[
local f = ml.plot.figure{layout = {1, 2}, title = "two panels"}
f:line({1, 4, 9}, {label = "squares"})
f:panel(2, {title = "logs", logy = true}):line({1, 10, 100})
local path = os.tmpname() .. ".svg"
f:save(path)
print(io.open(path):read("a"):find("<svg") ~= nil)  --> true
os.remove(path)]],
    },
    {
      name = "plot.panel",
      usage = {"f:panel(i [, opts])", "ml.plot.panel(f, i [, opts])"},
      doc = [[
Makes panel i (1-based, row by row) the current panel of figure f, the
one its next series go to, and sets the panel options given.]],
      options = PANEL,
      returns = "the figure f.",
      example = [[
local f = ml.plot.figure{layout = {2, 1}}
f:panel(2, {xlabel = "n", logx = true})
print(#f.panels, f.current)  --> 2 2]],
    },
    kind("line", {"f:line([x,] y [, opts])", "ml.plot.line([x,] y [, opts])"},
         [[
A line through the points (x[i], y[i]), x being 1, 2, ..., n when not
given; x and y are 1-D of one length. Several calls on one panel draw
several series, named in the legend by their labels.]], LINE_STYLE, [[
local x = ml.linspace(0, 6, 50)
local path = os.tmpname() .. ".png"
ml.plot.line(x, x:sin(), {file = path, title = "sin", size = {320, 240}})
local png = io.open(path, "rb"):read("a")
local w, h = string.unpack(">I4I4", png, 17)
print(w, h)  --> 320 240
os.remove(path)]]),
    kind("scatter",
         {"f:scatter(x, y [, opts])", "ml.plot.scatter(x, y [, opts])"},
         [[
The points (x[i], y[i]); x and y are 1-D of one length. The data go to
gnuplot as binary and more than 100000 points without a pointsize are
drawn as dots, so millions of points draw in seconds.]],
         LINE_STYLE, [[
ml.seed(1)
local x, y = ml.randn(1000), ml.randn(1000)
local f = ml.plot.figure():scatter(x, y, {label = "normal"})
local path = os.tmpname() .. ".svg"
f:save(path)
print(#f.panels[1].series)  --> 1
os.remove(path)]]),
    kind("errorbar", {"f:errorbar(x, y, err [, opts])",
                      "ml.plot.errorbar(x, y, err [, opts])"}, [[
The points (x[i], y[i]) with error bars from y[i] - err[i] to y[i] +
err[i]; x, y and err are 1-D of one length. style "lines" joins the
points.]], {LABEL, COLOR,
            opt("style", "string", '"points"', '"points" or "lines"'),
            opt("width", "number", "1", "the line width")}, [[
local f = ml.plot.figure{xlabel = "n"}
f:errorbar({1, 2, 3}, {2.0, 2.5, 2.2}, {0.1, 0.3, 0.2}, {label = "mean"})
print(f.panels[1].xlabel)  --> n]]),
    kind("hist", {"f:hist(x [, opts])", "ml.plot.hist(x [, opts])"}, [[
A histogram of the values of x (1-D): bins bars of equal width over
range, the smallest to the largest value by default; a value on a bin's
right edge counts in that bin only for the last one; NaN and values
outside range are left out. The counts are computed on x's device.]],
         {LABEL, COLOR,
          opt("bins", "integer", "10", "the number of bins"),
          opt("range", "table", "{min, max} of x", "{lo, hi} of the bins"),
          opt("density", "boolean", "false",
              "heights that integrate to 1 instead of counts")}, [[
ml.seed(2)
local f = ml.plot.figure():hist(ml.randn(10000), {bins = 30})
print(#f.panels[1].series)  --> 1]]),
    kind("bar", {"f:bar(heights [, opts])", "ml.plot.bar(heights [, opts])"},
         [[
Bars of the given heights at x = 1, 2, ..., n: heights 1-D, or n x s for
s bars side by side in each group, with label listing the s series'
names; names label the groups on the x axis.]],
         {opt("label", "string|table", "none",
              "the series' name, or the s names of an n x s array"),
          COLOR,
          opt("names", "table", "none", "the n groups' names"),
          opt("width", "number", "0.8", "the width of a group")}, [[
local f = ml.plot.figure{ylabel = "ratio"}
f:bar({0.5, 1.2, 0.9}, {names = {"knn", "gemm", "sort"}})
print(#f.panels[1].series)  --> 1]]),
    kind("imshow",
         {"f:imshow(image [, opts])", "ml.plot.imshow(image [, opts])"}, [[
An h x w array as an image, row 1 at the top, its values mapped through
a colour map, with a colour bar; an n x h x w stack is shown as a grid
of its n images, cols to a row, one pixel apart, on one colour map.]],
         {LABEL, CMAP, COLORBAR, RANGE,
          opt("cols", "integer", "ceil(sqrt(n))",
              "images per row of a stack")}, [[
local f = ml.plot.figure():imshow(ml.rand(4, 8, 8), {cols = 2})
print(f.panels[1].image[1], f.panels[1].image[2])  --> 17 17]]),
    kind("heatmap",
         {"f:heatmap(m [, opts])", "ml.plot.heatmap(m [, opts])"}, [[
A matrix as coloured cells, row 1 at the top, each with its value
written in it (in white on the darker half of the colour map), as
confusion matrices are shown; xnames and ynames label the columns and
the rows.]],
         {LABEL, opt("cmap", "string", '"blues"',
                     'the colour map: "grey", "viridis", "hot" or "blues"'),
          COLORBAR, RANGE,
          opt("counts", "boolean", "true", "write the values in the cells"),
          opt("format", "string", '"%g"', "the format of the values"),
          opt("xnames", "table", "none", "the columns' names"),
          opt("ynames", "table", "none", "the rows' names")}, [[
local f = ml.plot.figure{xlabel = "predicted", ylabel = "true"}
f:heatmap(ml.array({{50, 2}, {5, 43}}), {xnames = {"a", "b"}})
print(f.panels[1].image[1])  --> 2]]),
    {
      name = "plot.save",
      usage = {"f:save(path [, opts])", "ml.plot.save(f, path [, opts])"},
      doc = [[
Draws figure f into the file path, whose extension chooses the format:
.png (cairo), .svg or .pdf, of the figure's size in pixels (a PDF at 96
pixels to the inch). The data and the gnuplot script are written to a
private temporary directory that is removed afterwards, or to opts.keep,
which keeps them (to rerun gnuplot on keep/plot.gp). An error when the
figure is empty, when gnuplot is not on PATH, and when gnuplot fails,
with gnuplot's message.]],
      options = {
        opt("keep", "string", "none",
            "a directory that keeps the data files and plot.gp"),
      },
      returns = "the figure f.",
      example = [[
local f = ml.plot.figure():line({3, 1, 2})
local path = os.tmpname() .. ".pdf"
f:save(path)
print(io.open(path, "rb"):read(4))  --> %PDF
os.remove(path)]],
    },
    {
      name = "plot.show",
      usage = {"f:show([opts])", "ml.plot.show(f [, opts])"},
      doc = [[
Draws figure f on the terminal: as sixel graphics of the figure's size
when the terminal answers that it draws them (or MOONLAB_PLOT_TERMINAL
is "sixel"), else as text of $COLUMNS x $LINES characters (80 x 25 by
default). The one-call forms show their figure so when given no file.]],
      options = {
        opt("terminal", "string", "automatic", '"dumb" (text) or "sixel"'),
        opt("keep", "string", "none",
            "a directory that keeps the data files and plot.gp"),
      },
      returns = "the figure f.",
      example = [[
local f = ml.plot.figure{title = "text"}:line({1, 3, 2})
f:show({terminal = "dumb"})]],
    },
  },
}
