-- The interactive shell's Lua half, which src/repl.c calls: how results
-- print, what tab completion offers, and help.
local ml = require "moonlab"

local M = {}

local WIDTH = 80    -- a table whose text fits prints on one line
local MAX_DEPTH = 5 -- tables nested deeper print as {...}

local KEYWORDS = {}
for k in ([[and break do else elseif end false for function goto if in local
            nil not or repeat return then true until while]]):gmatch("%a+") do
  KEYWORDS[k] = true
end

local function is_name(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
         and not KEYWORDS[s]
end

---------------------------------------------------------------- printing

local ESCAPES = {["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r",
                 ['"'] = '\\"', ["\\"] = "\\\\"}

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESCAPES[c] or ("\\%03d"):format(c:byte())
  end) .. '"'
end

-- "[float64 2x3 cpu]": the last line of tostring(x).
local function summary(x)
  if not x.dtype then return "[freed array]" end
  local shape = x.ndim == 0 and "scalar" or table.concat(x.shape, "x")
  return ("[%s %s %s]"):format(x.dtype, shape, x.device)
end

local function has_tostring(v)
  local mt = debug.getmetatable(v)
  return mt ~= nil and rawget(mt, "__tostring") ~= nil
end

-- A value that is not expanded: strings quoted, arrays by their summary.
local function atom(v)
  if type(v) == "string" then return quote(v) end
  if ml.is_array(v) then return summary(v) end
  return tostring(v)
end

-- Keys in order: numbers, strings, booleans, then the rest by tostring.
local KEY_RANK = {number = 1, string = 2, boolean = 3}
local function key_less(a, b)
  local ra, rb = KEY_RANK[type(a)] or 4, KEY_RANK[type(b)] or 4
  if ra ~= rb then return ra < rb end
  if ra <= 2 then return a < b end
  return tostring(a) < tostring(b)
end

local render

-- The entries of table t, nested at depth level: its sequence 1..n as
-- bare values, then the other keys in order as "key = value".
local function entries(t, level, path)
  local items, pad = {}, 2 * (level + 1)
  local n = 0
  while rawget(t, n + 1) ~= nil do
    n = n + 1
    items[n] = render(rawget(t, n), level + 1, pad, path)
  end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, key_less)
  for _, k in ipairs(keys) do
    local prefix = is_name(k) and k .. " = " or "[" .. atom(k) .. "] = "
    items[#items + 1] = prefix .. render(rawget(t, k), level + 1,
                                         pad + #prefix, path)
  end
  return items
end

-- The text of v nested at depth level, starting at column col: a table
-- on one line when it fits in WIDTH, else one entry a line, indented.
-- path: the tables being printed, to cut cycles.
function render(v, level, col, path)
  if type(v) ~= "table" or has_tostring(v) then return atom(v) end
  if path[v] then return "<cycle>" end
  if level >= MAX_DEPTH then return "{...}" end
  path[v] = true
  local items = entries(v, level, path)
  path[v] = nil
  local line = "{" .. table.concat(items, ", ") .. "}"
  if col + #line <= WIDTH and not line:find("\n", 1, true) then
    return line
  end
  local pad = ("  "):rep(level + 1)
  return "{\n" .. pad .. table.concat(items, ",\n" .. pad) .. ",\n" ..
         ("  "):rep(level) .. "}"
end

-- The text of one result: an array in full (tostring), a string as it
-- is, a table expanded (nested tables indented, arrays inside by their
-- summary, keys in order, cycles and depth cut).
local function show_one(v)
  if type(v) == "table" and not has_tostring(v) then
    return render(v, 0, 0, {})
  end
  return tostring(v)
end

-- shell.show(...): the text of the results of an expression, each on its
-- own line.
function M.show(...)
  local values = table.pack(...)
  local out = {}
  for i = 1, values.n do out[i] = show_one(values[i]) end
  return table.concat(out, "\n")
end

---------------------------------------------------------------- completion

-- Adds the name keys of t to names (name -> what follows a unique
-- completion: "(" after a function); with methods, functions only.
local function add_keys(names, t, methods)
  for k, v in next, t do
    local fn = type(v) == "function"
    if is_name(k) and names[k] == nil and (fn or not methods) then
      names[k] = fn and "(" or ""
    end
  end
end

-- The names v.name or v:name (methods) serves: a table's own keys, and
-- along the chain of metatables and their __index tables, the tables
-- "methods" (arrays' methods) and "fields" (names that __index makes on
-- demand: array properties, what ml loads on first use).
local function add_fields(names, v, methods)
  for _ = 1, 8 do
    if type(v) == "table" then add_keys(names, v, methods) end
    local mt = debug.getmetatable(v)
    if mt == nil then return end
    local m, f = rawget(mt, "methods"), rawget(mt, "fields")
    if type(m) == "table" then add_keys(names, m, methods) end
    if type(f) == "table" and not methods then
      for k in next, f do
        if is_name(k) and names[k] == nil then names[k] = "" end
      end
    end
    v = rawget(mt, "__index")
    if type(v) ~= "table" then return end
  end
end

-- The value of "a.b.c" read with raw gets from env, nil if absent.
local function lookup(env, chain)
  local v = env
  for part in (chain .. "."):gmatch("([^.]*)%.") do
    if type(v) ~= "table" or not is_name(part) then return nil end
    v = rawget(v, part)
  end
  return v
end

-- shell.complete(line[, env]): the completions of the name that ends
-- line (the text before the cursor), sorted, and for each what follows it
-- when it is the only one ("(" after a function, " " after a keyword, ""):
-- after "a.b." or "a.b:" the fields or methods of a.b (never loading
-- anything: values are read with raw gets), else the globals of env
-- (default _G) and the keywords.
function M.complete(line, env)
  env = env or _G
  local word = line:match("[%w_]*$")
  local before = line:sub(1, #line - #word)
  local sep = before:sub(-1)
  local names = {}
  if sep == "." or sep == ":" then
    local chain = before:sub(1, -2):match("[%w_.]*$")
    if before:sub(-#chain - 2, -#chain - 2) ~= ":" then
      local v = lookup(env, chain)
      if v ~= nil then add_fields(names, v, sep == ":") end
    end
  else
    for k in next, KEYWORDS do names[k] = " " end
    add_keys(names, env, false)
  end
  local words, appends = {}, {}
  for name in next, names do
    if name:sub(1, #word) == word then words[#words + 1] = name end
  end
  table.sort(words)
  for i, w in ipairs(words) do appends[i] = names[w] end
  return words, appends
end

---------------------------------------------------------------- help

-- shell.help(...): ml.help(...) (the shell's `help` and `?expr`), or a
-- note when this build has no help.
function M.help(...)
  local help = ml.help
  if help == nil then
    print("help: not available in this build")
    return
  end
  return help(...)
end

return M
