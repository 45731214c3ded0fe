#!/usr/bin/env bash
# Memory per window at n = 2, 4, 8, 16, 32 ranks (oversubscribed), windows of
# 4 KiB per rank.  A benchmark, not a test.
#   bench/win_memory.sh [N...]          on-node: newrma beside osc/sm and
#                                       osc/rdma (allocate, create; 8 windows)
#   bench/win_memory.sh remote [N...]   off-node emulated over TCP loopback:
#       newrma --mca osc_newrma_force_remote 1 (pml ob1, btl tcp; UCX tcp/lo)
#       beside osc/ucx (pml ucx), osc/rdma (pml ob1, btl tcp: it declines
#       windows without an RDMA-capable btl, reported as such) and osc/pt2pt
#       (pml ob1, btl tcp); allocate, create and dynamic windows; 16
#       windows measured after one warm-up window, each touched with a
#       lock_all epoch that puts 8 bytes to every rank.
# Columns: shared memory mapped per process (the node segment, page-rounded),
# malloc heap growth per process (mallinfo2, exact bytes) and resident memory
# growth per process (page-granular), each divided by the number of windows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
mode=onnode
if [ "${1:-}" = remote ]; then mode=remote; shift; fi
mkdir -p "$top/build"
flock "$top/build/.build.lock" "$top/contrib/build.sh" > "$top/build/bench-build.log" 2>&1 ||
    { tail "$top/build/bench-build.log"; exit 1; }
mkdir -p "$top/bench/bin"
mpicc -O2 -Wall -o "$top/bench/bin/win_memory" "$top/bench/win_memory.c"
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ $# -gt 0 ] || set -- 2 4 8 16 32
out=$top/build/bench/win_memory/$mode
mkdir -p "$out"

if [ "$mode" = onnode ]; then
    comps="newrma sm rdma"
    prog_args=""
    mca_args() { echo "--mca osc $1"; }
else
    comps="newrma ucx rdma pt2pt"
    prog_args="--windows 16 --warmup --puts --dynamic"
    export UCX_TLS=tcp,self UCX_NET_DEVICES=lo
    ob1_tcp="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
    mca_args() {
        case $1 in
            newrma) echo "--mca osc newrma --mca osc_newrma_force_remote 1 --mca osc_newrma_verbose 10 $ob1_tcp" ;;
            # Debian's openmpi-mca-params.conf disables osc/pml ucx unless named
            ucx) echo "--mca osc ucx --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any" \
                      "--mca osc_ucx_tls any --mca osc_ucx_devices any" ;;
            rdma|pt2pt) echo "--mca osc $1 $ob1_tcp" ;;
        esac
    }
    # unknown --mca names are silently ignored: without the parameter the
    # newrma column would measure the on-node path
    if ! ompi_info --param osc newrma --level 9 --parsable 2>/dev/null |
            grep -q '^mca:osc:newrma:param:osc_newrma_force_remote:'; then
        echo "newrma: this build has no osc_newrma_force_remote parameter: column skipped" >&2
        comps="ucx rdma pt2pt"
    fi
fi

notes=""
printf '%-9s %5s %-8s %14s %14s %14s\n' flavor ranks osc "shm map/proc" "heap/proc" "RSS/proc"
for n in "$@"; do
    for osc in $comps; do
        f=$out/$osc.$n
        # shellcheck disable=SC2046,SC2086  # argument lists are meant to split
        timeout 600 mpirun --oversubscribe -np "$n" --mca oob_tcp_if_include lo ${UCX_TLS:+-x UCX_TLS -x UCX_NET_DEVICES} \
            $(mca_args "$osc") "$top/bench/bin/win_memory" $prog_args > "$f.txt" 2> "$f.err" ||
            notes="$notes\n  $osc, $n ranks: mpirun failed (exit $?, see $f.err)"
        if [ "$mode" = remote ] && [ "$osc" = newrma ] && [ -s "$f.txt" ]; then
            # every window of every rank must have taken the active-message path
            am=$(grep -c 'active messages path' "$f.err" || true)
            other=$(grep 'osc/newrma: window of' "$f.err" | grep -vc 'active messages path' || true)
            [ "$other" = 0 ] && [ "$am" -gt 0 ] ||
                notes="$notes\n  newrma, $n ranks: $other window(s) NOT on the active-message path (see $f.err)"
        fi
        awk -v osc="$osc" '
            /declined/ { split($2, r, "="); printf "%-9s %5s %-8s %14s %14s %14s\n", $1, r[2], osc, "declined", "-", "-"; next }
            / ranks=/ { delete v; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
              printf "%-9s %5s %-8s %14s %14s %14s\n", $1, v["ranks"], osc, v["mapped_per_proc"],
                     ("heap_per_proc" in v) ? v["heap_per_proc"] : "-", v["rss_per_proc"] }' "$f.txt"
    done
done
if [ "$mode" = remote ]; then
    # growth from the smallest to the largest rank count, per component and flavor
    echo
    printf '%-9s %-8s %22s %22s\n' flavor osc "heap/proc, n=$1 -> ${*: -1}" "RSS/proc, n=$1 -> ${*: -1}"
    for fl in allocate create dynamic; do
        for osc in $comps; do
            a=$(awk -v fl="$fl" '$1 == fl && / ranks=/ && !/declined/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print v["heap_per_proc"], v["rss_per_proc"] }' "$out/$osc.$1.txt" 2>/dev/null)
            b=$(awk -v fl="$fl" '$1 == fl && / ranks=/ && !/declined/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print v["heap_per_proc"], v["rss_per_proc"] }' "$out/$osc.${*: -1}.txt" 2>/dev/null)
            if [ -n "$a" ] && [ -n "$b" ]; then
                # shellcheck disable=SC2086
                printf '%-9s %-8s %22s %22s\n' "$fl" "$osc" \
                    "$(echo $a | cut -d' ' -f1) -> $(echo $b | cut -d' ' -f1)" "$(echo $a | cut -d' ' -f2) -> $(echo $b | cut -d' ' -f2)"
            else
                printf '%-9s %-8s %22s %22s\n' "$fl" "$osc" declined -
            fi
        done
    done
    echo "(newrma: every window checked on the active-message path with osc_newrma_verbose 10; raw output in $out)"
fi
[ -z "$notes" ] || printf 'note:%b\n' "$notes"
exit 0
