#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Shared by the checker scripts (sourced): contrib/sanitized-tests.sh
# (ASan+UBSan), contrib/thread-check-tests.sh (ThreadSanitizer) and
# contrib/valgrind-tests.sh (memcheck).  They run the test programs of
# tests/ one by one under mpirun, with the per-test metadata tests/run.sh
# honors ("newrma-test: np=..." and "mca=...").
# shellcheck shell=bash
top=${top:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
. "$top/contrib/newrma-modes.sh"

# checker_build OBJDIR CONFIGURE_ARGS...: configure (once) and install an
# instrumented component under OBJDIR/install; the log is OBJDIR/build.log.
# Serialized with tests/run.sh and contrib/build.sh, which share the lock.
checker_build() {
    local obj=$1; shift
    mkdir -p "$obj" "$top/build"
    if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ]; then
        (cd "$top" && flock "$top/build/.build.lock" ./autogen.sh) > "$obj/build.log" 2>&1 \
            || { tail -20 "$obj/build.log"; return 1; }
    fi
    (cd "$obj" && { { [ -f Makefile ] && [ Makefile -nt "$top/configure" ]; } \
                      || "$top/configure" --prefix="$obj/install" "$@"; } \
        && flock "$top/build/.build.lock" make -j2 install) >> "$obj/build.log" 2>&1 \
        || { tail -20 "$obj/build.log"; return 1; }
}

# checker_compile_tests NAME...: compile these test programs (all if none)
# into tests/bin the way tests/run.sh does, running none of them.
checker_compile_tests() {
    local out
    out=$("$top/tests/run.sh" --np "" --mode default "$@" 2>&1) || { printf '%s\n' "$out" | tail -20; return 1; }
}

# checker_env OBJDIR: mpirun environment for the component in OBJDIR/install.
checker_env() {
    local pkglib
    pkglib=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
    export OMPI_MCA_mca_base_component_path="$1/install/lib/openmpi:$pkglib"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
}

# checker_runnable NAME: a test program run on its own (not a helper of a
# script, not a test linked against the component's own library).
checker_runnable() {
    ! grep -q 'newrma-test:.*\(links-component\|helper\)' "$top/tests/$1.c"
}

# checker_runs_at NAME NP: NP is within the test's "np>=MIN", "np<=MAX" and
# "np=A,B" list, those it has (tests/run.sh reads them the same way).
checker_runs_at() {
    local meta min max
    meta=$(sed -n 's/.*newrma-test:.*np=\([0-9,]*\).*/\1/p' "$top/tests/$1.c" | head -1)
    min=$(sed -n 's/.*newrma-test:.*np>=\([0-9]*\).*/\1/p' "$top/tests/$1.c" | head -1)
    max=$(sed -n 's/.*newrma-test:.*np<=\([0-9]*\).*/\1/p' "$top/tests/$1.c" | head -1)
    [ -z "$meta" ] || case ",$meta,"  in *",$2,"*) ;; *) return 1 ;; esac
    [ -z "$min" ] || [ "$2" -ge "$min" ] || return 1
    [ -z "$max" ] || [ "$2" -le "$max" ] || return 1
}

# checker_mpirun_args NAME MODE: the mode's mpirun arguments and the test's
# own MCA parameters (those the mode does not set: Open MPI rejects one
# given twice), one word per line.
checker_mpirun_args() {
    local mode_args kv
    mode_args=$(newrma_one_node_mode_args "$2") || return 2
    # shellcheck disable=SC2086  # one word per line: split on purpose
    [ -z "$mode_args" ] || printf '%s\n' $mode_args
    for kv in $(sed -n 's/.*newrma-test:.*mca=\([^ ]*\).*/\1/p' "$top/tests/$1.c" | head -1 | tr ',' ' '); do
        case " $mode_args " in *" ${kv%%:*} "*) continue ;; esac
        printf '%s\n' --mca "${kv%%:*}" "${kv#*:}"
    done
}
