-- Help entries: k nearest neighbours.
local METRIC = {
  name = "metric", type = "string", default = '"euclidean"',
  doc = '"euclidean" |q - r|, "sqeuclidean" |q - r|^2, "cosine" '
        .. "1 - q.r / (|q| |r|) (1 when either is the zero vector), "
        .. 'or "ip" the inner product q.r, largest first; "hamming" '
        .. "for ±1 codes (ml.binary): the bits that differ",
}
local BUDGET = {
  name = "budget", type = "integer", default = "2^30",
  doc = "bytes the search may take beyond its inputs (results, tiles, "
        .. "candidate lists), down to what one query needs",
}

return {
  title = "Nearest neighbours",
  intro = [[
Exact k-nearest-neighbour search and a scikit-learn style classifier
over it. ml.knn ranks candidates from the GEMM expansion |q|^2 + |r|^2 -
2 q.r, then recomputes the distances it returns from the vectors in
double precision and searches again every query whose k-th distance
lies within the expansion's proven rounding error of a rejected
candidate, so the answer is exact (and the same on every device). On a
GPU, small dimensions (d <= 64, k <= 40) keep per query only the
references under a limit taken from a sample; otherwise the distance
matrix is tiled under the memory budget.]],
  entries = {
    {
      name = "knn",
      usage = {
        "ml.knn(queries, refs, k [, opts])",
        "queries:knn(refs, k [, opts])",
      },
      doc = [[
The k rows of refs (n x d) nearest to each row of queries (m x d), by
the metric, nearest first, ties to the lower index. The inputs promote
to one dtype (integers compute in float64). k must be 1 to n (1 to n - 1
with exclude_self); empty queries give 0 x k results. A NaN distance
ranks after every number. With metric "hamming", queries and refs are
±1 codes, packed by ml.binary.pack (or arrays that it packs along their
last dimension), no other option applies, and dist is int32.]],
      options = {
        METRIC,
        {name = "exclude_self", type = "boolean", default = "false",
         doc = "queries and refs are the same rows (m == n): leave "
               .. "reference i out of query i's neighbours"},
        BUDGET,
        {name = "tf32", type = "boolean", default = "true",
         doc = "on a GPU with TF32 tensor cores, rank float32 candidates "
               .. "with them (the answer is exact either way)"},
        {name = "method", type = "string", default = '"auto"',
         doc = '"filter" (the sampled limit), "tile" (distance tiles '
               .. 'and candidate lists) or "bounded" (k <= 8: every key '
               .. "of a query against its k-th smallest) for the first "
               .. 'pass, or "auto" for the backend\'s choice; the answer '
               .. "is the same"},
      },
      returns = "dist and index, both m x k: the distances (the inputs' "
                .. "float dtype) and the 1-based int64 rows of refs.",
      example = [[
local refs = ml.array({{0, 0}, {1, 0}, {0, 2}, {5, 5}})
local dist, index = ml.knn({{0.1, 0}}, refs, 2)
print(index[{1, 1}], index[{1, 2}], dist[{1, 2}])  --> 1 2 0.9
local _, self = ml.knn(refs, refs, 1, {exclude_self = true})
print(self[{4, 1}])  --> 3]],
    },
    {
      name = "KNNClassifier",
      usage = {"ml.KNNClassifier([opts])"},
      doc = [[
A k-nearest-neighbour classifier with the semantics of scikit-learn's
KNeighborsClassifier (brute force), over ml.knn. Each neighbour votes
for its label with weight 1 ("uniform") or 1 / distance ("distance";
when some neighbours are at distance 0, they alone vote, with weight 1
each); the label with the most votes wins, the smallest among equals.
Labels are any integers; clf.classes holds the distinct ones in
ascending order once fitted. ml.KNNClassifier is a class: calling it
makes a classifier, and its fields are the methods.]],
      options = {
        {name = "k", type = "integer", default = "5",
         doc = "the number of neighbours that vote"},
        {name = "weights", type = "string", default = '"uniform"',
         doc = '"uniform" or "distance"'},
        METRIC,
        BUDGET,
      },
      returns = "a new classifier, to fit.",
      example = [[
local X = ml.array({{0, 0}, {0, 1}, {5, 5}, {6, 5}})
local clf = ml.KNNClassifier{k = 3, weights = "distance"}
clf:fit(X, {7, 7, 9, 9})
print(clf:predict({{0.2, 0.1}, {5, 4}}):sum())  --> 16]],
    },
    {
      name = "KNNClassifier:fit",
      usage = {"clf:fit(X, y)"},
      doc = [[
Remembers the training samples X (n x d, an array or table) and their
integer labels y (n, an array or table; floats must hold integers).]],
      returns = "clf, so that calls chain.",
      example = [[
local clf = ml.KNNClassifier{k = 1}:fit({{0}, {10}}, {3, -1})
print(clf.classes[1], clf.classes[2])  --> -1 3]],
    },
    {
      name = "KNNClassifier:predict",
      usage = {"clf:predict(Q)"},
      doc = [[
The label of each row of Q by the vote of its k nearest training
samples.]],
      returns = "an int64 array of Q's rows.",
      example = [[
local clf = ml.KNNClassifier{k = 1}:fit({{0}, {10}}, {3, -1})
print(clf:predict({{1}, {8}, {-4}}):sum())  --> 5]],
    },
    {
      name = "KNNClassifier:predict_proba",
      usage = {"clf:predict_proba(Q)"},
      doc = [[
The share of the votes each class gets for each row of Q (the votes
divided by their total), columns in clf.classes order.]],
      returns = "a float64 array of Q's rows x the number of classes.",
      example = [[
local clf = ml.KNNClassifier{k = 4}:fit({{0}, {1}, {2}, {10}}, {0, 0, 1, 1})
local p = clf:predict_proba({{0}})
print(p[{1, 1}], p[{1, 2}])  --> 0.5 0.5]],
    },
    {
      name = "KNNClassifier:score",
      usage = {"clf:score(Q, y)"},
      doc = [[The fraction of the rows of Q whose predicted label is y's.]],
      returns = "a number in [0, 1].",
      example = [[
local clf = ml.KNNClassifier{k = 1}:fit({{0}, {10}}, {3, -1})
print(clf:score({{1}, {9}, {6}, {2}}, {3, -1, 3, 3}))  --> 0.75]],
    },
    {
      name = "KNNClassifier:kneighbors",
      usage = {"clf:kneighbors(Q)"},
      doc = [[
The k nearest training samples of each row of Q, by the classifier's
metric and budget: ml.knn's results.]],
      returns = "dist and index, as ml.knn.",
      example = [[
local clf = ml.KNNClassifier{k = 2}:fit({{0}, {10}, {3}}, {1, 2, 1})
local dist, index = clf:kneighbors({{4}})
print(index[{1, 1}], dist[{1, 2}])  --> 3 4.0]],
    },
  },
}
