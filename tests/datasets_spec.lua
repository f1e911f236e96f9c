local ml = require "moonlab"

-- Known values read with Python from the .gz files of the Debian package
-- dataset-fashion-mnist (flat pixel indices 1-based).
local function scalar(v)
  if ml.is_array(v) then return v:item() end
  return v
end

local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end

describe("datasets.fashion_mnist", function()
  local data
  local function fmnist()
    data = data or ml.datasets.fashion_mnist()
    return data
  end

  it("has the documented shapes and dtypes", function()
    local d = fmnist()
    assert.same({60000, 784}, d.train_images.shape)
    assert.same({60000}, d.train_labels.shape)
    assert.same({10000, 784}, d.test_images.shape)
    assert.same({10000}, d.test_labels.shape)
    assert.equal(ml.get_default_dtype(), d.train_images.dtype)
    assert.equal("int64", d.train_labels.dtype)
    assert.equal(ml.device(), d.train_images.device)
  end)

  it("has 6000 train and 1000 test labels per class", function()
    local d = fmnist()
    for split, per in pairs({train = 6000, test = 1000}) do
      local count = {}
      for _, v in ipairs(d[split .. "_labels"]:totable()) do
        count[v] = (count[v] or 0) + 1
      end
      for c = 0, 9 do assert.equal(per, count[c]) end
    end
    local t = d.train_labels:totable()
    assert.same({9, 0, 0, 3, 0, 2, 7, 2, 5, 5}, {table.unpack(t, 1, 10)})
    assert.same({9, 2, 1, 1, 6, 1, 4, 6, 5, 7},
                {table.unpack(d.test_labels:totable(), 1, 10)})
  end)

  it("scales pixels to [0, 1]", function()
    local d = fmnist()
    assert.equal(210 / 255, d.train_images[{1, 301}])
    assert.equal(193 / 255, d.train_images[{12346, 407}])
    assert.equal(1 / 255, d.train_images[{1, 97}])
    assert.equal(73 / 255, d.train_images[{1, 101}])
    assert.equal(0, d.train_images[{60000, 784}])
    assert.equal(115 / 255, d.test_images[{1, 351}])
    assert.equal(45 / 255, d.test_images[{10000, 401}])
    for _, x in ipairs({d.train_images, d.test_images}) do
      assert.equal(0, scalar(x:min()))
      assert.equal(1, scalar(x:max()))
    end
    local train_sum, test_sum = 3431114169 / 255, 573469082 / 255
    assert.is_true(math.abs(scalar(d.train_images:sum()) - train_sum) < 1e-9 * train_sum)
    assert.is_true(math.abs(scalar(d.test_images:sum()) - test_sum) < 1e-9 * test_sum)
  end)

  it("takes a dtype", function()
    data = nil
    collectgarbage()
    local d = ml.datasets.fashion_mnist({dtype = "float32"})
    assert.equal("float32", d.train_images.dtype)
    assert.equal("float32", d.test_images.dtype)
    assert.equal("int64", d.test_labels.dtype)
    assert.equal(f32(210 / 255), d.train_images[{1, 301}])
    assert.equal(f32(45 / 255), d.test_images[{10000, 401}])
  end)

  it("explains missing data", function()
    local ok, err = pcall(ml.datasets.fashion_mnist, {dir = "/nonexistent"})
    assert.is_false(ok)
    assert.equal("fashion_mnist: data not found in /nonexistent (install the " ..
                 "Debian package dataset-fashion-mnist or set MOONLAB_DATA)", err)
  end)
end)
