-- The Lua half of moonlab: completes the module table that the C half
-- (src/bindings/l_module.c) built. Each submodule is loaded on first use;
-- an entry {module, field} exposes one field of a submodule. The table of
-- these fields is also ml's metatable's field `lazy`, for those who list
-- ml's fields (help, completion).
return function(ml)
  local lazy = {
    datasets = "moonlab.datasets",
    plot = "moonlab.plot",
    test = "moonlab.test",
    KNNClassifier = {"moonlab.knn", "KNNClassifier"},
    KMeans = {"moonlab.kmeans", "KMeans"},
    GaussianMixture = {"moonlab.mixture", "GaussianMixture"},
    help = {"moonlab.help", "help"},
    help_text = {"moonlab.help", "text"},
    timeit = {"moonlab.timing", "timeit"},
  }
  -- the argument checks the modules below share (array needs ml)
  require("moonlab.args").install(ml)
  -- ml.linalg's compositions and ml.cov, written in Lua
  require("moonlab.linalg").install(ml)
  -- ml.ndimage's filters built on its passes, written in Lua
  require("moonlab.ndimage").install(ml)
  -- NumPy's logic functions, clip, relu and sign, written in Lua
  require("moonlab.logic").install(ml)
  -- tril, triu, diag, kron, tensordot, tile and their kin, written in Lua
  require("moonlab.structure").install(ml)
  -- flipud, fliplr, roll, pad and einsum, written in Lua
  require("moonlab.rearrange").install(ml)
  require("moonlab.einsum").install(ml)
  -- bernoulli, gamma, choice, shuffle and their kin over rand and randn
  require("moonlab.random").install(ml)
  -- unique, histogram, quantile, the nan-reductions and their kin, in Lua
  require("moonlab.stats").install(ml)
  -- ml.binary: packed ±1 matrices, their products and Hamming search
  require("moonlab.binary").install(ml)
  -- ml.dist's sharded kNN and SUMMA, written in Lua
  require("moonlab.dist").install(ml)
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
