# moonlab: `make` builds bin/moonlab and lib/moonlab.so; `make test`,
# `make demo` and `make bench` install what is missing first; `make install`
# copies the two where a stock lua5.4 and busted look.

CC      ?= cc
PKGS    := lua5.4 zlib libzip
CPPFLAGS += -D_GNU_SOURCE $(shell pkg-config --cflags $(PKGS) 2>/dev/null) \
            -I/usr/include/lua5.4 -I/usr/include/x86_64-linux-gnu/openblas-pthread
CFLAGS  ?= -O2 -g
# override: flags given on the command line (luarocks passes CFLAGS) keep
# the ones the sources need.
override CFLAGS += -std=c11 -Wall -Wextra -fPIC -fopenmp -fno-math-errno
LDLIBS  := -lopenblas -llapacke \
           $(shell pkg-config --libs libzip 2>/dev/null || echo -lzip) -lz -lm
LUALIB  := $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
# MPI (Open MPI, libopenmpi-dev) for ml.dist: core/dist.c, cpu/cpu_dist.c.
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell pkg-config --libs ompi-c 2>/dev/null || mpicc --showme:link 2>/dev/null || echo -lmpi)
CPPFLAGS += $(MPI_CFLAGS)
LDLIBS   += $(MPI_LIBS)

# Optional features, announced once per build.
LIBEDIT := $(shell pkg-config --exists libedit 2>/dev/null && echo yes)
ifeq ($(LIBEDIT),yes)
  REPL_CPPFLAGS := -DML_HAVE_LIBEDIT $(shell pkg-config --cflags libedit)
  REPL_LIBS     := $(shell pkg-config --libs libedit)
endif
# The CUDA backend (kernels/*.cu) is built when nvcc is found, on PATH or
# as $(CUDA_HOME)/bin/nvcc, unless CUDA=no.
CUDA    ?= auto
NVCC    := $(if $(filter no,$(CUDA)),,$(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc)))
NVCC_VERSION := $(if $(NVCC),$(shell $(NVCC) --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))

LIB_SRC := $(wildcard src/core/*.c src/cpu/*.c src/bindings/*.c)
LIB_OBJ := $(LIB_SRC:src/%.c=build/%.o) build/embedded.o
APP_OBJ := build/main.o build/repl.o

ifneq ($(NVCC),)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
               -gencode arch=compute_90,code=compute_90
  NVCCFLAGS ?= -O3
  NVCCFLAGS += -std=c++17 -Xcompiler -fPIC,-Wall,-Wextra
  KERN_OBJ  := $(patsubst kernels/%.cu,build/kernels/%.o,$(wildcard kernels/*.cu))
  LIB_OBJ   += $(KERN_OBJ)
  CPPFLAGS  += -DML_HAVE_CUDA
  # cuDNN: beside the toolkit, or under CUDNN_HOME (include/, lib/).
  ifneq ($(CUDNN_HOME),)
    NVCCFLAGS += -I$(CUDNN_HOME)/include
    LDLIBS    += -L$(CUDNN_HOME)/lib -Wl,-rpath,$(CUDNN_HOME)/lib
  endif
  # NCCL (ml.dist on GPU arrays): beside the toolkit, or under NCCL_HOME.
  ifneq ($(NCCL_HOME),)
    NVCCFLAGS += -I$(NCCL_HOME)/include
    LDLIBS    += -L$(NCCL_HOME)/lib -Wl,-rpath,$(NCCL_HOME)/lib
  endif
  LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnccl -lcudnn -lcusolver -lcublas -lcufft \
               -lcudart_static -ldl -lrt -lpthread -lstdc++
endif
# The files that test ML_HAVE_CUDA are rebuilt when CUDA is switched on or
# off: build/cuda.flags changes with it.
$(shell mkdir -p build; echo '$(NVCC)' | cmp -s - build/cuda.flags || echo '$(NVCC)' > build/cuda.flags)

LUA_SRC := $(wildcard src/lua/moonlab/*.lua src/lua/moonlab/*/*.lua)

# Installation (DESTDIR stages it, as packagers expect): the shell in
# $(BINDIR), the module in $(CMODDIR), the first entry of Debian's lua5.4
# package.cpath; the rockspec maps them to the rock's directories.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
CMODDIR ?= $(PREFIX)/lib/lua/5.4

PYTHON  := $(shell for p in python3 /usr/bin/python3; do $$p -c 'import numpy' 2>/dev/null && { echo $$p; break; }; done)

.PHONY: all test bench demo deps docs install uninstall clean status FORCE
all: status bin/moonlab lib/moonlab.so

status:
	@echo "CUDA: $(if $(NVCC),yes (nvcc $(NVCC_VERSION)),no)"
	@echo "line editing: $(if $(LIBEDIT),yes (libedit),no (install libedit-dev))"

build/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# repl.o is rebuilt when line editing is switched on or off (make LIBEDIT=).
build/repl.flags: FORCE
	@mkdir -p build
	@echo '$(REPL_CPPFLAGS)' | cmp -s - $@ || echo '$(REPL_CPPFLAGS)' > $@

build/repl.o: src/repl.c build/repl.flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(REPL_CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

build/core/backends.o: build/cuda.flags

build/kernels/%.o: kernels/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(CUDA_ARCH) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# Hopper's warpgroup MMA exists in sm_90a's instruction set alone:
# binary_wgmma.cu is built for that chip whatever CUDA_ARCH says, and
# binary_mm.cuh calls it on devices of compute capability 9.0 only.
build/kernels/binary_wgmma.o: kernels/binary_wgmma.cu
	@mkdir -p $(dir $@)
	$(NVCC) -gencode arch=compute_90a,code=sm_90a $(NVCCFLAGS) -MMD -MP -c $< -o $@

build/embed: tools/embed.c
	@mkdir -p build
	$(CC) -O2 -Wall -Wextra -o $@ $<

build/embedded.c: build/embed $(LUA_SRC)
	build/embed $@ src/lua $(LUA_SRC)

build/embedded.o: build/embedded.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# A test of backend registration (tests/backend_spec.lua): the core and the
# backends without the Lua bindings.
build/tests/backend_register: tests/c/backend_register.c $(filter-out build/bindings/% build/embedded.o,$(LIB_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

bin/moonlab: $(APP_OBJ) $(LIB_OBJ)
	@mkdir -p bin
	$(CC) $(CFLAGS) -Wl,-E -o $@ $^ $(LUALIB) $(REPL_LIBS) $(LDLIBS)

# The module for a stock lua5.4: Lua's symbols come from the interpreter.
# -z nodelete: lua_close() must not unload it (and libgomp) while OpenMP's
# idle worker threads still run libgomp code, which crashes at exit.
lib/moonlab.so: $(LIB_OBJ)
	@mkdir -p lib
	$(CC) $(CFLAGS) -shared -Wl,-z,nodelete -o $@ $^ $(LDLIBS)

deps:
	@scripts/install-deps.sh

# docs/api.md, the reference, from the help entries (src/lua/moonlab/help/).
docs: bin/moonlab
	bin/moonlab scripts/gen-api.lua docs/api.md

test:
	@scripts/install-deps.sh --if-missing
	@$(MAKE) --no-print-directory all build/tests/backend_register
	@scripts/run-tests.sh

demo:
	@scripts/install-deps.sh --if-missing
	@$(MAKE) --no-print-directory all
	bin/moonlab scripts/demo.lua
	bin/moonlab scripts/gmm_fashion.lua --tol 1e-2

bench:
	@scripts/install-deps.sh --if-missing
	@$(MAKE) --no-print-directory all
	PYTHON=$(PYTHON) bin/moonlab scripts/bench/run.lua $(if $(PLOT),--plot $(PLOT))

# Copies the built files; builds them first only when they are out of date.
install: all
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(CMODDIR)'
	install -m 755 bin/moonlab '$(DESTDIR)$(BINDIR)/moonlab'
	install -m 755 lib/moonlab.so '$(DESTDIR)$(CMODDIR)/moonlab.so'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/moonlab' '$(DESTDIR)$(CMODDIR)/moonlab.so'

clean:
	rm -rf build bin lib

-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d)
