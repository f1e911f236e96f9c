-- Help entries: clustering and Gaussian mixtures.
local SEED = {
  name = "seed", type = "integer", default = "none",
  doc = "restart ml's generator on this seed for the fit's random draws, "
        .. "and put it back afterwards; none: draw from ml's generator",
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
scikit-learn's numbers for its random_state.]],
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
  },
}
