-- The Lua half of moonlab: completes the module table that the C half
-- (src/bindings/l_module.c) built. Each submodule is loaded on first use.
return function(ml)
  local lazy = {
    datasets = "moonlab.datasets",
    test = "moonlab.test",
  }
  setmetatable(ml, {
    __index = function(t, key)
      local name = lazy[key]
      if name then
        local mod = require(name)
        rawset(t, key, mod)
        return mod
      end
    end,
  })
end
