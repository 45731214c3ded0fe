#!/usr/bin/env bash
# Latency of each RMA call + MPI_Win_flush (rank 0 -> rank 1, one lock_all
# epoch), and put bandwidth, newrma beside Open MPI's components, 2 ranks.
# Medians of interleaved batches: microseconds per op, MB/s (1e6 B/s) for
# put_bw.  Last column: newrma / best other (lowest latency, highest
# bandwidth; < 1 is better for latency, > 1 is better for bandwidth).
# A benchmark, not a test.  Draws build/bench/op_latency_<flavor>.png (put/get
# latency vs size) if gnuplot is installed.
#   bench/op_latency.sh [allocate|create|both]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
which=${1:-both}
np=2
mkdir -p "$top/build"
flock "$top/build/.build.lock" "$top/contrib/build.sh" > "$top/build/bench-build.log" 2>&1 \
    || { tail "$top/build/bench-build.log"; exit 1; }
mkdir -p "$top/bench/bin"
mpicc -O2 -o "$top/bench/bin/op_latency" "$top/bench/op_latency.c"
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

case $which in
    both) flavors="allocate create" ;;
    allocate|create) flavors=$which ;;
    *) echo "usage: $0 [allocate|create|both]" >&2; exit 2 ;;
esac

human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%dMiB", b / 1048576; else if (b >= 1024) printf "%dKiB", b / 1024; else printf "%dB", b }'; }

rows="put:8 put:64 put:1024 put:65536 put:1048576 get:8 get:64 get:1024 get:65536 get:1048576
acc:8 acc:64 acc:1024 acc:65536 acc:1048576 gacc:8 gacc:64 gacc:1024 gacc:65536 gacc:1048576
fop:8 cas:8 put_bw:4096 put_bw:65536 put_bw:1048576"

for flavor in $flavors; do
    out=$top/build/bench/op_latency/$flavor
    mkdir -p "$out"
    comps="newrma sm rdma pt2pt"
    [ "$flavor" = create ] && comps="newrma rdma pt2pt"
    notes=""
    for osc in $comps; do
        if ! timeout 120 mpirun --oversubscribe -np "$np" --mca osc "$osc" "$top/bench/bin/op_latency" "$flavor" \
                > "$out/$osc.txt" 2>"$out/$osc.err"; then
            # the whole run died (crash, hang): if the window itself was
            # refused, leave it; otherwise retry one op at a time so one
            # crashing call does not blank the whole column
            if grep -q '^window_failed' "$out/$osc.txt"; then continue; fi
            : > "$out/$osc.txt"
            for op in put get acc gacc fop cas put_bw; do
                timeout 120 mpirun --oversubscribe -np "$np" --mca osc "$osc" "$top/bench/bin/op_latency" "$flavor" "$op" \
                    >> "$out/$osc.txt" 2>"$out/$osc.$op.err" \
                    || notes="$notes\n  $osc: run died during $op (see $out/$osc.$op.err); its other rows come from one run per op"
            done
        fi
    done
    # value of (op, size) for a component, empty if absent or "-"
    val() { awk -v o="$2" -v s="$3" '$1 == o && $2 == s && $3 != "-" { print $3 }' "$out/$1.txt"; }

    echo
    printf '%-16s' "$flavor, $np ranks"; for osc in $comps; do printf '%11s' "$osc"; done; printf '%14s\n' "newrma/best"
    for r in $rows; do
        op=${r%%:*}; sz=${r#*:}
        unit=us; [ "$op" = put_bw ] && unit=MB/s
        printf '%-16s' "$op $(human "$sz") $unit"
        best=""
        for osc in $comps; do
            v=$(val "$osc" "$op" "$sz")
            printf '%11s' "${v:--}"
            if [ "$osc" != newrma ] && [ -n "$v" ]; then
                best=$(awk -v a="$v" -v b="$best" -v hi="$([ "$op" = put_bw ] && echo 1 || echo 0)" \
                    'BEGIN { print (b == "" || (hi ? a > b : a < b)) ? a : b }')
            fi
        done
        mine=$(val newrma "$op" "$sz")
        if [ -n "$mine" ] && [ -n "$best" ]; then
            awk -v a="$mine" -v b="$best" 'BEGIN { printf "%14.2f\n", a / b }'
        else
            printf '%14s\n' "-"
        fi
    done

    [ -n "$notes" ] && printf "note:$notes\n"

    # plot put/get latency vs size, one line per (component, op)
    if command -v gnuplot > /dev/null 2>&1; then
        dat=$out/putget.dat
        {
            printf '#size'; for osc in $comps; do printf ' %s_put %s_get' "$osc" "$osc"; done; echo
            for sz in 8 64 1024 65536 1048576; do
                printf '%s' "$sz"
                for osc in $comps; do
                    p=$(val "$osc" put "$sz"); g=$(val "$osc" get "$sz")
                    printf ' %s %s' "${p:--}" "${g:--}"
                done
                echo
            done
        } > "$dat"
        png=$top/build/bench/op_latency_$flavor.png
        plot="" col=2
        for osc in $comps; do
            plot="$plot${plot:+, }'$dat' using 1:$col with linespoints title '$osc put'"
            plot="$plot, '$dat' using 1:$((col + 1)) with linespoints dashtype 2 title '$osc get'"
            col=$((col + 2))
        done
        term=pngcairo; gnuplot -e 'set terminal pngcairo' > /dev/null 2>&1 || term=png
        if gnuplot > "$out/gnuplot.log" 2>&1 <<EOF
set terminal $term size 900,600
set output '$png'
set title 'RMA op + flush latency, $flavor window, $np ranks (median)'
set logscale xy
set xlabel 'bytes'
set ylabel 'microseconds'
set key top left
set grid
set datafile missing '-'
set xtics ("8" 8, "64" 64, "1K" 1024, "64K" 65536, "1M" 1048576)
plot $plot
EOF
        then echo "plot: $png"; else echo "plot failed, see $out/gnuplot.log"; fi
    else
        echo "(gnuplot not installed: no plot)"
    fi
done
