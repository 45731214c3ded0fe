#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Check that osc/newrma builds and works IN TREE: copied to
# ompi/mca/osc/newrma of Open MPI's source as Debian ships it (`apt-get
# source openmpi`), built by Open MPI's own autogen.pl / configure / make,
# then checked with ompi_info and a small RMA program under mpirun.
#
#   contrib/check-intree.sh [--ompi 4|5] [WORKDIR]
#
#   --ompi 4  Open MPI 4.1.4, Debian 12's, on this machine (the default);
#             WORKDIR defaults to build/intree (git-ignored)
#   --ompi 5  Open MPI 5.0.7, Debian 13's, inside the Debian 13 root of
#             contrib/ompi5-root.sh (made if missing); the script runs itself
#             again in there.  Open MPI's bundled PRRTE is built, Debian 13's
#             PMIx, libevent and hwloc are used (as Debian's package does).
#             WORKDIR must be inside the repository (the root sees only
#             that); it defaults to build/intree5
#
# Runs as root (installs what it needs with apt-get, on this Debian 12
# machine or in the root).  Re-running reuses the extracted source and,
# unless configure.m4 or Makefile.am changed, the previous autogen/configure,
# and rebuilds incrementally.  Logs: WORKDIR/logs/<phase>.log.  Exits 0 only
# if every phase passed.  The compiles take minutes: on a shared machine run
# it under `nice -n 19` (docs/build.md, "In tree").
#
# Environment knobs:
#   NEWRMA_INTREE_JOBS=N         make -j N (default 2)
#   NEWRMA_INTREE_CONFIGURE=...  extra arguments for Open MPI's configure
#   NEWRMA_INTREE_TIMEOUT=S      time limit of the mpirun test (default 300)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/debian-source.sh"
series=4
if [ "${1:-}" = --ompi ]; then
    series=${2:-}
    shift 2 || true
fi
case $series in
    4) ompi_version=4.1.4; debian=12; default_work=$top/build/intree ;;
    5) ompi_version=5.0.7; debian=13; default_work=$top/build/intree5 ;;
    *) echo "usage: $0 [--ompi 4|5] [WORKDIR]" >&2; exit 2 ;;
esac
work=${1:-$default_work}
mkdir -p "$work"
work=$(cd "$work" && pwd)

# Open MPI 5.0.7 needs a newer PMIx than Debian 12's: run inside the Debian
# 13 root, where this repository is mounted at the same path.
root_marker=/etc/newrma-ompi5-root   # written by contrib/ompi5-root.sh make
if [ "$series" = 5 ] && [ ! -f $root_marker ]; then
    case $work/ in
        "$top"/*) ;;
        *) echo "check-intree: with --ompi 5, WORKDIR must be inside $top (the root sees only that)" >&2; exit 2 ;;
    esac
    "$top/contrib/ompi5-root.sh" make
    exec "$top/contrib/ompi5-root.sh" exec "$top/contrib/check-intree.sh" --ompi 5 "$work"
fi

src=$work/openmpi-$ompi_version
prefix=$work/install
logs=$work/logs
stamps=$work/stamps
jobs=${NEWRMA_INTREE_JOBS:-2}
run_timeout=${NEWRMA_INTREE_TIMEOUT:-300}
mkdir -p "$logs" "$stamps"

# ------------------------------------------------------------------ helpers
t_total=$SECONDS
phase=setup
phase_log=
phase_start=$SECONDS
summary=()

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
say() { printf '%s\n' "$*"; }
die() { say "ERROR: $*" >&2; exit 1; }

on_exit() {
    local rc=$?
    [ $rc -eq 0 ] && return 0
    say ""
    say "FAILED in phase '$phase' after $(fmt_secs $((SECONDS - phase_start))) (exit $rc)"
    if [ -n "$phase_log" ] && [ -s "$phase_log" ]; then
        say "---- last 40 lines of $phase_log ----"
        tail -n 40 "$phase_log"
        say "---- end of $phase_log ----"
    fi
    print_summary
    say "check-intree: FAILED (total $(fmt_secs $((SECONDS - t_total))))"
}
trap on_exit EXIT

# begin NAME: start timing a phase whose output goes to logs/NAME.log
begin() {
    phase=$1
    phase_start=$SECONDS
    phase_log=$logs/$1.log
    : > "$phase_log"
    say "==> [$(date +%H:%M:%S)] $1: $2 (log: $phase_log)"
}
# end [NOTE]: record the phase's duration
end() {
    local secs=$((SECONDS - phase_start))
    summary+=("$(printf '  %-10s %8s  %s' "$phase" "$(fmt_secs $secs)" "${1:-done}")")
    say "    $phase: ${1:-done} in $(fmt_secs $secs)"
    phase_log=
}
print_summary() {
    [ ${#summary[@]} -gt 0 ] || return 0
    say "Phase times:"
    printf '%s\n' "${summary[@]}"
}
# run CMD...: run a command with its output appended to the phase's log
run() {
    printf '+ %s\n' "$*" >> "$phase_log"
    "$@" >> "$phase_log" 2>&1
}

[ "$(id -u)" -eq 0 ] || die "run me as root (apt-get install, apt-get source)"
[ -r /etc/debian_version ] || die "this script expects Debian 12 (bookworm), or Debian 13 for --ompi 5"
say "check-intree: osc/newrma in Open MPI $ompi_version's tree"
say "  component: $top"
say "  work dir:  $work"

# --------------------------------------------------------------- 1. deps
begin deps "build dependencies and deb-src"
export DEBIAN_FRONTEND=noninteractive
packages="dpkg-dev xz-utils autoconf automake libtool flex perl make gcc g++
          pkg-config libucx-dev libhwloc-dev libevent-dev libpmix-dev zlib1g-dev"
missing=$(missing_packages $packages)
need_source=yes
[ -f "$src/.newrma-source-ok" ] && need_source=no
added_src=no
if ! has_deb_src; then
    # debian-source.sh adds Debian 12's source archive; the root gets
    # Debian 13's from contrib/ompi5-root.sh
    [ "$series" = 4 ] || die "no deb-src entry in the root: run contrib/ompi5-root.sh headers (it adds trixie's)"
    say "    no deb-src entry found: adding /etc/apt/sources.list.d/debian-src.sources"
    add_deb_src
    added_src=yes
fi
note="all present"
if [ -n "$missing" ] || [ $need_source = yes ] || [ $added_src = yes ]; then
    run apt-get update -q
    note="apt-get update"
fi
if [ -n "$missing" ]; then
    say "    installing:$missing"
    run apt-get install -y -q --no-install-recommends $missing
    note="$note, installed:$missing"
fi
end "$note"

# ------------------------------------------------------------- 2. source
begin source "Open MPI $ompi_version source (apt-get source openmpi)"
if [ $need_source = yes ]; then
    if [ -e "$src" ]; then
        say "    $src exists but is not a complete extraction: removing it"
        rm -rf "$src"
    fi
    # apt-get source reuses already downloaded files that match the checksums
    (cd "$work" && run apt-get source -q openmpi)
    [ -f "$src/autogen.pl" ] \
        || die "apt-get source openmpi did not give $src (Debian $debian has $ompi_version; got: $(ls -d "$work"/openmpi-* 2>/dev/null | tr '\n' ' '))"
    touch "$src/.newrma-source-ok"
    end "extracted $(basename "$src")"
else
    end "reused $src"
fi
IFS=. read -r v_major v_minor v_release <<<"$ompi_version"
grep -qx "major=$v_major" "$src/VERSION" && grep -qx "minor=$v_minor" "$src/VERSION" \
    && grep -qx "release=$v_release" "$src/VERSION" \
    || die "$src/VERSION is not Open MPI $ompi_version"

# --------------------------------------------------------------- 3. copy
begin copy "component sources into ompi/mca/osc/newrma"
dest=$src/ompi/mca/osc/newrma
mkdir -p "$dest"
shopt -s nullglob
files=("$top"/configure.m4 "$top"/Makefile.am "$top"/help-osc-newrma.txt "$top"/*.c "$top"/*.h)
shopt -u nullglob
for f in configure.m4 Makefile.am help-osc-newrma.txt; do
    [ -f "$top/$f" ] || die "$top/$f is missing"
done
changed=0
for f in "${files[@]}"; do
    b=$(basename "$f")
    # copy only what changed, so that make rebuilds only that
    if ! cmp -s "$f" "$dest/$b"; then
        run cp "$f" "$dest/$b"
        changed=$((changed + 1))
    fi
done
# drop sources that were removed from the component since the last copy
shopt -s nullglob
for f in "$dest"/*.c "$dest"/*.h; do
    [ -e "$top/$(basename "$f")" ] || { run rm -f "$f"; changed=$((changed + 1)); }
done
shopt -u nullglob
end "${#files[@]} files, $changed changed"

# ----------------------------------------------------------- 4. autogen
# autogen.pl must run again when the build description of any component
# changed; C file changes only need make.
autogen_inputs=$(cd "$dest" && cat configure.m4 Makefile.am | md5sum | cut -d' ' -f1)
# Open MPI's own tarball is a "distribution tarball", so autogen.pl wants
# --force.  What configure takes from Debian instead of Open MPI's embedded
# copies (PMIx, libevent, hwloc, as Debian's package does) and ROMIO are
# left out, and so is OpenSHMEM: this saves their own autogen runs.  5.0's
# PRRTE (Debian 13 builds the bundled one too) stays; 5.0's autogen.pl has
# no --no-oshmem (configure's --disable-oshmem does it).
if [ "$series" = 4 ]; then
    # shellcheck disable=SC2054  # the commas are inside one argument
    autogen_args=(--force --no-oshmem --exclude=pmix-pmix3x,event-libevent2022,io-romio321)
else
    # shellcheck disable=SC2054
    autogen_args=(--force --no-3rdparty openpmix,libevent,hwloc --exclude=io-romio341)
fi
autogen_key="$autogen_inputs ${autogen_args[*]}"
begin autogen "Open MPI's ./autogen.pl ${autogen_args[*]}"
if [ -x "$src/configure" ] && [ -f "$stamps/autogen" ] && [ "$(cat "$stamps/autogen")" = "$autogen_key" ] \
   && grep -q 'ompi/mca/osc/newrma/Makefile' "$src/configure"; then
    end "up to date, skipped"
else
    rm -f "$stamps/autogen" "$stamps/configure"
    (cd "$src" && run ./autogen.pl "${autogen_args[@]}")
    grep -q 'MCA_ompi_osc_newrma_CONFIG\|ompi/mca/osc/newrma/Makefile' "$src/configure" \
        || die "autogen.pl did not pick up ompi/mca/osc/newrma (see $logs/autogen.log)"
    printf '%s\n' "$autogen_key" > "$stamps/autogen"
    end
fi

# --------------------------------------------------------- 5. configure
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# shellcheck disable=SC2054  # the commas are inside one argument
configure_args=(
    --prefix="$prefix"
    --disable-mpi-fortran --disable-oshmem --disable-mpi-java --disable-io-romio
    # Debian's libevent and hwloc (and PMIx, below), as Debian's own Open MPI
    --with-libevent=external --with-hwloc=external
    # no batch systems, no InfiniBand/OFI/PSM here: skip those checks
    --without-slurm --without-tm --without-lsf --without-sge --without-alps
    --without-verbs --without-ofi --without-psm --without-psm2 --without-portals4
    # components that cannot matter for an osc component: UCX as a BTL
    # (pml/ucx and osc/ucx are still built) and message-logging FT
    --enable-mca-no-build=btl-uct,vprotocol-pessimist
)
# Debian's PMIx: Debian 12's (4) by its directory; Debian 13's (5) through
# pkg-config as Debian's package does, because 5.0's bundled PRRTE also
# needs PMIx's internal headers (src/util/pmix_argv.h), which only pmix.pc's
# second include directory (pmix2/include/pmix) holds
if [ "$series" = 4 ]; then
    configure_args+=(--with-pmix="/usr/lib/$multiarch/pmix2")
else
    configure_args+=(--with-pmix=external)
fi
if pkg-config --exists ucx 2>/dev/null; then
    configure_args+=(--with-ucx)
else
    configure_args+=(--without-ucx)
fi
# shellcheck disable=SC2206
configure_args+=(${NEWRMA_INTREE_CONFIGURE:-})
configure_key="$(cat "$stamps/autogen") ${configure_args[*]}"
begin configure "Open MPI's ./configure"
if [ -f "$src/config.status" ] && [ -f "$src/Makefile" ] && [ -f "$src/ompi/mca/osc/newrma/Makefile" ] \
   && [ -f "$stamps/configure" ] && [ "$(cat "$stamps/configure")" = "$configure_key" ]; then
    end "up to date, skipped"
else
    rm -f "$stamps/configure"
    (cd "$src" && run ./configure "${configure_args[@]}")
    printf '%s\n' "$configure_key" > "$stamps/configure"
    end
fi
# what configure decided for newrma
grep -q 'ompi/mca/osc/newrma' "$src/config.status" \
    || die "Open MPI's configure did not configure ompi/mca/osc/newrma"
if [ -s "$logs/configure.log" ]; then
    grep -E '^checking .*osc:newrma' "$logs/configure.log" | sed 's/^/    /' || true
    grep -q '^checking if MCA component osc:newrma can compile... yes' "$logs/configure.log" \
        || die "Open MPI's configure will not build osc/newrma (see $logs/configure.log)"
fi

# -------------------------------------------------------------- 6. build
# configure builds newrma as a DSO (the default) or into libmpi
# (--enable-mca-static=osc-newrma); the Makefile says which.
newrma_mk=$src/ompi/mca/osc/newrma/Makefile
if grep -q '^component_install = mca_osc_newrma.la' "$newrma_mk"; then
    newrma_mode=dso
else
    newrma_mode=static
fi
begin build "make -j$jobs install (osc/newrma: $newrma_mode)"
if [ $newrma_mode = static ]; then
    # a DSO left by an earlier build would be loaded beside the static copy
    find "$prefix/lib" -maxdepth 2 -name 'mca_osc_newrma.*' -print -delete 2>/dev/null >> "$phase_log" || true
fi
(cd "$src" && run make -j"$jobs" install)
if [ $newrma_mode = dso ]; then
    # the component directory is lib/openmpi3 with Debian's libdir.patch
    built=$(find "$prefix/lib" -maxdepth 2 -name mca_osc_newrma.so 2>/dev/null | head -1)
    [ -n "$built" ] || die "make install did not install mca_osc_newrma.so under $prefix/lib"
    end "installed $built"
else
    # (no "nm | grep -q": with pipefail, grep's early exit fails the pipe)
    libmpi_syms=$(nm -D "$prefix/lib/libmpi.so" 2>/dev/null || true)
    grep -q 'mca_osc_newrma_component' <<<"$libmpi_syms" \
        || die "osc/newrma was configured static but $prefix/lib/libmpi.so does not contain it"
    end "newrma built into $prefix/lib/libmpi.so"
fi

# ------------------------------------------------------------- 7. verify
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# keep the test's traffic on this machine; ignore any user-level MCA
# settings and out-of-tree newrma builds
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
unset OMPI_MCA_mca_base_component_path OPAL_PREFIX LD_LIBRARY_PATH || true
export HOME="$work/home"; mkdir -p "$HOME"

begin ompi_info "ompi_info --param osc newrma --level 9"
run "$prefix/bin/ompi_info" --param osc newrma --level 9
grep -q 'MCA osc: newrma' "$phase_log" || die "ompi_info does not list the osc newrma component"
nparams=$(grep -c 'MCA osc newrma: parameter "osc_newrma_' "$phase_log" || true)
[ "$nparams" -gt 0 ] || die "ompi_info lists no osc_newrma_* parameter"
grep -q 'parameter "osc_newrma_priority"' "$phase_log" || die "ompi_info does not list osc_newrma_priority"
grep 'MCA osc: newrma' "$phase_log" | sed 's/^ */    /'
end "component listed with $nparams parameters"

begin rma_test "compile and run a 2-rank RMA program with --mca osc newrma"
test_dir=$work/test
mkdir -p "$test_dir"
cat > "$test_dir/intree_rma.c" <<'EOF'
/* check-intree: MPI_Put under fence (MPI_Win_allocate) and under
 * lock/unlock (MPI_Win_create), 2 ranks, each rank checks what it got. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

static int errors = 0;

#define CHECK(cond, ...) do { if (!(cond)) { errors++; \
    fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

int main(int argc, char **argv)
{
    int rank, size, i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank;

    /* 1. MPI_Win_allocate + MPI_Put under MPI_Win_fence */
    int *base = NULL;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
    for (i = 0; i < N; i++) base[i] = -1;
    int src[N];
    for (i = 0; i < N; i++) src[i] = 1000 * rank + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, peer, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (i = 0; i < N; i++)
        CHECK(base[i] == 1000 * peer + i, "fence: base[%d] = %d, expected %d", i, base[i], 1000 * peer + i);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);

    /* 2. MPI_Win_create + MPI_Put under MPI_Win_lock/unlock */
    int *mem = malloc(N * sizeof(int));
    for (i = 0; i < N; i++) mem[i] = -1;
    MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < N; i++) src[i] = 7000 + 100 * rank + i;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
    MPI_Put(src, N, MPI_INT, peer, 0, N, MPI_INT, win);
    MPI_Win_unlock(peer, win);
    MPI_Barrier(MPI_COMM_WORLD);
    /* read the own window memory under a lock on oneself */
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (i = 0; i < N; i++)
        CHECK(mem[i] == 7000 + 100 * peer + i, "lock: mem[%d] = %d, expected %d", i, mem[i], 7000 + 100 * peer + i);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(mem);

    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0) printf(" No Errors\n");
        else printf(" Found %d errors\n", all);
    }
    MPI_Finalize();
    return all != 0;
}
EOF
run "$prefix/bin/mpicc" -Wall -O2 -o "$test_dir/intree_rma" "$test_dir/intree_rma.c"
# the program must use the in-tree build's libmpi, not the system's
run ldd "$test_dir/intree_rma"
grep -q "libmpi.so.* => $prefix/lib/libmpi.so" "$phase_log" \
    || die "$test_dir/intree_rma is not linked against $prefix/lib/libmpi.so"
rc=0
run timeout -k 10 "$run_timeout" "$prefix/bin/mpirun" --allow-run-as-root --oversubscribe -np 2 \
    --mca osc newrma "$test_dir/intree_rma" || rc=$?
[ $rc -eq 0 ] || die "mpirun exited $rc$([ $rc -eq 124 ] && echo " (timed out after ${run_timeout}s)")"
grep -q 'No Errors' "$phase_log" || die "the RMA program did not print 'No Errors'"
end "No Errors"

trap - EXIT
say ""
print_summary
say "  total      $(fmt_secs $((SECONDS - t_total)))"
say "check-intree: PASSED (osc/newrma builds in Open MPI $ompi_version's tree, ompi_info lists it, RMA test passes)"
