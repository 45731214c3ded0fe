#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Run a subset of the test programs under valgrind memcheck against newrma
# as tests/run.sh builds it (build/install: -O2 -g, no instrumentation), at
# 2 processes, every rank under valgrind.  A run fails if the test fails or
# if memcheck reports, with a newrma frame (mca_osc_newrma.so, osc_newrma_*,
# ompi_osc_newrma_*) in the stack, an invalid read/write/free, a use of an
# uninitialised value (jump, value, syscall parameter) or a definite leak.
# Reports without a newrma frame are Open MPI's, PMIx's and UCX's own:
# counted, not failed; the known ones are in contrib/valgrind.supp (a reason
# per entry).  Logs: build/valgrind/logs/.  See docs/checkers.md.
#   contrib/valgrind-tests.sh           the subset (about 4 minutes)
#   contrib/valgrind-tests.sh --quick   4 runs, for CI (about a minute)
#   contrib/valgrind-tests.sh --all MODE   every test program in MODE (5 to 13
#                                       minutes; not win_free_leaks, whose
#                                       resident-memory check means nothing
#                                       under valgrind)
#   contrib/valgrind-tests.sh "NAME MODE" ...   these runs
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/checkers-lib.sh"
np=2
if [ "${1:-}" = --quick ]; then
    runs=("put_get_fence default" "lock_unlock remote" "acc_datatypes fifo" "dynamic_attach default")
elif [ "${1:-}" = --all ] && [ $# -eq 2 ]; then
    runs=()
    for src in "$top"/tests/*.c; do
        name=$(basename "$src" .c)
        [ "$name" = win_free_leaks ] || ! checker_runnable "$name" || runs+=("$name $2")
    done
elif [ $# -gt 0 ]; then
    runs=("$@")
else
    runs=("put_get_fence default" "lock_unlock default" "acc_datatypes default" "pscw default"
          "dynamic_attach default" "random_programs default" "request_ops default"
          "put_get_fence remote" "lock_unlock remote" "acc_datatypes remote" "random_programs remote"
          "put_get_fence fifo" "lock_unlock fifo" "acc_datatypes fifo" "dynamic_attach fifo" "random_programs fifo")
fi
names=()
for r in "${runs[@]}"; do
    read -r name mode <<< "$r"
    if [ ! -f "$top/tests/$name.c" ] || ! checker_runnable "$name"; then echo "no test program $name"; exit 2; fi
    newrma_one_node_mode_args "$mode" > /dev/null || exit 2
    names+=("$name")
done
# tests/run.sh builds and installs build/install, then compiles the tests
checker_compile_tests "${names[@]}" || { echo "build or test compilation failed"; exit 1; }
checker_env "$top/build"
logs=$top/build/valgrind/logs
mkdir -p "$logs"
# --keep-debuginfo: Open MPI unloads its components (newrma too) in
# MPI_Finalize, before the leak check; without it their frames are "???".
valgrind=(valgrind --tool=memcheck --keep-debuginfo=yes --num-callers=40 --leak-check=full
          --show-leak-kinds=definite --errors-for-leak-kinds=definite
          --suppressions="$top/contrib/valgrind.supp")

# count_errors FILE...: the numbers of memcheck errors with a newrma frame
# and without one; with show=1 the former are printed too.
count_errors() {
    awk -v show="${show:-0}" '
        function flush() {
            if (inblk && msg ~ /^(Invalid (read|write|free)|Mismatched free|Conditional jump|Use of uninitialised|Syscall param|Source and destination overlap|[0-9,]+ (\([^)]*\) )?bytes in [0-9,]+ blocks are definitely lost)/) {
                if (ours) { n++; if (show) print "    |" stack } else f++
            }
            inblk = 0
        }
        { sub(/^==[0-9]+== ?/, "") }
        /^ *$/ { flush(); next }
        /^Thread [0-9]+:$/ { next }
        { if (!inblk) { msg = $0; inblk = 1; ours = 0; stack = "" }
          stack = stack "\n    |   " $0
          if ($0 ~ /mca_osc_newrma|osc_newrma_|ompi_osc_newrma_/) ours = 1 }
        END { flush(); if (!show) printf "%d %d\n", n, f }' "$@" /dev/null
}

passed=0; failed=0; ours_total=0; foreign_total=0
start_all=$(date +%s)
for r in "${runs[@]}"; do
    read -r name mode <<< "$r"
    checker_runs_at "$name" "$np" || { echo "SKIP $name (not at np=$np)"; continue; }
    base=$logs/$name.np$np.$mode
    rm -f "$base".log "$base".vg.*
    mapfile -t args < <(checker_mpirun_args "$name" "$mode")
    start=$(date +%s)
    # NEWRMA_SEEDS: random_programs runs 3 seeds, not 12 (valgrind is ~30x slower)
    timeout -k 5 900 mpirun --oversubscribe -np "$np" -x NEWRMA_SEEDS="1 2 3" --mca osc newrma "${args[@]}" \
        "${valgrind[@]}" --log-file="$base.vg.%p" "$top/tests/bin/$name" > "$base.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    vglogs=("$base".vg.*)
    [ -e "${vglogs[0]}" ] || vglogs=()
    read -r ours foreign < <(count_errors "${vglogs[@]}")
    ours_total=$((ours_total + ours)); foreign_total=$((foreign_total + foreign))
    if [ $rc -eq 0 ] && grep -q 'No Errors' "$base.log" && [ ${#vglogs[@]} -eq "$np" ] && [ "$ours" -eq 0 ]; then
        printf 'PASS %-18s %-8s np=%s %4ss  (errors outside newrma: %d)\n' "$name" "$mode" "$np" "$secs" "$foreign"
        passed=$((passed + 1))
    else
        printf 'FAIL %-18s %-8s np=%s %4ss  (exit %d, newrma errors: %d; logs: %s.log, %s.vg.*)\n' \
            "$name" "$mode" "$np" "$secs" "$rc" "$ours" "$base" "$base"
        show=1 count_errors "${vglogs[@]}" | head -60
        failed=$((failed + 1))
    fi
done
echo "valgrind: $passed passed, $failed failed, newrma errors $ours_total, errors outside newrma $foreign_total, $(( $(date +%s) - start_all ))s"
[ $failed -eq 0 ]
