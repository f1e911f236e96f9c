-- index_add on the GPU against the CPU, bit for bit (both sum in index
-- order, floats in double, in runs of 256 slices). Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda index_add", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, same_error, dtypes = H.same, H.same_error, H.dtypes
local pair, shape_name = H.pair, H.shape_name

describe("cuda index_add", function()
  it("gives the CPU's bits: every dtype, dims, repeats, negatives, views", function()
    for _, dt in ipairs(dtypes) do
      -- the last three give targets of more than a run of 256 slices (runs
      -- summed apart, then added in order; backend.h)
      for _, case in ipairs({{{7}, 1, 13}, {{1}, 1, 1}, {{31, 5}, 1, 1000}, {{5, 31}, 2, 257},
                             {{3, 4, 6}, 2, 9}, {{1024, 3}, 1, 20000}, {{3, 7}, 1, 5000},
                             {{2}, 1, 70001}, {{2, 3, 5}, 2, 1537}}) do
        local shape, dim, m = case[1], case[2], case[3]
        local size = shape[dim]
        local idx = ml.randint(-size, size, m, {device = "cpu"})
        idx = idx + ml.eq(idx, 0):astype("int64") -- no 0: negatives count from the end
        local sshape = {table.unpack(shape)}
        sshape[dim] = m
        local xc, xg = pair(shape, dt)
        local sc, sg = pair(sshape, dt)
        same(xg:index_add(dim, idx:cuda(), sg), xc:index_add(dim, idx, sc),
             ("index_add %s %s dim %d, %d indices"):format(dt, shape_name(shape), dim, m))
      end
    end
    local xc, xg = pair({6, 5}, "float64")
    local sc, sg = pair({3, 6}, "float64")
    same(xg:index_add(2, ml.array({5, 1, 5}):cuda(), sg:t()), xc:index_add(2, {5, 1, 5}, sc:t()),
         "index_add of a transposed src")
    same_error(function() return xg:index_add(1, ml.array({1, 7}):cuda(), ml.ones(2, 5):cuda()) end,
               function() return xc:index_add(1, {1, 7}, ml.ones(2, 5, {device = "cpu"})) end,
               "bad index")
  end)
end)
