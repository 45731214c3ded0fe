#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# bench/lock_loop.c for several components, ranks bound to cores: per
# component the per-run minima (us per lock+unlock), sorted; the first is
# the one to compare (the spread is from run to run, not within a run).
#
#   bench/lock_loop.sh [exclusive|shared|nocheck]
# Environment: OSC="newrma sm" (components), RUNS=5, N=500000.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
kind=${1:-exclusive}
bench_prepare lock_loop
for comp in ${OSC:-newrma sm}; do
    printf '%-8s %s:' "$comp" "$kind"
    bench_runs_sorted "${RUNS:-5}" "$comp" lock_loop "${N:-500000}" "$kind"
done
