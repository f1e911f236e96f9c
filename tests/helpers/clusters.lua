-- Shared by the clustering specs (kmeans_spec.lua, mixture_spec.lua).
-- Load with `require "tests.helpers.clusters"`.
local ml = require "moonlab"

local M = {}

-- Whether each of the 3 clusters of labels holds exactly one of the 3
-- groups of truth (labels and truth 1-based).
function M.pure(labels, truth)
  local codes = (labels - 1) * 3 + truth
  local distinct = ml.ones(9, {dtype = "int64"}):scatter(1, codes, 0)
  return 9 - distinct:sum() == 3
end

return M
