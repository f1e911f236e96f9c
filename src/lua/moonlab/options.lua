-- Option checking: every public function that takes an options table has
-- it checked against the options its help entry documents
-- (src/lua/moonlab/help/*.lua), so that the options a function accepts
-- and the options it documents are one list. C bindings call
-- l_checkoptions (src/bindings/l_options.c), which calls check; Lua
-- modules call check themselves, first thing:
--
--   local check_options = require("moonlab.options").check
--   function M.fashion_mnist(opts)
--     check_options("datasets.fashion_mnist", opts)
--
-- check(name, opts) takes the entry's name (qualified: "zeros",
-- "datasets.fashion_mnist", "KNNClassifier") and the options (nil is
-- none). A key that is not documented is an error naming the function and
-- the key, with the closest documented key when one is close:
--   zeros: unknown option 'dtyp' (did you mean 'dtype'?)
-- and a value of the wrong type names both types:
--   zeros: option 'dtype' must be a string, not number
-- The error points at the caller of the function that checks.
local AREAS = require "moonlab.help.areas"

local M = {}

local is_array
local function array(v)
  is_array = is_array or require("moonlab").is_array
  return is_array(v)
end

local function integral(v)
  return math.type(v) == "integer"
    or (math.type(v) == "float" and v == math.floor(v)
        and v >= -2^63 and v < 2^63)
end

-- Each option type: its phrase in messages and its test.
local TYPES = {
  boolean = {"a boolean", function(v) return type(v) == "boolean" end},
  integer = {"an integer", integral},
  number = {"a number", function(v) return type(v) == "number" end},
  string = {"a string", function(v) return type(v) == "string" end},
  table = {"a table", function(v) return type(v) == "table" end},
  ["function"] = {"a function", function(v) return type(v) == "function" end},
  array = {"an array", array},
}

-- The alternatives of a type string ("number|array"), checked.
local function alternatives(t)
  local r = {}
  for alt in t:gmatch("[^|]+") do
    if not TYPES[alt] then
      error(("options: unknown option type '%s'"):format(alt), 0)
    end
    r[#r + 1] = alt
  end
  return r
end

-- "a number or an array", for a type string.
function M.phrase(t)
  local words = {}
  for i, alt in ipairs(alternatives(t)) do words[i] = TYPES[alt][1] end
  return table.concat(words, " or ")
end

-- The test of a type string: whether a value has one of its types.
local function test_of(t)
  local alts = alternatives(t)
  if #alts == 1 then return TYPES[alts[1]][2] end
  return function(v)
    for _, alt in ipairs(alts) do
      if TYPES[alt][2](v) then return true end
    end
    return false
  end
end

-- Qualified entry name -> {names = {option names, in order}, types =
-- {name -> type string}, tests = {name -> test}}; built on the first check
-- from every area's entries. The areas are read without being kept
-- (unless help has loaded them already): the help text would otherwise
-- stay in the Lua heap, and every full collection, which large device
-- allocations trigger (core/array.c), would walk it.
local specs

local function area_entries(name)
  local module = "moonlab.help." .. name
  local area = package.loaded[module]
  if not area then area = package.preload[module](module) end
  return area.entries
end

local NO_OPTIONS = {names = {}, types = {}, tests = {}}

local function build()
  specs = {}
  for _, area in ipairs(AREAS) do
    for _, e in ipairs(area_entries(area)) do
      local spec = NO_OPTIONS
      if e.options then
        spec = {names = {}, types = {}, tests = {}}
        for i, o in ipairs(e.options) do
          spec.names[i], spec.types[o.name], spec.tests[o.name] = o.name, o.type, test_of(o.type)
        end
      end
      for _, n in ipairs(e.names or {e.name}) do specs[n] = spec end
    end
  end
end

local function describe(v, t)
  if math.type(v) == "float" and t:find("integer", 1, true) then
    return tostring(v)
  end
  if type(v) == "userdata" and array(v) then return "array" end
  return type(v)
end

-- Edit distance with transpositions (optimal string alignment).
local function distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = {[0] = i} end
  for j = 1, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local ai, bj = a:byte(i), b:byte(j)
      local v = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                         d[i - 1][j - 1] + (ai == bj and 0 or 1))
      if i > 1 and j > 1 and ai == b:byte(j - 1) and a:byte(i - 1) == bj then
        v = math.min(v, d[i - 2][j - 2] + 1)
      end
      d[i][j] = v
    end
  end
  return d[#a][#b]
end

-- The name closest to key (ignoring case), when it is close: at most a
-- third of its length away (at least one edit), and nearer than key's
-- own length (so that "x" suggests nothing); nil when none is.
function M.closest(key, names)
  local best, bestd
  for _, name in ipairs(names) do
    local d = distance(key:lower(), name:lower())
    local close = d <= math.max(1, #name // 3) and d < #key
    if close and (not bestd or d < bestd) then
      best, bestd = name, d
    end
  end
  return best
end

local function unknown(short, key, spec)
  local names = spec.names
  local shown = type(key) == "string" and ("'%s'"):format(key)
                or ("[%s]"):format(tostring(key))
  local hint
  if #names == 0 then
    hint = short .. " takes no options"
  else
    local near = type(key) == "string" and M.closest(key, names)
    hint = near and ("did you mean '%s'?"):format(near)
           or "options: " .. table.concat(names, ", ")
  end
  return ("%s: unknown option %s (%s)"):format(short, shown, hint)
end

local function wrong_type(short, key, value, spec)
  local t = spec.types[key]
  return ("%s: option '%s' must be %s, not %s"):format(short, key, M.phrase(t),
                                                       describe(value, t))
end

-- Raises (at level, default 3: the caller of the checking function) when
-- opts has a key that name's help entry does not document or a value of
-- the wrong type; nil opts passes.
function M.check(name, opts, level)
  if opts == nil then return end
  if not specs then build() end
  local spec = specs[name]
  level = level or 3
  if not spec then
    error(("options: no help entry for '%s'"):format(name), level)
  end
  if type(opts) ~= "table" then
    error(("%s: options must be a table, not %s"):format(
      name:match("[^.:]*$"), describe(opts, "")), level)
  end
  local tests = spec.tests
  for key, value in next, opts do
    local test = tests[key]
    if not test then
      error(unknown(name:match("[^.:]*$"), key, spec), level)
    end
    if not test(value) then
      error(wrong_type(name:match("[^.:]*$"), key, value, spec), level)
    end
  end
end

return M
