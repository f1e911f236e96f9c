-- Installed like a Lua module: `make install` into a temporary DESTDIR
-- (PREFIX as default) copies the built shell and module where a stock
-- lua5.4 and busted look; a user's spec in another directory requires
-- "moonlab" with only those paths, and the installed shell runs; `make
-- uninstall` removes exactly what install put there. Also the rockspec
-- (with luarocks, when it is installed) and the root's .busted.
local ml = require "moonlab"

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs a shell command; returns its output (stdout and stderr) and whether
-- it exited with status 0.
local function run(cmd)
  local p = assert(io.popen("(" .. cmd .. ") 2>&1"))
  local out = p:read("a")
  return out, p:close() == true
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function files_under(dir)
  local out = run("cd " .. quote(dir) .. " && find . -type f | sort")
  local files = {}
  for line in out:gmatch("[^\n]+") do files[#files + 1] = line end
  return files
end

local ROOT = assert(run("cd " .. quote((debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or ".")
  .. "/..") .. " && pwd")):match("[^\n]+")

-- The C module paths of this host's Lua (where busted's own dependencies
-- are, standard or not), without this build's lib/, then the defaults.
local function host_cpath()
  local keep = {}
  for entry in (os.getenv("LUA_CPATH") or ""):gmatch("[^;]+") do
    if not entry:find(ROOT, 1, true) then keep[#keep + 1] = entry end
  end
  return table.concat(keep, ";") .. ";;"
end

-- make as the suite was started: the variables given to `make test` (they
-- reach us in MAKEFLAGS) without its jobserver, whose descriptors are
-- closed here.
local function make(args)
  local vars = (os.getenv("MAKEFLAGS") or ""):match(" %-%- (.*)$")
  return run(("MAKEFLAGS=%s make -C %s --no-print-directory %s"):format(
    quote(vars and "-- " .. vars or ""), quote(ROOT), args))
end

local USER_SPEC = [[
require "moonlab.test"          -- before "moonlab": found in moonlab.so too
local ml = require "moonlab"

describe("a user's project", function()
  it("loads the installed module", function()
    assert.equal(os.getenv("EXPECTED_SO"), package.searchpath("moonlab", package.cpath))
  end)

  it("computes and compares", function()
    local x = ml.arange(6):reshape(2, 3)
    assert.allclose(x:sum(1), {3, 5, 7})
    assert.same(x:t():t(), x)
    assert.is_not.allclose(x / 3, x / 3 + 1e-6)
  end)

  it("reports a mismatch as numpy.testing does", function()
    local ok, err = pcall(assert.allclose, ml.array{1, 2}, {1, 3})
    assert.is_false(ok)
    assert.matches("Mismatched elements: 1 / 2 (50%)", err, 1, true)
  end)
end)
]]

describe("make install", function()
  local tmp

  before_each(function()
    tmp = run("mktemp -d"):match("[^\n]+")
  end)

  after_each(function()
    run("rm -rf " .. quote(tmp))
  end)

  it("installs where lua5.4 and busted look, runs from elsewhere, uninstalls", function()
    local dest = tmp .. "/root"
    local stamp = tmp .. "/stamp"
    write(stamp, "")
    local out, ok = make("install DESTDIR=" .. quote(dest))
    assert.is_true(ok, out)
    -- the build was current: install copied it and rebuilt nothing
    assert.equal("", (run("find " .. quote(ROOT .. "/bin/moonlab") .. " " .. quote(ROOT .. "/lib/moonlab.so")
      .. " -newer " .. quote(stamp))), "make install rebuilt files:\n" .. out)
    local bin, so = dest .. "/usr/local/bin/moonlab", dest .. "/usr/local/lib/lua/5.4/moonlab.so"
    assert.same({"./usr/local/bin/moonlab", "./usr/local/lib/lua/5.4/moonlab.so"}, files_under(dest))
    assert.is_true(select(2, run("cmp " .. quote(ROOT .. "/bin/moonlab") .. " " .. quote(bin))))
    assert.is_true(select(2, run("cmp " .. quote(ROOT .. "/lib/moonlab.so") .. " " .. quote(so))))
    assert.is_true(select(2, run("test -x " .. quote(bin))))

    -- a user's project elsewhere, with the standard layout under DESTDIR
    local project = tmp .. "/project"
    assert.is_true(select(2, run("mkdir -p " .. quote(project .. "/spec"))))
    write(project .. "/spec/user_spec.lua", USER_SPEC)
    local env = ("cd %s && env -u LUA_PATH_5_4 -u LUA_CPATH_5_4 -u LUA_INIT -u LUA_INIT_5_4 "
      .. "LUA_CPATH=%s EXPECTED_SO=%s "):format(quote(project),
      quote(dest .. "/usr/local/lib/lua/5.4/?.so;" .. host_cpath()), quote(so))
    out, ok = run(env .. "lua5.4 \"$(command -v busted)\" --output=plainTerminal")
    assert.is_true(ok, out)
    assert.matches("3 successes / 0 failures / 0 errors / 0 pending", out, 1, true)

    out, ok = run(env .. quote(bin) .. " -e " .. quote(
      'print(ml.version, ml.arange(4):sum(), type(require("moonlab.test").allclose))'))
    assert.is_true(ok, out)
    assert.equal(ml.version .. "\t6\tfunction\n", out)
    write(project .. "/script.lua", "print(#arg, arg[1], ml.ones(2, 3):sum())\n")
    out = run(env .. quote(bin) .. " script.lua x")
    assert.equal("1\tx\t6.0\n", out)

    out, ok = make("uninstall DESTDIR=" .. quote(dest))
    assert.is_true(ok, out)
    assert.same({}, files_under(dest))
  end)

  it("honours PREFIX", function()
    local out, ok = make("install DESTDIR=" .. quote(tmp) .. " PREFIX=/opt/ml")
    assert.is_true(ok, out)
    assert.same({"./opt/ml/bin/moonlab", "./opt/ml/lib/lua/5.4/moonlab.so"}, files_under(tmp))
    out, ok = make("uninstall DESTDIR=" .. quote(tmp) .. " PREFIX=/opt/ml")
    assert.is_true(ok, out)
    assert.same({}, files_under(tmp))
  end)
end)

describe("the rockspec", function()
  local name = ("moonlab-%s-1.rockspec"):format(ml.version)

  it("is named for the version and builds with the Makefile", function()
    local spec = {}
    assert(loadfile(ROOT .. "/" .. name, "t", spec))()
    assert.equal("moonlab", spec.package)
    assert.equal(ml.version .. "-1", spec.version)
    assert.equal("make", spec.build.type)
    assert.same({PREFIX = "$(PREFIX)", BINDIR = "$(BINDIR)", CMODDIR = "$(LIBDIR)"},
      spec.build.install_variables)
  end)

  it("installs with luarocks make into a tree that lua5.4 requires from", function()
    if not select(2, run("command -v luarocks")) then
      pending("luarocks is not installed")
      return
    end
    local tmp = run("mktemp -d"):match("[^\n]+")
    finally(function() run("rm -rf " .. quote(tmp)) end)
    local vars = (os.getenv("MAKEFLAGS") or ""):match(" %-%- (.*)$")
    local out, ok = run(("cd %s && HOME=%s MAKEFLAGS=%s luarocks --lua-version=5.4 make --tree %s %s"):format(
      quote(ROOT), quote(tmp), quote(vars and "-- " .. vars or ""), quote(tmp .. "/tree"), name))
    assert.is_true(ok, out)
    out, ok = run(("cd %s && eval \"$(luarocks --lua-version=5.4 --tree %s path --bin)\" && lua5.4 -e %s && moonlab -e %s")
      :format(quote(tmp), quote(tmp .. "/tree"), quote(
        'local ml = require "moonlab"; print(package.searchpath("moonlab", package.cpath), ml.arange(3):sum())'),
        quote("print(ml.version)")))
    assert.is_true(ok, out)
    assert.equal(tmp .. "/tree/lib/lua/5.4/moonlab.so\t3\n" .. ml.version .. "\n", out)
  end)
end)

describe("the root's .busted", function()
  it("runs specs against the built lib/ from the repository root", function()
    local tmp = run("mktemp -d"):match("[^\n]+")
    finally(function() run("rm -rf " .. quote(tmp)) end)
    write(tmp .. "/where_spec.lua", [[
      it("loads lib/moonlab.so", function()
        assert.equal("./lib/moonlab.so", package.searchpath("moonlab", package.cpath))
      end)
    ]])
    local out, ok = run(("cd %s && env -u LUA_CPATH_5_4 LUA_CPATH=%s lua5.4 \"$(command -v busted)\" "
      .. "--output=plainTerminal %s"):format(quote(ROOT), quote(host_cpath()),
      quote(tmp .. "/where_spec.lua")))
    assert.is_true(ok, out)
    assert.matches("1 success / 0 failures", out, 1, true)
  end)
end)
