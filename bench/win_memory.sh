#!/usr/bin/env bash
# Memory per window, newrma beside Open MPI's osc/sm and osc/rdma, for
# n = 2, 4, 8, 16, 32 local ranks (oversubscribed), MPI_Win_allocate and
# MPI_Win_create windows of 4 KiB per rank.  A benchmark, not a test.
#   bench/win_memory.sh [N...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/build.sh" > "$top/build/bench-build.log" 2>&1 || { tail "$top/build/bench-build.log"; exit 1; }
mkdir -p "$top/bench/bin"
mpicc -O2 -o "$top/bench/bin/win_memory" "$top/bench/win_memory.c"
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ $# -gt 0 ] || set -- 2 4 8 16 32
# shared memory mapped per process = the window's node segment(s), page-rounded
printf '%-9s %5s %-8s %22s %22s\n' flavor ranks osc "shared mapped/proc (B)" "RSS growth/proc (B)"
for n in "$@"; do
    for osc in newrma sm rdma; do
        timeout 300 mpirun --oversubscribe -np "$n" --mca osc "$osc" "$top/bench/bin/win_memory" 2>/dev/null |
        awk -v osc="$osc" '
            /declined/ { split($2, r, "="); printf "%-9s %5s %-8s %22s %22s\n", $1, r[2], osc, "declined", "-"; next }
            { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
              printf "%-9s %5s %-8s %22s %22s\n", $1, v["ranks"], osc, v["mapped_per_proc"], v["rss_per_proc"] }' 
    done
done
