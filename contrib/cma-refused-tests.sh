#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Run the tests with single-copy access refused between processes (an
# LD_PRELOAD shim, contrib/cma-refused.c, does what Yama's ptrace_scope or
# seccomp would): create and dynamic windows must fall back to the
# active-message path over the node's FIFOs at creation, and work.
#   contrib/cma-refused-tests.sh [tests/run.sh arguments...]
# (default: mode default; Open MPI's vader BTL is kept off the refused calls)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$top/build"
cc -shared -fPIC -O2 -o "$top/build/cma-refused.so" "$top/contrib/cma-refused.c"
[ $# -gt 0 ] || set -- --mode default
OMPI_MCA_mca_base_env_list="LD_PRELOAD=$top/build/cma-refused.so" \
    exec "$top/tests/run.sh" --mca btl_vader_single_copy_mechanism none "$@"
