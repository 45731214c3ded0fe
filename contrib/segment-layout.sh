#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Print the node segment's layout and size for N local ranks (default 2 4 8 16 32):
#   contrib/segment-layout.sh [N...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/run.sh" segment_layout > /dev/null || { echo "build failed (see build/test-logs)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$top/build/install/lib/openmpi:$ompi_pkglibdir"
[ $# -gt 0 ] || set -- 2 4 8 16 32
mpirun -np 1 "$top/tests/bin/segment_layout" print "$@"
