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

  it("prints several values separated by tabs", function()
    assert.equal("1\ta\tnil\ttrue\n", repl("1, 'a', nil, true\n"))
  end)

  it("accepts =expr and prints a chunk's returned values", function()
    assert.equal("3\n4\n", repl("=1+2\nreturn 4\n"))
  end)

  it("keeps the first printed value in _", function()
    assert.equal("20\t5\n21\n21\n", repl("10*2, 5\n_ + 1\nx = 1\n_\n"))
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
    assert.equal(" 1  2\n[int64 2 " .. dev .. "]\t7\n", repl("ml.array{1, 2}, 7\n"))
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
