#!/usr/bin/env bash
# Run the test programs against newrma built with AddressSanitizer and
# UndefinedBehaviorSanitizer (configure --enable-sanitizers), in the given
# modes of contrib/newrma-modes.sh (default: minimum and remote-minimum), at
# the given process counts (default 1 and 4).  The test programs
# are not instrumented; the sanitizer runtimes are preloaded so that the
# component, which is, can be loaded.  A run fails on any sanitizer report
# or a failing test.  Resident-memory checks (win_free_leaks, soak_ops) are
# not meaningful under ASan (its quarantine keeps freed memory):
# NEWRMA_TEST_RSS_UNRELIABLE=1 turns them off, everything else is checked.
#   contrib/sanitized-tests.sh [--mode MODE]... [NP...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/newrma-modes.sh"
modes=()
while [ $# -gt 0 ] && [ "$1" = --mode ]; do modes+=("$2"); shift 2; done
[ ${#modes[@]} -gt 0 ] || modes=(minimum remote-minimum)
for m in "${modes[@]}"; do newrma_mode_args "$m" > /dev/null || exit 2; done
obj=$top/build/asan
mkdir -p "$obj"
"$top/tests/run.sh" --np 1 segment_layout > /dev/null   # compiles the test programs
(cd "$obj" && { [ -f Makefile ] || "$top/configure" --prefix="$obj/install" --enable-sanitizers; } \
    && make -j2 install) > "$obj/build.log" 2>&1 || { tail -20 "$obj/build.log"; exit 1; }
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$obj/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
[ $# -gt 0 ] || set -- 1 4
passed=0; failed=0
for mode in "${modes[@]}"; do
for np in "$@"; do
    for src in "$top"/tests/*.c; do
        name=$(basename "$src" .c)
        grep -q 'newrma-test:.*\(links-component\|helper\)' "$src" && continue
        meta_np=$(sed -n 's/.*newrma-test:.*np=\([0-9,]*\).*/\1/p' "$src" | head -1)
        [ -z "$meta_np" ] || case ",$meta_np," in *",$np,"*) ;; *) continue ;; esac
        test_mca=$(sed -n 's/.*newrma-test:.*mca=\([^ ]*\).*/\1/p' "$src" | head -1 | tr ',' ' ')
        mca=()
        for kv in $test_mca; do
            case " $(newrma_mode_args "$mode") " in *" ${kv%%:*} "*) continue ;; esac
            mca+=(--mca "${kv%%:*}" "${kv#*:}")
        done
        out=$obj/$name.np$np.$mode.log
        # shellcheck disable=SC2046
        timeout 300 mpirun --oversubscribe -np "$np" -x LD_PRELOAD="$preload" -x ASAN_OPTIONS=detect_leaks=0 -x NEWRMA_TEST_RSS_UNRELIABLE=1 \
            --mca osc newrma $(newrma_mode_args "$mode") "${mca[@]}" "$top/tests/bin/$name" > "$out" 2>&1
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
