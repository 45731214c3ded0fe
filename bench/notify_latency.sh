#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Notified RMA latency (bench/notify_latency.c): one 8-byte notified put
# until the target sees it, beside put + flush + MPI_Fetch_and_op flag and
# beside MPI_Send/MPI_Recv, each one-way (half a ping-pong), 2 ranks bound
# to cores; on node for newrma and Open MPI's components, off node emulated
# on this machine for newrma.  A benchmark, not a test.
#   bench/notify_latency.sh
# Environment: ROUNDS=N (default 3): every configuration runs N times, the
# configurations interleaved; a cell is the median over the rounds (each
# run's value is the median of 21 batches of RT round trips, RT=200).
# CONFIGS="on-newrma off-remote ..." picks configurations (default: all).
#
# Configurations (the path column is what MPIX_Win_notify_path reports):
#   on-newrma      osc newrma, allocate window (the direct table)
#   on-newrma-c    osc newrma, create window (the usermem table: single copy)
#   on-sm, on-rdma, on-ucx   Open MPI's components (the library's fallback)
#   off-remote     newrma with osc_newrma_force_remote 1, UCX tcp on lo, MPI
#                  point-to-point over ob1 + btl tcp on lo (one message = one
#                  TCP send, as between nodes)
#   off-fifo       newrma with osc_newrma_force_am 1, create window: active
#                  messages over the node-local FIFOs
#   off-pretend    newrma with osc_newrma_fifo_node_ranks 1: each rank a
#                  pretend node, UCX tcp on lo between them, ob1 + btl tcp
# Ratios: notify/flag, notify/sendrecv (of the cells), and on the memory
# path notify/line: over one cache-line transfer (the run's own line row,
# a release-store / acquire-load ping-pong measured right after its notify
# row; the median over the rounds of each run's notify / line: the load
# moves both alike).
# A run that does not end in 40 s is stopped ("exit 124" in its output):
# its remaining rows are "-".
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
top=$bench_top
rounds=${ROUNDS:-3}
rt=${RT:-200}
run_timeout=40    # a run takes < 10 s; one whose target never sees a flag hangs (osc/ucx's flag row)
out=$top/build/bench/notify_latency
prefix=$top/build/install
BENCH_CFLAGS="-I$prefix/include -L$prefix/lib -Wl,-rpath,$prefix/lib -lmpix_newrma"
bench_prepare notify_latency
rm -rf "$out"
mkdir -p "$out"

tcp_lo="-x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
all_configs="on-newrma on-newrma-c on-sm on-rdma on-ucx off-remote off-fifo off-pretend"
configs=${CONFIGS:-$all_configs}
flavor_of() { case $1 in on-newrma-c|off-fifo) echo create ;; *) echo allocate ;; esac; }
args_of() {
    case $1 in
        on-newrma|on-newrma-c) bench_osc_args newrma ;;
        on-sm) bench_osc_args sm ;;
        on-rdma) bench_osc_args rdma ;;
        on-ucx) echo "$(bench_osc_args ucx) --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any" ;;
        off-remote) echo "--mca osc newrma --mca osc_newrma_force_remote 1 $tcp_lo" ;;
        off-fifo) echo "--mca osc newrma --mca osc_newrma_force_am 1" ;;
        off-pretend) echo "--mca osc newrma --mca osc_newrma_fifo_node_ranks 1 $tcp_lo" ;;
    esac
}

for r in $(seq 1 "$rounds"); do
    for cfg in $configs; do
        # shellcheck disable=SC2046  # the argument list is meant to split
        timeout "$run_timeout" mpirun --oversubscribe --bind-to core -np 2 $(args_of "$cfg") \
            "$top/bench/bin/notify_latency" "$(flavor_of "$cfg")" "$rt" > "$out/$cfg.r$r" 2> "$out/$cfg.r$r.err" ||
            echo "exit $?" >> "$out/$cfg.r$r"
    done
done

# median over the rounds of a row's value (nothing if no round has it)
cell() { cat "$out/$1".r[0-9]* 2>/dev/null | awk -v row="$2" '$1 == "row" && $2 == row && $4 ~ /^[0-9.]+$/ { print $4 }' | bench_median; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'; }
# median over the rounds of each run's notify / its own line row
per_line() {
    for r in $(seq 1 "$rounds"); do
        awk '$1 == "row" && $4 ~ /^[0-9.]+$/ { v[$2] = $4 } END { if (v["line"] > 0) print v["notify"] / v["line"] }' \
            "$out/$1.r$r" 2>/dev/null
    done | bench_median
}

echo "== one-way latency of 8 bytes until the target sees it (us), 2 ranks; medians of $rounds interleaved runs"
printf '%-13s %-9s %9s %9s %9s %9s %12s %16s %12s\n' config path notify flag sendrecv line notify/flag notify/sendrecv notify/line
for cfg in $configs; do
    path=$(cat "$out/$cfg".r[0-9]* 2>/dev/null | awk '$1 == "path" { print $2 }' | sort -u | paste -sd/ -)
    n=$(cell "$cfg" notify); f=$(cell "$cfg" flag); s=$(cell "$cfg" sendrecv); line=$(cell "$cfg" line)
    l=$(per_line "$cfg" | awk '{ printf "%.2f", $1 }')
    printf '%-13s %-9s %9s %9s %9s %9s %12s %16s %12s\n' "$cfg" "${path:--}" "${n:--}" "${f:--}" "${s:--}" "${line:--}" \
        "$(ratio "$n" "$f")" "$(ratio "$n" "$s")" "${l:--}"
done
echo "(line: one cache-line transfer each way, memory path only; notify/line: median over the rounds of"
echo " each run's notify / its own line)"
bad=$(grep -l 'error\|exit\|window_failed' "$out"/*.r[0-9]* 2>/dev/null | xargs -r -n1 basename | paste -sd' ' - || true)
[ -z "$bad" ] || echo "note: runs with errors or that failed: $bad (see $out/*.err)"
echo "raw output: $out/CONFIG.rN"
