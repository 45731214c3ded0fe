#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Build osc/newrma out of tree and install it under PREFIX (default:
# build/install).  Re-running only rebuilds what changed.
#   contrib/build.sh [PREFIX] [extra configure arguments...]
# NEWRMA_MAKE_JOBS: parallel make jobs (default 2); NEWRMA_OBJ_DIR: the
# object directory (default build/obj; one per Open MPI the component is
# built against, e.g. build/obj5 inside contrib/ompi5-root.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$top/build/install}
shift || true
obj=${NEWRMA_OBJ_DIR:-$top/build/obj}
mkdir -p "$obj"
if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] \
   || [ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
    (cd "$top" && ./autogen.sh)
fi
if [ ! -f "$obj/Makefile" ] || [ "$top/configure" -nt "$obj/Makefile" ] \
   || ! grep -q "^prefix = $prefix\$" "$obj/Makefile"; then
    (cd "$obj" && "$top/configure" --prefix="$prefix" "$@")
    make -C "$obj" clean   # new flags: rebuild every object
fi
make -C "$obj" -j"${NEWRMA_MAKE_JOBS:-2}"
make -C "$obj" install
echo "installed: $prefix/lib/openmpi/mca_osc_newrma.so"
