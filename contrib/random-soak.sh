#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# A long soak of tests/random_programs.c: random legal RMA programs checked
# against the sequential model, many seeds, every mode, 2-4 ranks.
#   contrib/random-soak.sh [FIRST_SEED [LAST_SEED [MODES...]]]   (default 1 1000, every mode)
# Seeds run in batches of 50 per mpirun; a failing batch's log names the
# seed and epoch (rerun one with NEWRMA_SEEDS=N NEWRMA_RANDOM_VERBOSE=1).
# Ends with "N passed, M failed" (batches).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
first=${1:-1}
last=${2:-1000}
shift 2 2>/dev/null || shift $#
. "$top/contrib/newrma-modes.sh"
# shellcheck disable=SC2206
modes=(${@:-$newrma_modes})
for m in "${modes[@]}"; do newrma_one_node_mode_args "$m" > /dev/null || exit 2; done
"$top/tests/run.sh" --np 2 --mode default random_programs > /dev/null || { echo "0 passed, 1 failed"; exit 1; }
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
log=$top/build/soak-logs
mkdir -p "$log"
passed=0; failed=0
for mode in "${modes[@]}"; do
    for np in 2 3 4; do
        for ((s = first; s <= last; s += 50)); do
            e=$((s + 49 > last ? last : s + 49))
            out=$log/random.$mode.np$np.$s-$e.log
            # shellcheck disable=SC2046
            NEWRMA_SEEDS=$(seq -s ' ' "$s" "$e") timeout -k 5 600 mpirun --oversubscribe -np "$np" \
                --mca osc newrma $(newrma_one_node_mode_args "$mode") -x NEWRMA_SEEDS "$top/tests/bin/random_programs" \
                > "$out" 2>&1
            if [ $? -eq 0 ] && grep -q 'No Errors' "$out"; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
                echo "FAIL $mode np=$np seeds $s-$e (log: $out)"
                grep -m3 'check failed' "$out" | sed 's/^/    | /'
            fi
        done
    done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
