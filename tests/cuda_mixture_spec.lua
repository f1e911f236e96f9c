-- GaussianMixture on the GPU: the same bits from run to run, and the CPU's
-- lower bounds to 1e-9 relative in float64 (issue 13). Pending where there
-- is no GPU.
local ml = require "moonlab"

if not ml.cuda.available() then
  describe("cuda GaussianMixture", function()
    pending("no CUDA device here (ml.cuda.available() is false): these specs run on a GPU host")
  end)
  return
end

-- Four groups of 300 samples in 6 dimensions, on the CPU, and 4 of the
-- samples as initial means.
local function data()
  ml.seed(13)
  local centers = ml.randn(4, 6, {device = "cpu"}) * 4
  local X = ml.cat({centers[1] + ml.randn(300, 6, {device = "cpu"}),
                    centers[2] + ml.randn(300, 6, {device = "cpu"}) * 0.5,
                    centers[3] + ml.randn(300, 6, {device = "cpu"}) * 2,
                    centers[4] + ml.randn(300, 6, {device = "cpu"})}, 1)
  return X, X:index_select(1, ml.array({1, 301, 601, 901}, {dtype = "int64", device = "cpu"}))
end

local function fit(X, means, t)
  local gm = ml.GaussianMixture{n_components = 4, covariance_type = t, max_iter = 40,
                                tol = 0, means_init = means}
  return gm:fit(X)
end

describe("cuda GaussianMixture", function()
  for _, t in ipairs({"full", "tied", "diag", "spherical"}) do
    it(t .. ": the same bits run to run, the CPU's lower bounds to 1e-9", function()
      local X, means = data()
      local a = fit(X:cuda(), means:cuda(), t)
      local b = fit(X:cuda(), means:cuda(), t)
      local c = fit(X, means, t)
      assert.equal(#c.lower_bounds, #a.lower_bounds)
      for i = 1, #a.lower_bounds do
        assert.equal(a.lower_bounds[i], b.lower_bounds[i])
        local want = c.lower_bounds[i]
        assert.is_true(math.abs(a.lower_bounds[i] - want) <= 1e-9 * math.abs(want),
                       ("%s iteration %d: %.17g on the GPU, %.17g on the CPU")
                         :format(t, i, a.lower_bounds[i], want))
      end
      assert.equal(0, (a.means - b.means):abs():max())
      assert.equal(0, (a.covariances - b.covariances):abs():max())
    end)
  end
end)
