#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# MPI_Win_allocate_shared on a communicator that spans nodes is declined
# with newrma's reason, and MPI_COMM_TYPE_SHARED groups the ranks of one
# node (tests/shared_spans_nodes_helper.c checks both against the processor
# names).  Meaningful in tests/run.sh's node modes (real nodes: namespaces
# of contrib/test-nodes.sh); on one node it checks the window is served.
# The reason is read from newrma's osc_base_verbose line on every rank, not
# from the help message alone (Open MPI 4.1's mpirun now and then loses a
# help message; tests/shm_full.sh).
#   tests/shared_spans_nodes.sh NP MPIRUN_ARGS...   (run by tests/run.sh)
# newrma-test: only-newrma
set -u
np=$1; shift
bin=${NEWRMA_TEST_BINDIR:-$(dirname "$0")/bin}/shared_spans_nodes_helper   # tests/run.sh says where
errors=0
reason='MPI_Win_allocate_shared needs every process on one node'
out=$(timeout -k 5 120 mpirun --oversubscribe -np "$np" "$@" --mca osc_base_verbose 40 "$bin" 2>&1)
rc=$?
echo "$out"
if [ "$rc" -ne 0 ] || ! grep -q 'shared_spans_nodes_helper: No Errors' <<< "$out"; then
    echo "shared_spans_nodes: the helper failed (exit $rc)"; errors=$((errors + 1))
fi
layout=$(sed -n 's/^nodes: \([0-9]*\), ranks per node: .*/\1/p' <<< "$out")
if [ -z "$layout" ]; then
    echo "shared_spans_nodes: the helper did not report the layout"; errors=$((errors + 1))
elif [ "$layout" -gt 1 ]; then
    # every rank declined the window spanning nodes, saying why
    n=$(grep -c "declining a window .*$reason" <<< "$out" || true)
    if [ "$n" -lt "$np" ]; then
        echo "shared_spans_nodes: $n of $np ranks said \"$reason\""; errors=$((errors + 1))
    fi
elif grep -q "$reason" <<< "$out"; then
    echo "shared_spans_nodes: a window on one node was declined as spanning nodes"; errors=$((errors + 1))
fi
[ "$errors" -eq 0 ] && echo "shared_spans_nodes: No Errors"
exit "$errors"
