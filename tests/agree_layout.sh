#!/usr/bin/env bash
#
# Windows whose processes were given different values of what shapes the
# window's segment or protocols: rank 0 runs with one value of an osc_newrma
# MCA variable, the others with another (an MPMD mpirun, -x per app
# context), and the info key no_locks=true on rank 0 only.  The helper
# (tests/agree_layout_helper.c) accumulates in fence, PSCW, lock and
# lock_all epochs on every flavor and checks exact totals: the window must
# agree on one layout (docs/shared-segment.md, docs/tuning.md "Values that
# must match").  The mode's own setting of the varied variable is dropped
# from MPIRUN_ARGS (it would override the per-rank values); its other
# arguments reach every rank, which the helper's report of every rank's
# values checks.
#   tests/agree_layout.sh NP MPIRUN_ARGS...   (run by tests/run.sh)
# newrma-test: np=2,3,4 only-newrma
set -u
np=$1; shift
bin=${NEWRMA_TEST_BINDIR:-$(dirname "$0")/bin}/agree_layout_helper   # tests/run.sh says where
errors=0

# name, rank 0's value, the others' value
cases="lock_qnodes:1:8 accumulate_stripes:1:16 post_ring_slots:1:64 fence_flat_ranks:0:8
       fifo_depth:2:64 fifo_fragment_size:128:4096"

# MPIRUN_ARGS without "--mca osc_newrma_<var> VALUE" for one variable
args_without() {
    local var=$1; shift
    local out=()
    while [ $# -gt 0 ]; do
        if { [ "$1" = --mca ] || [ "$1" = -mca ]; } && [ $# -ge 3 ] && [ "$2" = "osc_newrma_$var" ]; then
            shift 3; continue
        fi
        out+=("$1"); shift
    done
    printf '%s\n' "${out[@]}"
}

# the value the mode gives a variable on every rank (empty: none)
mode_value() {
    local var=$1; shift
    while [ $# -gt 0 ]; do
        if { [ "$1" = --mca ] || [ "$1" = -mca ]; } && [ $# -ge 3 ] && [ "$2" = "osc_newrma_$var" ]; then
            echo "$3"; return
        fi
        shift
    done
}

# what runs the helper: rank 0 with osc_newrma_VAR=V0, the others with
# osc_newrma_VAR=V1 ("${per_rank[@]}" VAR V0 V1 PROGRAM ARGS...; the rank
# from Open MPI's launcher, 4.1's and 5.0's, or else PMIx)
per_rank=(bash -c 'v=$2; [ "${OMPI_COMM_WORLD_RANK:-$PMIX_RANK}" = 0 ] || v=$3; export "OMPI_MCA_osc_newrma_$1=$v"; shift 3; exec "$@"' per_rank)

check_run() {   # label, output, exit status, var, value0, value1
    local label=$1 out=$2 rc=$3 var=$4 v0=$5 v1=$6
    shift 6
    if [ "$rc" -ne 0 ] || ! grep -q 'No Errors' <<< "$out"; then
        echo "$label: failed (exit $rc):"; echo "$out" | grep -v '^values:' | tail -15; errors=$((errors + 1))
    fi
    for r in $(seq 0 $((np - 1))); do
        line=$(grep "^values: rank $r " <<< "$out")
        want=$v1; [ "$r" -eq 0 ] && want=$v0
        if [ -n "$var" ] && ! grep -q " $var=$want\b" <<< "$line"; then
            echo "$label: rank $r runs with the wrong $var: $line"; errors=$((errors + 1))
        fi
        # the mode's arguments reach both app contexts
        for mv in force_am force_remote; do
            m=$(mode_value "$mv" "$@")
            if [ -n "$m" ] && ! grep -q " $mv=$m\b" <<< "$line"; then
                echo "$label: rank $r did not get the mode's $mv=$m: $line"; errors=$((errors + 1))
            fi
        done
    done
}

for c in $cases; do
    IFS=: read -r var v0 v1 <<< "$c"
    mapfile -t rest < <(args_without "$var" "$@")
    # the post rings carry posts only past the post box's origins
    both=(); [ "$var" = post_ring_slots ] && both=(-x OMPI_MCA_osc_newrma_post_box_origins=0)
    out=$(timeout -k 5 120 mpirun --oversubscribe "${rest[@]}" -np "$np" "${both[@]}" \
          "${per_rank[@]}" "$var" "$v0" "$v1" "$bin" 2>&1)
    rc=$?
    echo "$var $v0 (rank 0) / $v1 (others): exit $rc"
    check_run "$var" "$out" "$rc" "$var" "$v0" "$v1" "${rest[@]}"
done
# what chooses creation's collectives: creation fails on every rank, which
# says why in the framework's output (the help message, printed by rank 0
# once, Open MPI 4.1's launcher now and then loses), and the job goes on
for c in force_remote:1:0 fifo_node_ranks:1:0; do
    IFS=: read -r var v0 v1 <<< "$c"
    mapfile -t rest < <(args_without "$var" "$@")
    out=$(timeout -k 5 120 mpirun --oversubscribe "${rest[@]}" --mca osc_base_verbose 20 -np "$np" \
          "${per_rank[@]}" "$var" "$v0" "$v1" "$bin" path_inputs 2>&1)
    rc=$?
    echo "$var $v0 (rank 0) / $v1 (others), creation must fail: exit $rc"
    check_run "$var" "$out" "$rc" "$var" "$v0" "$v1" "${rest[@]}"
    for r in $(seq 0 $((np - 1))); do
        if ! grep -q "rank $r: the window's processes were given different" <<< "$out"; then
            echo "$var: rank $r did not say that the values differ"; errors=$((errors + 1))
        fi
    done
done
out=$(timeout -k 5 120 mpirun --oversubscribe -np "$np" "$@" "$bin" no_locks 2>&1)
rc=$?
echo "no_locks=true on rank 0 only: exit $rc"
check_run no_locks "$out" "$rc" "" "" "" "$@"
[ "$errors" -eq 0 ] && echo "agree_layout: No Errors"
exit $((errors > 0))
