-- softmax and log_softmax on the GPU against the CPU: awkward row lengths
-- (the warp path with and without 16-byte loads, the block path beyond
-- 4096 with the row in registers up to 8192 float32 and read three times
-- beyond), every dimension, views, and edge rows. The exponentials are the
-- dtype's on both devices but from different libraries, and the sums
-- run in different orders: a few ulps. Pending where there is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda softmax", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

local H = require "tests.helpers.cuda"
local same, pair, shape_name = H.same, H.pair, H.shape_name

-- log_softmax is x - lse: lse's last bits (sums in another order) show
-- in full when x - lse is small, so its tolerance is absolute, in units
-- of the inputs' range (40).
local function tol(dt) return dt == "float32" and 4e-6 or 1e-13 end
local function atol(dt, fn)
  if fn == "softmax" then return 1e-30 end
  return 40 * (dt == "float32" and 2e-7 or 1e-15)
end

describe("cuda softmax", function()
  it("agrees with the CPU on awkward shapes, dims and dtypes", function()
    for _, dt in ipairs(H.floats) do
      for _, s in ipairs({{1}, {7}, {31}, {1024}, {4099}, {3, 8192}, {12288}, {0}, {3, 0},
                          {7, 31}, {5, 1027}, {2, 3, 17}, {257, 8}}) do
        local c, g = pair(s, dt, -40, 40)
        for dim = 1, #s do
          for _, fn in ipairs({"softmax", "log_softmax"}) do
            local what = ("%s %s %s dim %d"):format(fn, dt, shape_name(s), dim)
            local gp, gl = ml[fn](g, dim)
            local cp, cl = ml[fn](c, dim)
            same(gp, cp, what, tol(dt), atol(dt, fn))
            same(gl, cl, what .. " lse", tol(dt), 0)
          end
        end
      end
    end
  end)

  it("takes views and edge rows as the CPU does", function()
    local c, g = pair({33, 65}, "float32")
    same(g:t():softmax(2), c:t():softmax(2), "transpose", 4e-6, 1e-30)
    same(g:narrow(2, 2, 63):softmax(2), c:narrow(2, 2, 63):softmax(2), "narrow", 4e-6, 1e-30)
    local inf = math.huge
    local e = ml.array({{inf, 1, 2, 3}, {-inf, -inf, -inf, -inf}, {0 / 0, 1, 2, 3},
                        {1e30, -1e30, 0, 1}})
    for _, dt in ipairs(H.floats) do
      local ec = e:astype(dt)
      local gp, gl = ec:cuda():softmax(2)
      local cp, cl = ec:softmax(2)
      same(gp, cp, "edge rows " .. dt, 0, 0)
      same(gl, cl, "edge rows lse " .. dt, 0, 0)
    end
  end)

  it("is the same bits run to run", function()
    local _, g = pair({1000, 3000}, "float64")
    local a, la = g:softmax(2)
    local b, lb = g:softmax(2)
    same(a, b, "softmax twice", 0, 0)
    same(la, lb, "lse twice", 0, 0)
  end)
end)
