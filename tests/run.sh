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
#   tests/run.sh                      all tests, 1-4 ranks, --mca osc newrma,
#                                     in five modes (below; one rank only in
#                                     "default" and "remote-minimum")
#   tests/run.sh --osc rdma           the same tests against another component
#                                     (checks the tests themselves)
#   tests/run.sh --np "2 4" lock_*    some tests, some process counts
#   tests/run.sh --np 16              any count (oversubscribed as needed)
#   tests/run.sh --mode minimum       one mode only (repeatable)
#   tests/run.sh --all-modes          all seven modes: the full matrix
#
# Modes (newrma only; contrib/newrma-modes.sh defines them; five by default:
# all but fifo, the same code as fifo-minimum with larger FIFOs, and
# remote-sm, which CI runs at 3 ranks on its own): "default" (peers on one
# node: the direct and usermem paths), "minimum" (every pool, slot array,
# queue, ring, stripe count and cache at its minimum MCA value: slower, must
# never deadlock), "remote" (osc_newrma_force_remote: every peer remote, the
# active-message path over UCX tcp on loopback), "remote-minimum" (both),
# "remote-sm" (every peer remote, over UCX's shared-memory transports:
# allocate windows take the native route, UCX RMA and atomics), "fifo"
# (osc_newrma_force_am: create/dynamic windows take the active-message path
# over the node-local FIFOs) and "fifo-minimum" (fifo and minimum: FIFOs of 2
# cells).  The node modes "nodes2x2" and "nodes2x1" (root; not in the default
# list) run across 2 namespaced nodes of this machine (contrib/test-nodes.sh,
# brought up here and removed at the end unless they were up before), ranks
# placed by node, at a fixed count: 4 and 2 ranks, whatever --np says.
# Without --np, a single process runs only in "default" (the direct path to
# itself) and "remote-minimum" (the active-message path's loopback carrier,
# which every remote and fifo mode takes alone, with every pool at its
# minimum): with one rank the other modes run one of these two codes again.
# Extra --mca NAME VALUE pairs apply to every run.
#
# A test is tests/<name>.c, or tests/<name>.sh: a script run as
# "<name>.sh NP MPIRUN_ARGS..." that starts mpirun itself (for tests of how a
# job ends, e.g. a killed rank); its MPI programs are tests/*.c marked
# "newrma-test: helper" (compiled, never run alone).  A line
# "newrma-test: np>=2" in a test sets its minimum process count (every
# test holds at any count from its minimum up, so --np "8" or "16" runs it
# there too); "np<=N" states a maximum, which the test's header explains, and
# "np=1,2" an exact list (in a node mode a test its counts exclude is skipped,
# and counted as skipped); "one-node" marks a test that needs every rank on
# one node by design (its header says why): skipped in the node modes, and
# "per-node>=N" one that needs N ranks on each node there (a node segment to
# test): skipped in node modes with fewer;
# "mca=NAME:VALUE[,...]" adds MCA parameters to its runs;
# "links-component" compiles it against the component's own
# headers and library; "links-mpix" against libmpix_newrma (notified RMA,
# installed beside the component); "newrma-test: only-newrma" marks a test of newrma-specific
# behaviour (error classes for work not done yet, windows other components
# refuse), which is skipped, and counted as skipped, with another component;
# "newrma-test: named-only" a test that runs only when named on the command
# line (its header says why: a known bug it still finds), skipped and
# counted as skipped in a run of every test.
# A run passes when mpirun exits 0 and the output has "No Errors".
# The last line is "N passed, M failed, K skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
osc=newrma
nps="1 2 3 4"
np_given=no
timeout_s=${NEWRMA_TEST_TIMEOUT:-180}
extra_mca=()
selected=()
modes=()
. "$top/contrib/newrma-modes.sh"
while [ $# -gt 0 ]; do
    case "$1" in
        --osc) osc=$2; shift 2 ;;
        --np) nps=$2; np_given=yes; shift 2 ;;
        --mca) extra_mca+=(--mca "$2" "$3"); shift 3 ;;
        --mode) modes+=("$2"); shift 2 ;;
        --all-modes) read -r -a all_modes <<< "$newrma_modes"; modes+=("${all_modes[@]}"); shift ;;
        -h|--help) awk 'NR > 9 && /^#/ { sub(/^# ?/, ""); print; next } NR > 9 { exit }' "$0"; exit 0 ;;
        *) selected+=("$1"); shift ;;
    esac
done

if [ ${#modes[@]} -eq 0 ]; then
    # shellcheck disable=SC2206
    [ "$osc" = newrma ] && modes=($newrma_default_modes) || modes=(default)
fi
for m in "${modes[@]}"; do newrma_mode_args "$m" > /dev/null || exit 2; done
mode_args() { newrma_mode_args "$1"; }
# the process counts of a mode: a node mode's fixed count, else --np's
mode_nps() {
    local layout
    if layout=$(newrma_mode_nodes "$1"); then
        set -- $layout; echo $(($1 * $2))
    elif [ $np_given = no ] && [ "$osc" = newrma ] && [ "$1" != default ] && [ "$1" != remote-minimum ]; then
        echo "$nps" | tr ' ' '\n' | grep -vx 1 | tr '\n' ' '
    else
        echo "$nps"
    fi
}

# NEWRMA_BUILD_DIR: build, install and compile the tests there instead of
# build/ and tests/bin (one per Open MPI: e.g. build5 inside
# contrib/ompi5-root.sh, docs/ompi5.md)
build=${NEWRMA_BUILD_DIR:-$top/build}
prefix=$build/install
bindir=$top/tests/bin
[ -n "${NEWRMA_BUILD_DIR:-}" ] && bindir=$build/tests-bin
export NEWRMA_TEST_BINDIR=$bindir   # where the tests/*.sh find their helpers
log=$build/test-logs
mkdir -p "$build" "$bindir" "$log"

# ---- build and install the component under build/install ----------------
if [ "$osc" = newrma ] || [ ! -e "$prefix/lib/openmpi/mca_osc_newrma.so" ]; then
    # serialized: several runs of this script may share one build tree
    NEWRMA_OBJ_DIR=$build/obj flock "$build/.build.lock" "$top/contrib/build.sh" "$prefix" > "$log/build.log" 2>&1 || {
        tail -40 "$log/build.log"; echo "build failed (see $log/build.log)"; echo "0 passed, 1 failed"; exit 1; }
fi

ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$prefix/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# keep the test traffic on this machine
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

# ---- test nodes for the node modes ---------------------------------------
nodes_needed=0
for m in "${modes[@]}"; do
    layout=$(newrma_mode_nodes "$m") || continue
    set -- $layout; [ "$1" -gt $nodes_needed ] && nodes_needed=$1
done
nodes_made=no
shm_dirs=/dev/shm
if [ $nodes_needed -gt 0 ]; then
    if ! "$top/contrib/test-nodes.sh" status > /dev/null 2>&1 \
       || [ "$("$top/contrib/test-nodes.sh" status | wc -l)" -lt $nodes_needed ]; then
        "$top/contrib/test-nodes.sh" up $nodes_needed > "$log/test-nodes.log" 2>&1 || {
            cat "$log/test-nodes.log"; echo "could not bring the test nodes up"; echo "0 passed, 1 failed"; exit 1; }
        nodes_made=yes
        trap '"$top/contrib/test-nodes.sh" down' EXIT
    fi
    # each node's /dev/shm, for the check of leftover segment files
    shm_dirs="/dev/shm $("$top/contrib/test-nodes.sh" shm-dirs | tr '\n' ' ')"
    # where a test mounts a file system its ranks must see (shm_full.sh)
    export NEWRMA_MOUNT_DIR=/run/newrma-nodes/shared
fi
export NEWRMA_SHM_DIRS=$shm_dirs

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
    grep -q 'newrma-test:.*links-mpix' "$src" && deps+=("$top"/mpix_newrma.[ch] "$prefix/lib/libmpix_newrma.so")
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
            # Open MPI's include directories as configure found them
            read -ra cppflags <<< "$(sed -n 's/^osc_newrma_CPPFLAGS = //p' "$build/obj/Makefile")"
            for ((i = 0 ; i + 1 < ${#cppflags[@]} ; ++i)); do
                [ "${cppflags[i]}" = -isystem ] && internals+=(-isystem "${cppflags[i + 1]}")
            done
        fi
        if grep -q 'newrma-test:.*links-mpix' "$src"; then
            internals+=(-I"$prefix/include" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lmpix_newrma)
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
    # the counts of $1 the test's metadata allows
    allowed_nps() {
        local n out=""
        for n in $1; do
            [ -n "$meta_np" ] && case ",$meta_np," in *",$n,"*) ;; *) continue ;; esac
            [ -n "$np_min" ] && [ "$n" -lt "$np_min" ] && continue
            [ -n "$np_max" ] && [ "$n" -gt "$np_max" ] && continue
            out="$out $n"
        done
        echo "$out"
    }
    if [ "$osc" != newrma ] && grep -q 'newrma-test:.*only-newrma' "$src"; then
        for n in $(allowed_nps "$nps"); do printf 'SKIP %-28s np=%s (newrma-specific)\n' "$name" "$n"; skipped=$((skipped + 1)); done
        continue
    fi
    if [ ${#selected[@]} -eq 0 ] && grep -q 'newrma-test:.*named-only' "$src"; then
        for n in $(allowed_nps "$nps"); do printf 'SKIP %-28s np=%s (runs only when named: see its header)\n' "$name" "$n"; skipped=$((skipped + 1)); done
        continue
    fi
    one_node=no
    grep -q 'newrma-test:.*one-node' "$src" && one_node=yes
    per_node_min=$(sed -n 's/.*newrma-test:.*per-node>=\([0-9]*\).*/\1/p' "$src" | head -1)
    # per-test MCA parameters: "newrma-test: ... mca=NAME:VALUE[,NAME:VALUE]"
    test_mca=()
    for kv in $(sed -n 's/.*newrma-test:.*mca=\([^ ]*\).*/\1/p' "$src" | head -1 | tr ',' ' '); do
        test_mca+=(--mca "${kv%%:*}" "${kv#*:}")
    done
    for mode in "${modes[@]}"; do
    test_nps=$(allowed_nps "$(mode_nps "$mode")")
    path=$PATH
    if layout=$(newrma_mode_nodes "$mode"); then
        set -- $layout
        n=$(($1 * $2))
        if [ $one_node = yes ]; then
            printf 'SKIP %-24s %-14s np=%s  (needs every rank on one node: see its header)\n' "$name" "$mode" "$n"
            skipped=$((skipped + 1)); continue
        fi
        if [ -n "$per_node_min" ] && [ "$2" -lt "$per_node_min" ]; then
            printf 'SKIP %-24s %-14s np=%s  (needs %s ranks on a node: see its header)\n' "$name" "$mode" "$n" "$per_node_min"
            skipped=$((skipped + 1)); continue
        fi
        if [ -z "$test_nps" ]; then
            printf 'SKIP %-24s %-14s np=%s  (the test does not run at %s ranks)\n' "$name" "$mode" "$n" "$n"
            skipped=$((skipped + 1)); continue
        fi
        # "mpirun" is contrib/test-nodes.sh's, $2 slots per node
        path=/run/newrma-nodes/bin:$PATH
        export NEWRMA_NODES_PER_NODE=$2
    fi
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
            PATH=$path timeout -k 5 "$timeout_s" "${runner[@]}" "$n" --mca osc "$osc" $(mode_args "$mode") \
                "${extra_mca[@]}" "${run_mca[@]}" > "$out" 2>&1
        else
            PATH=$path timeout -k 5 "$timeout_s" mpirun --oversubscribe -np "$n" --mca osc "$osc" $(mode_args "$mode") \
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
for dir in $shm_dirs; do
    leftover=$(ls "$dir" 2>/dev/null | grep -c '^osc_newrma' || true)
    if [ "$leftover" -ne 0 ]; then
        echo "FAIL shared-memory files left in $dir: $leftover"; failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
