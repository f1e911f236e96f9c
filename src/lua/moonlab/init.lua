-- The Lua half of moonlab: completes the module table that the C half
-- (src/bindings/l_module.c) built. Each submodule is loaded on first use.
return function(ml)
  local lazy = {
    datasets = "moonlab.datasets",
    test = "moonlab.test",
  }
  -- ml.memory([device]): {allocated, peak, arrays} from the core, and
  -- `cached`, the bytes a GPU's caching allocator keeps for reuse.
  local core_memory = ml.memory
  local function on_gpu(device) return device:match("^cuda") ~= nil end
  function ml.memory(device)
    device = device or ml.device()
    local m = core_memory(device)
    m.cached = on_gpu(device) and ml.cuda.memory(device).cached or 0
    return m
  end

  -- ml.empty_cache([device]): returns a GPU's cached blocks to the driver.
  function ml.empty_cache(device)
    device = device or ml.device()
    if on_gpu(device) then ml.cuda.empty_cache(device) end
  end

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
