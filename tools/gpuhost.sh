#!/bin/bash
# One call on a lent GPU host (see docs/architecture.md, "Working on the GPU
# host"): build for the host's chip, run the GPU specs, `make bench`, and the
# ml.dist rows and multi-process specs (ranks on the GPUs) when the host has
# several GPUs. Logs go under $OUT; a short
# summary comes last. Stages: build, specs, bench, dist (default: all).
#   source .gpuhost/env.sh && tools/gpuhost.sh [stage...]
set -u
out=${OUT:-/tmp/gpuhost}
mkdir -p "$out"
export MOONLAB_DATA=${MOONLAB_DATA:-${GPUHOST_DATASETS:-/usr/share/datasets}/fashion-mnist}
[ $# -gt 0 ] || set -- build specs bench dist
summary=()
note() { summary+=("$*"); }
stamp() { date +%s; }

# Debian's alternatives name mpirun and mpicc; dpkg -x leaves them out. Open
# MPI finds its components and help files from OPAL_PREFIX when unpacked
# away from /usr.
gh=/opt/gpuhost/usr
[ -e $gh/bin/mpirun ] || ln -s orterun $gh/bin/mpirun
[ -e $gh/bin/mpicc ] || ln -s opal_wrapper $gh/bin/mpicc
export OPAL_PREFIX=$gh

nvidia-smi --query-gpu=name,memory.total,clocks.sm --format=csv,noheader | tee "$out/gpus.txt"
ngpu=$(nvidia-smi -L | wc -l)

for stage in "$@"; do
  t0=$(stamp)
  case $stage in
    build)
      # sm_90 only: the host is a Hopper; one target instead of the default
      # three (100-109 s on the H200 hosts' 16 cores).
      if make -j"$(nproc)" CUDA_ARCH="-gencode arch=compute_90,code=sm_90" \
           all build/tests/backend_register >"$out/build.log" 2>&1; then
        note "build: ok, $(( $(stamp) - t0 )) s"
      else
        tail -40 "$out/build.log"; note "build: FAILED"; break
      fi ;;
    specs)
      MOONLAB_DEVICE=cuda timeout 450 scripts/run-tests.sh >"$out/specs.log" 2>&1
      note "specs (MOONLAB_DEVICE=cuda, all of tests/): $(tail -1 "$out/specs.log"), $(( $(stamp) - t0 )) s"
      grep -E -A12 '^(Failure|Error) ' "$out/specs.log" | head -80 ;;
    bench)
      timeout 330 make bench PYTHON=python3 >"$out/bench.txt" 2>&1
      note "bench: exit $?, $(( $(stamp) - t0 )) s (table in bench.txt)" ;;
    dist)
      if [ "$ngpu" -lt 2 ]; then note "dist: one GPU, skipped"; continue; fi
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      for np in 1 "$ngpu"; do
        timeout 100 mpirun -np "$np" bin/moonlab scripts/bench/dist.lua \
          >"$out/dist_$np.txt" 2>&1
        note "dist -np $np: exit $?"
      done
      # the multi-process specs with the ranks on the GPUs (NCCL)
      MOONLAB_DEVICE=cpu MOONLAB_DIST_DEVICE=cuda \
        MOONLAB_DIST_RANKS=$(seq -s, 2 "$ngpu") timeout 300 \
        scripts/run-tests.sh tests/dist_spec.lua >"$out/dist_spec.log" 2>&1
      note "dist spec (ranks on the GPUs, 2 to $ngpu): $(tail -1 "$out/dist_spec.log")"
      grep -E -A12 '^(Failure|Error) ' "$out/dist_spec.log" | head -80 ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done

for f in bench.txt dist_1.txt "dist_$ngpu.txt"; do
  [ -f "$out/$f" ] && { echo "== $f"; cat "$out/$f"; }
done
echo "== summary"
printf '%s\n' "${summary[@]}"
