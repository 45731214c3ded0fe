#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Off-node RMA latency emulated on one machine over TCP loopback, 2 ranks
# (rank 0 -> rank 1): round trips (each column's transport floors, measured
# in the same mpirun as its other rows), lock + put/fetch_and_op/accumulate +
# unlock, fetch_and_op/put + flush in a lock_all epoch, and 64 KiB put
# bandwidth; newrma beside osc/ucx and osc/pt2pt.  A benchmark, not a test.
#   bench/remote_latency.sh [create|allocate|both]     (default: both)
#   ROUNDS=N (default 3): every column runs N times, the columns interleaved
#   (round 1: all columns, round 2: all columns...); a cell is the median
#   over the rounds of the per-run medians, and a ratio to a floor is the
#   median over the rounds of the ratio within one run.
#
# Columns (all with UCX_TLS=tcp,self UCX_NET_DEVICES=lo, oob/btl on lo only):
#   newrma    --mca osc newrma --mca osc_newrma_force_remote 1; pml ob1 + btl
#             tcp for MPI point-to-point; newrma's own UCX worker (UCP active
#             messages over tcp/lo) for RMA
#   newrma+u  the same with pml ucx, so that its MPI ping-pong is a UCX tcp
#             round trip measured in the same mpirun as newrma's rows
#   newrma+u1 the same with --mca pml_ucx_progress_iterations 1: pml ucx's
#             blocking calls (the target's MPI_Recv) call opal_progress, and
#             so newrma's progress, only every 100th turn by default
#   ucx       --mca osc ucx --mca pml ucx (over tcp/lo UCX emulates RMA and
#             atomics with active messages, so the target must progress)
#   pt2pt     --mca osc pt2pt, pml ob1 + btl tcp
# Floors: pingpong = MPI_Send/MPI_Recv 8 B round trip (ob1/btl-tcp for newrma
# and pt2pt, UCX tcp for newrma+u and ucx); ucp_pingpong = a bare 8 B UCP
# active-message round trip on a UCX worker of the benchmark's own (same
# UCX_TLS), in the newrma columns' processes: newrma's transport, no MPI.
# The issue-5 target: lock+put+unlock, lock+fop+unlock and lock+acc+unlock
# <= 1.2 round trips of the same transport (PASS/MISS given against every
# floor measured with newrma), 64 KiB put bandwidth >= the best other.
# Every run is started with verbose output (osc_base_verbose 40,
# pml_base_verbose, UCX_LOG_LEVEL=info: printed at start-up and at
# connection, never in the timed loops) and the script checks that each
# column ran the path it claims (see "path check" below the tables).
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
top=$bench_top
which=${1:-both}
case $which in
    both) flavors="create allocate" ;;
    create|allocate) flavors=$which ;;
    *) echo "usage: $0 [create|allocate|both]" >&2; exit 2 ;;
esac
rounds=${ROUNDS:-3}
np=2
notes=""
newrma_ok=1
BENCH_CFLAGS=""
[ -f /usr/include/ucp/api/ucp.h ] && BENCH_CFLAGS="-DHAVE_UCP -lucp -lucs"
rc=0
bench_build remote_latency || rc=$?
case $rc in
    0) ;;
    # the ucx and pt2pt columns do not need newrma: go on without it
    1) newrma_ok=0; notes="$notes\n  newrma: build failed (see $top/build/bench-build.log): column skipped" ;;
    *) exit 1 ;;
esac
bench_env
export UCX_TLS=tcp,self UCX_NET_DEVICES=lo UCX_LOG_LEVEL=info

# Open MPI ignores --mca names nobody registered, so without this check a
# build lacking the parameter would silently measure newrma's on-node path
if [ "$newrma_ok" = 1 ] && ! ompi_info --param osc newrma --level 9 --parsable 2>/dev/null \
        | grep -q '^mca:osc:newrma:param:osc_newrma_force_remote:'; then
    newrma_ok=0
    notes="$notes\n  newrma: this build has no osc_newrma_force_remote parameter: column skipped"
fi

comps="newrma newrma+u newrma+u1 ucx pt2pt"
others="ucx pt2pt"
ob1_tcp="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
# Debian's openmpi-mca-params.conf says pml = ^ucx and osc = ^ucx,pt2pt:
# naming them here overrides it.  Open MPI 4.1 accepts UCX only on Mellanox
# transports unless told otherwise (*_ucx_tls, *_ucx_devices).
pml_ucx="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
verbose="--mca osc_base_verbose 40 --mca pml_base_verbose 10"   # 40: window creation and paths; from 60 newrma traces every operation
mca_args() {
    case $1 in
        newrma) echo "--mca osc newrma --mca osc_newrma_force_remote 1 $ob1_tcp $verbose" ;;
        newrma+u) echo "--mca osc newrma --mca osc_newrma_force_remote 1 $pml_ucx $verbose" ;;
        newrma+u1) echo "$(mca_args newrma+u) --mca pml_ucx_progress_iterations 1" ;;
        ucx) echo "--mca osc ucx $pml_ucx --mca osc_ucx_tls any --mca osc_ucx_devices any $verbose" ;;
        pt2pt) echo "--mca osc pt2pt $ob1_tcp $verbose" ;;
    esac
}
rows_of() { # the rows a column measures
    case $1 in
        newrma*) echo "pingpong:8 ucp_pingpong:8 $common_rows" ;;
        *) echo "pingpong:8 $common_rows" ;;
    esac
}
common_rows="lock_put_unlock:8 lock_fop_unlock:8 lock_acc_unlock:8 fop_flush:8 put_flush:8 put_bw:65536"
all_rows="pingpong:8 ucp_pingpong:8 $common_rows"
row_list() { rows_of "$1" | tr ' ' '\n' | sed 's/:.*//' | paste -sd, -; }
# shellcheck disable=SC2046  # mca_args is meant to split into words
run() { # osc timeout flavor rows: the benchmark's stdout
    local osc=$1 t=$2; shift 2
    timeout "$t" mpirun --oversubscribe -np "$np" --mca oob_tcp_if_include lo \
        -x UCX_TLS -x UCX_NET_DEVICES -x UCX_LOG_LEVEL \
        $(mca_args "$osc") "$top/bench/bin/remote_latency" "$@"
}

# path check of one run's output (UCX logs to stdout, Open MPI to stderr):
# prints "ok: evidence" or "WRONG: why"
check_path() { # osc txtfile errfile
    local osc=$1 e n bad expect
    e=$(mktemp); cat "$2" "$3" > "$e"
    check_path_in "$osc" "$e"
    rm -f "$e"
}
check_path_in() { # osc file
    local osc=$1 e=$2 n bad expect
    # UCX endpoints to the peer over anything but tcp/lo (self is the own rank)
    bad=$(grep -o 'ep_cfg\[[0-9]*\]: .*' "$e" | grep -v 'tcp/lo\|self/memory' | head -1 || true)
    [ -z "$bad" ] || { echo "WRONG: UCX endpoint not on tcp/lo: $bad"; return; }
    bad=$(grep 'ep_cfg' "$e" | grep -o '[a-z_]*([^)]*)' | grep -v '^[a-z_]*(\(self/memory0\|tcp/lo\|self/memory0 tcp/lo\))$' | head -1 || true)
    [ -z "$bad" ] || { echo "WRONG: UCX lane $bad"; return; }
    case $osc in
        newrma*)
            n=$(grep -c 'osc/newrma: window of .* active messages path' "$e" || true)
            bad=$(grep 'osc/newrma: window of' "$e" | grep -vc 'active messages path' || true)
            [ "$n" = "$np" ] && [ "$bad" = 0 ] ||
                { echo "WRONG: $n of $np windows on the active-message path, $bad elsewhere"; return; }
            grep -q 'ep_cfg.*am(tcp/lo)' "$e" || { echo "WRONG: no UCX am(tcp/lo) endpoint"; return; }
            if [ "$osc" = newrma ]; then
                grep -q 'selected ob1' "$e" || { echo "WRONG: pml ob1 not selected"; return; }
                echo "ok: $n/$np windows 'active messages path', UCX am(tcp/lo); pml ob1 (btl tcp,self)"
            else
                grep -q 'component ucx selected' "$e" && grep -q 'ep_cfg.*tag(.*tcp/lo' "$e" ||
                    { echo "WRONG: pml ucx over tcp/lo not seen"; return; }
                echo "ok: $n/$np windows 'active messages path', UCX am(tcp/lo); pml ucx tag(tcp/lo)"
            fi ;;
        ucx)
            grep -q 'component ucx selected' "$e" || { echo "WRONG: pml ucx not selected"; return; }
            grep -q 'ep_cfg.*rma_am(tcp/lo) amo_am(tcp/lo)' "$e" || { echo "WRONG: no rma_am/amo_am(tcp/lo) endpoint"; return; }
            echo "ok: pml ucx tag(tcp/lo); osc ucx rma_am(tcp/lo) amo_am(tcp/lo)" ;;
        pt2pt)
            grep -q 'selected ob1' "$e" || { echo "WRONG: pml ob1 not selected"; return; }
            echo "ok: pml ob1 (btl tcp,self)" ;;
    esac
    # only the named osc component (and the pml) is opened, so a window that
    # exists is that component's
    case $osc in newrma) expect=newrma,ob1 ;; newrma+u*) expect=newrma,ucx ;; ucx) expect=ucx ;; pt2pt) expect=ob1,pt2pt ;; esac
    n=$(grep -o 'components_open: found loaded component [a-z0-9]*' "$e" | awk '{ print $NF }' | sort -u | paste -sd, -)
    [ "$n" = "$expect" ] || echo "  (osc and pml components opened: $n)"
}


for flavor in $flavors; do
    out=$top/build/bench/remote_latency/$flavor
    mkdir -p "$out"
    rm -f "$out"/*.txt "$out"/*.err
    declare -A checked=()
    for r in $(seq 1 "$rounds"); do
        for osc in $comps; do
            f=$out/$osc.r$r
            : > "$f.txt"
            case $osc in newrma*) [ "$newrma_ok" = 0 ] && continue ;; esac
            ok=1; run "$osc" 180 "$flavor" "$(row_list "$osc")" > "$f.txt" 2> "$f.err" || ok=0
            if grep -q '^window_failed' "$f.txt"; then
                notes="$notes\n  $osc ($flavor, round $r): $(head -1 "$f.txt") (see $f.err)"
                continue
            fi
            if [ "$ok" = 0 ]; then
                # the whole run died (crash, hang, failed start): if the first
                # row fails too, the component does not run here at all;
                # otherwise go on one row at a time so that one bad call does
                # not blank the column (30 s each: a row alone takes < 1 s)
                : > "$f.txt"
                for rr in $(rows_of "$osc"); do
                    row=${rr%%:*}
                    if ! run "$osc" 30 "$flavor" "$row" >> "$f.txt" 2> "$f.$row.err"; then
                        if [ "$row" = pingpong ]; then
                            notes="$notes\n  $osc ($flavor, round $r): does not run (see $f.err, $f.$row.err)"
                            : > "$f.txt"
                            break
                        fi
                        notes="$notes\n  $osc ($flavor, round $r): run died during $row (see $f.$row.err); its other rows come from one run per row"
                    fi
                done
                [ -s "$f.txt" ] && cat "$f".*.err > "$f.err" 2>/dev/null || true
            fi
            if [ -s "$f.txt" ]; then
                c=$(check_path "$osc" "$f.txt" "$f.err")
                case $c in
                    WRONG*) notes="$notes\n  $osc ($flavor, round $r): path check failed: $c (run discarded)"; : > "$f.txt" ;;
                    *) checked[$osc]=$c ;;
                esac
            fi
        done
    done

    # value of (row, size) for a component in round r, empty if absent or "-"
    val() { awk -v o="$2" -v s="$3" '$1 == o && $2 == s && $3 != "-" { print $3 }' "$out/$1.r$4.txt" 2>/dev/null; }
    # median over rounds of row/size (or of row/size divided by floor/8 of the same run)
    med() { # osc row size [floor]
        local osc=$1 row=$2 sz=$3 floor=${4:-} r v d
        for r in $(seq 1 "$rounds"); do
            v=$(val "$osc" "$row" "$sz" "$r")
            [ -n "$v" ] || continue
            if [ -n "$floor" ]; then
                d=$(val "$osc" "$floor" 8 "$r")
                [ -n "$d" ] || continue
                awk -v a="$v" -v b="$d" 'BEGIN { print a / b }'
            else
                echo "$v"
            fi
        done | bench_median
    }

    echo
    echo "== $flavor windows, $np ranks, TCP loopback; medians of $rounds interleaved runs (each the median of 21 batches)"
    printf '%-25s' "row"; for osc in $comps; do printf '%11s' "$osc"; done
    printf '%13s\n' "newrma/best"
    for rr in $all_rows; do
        row=${rr%%:*}; sz=${rr#*:}
        unit=us; hi=0; [ "$row" = put_bw ] && { unit=MB/s; hi=1; }
        printf '%-25s' "$row $(bench_human "$sz") $unit"
        best=""
        for osc in $comps; do
            v=$(med "$osc" "$row" "$sz")
            printf '%11s' "${v:--}"
            case " $others " in *" $osc "*)
                if [ -n "$v" ]; then
                    best=$(awk -v a="$v" -v b="$best" -v hi="$hi" 'BEGIN { print (b == "" || (hi ? a > b : a < b)) ? a : b }')
                fi ;;
            esac
        done
        mine=$(med newrma "$row" "$sz")
        if [ -n "$mine" ] && [ -n "$best" ] && [ "$row" != ucp_pingpong ]; then
            awk -v a="$mine" -v b="$best" 'BEGIN { printf "%13.2f\n", a / b }'
        else
            printf '%13s\n' "-"
        fi
    done
    echo "(newrma/best: newrma column / best of ucx, pt2pt; latency < 1 and bandwidth > 1 are better)"

    echo
    echo "-- in round trips of the same run (median over runs of row / floor of that mpirun)"
    printf '%-25s' "row"
    for osc in $comps; do
        printf '%11s' "$osc"
        case $osc in newrma*) printf '%11s' "$osc" ;; esac
    done
    echo
    printf '%-25s' "floor:"
    for osc in $comps; do
        case $osc in
            newrma) printf '%11s%11s' "MPI-ob1" "UCP-AM" ;;
            newrma+u) printf '%11s%11s' "MPI-ucx" "UCP-AM" ;;
            newrma+u1) printf '%11s%11s' "MPI-ucx1" "UCP-AM" ;;
            ucx) printf '%11s' "MPI-ucx" ;;
            pt2pt) printf '%11s' "MPI-ob1" ;;
        esac
    done
    echo
    for rr in $common_rows; do
        row=${rr%%:*}; sz=${rr#*:}
        [ "$row" = put_bw ] && continue
        printf '%-25s' "$row $(bench_human "$sz")"
        for osc in $comps; do
            floors=pingpong; case $osc in newrma*) floors="pingpong ucp_pingpong" ;; esac
            for fl in $floors; do
                v=$(med "$osc" "$row" "$sz" "$fl")
                if [ -n "$v" ]; then printf '%11.2f' "$v"; else printf '%11s' "-"; fi
            done
        done
        echo
    done

    echo
    echo "-- issue-5 targets, newrma ($flavor): <= 1.2 round trips of the same transport; 64 KiB put_bw >= best other"
    printf '%-20s %8s %9s %9s %9s %9s  %s\n' "row" "us" "/MPI-ob1" "/UCP-AM" "/MPI-ucx" "/MPI-ucx1" "status per floor"
    for rr in lock_put_unlock:8 lock_fop_unlock:8 lock_acc_unlock:8; do
        row=${rr%%:*}; sz=${rr#*:}
        us=$(med newrma "$row" "$sz")
        a=$(med newrma "$row" "$sz" pingpong)
        c=$(med newrma "$row" "$sz" ucp_pingpong)
        b=$(med newrma+u "$row" "$sz" pingpong)
        d=$(med newrma+u1 "$row" "$sz" pingpong)
        printf '%-20s %8s' "$row $(bench_human "$sz")" "${us:--}"
        st=""
        for x in "a:ob1:$a" "c:UCP-AM:$c" "b:ucx:$b" "d:ucx1:$d"; do
            v=${x#*:*:}; name=${x#*:}; name=${name%%:*}
            if [ -n "$v" ]; then
                printf ' %9.2f' "$v"
                st="$st $name:$(awk -v v="$v" 'BEGIN { print (v <= 1.2) ? "PASS" : "MISS" }')"
            else
                printf ' %9s' -
            fi
        done
        printf ' %s\n' "$st"
    done
    mine=$(med newrma put_bw 65536); best=""; bname=""
    for osc in $others; do
        v=$(med "$osc" put_bw 65536)
        if [ -n "$v" ] && { [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a > b) }'; }; then best=$v; bname=$osc; fi
    done
    if [ -n "$mine" ] && [ -n "$best" ]; then
        awk -v a="$mine" -v b="$best" -v n="$bname" 'BEGIN { printf "%-22s %9.1f MB/s, best other %s %.1f MB/s: %.2fx %8s\n",
            "put_bw 64KiB", a, n, b, a / b, (a >= b ? "PASS" : "MISS") }'
    else
        printf '%-22s %s\n' "put_bw 64KiB" "-"
    fi
    echo "(/MPI-ob1, /UCP-AM: newrma's row over the ob1/btl-tcp MPI ping-pong and over the bare UCP AM"
    echo " round trip of the same mpirun; /MPI-ucx, /MPI-ucx1: newrma+u's and newrma+u1's rows over their own"
    echo " MPI ping-pong over pml ucx (UCX tcp), the same mpirun each; us: the newrma column)"
    pk=$(grep -h '^packets' "$out"/newrma.r*.txt 2>/dev/null | sort | uniq -c | sort -k3,3 -s | awk '{ $1 = ""; print }' | sed 's/^ //' || true)
    if [ -n "$pk" ]; then
        echo
        echo "-- newrma's packets per iteration (MPI_T osc_newrma_packets_<kind>, 200 iterations after the timed part)"
        echo "$pk" | awk '!seen[$2]++' | sed 's/^packets /  /'
    fi
    echo
    for osc in $comps; do
        printf 'path check %-10s %s\n' "$osc:" "${checked[$osc]:-no run passed the check}"
    done
    unset checked
done
echo
echo "raw output: $top/build/bench/remote_latency/FLAVOR/COMPONENT.rN.{txt,err}"
[ -z "$notes" ] || printf 'note:%b\n' "$notes"
exit 0
