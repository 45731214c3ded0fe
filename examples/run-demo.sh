#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Build and install osc/newrma, then run the distributed-hash-table demo on 4
# ranks with newrma and with Open MPI's own default selection, side by side,
# and the notified-RMA halo exchange (examples/notify_halo.c: notified puts,
# put + flush + flag, PSCW; about a second in all) with both.
#   examples/run-demo.sh [inserts-per-rank] [reads-per-rank]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/install-deps.sh"
prefix=$top/build/install
mkdir -p "$top/build"   # a fresh clone has no build/ yet: the log goes there
"$top/contrib/build.sh" "$prefix" > "$top/build/demo-build.log" 2>&1 \
    || { tail -30 "$top/build/demo-build.log"; exit 1; }
mkdir -p "$top/examples/bin"
mpicc -O2 -Wall -Wextra -o "$top/examples/bin/dht" "$top/examples/dht.c"
mpicc -O2 -Wall -Wextra -I"$prefix/include" -o "$top/examples/bin/notify_halo" "$top/examples/notify_halo.c" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lmpix_newrma

ompi_pkglibdir=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')
export OMPI_MCA_mca_base_component_path="$prefix/lib/openmpi:$ompi_pkglibdir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
: > "$top/build/demo.out"
args=("${1:-20000}" "${2:-40000}")
# label | --mca osc value
for run in "osc/newrma|newrma" "Open MPI's default selection (newrma excluded)|^newrma" "osc/sm, Open MPI's fastest here|sm"; do
    DHT_OSC_LABEL=${run%%|*} mpirun --oversubscribe -np 4 --mca osc "${run##*|}" \
        "$top/examples/bin/dht" "${args[@]}" | tee -a "$top/build/demo.out"
done
awk 'BEGIN { n = 0 } /throughput/ { ins[n] = $3; rd[n] = $6; n++ }
     END { for (i = 1; i < n; i++) if (ins[i] > 0 && rd[i] > 0)
               printf "newrma / run %d: inserts %.2fx, reads %.2fx\n", i + 1, ins[0] / ins[i], rd[0] / rd[i] }' \
    "$top/build/demo.out"
echo
# the same checksum three ways on each, or notify_halo exits non-zero (and set -e stops here)
for run in "osc/newrma|newrma" "Open MPI's default selection (newrma excluded)|^newrma"; do
    HALO_OSC_LABEL=${run%%|*} mpirun --oversubscribe -np 4 --mca osc "${run##*|}" "$top/examples/bin/notify_halo"
done
