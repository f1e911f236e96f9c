-- Help entries: clustering and Gaussian mixtures.
local SEED = {
  name = "seed", type = "integer", default = "none",
  doc = "restart ml's generator on this seed for the fit's random draws, "
        .. "and put it back afterwards; none: draw from ml's generator",
}
local DISTRIBUTED = {
  name = "distributed", type = "boolean", default = "false",
  doc = "fit the rows of all ranks of an ml.dist job, each rank passing "
        .. "its shard (consecutive rows, in rank order): every rank gets "
        .. "the one-process fit of the whole and the labels of its rows",
}

return {
  title = "Clustering and mixtures",
  intro = [[
k-means and Gaussian mixtures with the semantics of scikit-learn's
KMeans and GaussianMixture, option for option, as classes: calling
ml.KMeans{...} or ml.GaussianMixture{...} makes a model, whose fields are
the methods and, once fitted, the results. Samples are the rows of a
float32 or float64 matrix (an array or a table; integers compute in
float64) and must be finite; the work stays on X's device and in its
dtype. Labels and components are 1-based. The random parts (k-means++,
random initialisations, sampling) draw from ml's generator (ml.seed), so
the same seed gives the same numbers on every device, but not
scikit-learn's numbers for its random_state.

With distributed = true, fit takes each rank's shard of the rows of an
ml.dist job (mpirun; every rank calls fit alike, with one row at least)
and all-reduces the sufficient statistics: counts and sums of the
clusters, the inertia, the responsibilities' sums and scatters, the lower
bound, the mean and variances. The initialisation sees the whole rows:
k-means++ runs on the all-gathered rows (each rank holds them all for
the while), random choices draw global rows, alike on every rank (rank
0's generator when no seed is given). The fit equals the one-process fit
of all the rows to rounding (sums in another order: lower bounds within
1e-9 relative, n_iter alike); labels are those of the rank's own rows,
and the other methods work on the rows they are given. Without the
option a fit runs no collective, in one process or several.]],
  entries = {
    {
      name = "KMeans",
      usage = {"ml.KMeans([opts])"},
      doc = [[
k-means clustering by Lloyd's algorithm, as scikit-learn's KMeans:
samples centered on their mean, a run stopping when the labels repeat or
when the summed squared shift of the centers is at most tol times the
mean per-feature variance, then assigning the samples to the final
centers; the run of least inertia among n_init wins. A cluster left
empty takes the sample farthest from its center (one each, farthest
first), unless all samples sit on their centers; one still empty takes
the largest cluster's center. Each assignment is the exact nearest
center by ml.knn, ties to the lower center. Fitted fields:
cluster_centers (K x d), labels (int64, 1-based), inertia (the sum of
squared distances to the centers) and n_iter (of the best run).]],
      options = {
        {name = "n_clusters", type = "integer", default = "8",
         doc = "the number of clusters K (an init array's rows when "
               .. "not given)"},
        {name = "init", type = "string|array|table",
         default = '"k-means++"',
         doc = '"k-means++" (scikit-learn\'s greedy form), "random" (K '
               .. "distinct samples) or the K x d initial centers"},
        {name = "n_init", type = "integer|string", default = '"auto"',
         doc = 'runs from different inits; "auto": 10 for "random", '
               .. "else 1 (always 1 for an init array)"},
        {name = "max_iter", type = "integer", default = "300",
         doc = "the most Lloyd iterations of a run"},
        {name = "tol", type = "number", default = "1e-4",
         doc = "the shift tolerance, relative to the mean per-feature "
               .. "variance"},
        SEED,
        DISTRIBUTED,
      },
      returns = "a new model, to fit.",
      example = [[
local X = ml.array({{0, 0}, {0, 1}, {10, 10}, {10, 11}})
local km = ml.KMeans{n_clusters = 2, init = {{0, 0}, {10, 10}}}:fit(X)
print(km.labels[3], km.inertia, km.n_iter)  --> 2 1.0 2]],
    },
    {
      name = "KMeans:fit",
      usage = {"km:fit(X)"},
      doc = [[
Clusters the rows of X (n x d, n >= K) and sets cluster_centers, labels,
inertia and n_iter.]],
      returns = "km, so that calls chain.",
      example = [[
local km = ml.KMeans{n_clusters = 2, seed = 1}:fit({{1}, {2}, {9}, {10}})
print(km.cluster_centers:sort(1)[{2, 1}])  --> 9.5]],
    },
    {
      name = "KMeans:fit_predict",
      usage = {"km:fit_predict(X)"},
      doc = [[Fits the model to X and returns the labels of its rows.]],
      returns = "an int64 array of X's rows (km.labels).",
      example = [[
local km = ml.KMeans{init = {{0}, {10}}}
print(km:fit_predict({{1}, {2}, {9}}):sum())  --> 4]],
    },
    {
      name = "KMeans:predict",
      usage = {"km:predict(X)"},
      doc = [[The nearest center of each row of X, ties to the lower one.]],
      returns = "an int64 array of X's rows, 1-based.",
      example = [[
local km = ml.KMeans{init = {{0}, {10}}}:fit({{1}, {2}, {9}})
print(km:predict({{4}, {8}})[2])  --> 2]],
    },
    {
      name = "KMeans:transform",
      usage = {"km:transform(X)"},
      doc = [[The Euclidean distance of each row of X to each center.]],
      returns = "an array of X's rows x K, in X's float dtype.",
      example = [[
local km = ml.KMeans{init = {{0}, {10}}}:fit({{1}, {2}, {9}})
local d = km:transform({{4}})
print(d[{1, 1}], d[{1, 2}])  --> 2.5 5.0]],
    },
    {
      name = "KMeans:score",
      usage = {"km:score(X)"},
      doc = [[
Minus the inertia of X: minus the sum of the squared distances of its
rows to their nearest centers.]],
      returns = "a number.",
      example = [[
local km = ml.KMeans{init = {{0}, {10}}}:fit({{1}, {2}, {9}})
print(km:score({{4}, {9}}))  --> -6.25]],
    },
    {
      name = "GaussianMixture",
      usage = {"ml.GaussianMixture([opts])"},
      doc = [[
A mixture of K Gaussians fitted by EM, as scikit-learn's
GaussianMixture. Each component keeps the Cholesky factor P of its
precision (P P^T = the inverse covariance); the E-step takes every
sample's log responsibilities through them (one matrix product for all
components), the M-step the weights, means and covariances (reg_covar
added to the diagonals). The lower bound is the mean log likelihood; a
run stops when it changes by less than tol, and the run of the highest
lower bound among n_init wins. A covariance that is not positive
definite (samples collapsed onto a point or a subspace) is an error
naming the component. Fitted fields: weights (K), means (K x d),
covariances, precisions and precisions_cholesky (K x d x d for "full",
d x d for "tied", K x d for "diag", K for "spherical"), converged,
n_iter, lower_bound and lower_bounds (a table, one per iteration of the
best run).]],
      options = {
        {name = "n_components", type = "integer", default = "1",
         doc = "the number of components K"},
        {name = "covariance_type", type = "string", default = '"full"',
         doc = '"full" (one each), "tied" (one for all), "diag" '
               .. '(diagonal ones) or "spherical" (one variance each)'},
        {name = "tol", type = "number", default = "1e-3",
         doc = "the change of the lower bound under which a run stops"},
        {name = "reg_covar", type = "number", default = "1e-6",
         doc = "added to the covariances' diagonals"},
        {name = "max_iter", type = "integer", default = "100",
         doc = "the most EM iterations of a run (0: the initial "
               .. "parameters)"},
        {name = "n_init", type = "integer", default = "1",
         doc = "the number of runs from different initialisations"},
        {name = "init_params", type = "string", default = '"kmeans"',
         doc = 'the initial responsibilities: "kmeans" (ml.KMeans\'s '
               .. 'labels), "k-means++" (its K samples), "random" or '
               .. '"random_from_data" (K random samples)'},
        {name = "weights_init", type = "array|table", default = "none",
         doc = "the initial weights (K), instead of init_params's"},
        {name = "means_init", type = "array|table", default = "none",
         doc = "the initial means (K x d), instead of init_params's"},
        {name = "precisions_init", type = "array|table", default = "none",
         doc = "the initial precisions (the inverse covariances, in the "
               .. "covariances' shape), instead of init_params's"},
        {name = "warm_start", type = "boolean", default = "false",
         doc = "refits start from the fitted parameters (one run)"},
        SEED,
        DISTRIBUTED,
        {name = "verbose", type = "integer|boolean", default = "0",
         doc = "1: print each run's start and end, and a line every "
               .. "verbose_interval iterations (lower bound, change, time; "
               .. "rank 0 only when distributed)"},
        {name = "verbose_interval", type = "integer", default = "10",
         doc = "iterations between verbose lines"},
      },
      returns = "a new model, to fit.",
      example = [[
ml.seed(1)
local X = ml.cat({ml.randn(200, 2), ml.randn(100, 2) + 8})
local gm = ml.GaussianMixture{n_components = 2, seed = 3}:fit(X)
local w = gm.weights:max()
print(gm.converged, w > 0.66 and w < 0.67)  --> true true]],
    },
    {
      name = "GaussianMixture:fit",
      usage = {"gm:fit(X)"},
      doc = [[
Fits the mixture to the rows of X (n x d, n >= 2 and n >= K), setting
the fitted fields.]],
      returns = "gm, so that calls chain.",
      example = [[
local gm = ml.GaussianMixture{max_iter = 1}:fit({{0}, {2}, {4}})
print(gm.means[{1, 1}], gm.n_iter)  --> 2.0 1]],
    },
    {
      name = "GaussianMixture:fit_predict",
      usage = {"gm:fit_predict(X)"},
      doc = [[
Fits the mixture to X and returns the most responsible component of
each row after a last E-step (as gm:fit(X):predict(X) does).]],
      returns = "an int64 array of X's rows, 1-based.",
      example = [[
local X = {{0}, {0.5}, {10}, {10.5}}
local gm = ml.GaussianMixture{n_components = 2, means_init = {{0}, {10}}}
print(gm:fit_predict(X):sum())  --> 6]],
    },
    {
      name = "GaussianMixture:predict",
      usage = {"gm:predict(X)"},
      doc = [[The most probable component of each row of X.]],
      returns = "an int64 array of X's rows, 1-based.",
      example = [[
local X = {{0}, {0.5}, {10}, {10.5}}
local gm = ml.GaussianMixture{n_components = 2, means_init = {{0}, {10}}}
print(gm:fit(X):predict({{9}, {1}})[1])  --> 2]],
    },
    {
      name = "GaussianMixture:predict_proba",
      usage = {"gm:predict_proba(X)"},
      doc = [[
The posterior probability of each component for each row of X (the
responsibilities; each row sums to 1).]],
      returns = "an array of X's rows x K.",
      example = [[
local gm = ml.GaussianMixture{n_components = 2, means_init = {{0}, {10}}}
local p = gm:fit({{0}, {0.5}, {10}, {10.5}}):predict_proba({{5.25}})
print(p:sum(), math.abs(p[{1, 1}] - 0.5) < 1e-9)  --> 1.0 true]],
    },
    {
      name = "GaussianMixture:score_samples",
      usage = {"gm:score_samples(X)"},
      doc = [[The log likelihood of each row of X under the mixture.]],
      returns = "an array of X's rows.",
      example = [[
local gm = ml.GaussianMixture{max_iter = 0, weights_init = {1},
  means_init = {{0}}, precisions_init = {{{1}}}}:fit({{0}, {1}})
print(gm:score_samples({{0}})[1] == -0.5 * math.log(2 * math.pi))  --> true]],
    },
    {
      name = "GaussianMixture:score",
      usage = {"gm:score(X)"},
      doc = [[The mean log likelihood of the rows of X.]],
      returns = "a number.",
      example = [[
local gm = ml.GaussianMixture{max_iter = 0, weights_init = {1},
  means_init = {{0}}, precisions_init = {{{1}}}}:fit({{0}, {1}})
print(gm:score({{1}, {-1}}) == -0.5 - 0.5 * math.log(2 * math.pi))  --> true]],
    },
    {
      name = "GaussianMixture:bic",
      usage = {"gm:bic(X)"},
      doc = [[
The Bayesian information criterion of the mixture on X: -2 n times the
mean log likelihood plus the number of free parameters times log(n).]],
      returns = "a number (lower is better).",
      example = [[
ml.seed(1)
local X = ml.cat({ml.randn(100, 1), ml.randn(100, 1) + 10})
local one = ml.GaussianMixture{n_components = 1}:fit(X)
local two = ml.GaussianMixture{n_components = 2, seed = 1}:fit(X)
print(two:bic(X) < one:bic(X))  --> true]],
    },
    {
      name = "GaussianMixture:aic",
      usage = {"gm:aic(X)"},
      doc = [[
The Akaike information criterion of the mixture on X: -2 n times the
mean log likelihood plus twice the number of free parameters.]],
      returns = "a number (lower is better).",
      example = [[
ml.seed(1)
local X = ml.randn(50, 1)
local gm = ml.GaussianMixture{}:fit(X)
local d = gm:aic(X) - gm:bic(X)
print(math.abs(d - 4 + 2 * math.log(50)) < 1e-9)  --> true]],
    },
    {
      name = "GaussianMixture:sample",
      usage = {"gm:sample([n])"},
      doc = [[
n (default 1) random samples of the fitted mixture, grouped by
component: the components drawn by the weights, then each sample drawn
from its Gaussian, from ml's generator (restarted on the model's seed
when it has one).]],
      returns = "the samples (n x d) and their components (int64, "
                .. "1-based, ascending).",
      example = [[
local gm = ml.GaussianMixture{n_components = 2, means_init = {{0}, {10}},
                              seed = 1}:fit({{0}, {0.5}, {10}, {10.5}})
local X, comp = gm:sample(1000)
print(X.shape[1], comp[1], comp[1000])  --> 1000 1 2]],
    },
  },
}
