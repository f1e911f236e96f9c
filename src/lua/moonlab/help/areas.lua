-- The help areas, in the order of the reference; each is the module
-- moonlab.help.<name> (a new area adds its name here).
return {
  "array", -- first: help(x) for an array x shows it
  "construct", "convert", "elementwise", "reduce", "products", "binary",
  "linalg", "shape", "structure", "rearrange", "index", "stats", "random", "io", "knn",
  "cluster", "datasets", "conv", "signal", "ndimage", "plot", "dist",
  "runtime", "cuda", "test",
}
