-- Help: one entry for every public function, written once in
-- src/lua/moonlab/help/<area>.lua, from which come ml.help(f) and
-- ml.help_text(f), the option checking (moonlab/options.lua) and
-- docs/api.md (make docs). docs/adding-functions.md describes an entry.
--
--   ml.help()                  the areas and their functions
--   ml.help(ml.knn)            an entry, found by identity: a module
--   ml.help(x.sum)             function, a method, a class (ml.KNNClassifier)
--   ml.help(clf.fit)           or a class's method
--   ml.help(ml.cuda)           a namespace's area
--   ml.help("knn")             by name: "linalg.cholesky", "x:sum",
--   ml.help("reduce")          "KNNClassifier:fit", or an area's name
--
-- help prints and returns nothing (the shell would print it twice);
-- help_text returns the text, or nil and a message.
local M = {}

-- The areas, in the order of the reference; each is the module
-- moonlab.help.<name>.
M.AREAS = {
  "array", -- first: help(x) for an array x shows it
  "construct", "convert", "elementwise", "reduce", "products",
  "linalg", "shape", "index", "random", "io", "knn", "cluster", "datasets",
  "runtime", "cuda", "test",
}

local loaded

-- The areas' tables, each completed with its name, and each entry with
-- names (a list, also for a single name) and area.
function M.areas()
  if not loaded then
    local list = {}
    for i, name in ipairs(M.AREAS) do
      local area = require("moonlab.help." .. name)
      area.name = name
      for _, e in ipairs(area.entries) do
        e.names = e.names or {e.name}
        e.area = area
      end
      list[i] = area
    end
    loaded = list
  end
  return loaded
end

local byname

-- The entry of a qualified name ("zeros", "cuda.memory",
-- "KNNClassifier:fit"), or nil.
function M.entry(name)
  if not byname then
    byname = {}
    for _, area in ipairs(M.areas()) do
      for _, e in ipairs(area.entries) do
        for _, n in ipairs(e.names) do byname[n] = e end
      end
    end
  end
  return byname[name]
end

-- The value a qualified name names in ml (loading lazy fields); "x:name"
-- names a method that is not a module function (x:cuda).
function M.resolve(ml, name)
  local ns, fname = name:match("^([%w_]+)[.:]([%w_]+)$")
  if not ns then return ml[name] end
  local t = ns == "x" and ml.methods or ml[ns]
  return type(t) == "table" and t[fname] or nil
end

-- Whether v is a class: a table that constructs when called.
function M.is_class(v)
  local mt = type(v) == "table" and getmetatable(v)
  return mt and mt.__call ~= nil or false
end

-- The public functions of ml: its function fields (those that load on
-- first use too), the function fields of its namespaces ("cuda.memory"),
-- its classes ("KNNClassifier") and their methods ("KNNClassifier:fit"),
-- and its array methods ("x:sum"), as a sorted list of {name, value}.
function M.public(ml)
  local fields = {}
  for k in pairs(ml) do fields[k] = true end
  local mt = getmetatable(ml)
  for k in pairs(mt and mt.fields or {}) do fields[k] = true end
  local list = {}
  local function add(name, v) list[#list + 1] = {name = name, value = v} end
  for k in pairs(fields) do
    local v = ml[k]
    if type(v) == "function" then
      add(k, v)
    elseif M.is_class(v) then
      add(k, v)
      for m, f in pairs(v) do
        if type(f) == "function" and not m:match("^__") then
          add(k .. ":" .. m, f)
        end
      end
    elseif type(v) == "table" and k ~= "methods" then
      for m, f in pairs(v) do
        if type(f) == "function" then add(k .. "." .. m, f) end
      end
    end
  end
  for k, f in pairs(ml.methods) do add("x:" .. k, f) end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

-- What each public value is: {entry=, name=} for functions and classes,
-- {area=} for namespaces, {overview=true} for ml itself.
local function identities(ml)
  local map = {[ml] = {overview = true}}
  for _, area in ipairs(M.areas()) do
    if area.namespace then
      local ok, t = pcall(function() return ml[area.namespace] end)
      if ok and t ~= nil then map[t] = {area = area} end
    end
    for _, e in ipairs(area.entries) do
      for _, n in ipairs(e.names) do
        local ok, v = pcall(M.resolve, ml, n)
        if ok and v ~= nil and not map[v] then
          map[v] = {entry = e, name = n}
        end
      end
    end
  end
  return map
end

-- ml -> its identities, made on the first lookup by value and again
-- when a value is not found (a field replaced since).
local known = setmetatable({}, {__mode = "k"})

-- The entry, area or overview that a name means, or nil and a message:
-- a qualified entry name, with or without "ml." or "x:", "." for ":"
-- ("KNNClassifier.fit"), an area or namespace name, or the last part of
-- one entry's name ("fashion_mnist", "fit").
local function by_name(f)
  local name = f:gsub("^ml%.", "")
  for _, n in ipairs({name, (name:gsub("^x:", "")),
                      (name:gsub("%.", ":", 1))}) do
    if M.entry(n) then return {entry = M.entry(n), name = n} end
  end
  if name == "ml" or name == "moonlab" then return {overview = true} end
  local found = {}
  for _, area in ipairs(M.areas()) do
    if area.name == name or area.namespace == name then
      return {area = area}
    end
    for _, e in ipairs(area.entries) do
      for _, n in ipairs(e.names) do
        if n:match("[^.:]*$") == name then found[#found + 1] = n end
      end
    end
  end
  if #found == 1 then return {entry = M.entry(found[1]), name = found[1]} end
  if #found > 1 then
    return nil, ("help: '%s' is ambiguous: %s"):format(
      f, table.concat(found, ", "))
  end
  return nil, ("help: no entry named '%s'"):format(f)
end

-- The entry (or area, or overview) for f, by name or by identity; nil
-- and a message when there is none.
function M.lookup(f)
  if type(f) == "string" then return by_name(f) end
  local ml = require "moonlab"
  local r = known[ml] and known[ml][f]
  if not r then
    known[ml] = identities(ml)
    r = known[ml][f]
  end
  if r then return r end
  if ml.is_array(f) then return {area = M.areas()[1]} end
  return nil, ("help: no entry for this %s (try help() for the list)"):format(
    type(f))
end

-- Text layout ------------------------------------------------------------

local WIDTH = 78

-- s (one paragraph) broken into lines of at most WIDTH columns, each
-- starting with indent (the first with first, when given).
local function wrap(s, indent, first)
  local lines, line = {}, first or indent
  local empty = true
  for word in s:gmatch("%S+") do
    if not empty and #line + 1 + #word > WIDTH then
      lines[#lines + 1] = line
      line, empty = indent, true
    end
    line = line .. (empty and "" or " ") .. word
    empty = false
  end
  lines[#lines + 1] = line
  return table.concat(lines, "\n")
end

local function indent(s, by)
  return (s:gsub("\n$", ""):gsub("[^\n]+", function(l) return by .. l end))
end

-- The first sentence of a paragraph, on one line.
local function summary(doc)
  local flat = doc:gsub("%s+", " "):gsub("^ ", "")
  return flat:match("^(.-%.)%s") or flat:match("^(.-%.)$") or flat
end

local function short(name) return name:match("[^.:]*$") end

local function type_words(t) return (t:gsub("|", " or ")) end

-- The text of one entry.
function M.entry_text(e)
  local out = {}
  for _, u in ipairs(e.usage) do out[#out + 1] = u end
  out[#out + 1] = ""
  out[#out + 1] = indent(e.doc, "  ")
  if e.options and #e.options > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "Options:"
    for _, o in ipairs(e.options) do
      out[#out + 1] = ("  %s  %s, default %s"):format(
        o.name, type_words(o.type), o.default)
      out[#out + 1] = wrap(o.doc, "      ")
    end
  end
  out[#out + 1] = ""
  out[#out + 1] = wrap(e.returns, "  ", "Returns: ")
  local prefix, methods = e.names[1] .. ":", {}
  for _, m in ipairs(e.area.entries) do -- a class's methods
    if m.names[1]:sub(1, #prefix) == prefix then methods[#methods + 1] = m end
  end
  if #methods > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "Methods:"
    for _, m in ipairs(methods) do
      out[#out + 1] = "  " .. m.usage[1]
      out[#out + 1] = wrap(summary(m.doc), "      ")
    end
  end
  out[#out + 1] = ""
  out[#out + 1] = "Example:"
  out[#out + 1] = indent(e.example, "  ")
  return table.concat(out, "\n") .. "\n"
end

-- The text of an area: title, introduction and a line per entry.
function M.area_text(area)
  local out = {("%s (help area \"%s\")"):format(area.title, area.name), ""}
  out[#out + 1] = indent(area.intro, "  ")
  out[#out + 1] = ""
  for _, e in ipairs(area.entries) do
    out[#out + 1] = "  " .. table.concat(e.names, ", ")
    out[#out + 1] = wrap(summary(e.doc), "      ")
  end
  return table.concat(out, "\n") .. "\n"
end

-- The overview: every area with its functions.
function M.overview_text()
  local ml = require "moonlab"
  local out = {
    ("moonlab %s. help(f) shows a function: help(ml.zeros), help(x.sum),")
      :format(ml.version),
    'help("knn"); help("reduce") shows an area. The same text is in '
      .. "docs/api.md.",
    "",
  }
  for _, area in ipairs(M.areas()) do
    local names = {}
    for _, e in ipairs(area.entries) do
      for _, n in ipairs(e.names) do
        names[#names + 1] = area.namespace and short(n) or n
      end
    end
    out[#out + 1] = ("%-12s %s"):format(area.name, area.title)
    out[#out + 1] = wrap(table.concat(names, " "), (" "):rep(13))
  end
  return table.concat(out, "\n") .. "\n"
end

-- ml.help_text(f): the text for f, or nil and a message.
function M.text(...)
  if select("#", ...) == 0 then return M.overview_text() end
  local r, msg = M.lookup((...))
  if not r then return nil, msg end
  if r.overview then return M.overview_text() end
  if r.area then return M.area_text(r.area) end
  return M.entry_text(r.entry)
end

-- ml.help(f): prints the text for f (or why there is none).
function M.help(...)
  local text, msg = M.text(...)
  io.write(text or msg .. "\n")
end

-- Markdown: docs/api.md -------------------------------------------------

local function slug(title)
  return (title:lower():gsub("[^%w%s_-]", ""):gsub("%s", "-"))
end

local function cell(s) return (s:gsub("|", "\\|"):gsub("%s+", " ")) end

local function entry_markdown(e, out)
  out[#out + 1] = "### " .. table.concat(e.names, ", ")
  out[#out + 1] = ""
  out[#out + 1] = "```lua"
  for _, u in ipairs(e.usage) do out[#out + 1] = u end
  out[#out + 1] = "```"
  out[#out + 1] = ""
  out[#out + 1] = e.doc:gsub("\n$", "")
  if e.options and #e.options > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "| option | type | default | meaning |"
    out[#out + 1] = "|---|---|---|---|"
    for _, o in ipairs(e.options) do
      out[#out + 1] = ("| `%s` | %s | `%s` | %s |"):format(
        o.name, type_words(o.type), cell(o.default), cell(o.doc))
    end
  end
  out[#out + 1] = ""
  out[#out + 1] = "**Returns** " .. e.returns
  out[#out + 1] = ""
  out[#out + 1] = "```lua"
  out[#out + 1] = e.example:gsub("\n$", "")
  out[#out + 1] = "```"
  out[#out + 1] = ""
end

-- The reference, docs/api.md: every area and entry, in order.
function M.markdown()
  local out = {
    "# moonlab API reference",
    "",
    "Generated by `make docs` from the help entries in",
    "`src/lua/moonlab/help/*.lua`; do not edit. The shell shows the same",
    "entries: `help(ml.zeros)`, `help(x.sum)`, `help(\"knn\")`. Examples run",
    "in the shell, where `ml` is loaded; `-->` shows what a line prints.",
    "",
  }
  local areas = M.areas()
  for _, area in ipairs(areas) do
    out[#out + 1] = ("- [%s](#%s)"):format(area.title, slug(area.title))
  end
  out[#out + 1] = ""
  for _, area in ipairs(areas) do
    out[#out + 1] = "## " .. area.title
    out[#out + 1] = ""
    out[#out + 1] = area.intro:gsub("\n$", "")
    out[#out + 1] = ""
    for _, e in ipairs(area.entries) do entry_markdown(e, out) end
  end
  return (table.concat(out, "\n"):gsub("\n+$", "\n"))
end

return M
