-- The Lua half of moonlab: completes the module table that the C half
-- (src/bindings/l_module.c) built. Each submodule is loaded on first use;
-- an entry {module, field} exposes one field of a submodule. The table of
-- these fields is also ml's metatable's field `lazy`, for those who list
-- ml's fields (help, completion).
return function(ml)
  local lazy = {
    datasets = "moonlab.datasets",
    test = "moonlab.test",
    KNNClassifier = {"moonlab.knn", "KNNClassifier"},
    help = {"moonlab.help", "help"},
    help_text = {"moonlab.help", "text"},
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
    lazy = lazy,
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
