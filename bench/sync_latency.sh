#!/usr/bin/env bash
# Synchronization latency, newrma beside Open MPI's components, 2 ranks,
# medians in microseconds.  A benchmark, not a test.
#   bench/sync_latency.sh [allocate|create] [NP]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
flavor=${1:-allocate}; np=${2:-2}
"$top/contrib/build.sh" > "$top/build/bench-build.log" 2>&1 || { tail "$top/build/bench-build.log"; exit 1; }
mkdir -p "$top/bench/bin"
mpicc -O2 -o "$top/bench/bin/sync_latency" "$top/bench/sync_latency.c"
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$top/build/sync_latency
mkdir -p "$out"
comps="newrma sm rdma pt2pt"
[ "$flavor" = create ] && comps="newrma rdma pt2pt ucx"
for osc in $comps; do
    timeout 300 mpirun --oversubscribe -np "$np" --mca osc "$osc" "$top/bench/bin/sync_latency" "$flavor" \
        > "$out/$osc.txt" 2>/dev/null || echo "(failed)" > "$out/$osc.txt"
done
printf '%-22s' "$flavor, $np ranks (us)"; for osc in $comps; do printf '%10s' "$osc"; done; printf '%14s\n' "newrma/best"
for row in barrier fence pscw_round lock_unlock_shared lock_unlock_exclusive lock_all_unlock_all flush; do
    printf '%-22s' "$row"
    best=""
    for osc in $comps; do
        v=$(awk -v r="$row" '$1 == r { print $2 }' "$out/$osc.txt")
        printf '%10s' "${v:--}"
        if [ "$osc" != newrma ] && [ -n "$v" ]; then
            best=$(awk -v a="$v" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
        fi
    done
    mine=$(awk -v r="$row" '$1 == r { print $2 }' "$out/newrma.txt")
    if [ -n "$mine" ] && [ -n "$best" ] && [ "$row" != barrier ]; then
        awk -v a="$mine" -v b="$best" 'BEGIN { printf "%14.2f\n", a / b }'
    else
        printf '%14s\n' "-"
    fi
done
