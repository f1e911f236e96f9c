-- flip (views with negative strides), roll, pad and einsum on the GPU
-- against the CPU: awkward shapes (1, odd, prime, empty, batched), views,
-- every dtype; and the GPU's kernels on flipped views: copies (to a
-- contiguous array, across dtypes, into a flipped view), elementwise
-- maps, reductions along and across the flipped dimension, scans, sorts,
-- gathers, matrix products (flipped matrices are copied, flipped batches
-- run a product a step), softmax and transfers. Exact but for sums and
-- products (other orders). Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda rearrange", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, pair, shape_name = H.same, H.pair, H.shape_name

local SHAPES = {{1}, {7}, {257}, {0}, {7, 31}, {31, 7}, {3, 0}, {2, 3, 17}, {1, 127, 3}}

local function tol(dt) return dt == "float32" and 1e-5 or 1e-12 end

-- Every subset of the dimensions of an array of nd dimensions, as dims.
local function subsets(nd)
  local r = {}
  for mask = 1, (1 << nd) - 1 do
    local dims = {}
    for d = 1, nd do
      if mask & (1 << (d - 1)) ~= 0 then dims[#dims + 1] = d end
    end
    r[#r + 1] = dims
  end
  return r
end

describe("cuda rearrange", function()
  it("flipped views copy, convert and map as on the CPU", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs(SHAPES) do
        local c, g = pair(s, dt, 0, 50)
        for _, dims in ipairs(subsets(#s)) do
          local what = ("%s %s dims %s"):format(dt, shape_name(s), table.concat(dims, ","))
          local fc, fg = c:flip({dims = dims}), g:flip({dims = dims})
          same(fg:contiguous(), fc:contiguous(), "contiguous " .. what)
          same(fg:astype("float64"), fc:astype("float64"), "astype " .. what)
          same(fg + g, fc + c, "add " .. what)
          same(fg:cpu():cuda(), fc, "download and upload " .. what)
          local dst = ml.zeros(s, {dtype = dt, device = g.device})
          dst:flip({dims = dims}):copy(g)
          same(dst, fc:contiguous(), "copy into " .. what)
        end
      end
    end
  end)

  it("flipped views reduce, scan, sort and gather as on the CPU", function()
    for _, dt in ipairs({"float32", "float64", "int32", "int64"}) do
      for _, s in ipairs({{257}, {7, 31}, {31, 7}, {2, 3, 17}, {64, 300}}) do
        local c, g = pair(s, dt, 0, 50)
        for _, dims in ipairs(subsets(#s)) do
          local what = ("%s %s dims %s"):format(dt, shape_name(s), table.concat(dims, ","))
          local fc, fg = c:flip({dims = dims}), g:flip({dims = dims})
          for d = 1, #s do
            same(fg:sum(d), fc:sum(d), "sum " .. d .. " " .. what, tol(dt), 0)
            same(fg:max(d), fc:max(d), "max " .. d .. " " .. what)
            same(fg:argmin(d), fc:argmin(d), "argmin " .. d .. " " .. what)
            same(fg:cumsum(d), fc:cumsum(d), "cumsum " .. d .. " " .. what, tol(dt), 0)
            same(fg:sort(d), fc:sort(d), "sort " .. d .. " " .. what)
          end
          same(fg:sum(), fc:sum(), "sum " .. what, tol(dt), 0)
          local idx = ml.array({s[#s], 1, 2}, {device = "cpu"})
          same(fg:index_select(#s, idx:cuda()), fc:index_select(#s, idx), "index_select " .. what)
          if H.is_float(dt) then
            same(fg:softmax(#s), fc:softmax(#s), "softmax " .. what, tol(dt), 1e-7)
          end
        end
      end
    end
  end)

  it("flipped matrices and batches multiply as on the CPU", function()
    for _, dt in ipairs({"float32", "float64", "int64"}) do
      local ac, ag = pair({5, 7, 33}, dt, -5, 5)
      local bc, bg = pair({5, 33, 9}, dt, -5, 5)
      for _, da in ipairs(subsets(3)) do
        for _, db in ipairs({{1}, {3}, {1, 2, 3}}) do
          local what = ("%s a dims %s b dims %s"):format(dt, table.concat(da, ","),
                                                          table.concat(db, ","))
          same(ml.matmul(ag:flip({dims = da}), bg:flip({dims = db})),
               ml.matmul(ac:flip({dims = da}), bc:flip({dims = db})), "matmul " .. what,
               tol(dt), 1e-4)
        end
      end
      local mc, mg = pair({31, 17}, dt, -5, 5)
      same(mg:flip():mm(mg:t()), mc:flip():mm(mc:t()), "mm " .. dt, tol(dt), 1e-4)
    end
  end)

  it("roll and pad agree with the CPU", function()
    for _, dt in ipairs(H.dtypes) do
      for _, s in ipairs(SHAPES) do
        local c, g = pair(s, dt, 0, 50)
        local what = dt .. " " .. shape_name(s)
        for _, k in ipairs({0, 1, -3, 1000}) do
          same(g:roll(k), c:roll(k), "roll " .. k .. " " .. what)
          same(g:roll(k, {dims = -1}), c:roll(k, {dims = -1}), "roll -1 " .. k .. " " .. what)
        end
        if #s >= 2 then
          same(g:transpose(1, 2):roll({2, -1}, {dims = {1, 2}}),
               c:transpose(1, 2):roll({2, -1}, {dims = {1, 2}}),
               "roll view " .. what)
        end
        local empty = false
        for _, n in ipairs(s) do empty = empty or n == 0 end
        for _, mode in ipairs({"constant", "edge", "reflect", "symmetric", "wrap"}) do
          if mode == "constant" or not empty then
            for _, w in ipairs({0, 2, {1, 40}}) do
              same(g:pad(w, {mode = mode}), c:pad(w, {mode = mode}),
                   ("pad %s %s %s"):format(mode, type(w) == "table" and "1,40" or w, what))
            end
            same(g:flip():pad(3, {mode = mode}), c:flip():pad(3, {mode = mode}),
                 "pad flipped " .. mode .. " " .. what)
          end
        end
      end
    end
  end)

  it("einsum agrees with the CPU", function()
    local cases = {
      {"ij,jk->ik", {31, 17}, {17, 7}}, {"ij,kj->ik", {31, 17}, {7, 17}},
      {"bij,bjk->bik", {5, 31, 17}, {5, 17, 7}}, {"bij,bkj->bik", {5, 31, 17}, {1, 7, 17}},
      {"ii->i", {13, 13}}, {"ij->", {31, 17}}, {"i,j->ij", {31}, {7}},
      {"...ij,jk", {2, 3, 31, 17}, {17, 7}}, {"ij,ij->i", {31, 17}, {31, 17}},
    }
    for _, dt in ipairs({"float32", "float64", "int64"}) do
      for _, case in ipairs(cases) do
        local cs, gs = {}, {}
        for i = 2, #case do cs[#cs + 1], gs[#gs + 1] = pair(case[i], dt, -5, 5) end
        same(ml.einsum(case[1], table.unpack(gs)), ml.einsum(case[1], table.unpack(cs)),
             case[1] .. " " .. dt, tol(dt), 1e-4)
      end
    end
  end)
end)
