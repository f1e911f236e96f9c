-- ml.knn on the CUDA backend against the CPU backend (the helpers are in
-- tests/helpers/cuda.lua). Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda knn", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local GPU, same, same_error, floats, input = H.GPU, H.same, H.same_error, H.floats, H.input

describe("cuda knn", function()
  -- ml.knn on the GPU against the CPU: the same neighbours, nearest first,
  -- and the same distances (the exact keys are computed in the same
  -- operations on both, so they agree to the bit; the tolerances are
  -- 1e-6 for float32 and 1e-12 for float64, relative). Sizes reach every
  -- path of kernels/knn.cu: selection by a warp or by a block a row (lists
  -- of more than 256 candidates), refinement by a warp or a block
  -- (k > 256), tiles of queries and references, and the core's retries.
  local metrics = {"euclidean", "sqeuclidean", "cosine", "ip"}
  local rtol = {float32 = 1e-6, float64 = 1e-12}

  local function agree(qc, rc, k, opts, what)
    local dc, ic = ml.knn(qc, rc, k, opts)
    local dg, ig = ml.knn(qc:cuda(), rc:cuda(), k, opts)
    what = ("%s %s %dx%d against %d, k = %d"):format(what, qc.dtype, qc:size(1), qc:size(2),
                                                      rc:size(1), k)
    same(ig, ic, what .. " (indices)")
    same(dg, dc, what .. " (distances)", rtol[qc.dtype], 1e-300)
  end

  it("agrees on every metric and dtype, on awkward sizes", function()
    local cases = {{1, 1, 3, 1}, {1, 7, 5, 7}, {7, 1, 3, 1}, {13, 31, 7, 1}, {13, 31, 7, 31},
                   {37, 101, 17, 5}, {101, 257, 33, 20}, {3, 5, 0, 2}, {2, 127, 1, 127},
                   {17, 4099, 3, 9}}
    for _, dt in ipairs(floats) do
      for _, case in ipairs(cases) do
        local m, n, d, k = table.unpack(case)
        local q, r = input({m, d}, dt), input({n, d}, dt)
        for _, metric in ipairs(metrics) do agree(q, r, k, {metric = metric}, metric) end
      end
    end
  end)

  it("excludes each query's own row", function()
    for _, dt in ipairs(floats) do
      for _, case in ipairs({{2, 1}, {29, 1}, {29, 28}, {130, 7}, {131, 130}}) do
        local n, k = case[1], case[2]
        local x = input({n, 5}, dt)
        for _, metric in ipairs(metrics) do
          agree(x, x, k, {metric = metric, exclude_self = true}, metric .. " exclude_self")
        end
      end
    end
  end)

  it("gives the same answer in tiles of queries and references", function()
    for _, dt in ipairs(floats) do
      for _, d in ipairs({6, 70}) do -- the filtered search and the general one
        local q, r = input({300, d}, dt), input({1009, d}, dt)
        for _, budget in ipairs({1, 4096, 20000, 300000}) do
          for _, metric in ipairs(metrics) do
            agree(q, r, 5, {metric = metric, budget = budget}, metric .. " budget " .. budget)
          end
          agree(r, r, 3, {budget = budget, exclude_self = true}, "exclude_self budget " .. budget)
          agree(q, r, 8, {budget = budget, method = "bounded"}, "bounded budget " .. budget)
        end
      end
    end
  end)

  it("keeps long candidate lists and large k", function()
    for _, dt in ipairs(floats) do
      local q, r = input({41, 4}, dt), input({2111, 4}, dt)
      for _, k in ipairs({121, 300, 2048, 2111}) do
        agree(q, r, k, {}, "long lists")
        agree(q, r, k, {metric = "ip", budget = 100000}, "long lists in tiles, ip")
      end
    end
  end)

  it("agrees on thousands of queries of every small dimension", function()
    local m = 5120
    for _, dt in ipairs(floats) do
      for _, d in ipairs({1, 3, 7, 16, 29, 37, 64, 65, 100}) do
        local q, r = input({m, d}, dt), input({611, d}, dt)
        agree(q, r, 20, {}, "d = " .. d)
        agree(q, r, 1, {metric = "cosine"}, "cosine d = " .. d)
        -- the filtered search past d = 64 too (FD coordinates a step), and
        -- float32 filtered without split TF32
        if d > 64 then agree(q, r, 7, {method = "filter", metric = "ip"}, "filter d = " .. d) end
        if d == 16 then agree(q, r, 20, {tf32 = false}, "no TF32 d = " .. d) end
      end
      local x = input({m, 8}, dt)
      agree(x, x, 10, {exclude_self = true}, "exclude_self")
      agree(x, x, 5, {metric = "ip", exclude_self = true, budget = 2 ^ 22},
            "exclude_self in tiles")
    end
  end)

  it("finds the nearest reference of thousands of queries on tensor cores", function()
    -- k = 1 in float32 with 4096 queries or more and d <= 128 takes
    -- knn_nearest_tc.cu (the bounded pass without the work block): every
    -- metric, references past one tile of 128 and not a multiple of it,
    -- d not a multiple of 4 (4-byte copies) or past one stage of 32, a
    -- last block of queries cut short, views, the query itself left out
    local m = 4099
    for _, case in ipairs({{1, 1}, {7, 3}, {129, 31}, {300, 100}, {613, 127}, {1031, 128},
                           {64, 64}}) do
      local n, d = case[1], case[2]
      local q, r = input({m, d}, "float32"), input({n, d}, "float32")
      for _, metric in ipairs(metrics) do
        agree(q, r, 1, {metric = metric, method = "bounded"}, "nearest " .. metric)
      end
    end
    -- a budget that leaves tiles of 1024 queries, the last of 3: the
    -- kernel takes every tile of a batch of 4096 or more
    agree(input({m, 5}, "float32"), input({300, 5}, "float32"), 1,
          {method = "bounded", budget = 658039}, "nearest in tiles")
    local wide = input({m, 130}, "float32")
    agree(wide:narrow(2, 2, 128), input({257, 128}, "float32"), 1, {method = "bounded"},
          "nearest of a view")
    local x = input({m, 20}, "float32")
    agree(x, x, 1, {exclude_self = true, method = "bounded"}, "nearest exclude_self")
    agree(x, x, 1, {exclude_self = true, metric = "ip", method = "bounded"},
          "nearest exclude_self ip")
    -- near-ties everywhere: the lists overflow or fail the test and the
    -- queries go round again in float32
    ml.seed(37)
    local qc = ml.randint(-20, 21, {m, 8}, {device = "cpu"}):astype("float32") * 2 ^ -10 + 1e4
    local rc = ml.randint(-20, 21, {700, 8}, {device = "cpu"}):astype("float32") * 2 ^ -10 + 1e4
    for _, metric in ipairs(metrics) do
      agree(qc, rc, 1, {metric = metric, method = "bounded"}, "nearest cancelling " .. metric)
    end
    local base = input({5, 3}, "float32"):round()
    local dup = ml.cat({base, base, base, base, base, base, base, base}, 1)
    agree(input({m, 3}, "float32"):round(), dup, 1, {method = "bounded"}, "nearest ties")
    local qn = input({m, 4}, "float32")
    qn[{{1, 3}, {}}]:fill(0 / 0)
    qn[{{7, 9}, {2}}]:fill(math.huge)
    local rn = input({300, 4}, "float32")
    rn[{{5}, {}}]:fill(0 / 0)
    rn[{{9}, {1}}]:fill(-math.huge)
    for _, metric in ipairs(metrics) do
      agree(qn, rn, 1, {metric = metric, method = "bounded"}, "nearest nan and inf " .. metric)
    end
  end)

  it("retries where the fast keys cancel, tie and meet NaN and inf", function()
    local cases = {float32 = {1e4, 2 ^ -10}, float64 = {1e8, 2 ^ -26}}
    for _, dt in ipairs(floats) do
      local center, ulp = cases[dt][1], cases[dt][2]
      ml.seed(31)
      local q = ml.randint(-20, 21, {40, 8}, {device = "cpu"}):astype(dt) * ulp + center
      local r = ml.randint(-20, 21, {700, 8}, {device = "cpu"}):astype(dt) * ulp + center
      for _, metric in ipairs(metrics) do agree(q, r, 4, {metric = metric}, "cancelling " .. metric) end
      -- the filter on tensor cores sums the Euclidean key in its accumulator
      for _, metric in ipairs({"euclidean", "sqeuclidean"}) do
        agree(q, r, 4, {metric = metric, method = "filter"}, "cancelling filtered " .. metric)
      end
      agree(r, r, 3, {exclude_self = true}, "cancelling exclude_self")
      for _, metric in ipairs(metrics) do
        agree(q, r, 4, {metric = metric, method = "bounded"}, "cancelling bounded " .. metric)
      end
      agree(r, r, 3, {exclude_self = true, method = "bounded"}, "cancelling bounded exclude_self")
      -- past d = 64 float32 ranks with TF32 first, whose wider bound
      -- leaves most of these to the float32 retry
      local qw = ml.randint(-20, 21, {40, 80}, {device = "cpu"}):astype(dt) * ulp + center
      local rw = ml.randint(-20, 21, {700, 80}, {device = "cpu"}):astype(dt) * ulp + center
      for _, metric in ipairs(metrics) do agree(qw, rw, 4, {metric = metric}, "cancelling d = 80 " .. metric) end
      agree(qw, rw, 4, {tf32 = false}, "cancelling d = 80 without TF32")
      -- few distinct points, each many times: ties everywhere
      local base = input({5, 3}, dt):round()
      local dup = ml.cat({base, base, base, base, base, base, base, base}, 1)
      for _, metric in ipairs(metrics) do
        for _, k in ipairs({1, 7, 23, 40}) do agree(dup, dup, k, {metric = metric}, "ties " .. metric) end
      end
      local nan, inf = 0 / 0, math.huge
      local rs = ml.array({{nan, 0}, {1, 1}, {inf, 0}, {0, 0}, {2, 0}, {-inf, 3}, {0, -0.0}},
                          {dtype = dt, device = "cpu"})
      local qs = ml.array({{nan, 1}, {0, 0}, {1, inf}, {-0.0, 2}}, {dtype = dt, device = "cpu"})
      for _, metric in ipairs(metrics) do
        for _, k in ipairs({1, 4, 7}) do
          agree(qs, rs, k, {metric = metric}, "nan and inf " .. metric)
          agree(qs, rs, k, {metric = metric, method = "bounded"}, "nan and inf bounded " .. metric)
        end
      end
    end
  end)

  it("reports bad arguments as the CPU does", function()
    local q, r = input({3, 2}, "float32"), input({5, 2}, "float32")
    same_error(function() return ml.knn(q:cuda(), r:cuda(), 6) end,
               function() return ml.knn(q, r, 6) end, "knn k > n")
    local ok, err = pcall(ml.knn, q:cuda(), r, 1)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("knn: arrays on different devices (" .. GPU .. " and cpu)", 1,
                                     true), tostring(err))
  end)
end)
