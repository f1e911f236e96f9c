-- GPU workloads of `make bench` for the issue "Linear algebra, k-means and
-- Gaussian mixtures": the users' kernels in float64 on Fashion-MNIST, one
-- EM iteration and a whole fit of a full-covariance mixture, a diagonal
-- mixture at speech-recognition scale and a k-means Lloyd iteration; the
-- same workloads as scripts/bench/peers_mixture_torch.py. Each row gives
-- its floor: the arithmetic at the float64 (or float32) GEMM rate measured
-- in this run, or its bytes at the copy bandwidth, whichever is larger.
local ml = require "moonlab"
local bench = require "bench.common"
local mixture = require "moonlab.mixture"

local M = {}

-- run(add, hw): hw.bandwidth (bytes/s), hw.gemm64 and hw.gemm32 (flop/s).
function M.run(add, hw)
  local f64 = {dtype = "float64", device = ml.device()}
  local f32 = {dtype = "float32", device = ml.device()}
  local function floor(flops, rate, bytes)
    return math.max(flops / rate, (bytes or 0) / hw.bandwidth)
  end
  local function time(fn, reps) return bench.median_time(fn, {{}}, reps or 9, 1) end

  local X = ml.datasets.fashion_mnist({dtype = "float64"}).train_images:to(ml.device())
  local n, d, K = X:size(1), X:size(2), 10
  ml.seed(0)
  local R = ml.rand(n, K, f64)
  add{name = "mix_rtx", label = "R:t():mm(X) 10x60000x784 f64",
    time = time(function() return R:t():mm(X) end),
    floor = floor(2 * n * d * K, hw.gemm64, 8 * (n * d + n * K))}
  add{name = "mix_cov", label = "ml.cov 60000x784 f64",
    time = time(function() return ml.cov(X, {rowvar = false}) end),
    floor = floor(n * d * d, hw.gemm64, 8 * n * d)}
  local W = R:t():contiguous()
  add{name = "mix_scatter", label = "weighted scatter 10x784^2 f64",
    time = time(function() return ml.linalg.gram(X, W) end),
    floor = floor(K * n * d * d, hw.gemm64, 8 * n * d)}
  local A = ml.rand(4096, 4096, f64)
  A = A:mm(A:t()) + ml.eye(4096, f64) * 4096
  add{name = "mix_chol4096", label = "cholesky 4096^2 f64",
    time = time(function() return ml.linalg.cholesky(A) end),
    floor = floor(4096^3 / 3, hw.gemm64, 16 * 4096^2)}
  local L = ml.linalg.cholesky(ml.cov(X, {rowvar = false}) + ml.eye(d, f64) * 1e-3)
  local B = X:t()
  add{name = "mix_trsm", label = "solve_triangular 784^2 x 60000 f64",
    time = time(function() return ml.linalg.solve_triangular(L, B, {lower = true}) end),
    floor = floor(n * d * d, hw.gemm64, 16 * n * d)}
  A, B, L, R, W = nil, nil, nil, nil, nil
  collectgarbage()

  -- one EM iteration from components fitted to k-means labels
  local gm = ml.GaussianMixture{n_components = K, max_iter = 1, seed = 0}
  gm:fit(X)
  local step = mixture.em_step(gm, X)
  local zeros = ml.eq(gm:predict_proba(X), 0):sum() / (n * K)
  add{name = "mix_em_full", label = "EM iteration 60000x784 K=10 full f64",
    time = time(step),
    floor = floor(2 * n * d * d * K, hw.gemm64, 8 * n * d),
    note = ("%.0f%% of the responsibilities are exactly zero: the M-step's scatters skip "
            .. "them, the floor counts them"):format(100 * zeros)}
  local t0 = ml.clock()
  local fit = ml.GaussianMixture{n_components = K, seed = 0}:fit(X)
  ml.synchronize()
  add{name = "mix_fit_full", label = ("GMM fit, Fashion K=10 full (%d iter)"):format(fit.n_iter),
    time = ml.clock() - t0}
  X, gm, fit, step = nil, nil, nil, nil
  collectgarbage()

  n, d, K = 2^22, 64, 1024
  local Xs = ml.randn(n, d, f32)
  local dg = ml.GaussianMixture{n_components = K, covariance_type = "diag", max_iter = 1,
                                init_params = "random_from_data", seed = 0}
  dg:fit(Xs)
  local dstep = mixture.em_step(dg, Xs)
  add{name = "mix_em_diag", label = "EM iteration 2^22x64 K=1024 diag f32",
    time = time(dstep, 5),
    floor = floor(4 * 2 * n * d * K, hw.gemm32, 2 * 4 * n * K)}
  Xs, dg, dstep = nil, nil, nil
  collectgarbage()

  n, d, K = 2^20, 128, 1024
  local Xk = ml.randn(n, d, f32)
  local C = Xk:index_select(1, ml.randperm(n, {device = ml.device()}):narrow(1, 1, K))
  local km = require "moonlab.kmeans"
  add{name = "mix_lloyd", label = "k-means Lloyd 2^20x128 K=1024 f32",
    time = time(function() return km.lloyd_step(Xk, C) end),
    floor = floor(2 * n * d * K, hw.gemm32, 4 * n * d)}
end

return M
