#!/usr/bin/env bash
# Off-node RMA latency emulated on one machine over TCP loopback, 2 ranks
# (rank 0 -> rank 1): an 8-byte MPI_Send/MPI_Recv round trip (each column's
# transport floor, measured in the same mpirun as its other rows), lock +
# put/fetch_and_op/accumulate + unlock, fetch_and_op/put + flush in a
# lock_all epoch, and 64 KiB put bandwidth; newrma beside osc/ucx and
# osc/pt2pt.  Medians of interleaved batches: microseconds per iteration,
# MB/s (1e6 B/s) for put_bw.  Columns newrma/best (latency: < 1 is better;
# bandwidth: > 1 is better) and newrma/pingpong (the target is <= 1.2).
# A second table gives every column's latencies in its own round trips.
# A benchmark, not a test.
#   bench/remote_latency.sh [create|allocate|both]     (default: both)
#
#   newrma  --mca osc newrma --mca osc_newrma_force_remote 1, pml ob1 + btl tcp
#   ucx     --mca osc ucx --mca pml ucx (UCX over tcp/lo: RMA and atomics
#           are emulated with active messages, so the target must progress)
#   pt2pt   --mca osc pt2pt, pml ob1 + btl tcp
# all with UCX_TLS=tcp,self UCX_NET_DEVICES=lo and oob/btl on lo only.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
which=${1:-both}
case $which in
    both) flavors="create allocate" ;;
    create|allocate) flavors=$which ;;
    *) echo "usage: $0 [create|allocate|both]" >&2; exit 2 ;;
esac
np=2
notes=""
newrma_ok=1
mkdir -p "$top/build"
if ! flock "$top/build/.build.lock" "$top/contrib/build.sh" > "$top/build/bench-build.log" 2>&1; then
    # the ucx and pt2pt columns do not need newrma: go on without it
    newrma_ok=0
    notes="$notes\n  newrma: build failed (see $top/build/bench-build.log): column skipped"
fi
mkdir -p "$top/bench/bin"
ucp_flags=""
[ -f /usr/include/ucp/api/ucp.h ] && ucp_flags="-DHAVE_UCP -lucp -lucs"
# shellcheck disable=SC2086
mpicc -O2 -Wall -o "$top/bench/bin/remote_latency" "$top/bench/remote_latency.c" $ucp_flags
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export UCX_TLS=tcp,self UCX_NET_DEVICES=lo

# Open MPI ignores --mca names nobody registered, so without this check a
# build lacking the parameter would silently measure newrma's on-node path
if [ "$newrma_ok" = 1 ] && ! ompi_info --param osc newrma --level 9 --parsable 2>/dev/null \
        | grep -q '^mca:osc:newrma:param:osc_newrma_force_remote:'; then
    newrma_ok=0
    notes="$notes\n  newrma: this build has no osc_newrma_force_remote parameter: column skipped"
fi

comps="newrma ucx pt2pt"
ob1_tcp="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
mca_args() {
    case $1 in
        newrma) echo "--mca osc newrma --mca osc_newrma_force_remote 1 $ob1_tcp" ;;
        # Debian's openmpi-mca-params.conf says pml = ^ucx and osc = ^ucx,pt2pt:
        # naming them here overrides it.  Open MPI 4.1 accepts UCX only on
        # Mellanox transports unless told otherwise (*_ucx_tls, *_ucx_devices).
        ucx) echo "--mca osc ucx --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any" \
                  "--mca osc_ucx_tls any --mca osc_ucx_devices any" ;;
        pt2pt) echo "--mca osc pt2pt $ob1_tcp" ;;
    esac
}
# shellcheck disable=SC2046  # mca_args is meant to split into words
run() { # osc timeout flavor [rows]: the benchmark's stdout
    local osc=$1 t=$2; shift 2
    timeout "$t" mpirun --oversubscribe -np "$np" --mca oob_tcp_if_include lo -x UCX_TLS -x UCX_NET_DEVICES \
        $(mca_args "$osc") "$top/bench/bin/remote_latency" "$@"
}

human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%dMiB", b / 1048576; else if (b >= 1024) printf "%dKiB", b / 1024; else printf "%dB", b }'; }
rows="pingpong:8 lock_put_unlock:8 lock_fop_unlock:8 lock_acc_unlock:8 fop_flush:8 put_flush:8 put_bw:65536"

for flavor in $flavors; do
    out=$top/build/bench/remote_latency/$flavor
    mkdir -p "$out"
    for osc in $comps; do
        : > "$out/$osc.txt"
        [ "$osc" = newrma ] && [ "$newrma_ok" = 0 ] && continue
        ok=1; run "$osc" 120 "$flavor" > "$out/$osc.txt" 2> "$out/$osc.err" || ok=0
        if grep -q '^window_failed' "$out/$osc.txt"; then
            notes="$notes\n  $osc ($flavor): $(head -1 "$out/$osc.txt") (see $out/$osc.err)"
            continue
        fi
        if [ "$ok" = 0 ]; then
            # the whole run died (crash, hang, failed start): if the first
            # row fails too, the component does not run here at all;
            # otherwise go on one row at a time so that one bad call does
            # not blank the column (30 s each: a row alone takes < 1 s)
            : > "$out/$osc.txt"
            for r in $rows; do
                row=${r%%:*}
                if ! run "$osc" 30 "$flavor" "$row" >> "$out/$osc.txt" 2> "$out/$osc.$row.err"; then
                    if [ "$row" = pingpong ]; then
                        notes="$notes\n  $osc ($flavor): does not run (see $out/$osc.err, $out/$osc.$row.err)"
                        : > "$out/$osc.txt"
                        break
                    fi
                    notes="$notes\n  $osc ($flavor): run died during $row (see $out/$osc.$row.err); its other rows come from one run per row"
                fi
            done
        fi
    done
    # value of (row, size) for a component, empty if absent or "-"
    val() { awk -v o="$2" -v s="$3" '$1 == o && $2 == s && $3 != "-" { print $3 }' "$out/$1.txt"; }

    echo
    printf '%-26s' "$flavor, $np ranks, tcp/lo"; for osc in $comps; do printf '%11s' "$osc"; done
    printf '%13s%17s\n' "newrma/best" "newrma/pingpong"
    for r in $rows; do
        row=${r%%:*}; sz=${r#*:}
        unit=us; hi=0; [ "$row" = put_bw ] && { unit=MB/s; hi=1; }
        printf '%-26s' "$row $(human "$sz") $unit"
        best=""
        for osc in $comps; do
            v=$(val "$osc" "$row" "$sz")
            printf '%11s' "${v:--}"
            if [ "$osc" != newrma ] && [ -n "$v" ]; then
                best=$(awk -v a="$v" -v b="$best" -v hi="$hi" 'BEGIN { print (b == "" || (hi ? a > b : a < b)) ? a : b }')
            fi
        done
        mine=$(val newrma "$row" "$sz")
        if [ -n "$mine" ] && [ -n "$best" ]; then
            awk -v a="$mine" -v b="$best" 'BEGIN { printf "%13.2f", a / b }'
        else
            printf '%13s' "-"
        fi
        floor=$(val newrma pingpong 8)
        if [ -n "$mine" ] && [ -n "$floor" ] && [ "$row" != pingpong ] && [ "$hi" = 0 ]; then
            awk -v a="$mine" -v b="$floor" 'BEGIN { printf "%17.2f\n", a / b }'
        else
            printf '%17s\n' "-"
        fi
    done

    echo
    printf '%-26s' "in own round trips"; for osc in $comps; do printf '%11s' "$osc"; done; echo
    for r in $rows; do
        row=${r%%:*}; sz=${r#*:}
        [ "$row" = pingpong ] || [ "$row" = put_bw ] && continue
        printf '%-26s' "$row $(human "$sz")"
        for osc in $comps; do
            v=$(val "$osc" "$row" "$sz"); floor=$(val "$osc" pingpong 8)
            if [ -n "$v" ] && [ -n "$floor" ]; then
                awk -v a="$v" -v b="$floor" 'BEGIN { printf "%11.2f", a / b }'
            else
                printf '%11s' "-"
            fi
        done
        echo
    done
done
[ -n "$notes" ] && printf 'note:%b\n' "$notes"
exit 0
