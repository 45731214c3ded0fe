#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Open MPI 5.0.x on a Debian 12 machine from Debian's packages only: a
# Debian 13 (trixie) root made with mmdebstrap, holding openmpi-bin,
# libopenmpi-dev (5.0.7), libucx-dev, libhwloc-dev and the build tools, and
# entered with chroot in a private mount namespace where /proc, /sys
# (read-only), /dev, /dev/shm and this repository (at the same path as
# outside) are mounted.  The mounts belong to that namespace, so they go away
# with the command however it ends; nothing stays mounted on the host.
# Root only (mmdebstrap's root mode, mounts, chroot).  docs/ompi5.md.
#
#   contrib/ompi5-root.sh make [DIR]     make the root in DIR (default
#                                        $NEWRMA_OMPI5_ROOT or
#                                        /var/lib/newrma/trixie); idempotent:
#                                        nothing to do if it is complete
#   contrib/ompi5-root.sh exec CMD...    run CMD inside the root, in the
#                                        current directory if it is inside
#                                        the repository, else in /root
#   contrib/ompi5-root.sh shell          an interactive shell inside the root
#   contrib/ompi5-root.sh check          time entering the root, mpirun
#                                        --version, ompi_info and a 2-rank
#                                        mpirun (as root, oversubscribed)
#   contrib/ompi5-root.sh status         say whether the root is complete
#                                        (exit 1 if not) and its Open MPI
#   contrib/ompi5-root.sh headers        put the internal headers Debian's
#                                        libopenmpi-dev 5.0.7 lacks (taken
#                                        from Debian 13's openmpi source
#                                        package) in the root's
#                                        /usr/local/include/ompi5-missing
#   contrib/ompi5-root.sh remove [DIR]   delete the root
#
# The root's directory is DIR for make and remove, else $NEWRMA_OMPI5_ROOT,
# else /var/lib/newrma/trixie.  Inside, the environment is reset (PATH, HOME,
# TERM, LANG) except for variables named OMPI_*, PRTE_*, PMIX_*, UCX_* and
# NEWRMA_*, which pass through; "exec env VAR=... CMD" sets
# others.
#
# How long it takes (docs/ompi5.md): make downloads about 190 MB from
# deb.debian.org and took 31 s here (772 MB on disk); entering takes 50 ms;
# headers downloads 26 MB and takes a few seconds.
set -euo pipefail

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
top=$(cd "$(dirname "$0")/.." && pwd)
default_dir=${NEWRMA_OMPI5_ROOT:-/var/lib/newrma/trixie}
suite=trixie
mirror=${NEWRMA_OMPI5_MIRROR:-http://deb.debian.org/debian}
packages="openmpi-bin libopenmpi-dev libucx-dev libhwloc-dev gcc libc6-dev make autoconf automake libtool pkg-config xz-utils bc mount"
ready=etc/newrma-ompi5-root   # written last by make: the root is complete

die() { echo "ompi5-root: $*" >&2; exit 1; }
say() { echo "ompi5-root: $*" >&2; }
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap, mounts, chroot)"; }
usage() { sed -n '/^#   contrib/,/^# How long/p' "$self" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

# Seconds since the epoch with milliseconds, and a duration from a start.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f s", b - a }'; }

complete() { [ -f "$1/$ready" ]; }

do_make() {
    local dir=$1 t0 t
    need_root
    if complete "$dir"; then
        say "$dir is complete: nothing to do"
        return 0
    fi
    t0=$(now)
    if ! command -v mmdebstrap >/dev/null; then
        t=$(now)
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap
        say "installed mmdebstrap in $(since "$t")"
    fi
    # mmdebstrap wants an empty or missing target: build aside, then rename,
    # so an interrupted make leaves no half root that looks like one.
    local tmp=$dir.partial
    rm -rf --one-file-system "$tmp"
    mkdir -p "$(dirname "$dir")"
    t=$(now)
    # Debian 12's debian-archive-keyring (2023.3+deb12u1 and later) has trixie's keys.
    mmdebstrap --mode=root --variant=apt --aptopt='APT::Install-Recommends "false"' \
        --include="${packages// /,}" "$suite" "$tmp" "$mirror"
    say "mmdebstrap (download, extract, configure) took $(since "$t")"
    rm -rf --one-file-system "$dir"
    mv "$tmp" "$dir"
    # shellcheck disable=SC2016
    chroot "$dir" dpkg-query -W -f='${Package} ${Version}\n' openmpi-bin libopenmpi-dev libucx-dev gcc > "$dir/$ready"
    say "made $dir ($(du -sh --one-file-system "$dir" | cut -f1)) in $(since "$t0"):"
    sed 's/^/  /' "$dir/$ready" >&2
}

# Inside a private mount namespace (unshare -m): mount, chroot, run.
do_inside() {
    local dir=$1 cwd=$2; shift 2
    mount --make-rprivate /
    mount -t proc proc "$dir/proc"
    mount --rbind /sys "$dir/sys"
    mount -o remount,bind,ro "$dir/sys" 2>/dev/null || true
    mount --bind /dev "$dir/dev"
    mount --bind /dev/pts "$dir/dev/pts" 2>/dev/null || true
    mount --bind /dev/shm "$dir/dev/shm"
    mkdir -p "$dir$top"
    mount --bind "$top" "$dir$top"
    local keep=() v
    for v in $(compgen -e); do
        case $v in OMPI_*|PRTE_*|PMIX_*|UCX_*|NEWRMA_*) keep+=("$v=${!v}") ;; esac
    done
    # shellcheck disable=SC2016
    exec chroot "$dir" /usr/bin/env -i \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 "${keep[@]}" \
        /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$cwd" "$@"
}

do_exec() {
    local dir=$default_dir cwd=/root
    need_root
    complete "$dir" || die "no complete root in $dir (contrib/ompi5-root.sh make)"
    [ $# -gt 0 ] || die "exec: no command"
    case $PWD/ in "$top"/*) cwd=$PWD ;; esac
    exec unshare --mount --propagation private -- "$self" _inside "$dir" "$cwd" "$@"
}

do_check() {
    local t
    t=$(now); do_exec_sub true;                      say "enter and leave: $(since "$t")"
    t=$(now); do_exec_sub mpirun --version | head -1; say "mpirun --version: $(since "$t")"
    t=$(now); do_exec_sub sh -c 'ompi_info | grep "MCA osc"'; say "ompi_info | grep osc: $(since "$t")"
    t=$(now)
    do_exec_sub env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun --oversubscribe -np 2 hostname
    say "mpirun --oversubscribe -np 2 hostname: $(since "$t")"
}
do_exec_sub() { "$self" exec "$@"; }

# Debian's libopenmpi-dev 5.0.7 installs opal_config.h naming
# opal/mca/threads/pthreads/threads_pthreads_{mutex,threads,tsd}.h (and
# timer_linux.h) as the implementation headers but not those files, so
# opal/mca/threads/mutex.h cannot be included; ompi/runtime/ompi_spc.h
# includes opal/include/opal/prefetch.h by its source path.  Take them from
# the same version's source package.
missing_headers="opal/mca/threads/pthreads/threads_pthreads.h
opal/mca/threads/pthreads/threads_pthreads_mutex.h
opal/mca/threads/pthreads/threads_pthreads_threads.h
opal/mca/threads/pthreads/threads_pthreads_tsd.h
opal/mca/timer/linux/timer_linux.h
opal/include/opal/prefetch.h"
do_headers() {
    local dir=$default_dir t
    need_root
    complete "$dir" || die "no complete root in $dir (contrib/ompi5-root.sh make)"
    t=$(now)
    echo "deb-src $mirror $suite main" > "$dir/etc/apt/sources.list.d/newrma-src.list"
    # shellcheck disable=SC2016,SC2086
    "$self" exec /bin/sh -ec '
        inc=/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi
        out=/usr/local/include/ompi5-missing
        src=/usr/local/src/openmpi
        apt-get update -q >/dev/null
        command -v xz >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q xz-utils >/dev/null
        mkdir -p "$src" "$out" && cd "$src"
        ls openmpi_*.orig.tar.* >/dev/null 2>&1 || apt-get source --download-only -q openmpi >/dev/null 2>&1
        tarball=$(ls openmpi_*.orig.tar.* | head -1)
        top=$(tar -tf "$tarball" | head -1 | cut -d/ -f1)
        want=
        for h in "$@"; do
            if [ -e "$inc/$h" ]; then echo "present: $h"; else want="$want $top/$h"; fi
        done
        [ -z "$want" ] || tar -xf "$tarball" -C "$out" --strip-components=1 $want
        for h in $want; do echo "added: $out/${h#*/}"; done' sh $missing_headers   # split on purpose: one argument a header
    say "headers took $(since "$t"); compile with -isystem /usr/local/include/ompi5-missing"
}

do_status() {
    local dir=$default_dir
    complete "$dir" || { echo "no complete root in $dir"; return 1; }
    echo "$dir ($(du -sh --one-file-system "$dir" | cut -f1)):"
    sed 's/^/  /' "$dir/$ready"
}

do_remove() {
    local dir=$1
    need_root
    [ -e "$dir" ] || [ -e "$dir.partial" ] || { say "nothing in $dir"; return 0; }
    # Mounts live in exec's private namespaces; refuse if one is visible here.
    if findmnt -rn -o TARGET | grep -q "^$dir\(\.partial\)\{0,1\}/"; then
        die "something is mounted under $dir; not removing"
    fi
    rm -rf --one-file-system "$dir" "$dir.partial"
    say "removed $dir"
}

[ $# -gt 0 ] || usage
cmd=$1; shift
case $cmd in
    make)    do_make "${1:-$default_dir}" ;;
    exec)    do_exec "$@" ;;
    shell)   do_exec /bin/bash -l ;;
    check)   do_check ;;
    status)  do_status ;;
    headers) do_headers ;;
    remove)  do_remove "${1:-$default_dir}" ;;
    _inside) do_inside "$@" ;;
    -h|--help|help) usage 0 ;;
    *) usage ;;
esac
