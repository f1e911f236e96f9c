local ml = require "moonlab"

-- The real data: Fashion-MNIST's 10000 test images classified by their 5
-- nearest training images, against scikit-learn's brute-force predictions
-- (tests/fixtures/knn/make.py). The GEMM behind it is 0.94 TFLOP: several
-- seconds on a small CPU.
describe("KNNClassifier on Fashion-MNIST", function()
  it("predicts every test image as scikit-learn does", function()
    local data = ml.datasets.fashion_mnist{dtype = "float32"}
    local clf = ml.KNNClassifier{k = 5}:fit(data.train_images, data.train_labels)
    local predicted = clf:predict(data.test_images)
    local sklearn = ml.load_npy("tests/fixtures/knn/fashion_pred.npy")
    assert.same({10000}, sklearn.shape)
    sklearn = sklearn:astype("int64"):to(predicted.device)
    assert.equal(10000, ml.eq(predicted, sklearn):sum())
    assert.equal(8554, ml.eq(predicted, data.test_labels):sum())
  end)
end)
