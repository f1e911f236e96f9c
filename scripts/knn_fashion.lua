-- Fashion-MNIST by k nearest neighbours: the 10000 test images against the
-- 60000 training images, exact Euclidean distances, on the default device.
-- Prints the accuracy (scikit-learn's brute force: 0.8554 for k = 5), the
-- time, the agreement with scikit-learn's committed predictions and the
-- confusion matrix.
--
--   moonlab scripts/knn_fashion.lua [--k 5] [--weights uniform|distance]
--       [--dtype float32|float64] [--device cpu|cuda] [--save pred.npy]
--       [--plot FILE]
--
-- --save writes the predictions (uint8, 10000) as a .npy file; --plot
-- draws the confusion matrix as a heat map into FILE (.png, .svg, .pdf).
local ml = require "moonlab"

local NAMES = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}
local SKLEARN = "tests/fixtures/knn/fashion_pred.npy"

local function options(argv)
  local o = {k = 5, weights = "uniform", dtype = "float32"}
  local i = 1
  while i <= #argv do
    local key = argv[i]:match("^%-%-(%w+)$")
    if not key or argv[i + 1] == nil then
      error("usage: knn_fashion.lua [--k K] [--weights W] [--dtype T] [--device D] [--save FILE] [--plot FILE]", 0)
    end
    o[key] = key == "k" and math.tointeger(tonumber(argv[i + 1])) or argv[i + 1]
    i = i + 2
  end
  return o
end

local o = options(arg or {})
if o.device then ml.set_device(o.device) end

local t0 = ml.clock()
local data = ml.datasets.fashion_mnist{dtype = o.dtype}
ml.synchronize()
local t1 = ml.clock()
local clf = ml.KNNClassifier{k = o.k, weights = o.weights}
  :fit(data.train_images, data.train_labels)
local predicted = clf:predict(data.test_images)
ml.synchronize()
local t2 = ml.clock()

local truth = data.test_labels
local m = truth:size(1)
local correct = ml.eq(predicted, truth):sum()
print(("Fashion-MNIST, %d-nearest neighbours (%s weights) on %s (%s)")
      :format(o.k, o.weights, ml.device(), o.dtype))
print(("accuracy %.4f (%d of %d test images)"):format(correct / m, correct, m))
print(("time: load %.2f s, classify %.3f s"):format(t1 - t0, t2 - t1))

local f = io.open(SKLEARN, "rb")
if f and o.k == 5 and o.weights == "uniform" then
  f:close()
  local sk = ml.load_npy(SKLEARN):astype("int64"):to(predicted.device)
  print(("scikit-learn agrees on %d of %d images"):format(ml.eq(sk, predicted):sum(), m))
end

if o.save then
  ml.save_npy(o.save, predicted:astype("uint8"):cpu())
  print("predictions saved to " .. o.save)
end

-- counts[t][p]: test images of class t predicted as p
local pairs_ = truth * 10 + predicted
local cells = ml.arange(100, {dtype = "int64", device = truth.device})
local counts = ml.eq(pairs_:reshape(m, 1), cells:reshape(1, 100)):sum(1):reshape(10, 10)
local matrix = counts
counts = counts:totable()
print("confusion matrix (rows: true class, columns: predicted class)")
local head = {("%12s"):format("")}
for p = 1, 10 do head[#head + 1] = ("%5d"):format(p - 1) end
print(table.concat(head) .. "  recall")
for t = 1, 10 do
  local row, total = {("%-12s"):format(NAMES[t])}, 0
  for p = 1, 10 do
    row[#row + 1] = ("%5d"):format(counts[t][p])
    total = total + counts[t][p]
  end
  print(table.concat(row) .. ("  %.3f"):format(counts[t][t] / total))
end

if o.plot then
  ml.plot.heatmap(matrix, {file = o.plot, xnames = NAMES, ynames = NAMES,
    xlabel = "predicted class", ylabel = "true class", size = {820, 760},
    title = ("Fashion-MNIST, %d-nearest neighbours: accuracy %.4f")
            :format(o.k, correct / m)})
  print("confusion matrix drawn in " .. o.plot)
end
