-- Gaussian mixtures fitted by EM, with the semantics of scikit-learn's
-- GaussianMixture. GaussianMixture is a class: a table of methods that
-- constructs an instance when called.
--
--   local gm = ml.GaussianMixture{n_components = 10, seed = 1}:fit(X)
--   gm.weights, gm.means, gm.covariances, gm.precisions_cholesky, ...
--   gm:predict(Q), gm:predict_proba(Q), gm:score_samples(Q), gm:sample(n)
--
-- As scikit-learn: each component k keeps the Cholesky factor P_k of its
-- precision (P_k P_k^T = inverse covariance; (L_k^-1)^T for the Cholesky
-- factor L_k of the covariance), and the log density of x is
--   -(d log(2 pi) + |(x - mu_k) P_k|^2) / 2 + sum(log(diag(P_k))).
-- The E-step gives each sample's log responsibilities and its log
-- likelihood, whose mean is the lower bound; the M-step the weights (the
-- responsibilities' sums nk plus 10 eps, normalised), the means and the
-- covariances, with reg_covar added to their diagonals. A run stops when
-- the lower bound changes by less than tol; the best of n_init runs by
-- lower bound wins, and a last E-step gives the labels of fit_predict.
--
-- The arithmetic runs on the samples minus their mean (a shift that no
-- density, responsibility or covariance sees), so that the expansions
-- below lose less to cancellation; each method shifts its own X. One EM
-- iteration is a handful of large operations on the device (n samples,
-- d features, K components):
--   E-step  full: in float64 |X P_k - mu_k P_k|^2 by ml.linalg.mahalanobis
--           (on a Hopper one kernel whose products never leave the
--           registers); in float32 the stacked factors [-mu_k P_k; P_k]
--           (d+1 x Kd), transposed, times [1, X]^T (d+1 x n), a GEMM for
--           each block of the factors' columns (skipping their zero
--           triangles), then the norms of its K x n pieces, one reduction
--           a block; tied: X P (one GEMM), minus each mu_k P, then the
--           same norms; diag and spherical: [X, X^2, 1] (n x 2d+1) times
--           a 2d+1 x K matrix, one GEMM that gives the weighted log
--           densities themselves.
--           Then one softmax pass over the n x K of them: the
--           responsibilities and their log normalizers;
--   M-step  full: the scatters X^T diag(resp_k) X by ml.linalg.gram
--           (on a Hopper one kernel that weighs the samples in registers)
--           and the sums resp^T X (one GEMM); tied: resp^T X and the
--           column sums; diag and spherical: resp^T [X, X^2, 1] (sums and
--           counts in one GEMM); then K x d x d (or K x d) work: the
--           covariances, their batched Cholesky factors and one batched
--           triangular solve for the precision factors.
-- Per iteration only the lower bound is read back: the Cholesky factors
-- are taken without reading their status (a covariance that is not
-- positive definite gives NaN factors, hence a NaN lower bound, which is
-- then diagnosed).
--
-- With distributed = true each rank of an ml.dist job fits its shard of
-- the rows (consecutive rows of the whole, in rank order): the M-step's
-- sums (the gram and resp^T X, resp^T [X, X^2, 1], the responsibilities'
-- sums, X^T X), the lower bound and the shift are all-reduced, one
-- collective each, and the initial responsibilities are those of the
-- whole (a distributed ml.KMeans, or the rows of all ranks drawn alike),
-- so that every rank gets the one-process fit and the labels of its own
-- rows. The fit's reductions are kmeans.group's: identities in one
-- process.
local ml = require "moonlab"
local check_options = require("moonlab.options").check
local kmeans = require "moonlab.kmeans"

local M = {}

local GaussianMixture = {}
GaussianMixture.__index = GaussianMixture

local COVARIANCE_TYPES = {full = true, tied = true, diag = true,
                          spherical = true}
local INIT_PARAMS = {kmeans = true, ["k-means++"] = true, random = true,
                     random_from_data = true}
local LOG_2PI = math.log(2 * math.pi)
local EPS = {float32 = 2.0 ^ -23, float64 = 2.0 ^ -52}

local function integer_at_least(v, least)
  v = math.tointeger(v)
  return v and v >= least and v
end

local function new(_, opts)
  check_options("GaussianMixture", opts)
  opts = opts or {}
  local self = {}
  local function integer(key, default, least)
    local v = opts[key] == nil and default or opts[key]
    local n = integer_at_least(v, least)
    if not n then
      error(("GaussianMixture: %s must be an integer >= %d (got %s)")
            :format(key, least, tostring(v)), 3)
    end
    self[key] = n
  end
  local function number(key, default)
    local v = opts[key] == nil and default or opts[key]
    if not (v >= 0) then
      error(("GaussianMixture: %s must be >= 0 (got %s)")
            :format(key, tostring(v)), 3)
    end
    self[key] = v
  end
  local function choice(key, default, set, list)
    local v = opts[key] or default
    if not set[v] then
      error(("GaussianMixture: %s must be %s (got \"%s\")")
            :format(key, list, v), 3)
    end
    self[key] = v
  end
  integer("n_components", 1, 1)
  choice("covariance_type", "full", COVARIANCE_TYPES,
         "\"full\", \"tied\", \"diag\" or \"spherical\"")
  number("tol", 1e-3)
  number("reg_covar", 1e-6)
  integer("max_iter", 100, 0)
  integer("n_init", 1, 1)
  choice("init_params", "kmeans", INIT_PARAMS,
         "\"kmeans\", \"k-means++\", \"random\" or \"random_from_data\"")
  if type(opts.verbose) == "boolean" then
    self.verbose = opts.verbose and 1 or 0
  else
    integer("verbose", 0, 0)
  end
  integer("verbose_interval", 10, 1)
  self.warm_start = opts.warm_start or false
  self.seed = opts.seed
  self.distributed = opts.distributed or false
  for _, key in ipairs({"weights_init", "means_init", "precisions_init"}) do
    local v = opts[key]
    self[key] = v and (ml.is_array(v) and v or ml.array(v))
  end
  return setmetatable(self, GaussianMixture)
end

M.GaussianMixture = setmetatable(GaussianMixture, {__call = new})

local function identity(d, like)
  return ml.eye(d, {dtype = like.dtype, device = like.device})
end

-- The data as the E- and M-steps use them: Xc = X - shift (1 x d), and
-- for "full" in float32 A = [1, Xc] (the column of ones takes each
-- component's constant term into the E-step's GEMM), for "diag" and
-- "spherical" XX = [Xc, Xc^2, 1] (likewise, and it gives the M-step the
-- sums of the responsibilities);
-- g: the group of the rows (kmeans.group; by default X's alone), whose
-- count is total.
local function prepare(X, covariance_type, g)
  g = g or kmeans.LOCAL
  local n, d = X:size(1), X:size(2)
  local shift = g:center(X)
  local Xc = X - shift
  local data = {n = n, d = d, shift = shift, Xc = Xc, dtype = X.dtype,
                g = g, total = g.n or n}
  if covariance_type == "full" and X.dtype == "float32" then
    -- [1, Xc] in the first d + 1 columns of rows a multiple of 4 apart:
    -- cuBLAS's GEMMs read 16-byte aligned rows faster
    local like = {dtype = X.dtype, device = X.device}
    local parts = {ml.ones(n, 1, like), Xc}
    if (d + 1) % 4 ~= 0 then parts[3] = ml.zeros(n, 3 - d % 4, like) end
    data.A = ml.cat(parts, 2):narrow(2, 1, d + 1)
  elseif covariance_type ~= "tied" then
    data.XX = ml.cat({Xc, Xc * Xc,
                      ml.ones(n, 1, {dtype = X.dtype, device = X.device})}, 2)
  end
  return data
end

-- The message of a component whose covariance failed.
local function collapsed(self, what)
  return ("GaussianMixture:fit: %s (the samples it covers collapsed "
          .. "onto a point or a lower-dimensional set): use fewer "
          .. "components or a larger reg_covar (now %g)")
         :format(what, self.reg_covar)
end

-- The Cholesky factors of the precisions of covariances cov (P with
-- P P^T = cov^-1): U^-1 = (L^-1)^T for the Cholesky factor U = L^T of cov;
-- for "diag" and "spherical", 1 / sqrt(cov). A covariance that is not
-- positive definite gives NaN factors (check_covariances names it).
local function precision_cholesky(self, cov)
  local t = self.covariance_type
  if t == "diag" or t == "spherical" then return 1 / cov:sqrt() end
  local U = ml.linalg.cholesky(cov, {upper = true, check = false})
  return ml.linalg.inv_triangular(U, {check = false})
end

-- Raises naming the component whose full or tied covariance is not
-- positive definite, if one is not.
local function check_covariances(self, cov)
  local ok, err = pcall(ml.linalg.cholesky, cov)
  if not ok then
    local k = tostring(err):match("batch element (%d+)")
    error(collapsed(self, k and ("the covariance of component %s is not "
                                 .. "positive definite"):format(k)
                    or "the tied covariance is not positive definite"), 0)
  end
end

-- Raises when a diagonal or spherical covariance is not positive (its
-- precision factor is then NaN or infinite and the lower bound with it).
local function check_variances(self, cov)
  local bad = ml.le(cov, 0)
  if self.covariance_type == "spherical" then bad = bad:reshape(-1, 1) end
  local rows = bad:any(2)
  if rows:any() then
    local k = rows:argmax()
    local j = bad[k]:argmax()
    error(collapsed(self, self.covariance_type == "diag"
                      and ("component %d has variance %g <= 0 in feature "
                           .. "%d"):format(k, cov[{k, j}], j)
                      or ("component %d has variance %g <= 0")
                           :format(k, cov[k])), 0)
  end
end

-- The M-step from responsibilities resp (n x K): the components' nk, means
-- mu (shifted), covariances cov and precision factors P.
local function m_step(self, data, resp)
  local K, d = resp:size(2), data.d
  local reg = self.reg_covar
  local t = self.covariance_type
  local sum = data.g.sum
  local T, R
  if t == "diag" or t == "spherical" then
    T = sum(resp:t():mm(data.XX))
    R = T:select(2, 2 * d + 1)
  else
    R = sum(resp:sum(1))
  end
  local nk = R + 10 * EPS[data.dtype]
  local mu, cov
  if t == "full" then
    local S = sum(ml.linalg.gram(data.Xc, resp:t()))
    mu = sum(resp:t():mm(data.Xc)) / nk:reshape(K, 1)
    local outer = mu:reshape(K, d, 1) * mu:reshape(K, 1, d)
    cov = (S - outer * (nk * 2 - R):reshape(K, 1, 1)) / nk:reshape(K, 1, 1)
          + identity(d, mu) * reg
  elseif t == "tied" then
    mu = sum(resp:t():mm(data.Xc)) / nk:reshape(K, 1)
    cov = (data.XtX - (mu * nk:reshape(K, 1)):t():mm(mu))
          / nk:sum(1, {keepdim = true}) + identity(d, mu) * reg
  else
    local s = T:narrow(2, 1, d)
    mu = s / nk:reshape(K, 1)
    cov = T:narrow(2, d + 1, d) / nk:reshape(K, 1) - mu * s * 2
          / nk:reshape(K, 1) + mu * mu + reg
    if t == "spherical" then cov = cov:mean(2) end
  end
  return {nk = nk, mu = mu, cov = cov, P = precision_cholesky(self, cov)}
end

-- The sum of the logs of the diagonal of the precision factors (K).
local function log_det(t, P, d)
  if t == "full" then
    local K = P:size(1)
    return P:reshape(K, d * d)[{{}, {1, d * d, d + 1}}]:log():sum(2)
  elseif t == "tied" then
    local diag = P:reshape(d * d)[{{1, d * d, d + 1}}]
    return diag:log():sum(1, {keepdim = true})
  elseif t == "diag" then
    return P:log():sum(2)
  end
  return P:log() * d
end

-- The width of the column blocks by which the float32 E-step's products
-- of K triangles skip their zeros: one GEMM a block of b columns of all K
-- at once, whose work beyond the triangles falls as 1/blocks. About
-- d / 16, rounded so that the K b columns of a block nearly fill a
-- multiple of 128, the width of cuBLAS's tiles (a last tile mostly idle
-- cost more than a block saved).
local function column_block(d, K)
  local tiles = math.max(1, math.floor(K * d / (16 * 128) + 0.5))
  return math.max(1, math.min(d, tiles * 128 // K))
end

-- The log densities (n x K) of the prepared samples under each component,
-- plus the row of log weights lw (1 x K) when given.
local function log_prob(t, data, mu, P, lw)
  local n, d, K = data.n, data.d, mu:size(1)
  local maha
  if t == "full" and data.dtype == "float64" then
    -- |Xc P_k - mu_k P_k|^2 in one pass: on a Hopper, products and
    -- squares in registers, nothing n x K d written (ml.linalg.mahalanobis)
    maha = ml.linalg.mahalanobis(data.Xc, mu, P)
  elseif t == "full" then
    -- Y^T = [-mu_k P_k; P_k]^T [1, X]^T for all k, one GEMM a block of b
    -- of the factors' columns, c0..c1 (about column_block's, evened
    -- out): those of an upper triangular P_k take rows 1..c1 only (15/32
    -- of the flops saved at 16 blocks). One copy lays out every block's
    -- [-mu_k P_k; P_k] columns for all k (nb x d+1 x K x b, the last
    -- block's columns past d zero, which add nothing to the norms). Y^T
    -- (K b x n) rather than Y: its norms run down columns, n apart, and
    -- at 60000 x 784, K = 10, the E-step took 10.8 ms on an H200 rather
    -- than 12.1 with Y's short rows.
    local muP = ml.matmul(mu:reshape(K, 1, d), P):reshape(K, d)
    local nb = -(-d // column_block(d, K))
    local b = -(-d // nb)
    local like = {dtype = P.dtype, device = P.device}
    local SP = ml.cat({-muP:reshape(K, 1, d), P}, 2)
    if nb * b > d then SP = ml.cat({SP, ml.zeros(K, d + 1, nb * b - d, like)}, 3) end
    local blocks = SP:reshape(K, d + 1, nb, b):permute(3, 2, 1, 4):contiguous()
    local At = data.A:t()
    for i = 1, nb do
      local c1 = math.min(i * b, d)
      local S = blocks:select(1, i):narrow(1, 1, c1 + 1):reshape(c1 + 1, K * b)
      local part = S:t():mm(At:narrow(1, 1, c1 + 1)):reshape(K, b, n):norm(2) ^ 2
      maha = maha and maha + part or part
    end
    maha = maha:t()
  elseif t == "tied" then
    local Y = data.Xc:mm(P):reshape(n, 1, d)
    maha = (Y - mu:mm(P):reshape(1, K, d)):norm(3) ^ 2
  else
    -- -(maha + d log(2 pi)) / 2 + log_det + lw in one GEMM over
    -- [Xc, Xc^2, 1]: maha = Xc^2 prec - 2 Xc mu prec + mu^2 prec.
    local prec = P * P
    if t == "spherical" then
      prec = prec:reshape(K, 1):expand(K, d)
    end
    local c = (mu * mu * prec):sum(2) * -0.5 + log_det(t, P, d)
              - d * LOG_2PI / 2
    if lw then c = c + lw:reshape(K) end
    local B = ml.cat({(mu * prec):t(), prec:t() * -0.5, c:reshape(1, K)})
    return data.XX:mm(B)
  end
  local lp = (maha + d * LOG_2PI) * -0.5 + log_det(t, P, d)
  return lw and lp + lw or lp
end

-- The weighted log probabilities (n x K) of the prepared samples.
local function weighted(t, data, params)
  local K = params.mu:size(1)
  return log_prob(t, data, params.mu, params.P,
                  params.weights:log():reshape(1, K))
end

-- The E-step: responsibilities (n x K), exp(log resp) as scikit-learn
-- takes them, and each sample's log likelihood (n x 1), in one pass.
local function e_step(t, data, params)
  return weighted(t, data, params):softmax(2)
end

-- One-hot responsibilities (n x K) with a 1 at (rows[k], k) or, given
-- labels (n), at (i, labels[i]); rows count the rows of all ranks of a
-- distributed fit, which sets the 1s in its own.
local function onehot(n, K, data, rows, labels)
  local dev = data.Xc.device
  if labels then
    local ids = ml.arange(1, K + 1, {device = dev}):reshape(1, K)
    return ml.eq(labels:reshape(n, 1), ids):astype(data.dtype)
  end
  if not ml.is_array(rows) then
    rows = ml.array(rows, {dtype = "int64", device = dev})
  end
  if data.g.distributed then
    local ids = ml.arange(data.g.offset + 1, data.g.offset + n + 1,
                          {device = dev}):reshape(n, 1)
    return ml.eq(ids, rows:reshape(1, K)):astype(data.dtype)
  end
  local resp = ml.zeros(n, K, {dtype = data.dtype, device = dev})
  resp[rows] = ml.eye(K, {dtype = data.dtype, device = dev})
  return resp
end

-- The initial responsibilities by init_params.
local function initial_resp(self, data)
  local n, K = data.n, self.n_components
  local how = self.init_params
  local g = data.g
  if how == "kmeans" then
    local km = ml.KMeans{n_clusters = K, n_init = 1,
                         distributed = g.distributed}:fit(data.Xc)
    return onehot(n, K, data, nil, km.labels)
  elseif how == "k-means++" then
    return onehot(n, K, data, kmeans.kmeans_plusplus(g.gather(data.Xc), K))
  elseif how == "random_from_data" then
    local perm = ml.randperm(data.total, {device = data.Xc.device})
    return onehot(n, K, data, perm:narrow(1, 1, K))
  end
  local resp = ml.rand(data.total, K, {dtype = data.dtype,
                                       device = data.Xc.device})
  if g.distributed then resp = resp:narrow(1, g.offset + 1, n) end
  return resp / resp:sum(2, {keepdim = true})
end

-- The parameters from the given precisions: their Cholesky factors and
-- the covariances they invert.
local function from_precisions(self, prec)
  local t = self.covariance_type
  if t == "diag" or t == "spherical" then
    return prec:sqrt(), 1 / prec
  end
  -- An upper factor, as the M-step's (log_prob's blocks rely on it):
  -- P = J chol(J prec J) J with J the reversal, so that P P^T = prec.
  local d = prec:size(-1)
  local rev = ml.arange(d, 0, -1, {dtype = "int64", device = prec.device})
  local function flip(a)
    return a:index_select(a:dim() - 1, rev):index_select(a:dim(), rev)
  end
  local ok, L = pcall(ml.linalg.cholesky, flip(prec))
  if not ok then
    error("GaussianMixture:fit: precisions_init must be symmetric "
          .. "positive definite", 0)
  end
  local Linv = ml.linalg.inv_triangular(L, {lower = true})
  return flip(L), flip(ml.matmul(Linv:transpose(-2, -1), Linv))
end

-- The first parameters of a run: from the initial responsibilities, then
-- replaced by what weights_init, means_init and precisions_init give.
local function initialize(self, data, inits)
  local params
  if not (inits.weights and inits.means and inits.precisions) then
    params = m_step(self, data, initial_resp(self, data))
    params.weights = params.nk / data.total
  else
    params = {}
  end
  if inits.weights then params.weights = inits.weights end
  if inits.means then params.mu = inits.means - data.shift end
  if inits.precisions then
    params.P, params.cov = from_precisions(self, inits.precisions)
  end
  return params
end

local SHAPES = {
  full = function(K, d) return {K, d, d} end,
  tied = function(_, d) return {d, d} end,
  diag = function(K, d) return {K, d} end,
  spherical = function(K) return {K} end,
}

local function shape_string(shape)
  return #shape == 0 and "scalar" or table.concat(shape, "x")
end

-- An init option as an array of X's dtype and device, of the given shape.
local function init_array(v, key, shape, X)
  if not v then return nil end
  local ok = v.ndim == #shape
  for i = 1, #shape do ok = ok and v:size(i) == shape[i] end
  if not ok then
    error(("GaussianMixture:fit: %s must have shape %s (got %s)"):format(
      key, shape_string(shape), shape_string(v.shape)), 5)
  end
  v = v:to(X.device):astype(X.dtype)
  if not v:isfinite():all() then
    error(("GaussianMixture:fit: %s contains NaN or infinity"):format(key),
          5)
  end
  return v
end

-- The init options checked against X as scikit-learn checks them.
local function checked_inits(self, X)
  local K, d = self.n_components, X:size(2)
  local t = self.covariance_type
  local w = init_array(self.weights_init, "weights_init", {K}, X)
  if w and (w:min() < 0 or w:max() > 1
            or math.abs(1 - w:astype("float64"):sum()) > 1e-8) then
    error("GaussianMixture:fit: weights_init must lie in [0, 1] and sum "
          .. "to 1", 4)
  end
  local m = init_array(self.means_init, "means_init", {K, d}, X)
  local p = init_array(self.precisions_init, "precisions_init",
                       SHAPES[t](K, d), X)
  if p and (t == "diag" or t == "spherical") and p:min() <= 0 then
    error("GaussianMixture:fit: precisions_init must be positive", 4)
  end
  if p and (t == "full" or t == "tied")
     and (p - p:transpose(-2, -1)):abs():max()
         > 1e-8 + 1e-5 * p:abs():max() then
    error("GaussianMixture:fit: precisions_init must be symmetric "
          .. "positive definite", 4)
  end
  return {weights = w, means = m, precisions = p}
end

local function finite(v) return v == v and v > -math.huge and v < math.huge end

-- Raises naming a component whose covariance has collapsed, if one has.
local function check_params(self, params)
  local t = self.covariance_type
  if t == "diag" or t == "spherical" then
    check_variances(self, params.cov)
  else
    check_covariances(self, params.cov)
  end
end

-- One EM iteration: the lower bound of params (the mean log likelihood of
-- their E-step, the one value read back) and the parameters of the
-- M-step that follows, or nil when the bound is not finite.
local function iterate(self, data, params)
  local resp, norm = e_step(self.covariance_type, data, params)
  local bound = data.g:mean(norm)
  if not finite(bound) then return nil, bound end
  local new = m_step(self, data, resp)
  new.weights = new.nk / new.nk:sum(1, {keepdim = true})
  return new, bound
end

-- One EM run from params: the best parameters, the lower bounds of its
-- iterations, whether it converged. Only rank 0 of a distributed fit
-- prints.
local function run(self, data, params, bound, init)
  local bounds, converged = {}, false
  local verbose = self.verbose > 0 and data.g.rank == 0
  if verbose then print(("Initialization %d"):format(init)) end
  local start = ml.clock()
  local clock = start
  for it = 1, self.max_iter do
    local previous = bound
    local new
    new, bound = iterate(self, data, params)
    if not new then
      check_params(self, params)
      error(("GaussianMixture:fit: the lower bound is %s at iteration %d: "
             .. "the data may be degenerate (use fewer components or a "
             .. "larger reg_covar, now %g)")
            :format(bound, it, self.reg_covar), 0)
    end
    params = new
    bounds[it] = bound
    local change = bound - previous
    if verbose and it % self.verbose_interval == 0 then
      local now = ml.clock()
      print(("  Iteration %d: lower bound %.10g, change %.4g, %.3f s")
            :format(it, bound, change, now - clock))
      clock = now
    end
    if math.abs(change) < self.tol then
      converged = true
      break
    end
  end
  if verbose then
    print(("Initialization converged: %s (%.3f s, lower bound %.10g)")
          :format(converged, ml.clock() - start, bound))
  end
  return params, bounds, converged, bound
end

-- Public fields from shifted parameters.
local function publish(self, params, data)
  local t = self.covariance_type
  local P = params.P
  self.weights = params.weights
  self.means = params.mu + data.shift
  self.covariances = params.cov
  self.precisions_cholesky = P
  if t == "full" then
    self.precisions = ml.matmul(P, P:transpose(2, 3))
  elseif t == "tied" then
    self.precisions = P:mm(P:t())
  else
    self.precisions = P * P
  end
end

-- The shifted parameters of the fitted model for data.
local function current(self, data)
  return {weights = self.weights, mu = self.means - data.shift,
          P = self.precisions_cholesky, cov = self.covariances}
end

-- The data of a fit on X (prepare's, and X^T X for "tied") whose rows
-- are those of group g.
local function fit_data(self, X, g)
  local data = prepare(X, self.covariance_type, g)
  if self.covariance_type == "tied" then
    data.XtX = g.sum(ml.linalg.gram(data.Xc))
  end
  return data
end

local function fit(self, X, inits, g)
  local t = self.covariance_type
  local data = fit_data(self, X, g)
  local warm = self.warm_start and self.converged ~= nil
  local best
  for init = 1, warm and 1 or self.n_init do
    local params, bound
    if warm then
      params, bound = current(self, data), self.lower_bound
    else
      params, bound = initialize(self, data, inits), -math.huge
    end
    if self.max_iter == 0 then
      best = {params = params, bounds = {}, converged = false,
              bound = -math.huge, n_iter = 0}
    else
      local p, bounds, converged, last = run(self, data, params, bound, init)
      if not best or last > best.bound or best.bound == -math.huge then
        best = {params = p, bounds = bounds, converged = converged,
                bound = last, n_iter = #bounds}
      end
    end
  end
  check_params(self, best.params)
  publish(self, best.params, data)
  self.converged, self.n_iter = best.converged, best.n_iter
  self.lower_bound, self.lower_bounds = best.bound, best.bounds
  return weighted(t, data, best.params):log_softmax(2):argmax(2)
end

-- Checks X and the options against each other, then fits; returns the
-- labels of the last E-step.
local function checked_fit(self, X)
  X = kmeans.samples(X, "GaussianMixture:fit", 4)
  local g = kmeans.group(X, self.distributed, "GaussianMixture:fit", 3)
  local n, K = g.n, self.n_components
  if n < 2 or n < K then
    error(("GaussianMixture:fit: %d samples for %d components (at least "
           .. "2, and as many as components)"):format(n, K), 3)
  end
  local inits = checked_inits(self, X)
  if self.distributed and self.seed == nil then kmeans.align_generators() end
  return kmeans.seeded(self.seed, fit, self, X, inits, g)
end

-- One EM iteration of the fitted model gm on X, as fit runs them, from
-- gm's parameters: a function that returns the lower bound, for timing
-- an iteration (scripts/bench/mixture.lua, dist.lua). The parameters stay
-- gm's; a distributed gm takes X as this rank's shard.
function M.em_step(gm, X)
  local g = kmeans.group(X, gm.distributed, "em_step", 2)
  local data = fit_data(gm, X, g)
  local params = current(gm, data)
  return function() return select(2, iterate(gm, data, params)) end
end

function GaussianMixture:fit(X)
  checked_fit(self, X)
  return self
end

function GaussianMixture:fit_predict(X)
  return checked_fit(self, X)
end

-- X shifted and prepared for the fitted model; op names the method.
local function fitted(self, X, op)
  if not self.means then error(op .. ": the model is not fitted", 3) end
  X = kmeans.samples(X, op, 4, self.means)
  local d = self.means:size(2)
  if X:size(2) ~= d then
    error(("%s: X has %d features but the model has %d")
          :format(op, X:size(2), d), 3)
  end
  return prepare(X, self.covariance_type)
end

local function weighted_log_prob(self, data)
  return weighted(self.covariance_type, data, current(self, data))
end

function GaussianMixture:score_samples(X)
  local data = fitted(self, X, "GaussianMixture:score_samples")
  return weighted_log_prob(self, data):logsumexp(2)
end

function GaussianMixture:score(X)
  local data = fitted(self, X, "GaussianMixture:score")
  return weighted_log_prob(self, data):logsumexp(2):mean()
end

function GaussianMixture:predict(X)
  local data = fitted(self, X, "GaussianMixture:predict")
  return weighted_log_prob(self, data):argmax(2)
end

function GaussianMixture:predict_proba(X)
  local data = fitted(self, X, "GaussianMixture:predict_proba")
  return (e_step(self.covariance_type, data, current(self, data)))
end

-- The number of free parameters, as scikit-learn counts them.
local function n_parameters(self)
  local K, d = self.n_components, self.means:size(2)
  local cov = ({full = K * d * (d + 1) // 2, diag = K * d,
                tied = d * (d + 1) // 2, spherical = K})[self.covariance_type]
  return cov + d * K + K - 1
end

function GaussianMixture:bic(X)
  local data = fitted(self, X, "GaussianMixture:bic")
  local ll = weighted_log_prob(self, data):logsumexp(2):mean()
  return -2 * ll * data.n + n_parameters(self) * math.log(data.n)
end

function GaussianMixture:aic(X)
  local data = fitted(self, X, "GaussianMixture:aic")
  local ll = weighted_log_prob(self, data):logsumexp(2):mean()
  return -2 * ll * data.n + 2 * n_parameters(self)
end

-- n samples (n x d) and their components (int64, 1-based, ascending).
local function sample(self, n)
  local K, d = self.n_components, self.means:size(2)
  local means = self.means
  local dev, dtype = means.device, means.dtype
  local u = ml.rand(n, 1, {dtype = "float64", device = dev})
  local bins = self.weights:astype("float64"):cumsum():reshape(1, K)
  local comp = (ml.ge(u, bins):sum(2) + 1):clamp(1, K):sort()
  local Z = ml.randn(n, d, {dtype = dtype, device = dev})
  local cov = self.covariances
  local t = self.covariance_type
  local Y
  if t == "full" then
    local Lt = ml.linalg.cholesky(cov):transpose(2, 3)
    local all = Z:mm(Lt:permute(2, 1, 3):reshape(d, K * d))
    local index = comp:reshape(n, 1, 1):expand(n, 1, d)
    Y = all:reshape(n, K, d):gather(2, index):reshape(n, d)
  elseif t == "tied" then
    Y = Z:mm(ml.linalg.cholesky(cov):t())
  elseif t == "diag" then
    Y = Z * cov:sqrt():index_select(1, comp)
  else
    Y = Z * cov:sqrt():index_select(1, comp):reshape(n, 1)
  end
  return Y + means:index_select(1, comp), comp
end

function GaussianMixture:sample(n)
  if not self.means then
    error("GaussianMixture:sample: the model is not fitted", 2)
  end
  n = n or 1
  if math.type(n) ~= "integer" or n < 1 then
    error(("GaussianMixture:sample: n must be a positive integer (got %s)")
          :format(tostring(n)), 2)
  end
  return kmeans.seeded(self.seed, sample, self, n)
end

return M
