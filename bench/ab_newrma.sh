#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# A/B of two newrma builds on the same machine, interleaved: is a change a
# regression, or is it the machine?  (Sub-microsecond rows move by tens of
# percent between days; only an interleaved comparison tells code from noise.)
#
#   bench/ab_newrma.sh REV [ROWS]     A = REV (any git revision), B = the working tree
#   bench/ab_newrma.sh tree [ROWS]    A and B both the working tree: a knob
#                                     off at run time, through A_ARGS/B_ARGS
#
# Environment: RUNS (interleaved runs of each, default 15), MPIRUN_ARGS
# (added to every mpirun, e.g. "--bind-to core"), A_ARGS and B_ARGS (added
# to one side's mpirun only, e.g. B_ARGS="--mca osc_newrma_relay_piece_bytes 0"), MODE (quick or
# full: rma_bench's sizes; default quick), FLAVOR (allocate,
# create or dynamic; default allocate), NP (default 2).  ROWS: an extended
# regular expression over rma_bench's row names (default "fence|pscw|barrier";
# e.g. "lock put 8" or "flush acc").  Prints, per build and row, the median
# and minimum over the runs of each run's median (us, or MB/s for bandwidth);
# with EACH=1 also every run's value, in run order (where the machine is
# bimodal between runs, the median hides which mode each build's runs got).
# Only the rows that ROWS selects run (rma_bench's RMA_BENCH_ONLY); set
# ALL_ROWS=1 to run every row, as in the full benchmark, and select after.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
rev=${1:?usage: $0 REV [ROWS]}
rows=${2:-fence|pscw|barrier}
runs=${RUNS:-15} flavor=${FLAVOR:-allocate} np=${NP:-2} mode=${MODE:-quick}
if [ "$rev" = tree ]; then
    a_dir=$bench_top/build
else
    a_dir=$bench_top/build/ab/$(git -C "$bench_top" rev-parse --short "$rev")
fi
[ "${ALL_ROWS:-0}" = 1 ] || export RMA_BENCH_ONLY="$rows"

# A: REV built out of a worktree of its own (kept for the next comparison)
if [ "$rev" != tree ] && [ ! -e "$a_dir/install/lib/openmpi/mca_osc_newrma.so" ]; then
    rm -rf "$a_dir"
    git -C "$bench_top" worktree add --detach -f "$a_dir/src" "$rev" > /dev/null
    "$a_dir/src/contrib/build.sh" "$a_dir/install" > "$a_dir/build.log" 2>&1 ||
        { tail "$a_dir/build.log"; echo "build of $rev failed"; exit 1; }
    git -C "$bench_top" worktree remove --force "$a_dir/src"
fi
# B: the working tree, and the benchmark program (the same binary for both)
bench_prepare rma_bench
pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')

each=$(mktemp)
trap 'rm -f "$each"' EXIT
printf '%-4s %-40s %10s %10s\n' build "row ($flavor, $np ranks)" median min
for _ in $(seq "$runs"); do
    for build in A B; do
        if [ $build = A ]; then
            dir=$a_dir/install/lib/openmpi side_args=${A_ARGS:-}
        else
            dir=$bench_top/build/install/lib/openmpi side_args=${B_ARGS:-}
        fi
        # shellcheck disable=SC2086 # the argument lists are meant to split
        OMPI_MCA_mca_base_component_path="$dir:$pkglibdir" timeout 300 mpirun -np "$np" --oversubscribe ${MPIRUN_ARGS:-} $side_args \
            --mca osc newrma "$bench_top/bench/bin/rma_bench" "$flavor" "$mode" 2> /dev/null |
            awk -v b=$build '/^row / { v = $NF; $1 = $2 = $NF = ""; sub(/^ +/, ""); sub(/ +$/, ""); print b "\t" $0 "\t" v }'
    done
done | tee "$each" | awk -F'\t' -v rows="$rows" '$2 ~ rows && $3 != "-" { k = $1 "\t" $2; vals[k] = vals[k] " " $3 }
    END {
        for (k in vals) {
            n = split(vals[k], v, " ")
            for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            split(k, p, "\t")
            printf "%-4s %-40s %10.4f %10.4f\n", p[1], p[2], v[int((n + 1) / 2)], v[1]
        }
    }' | sort -k2,2 -k1,1
if [ "${EACH:-0}" = 1 ]; then
    awk -F'\t' -v rows="$rows" '$2 ~ rows { k = $1 "\t" $2; vals[k] = vals[k] " " $3 }
        END { for (k in vals) { split(k, p, "\t"); printf "%-4s %-40s%s\n", p[1], p[2], vals[k] } }' "$each" | sort -k2,2 -k1,1
fi
echo "A = $rev ${A_ARGS:-}, B = working tree ${B_ARGS:-}; $runs interleaved runs each, $np ranks"
