#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# The long soak: tests/soak_ops.c with millions of operations over thousands
# of windows, in several modes and process counts, one run at a time.
#
#   contrib/soak.sh                         modes default remote fifo minimum, np 2 and 4,
#                                           3,000,000 operations per rank and 3000 windows per run
#   contrib/soak.sh --modes "remote" --np 4 --ops 5000000 --windows 4000
#
# Each run must print "No Errors" (values checked, VmRSS growth after the
# warm-up within the test's slack), and afterwards /dev/shm must hold no
# osc_newrma file whose creator is gone (files of live processes belong to
# other jobs on a shared machine and are listed, not counted).  One line per
# run: resident memory after the warm-up and at the end (min..max over the
# ranks), growth per window and per operation, the /dev/shm state.  Logs are
# in build/soak-logs/.  The last line is "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
modes="default remote fifo minimum"
nps="2 4"
ops=3000000
windows=3000
while [ $# -gt 0 ]; do
    case "$1" in
        --modes) modes=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --ops) ops=$2; shift 2 ;;
        --windows) windows=$2; shift 2 ;;
        -h|--help) sed -n '10,23p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
log=$top/build/soak-logs
mkdir -p "$log"

# build the component and compile the test as tests/run.sh does (not through
# run.sh: its final /dev/shm check counts other jobs' live files too)
mkdir -p "$top/tests/bin"
{ flock "$top/build/.build.lock" "$top/contrib/build.sh" "$top/build/install" &&
  mpicc -Wall -Wextra -O2 -g -o "$top/tests/bin/soak_ops" "$top/tests/soak_ops.c"; } > "$log/build.log" 2>&1 || {
    tail -20 "$log/build.log"; echo "build failed (see $log/build.log)"; exit 1; }

. "$top/contrib/newrma-modes.sh"
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export NEWRMA_SOAK_OPS=$ops NEWRMA_SOAK_WINDOWS=$windows NEWRMA_TEST_VERBOSE=1

# osc_newrma files in /dev/shm: "stale" (creator gone) and "other" (a live
# creator: another job)
shm_state() {
    local stale=0 other=0 f pid
    for f in /dev/shm/osc_newrma*; do
        [ -e "$f" ] || continue
        pid=$(basename "$f" | awk -F. '{print $(NF-1)}')
        if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then other=$((other + 1)); else
            stale=$((stale + 1)); echo "    left: $f" >&2; fi
    done
    echo "$stale $other"
}

printf '%-8s %-3s %-8s %-10s %7s  %-19s %-19s %10s %9s  %s\n' mode np windows ops/rank secs \
    "VmRSS warm (kB)" "VmRSS end (kB)" "B/window" "B/op" "/dev/shm"
passed=0; failed=0
for mode in $modes; do
    newrma_one_node_mode_args "$mode" > /dev/null || exit 2
    for n in $nps; do
        out=$log/soak_ops.np$n.$mode.log
        read -r stale_before _ < <(shm_state 2> /dev/null)
        start=$(date +%s.%N)
        # shellcheck disable=SC2046
        timeout -k 5 3600 mpirun --oversubscribe -np "$n" --mca osc newrma $(newrma_one_node_mode_args "$mode") \
            "$top/tests/bin/soak_ops" > "$out" 2>&1
        rc=$?
        secs=$(printf '%.0f' "$(echo "$(date +%s.%N) - $start" | bc)")
        read -r stale other < <(shm_state)
        # "[rank R] soak: W windows, E epochs per sync, O operations; VmRSS A kB after .. windows,
        #  B kB at the end (+G kB over MW windows, MO operations)"
        stats=$(sed -n 's/.*soak: \([0-9]*\) windows, [0-9]* epochs per sync, \([0-9]*\) operations; VmRSS \([0-9]*\) kB after [0-9]* windows, \([0-9]*\) kB at the end (\([+-][0-9]*\) kB over \([0-9]*\) windows, \([0-9]*\) operations).*/\1 \2 \3 \4 \5 \6 \7/p' "$out" |
            awk 'NR == 1 { w = $1; o = $2; wmin = wmax = $3; emin = emax = $4; g = $5; mw = $6; mo = $7 }
                 { if ($3 < wmin) wmin = $3; if ($3 > wmax) wmax = $3; if ($4 < emin) emin = $4; if ($4 > emax) emax = $4;
                   if ($5 > g) g = $5 }
                 END { if (NR == 0) print "- - - - - -";
                       else printf "%d %d %d..%d %d..%d %.0f %.4f\n", w, o, wmin, wmax, emin, emax,
                                   mw ? g * 1024 / mw : 0, mo ? g * 1024 / mo : 0 }')
        read -r w o warm end per_w per_op <<< "$stats"
        verdict=PASS
        if [ $rc -ne 0 ] || ! grep -q 'No Errors' "$out" || [ "$stale" -gt "$stale_before" ]; then
            verdict=FAIL
        fi
        printf '%-8s %-3s %-8s %-10s %7s  %-19s %-19s %10s %9s  %s\n' "$mode" "$n" "$w" "$o" "$secs" "$warm" "$end" \
            "$per_w" "$per_op" "$verdict: $stale left by us, $other of live jobs"
        if [ $verdict = PASS ]; then passed=$((passed + 1)); else
            failed=$((failed + 1)); [ $rc -eq 124 ] && echo "    timed out"; sed 's/^/    | /' "$out" | grep -v 'soak: ' | head -15
        fi
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
