-- Help entries: the ml.datasets namespace.
return {
  title = "Data sets",
  namespace = "datasets",
  intro = [[
Real data for examples and tests, in the namespace ml.datasets (loaded
on first use).]],
  entries = {
    {
      name = "datasets.fashion_mnist",
      usage = {"ml.datasets.fashion_mnist([opts])"},
      doc = [[
Fashion-MNIST (Xiao et al. 2017): 70000 28 x 28 grey images of clothes
in 10 classes, read from its four IDX files (train-images-idx3-ubyte.gz,
...) in opts.dir, else $MOONLAB_DATA, else
/usr/share/datasets/fashion-mnist (the Debian package
dataset-fashion-mnist). The images are flattened to 784 values scaled
to [0, 1]; the labels are the classes 0 to 9 as in the files.]],
      options = {
        {name = "dir", type = "string",
         default = '$MOONLAB_DATA or "/usr/share/datasets/fashion-mnist"',
         doc = "the directory of the four .gz files"},
        {name = "dtype", type = "string",
         default = "ml.get_default_dtype()", doc = "the images' float dtype"},
        {name = "device", type = "string", default = "ml.device()",
         doc = "where the arrays go"},
      },
      returns = "a table: train_images (60000 x 784), train_labels "
                .. "(60000, int64), test_images (10000 x 784) and "
                .. "test_labels (10000, int64).",
      example = [[
local d = ml.datasets.fashion_mnist({dtype = "float32"})
local X = d.train_images
print(X.shape[1], X.shape[2], X.dtype, X:max())  --> 60000 784 float32 1.0
print(d.test_images.shape[1], d.test_labels:max())  --> 10000 9]],
    },
  },
}
