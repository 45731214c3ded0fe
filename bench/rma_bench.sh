#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# On-node RMA benchmark: newrma beside Open MPI's osc components, one
# invocation.  A benchmark, not a test.
#
#   bench/rma_bench.sh --quick     quick mode: 3 sizes, 3 rounds, creation at
#                                  P = 2..32 once (4-5 minutes on 2 shared cores)
#   bench/rma_bench.sh             full mode: 8 latency and 7 bandwidth sizes,
#                                  7 rounds, creation 3 rounds (about 22 minutes:
#                                  docs/performance.md has the measured times)
#
# Environment (optional): OSC="newrma sm rdma ucx pt2pt" (components, newrma
# first), FLAVORS="allocate create dynamic", NPS="2 4", ROUNDS=N,
# WIN_NP="2 4 8 16 32", PLOT_MODES="flush lock" (sync modes plotted),
# RUN_TIMEOUT=seconds (per mpirun; 180 quick, 900 full), MPIRUN_ARGS (added
# to every mpirun, e.g. "--map-by core --bind-to core:overload-allowed" to fix
# where 4 ranks on 2 cores run: unbound, the scheduler's placement decides
# rows that wait for another process).
#
# What it measures (bench/rma_bench.c, bench/floors.c, bench/win_memory.c):
#   floors  the machine's: cache-line ping-pong round trip between two
#           processes (on two CPUs; and on one, yielding), one atomic on a
#           line the other wrote, 8-byte process_vm_writev/readv, memcpy
#           bandwidth
#   sync    cost of fence, PSCW round, lock/unlock, lock_all/unlock_all,
#           flush (and MPI_Barrier for reference), per flavor, at 2 and 4 ranks
#   lat     put/get/acc/gacc (8 B..4 MiB), fop/cas (8 B), each with its
#           synchronization, sync modes lock, flush, flush_local, lock_all,
#           pscw, fence
#   bw/rate many puts (gets) then one flush: MB/s and Mop/s, 1 KiB..4 MiB
#   window  creation + free time, and memory per window, at P = 2..32
# With more ranks than cores, the PSCW rows are shown a second time split
# by placement: the runs whose ranks 0 and 1 shared a CPU, and the others,
# each against its own floor.
# Every run of a component is one mpirun (with a timeout); rounds
# interleave the components (round r: every component once, in an order
# rotated by r) and a cell is the median over the rounds of the runs'
# medians.  A component that refuses a window or an operation, crashes or
# hangs gets "-" in its cells and a note; a crashed run is resumed after
# the row it died in.  Tables go to stdout and build/bench/rma/tables.txt,
# latency-vs-size plots to docs/img/rma_latency_<flavor>_<mode>.png.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"

mode=full
case ${1:-} in
    --quick) mode=quick ;;
    "") ;;
    *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
if [ $mode = quick ]; then rounds=${ROUNDS:-3}; win_rounds=1; win_reps=5; run_timeout=${RUN_TIMEOUT:-180}
else rounds=${ROUNDS:-7}; win_rounds=3; win_reps=11; run_timeout=${RUN_TIMEOUT:-900}; fi
comps=${OSC:-newrma sm rdma ucx pt2pt}
flavors=${FLAVORS:-allocate create dynamic}
nps=${NPS:-2 4}
win_nps=${WIN_NP:-2 4 8 16 32}
plot_modes=${PLOT_MODES:-flush lock}
max_resumes=8 # per run: past that, the rest of its rows are "-"

out=$bench_top/build/bench/rma
rm -rf "$out"
mkdir -p "$out/runs"
raw=$out/raw.txt notes=$out/notes.txt
: > "$raw"; : > "$notes"
bench_build rma_bench floors win_memory ||
    { [ $? = 1 ] && echo "newrma: build failed (see build/bench-build.log)" >> "$notes"; }
bench_env
started=$(date +%s)

note() { echo "$*" >> "$notes"; }

# rma_bench output -> raw lines "TABLE ROWKEY COMP VALUE", notes.  A
# latency or sync row's value goes to TABLE.1cpu or TABLE.2cpus as well, by
# where ranks 0 and 1 ended most of its batches ("cpus" line): one CPU or two
collect() { # file comp flavor np
    awk -v comp="$2" -v fl="$3" -v np="$4" -v raw="$raw" -v notes="$notes" '
        $1 == "row" {
            key = $3 == "sync" ? $5 : $3 == "lat" ? $4 ":" $5 ":" $6 : $5 ":" $6
            table = $3 "." fl ".np" np
            print table, key, comp, $7 >> raw
            last = $3 " " $4 " " $5 " " $6
            value = $7
        }
        $1 == "cpus" && table !~ /^bw/ { print table "." ($3 >= 0.5 ? "1cpu" : "2cpus"), key, comp, value >> raw }
        $1 == "note" { $1 = $2 = ""; sub(/^ +/, ""); print comp ", " fl ", " np " ranks, " last ": " $0 >> notes }' "$1"
}

# rows that crashed or hung, per component/flavor/np: later runs skip them
declare -A crashed=()

# one run of a component on a flavor, resumed after a row that crashed or
# hung; returns 3 if the component refused the window
run_rma() { # comp flavor np round
    local comp=$1 fl=$2 np=$3 r=$4 first=0 resumes=0 f rc last idx sec m o b key=$1/$2/$3
    while :; do
        f=$out/runs/$comp.$fl.np$np.r$r.$resumes
        rc=0
        # shellcheck disable=SC2046,SC2086  # the argument lists are meant to split
        timeout "$run_timeout" mpirun --oversubscribe -np "$np" ${MPIRUN_ARGS:-} $(bench_osc_args "$comp") \
            "$bench_top/bench/bin/rma_bench" "$fl" "$mode" "$first" "${crashed[$key]:-}" > "$f.txt" 2> "$f.err" || rc=$?
        if grep -q '^window_failed' "$f.txt"; then
            note "$comp refused the $fl window at $np ranks: $(sed -n 's/^window_failed //p' "$f.txt")"
            return 3
        fi
        collect "$f.txt" "$comp" "$fl" "$np"
        grep -q '^done' "$f.txt" && return 0
        last=$(grep '^start' "$f.txt" | tail -1)
        if [ -z "$last" ]; then
            note "$comp, $fl, $np ranks: run failed before its first row (exit $rc, see $f.err)"
            return 0
        fi
        read -r _ idx sec m o b <<< "$last"
        note "$comp, $fl, $np ranks: run $([ $rc = 124 ] && echo "hung (timeout ${run_timeout}s)" || echo "died (exit $rc)") in row $sec $m $o $b: resumed after it, row skipped in later rounds (see $f.err)"
        crashed[$key]=${crashed[$key]:+${crashed[$key]},}$idx
        # the row stays in the tables, "-" in this column
        { echo "row $idx $sec $m $o $b -"; [ "$sec" != bw ] || echo "row $idx rate $m $o $b -"; } > "$f.crashed"
        collect "$f.crashed" "$comp" "$fl" "$np"
        first=$((idx + 1)); resumes=$((resumes + 1))
        if [ $resumes -ge $max_resumes ]; then
            note "$comp, $fl, $np ranks: gave up after $max_resumes resumed runs"
            return 0
        fi
    done
}

# the components in an order rotated by the round number
rotated() { # round
    local -a c
    read -r -a c <<< "$comps"
    local i n=${#c[@]}
    for ((i = 0; i < n; i++)); do echo "${c[(i + $1) % n]}"; done
}

# -------- operations and synchronizations, interleaved rounds --------
refused=" "
for ((r = 0; r < rounds; r++)); do
    timeout 120 "$bench_top/bench/bin/floors" "$mode" > "$out/runs/floors.r$r.txt" 2>&1 || note "floors: exit $? in round $r"
    awk '$1 == "row" { print "floor", ($6 > 0 ? $5 ":" $6 : $5), "machine", $7 }' "$out/runs/floors.r$r.txt" >> "$raw"
    for np in $nps; do
        for fl in $flavors; do
            for comp in $(rotated "$r"); do
                case $refused in *" $comp/$fl/$np "*) continue ;; esac
                run_rma "$comp" "$fl" "$np" "$r" || refused="$refused$comp/$fl/$np "
            done
        done
    done
    echo "round $((r + 1))/$rounds done after $(($(date +%s) - started)) s" >&2
done

# -------- window creation time and memory --------
for ((r = 0; r < win_rounds; r++)); do
    for n in $win_nps; do
        for comp in $(rotated "$r"); do
            f=$out/runs/win.$comp.P$n.r$r
            # shellcheck disable=SC2046
            # --warmup: one window of each flavor made (and kept) before those
            # measured, so that one-time costs -- code pages, pools, Open MPI's
            # own btl buffers -- are not charged to windows (every component alike)
            timeout 600 mpirun --oversubscribe -np "$n" $(bench_osc_args "$comp") "$bench_top/bench/bin/win_memory" \
                --dynamic --warmup --time "$win_reps" > "$f.txt" 2> "$f.err" || note "$comp, window creation at P=$n: exit $? (see $f.err)"
            awk -v comp="$comp" -v r="$r" -v raw="$raw" -v notes="$notes" '
                / ranks=/ { split($2, p, "="); key = $1 ":P=" p[2] }
                / declined/ && r == 0 { print comp " refused the " $1 " window (creation time and memory: -)" >> notes }
                / mapped_per_proc=/ && r == 0 {
                    for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                    print "winmap", key, comp, v["mapped_per_proc"] >> raw
                    print "winheap", key, comp, v["heap_per_proc"] >> raw
                    print "winrss", key, comp, v["rss_per_proc"] >> raw
                    print "winnode", key, comp, v["node_per_proc"] >> raw }
                / create_free_us=/ { split($3, kv, "="); print "wintime", key, comp, kv[2] >> raw }' "$f.txt"
        done
    done
done
elapsed=$(($(date +%s) - started))

# -------- tables --------
floor_of() { # name:bytes -> median floor value
    awk -v k="$1" '$1 == "floor" && $2 == k { print $4 }' "$raw" | bench_median
}
pingpong=$(floor_of pingpong)
floors_for() { # table -> "ROWKEY FLOOR" lines
    local t=$1 m s fl
    case $t in
        sync.*) echo "fence $pingpong"; echo "pscw $pingpong" ;;
        lat.*)
            fl=${t#lat.}; fl=${fl%%.*}
            for m in lock flush flush_local lock_all pscw fence; do
                if [ "$fl" = allocate ]; then
                    echo "$m:fop:8 $(floor_of atomic)"; echo "$m:cas:8 $(floor_of atomic)"
                else
                    echo "$m:put:8 $(floor_of pvm_writev:8)"; echo "$m:get:8 $(floor_of pvm_readv:8)"
                fi
            done ;;
        bw.*)
            awk '$1 == "floor" && $2 ~ /^memcpy:/ { sub(/memcpy:/, "", $2); print $2 }' "$raw" | sort -un |
                while read -r s; do
                    echo "put:$s $(floor_of "memcpy:$s")"; echo "get:$s $(floor_of "memcpy:$s")"
                done ;;
    esac
}
table() { # table direction title
    local fl=$out/floors.$1
    floors_for "$1" | awk 'NF == 2' > "$fl"
    bench_table "$raw" "$1" "$2" "$3" "$comps" "$fl"
    echo
}
# With more ranks than cores, the PSCW rows (ranks 0 and 1 hand over to each
# other every iteration) split by where the two ran: each component's runs
# against the floor of that placement -- the cache-line ping-pong on two
# CPUs, the yielding ping-pong on one (bench/floors.c)
placement_tables() { # np
    local np=$1 fl class floor t sub=$out/raw.placement
    awk '$1 ~ /\.(1cpu|2cpus)$/ && ($2 == "pscw" || $2 ~ /^pscw:.*:8$/)' "$raw" > "$sub"
    for fl in $flavors; do
        for class in 2cpus 1cpu; do
            [ "$class" = 1cpu ] && floor=$(floor_of pingpong_1cpu) || floor=$pingpong
            awk -v f="$floor" '{ print $2, f }' "$sub" | sort -u > "$out/floors.placement"
            for t in sync lat; do
                bench_table "$sub" "$t.$fl.np$np.$class" lo \
                    "$t, $fl, $np ranks, ranks 0 and 1 on $([ $class = 1cpu ] && echo one CPU || echo two CPUs) (us)" \
                    "$comps" "$out/floors.placement"
            done
            echo
        done
    done
}
{
    echo "newrma on-node RMA benchmark, $mode mode, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $rounds rounds, ${elapsed} s"
    echo "cells: median over rounds of each run's median; newrma/best: newrma / best other component"
    echo "(latency: < 1 is better; bandwidth and rate: > 1 is better); newrma/floor: newrma / the machine's floor"
    echo
    bench_table "$raw" floor none "machine floors (us; memcpy MB/s)" machine
    echo
    for np in $nps; do
        for fl in $flavors; do
            table "sync.$fl.np$np" lo "sync, $fl, $np ranks (us)"
        done
    done
    for np in $nps; do
        [ "$np" -le "$(nproc)" ] || placement_tables "$np"
    done
    for np in $nps; do
        for fl in $flavors; do
            table "lat.$fl.np$np" lo "op+sync, $fl, $np ranks (us)"
            table "bw.$fl.np$np" hi "bandwidth, $fl, $np ranks (MB/s)"
            table "rate.$fl.np$np" hi "message rate, $fl, $np ranks (Mop/s)"
        done
    done
    table wintime lo "window create+free (us)"
    table winmap lo "shared memory mapped per window per process (B)"
    table winheap lo "malloc heap per window per process (B)"
    table winrss lo "resident memory per window per process (B)"
    table winnode lo "node memory per window / P (B): all heaps + each shared file once"
    if [ -s "$notes" ]; then
        echo "notes:"
        awk '!seen[$0]++ { print "  " $0 }' "$notes"
    fi
} | tee "$out/tables.txt"

# -------- plots: latency vs size, 2 ranks (or the first NPS) --------
plot() { # flavor mode np
    local fl=$1 m=$2 np=$3 op comp col png=$bench_top/docs/img/rma_latency_$1_$2.png dat
    {
        echo "set terminal pngcairo size 1200,900"
        echo "set output '$png'"
        echo "set multiplot layout 2,2 title 'op + $m latency, $fl window, $np ranks ($mode mode, medians)'"
        echo "set logscale xy; set grid; set key top left; set datafile missing '-'"
        echo "set xlabel 'bytes'; set ylabel 'microseconds'"
        echo 'set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "1M" 1048576, "4M" 4194304)'
        for op in put get acc gacc; do
            dat=$out/plot.$fl.$m.$op.dat
            for comp in $comps; do
                awk -v t="lat.$fl.np$np" -v m="$m" -v op="$op" -v c="$comp" \
                    '$1 == t && $3 == c { split($2, k, ":"); if (k[1] == m && k[2] == op) print k[3], $4 }' "$raw" |
                    sort -n | awk '{ v[$1] = v[$1] " " $2 } END { for (s in v) print s, v[s] }' |
                    while read -r s vals; do echo "$s $(echo "$vals" | tr ' ' '\n' | bench_median)"; done |
                    sort -n > "$dat.$comp"
            done
            echo "set title '$op'"
            printf "plot "
            col=""
            for comp in $comps; do
                [ -s "$dat.$comp" ] || continue
                printf "%s'%s' using 1:2 with linespoints title '%s'" "$col" "$dat.$comp" "$comp"
                col=", "
            done
            echo
        done
        echo "unset multiplot"
    } > "$out/plot.$fl.$m.gp"
    gnuplot "$out/plot.$fl.$m.gp" > "$out/plot.$fl.$m.log" 2>&1 && echo "plot: $png" ||
        echo "plot failed: $out/plot.$fl.$m.log"
}
if command -v gnuplot > /dev/null 2>&1; then
    mkdir -p "$bench_top/docs/img"
    for fl in $flavors; do for m in $plot_modes; do plot "$fl" "$m" "${nps%% *}"; done; done
else
    echo "(gnuplot not installed: no plots; contrib/install-deps.sh installs it)"
fi
