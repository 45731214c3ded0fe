#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Build osc/newrma and run every test under mpirun.
#
#   tests/run.sh                      all tests, 1-4 ranks, --mca osc newrma
#   tests/run.sh --osc rdma           the same tests against another component
#                                     (checks the tests themselves)
#   tests/run.sh --np "2 4" lock_*    some tests, some process counts
#   tests/run.sh --np 16              any count (oversubscribed as needed)
#   tests/run.sh --mode minimum       one mode only (default: every mode)
#
# Modes (newrma only; all seven by default; contrib/newrma-modes.sh defines
# them): "default" (peers on one node: the direct and usermem paths),
# "minimum" (every pool, slot array, queue, ring, stripe count and cache at
# its minimum MCA value: slower, must never deadlock), "remote"
# (osc_newrma_force_remote: every peer remote, the active-message path over
# UCX tcp on loopback), "remote-minimum" (both), "remote-sm" (every peer
# remote, over UCX's shared-memory transports), "fifo" (osc_newrma_force_am:
# create/dynamic windows take the active-message path over the node-local
# FIFOs) and "fifo-minimum" (fifo and minimum: FIFOs of 2 cells).
# Extra --mca NAME VALUE pairs apply to every run.
#
# A test is tests/<name>.c, or tests/<name>.sh: a script run as
# "<name>.sh NP MPIRUN_ARGS..." that starts mpirun itself (for tests of how a
# job ends, e.g. a killed rank); its MPI programs are tests/*.c marked
# "newrma-test: helper" (compiled, never run alone).  A line
# "newrma-test: np>=2" in a test sets its minimum process count (every
# test holds at any count from its minimum up, so --np "8" or "16" runs it
# there too); "np<=N" states a maximum, which the test's header explains, and
# "np=1,2" an exact list; "mca=NAME:VALUE[,...]" adds MCA parameters to its runs;
# "links-component" compiles it against the component's own
# headers and library; "newrma-test: only-newrma" marks a test of newrma-specific
# behaviour (error classes for work not done yet, windows other components
# refuse), which is skipped, and counted as skipped, with another component.
# A run passes when mpirun exits 0 and the output has "No Errors".
# The last line is "N passed, M failed, K skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
osc=newrma
nps="1 2 3 4"
timeout_s=${NEWRMA_TEST_TIMEOUT:-180}
extra_mca=()
selected=()
modes=()
. "$top/contrib/newrma-modes.sh"
while [ $# -gt 0 ]; do
    case "$1" in
        --osc) osc=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --mca) extra_mca+=(--mca "$2" "$3"); shift 3 ;;
        --mode) modes+=("$2"); shift 2 ;;
        -h|--help) sed -n '10,43p' "$0"; exit 0 ;;
        *) selected+=("$1"); shift ;;
    esac
done

if [ ${#modes[@]} -eq 0 ]; then
    # shellcheck disable=SC2206
    [ "$osc" = newrma ] && modes=($newrma_modes) || modes=(default)
fi
for m in "${modes[@]}"; do newrma_mode_args "$m" > /dev/null || exit 2; done
mode_args() { newrma_mode_args "$1"; }

build=$top/build
prefix=$build/install
bindir=$top/tests/bin
log=$build/test-logs
mkdir -p "$build" "$bindir" "$log"

# ---- build and install the component under build/install ----------------
if [ "$osc" = newrma ] || [ ! -e "$prefix/lib/openmpi/mca_osc_newrma.so" ]; then
    # serialized: several runs of this script may share one build tree
    flock "$build/.build.lock" "$top/contrib/build.sh" "$prefix" > "$log/build.log" 2>&1 || {
        tail -40 "$log/build.log"; echo "build failed (see $log/build.log)"; echo "0 passed, 1 failed"; exit 1; }
fi

ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$prefix/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# keep the test traffic on this machine
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# ---- compile the tests -------------------------------------------------
names=()
if [ ${#selected[@]} -eq 0 ]; then
    for src in "$top"/tests/*.c "$top"/tests/*.sh; do
        [ "$src" = "$top/tests/run.sh" ] || names+=("$(basename "$src")")
    done
else
    for pattern in "${selected[@]}"; do
        for src in "$top"/tests/$pattern.c "$top"/tests/$pattern.sh; do
            [ -e "$src" ] && [ "$src" != "$top/tests/run.sh" ] && names+=("$(basename "$src")")
        done
    done
    # a script's helper programs come with it
    for src in "$top"/tests/*.c; do
        grep -q 'newrma-test:.*helper' "$src" && names+=("$(basename "$src")")
    done
fi
passed=0; failed=0; skipped=0
for file in "${names[@]}"; do
    case "$file" in *.sh) continue ;; esac
    name=${file%.c}
    src=$top/tests/$file
    stale=0
    # a test may be another one run with other parameters (#include "x.c"),
    # or one of several sharing a body (#include "x.h")
    deps=("$src" "$top/tests/common.h" $(sed -n 's/^#include "\(.*\.[ch]\)"/\1/p' "$src"))
    # a test of the component's own functions depends on its sources too
    grep -q 'newrma-test:.*links-component' "$src" && deps+=("$top"/osc_newrma*.[ch])
    for dep in "${deps[@]}"; do
        case "$dep" in /*) ;; *) dep=$top/tests/$dep ;; esac
        [ "$bindir/$name" -nt "$dep" ] || stale=1
    done
    if [ $stale -eq 1 ]; then
        internals=()
        if grep -q 'newrma-test:.*links-component' "$src"; then
            # a test of the component's own functions: its headers and library
            internals=(-I"$top" -I"$top/shim" "$prefix/lib/openmpi/mca_osc_newrma.so"
                       -Wl,-rpath,"$prefix/lib/openmpi" -lopen-pal)
            for d in $(mpicc --showme:incdirs); do internals+=(-isystem "$d"); done
        fi
        if ! mpicc -Wall -Wextra -O2 -g -o "$bindir/$name" "$src" "${internals[@]}" -lpthread \
                > "$log/$name.compile.log" 2>&1; then
            cat "$log/$name.compile.log"
            printf 'FAIL %-28s (does not compile)\n' "$name"; failed=$((failed + 1)); continue
        fi
    fi
done

# ---- run ---------------------------------------------------------------
for file in "${names[@]}"; do
    name=${file%.*}
    src=$top/tests/$file
    case "$file" in
        *.sh) runner=(bash "$src") ;;
        *) [ -x "$bindir/$name" ] || continue
           grep -q 'newrma-test:.*helper' "$src" && continue
           runner=() ;;
    esac
    # process counts: "np>=MIN", "np<=MAX" (both may be given) or an exact list "np=A,B"
    meta_np=$(sed -n 's/.*newrma-test:.*np=\([0-9,]*\).*/\1/p' "$src" | head -1)
    np_min=$(sed -n 's/.*newrma-test:.*np>=\([0-9]*\).*/\1/p' "$src" | head -1)
    np_max=$(sed -n 's/.*newrma-test:.*np<=\([0-9]*\).*/\1/p' "$src" | head -1)
    test_nps=""
    for n in $nps; do
        [ -n "$meta_np" ] && case ",$meta_np," in *",$n,"*) ;; *) continue ;; esac
        [ -n "$np_min" ] && [ "$n" -lt "$np_min" ] && continue
        [ -n "$np_max" ] && [ "$n" -gt "$np_max" ] && continue
        test_nps="$test_nps $n"
    done
    if [ "$osc" != newrma ] && grep -q 'newrma-test:.*only-newrma' "$src"; then
        for n in $test_nps; do printf 'SKIP %-28s np=%s (newrma-specific)\n' "$name" "$n"; skipped=$((skipped + 1)); done
        continue
    fi
    # per-test MCA parameters: "newrma-test: ... mca=NAME:VALUE[,NAME:VALUE]"
    test_mca=()
    for kv in $(sed -n 's/.*newrma-test:.*mca=\([^ ]*\).*/\1/p' "$src" | head -1 | tr ',' ' '); do
        test_mca+=(--mca "${kv%%:*}" "${kv#*:}")
    done
    for mode in "${modes[@]}"; do
    # a parameter the mode (or the command line) already sets is not repeated:
    # Open MPI rejects one listed twice
    run_mca=()
    set_by_mode=" $(mode_args "$mode") ${extra_mca[*]} "
    for ((i = 0; i < ${#test_mca[@]}; i += 3)); do
        case "$set_by_mode" in *" ${test_mca[i+1]} "*) continue ;; esac
        run_mca+=("${test_mca[@]:i:3}")
    done
    for n in $test_nps; do
        out=$log/$name.np$n.$osc.$mode.log
        start=$(date +%s.%N)
        # shellcheck disable=SC2046
        if [ ${#runner[@]} -gt 0 ]; then
            timeout -k 5 "$timeout_s" "${runner[@]}" "$n" --mca osc "$osc" $(mode_args "$mode") \
                "${extra_mca[@]}" "${run_mca[@]}" > "$out" 2>&1
        else
            timeout -k 5 "$timeout_s" mpirun --oversubscribe -np "$n" --mca osc "$osc" $(mode_args "$mode") \
                "${extra_mca[@]}" "${run_mca[@]}" "$bindir/$name" > "$out" 2>&1
        fi
        rc=$?
        secs=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
        if [ $rc -eq 0 ] && grep -q 'No Errors' "$out"; then
            printf 'PASS %-24s %-14s np=%s  %5ss\n' "$name" "$mode" "$n" "$secs"; passed=$((passed + 1))
        else
            [ $rc -eq 124 ] && why="timed out after ${timeout_s}s" || why="exit $rc"
            printf 'FAIL %-24s %-14s np=%s  %5ss  (%s; log: %s)\n' "$name" "$mode" "$n" "$secs" "$why" "$out"
            sed 's/^/    | /' "$out" | head -25
            failed=$((failed + 1))
        fi
    done
    done
done
leftover=$(ls /dev/shm 2>/dev/null | grep -c '^osc_newrma' || true)
if [ "$leftover" -ne 0 ]; then
    echo "FAIL shared-memory files left in /dev/shm: $leftover"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
