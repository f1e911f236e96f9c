-- Real data sets for examples and tests, loaded as `ml.datasets`.
--
-- ml.datasets.fashion_mnist(opts) reads Fashion-MNIST (Xiao et al. 2017)
-- from its four IDX files (train-images-idx3-ubyte.gz, ...) in opts.dir,
-- else $MOONLAB_DATA, else /usr/share/datasets/fashion-mnist (the Debian
-- package dataset-fashion-mnist). It returns
--   train_images  60000 x 784, opts.dtype (default float dtype), in [0, 1]
--   train_labels  60000 int64, classes 0..9 as in the files
--   test_images   10000 x 784
--   test_labels   10000 int64
-- on opts.device (default device).
local ml = require "moonlab"
local check_options = require("moonlab.options").check

local M = {}

local DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"

local FILES = {
  train_images = "train-images-idx3-ubyte.gz",
  train_labels = "train-labels-idx1-ubyte.gz",
  test_images = "t10k-images-idx3-ubyte.gz",
  test_labels = "t10k-labels-idx1-ubyte.gz",
}

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

function M.fashion_mnist(opts)
  check_options("datasets.fashion_mnist", opts)
  opts = opts or {}
  local dir = opts.dir or os.getenv("MOONLAB_DATA") or DEFAULT_DIR
  for _, name in pairs(FILES) do
    if not exists(dir .. "/" .. name) then
      error(("fashion_mnist: data not found in %s (install the Debian "
             .. "package dataset-fashion-mnist or set MOONLAB_DATA)")
            :format(dir), 0)
    end
  end
  local dtype = opts.dtype or ml.get_default_dtype()
  local load = {device = opts.device}
  local function images(key)
    local x = ml.load_idx(dir .. "/" .. FILES[key], load)
    return x:reshape(x:size(1), 784):astype(dtype) / 255
  end
  local function labels(key)
    return ml.load_idx(dir .. "/" .. FILES[key], load):astype("int64")
  end
  local data = {
    train_images = images("train_images"),
    train_labels = labels("train_labels"),
    test_images = images("test_images"),
    test_labels = labels("test_labels"),
  }
  for _, split in ipairs({"train", "test"}) do
    local n = data[split .. "_images"]:size(1)
    local m = data[split .. "_labels"]:size(1)
    if n ~= m then
      error(("fashion_mnist: %d %s images but %d labels in %s"):format(
        n, split, m, dir), 0)
    end
  end
  return data
end

return M
