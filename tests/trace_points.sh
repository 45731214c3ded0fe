#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# newrma traces through Open MPI's osc framework stream, like osc/rdma:
# with --mca osc_base_verbose 100 every rank prints its windows' creation,
# every synchronization (with the epoch states before and after) and every
# operation; at the default verbosity it prints nothing.
#   tests/trace_points.sh NP MPIRUN_ARGS...   (run by tests/run.sh)
# newrma-test: np>=2 only-newrma
set -u
np=$1; shift
bin=${NEWRMA_TEST_BINDIR:-$(dirname "$0")/bin}/trace_points_helper   # tests/run.sh says where
errors=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# one file per rank, so that lines of ranks cannot mix: each rank's own
# stdout and stderr (where the osc framework's stream goes) redirected by a
# wrapper (mpirun --output-filename would do on 4.1; Open MPI 5.0.7's
# writes nothing here); the rank from Open MPI's launcher or PMIx
timeout -k 5 120 mpirun --oversubscribe -np "$np" "$@" --mca osc_base_verbose 100 \
    bash -c 'r=${OMPI_COMM_WORLD_RANK:-$PMIX_RANK}; exec "$@" > "$0/rank.$r.out" 2> "$0/rank.$r.err"' "$dir" \
    "$bin" > "$dir/mpirun.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || ! cat "$dir"/rank.*.out | grep -q 'No Errors'; then
    echo "the traced run failed (exit $rc):"; tail -20 "$dir/mpirun.out"; errors=$((errors + 1))
fi
# each trace every rank must print, for both windows
for ((r = 0; r < np; ++r)); do
    log=$dir/rank.$r.err
    n=$(grep -c "osc/newrma: window of $np ranks" "$log" || true)
    [ "$n" -eq 2 ] || { echo "rank $r: expected 2 creation traces, saw $n"; errors=$((errors + 1)); }
    for pattern in 'fence: .* -> FENCE_GRANTED' 'put: window .* -> ' 'accumulate: window .* -> ' \
                   'get: window .* -> ' 'lock: .* NONE -> PER_TARGET' 'unlock: .* PER_TARGET -> NONE' \
                   'lock_all.* NONE -> LOCK_ALL' 'unlock_all: .* -> NONE' 'post: ' 'start[ :(]' \
                   'complete: .* -> NONE' 'wait: '; do
        case "$pattern" in post*|start*|complete*|wait*) [ "$r" -lt 2 ] || continue ;; esac
        n=$(grep "osc/newrma: " "$log" | grep -c "rank $r[ ,]" || true)
        m=$(grep "osc/newrma: " "$log" | grep "rank $r[ ,]" | grep -c -- "$pattern" || true)
        [ "$m" -ge 2 ] || { echo "rank $r: expected '$pattern' for both windows, saw $m (of $n traces)"; errors=$((errors + 1)); }
    done
done
quiet=$(timeout -k 5 120 mpirun --oversubscribe -np "$np" "$@" "$bin" 2>&1)
if grep -q 'osc/newrma: ' <<< "$quiet"; then
    echo "traces at the default verbosity:"; grep 'osc/newrma: ' <<< "$quiet" | head -5; errors=$((errors + 1))
fi
[ "$errors" -eq 0 ] && echo "trace_points: No Errors"
exit "$errors"
