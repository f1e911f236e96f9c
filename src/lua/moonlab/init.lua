-- The Lua half of moonlab: completes the module table that the C half
-- (src/bindings/l_module.c) built. Each submodule is loaded on first use;
-- an entry {module, field} exposes one field of a submodule.
return function(ml)
  local lazy = {
    datasets = "moonlab.datasets",
    test = "moonlab.test",
    KNNClassifier = {"moonlab.knn", "KNNClassifier"},
  }
  -- `fields` names what __index loads, for the shell's tab completion.
  setmetatable(ml, {
    fields = lazy,
    __index = function(t, key)
      local entry = lazy[key]
      if entry then
        local value
        if type(entry) == "table" then
          value = require(entry[1])[entry[2]]
        else
          value = require(entry)
        end
        rawset(t, key, value)
        return value
      end
    end,
  })
end
