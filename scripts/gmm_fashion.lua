-- Gaussian mixture EM on Fashion-MNIST: the 60000 training images, K
-- components (default 10) with full covariances, in float64, on the
-- default device. On a GPU the mixture models the 784 pixels; on a CPU the
-- images are first projected on their 50 principal components (the
-- eigenvectors of their covariance, ml.cov, with the largest eigenvalues,
-- by ml.linalg.eigh), so that the fit ends within a minute. Prints the
-- lower bound and the time of every iteration, the fit's time and the
-- cluster purity against the labels (the share of images whose component's
-- most frequent class is theirs).
--
--   moonlab scripts/gmm_fashion.lua [--k 10] [--dim D] [--covariance full]
--       [--max-iter 100] [--tol 1e-3] [--dtype float64] [--device D]
--       [--seed 1] [--plot DIR]
--
-- --dim 784 keeps the pixels, a smaller D projects (default: 784 on a GPU,
-- 50 on a CPU). --plot DIR draws DIR/gmm_lower_bound.png (the lower bound
-- per iteration) and DIR/gmm_means.png (the component means as 28 x 28
-- images, projected back on the pixels).
local ml = require "moonlab"

local USAGE = "usage: gmm_fashion.lua [--k K] [--dim D] [--covariance T] "
              .. "[--max-iter N] [--tol T] [--dtype T] [--device D] [--seed S] "
              .. "[--plot DIR]"
local NUMBERS = {k = true, dim = true, ["max-iter"] = true, tol = true,
                 seed = true}

local function options(argv)
  local o = {k = 10, covariance = "full", ["max-iter"] = 100, tol = 1e-3,
             dtype = "float64", seed = 1}
  local i = 1
  while i <= #argv do
    local key = argv[i]:match("^%-%-([%w-]+)$")
    local value = argv[i + 1]
    if not key or value == nil or (o[key] == nil and key ~= "dim"
                                   and key ~= "device" and key ~= "plot") then
      error(USAGE, 0)
    end
    if NUMBERS[key] then
      value = math.tointeger(tonumber(value)) or tonumber(value)
      if not value then error(USAGE, 0) end
    end
    o[key] = value
    i = i + 2
  end
  return o
end

local o = options(arg or {})
if o.device then ml.set_device(o.device) end
local gpu = ml.device():match("^cuda") ~= nil
o.dim = o.dim or (gpu and 784 or 50)

local t0 = ml.clock()
local data = ml.datasets.fashion_mnist{dtype = o.dtype}
local X, labels = data.train_images, data.train_labels
ml.synchronize()
local t1 = ml.clock()
print(("Fashion-MNIST: %d images on %s (%s), loaded in %.2f s")
      :format(X:size(1), ml.device(), o.dtype, t1 - t0))

-- pixels(Z): rows of the model's space as pixels
local pixels = function(Z) return Z end
if o.dim < 784 then
  local _, V = ml.linalg.eigh(ml.cov(X, {rowvar = false}))
  local top = V:narrow(2, 785 - o.dim, o.dim)
  local mean = X:mean(1, {keepdim = true})
  X = (X - mean):mm(top)
  pixels = function(Z) return Z:mm(top:t()) + mean end
  ml.synchronize()
  local t2 = ml.clock()
  print(("projected on the %d principal components in %.2f s")
        :format(o.dim, t2 - t1))
  t1 = t2
end

print(("EM: %d components, %s covariances, %d dimensions")
      :format(o.k, o.covariance, X:size(2)))
local gm = ml.GaussianMixture{
  n_components = o.k, covariance_type = o.covariance, max_iter = o["max-iter"],
  tol = o.tol, seed = o.seed, verbose = 1, verbose_interval = 1}
local predicted = gm:fit_predict(X)
ml.synchronize()
local t3 = ml.clock()
print(("fit: %d iterations, %s, lower bound %.6f, %.2f s (with the "
       .. "k-means initialisation)")
      :format(gm.n_iter, gm.converged and "converged" or "not converged",
              gm.lower_bound, t3 - t1))

-- counts[k][c]: images of class c in component k
local n = X:size(1)
local comp = ml.eq(predicted:reshape(n, 1),
                   ml.arange(1, o.k + 1, {device = X.device}):reshape(1, o.k))
local class = ml.eq(labels:reshape(n, 1),
                    ml.arange(0, 10, {device = X.device}):reshape(1, 10))
local counts = comp:astype("float64"):t():mm(class:astype("float64"))
local purity = counts:max(2):sum() / n
print(("cluster purity %.4f (each component taken as its most frequent "
       .. "class)"):format(purity))

if o.plot then
  os.execute("mkdir -p '" .. o.plot .. "'")
  local f = ml.plot.figure{title = ("Gaussian mixture EM on Fashion-MNIST "
    .. "(%d components, %d dimensions)"):format(o.k, X:size(2)),
    xlabel = "iteration", ylabel = "lower bound (per sample)", grid = true,
    legend = false, size = {800, 500}}
  f:line(gm.lower_bounds, {style = "linespoints"})
  f:save(o.plot .. "/gmm_lower_bound.png")
  local means = pixels(gm.means):reshape(o.k, 28, 28)
  ml.plot.imshow(means, {file = o.plot .. "/gmm_means.png",
    cols = math.min(o.k, 5), size = {900, 420},
    title = "the component means as images"})
  print("plots: " .. o.plot .. "/gmm_lower_bound.png, "
        .. o.plot .. "/gmm_means.png")
end
