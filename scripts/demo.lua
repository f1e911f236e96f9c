-- make demo: classify Fashion-MNIST's 10000 test images by the nearest class
-- mean of the 60000 training images, on the default device (the GPU when
-- there is one). Prints the accuracy and the time.
local ml = require "moonlab"

local names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

local t0 = ml.clock()
local data = ml.datasets.fashion_mnist()
local t1 = ml.clock()

local X, y = data.train_images, data.train_labels
local classes = ml.arange(10, {device = X.device})
-- one-hot n x 10, then the class means as one matrix product
local onehot = ml.eq(y:reshape(-1, 1), classes:reshape(1, -1)):astype(X.dtype)
local means = onehot:t():mm(X) / onehot:sum(1):reshape(10, 1)

-- argmin |x - m|^2 = argmax 2 x.m - |m|^2
local Q = data.test_images
local scores = Q:mm(means:t()) * 2 - (means * means):sum(2):reshape(1, 10)
local predicted = scores:argmax(2) - 1
local correct = ml.eq(predicted, data.test_labels):sum()
ml.synchronize()
local t2 = ml.clock()

print(("Fashion-MNIST, nearest class mean on %s (%s)"):format(X.device, X.dtype))
print(("accuracy %.4f (%d of %d test images)"):format(correct / Q:size(1), correct, Q:size(1)))
print("per-class recall:")
for c = 0, 9 do
  local in_class = ml.eq(data.test_labels, c)
  local hits = (in_class * ml.eq(predicted, c)):sum()
  print(("  %-12s %.3f"):format(names[c + 1], hits / in_class:sum()))
end
print(("time: load %.2f s, fit and classify %.3f s"):format(t1 - t0, t2 - t1))
