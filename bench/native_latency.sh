#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# The native route against active messages (docs/mixed-windows.md, "Native
# RMA where UCX has it"): 2 ranks, an MPI_Win_allocate window,
# osc_newrma_force_remote over UCX's shared-memory transports
# (UCX_TLS=sm,self), rank 0 -> rank 1, bench/remote_latency.c's rows; the
# "am" column with osc_newrma_native_rma 0, "native" with 1.  A benchmark,
# not a test.
#   bench/native_latency.sh          ROUNDS=N (default 3): both columns run
#                                    N times, interleaved; a cell is the
#                                    median over the rounds
# Each run's verbose output must say "native route on" (native) or carry no
# such line (am), or the run is discarded.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
top=$bench_top
rounds=${ROUNDS:-3}
BENCH_CFLAGS=""
[ -f /usr/include/ucp/api/ucp.h ] && BENCH_CFLAGS="-DHAVE_UCP -lucp -lucs"
export BENCH_CFLAGS
bench_prepare remote_latency
rows="lock_put_unlock,lock_fop_unlock,lock_acc_unlock,fop_flush,put_flush"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() { # native(0|1) -> the benchmark's rows
    timeout 120 mpirun --oversubscribe -np 2 --mca osc newrma --mca osc_newrma_force_remote 1 \
        --mca osc_newrma_native_rma "$1" --mca osc_base_verbose 40 -x UCX_TLS=sm,self \
        "$top/bench/bin/remote_latency" allocate "$rows" 2> "$out/err"
}

for r in $(seq 1 "$rounds"); do
    for native in 0 1; do
        run "$native" > "$out/run" || { echo "run failed (native $native, round $r)"; continue; }
        on=$(grep -c 'native route on' "$out/err" || true)
        if { [ "$native" = 1 ] && [ "$on" != 2 ]; } || { [ "$native" = 0 ] && [ "$on" != 0 ]; }; then
            echo "discarded: native $native, round $r: $on processes said 'native route on'"
            continue
        fi
        awk -v c="$native" '$3 ~ /^[0-9.]+$/ { print c, $1, $3 }' "$out/run" >> "$out/raw"
    done
done

echo "== 8 B, MPI_Win_allocate, 2 ranks, force_remote, UCX_TLS=sm,self; medians of $rounds runs (us)"
printf '%-18s %10s %10s %10s\n' row am native native/am
for row in ${rows//,/ }; do
    am=$(awk -v r="$row" '$1 == 0 && $2 == r { print $3 }' "$out/raw" | bench_median)
    nat=$(awk -v r="$row" '$1 == 1 && $2 == r { print $3 }' "$out/raw" | bench_median)
    ratio=$(awk -v a="${am:-0}" -v n="${nat:-0}" 'BEGIN { if (a > 0 && n > 0) printf "%.2f", n / a; else print "-" }')
    printf '%-18s %10s %10s %10s\n' "$row" "${am:--}" "${nat:--}" "$ratio"
done
