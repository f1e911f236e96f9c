-- The moonlab executable: lua's command line, and the REPL driven through
-- a pipe with -i (no prompts are printed when stdin is not a terminal).
local ml = require "moonlab"

local bin = os.getenv("MOONLAB_BIN") or "bin/moonlab"
local version = "moonlab " .. ml.version .. "  Lua 5.4"

local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("a")
  f:close()
  return s
end

local temporaries = {}
local function tmpfile(text)
  local path = os.tmpname()
  temporaries[#temporaries + 1] = path
  write(path, text or "")
  return path
end

-- Runs moonlab with the words of args and input on stdin; env: a prefix of
-- shell variable assignments; after: shell commands run with $pid set
-- while moonlab runs in the background. Returns stdout, stderr and the
-- exit status.
local function run(args, input, env, after)
  local quoted = {}
  for i, a in ipairs(args) do quoted[i] = quote(a) end
  local inp, out, err = tmpfile(input), tmpfile(), tmpfile()
  local cmd = string.format("%s %s %s <%s >%s 2>%s", env or "", quote(bin),
                            table.concat(quoted, " "), inp, out, err)
  local code
  if after then
    local rc = tmpfile()
    os.execute(string.format("%s & pid=$!; %s; wait $pid; echo $? >%s",
                             cmd, after, rc))
    code = tonumber(read(rc))
  else
    code = select(3, os.execute(cmd))
  end
  return read(out), read(err), code
end

-- The REPL's stdout after the version line.
local function repl(input)
  local out, err, code = run({"-i"}, input)
  assert.equal(version, out:sub(1, #version))
  return out:match("^[^\n]*\n(.*)$"), err, code
end

teardown(function()
  for _, path in ipairs(temporaries) do os.remove(path) end
end)

describe("moonlab command line", function()
  it("sets arg and ... as lua does", function()
    local script = tmpfile([[
      for i = -2, 3 do print(i, arg[i]) end
      print(select("#", ...), ...)
    ]])
    local out, err, code = run({"-W", script, "a", "b c"})
    assert.equal(table.concat({
      "-2\t" .. bin, "-1\t-W", "0\t" .. script, "1\ta", "2\tb c", "3\tnil",
      "2\ta\tb c", ""}, "\n"), out)
    assert.equal("", err)
    assert.equal(0, code)
  end)

  it("puts the interpreter at arg[0] when there is no script", function()
    local out = run({"-e", "print(arg[-1], arg[0], arg[1], arg[2], #arg)"})
    assert.equal(string.format("nil\t%s\t-e\t%s\t2\n", bin,
      "print(arg[-1], arg[0], arg[1], arg[2], #arg)"), out)
  end)

  it("stops handling options at --", function()
    local script = tmpfile("print(arg[-1], arg[0], ...)")
    local out, _, code = run({"--", script, "-e", "x"})
    assert.equal("--\t" .. script .. "\t-e\tx\n", out)
    assert.equal(0, code)
  end)

  it("runs -e and -l in order, before the script", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. quote(dir)))
    write(dir .. "/mymod.lua", "return {v = 42}")
    write(dir .. "/mymod-v2.lua", "return {v = 2}")
    local env = "LUA_PATH=" .. quote(dir .. "/?.lua")
    local script = tmpfile("print('script', x, g.v)")
    local out, err, code = run({"-e", "x = 1", "-l", "mymod", "-lg=mymod",
                                "-e", "print(x + mymod.v)", "-l", "mymod-v2",
                                "-e", "print(mymod.v)", script}, "", env)
    os.execute("rm -r " .. quote(dir))
    assert.equal("43\n2\nscript\t1\t42\n", out)
    assert.equal("", err)
    assert.equal(0, code)
  end)

  it("prints the versions with -v and runs nothing else", function()
    local out, err, code = run({"-v"}, "print('stdin ran')")
    assert.equal(version, out:sub(1, #version))
    assert.equal("Lua.org, PUC-Rio\n", out:sub(-17))
    assert.equal(1, select(2, out:gsub("\n", "")))
    assert.equal("", err)
    assert.equal(0, code)
  end)

  it("preloads ml as require 'moonlab'", function()
    local out = run({"-e",
                     "print(ml == require 'moonlab', ml.zeros(2):numel())"})
    assert.equal("true\t2\n", out)
  end)

  it("exits with 1, the message and a traceback on an error", function()
    local script = tmpfile("local function f()\n  error('boom')\nend\nf()\n")
    local out, err, code = run({script})
    assert.equal("", out)
    assert.equal(1, code)
    assert.equal("moonlab: " .. script .. ":2: boom\nstack traceback:\n" ..
                 "\t[C]: in function 'error'\n", err:sub(1, #script + 61))
    local last = "\t" .. script .. ":4: in main chunk\n"
    assert.equal(last, err:sub(-#last))
    assert.falsy(err:find("[C]: in ?", 1, true))
  end)

  it("reports error objects that are not strings", function()
    local _, err, code = run({"-e", "error({})"})
    assert.equal(1, code)
    assert.equal("moonlab: (error object is a table value)\n",
                 err:match("^[^\n]*\n"))
    _, err = run({"-e", "error(setmetatable({}, {__tostring = " ..
                        "function() return 'custom' end}))"})
    assert.equal("moonlab: custom\n", err)
  end)

  it("reports syntax errors and missing scripts", function()
    local _, err, code = run({"-e", "x = = 1"})
    assert.equal("moonlab: (command line):1: unexpected symbol near '='\n", err)
    assert.equal(1, code)
    _, err, code = run({"/nonexistent/script.lua"})
    assert.equal("moonlab: cannot open /nonexistent/script.lua: " ..
                 "No such file or directory\n", err)
    assert.equal(1, code)
  end)

  it("rejects bad options with the usage", function()
    local out, err, code = run({"-x"})
    assert.equal("", out)
    assert.equal(1, code)
    assert.equal("moonlab: unrecognized option '-x'\n" ..
                 "usage: moonlab [options] [script [args]]\n",
                 err:match("^[^\n]*\n[^\n]*\n"))
    _, err, code = run({"-e"})
    assert.equal("moonlab: '-e' needs argument\n", err:match("^[^\n]*\n"))
    assert.equal(1, code)
    _, err, code = run({"-vx"})
    assert.equal("moonlab: unrecognized option '-vx'\n", err:match("^[^\n]*\n"))
    assert.equal(1, code)
  end)

  it("lets os.exit set the status; a script's return prints nothing", function()
    assert.equal(3, select(3, run({"-e", "os.exit(3)"})))
    assert.equal(1, select(3, run({"-e", "os.exit(false)"})))
    local out, err, code = run({tmpfile("return 1, 2")})
    assert.equal("", out)
    assert.equal("", err)
    assert.equal(0, code)
  end)

  it("runs stdin as a script with - or when stdin is not a terminal", function()
    local out, _, code = run({"-", "a", "b"}, "print(arg[0], ...)")
    assert.equal("-\ta\tb\n", out)
    assert.equal(0, code)
    out = run({}, "print(1 + 1)\nprint(ml.version)")
    assert.equal("2\n" .. ml.version .. "\n", out)
    local _, err = run({}, "error('from stdin')")
    assert.equal("moonlab: stdin:1: from stdin\n", err:match("^[^\n]*\n"))
    _, err = run({"--", "-"}, "print(1)")
    assert.equal("moonlab: cannot open -: No such file or directory\n", err)
  end)

  it("runs LUA_INIT first unless -E", function()
    local env = "LUA_INIT=" .. quote("print('init')")
    assert.equal("init\n1\n", run({"-e", "print(1)"}, "", env))
    assert.equal("1\n", run({"-E", "-e", "print(1)"}, "", env))
    env = "LUA_INIT_5_4=" .. quote("print('init54')") .. " " .. env
    assert.equal("init54\n1\n", run({"-e", "print(1)"}, "", env))
    env = "LUA_INIT=@" .. tmpfile("print('from file')")
    assert.equal("from file\n1\n", run({"-e", "print(1)"}, "", env))
    local _, err, code = run({"-e", "print(1)"}, "", "LUA_INIT='error(\"x\")'")
    assert.equal("moonlab: LUA_INIT:1: x\n", err:match("^[^\n]*\n"))
    assert.equal(1, code)
  end)

  it("turns warnings on with -W", function()
    local _, err = run({"-W", "-e", "warn('careful')"})
    assert.equal("Lua warning: careful\n", err)
    _, err = run({"-e", "warn('careful')"})
    assert.equal("", err)
  end)

  it("stops a running script on SIGINT with an error", function()
    local out, err, code = run({"-e", "print('started') while true do end"},
                               "", nil, "sleep 1; kill -INT $pid")
    assert.equal("started\n", out)
    assert.equal("moonlab: interrupted!\nstack traceback:\n",
                 err:match("^[^\n]*\n[^\n]*\n"))
    assert.equal(1, code)
  end)
end)

describe("moonlab REPL", function()
  it("prints expression values, not statements", function()
    assert.equal("2\n3\n", repl("1+1\nx = 3\nx;\nx\n"))
  end)

  it("prints several values each on its own line", function()
    assert.equal("1\na\nnil\ntrue\n", repl("1, 'a', nil, true\n"))
  end)

  it("accepts =expr and prints a chunk's returned values", function()
    assert.equal("3\n4\n", repl("=1+2\nreturn 4\n"))
  end)

  it("keeps the first printed value in _", function()
    assert.equal("20\n5\n21\n21\n", repl("10*2, 5\n_ + 1\nx = 1\n_\n"))
  end)

  it("reports an error and keeps the session's state", function()
    local out, err, code = repl("y = 7\nerror('boom')\ny\n")
    assert.equal("7\n", out)
    assert.equal("stdin:1: boom\nstack traceback:\n" ..
                 "\t[C]: in function 'error'\n\tstdin:1: in main chunk\n", err)
    assert.equal(0, code)
    out, err = repl("x = = 1\n2\n")
    assert.equal("2\n", out)
    assert.equal("stdin:1: unexpected symbol near '='\n", err)
  end)

  it("reads a multi-line chunk until it is complete", function()
    assert.equal("42\n", repl("function f(a)\n  return a * 2\nend\nf(21)\n"))
    assert.equal("3\n", repl("select('#',\n1, 2,\n3)\n"))
    assert.equal("1\n2\n", repl("for i = 1, 2 do\nprint(i)\nend\n"))
    local t = repl("t = {1,\n2}\n#t\n")
    assert.equal("2\n", t)
  end)

  it("reports a chunk left incomplete at end of input", function()
    local out, err = repl("1 +\n")
    assert.equal("", out)
    assert.equal("stdin:1: unexpected symbol near <eof>\n", err)
  end)

  it("reports a failing __tostring and goes on", function()
    local out, err = repl("setmetatable({}, {__tostring = function() " ..
                          "error('bad tostring') end})\n5\n")
    assert.equal("5\n", out)
    assert.equal("stdin:1: bad tostring\n", err:match("^[^\n]*\n"))
  end)

  it("prints arrays in the Torch style", function()
    local dev = ml.device()
    assert.equal(" 0  0\n 0  0\n[float64 2x2 " .. dev .. "]\n", repl("ml.zeros(2,2)\n"))
    assert.equal(" 1  2\n[int64 2 " .. dev .. "]\n7\n",
                 repl("ml.array{1, 2}, 7\n"))
    assert.equal("21\n 5  7  9\n[int64 3 " .. dev .. "]\n",
                 repl("x = ml.array{{1, 2, 3}, {4, 5, 6}}\n" ..
                      "x:sum(), x:sum(1)\n"))
  end)

  it("runs the script first with -i", function()
    local script = tmpfile("x = 5")
    local out = run({"-i", script}, "x * 2\n")
    assert.equal(version, out:sub(1, #version))
    assert.equal("10\n", out:match("^[^\n]*\n(.*)$"))
  end)

  it("stops running code on SIGINT and reads on", function()
    local out, err, code = run({"-i"}, "while true do end\nprint('after')\n",
                               nil, "sleep 1; kill -INT $pid")
    assert.equal("after\n", out:match("^[^\n]*\n(.*)$"))
    assert.equal("interrupted!\nstack traceback:\n",
                 err:match("^[^\n]*\n[^\n]*\n"))
    assert.equal(0, code)
  end)
end)

describe("moonlab REPL printing tables", function()
  local dev = ml.device()
  local function D(s) return (s:gsub(" cpu%]", " " .. dev .. "]")) end

  it("prints a table that fits on one line, arrays by their summary", function()
    assert.equal("{2, 3}\n", repl("x = ml.zeros(2, 3)\nx.shape\n"))
    assert.equal(D"{a = [float64 2x3 cpu]}\n",
                 repl("x = ml.zeros(2, 3)\n{a = x}\n"))
    assert.equal(D"{[int64 scalar cpu], [freed array], [uint8 0x2 cpu]}\n",
                 repl("y = ml.ones(1)\ny:free()\n{ml.full({}, 1), y, " ..
                      "ml.zeros(0, 2, {dtype = 'uint8'})}\n"))
    local out = repl("ml.memory()\n")
    assert.truthy(out:match("^{allocated = %d+, arrays = %d+, cached = %d+, " ..
                            "peak = %d+}\n$"), out)
    assert.equal("{}\n{{1, 2}, {3, 4}}\n", repl("{}\n{{1, 2}, {3, 4}}\n"))
  end)

  it("puts the sequence first, then the keys in order", function()
    assert.equal('{"a", "b", [4] = 4, [10] = 1, ["-"] = 1, b = 0.5, ' ..
                 '["end"] = 2, [false] = 3}\n',
                 repl('{"a", "b", nil, 4, [10] = 1, b = 0.5, ' ..
                      '["end"] = 2, ["-"] = 1, [false] = 3}\n'))
  end)

  it("quotes strings inside tables and escapes what would not show", function()
    assert.equal('{"tab\\there", "nl\\nq\\"b\\\\", "\\001"}\n',
                 repl('{"tab\\there", "nl\\nq\\"b\\\\", "\\1"}\n'))
    assert.equal("plain\n", repl("'plain'\n"))
  end)

  it("breaks a table that does not fit, one entry a line, indented", function()
    local out = repl("x = ml.zeros(2, 3)\n" ..
      "{name = 'moonlab', data = x, shape = x.shape, " ..
      "nested = {deep = {deeper = {1, 2, 3}}, list = {'a', 'b'}}, " ..
      "long = {'aaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbb', " ..
      "'cccccccccccccccccccc', 'dddddddddddddddd'}}\n")
    assert.equal(D(table.concat({
      "{",
      "  data = [float64 2x3 cpu],",
      "  long = {",
      '    "aaaaaaaaaaaaaaaaaaaa",',
      '    "bbbbbbbbbbbbbbbbbbbb",',
      '    "cccccccccccccccccccc",',
      '    "dddddddddddddddd",',
      "  },",
      '  name = "moonlab",',
      '  nested = {deep = {deeper = {1, 2, 3}}, list = {"a", "b"}},',
      "  shape = {2, 3},",
      "}", ""}, "\n")), out)
  end)

  it("cuts cycles and deep nesting", function()
    assert.equal("{self = <cycle>, sub = {up = <cycle>}}\n",
                 repl("t = {}\nt.self = t\nt.sub = {up = t}\nt\n"))
    assert.equal("{{{{{{...}}}}}}\n", repl("{{{{{{{{1}}}}}}}}\n"))
    -- a table seen twice, not inside itself, prints twice
    assert.equal("{{1}, {1}}\n", repl("s = {1}\n{s, s}\n"))
  end)

  it("prints tables with __tostring and other values with tostring", function()
    assert.equal("{T, T}\nT\n",
                 repl("t = setmetatable({}, {__tostring = function() " ..
                      "return 'T' end})\n{t, t}\nt\n"))
    local out = repl("{print}\n")
    assert.truthy(out:match("^{builtin: 0x%x+}\n$") or
                  out:match("^{function: builtin: 0x%x+}\n$") or
                  out:match("^{function: 0x%x+}\n$"), out)
  end)

  it("expands a table with a metatable but no __tostring", function()
    assert.equal("{k = 5}\n",
                 repl("setmetatable({k = 5}, {__index = {m = 1}})\n"))
  end)
end)

describe("moonlab REPL help", function()
  -- The session's ml without help, as a build that has none.
  local no_help = "getmetatable(ml).__index = nil\nml.help = nil\n"

  it("says when there is no help and goes on", function()
    local out, err = repl(no_help .. "?ml.knn\nhelp(ml.knn)\n1 + 1\n")
    assert.equal("help: not available in this build\n" ..
                 "help: not available in this build\n2\n", out)
    assert.equal("", err)
  end)

  it("passes ?expr and help(expr) to ml.help", function()
    local out = repl("ml.help = function(...) " ..
                     "return select('#', ...), ... == ml.knn end\n" ..
                     "?ml.knn\n  ? ml.knn\nhelp(ml.knn)\n?\n")
    assert.equal("1\ntrue\n1\ntrue\n1\ntrue\n0\nfalse\n", out)
  end)

  it("reads ?expr over several lines and reports a bad one", function()
    local out, err = repl("ml.help = function(v) return 'help', v end\n" ..
                          "?1 +\n2\n?x = 1\n")
    assert.equal("help\n3\n", out)
    assert.equal("stdin:1: <eof> expected near '='\n", err)
  end)

  it("keeps a help the session defined", function()
    local out = run({"-e", "help = 5", "-i"}, "help\n")
    assert.equal("5\n", out:match("^[^\n]*\n(.*)$"))
  end)
end)

describe("moonlab.shell.complete", function()
  local shell = require "moonlab.shell"
  local env = {ml = ml, x = ml.zeros(2), s = "text", t = {alpha = 1, f = print},
               ["not a name"] = 1}

  local function complete(line)
    local words, appends = shell.complete(line, env)
    local t = {}
    for i, w in ipairs(words) do t[i] = w .. appends[i] end
    return t
  end

  local function has(list, item)
    for _, v in ipairs(list) do if v == item then return true end end
    return false
  end

  it("completes fields that load on first use without loading them", function()
    local loaded = rawget(ml, "KNNClassifier") ~= nil
    assert.same({"KNNClassifier"}, complete("ml.KNN"))
    assert.equal(loaded, rawget(ml, "KNNClassifier") ~= nil)
    assert.same({"datasets"}, complete("ml.da"))
    assert.is_true(has(complete("ml.kn"), "knn("))
    assert.is_true(has(complete("ml."), "KNNClassifier"))
    assert.is_true(has(complete("ml."), "zeros("))
  end)

  it("completes array properties and methods", function()
    assert.same({"shape"}, complete("x.sh"))
    assert.same({"ndim"}, complete("x.nd"))
    assert.same({"dtype"}, complete("x.dt"))
    local d = complete("x.d")
    assert.is_true(has(d, "device") and has(d, "dim(") and has(d, "dtype"))
    -- after ':' methods only
    d = complete("x:d")
    assert.is_true(has(d, "dim(") and not has(d, "device"))
    assert.same({"sum("}, complete("y = x:sum"))
  end)

  it("completes globals, keywords, table fields and string methods", function()
    assert.same({"ml"}, complete("m"))
    assert.same({"function "}, complete("fun"))
    assert.same({"f("}, complete("t.f"))
    assert.same({"alpha", "f("}, complete("print(t."))
    assert.same({"f("}, complete("t:"))
    assert.same({"upper("}, complete("s:up"))
    assert.same({}, complete("nothere.x"))
    assert.same({}, complete("t.alpha.x"))
    assert.same({}, complete("x:size."))
  end)

  it("completes the name after any operator or bracket", function()
    assert.same({"shape"}, complete("(x.sh"))
    assert.same({"shape"}, complete("1 + #x.sh"))
    assert.same({"datasets"}, complete("?ml.da"))
  end)
end)

-- Runs the shell on a terminal (a pty that script(1) makes), typing the
-- strings of keys with a pause after each; env: variable assignments.
-- Returns the command line, whose output goes to the file out.
local function on_terminal(keys, env, out)
  local typing = {"sleep 0.5"}
  for _, k in ipairs(keys) do
    typing[#typing + 1] = "printf %s " .. quote(k) .. "; sleep 0.3"
  end
  return string.format(
    "{ %s; } | env %s TERM=xterm script -qfec %s /dev/null >%s",
    table.concat(typing, "; "), env or "", quote(bin), out)
end

-- What the terminal showed, without carriage returns.
local function terminal(keys, env)
  local out = tmpfile()
  os.execute(on_terminal(keys, env, out))
  return (read(out):gsub("\r", ""))
end

-- The entries of a history file, in libedit's format: "_HiStOrY_V2_",
-- then one entry a line, blanks and newlines written as octal escapes.
local function history(path)
  local entries = {}
  for line in io.lines(path) do
    entries[#entries + 1] = line:gsub("\\(%d%d%d)", function(o)
      return string.char(tonumber(o, 8))
    end)
  end
  assert.equal("_HiStOrY_V2_", table.remove(entries, 1))
  return entries
end

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end
-- The terminal specs need script(1), a pty and a shell built with libedit.
local has_terminal = os.execute("command -v script >/dev/null") and
                     exists("/dev/ptmx") and
                     os.execute("ldd " .. quote(bin) .. " | grep -q libedit")
local with_terminal = has_terminal and describe or pending

with_terminal("moonlab shell on a terminal", function()
  it("completes lazy fields and array properties with TAB", function()
    local out = terminal({"x = ml.zeros(2)\n", "x.sh\t\n", "ml.KNN\t ~= nil\n",
                          "type(ml.da\t)\n", "x:nu\t)\n"},
                         "MOONLAB_HISTORY=")
    assert.truthy(out:find("\n{2}\nmoonlab> ", 1, true), out)
    assert.truthy(out:find("\ntrue\nmoonlab> ", 1, true), out)
    assert.truthy(out:find("\ntable\nmoonlab> ", 1, true), out)
    assert.truthy(out:find("\n2\nmoonlab> ", 1, true), out)
  end)

  it("appends each chunk to the history file, multi-line ones whole", function()
    local path = tmpfile()
    os.remove(path)
    local env = "MOONLAB_HISTORY=" .. quote(path)
    terminal({"a = 1\n", "for i = 1, 2 do\n", "print(i)\n", "end\n", "\n",
              "=a\n", "=a\n", "?a\n", "b = {\n", "2}\n"}, env)
    assert.same({"a = 1", "for i = 1, 2 do\nprint(i)\nend", "=a", "?a",
                 "b = {\n2}"}, history(path))
    -- a second session recalls the first one's lines and adds to them
    local out = terminal({"c = 3\n", ("\27[A"):rep(6) .. "\n", "=a * 10\n"},
                         env)
    assert.truthy(out:find("\n10\nmoonlab> ", 1, true), out)
    local h = history(path)
    assert.same({"c = 3", "a = 1", "=a * 10"}, {h[6], h[7], h[8]})
    assert.equal(8, #h)
  end)

  it("keeps the lines of two shells open at once", function()
    local path = tmpfile()
    os.remove(path)
    local env = "MOONLAB_HISTORY=" .. quote(path)
    os.execute(on_terminal({"a1 = 1\n", "", "a2 = 2\n", ""}, env, tmpfile()) ..
               " & " ..
               on_terminal({"", "b1 = 1\n", "", "b2 = 2\n"}, env, tmpfile()) ..
               "; wait")
    local h = history(path)
    table.sort(h)
    assert.same({"a1 = 1", "a2 = 2", "b1 = 1", "b2 = 2"}, h)
  end)

  it("keeps the lines a shell had read when it is killed", function()
    local path, pidfile, out = tmpfile(), tmpfile(), tmpfile()
    os.remove(path)
    local env = "MOONLAB_HISTORY=" .. quote(path)
    local keys = {"os.execute('echo $PPID >" .. pidfile .. "')\n",
                  "k1 = 1\n", "k2 = {\n", "2}\n", "print('mark' .. 'er')\n",
                  "k3 = 3"}
    for _ = 1, 10 do keys[#keys + 1] = "" end
    os.execute(on_terminal(keys, env, out) .. " & " ..
               "for i in $(seq 100); do grep -q marker " .. out ..
               " && break; sleep 0.1; done; kill -KILL $(cat " .. pidfile ..
               "); wait")
    local h = history(path)
    assert.same({"k1 = 1", "k2 = {\n2}", "print('mark' .. 'er')"},
                {h[2], h[3], h[4]})
    assert.equal(4, #h)
  end)

  it("keeps the last 1000 entries once the file holds 2000", function()
    local lines = {"_HiStOrY_V2_"}
    for i = 1, 2500 do lines[#lines + 1] = "n\\040=\\040" .. i end
    local path = tmpfile(table.concat(lines, "\n") .. "\n")
    terminal({"new = 1\n"}, "MOONLAB_HISTORY=" .. quote(path))
    local h = history(path)
    assert.equal(1001, #h)
    assert.same({"n = 1501", "n = 2500", "new = 1"}, {h[1], h[1000], h[1001]})
  end)

  it("writes ~/.moonlab_history without MOONLAB_HISTORY", function()
    local home = os.tmpname()
    os.remove(home)
    assert(os.execute("mkdir " .. quote(home)))
    terminal({"h = 1\n"}, "HOME=" .. quote(home) .. " MOONLAB_HISTORY= ")
    assert.is_nil(io.open(home .. "/.moonlab_history"))
    terminal({"h = 1\n"}, "-u MOONLAB_HISTORY HOME=" .. quote(home))
    assert.same({"h = 1"}, history(home .. "/.moonlab_history"))
    os.execute("rm -r " .. quote(home))
  end)
end)
