-- make demo: classify Fashion-MNIST's 10000 test images from the 60000
-- training images on the default device (the GPU when there is one), first
-- by the nearest class mean, then by the 5 nearest neighbours (exact
-- Euclidean distances; scripts/knn_fashion.lua has the details). Prints
-- the accuracies, the times and the per-class recalls.
local ml = require "moonlab"

local names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

local t0 = ml.clock()
local data = ml.datasets.fashion_mnist{dtype = "float32"}
local t1 = ml.clock()

local X, y = data.train_images, data.train_labels
local Q, truth = data.test_images, data.test_labels
local m = Q:size(1)

-- Nearest class mean. One-hot n x 10, then the class means as one matrix
-- product; argmin |x - m|^2 = argmax 2 x.m - |m|^2.
local classes = ml.arange(10, {device = X.device})
local onehot = ml.eq(y:reshape(-1, 1), classes:reshape(1, -1)):astype(X.dtype)
local means = onehot:t():mm(X) / onehot:sum(1):reshape(10, 1)
local scores = Q:mm(means:t()) * 2 - (means * means):sum(2):reshape(1, 10)
local by_mean = scores:argmax(2) - 1
ml.synchronize()
local t2 = ml.clock()

-- 5 nearest neighbours, scikit-learn's KNeighborsClassifier semantics.
local by_knn = ml.KNNClassifier{k = 5}:fit(X, y):predict(Q)
ml.synchronize()
local t3 = ml.clock()

print(("Fashion-MNIST on %s (%s), data loaded in %.2f s"):format(X.device, X.dtype, t1 - t0))
local function report(label, predicted, seconds)
  local correct = ml.eq(predicted, truth):sum()
  print(("%-22s accuracy %.4f (%d of %d), %.3f s"):format(label, correct / m, correct, m, seconds))
end
report("nearest class mean", by_mean, t2 - t1)
report("5 nearest neighbours", by_knn, t3 - t2)
print("  (scikit-learn's brute-force 5 nearest neighbours: accuracy 0.8554)")
print(("per-class recall %12s %10s"):format("class mean", "5-NN"))
for c = 0, 9 do
  local in_class = ml.eq(truth, c)
  local total = in_class:sum()
  local a = (in_class * ml.eq(by_mean, c)):sum() / total
  local b = (in_class * ml.eq(by_knn, c)):sum() / total
  print(("  %-12s %14.3f %10.3f"):format(names[c + 1], a, b))
end
