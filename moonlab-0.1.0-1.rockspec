-- `luarocks --lua-version=5.4 make` builds moonlab with its Makefile and
-- installs bin/moonlab into the tree's bin and lib/moonlab.so into its
-- lib/lua/5.4. The version follows MOONLAB_VERSION (src/bindings/moonlab.h).
rockspec_format = "3.0"
package = "moonlab"
version = "0.1.0-1"
source = {
  -- `luarocks make` builds the checkout it runs in; a published rockspec
  -- names the repository here.
  url = ".",
}
description = {
  summary = "A numeric shell for GPUs, scripted in Lua 5.4",
  detailed = [[
    A strided n-dimensional array for Lua 5.4 whose operations run CUDA
    kernels and cuBLAS on the GPU, or OpenBLAS and OpenMP loops on the CPU,
    with the moonlab shell. Needs Debian's liblua5.4-dev, libopenblas-dev,
    liblapacke-dev, zlib1g-dev (and libedit-dev for line editing); the CUDA
    backend is built when nvcc is found.
  ]],
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
build = {
  type = "make",
  build_variables = {
    CFLAGS = "$(CFLAGS)",
  },
  install_variables = {
    PREFIX = "$(PREFIX)",
    BINDIR = "$(BINDIR)",
    CMODDIR = "$(LIBDIR)",
  },
}
test_dependencies = {
  "busted",
}
test = {
  type = "busted",
}
