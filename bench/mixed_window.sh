#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# A window spanning nodes (issue 34, point 5): 8-byte RMA latency from rank 0
# to its peer on the same node and to a peer on the other node, in one
# MPI_Win_allocate window of 2 test nodes x 2 ranks (contrib/test-nodes.sh,
# root; UCX and Open MPI over TCP on the nodes' bridge), for newrma, osc/pt2pt
# and osc/ucx; and the same node-local rows in a one-node window of 4 ranks
# (newrma), the reference for the node route; and the whole window's fence,
# lock_all + unlock_all (empty, and with a put to every peer) beside
# MPI_Barrier, with the one-node window's rows as floors.  A benchmark, not a test.
#   bench/mixed_window.sh             ROUNDS=N (default 3): the columns run
#                                     N times each, interleaved; a cell is
#                                     the median over the rounds
# Both layouts have 4 ranks on this machine's cores and yield when idle, so
# the node-local rows compare like with like; the remote rows compare with
# the MPI ping-pong on the same path measured in the same run (newrma's).
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
top=$bench_top
rounds=${ROUNDS:-3}
bench_prepare mixed_window
nodes="$top/contrib/test-nodes.sh"
out=$(mktemp -d)
brought_up=0
cleanup() { rm -rf "$out"; [ $brought_up = 0 ] || "$nodes" down > /dev/null 2>&1 || true; }
trap cleanup EXIT
if ! "$nodes" status > /dev/null 2>&1 || [ "$("$nodes" status | wc -l)" -lt 2 ]; then
    "$nodes" up 2 > "$out/nodes.log" 2>&1 || { cat "$out/nodes.log"; exit 1; }
    brought_up=1
fi

comps="newrma pt2pt ucx"
run_nodes() { # component -> benchmark output
    # shellcheck disable=SC2046  # the argument list is meant to split
    timeout 300 "$nodes" mpirun --per-node 2 -np 4 $(bench_osc_args "$1") "$top/bench/bin/mixed_window" 2> "$out/err"
}
run_one_node() {
    timeout 300 mpirun --oversubscribe --bind-to none -np 4 --mca mpi_yield_when_idle 1 --mca osc newrma \
        "$top/bench/bin/mixed_window" 2> "$out/err"
}
raw=$out/raw
: > "$raw"
for ((round = 1; round <= rounds; ++round)); do
    run_one_node | awk '$2 == "local" || $2 == "all" { print "one-node", $1, $3 }' >> "$raw" || echo "one-node run failed (round $round)" >&2
    for c in $comps; do
        run_nodes "$c" | awk -v c="$c" '{ print $2, $1, c, $3 }' >> "$raw" || echo "$c run failed (round $round)" >&2
    done
done
# floors: node-local rows of the one-node window; remote rows: newrma's ping-pong to the remote peer
for row in $(awk '$1 == "one-node" { print $2 }' "$raw" | sort -u); do
    echo "$row $(awk -v r="$row" '$1 == "one-node" && $2 == r { print $3 }' "$raw" | bench_median)"
done > "$out/floors.local"
pp=$(awk '$1 == "remote" && $2 == "pingpong" && $3 == "newrma" { print $4 }' "$raw" | bench_median)
awk -v pp="$pp" '$1 == "remote" && !seen[$2]++ && pp != "" { print $2, pp }' "$raw" > "$out/floors.remote"
echo "2 nodes x 2 ranks, MPI_Win_allocate, 8 B, microseconds (median of $rounds runs, each the median of 9 batches)"
echo
bench_table "$raw" local lo "to the peer on the node" "$comps" "$out/floors.local"
echo "  (floor: the same row in a one-node window of 4 ranks, newrma; issue 34 asks newrma/floor <= 1.2)"
echo
bench_table "$raw" remote lo "to a peer on the other node" "$comps" "$out/floors.remote"
echo "  (floor: newrma's MPI ping-pong to that peer in the same run; issue 34 asks newrma/floor <= 1.2)"
echo
bench_table "$raw" all lo "the whole window" "$comps" "$out/floors.local"
echo "  (floor: the same row in a one-node window of 4 ranks, newrma)"
