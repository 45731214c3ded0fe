#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Memory per window off-node, emulated over TCP loopback, at n = 2, 4, 8,
# 16, 32 ranks (oversubscribed), windows of 4 KiB per rank.  A benchmark,
# not a test.  (On-node memory and creation time per window are part of
# bench/rma_bench.sh.)
#   bench/win_memory.sh [remote] [N...]     ("remote": the only mode, accepted
#                                           for the commands in the docs)
#       newrma --mca osc_newrma_force_remote 1 (pml ob1, btl tcp; UCX tcp/lo)
#       beside osc/ucx (pml ucx), osc/rdma (pml ob1, btl tcp: it declines
#       windows without an RDMA-capable btl, reported as such) and osc/pt2pt
#       (pml ob1, btl tcp); allocate, create and dynamic windows; 16
#       windows measured after one warm-up window, each touched with a
#       lock_all epoch that puts 8 bytes to every rank; newrma16 is newrma
#       with --mca osc_newrma_op_pool_local 16 (a window's operation-element
#       pool then stops growing at 16 elements: the rest come from the
#       component's pool); comm_dup rows: MPI_Comm_dup + one barrier, what
#       the communicator every window duplicates costs, once per pml.
#       Output: one table per measure, the rank counts as columns.
# Measures: shared memory mapped per process (the node segment,
# page-rounded), malloc heap growth per process (mallinfo2, exact bytes)
# and resident memory growth per process (page-granular), each divided by
# the number of windows.
set -eu
# shellcheck source=bench/common.sh
. "$(dirname "$0")/common.sh"
top=$bench_top
bench_build win_memory || exit 1
bench_env
[ "${1:-}" != remote ] || shift
[ $# -gt 0 ] || set -- 2 4 8 16 32
out=$top/build/bench/win_memory/remote
mkdir -p "$out"

comps="newrma newrma16 ucx rdma pt2pt"
prog_args="--windows 16 --warmup --puts --dynamic --comm"
export UCX_TLS=tcp,self UCX_NET_DEVICES=lo
ob1_tcp="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
mca_args() {
    case $1 in
        newrma) echo "--mca osc newrma --mca osc_newrma_force_remote 1 --mca osc_base_verbose 40 $ob1_tcp" ;;
        newrma16) echo "$(mca_args newrma) --mca osc_newrma_op_pool_local 16" ;;
        ucx) echo "$(bench_osc_args ucx) --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any" ;;
        rdma|pt2pt) echo "--mca osc $1 $ob1_tcp" ;;
    esac
}
# unknown --mca names are silently ignored: without the parameter the
# newrma columns would measure the on-node path
if ! ompi_info --param osc newrma --level 9 --parsable 2>/dev/null |
        grep -q '^mca:osc:newrma:param:osc_newrma_force_remote:'; then
    echo "newrma: this build has no osc_newrma_force_remote parameter: columns skipped" >&2
    comps="ucx rdma pt2pt"
fi

notes=""
# one flavor's line of an output file: "mapped heap rss", "declined" or empty
field() {
    awk -v fl="$1" '$1 == fl && / ranks=/ {
        if (/declined/) { print "declined"; exit }
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        print v["mapped_per_proc"], (("heap_per_proc" in v) ? v["heap_per_proc"] : "-"), v["rss_per_proc"]; exit }' \
        "$2" 2>/dev/null || true
}
for n in "$@"; do
    for osc in $comps; do
        f=$out/$osc.$n
        # shellcheck disable=SC2046,SC2086  # argument lists are meant to split
        timeout 600 mpirun --oversubscribe -np "$n" --mca oob_tcp_if_include lo ${UCX_TLS:+-x UCX_TLS -x UCX_NET_DEVICES} \
            $(mca_args "$osc") "$top/bench/bin/win_memory" $prog_args > "$f.txt" 2> "$f.err" ||
            notes="$notes\n  $osc, $n ranks: mpirun failed (exit $?, see $f.err)"
        case $osc in newrma*)
            if [ -s "$f.txt" ]; then
                # every window of every rank must have taken the active-message path
                am=$(grep -c 'active messages path' "$f.err" || true)
                other=$(grep 'osc/newrma: window of' "$f.err" | grep -vc 'active messages path' || true)
                [ "$other" = 0 ] && [ "$am" -gt 0 ] ||
                    notes="$notes\n  $osc, $n ranks: $other window(s) NOT on the active-message path (see $f.err)"
            fi ;;
        esac
    done
done
# one table per measure: rows (flavor, component), columns the rank counts
for m in "2 malloc heap growth per window per process (B, exact)" \
         "3 resident memory growth per window per process (B, page-granular)" \
         "1 shared memory mapped per window per process (B)"; do
    k=${m%% *}
    echo
    echo "-- ${m#* }"
    printf '%-9s %-10s' flavor osc
    for n in "$@"; do printf '%9s' "P=$n"; done
    printf '%12s\n' "P=$1->${*: -1}"
    for fl in allocate create dynamic comm_dup; do
        for osc in $comps; do
            label=$osc
            if [ "$fl" = comm_dup ]; then
                # the same for every osc component: once per pml
                case $osc in newrma) label="(pml ob1)" ;; ucx) label="(pml ucx)" ;; *) continue ;; esac
            fi
            printf '%-9s %-10s' "$fl" "$label"
            first=""; last=""
            for n in "$@"; do
                v=$(field "$fl" "$out/$osc.$n.txt")
                case $v in
                    declined) x=declined ;;
                    "") x=- ;;
                    *) x=$(echo "$v" | cut -d' ' -f"$k") ;;
                esac
                printf '%9s' "$x"
                case $x in declined|-) ;; *) [ -n "$first" ] || first=$x; last=$x ;; esac
            done
            if [ -n "$first" ] && [ "$#" -gt 1 ]; then printf '%+12d\n' "$((last - first))"; else printf '%12s\n' -; fi
        done
    done
done
echo
echo "newrma, newrma16: every window of every rank checked on the active-message path"
echo "(osc_base_verbose 40).  newrma16: --mca osc_newrma_op_pool_local 16."
echo "rdma: Open MPI 4.1's osc/rdma needs a btl with RDMA and atomics reaching every peer"
echo "(osc_rdma_btls: openib, ugni, uct, ucp; btl/tcp has neither): it declines every window."
echo "Raw output: $out"
[ -z "$notes" ] || printf 'note:%b\n' "$notes"
exit 0
