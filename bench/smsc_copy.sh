#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Open MPI 5.0's single-copy framework (smsc) against newrma's own single
# copy, 8 B .. 4 MiB, 2 ranks (bench/smsc_copy.c says what it measures).
# A benchmark, not a test; docs/ompi5.md ("Single copy: smsc") has results.
# smsc exists only in Open MPI 5, so this runs in the Debian 13 root of
# contrib/ompi5-root.sh (Debian 13's openmpi 5.0.7), entering it itself.
# Root only (as the root's scripts).
#
#   bench/smsc_copy.sh [BATCHES]      (default 15; at most 64)
#
# Environment (optional): RUNS=N repeats the mpirun N times (default 1).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -f /etc/newrma-ompi5-root ]; then
    exec "$top/contrib/ompi5-root.sh" exec env ${RUNS:+NEWRMA_SMSC_RUNS=$RUNS} \
        "$top/bench/smsc_copy.sh" "$@"
fi

# Open MPI 5.0's internal headers: Debian's libopenmpi-dev has most of them
# under the second include directory; the ones it lacks and PMIx's come as
# for newrma's own build (docs/ompi5.md, "Building in the root").
missing=/usr/local/include/ompi5-missing
[ -d "$missing" ] || { echo "smsc_copy: no $missing: run contrib/ompi5-root.sh headers" >&2; exit 1; }
includes=()
for d in $(mpicc --showme:incdirs) "$missing"; do includes+=(-isystem "$d"); done
# shellcheck disable=SC2207  # pkg-config prints one flag a word
includes+=($(pkg-config --cflags-only-I pmix))
mkdir -p "$top/bench/bin"
mpicc -O2 -Wall -Wextra -o "$top/bench/bin/smsc_copy" "$top/bench/smsc_copy.c" "${includes[@]}" -lopen-pal

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# single-node runs: keep btl/tcp quiet (docs/ompi5.md)
export OMPI_MCA_btl_tcp_if_include=lo
mpirun --version | head -1
for ((run = 1; run <= ${NEWRMA_SMSC_RUNS:-1}; ++run)); do
    mpirun --oversubscribe -np 2 "$top/bench/bin/smsc_copy" "$@"
done
