#!/bin/sh
# Installs the Debian packages moonlab needs (DESIGN.md, "Build and
# dependencies"). With --if-missing it first checks whether the build and the
# tests can already run (headers and tools found, also outside dpkg, as on a
# host with unpacked packages) and then does nothing.
set -eu

PACKAGES="liblua5.4-dev lua5.4 lua-busted libopenblas-dev liblapacke-dev
zlib1g-dev libzip-dev libedit-dev gnuplot-nox dataset-fashion-mnist openmpi-bin
libopenmpi-dev"

can_build() {
  command -v lua5.4 >/dev/null && command -v busted >/dev/null &&
    command -v mpirun >/dev/null &&
    pkg-config --exists lua5.4 zlib libzip ompi-c 2>/dev/null &&
    printf '#include <cblas.h>\n#include <lapacke.h>\n' |
      ${CC:-cc} -E -I/usr/include/x86_64-linux-gnu/openblas-pthread $(pkg-config --cflags-only-I lua5.4) - >/dev/null 2>&1
}

if [ "${1:-}" = "--if-missing" ] && can_build; then
  exit 0
fi

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "installing:$missing"
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
