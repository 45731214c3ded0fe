#!/usr/bin/env bash
# Run the test programs against newrma built with AddressSanitizer and
# UndefinedBehaviorSanitizer (configure --enable-sanitizers), in the minimum
# mode, at the given process counts (default 1 and 4).  The test programs
# are not instrumented; the sanitizer runtimes are preloaded so that the
# component, which is, can be loaded.  A run fails on any sanitizer report
# or a failing test; win_free_leaks' resident-memory check is not meaningful
# under ASan (its quarantine keeps freed memory) and only its report counts.
#   contrib/sanitized-tests.sh [NP...]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
obj=$top/build/asan
mkdir -p "$obj"
"$top/tests/run.sh" --np 1 segment_layout > /dev/null   # compiles the test programs
(cd "$obj" && { [ -f Makefile ] || "$top/configure" --prefix="$obj/install" --enable-sanitizers; } \
    && make -j2 install) > "$obj/build.log" 2>&1 || { tail -20 "$obj/build.log"; exit 1; }
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$obj/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
minimum="--mca osc_newrma_slots 1 --mca osc_newrma_lock_qnodes 1 --mca osc_newrma_post_ring_slots 1 --mca osc_newrma_accumulate_stripes 1"
[ $# -gt 0 ] || set -- 1 4
passed=0; failed=0
for np in "$@"; do
    for src in "$top"/tests/*.c; do
        name=$(basename "$src" .c)
        grep -q 'newrma-test:.*links-component' "$src" && continue
        out=$obj/$name.np$np.log
        # shellcheck disable=SC2086
        timeout 300 mpirun --oversubscribe -np "$np" -x LD_PRELOAD="$preload" -x ASAN_OPTIONS=detect_leaks=0 \
            --mca osc newrma $minimum "$top/tests/bin/$name" > "$out" 2>&1
        rc=$?
        if grep -q "ERROR: AddressSanitizer\|runtime error" "$out" || { [ $rc -ne 0 ] && [ "$name" != win_free_leaks ]; }; then
            echo "FAIL $name np=$np (log: $out)"; failed=$((failed + 1))
        else
            echo "PASS $name np=$np"; passed=$((passed + 1))
        fi
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
