#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# bench/target_wait.c for several components and each way the target
# waits, ranks bound to cores: per row the runs' values (us per lock_all +
# op + unlock_all), sorted.  One run is one mpirun: the bimodality it shows
# is between runs, not within one.
#
#   bench/target_wait.sh [get|put|none]
# Environment: OSC="newrma sm" (components), WAITS="sleep spin iprobe recv",
# RUNS=8, N=200000.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
op=${1:-get}
bench_prepare target_wait
for comp in ${OSC:-newrma sm}; do
    for how in ${WAITS:-sleep spin iprobe recv}; do
        printf '%-8s %-4s target %-7s:' "$comp" "$op" "$how"
        bench_runs_sorted "${RUNS:-8}" "$comp" target_wait "$op" "$how" "${N:-200000}"
    done
done
