#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Shell helpers shared by the bench/*.sh drivers; sourced, not run.
#   bench_build PROG...        build newrma into build/install (under the
#                              build lock) and compile bench/PROG.c into
#                              bench/bin/PROG (extra flags: BENCH_CFLAGS);
#                              1 if newrma's build failed, 2 if a program's
#   bench_env                  point Open MPI at build/install, allow root
#   bench_prepare PROG...      bench_build, exiting on failure, then bench_env
#   bench_osc_args NAME        mpirun arguments that select osc NAME on node
#   bench_human BYTES          8B, 64KiB, 4MiB
#   bench_median               median of the numbers on stdin ("-" ignored;
#                              the upper one of an even count; nothing if none)
#   bench_table ...            a table of medians with newrma / best other
# shellcheck shell=bash

bench_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bench_build() {
    local p rc=0
    mkdir -p "$bench_top/build" "$bench_top/bench/bin"
    flock "$bench_top/build/.build.lock" "$bench_top/contrib/build.sh" > "$bench_top/build/bench-build.log" 2>&1 ||
        { tail "$bench_top/build/bench-build.log" >&2; rc=1; }
    for p in "$@"; do
        # shellcheck disable=SC2086  # BENCH_CFLAGS is a list of flags
        mpicc -O2 -Wall -Wextra -o "$bench_top/bench/bin/$p" "$bench_top/bench/$p.c" ${BENCH_CFLAGS:-} || return 2
    done
    return $rc
}

bench_env() {
    local pkglibdir
    pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
    export OMPI_MCA_mca_base_component_path="$bench_top/build/install/lib/openmpi:$pkglibdir"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# The start of a driver that needs its programs and nothing else.
bench_prepare() {
    bench_build "$@" || { echo "build failed (see build/bench-build.log)"; exit 1; }
    bench_env
}

# Debian's openmpi-mca-params.conf disables osc ucx and pt2pt unless named
# (naming them overrides it); Open MPI 4.1 takes UCX only on Mellanox
# transports unless told "any".
bench_osc_args() {
    case $1 in
        ucx) echo "--mca osc ucx --mca osc_ucx_tls any --mca osc_ucx_devices any" ;;
        *) echo "--mca osc $1" ;;
    esac
}

# bench_runs_sorted RUNS COMP PROGRAM ARGS...: RUNS runs of a bench/bin
# program at 2 ranks bound to cores under osc COMP, each one mpirun; prints
# their last lines sorted, on one line (bench/lock_loop.sh, target_wait.sh).
bench_runs_sorted() {
    local runs=$1 comp=$2 prog=$3
    shift 3
    for _ in $(seq "$runs"); do
        # shellcheck disable=SC2046  # the argument list is meant to split
        timeout 120 mpirun --oversubscribe --bind-to core -np 2 $(bench_osc_args "$comp") \
            "$bench_top/bench/bin/$prog" "$@" 2> /dev/null | tail -1
    done | sort -n | tr '\n' ' '
    echo
}

bench_human() {
    awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%dMiB", b / 1048576; else if (b >= 1024) printf "%dKiB", b / 1024; else printf "%dB", b }'
}

bench_median() {
    awk '$1 != "-" && $1 != "" { v[n++] = $1 }
         END { if (!n) exit
               for (i = 1; i < n; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
               print v[int(n / 2)] }'
}

# bench_table RAW TABLE DIRECTION TITLE COMPS [FLOORS]
#   RAW: lines "TABLE ROWKEY COMPONENT VALUE" (VALUE "-": failed), one per
#   run; a cell is the median over the runs, rows in first-seen order.
#   ROWKEY's ":" become spaces, a trailing byte count is printed as 8B/KiB/MiB.
#   DIRECTION: lo (latency: best = lowest) or hi (bandwidth: best = highest):
#   the column newrma / best other component ("-" without both); none: no
#   such column.
#   FLOORS (optional): lines "ROWKEY FLOORVALUE" for rows that have a
#   floor; adds the columns floor and newrma/floor.
bench_table() {
    local raw=$1 table=$2 dir=$3 title=$4 comps=$5 floors=${6:-/dev/null}
    awk -v table="$table" -v dir="$dir" -v title="$title" -v comps="$comps" '
        function median(key,   n, i, j, t, v) {
            n = split(vals[key], v, " ")
            for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return n ? v[int(n / 2) + 1] : ""
        }
        function human(b) {
            if (b >= 1048576) return sprintf("%dMiB", b / 1048576)
            if (b >= 1024) return sprintf("%dKiB", b / 1024)
            return sprintf("%dB", b)
        }
        function label(k,   n, p, i, s) {
            n = split(k, p, ":")
            s = p[1]
            for (i = 2; i <= n; i++) s = s " " ((i == n && p[i] ~ /^[0-9]+$/ && p[i] + 0 > 0) ? human(p[i]) : p[i])
            return s
        }
        function fmt(x) { return (x >= 1000 || x == int(x)) ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : x >= 1 ? sprintf("%.2f", x) : sprintf("%.3f", x) }
        FILENAME != ARGV[1] { floor[$1] = $2; nfloors++; next }
        $1 == table {
            if (!($2 in seen)) { seen[$2] = 1; order[nrows++] = $2 }
            if ($4 != "-") vals[$2 SUBSEP $3] = vals[$2 SUBSEP $3] " " $4
        }
        END {
            if (!nrows) exit
            nc = split(comps, c, " ")
            hasfloor = nfloors > 0
            w = length(title); for (r = 0; r < nrows; r++) if (length(label(order[r])) > w) w = length(label(order[r]))
            printf "%-" w "s", title
            for (i = 1; i <= nc; i++) printf " %10s", c[i]
            if (dir != "none") printf " %12s", "newrma/best"
            if (hasfloor) printf " %10s %13s", "floor", "newrma/floor"
            printf "\n"
            for (r = 0; r < nrows; r++) {
                k = order[r]; best = ""; mine = ""
                printf "%-" w "s", label(k)
                for (i = 1; i <= nc; i++) {
                    m = median(k SUBSEP c[i])
                    printf " %10s", m == "" ? "-" : fmt(m)
                    if (m == "") continue
                    if (c[i] == "newrma") mine = m
                    else if (best == "" || (dir == "hi" ? m + 0 > best + 0 : m + 0 < best + 0)) best = m
                }
                if (dir != "none")
                    printf " %12s", (mine != "" && best != "" && best + 0 > 0) ? sprintf("%.2f", mine / best) : "-"
                if (hasfloor && (k in floor))
                    printf " %10s %13s", fmt(floor[k]), (mine != "" && floor[k] + 0 > 0) ? sprintf("%.2f", mine / floor[k]) : "-"
                printf "\n"
            }
        }' "$raw" "$floors"
}
