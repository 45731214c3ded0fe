#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# bench/strided.c for several components: per row the runs' values (us per
# non-contiguous operation + flush, fastest repetition of each run), sorted.
# A benchmark, not a test.
#
#   bench/strided.sh [create|dynamic|allocate]
# Environment: OSC="newrma ucx sm rdma pt2pt" (components; each where it
# accepts the window), OPS="put get acc", BLOCKS="16 1000", BLOCKLEN=1
# (doubles per block), RUNS=5.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
flavor=${1:-create}
bench_prepare strided
for blocks in ${BLOCKS:-16 1000}; do
    for op in ${OPS:-put get acc}; do
        for comp in ${OSC:-newrma ucx sm rdma pt2pt}; do
            printf '%-7s %-8s %-3s %4d blocks of %d doubles:' "$comp" "$flavor" "$op" "$blocks" "${BLOCKLEN:-1}"
            bench_runs_sorted "${RUNS:-5}" "$comp" strided "$flavor" "$op" "$blocks" 2000 7 "${BLOCKLEN:-1}"
        done
    done
done
