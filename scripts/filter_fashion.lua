-- Filters on a Fashion-MNIST image: the image, its Gaussian-filtered
-- version (ml.ndimage.gaussian_filter) and the magnitude of its Sobel
-- gradient (ml.ndimage.sobel along the rows and the columns), side by
-- side, on the default device. Prints each result's range and, with
-- --plot, draws the three images into FILE (.png, .svg or .pdf).
--
--   moonlab scripts/filter_fashion.lua [--index 1] [--sigma 1.5]
--       [--plot FILE]
--
-- --index picks the test image (1-based).
local ml = require "moonlab"

local USAGE = "usage: filter_fashion.lua [--index I] [--sigma S] [--plot FILE]"

local function options(argv)
  local o = {index = 1, sigma = 1.5}
  local i = 1
  while i <= #argv do
    local key = argv[i]:match("^%-%-(%w+)$")
    local value = argv[i + 1]
    if not key or value == nil or (o[key] == nil and key ~= "plot") then
      error(USAGE, 0)
    end
    if key ~= "plot" then
      value = tonumber(value)
      if not value then error(USAGE, 0) end
    end
    o[key] = value
    i = i + 2
  end
  o.index = math.tointeger(o.index)
  if not o.index or o.index < 1 or o.index > 10000 then error(USAGE, 0) end
  return o
end

local o = options(arg or {})
local data = ml.datasets.fashion_mnist()
local image = data.test_images[o.index]:reshape(28, 28)
local smooth = ml.ndimage.gaussian_filter(image, o.sigma)
local edges = (ml.ndimage.sobel(image, {axis = 1}) ^ 2
               + ml.ndimage.sobel(image, {axis = 2}) ^ 2):sqrt()
print(("test image %d (class %d) on %s"):format(o.index,
      data.test_labels[o.index], ml.device()))
for _, r in ipairs({{"image", image}, {"gaussian", smooth},
                    {"sobel", edges}}) do
  print(("%-9s min %.4f max %.4f mean %.4f"):format(r[1], r[2]:min(),
        r[2]:max(), r[2]:mean()))
end

if o.plot then
  local f = ml.plot.figure{layout = {1, 3}, size = {1050, 380},
    title = ("Fashion-MNIST test image %d and its filters"):format(o.index)}
  f:imshow(image, {title = "image"})
  f:panel(2):imshow(smooth, {title = ("Gaussian, sigma %g"):format(o.sigma)})
  f:panel(3):imshow(edges, {title = "Sobel gradient magnitude",
                            cmap = "hot"})
  f:save(o.plot)
  print("drawn in " .. o.plot)
end
