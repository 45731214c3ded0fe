#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Compile every source of osc/newrma for aarch64 with Debian's cross
# compiler and Debian's Open MPI 4.1 for arm64, with the native build's
# flags (configure.ac: -Wall -Wextra -fvisibility=hidden, Open MPI's headers
# as system headers, the shim/ headers first) and -Werror: a warning fails.
# Then links the objects into build/aarch64/mca_osc_newrma.so (a component
# leaves Open MPI's symbols to its loader, as the native build's does with
# its libraries; nothing here runs it).  What it checks: the weak-memory
# build compiles -- osc_newrma_atomic.h's builtins on a 64-bit ARM, no
# x86-only construct outside an #if.
#
# Installs what it needs on a bare Debian 12 (as root, or with sudo):
# gcc-aarch64-linux-gnu, and the arm64 architecture in dpkg
# (dpkg --add-architecture arm64, then apt-get update).  Open MPI for arm64
# is NOT installed through multiarch: apt would remove the amd64
# libopenmpi-dev, openmpi-bin and libpmix-dev to install
# libopenmpi-dev:arm64 (their dependencies are not co-installable), and the
# native build and tests need those.  Instead the arm64 packages with
# headers (libopenmpi-dev, libhwloc-dev, libucx-dev) are fetched with
# `apt-get download` and unpacked with `dpkg -x` into a sysroot under
# build/aarch64-sysroot/, which the compiler gets as -isystem directories
# (the C library's arm64 headers come with the cross compiler).
# Idempotent; a second run only compiles.  About 30 s (a minute or two
# with the installs).
#   contrib/cross-build-aarch64.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cc=aarch64-linux-gnu-gcc
sysroot=$top/build/aarch64-sysroot
out=$top/build/aarch64
sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
export DEBIAN_FRONTEND=noninteractive

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
    $sudo apt-get update -q
fi
if ! command -v "$cc" >/dev/null; then
    $sudo apt-get install -y -q gcc-aarch64-linux-gnu || { $sudo apt-get update -q; $sudo apt-get install -y -q gcc-aarch64-linux-gnu; }
fi
if [ ! -f "$sysroot/.unpacked" ]; then
    rm -rf "$sysroot"
    mkdir -p "$sysroot/debs"
    # (apt-get download writes into the current directory as the _apt user
    # when it can: let it)
    chmod 777 "$sysroot/debs"
    (cd "$sysroot/debs" && { apt-get download -q libopenmpi-dev:arm64 libhwloc-dev:arm64 libucx-dev:arm64 \
        || { $sudo apt-get update -q && apt-get download -q libopenmpi-dev:arm64 libhwloc-dev:arm64 libucx-dev:arm64; }; })
    for deb in "$sysroot"/debs/*.deb; do
        dpkg -x "$deb" "$sysroot"
    done
    touch "$sysroot/.unpacked"
fi

ompi_inc=$sysroot/usr/lib/aarch64-linux-gnu/openmpi/include
cppflags=(-I"$top/shim" -isystem "$ompi_inc" -isystem "$ompi_inc/openmpi"
          -isystem "$sysroot/usr/include" -isystem "$sysroot/usr/include/aarch64-linux-gnu"
          -DOSC_NEWRMA_HAVE_UCX=1 -DOSC_NEWRMA_OUT_OF_TREE=1
          -DOSC_NEWRMA_HELP_DIR='"/usr/share/openmpi-osc-newrma"')
cflags=(-g -O2 -Wall -Wextra -fvisibility=hidden -fPIC -Werror)
sources=$(sed -n '/^newrma_sources = /,/^$/p' "$top/Makefile.am" | grep -o 'osc_newrma[a-z_0-9]*\.c')
mkdir -p "$out"
rm -f "$out"/*.o "$out"/mca_osc_newrma.so
SECONDS=0
count=0
for src in $sources; do
    "$cc" "${cppflags[@]}" "${cflags[@]}" -c "$top/$src" -o "$out/${src%.c}.o"
    count=$((count + 1))
done
"$cc" -shared -o "$out/mca_osc_newrma.so" "$out"/*.o -lpthread
echo "aarch64: $count sources compiled with -Wall -Wextra -Werror (0 warnings), linked $out/mca_osc_newrma.so" \
     "($("$cc" -dumpversion), Open MPI $(sed -n 's/^#define OMPI_VERSION "\(.*\)"/\1/p' "$ompi_inc/openmpi/ompi/version.h" 2>/dev/null || echo 4.1), ${SECONDS}s)"
