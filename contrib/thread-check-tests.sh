#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Run the MPI_THREAD_MULTIPLE and progress-thread tests against newrma built
# with ThreadSanitizer (configure --enable-thread-sanitizer, in build/tsan),
# in the given modes of contrib/newrma-modes.sh (default: default, remote,
# fifo) at the given process counts (default: 2 and 4).  Open MPI, UCX and
# the test programs are not instrumented; libtsan is preloaded so that the
# component, which is, can be loaded, and it still sees every pthread call
# (its interceptors).  A run fails if the test fails or if ThreadSanitizer
# reports anything with a frame in newrma that contrib/tsan.supp does not
# suppress (each entry there says why it is not a bug).  Reports without a
# newrma frame (Open MPI's or UCX's own, seen through the interceptors) are
# counted and listed, not failed.  Logs: build/tsan/logs/.  See
# docs/checkers.md.
#   contrib/thread-check-tests.sh [--mode MODE]... [NP...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/checkers-lib.sh"
tests=(threads_ops am_progress_thread am_progress_thread_fifo passive_busy_target)
modes=()
while [ $# -gt 0 ] && [ "$1" = --mode ]; do modes+=("$2"); shift 2; done
[ ${#modes[@]} -gt 0 ] || modes=(default remote fifo)
for m in "${modes[@]}"; do newrma_one_node_mode_args "$m" > /dev/null || exit 2; done
[ $# -gt 0 ] || set -- 2 4
obj=$top/build/tsan
logs=$obj/logs
checker_build "$obj" --enable-thread-sanitizer || { echo "build failed (see $obj/build.log)"; exit 1; }
checker_compile_tests "${tests[@]}" || { echo "tests do not compile"; exit 1; }
checker_env "$obj"
mkdir -p "$logs"
libtsan=$(gcc -print-file-name=libtsan.so)
# exitcode=0: the test's own status decides; the reports are counted below.
tsan_options="halt_on_error=0 exitcode=0 report_signal_unsafe=0 second_deadlock_stack=1 suppressions=$top/contrib/tsan.supp"

# count_reports FILE...: the numbers of ThreadSanitizer reports (WARNING .. SUMMARY) in
# these per-process logs that have a newrma frame, then those that have none.
count_reports() {
    awk '/^WARNING: ThreadSanitizer/ { inrep = 1; ours = 0 }
         inrep && /mca_osc_newrma\.so|osc_newrma_/ { ours = 1 }
         inrep && /^SUMMARY: ThreadSanitizer/ { inrep = 0; if (ours) n++; else f++ }
         END { printf "%d %d\n", n, f }' "$@" /dev/null
}

total_pass=0; total_fail=0
for mode in "${modes[@]}"; do
for np in "$@"; do
    passed=0; failed=0; ours_total=0; foreign_total=0
    for name in "${tests[@]}"; do
        checker_runs_at "$name" "$np" || continue
        base=$logs/$name.np$np.$mode
        rm -f "$base".log "$base".tsan.*
        mapfile -t args < <(checker_mpirun_args "$name" "$mode")
        # UCX_MEM_EVENTS=no: UCX's memory hooks (ucm) intercept madvise, which
        # glibc calls on a thread's stack as the thread exits, after
        # ThreadSanitizer has dropped the thread's state: the hook's rwlock
        # then crashes inside libtsan.  newrma needs no memory events.
        timeout -k 5 600 mpirun --oversubscribe -np "$np" -x LD_PRELOAD="$libtsan" \
            -x TSAN_OPTIONS="$tsan_options log_path=$base.tsan" -x UCX_MEM_EVENTS=no \
            --mca osc newrma "${args[@]}" "$top/tests/bin/$name" > "$base.log" 2>&1
        rc=$?
        reports=("$base".tsan.*)
        [ -e "${reports[0]}" ] || reports=()
        read -r ours foreign < <(count_reports "${reports[@]}")
        ours_total=$((ours_total + ours)); foreign_total=$((foreign_total + foreign))
        if [ $rc -eq 0 ] && grep -q 'No Errors' "$base.log" && [ "$ours" -eq 0 ]; then
            printf 'PASS %-24s %-8s np=%s  (reports outside newrma: %d)\n' "$name" "$mode" "$np" "$foreign"
            passed=$((passed + 1))
        else
            printf 'FAIL %-24s %-8s np=%s  (exit %d, newrma reports: %d; logs: %s.log, %s.tsan.*)\n' \
                "$name" "$mode" "$np" "$rc" "$ours" "$base" "$base"
            grep -h '^SUMMARY: ThreadSanitizer' "${reports[@]}" /dev/null | sort | uniq -c | sed 's/^/    | /'
            failed=$((failed + 1))
        fi
    done
    echo "mode $mode np=$np: $passed passed, $failed failed, newrma reports $ours_total, reports outside newrma $foreign_total"
    total_pass=$((total_pass + passed)); total_fail=$((total_fail + failed))
done
done
echo "$total_pass passed, $total_fail failed"
[ $total_fail -eq 0 ]
