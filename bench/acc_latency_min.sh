#!/usr/bin/env bash
# Accumulate-family latency, newrma beside osc/sm on 2 ranks, as the minimum
# over short batches (bench/acc_latency_min.c) and over ROUNDS runs with the
# components interleaved: for a machine shared with other jobs, where the
# medians of bench/op_latency.sh swing.  A benchmark, not a test.
#   bench/acc_latency_min.sh [ROUNDS]     (default 5)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
mkdir -p "$top/build" "$top/bench/bin"
flock "$top/build/.build.lock" "$top/contrib/build.sh" > "$top/build/bench-build.log" 2>&1 \
    || { tail "$top/build/bench-build.log"; exit 1; }
mpicc -O2 -o "$top/bench/bin/acc_latency_min" "$top/bench/acc_latency_min.c"
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
printf '%-14s %10s %10s %10s\n' "allocate, 2" newrma sm newrma/sm
for _ in $(seq "$rounds"); do
    for osc in newrma sm; do
        mpirun --oversubscribe -np 2 --mca osc "$osc" "$top/bench/bin/acc_latency_min" | sed "s/^/$osc /"
    done
done | awk '{ k = $2 " " $3; if (!((k, $1) in m) || $4 < m[k, $1]) m[k, $1] = $4; keys[k] = 1 }
    END { for (k in keys) printf "%-14s %10.4f %10.4f %10.2f\n", k, m[k, "newrma"], m[k, "sm"], m[k, "newrma"] / m[k, "sm"] }' \
    | sort -k1,1 -k2,2n
