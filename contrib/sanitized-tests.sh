#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Run the test programs against newrma built with AddressSanitizer and
# UndefinedBehaviorSanitizer (configure --enable-sanitizers), in the given
# modes of contrib/newrma-modes.sh (default: minimum and remote-minimum), at
# the given process counts (default 1 and 4).  The test programs
# are not instrumented; the sanitizer runtimes are preloaded so that the
# component, which is, can be loaded.  A run fails on any sanitizer report
# or a failing test.  Resident-memory checks (win_free_leaks, soak_ops) are
# not meaningful under ASan (its quarantine keeps freed memory):
# NEWRMA_TEST_RSS_UNRELIABLE=1 turns them off, everything else is checked.
# Shared parts with the other checkers: contrib/checkers-lib.sh.
#   contrib/sanitized-tests.sh [--mode MODE]... [NP...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/checkers-lib.sh"
modes=()
while [ $# -gt 0 ] && [ "$1" = --mode ]; do modes+=("$2"); shift 2; done
[ ${#modes[@]} -gt 0 ] || modes=(minimum remote-minimum)
for m in "${modes[@]}"; do newrma_one_node_mode_args "$m" > /dev/null || exit 2; done
obj=$top/build/asan
checker_build "$obj" --enable-sanitizers || { echo "build failed (see $obj/build.log)"; exit 1; }
# shellcheck disable=SC2119  # no names: every test
checker_compile_tests || { echo "tests do not compile"; exit 1; }
checker_env "$obj"
preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
[ $# -gt 0 ] || set -- 1 4
passed=0; failed=0
for mode in "${modes[@]}"; do
for np in "$@"; do
    for src in "$top"/tests/*.c; do
        name=$(basename "$src" .c)
        if ! checker_runnable "$name" || ! checker_runs_at "$name" "$np"; then continue; fi
        mapfile -t args < <(checker_mpirun_args "$name" "$mode")
        out=$obj/$name.np$np.$mode.log
        # allocator_may_return_null: segment_too_big asks for 1 TiB on purpose (at
        # 1 rank: posix_memalign) and checks that newrma fails cleanly; by
        # default ASan aborts the process instead of returning NULL
        timeout 300 mpirun --oversubscribe -np "$np" -x LD_PRELOAD="$preload" \
            -x ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 -x NEWRMA_TEST_RSS_UNRELIABLE=1 \
            --mca osc newrma "${args[@]}" "$top/tests/bin/$name" > "$out" 2>&1
        rc=$?
        if grep -q "ERROR: AddressSanitizer\|runtime error" "$out" || [ $rc -ne 0 ]; then
            echo "FAIL $name $mode np=$np (log: $out)"; failed=$((failed + 1))
        else
            echo "PASS $name $mode np=$np"; passed=$((passed + 1))
        fi
    done
done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
