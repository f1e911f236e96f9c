-- ml.plot's drawing (src/lua/moonlab/plot.lua makes the figures): a
-- figure's series written as .npy files, the gnuplot script that reads
-- them as binary, gnuplot run on it with its messages kept, and every file
-- removed afterwards, errors included.
local ml = require "moonlab"
local fail = require("moonlab.args").fail

local M = {}

-- s as a gnuplot string.
function M.quote(s)
  return "'" .. tostring(s):gsub("'", "''") .. "'"
end
local quote = M.quote

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function range_text(r)
  local function b(v) return v == nil and "*" or ("%.17g"):format(v) end
  return ("[%s:%s]"):format(b(r[1]), b(r[2]))
end

-- The gnuplot script --------------------------------------------------------

-- Writes array a (host, float64) as dir/name.npy; returns the gnuplot
-- clause that reads it.
local function write_data(dir, files, name, a)
  local path = dir .. "/" .. name .. ".npy"
  files[#files + 1] = path
  ml.save_npy(path, a)
  local f = assert(io.open(path, "rb"))
  local head = f:read(10)
  f:close()
  local skip = 10 + string.unpack("<I2", head, 9)
  return quote(path) .. (" binary skip=%d endian=little"):format(skip)
end

local function panel_script(lines, dir, files, index, p)
  local function set(fmt, ...) lines[#lines + 1] = fmt:format(...) end
  set("reset")
  if p.title then set("set title %s", quote(p.title)) end
  if p.xlabel then set("set xlabel %s", quote(p.xlabel)) end
  if p.ylabel then set("set ylabel %s", quote(p.ylabel)) end
  if p.logx then set("set logscale x") end
  if p.logy then set("set logscale y") end
  if p.grid then set("set grid") end
  if p.legend == false then
    set("unset key")
  else
    set("set key %s", type(p.legend) == "string" and p.legend or "top right")
  end
  local xr = p.xrange or p.xrange_default
  if p.image then
    local w, h = p.image[1], p.image[2]
    xr = p.xrange or {-0.5, w - 0.5}
    set("set yrange %s", range_text(p.yrange or {h - 0.5, -0.5}))
    set("set size ratio -1")
    set("set tics scale 0")
    if not p.xtics then set("unset xtics") end
    if not p.ytics then set("unset ytics") end
    set("%s", p.palette)
    if p.cbrange then set("set cbrange %s", range_text(p.cbrange)) end
    if not p.colorbar then set("unset colorbox") end
  elseif p.yrange or (p.yrange_default and not p.logy) then
    set("set yrange %s", range_text(p.yrange or p.yrange_default))
  end
  if xr then set("set xrange %s", range_text(xr)) end
  if p.xtics then
    set("set xtics %s%s", p.xtics, p.xtics_rotate and " rotate by 45 right"
        or "")
  end
  if p.ytics then set("set ytics %s", p.ytics) end
  local items = {}
  for i, s in ipairs(p.series) do
    local src = write_data(dir, files, ("p%d_s%d"):format(index, i), s.data)
    local title = s.label and ("title " .. quote(s.label)) or "notitle"
    if s.image then
      items[#items + 1] = ("%s array=(%d,%d) format='%%float64' with image %s")
        :format(src, s.image[1], s.image[2], title)
    else
      items[#items + 1] = ("%s format='%%%dfloat64' using %s with %s %s")
        :format(src, s.data:size(2), s.using, s.with:gsub("^with ", ""),
                title)
    end
  end
  if p.labels then
    local block = ("$labels%d"):format(index)
    set("%s << EOD\n%s\nEOD", block, p.labels)
    items[#items + 1] = block .. " using 1:2:3:4 with labels tc rgb variable "
                        .. "notitle"
  end
  set("plot %s", table.concat(items, ", \\\n     "))
end

local function script(f, terminal, output)
  local lines = {"set terminal " .. terminal}
  if output then lines[#lines + 1] = "set output " .. quote(output) end
  return lines
end

-- Running gnuplot -----------------------------------------------------------

local function read_all(path)
  local h = io.open(path, "rb")
  if not h then return "" end
  local s = h:read("a")
  h:close()
  return s
end

local function temp_dir(op)
  local tmp = os.getenv("TMPDIR")
  tmp = (tmp and tmp ~= "") and tmp or "/tmp"
  local p = io.popen("mktemp -d " .. shell_quote(tmp .. "/moonlab-plot.XXXXXX")
                     .. " 2>&1")
  local dir = p:read("a"):gsub("%s+$", "")
  local ok = p:close()
  if not ok then fail(3, "%s: cannot make a temporary directory: %s", op, dir) end
  return dir
end

local function remove_dir(dir, files)
  for _, path in ipairs(files) do os.remove(path) end
  os.remove(dir)
end

-- Draws f with the terminal clause; output nil sends gnuplot's output to
-- the returned string. keep: a directory that keeps the data and script.
function M.render(op, f, terminal, output, keep)
  local empty = true
  for _, p in ipairs(f.panels) do empty = empty and #p.series == 0 end
  if empty then fail(3, "%s: the figure has nothing to draw", op) end
  if not os.execute("command -v gnuplot >/dev/null 2>&1") then
    fail(3, "%s: gnuplot not found on PATH (install gnuplot-nox)", op)
  end
  local dir = keep
  if keep then
    os.execute("mkdir -p " .. shell_quote(keep))
  else
    dir = temp_dir(op)
  end
  local gp, out, err = dir .. "/plot.gp", dir .. "/out", dir .. "/err"
  local files = {gp, out, err}
  local ok, result = pcall(function()
    local lines = script(f, terminal, output)
    if #f.panels > 1 then
      lines[#lines + 1] = ("set multiplot layout %d,%d%s"):format(f.rows,
        f.cols, f.title and (" title " .. quote(f.title)) or "")
    end
    for i, p in ipairs(f.panels) do
      if #p.series == 0 then
        lines[#lines + 1] = "set multiplot next"
      else
        panel_script(lines, dir, files, i, p)
      end
    end
    if #f.panels > 1 then lines[#lines + 1] = "unset multiplot" end
    if output then lines[#lines + 1] = "set output" end
    local h = assert(io.open(gp, "w"))
    h:write(table.concat(lines, "\n"), "\n")
    h:close()
    local done = os.execute(("gnuplot %s >%s 2>%s </dev/null"):format(
      shell_quote(gp), shell_quote(out), shell_quote(err)))
    if not done then
      local msg = read_all(err):gsub("%s+$", ""):gsub("^%s+", "")
      error(("%s: gnuplot failed: %s"):format(op, msg ~= "" and msg
            or "no message"), 0)
    end
    return read_all(out)
  end)
  if not keep then remove_dir(dir, files) end
  if not ok then error(result, 3) end
  return result
end

-- Whether the terminal draws sixel images: MOONLAB_PLOT_TERMINAL says
-- (sixel or dumb), else the terminal's answer to the primary device
-- attributes query, when standard output is a terminal.
local answer
function M.sixel()
  local forced = os.getenv("MOONLAB_PLOT_TERMINAL")
  if forced and forced ~= "" then return forced == "sixel" end
  if answer == nil then
    answer = false
    if os.execute("test -t 1 && test -t 0") then
      local p = io.popen([[
s=$(stty -g </dev/tty) || exit 0
stty -echo -icanon min 0 time 3 </dev/tty
printf '\033[c' >/dev/tty
r=$(dd bs=64 count=1 </dev/tty 2>/dev/null)
stty "$s" </dev/tty
printf '%s' "$r"]])
      local reply = p:read("a")
      p:close()
      local attrs = reply:match("%[%?([%d;]*)c")
      answer = attrs ~= nil and (";" .. attrs .. ";"):find(";4;", 1, true) ~= nil
    end
  end
  return answer
end

return M
