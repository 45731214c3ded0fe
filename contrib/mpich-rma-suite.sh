#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Run MPICH's RMA test suite (test/mpi/rma of MPICH 4.0.2, Debian 12's
# `apt-get source mpich`, or another Debian release's: --mpich-release)
# against osc/newrma -- or, with --osc, against another osc component of the
# installed Open MPI, for comparison.
#
#   contrib/mpich-rma-suite.sh [OPTIONS] [TEST...]
#
#   --mode MODE             default, minimum, remote, remote-minimum, fifo,
#                           fifo-minimum, nodes2x2 or nodes2x1: the modes of
#                           tests/run.sh (contrib/newrma-modes.sh).  The node
#                           modes run across 2 namespaced nodes of this machine
#                           (contrib/test-nodes.sh; brought up here and removed
#                           at the end unless they were up before), ranks
#                           placed by node, at most 4 (nodes2x2) or 2
#                           (nodes2x1) ranks
#   --ompi5                 against Open MPI 5.0: run this script inside the
#                           Debian 13 root of contrib/ompi5-root.sh (made, and
#                           given its missing headers, first if need be;
#                           $NEWRMA_OMPI5_ROOT or /var/lib/newrma/trixie),
#                           with newrma built against the root's Open MPI in
#                           build/ompi5 (docs/ompi5.md).  Not with the node
#                           modes; --work and --component-dir must then be
#                           inside this repository (the only host directory
#                           the root sees)
#   --mpich-release NAME    the Debian release whose MPICH source to use
#                           (default bookworm: MPICH 4.0.2; trixie has
#                           4.3.0+really4.2.1, which this machine's Debian
#                           mirror does not serve: docs/ompi5.md)
#   --osc NAME              run under --mca osc NAME instead of newrma
#   --mca NAME VALUE        extra MCA parameter for every run (repeatable)
#   --timeout S             per-test time limit unless the test list gives one
#                           with timeLimit= (default 120)
#   --component-dir DIR     use the mca_osc_newrma.so in DIR as it is (default:
#                           build and install this tree's newrma with
#                           contrib/build.sh into BUILD/install)
#   --work DIR              work directory (default BUILD/mpich-suite, git-ignored;
#                           reused when present)
# BUILD is $NEWRMA_BUILD_DIR, else build/ (build/ompi5 with --ompi5), as for
# tests/run.sh: one per Open MPI.
#   TEST...                 only the test-list entries whose program matches one
#                           of these shell patterns (e.g. 'win_shared*')
#
# Runs as root on a fresh Debian 12 machine (or in the Debian 13 root):
# installs what it needs with apt-get (dpkg-dev, Open MPI, newrma's build
# dependencies), adds a deb-src entry if there is none, fetches the release's
# MPICH source into WORK once, builds the
# suite's programs and its test library (test/mpi/util) with Open MPI's mpicc
# and a config header this script writes (WORK/include/mpitestconf.h; MPICH's
# configure is not used), and runs every entry of test/mpi/rma/testlist.in:
# at its process count capped at 4, oversubscribed, under a time limit.  A
# test passes when mpirun exits 0 and the output has a " No Errors" line.
# Entries listed in contrib/mpich-rma-exclude.txt are skipped with the reason
# given there.  One row per entry: PASS/FAIL/SKIP, name, np, seconds; the last
# line is "N passed, M failed, K skipped".  Logs: WORK/logs/.
#
# How long it takes (2 cores, other jobs sharing them): the first run spends
# about 45 s fetching (22 MB) and building the suite's 179 programs; a full
# run of the 197 entries takes about 4 minutes in either mode (default or
# minimum; the slowest entries are large_acc_flush_local, ~30 s, and
# derived_acc_flush_local, ~20 s).  An entry that hangs adds its time limit.
# The node modes take far longer: across 2 nodes several entries reach their
# time limit (window_allocation, window_noncontig_allocation,
# linked_list_bench_lock_all, ...; docs/test-nodes.md).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/debian-source.sh"
. "$top/contrib/newrma-modes.sh"
osc=newrma
mode=default
timeout_s=120
work=
ompi5=no
mpich_release=bookworm
extra_mca=()
patterns=()
component_dir=
all_args=("$@")
while [ $# -gt 0 ]; do
    case "$1" in
        --osc) osc=$2; shift 2 ;;
        --ompi5) ompi5=yes; shift ;;
        --mpich-release) mpich_release=$2; shift 2 ;;
        --mode) mode=$2; shift 2 ;;
        --mca) extra_mca+=(--mca "$2" "$3"); shift 3 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --component-dir) component_dir=$(cd "$2" && pwd) || exit 2; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
        *) patterns+=("$1"); shift ;;
    esac
done
mode_args=$(newrma_mode_args "$mode") || exit 2
read -r -a mode_mca <<< "$mode_args"
[ "$osc" = newrma ] || mode_mca=()
node_layout=$(newrma_mode_nodes "$mode") || node_layout=

# --ompi5 outside the root: make the root if need be, then run this same
# script with the same arguments inside it (the root's marker file says where
# we are).
ompi5_marker=/etc/newrma-ompi5-root
if [ $ompi5 = yes ]; then
    [ -z "$node_layout" ] || { echo "--ompi5: not with the node modes" >&2; exit 2; }
    if [ ! -f $ompi5_marker ]; then
        "$top/contrib/ompi5-root.sh" make && "$top/contrib/ompi5-root.sh" headers > /dev/null \
            || { echo "ERROR: could not make the Open MPI 5.0 root"; echo "0 passed, 1 failed"; exit 1; }
        exec "$top/contrib/ompi5-root.sh" exec "$top/contrib/mpich-rma-suite.sh" "${all_args[@]}"
    fi
    : "${NEWRMA_BUILD_DIR:=$top/build/ompi5}"
fi
build=${NEWRMA_BUILD_DIR:-$top/build}
[ -n "$work" ] || work=$build/mpich-suite/$mpich_release

max_np=4
shm_dir=/dev/shm
if [ -n "$node_layout" ]; then
    read -r nodes per_node <<< "$node_layout"
    max_np=$((nodes * per_node))
fi
exclude_file=$top/contrib/mpich-rma-exclude.txt
mkdir -p "$work"
work=$(cd "$work" && pwd)
# the source's directory, as apt-get source named it (mpich-4.0.2,
# mpich-4.3.0+really4.2.1), recorded once it is complete
src=
[ -s "$work/.newrma-source" ] && src=$work/$(cat "$work/.newrma-source")
suite=$src/test/mpi
obj=$work/obj
logs=$work/logs
rundir=$work/run
mkdir -p "$obj" "$logs" "$rundir" "$work/include"

die() { echo "ERROR: $*" >&2; echo "0 passed, 1 failed"; exit 1; }
note() { echo "==> $*"; }

# ------------------------------------------------------------ 1. packages
[ "$(id -u)" -eq 0 ] || die "run me as root (apt-get install, apt-get source)"
export DEBIAN_FRONTEND=noninteractive
packages="dpkg-dev xz-utils gcc make bc libopenmpi-dev openmpi-bin libucx-dev libhwloc-dev
          autoconf automake libtool"
missing=$(missing_packages $packages)
need_source=yes
[ -n "$src" ] && [ -f "$suite/rma/testlist.in" ] && need_source=no
# another release's source (bookworm's inside the Debian 13 root): its own
# deb-src entry
own_release=$(. /etc/os-release && echo "$VERSION_CODENAME")
if [ $need_source = yes ] && [ "$mpich_release" != "$own_release" ]; then
    echo "deb-src http://deb.debian.org/debian $mpich_release main" \
        > "/etc/apt/sources.list.d/newrma-mpich-$mpich_release.list"
elif [ $need_source = yes ] && ! has_deb_src; then
    note "no deb-src entry found: adding /etc/apt/sources.list.d/debian-src.sources"
    add_deb_src
fi
if [ -n "$missing" ] || [ $need_source = yes ]; then
    note "apt-get update${missing:+, installing:$missing}"
    apt-get update -q > "$logs/apt.log" 2>&1 || { tail -20 "$logs/apt.log"; die "apt-get update failed"; }
    if [ -n "$missing" ]; then
        apt-get install -y -q --no-install-recommends $missing >> "$logs/apt.log" 2>&1 \
            || { tail -20 "$logs/apt.log"; die "apt-get install failed"; }
    fi
fi

# -------------------------------------------------------------- 2. source
if [ $need_source = yes ]; then
    note "fetching MPICH's source (apt-get source mpich) into $work"
    rm -rf "$work/.newrma-source" "$work"/mpich-*/
    # apt-get source reuses already downloaded files that match the checksums
    (cd "$work" && apt-get source -q "mpich/$mpich_release" > "$logs/source.log" 2>&1) \
        || { tail -20 "$logs/source.log"; die "apt-get source mpich failed"; }
    src=$(ls -d "$work"/mpich-*/ 2>/dev/null | head -1); src=${src%/}
    suite=$src/test/mpi
    [ -n "$src" ] && [ -f "$suite/rma/testlist.in" ] \
        || die "apt-get source mpich gave no test/mpi/rma/testlist.in (got: $(ls "$work" | tr '\n' ' '))"
    basename "$src" > "$work/.newrma-source"
fi
# Debian's upstream version, without a "+really" prefix: 4.0.2, 4.2.1
mpich_version=${src##*/mpich-}; mpich_version=${mpich_version##*really}
[ -f "$exclude_file" ] || die "$exclude_file is missing"

# ---------------------------------------------------- 3. newrma and mpirun
if [ -n "$component_dir" ]; then
    [ -e "$component_dir/mca_osc_newrma.so" ] || die "no mca_osc_newrma.so in $component_dir"
else
    component_dir=$build/install/lib/openmpi
fi
if [ "$component_dir" = "$build/install/lib/openmpi" ] \
   && { [ "$osc" = newrma ] || [ ! -e "$component_dir/mca_osc_newrma.so" ]; }; then
    note "building newrma (contrib/build.sh, log: $logs/newrma-build.log)"
    mkdir -p "$build"
    NEWRMA_OBJ_DIR=$build/obj flock "$build/.build.lock" "$top/contrib/build.sh" "$build/install" \
        > "$logs/newrma-build.log" 2>&1 \
        || { tail -30 "$logs/newrma-build.log"; die "building newrma failed"; }
fi
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$component_dir:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# keep the test traffic on this machine
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
mpi_api=$(ompi_info --parsable | sed -n 's/^mpi-api:version:full://p')   # e.g. 3.1.0
# the node modes: "mpirun" is contrib/test-nodes.sh's (one orted per node,
# ranks placed by node, $per_node slots each)
if [ -n "$node_layout" ]; then
    if ! "$top/contrib/test-nodes.sh" status > /dev/null 2>&1 \
       || [ "$("$top/contrib/test-nodes.sh" status | wc -l)" -lt "$nodes" ]; then
        "$top/contrib/test-nodes.sh" up "$nodes" > "$logs/test-nodes.log" 2>&1 \
            || { cat "$logs/test-nodes.log"; die "could not bring the test nodes up"; }
        trap '"$top/contrib/test-nodes.sh" down' EXIT
    fi
    export PATH=/run/newrma-nodes/bin:$PATH NEWRMA_NODES_PER_NODE=$per_node
    shm_dir=$("$top/contrib/test-nodes.sh" shm-dirs | head -1)
fi

# ------------------------------------------------------ 4. the test list
# Entries "program np key=value..."; @largetest@ entries (1 GiB windows) run
# only when memory allows, see below; other @...@ prefixes (none in 4.0.2's
# list) are treated the same way as configure's default: commented out.
entries=()
while read -r line; do
    line=${line%%#*}
    [ -n "${line// /}" ] || continue
    entries+=("$line")
done < "$suite/rma/testlist.in"

# program -> "sources|cppflags" from rma/Makefile.am (continuation lines joined)
am_joined=$work/obj/Makefile.am.joined
awk '{ l = l $0; if (sub(/\\$/, "", l)) next; print l; l = "" }' "$suite/rma/Makefile.am" > "$am_joined"
am_var() { sed -n "s/^$1[[:space:]]*=[[:space:]]*//p" "$am_joined" | head -1; }

selected() {
    [ ${#patterns[@]} -eq 0 ] && return 0
    local p
    for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == $p ]] && return 0
    done
    return 1
}

# ------------------------------------------------------------ 5. building
# Our own config header: what the suite's util/ and rma/ sources test for,
# true of Debian 12 and 13 with gcc and Open MPI 4.1 and 5.0.  USE_STRICT_MPI: Open MPI is not
# MPICH, so checks of MPICH-only behaviour are left out (configure's
# --enable-strictmpi, the mode for testing other implementations).
conf=$work/include/mpitestconf.h
cat > "$conf.new" <<'EOF'
/* Written by newrma's contrib/mpich-rma-suite.sh in place of the header
 * MPICH's configure makes: Debian 12 or 13, gcc, Open MPI 4.1 or 5.0. */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_USLEEP 1
#define HAVE_STRDUP 1
#define HAVE__BOOL 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_IO 1
#define HAVE_MPI_SPAWN 1
#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_MPI_OFFSET 8
#define POINTERINT_t long
#define STDC_HEADERS 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#define USE_STRICT_MPI 1
#endif
EOF
if cmp -s "$conf.new" "$conf"; then rm -f "$conf.new"; else mv "$conf.new" "$conf"; fi

# A makefile for exactly the programs the test list names (make -j2 -k,
# incremental): libmtest.a from util/ (mtest.c, mtest_common.c,
# mtest_single.c, dtypes.c), each program from its Makefile.am sources and
# per-program -D flags.
programs=()
for e in "${entries[@]}"; do
    p=${e%% *}; p=${p##*@}
    case " ${programs[*]} " in *" $p "*) ;; *) programs+=("$p") ;; esac
done
mk=$obj/Makefile
{
    echo "# generated by contrib/mpich-rma-suite.sh"
    echo "CC = mpicc"
    echo "CFLAGS = -O2 -g -w"
    echo "CPPFLAGS = -I$work/include -I$suite/include"
    echo "UTIL = $suite/util"
    echo "RMA = $suite/rma"
    echo "CONF = $conf"
    echo ".PHONY: all"
    echo "all: ${programs[*]}"
    for u in mtest mtest_common mtest_single dtypes; do
        echo "util_$u.o: \$(UTIL)/$u.c \$(CONF)"
        printf '\t$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<\n'
    done
    echo "libmtest.a: util_mtest.o util_mtest_common.o util_mtest_single.o util_dtypes.o"
    printf '\trm -f $@ && ar rcs $@ $^\n'
    for p in "${programs[@]}"; do
        srcs=$(am_var "${p}_SOURCES"); [ -n "$srcs" ] || srcs="$p.c"
        flags=$(am_var "${p}_CPPFLAGS"); flags=${flags//\$(AM_CPPFLAGS)/}
        objs=""
        for s in $srcs; do
            case "$s" in *.c) ;; *) continue ;; esac
            o="${p}__${s%.c}.o"
            objs="$objs $o"
            echo "$o: \$(RMA)/$s \$(CONF)"
            printf '\t$(CC) $(CPPFLAGS) %s $(CFLAGS) -c -o $@ $<\n' "$flags"
        done
        echo "$p:$objs libmtest.a"
        printf '\t$(CC) $(CFLAGS) -o $@ $^ -lm\n'
    done
} > "$mk.new"
if cmp -s "$mk.new" "$mk"; then
    rm -f "$mk.new"
else
    mv "$mk.new" "$mk"
    rm -f "$obj"/*.o "$obj"/libmtest.a   # other flags or sources: rebuild everything
fi
note "building the suite (make -j2 -k in $obj, log: $logs/build.log)"
make -C "$obj" -k -j2 > "$logs/build.log" 2>&1 || echo "    some programs did not build (see $logs/build.log)"

# --------------------------------------------------------- 6. exclusions
# contrib/mpich-rma-exclude.txt: "name reason" per line, # comments;
# "name@ompi5 reason" only against Open MPI 5.0 (--ompi5).
declare -A excluded=()
while read -r name reason; do
    case "$name" in ''|'#'*) continue ;; esac
    case "$name" in *@ompi5) [ $ompi5 = yes ] || continue; name=${name%@ompi5} ;; esac
    excluded[$name]=$reason
done < "$exclude_file"

# @largetest@ entries (1 GiB windows, one per process): run only with enough
# free memory and /dev/shm (a node's, in the node modes) for np GiB plus a
# GiB to spare.
large_ok() {
    local np=$1 need_kb avail_kb shm_kb
    need_kb=$(( (np + 1) * 1024 * 1024 ))
    avail_kb=$(sed -n 's/^MemAvailable:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo)
    shm_kb=$(df -Pk "$shm_dir" 2>/dev/null | awk 'NR==2 {print $4}')
    [ "${avail_kb:-0}" -ge $need_kb ] && [ "${shm_kb:-0}" -ge $need_kb ]
}

# "3.1.0" >= "3.0"?
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

# ---------------------------------------------------------------- 7. run
echo "MPICH $mpich_version rma suite: --mca osc $osc, mode $mode${extra_mca[*]:+, ${extra_mca[*]}}, np <= $max_np, time limit ${timeout_s}s unless timeLimit="
passed=0; failed=0; skipped=0
failures=()
for e in "${entries[@]}"; do
    read -r -a f <<< "$e"
    prog=${f[0]}
    np=${f[1]:-$max_np}
    large=no
    case "$prog" in
        @largetest@*) large=yes; prog=${prog#@largetest@} ;;
        @*@*) prog=${prog#@*@}; selected "$prog" || continue
              printf 'SKIP %-58s np=%-5s (entry of configure option %s, off by default)\n' "$prog" "$np" "${f[0]%"$prog"}"
              skipped=$((skipped + 1)); continue ;;
    esac
    selected "$prog" || continue
    args=(); envs=(); mpiexecargs=(); limit=$timeout_s; needver=
    for kv in "${f[@]:2}"; do
        case "$kv" in
            arg=*) args+=("${kv#arg=}") ;;
            env=*) envs+=("${kv#env=}") ;;
            mpiexecarg=*) mpiexecargs+=("${kv#mpiexecarg=}") ;;
            timeLimit=*) limit=${kv#timeLimit=} ;;
            mpiversion=*) needver=${kv#mpiversion=} ;;
            *) ;;   # xfail=, strict=, resultTest=, mem=: not used by the rma list
        esac
    done
    label="$prog${args[*]:+ ${args[*]}}"
    run_np=$np; [ "$np" -gt $max_np ] && run_np=$max_np
    np_col=$run_np; [ "$np" != "$run_np" ] && np_col="$run_np($np)"
    if [ -n "${excluded[$prog]+x}" ] && { [ $large = no ] || ! large_ok "$run_np"; }; then
        printf 'SKIP %-58s np=%-5s (%s)\n' "$label" "$np_col" "${excluded[$prog]}"
        skipped=$((skipped + 1)); continue
    fi
    if [ $large = yes ] && ! large_ok "$run_np"; then
        printf 'SKIP %-58s np=%-5s (large test: not enough memory)\n' "$label" "$np_col"
        skipped=$((skipped + 1)); continue
    fi
    if [ -n "$needver" ] && ! version_ge "$mpi_api" "$needver"; then
        printf 'SKIP %-58s np=%-5s (needs MPI %s, Open MPI offers %s)\n' "$label" "$np_col" "$needver" "$mpi_api"
        skipped=$((skipped + 1)); continue
    fi
    bin=$obj/$prog
    if [ ! -x "$bin" ]; then
        printf 'FAIL %-58s np=%-5s (does not compile: see %s)\n' "$label" "$np_col" "$logs/build.log"
        failed=$((failed + 1)); failures+=("$label"); continue
    fi
    tag=$(printf '%s' "$label" | tr -c 'A-Za-z0-9_.=-' '_')
    out=$logs/$tag.np$run_np.$osc.$mode.log
    xargs_env=()
    for kv in "${envs[@]}"; do xargs_env+=(-x "$kv"); done
    start=$EPOCHREALTIME
    (cd "$rundir" && timeout -k 10 "$limit" mpirun --oversubscribe -np "$run_np" --mca osc "$osc" \
        "${mode_mca[@]}" "${extra_mca[@]}" "${xargs_env[@]}" "${mpiexecargs[@]}" \
        "$bin" "${args[@]}") > "$out" 2>&1
    rc=$?
    secs=$(echo "$EPOCHREALTIME - $start" | bc)
    secs=$(printf '%.1f' "$secs")
    if [ $rc -eq 0 ] && grep -qE '^[[:space:]]*No Errors[[:space:]]*$' "$out"; then
        printf 'PASS %-58s np=%-5s %6ss\n' "$label" "$np_col" "$secs"
        passed=$((passed + 1))
    else
        case $rc in
            0) why="exit 0 without No Errors" ;;
            124|137) why="timed out after ${limit}s" ;;
            *) why="exit $rc" ;;
        esac
        printf 'FAIL %-58s np=%-5s %6ss  (%s; log: %s)\n' "$label" "$np_col" "$secs" "$why" "$out"
        grep -v '^[[:space:]]*$' "$out" | head -8 | sed 's/^/    | /'
        failed=$((failed + 1)); failures+=("$label")
    fi
done
if [ ${#failures[@]} -gt 0 ]; then
    echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
