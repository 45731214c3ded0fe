#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# A full backing directory: osc_newrma_backing_directory on a 1 MiB tmpfs
# mounted here (root only), a window that does not fit fails creation on
# every rank with MPI_ERR_NO_MEM and osc/newrma's help message (directory,
# size asked for, MCA parameter) instead of a SIGBUS later: MPI_Win_allocate
# and MPI_Win_allocate_shared.  Open MPI 4.1's MPI_Win_allocate turns any
# failure into MPI_ERR_WIN, so the class newrma returned is also read from
# its osc_base_verbose lines on each rank.  A small window
# then works, the job exits 0 and nothing is left in the directory.  One
# process needs no segment (private memory): from 2 ranks.  If no tmpfs can
# be mounted the test fails: it would prove nothing.  Across nodes the same
# holds per node: 2 ranks on each (with one, every window is either private
# memory or active messages, and no segment is made).
#   tests/shm_full.sh NP MPIRUN_ARGS...   (run by tests/run.sh)
# newrma-test: only-newrma np>=2 per-node>=2
set -u
np=$1; shift
bin=${NEWRMA_TEST_BINDIR:-$(dirname "$0")/bin}/shm_full_helper   # tests/run.sh says where
errors=0

# NEWRMA_MOUNT_DIR: where a mount reaches every rank (tests/run.sh's node
# modes: the test nodes' shared/ directory), default /tmp
dir=$(mktemp -d "${NEWRMA_MOUNT_DIR:-/tmp}/newrma-shm-full.XXXXXX") || { echo "shm_full: cannot make a directory"; exit 1; }
if ! mount -t tmpfs -o size=1m tmpfs "$dir" 2>&1; then
    echo "shm_full: cannot mount a 1 MiB tmpfs on $dir (needs root): nothing tested"
    rmdir "$dir"
    exit 1
fi
trap 'umount "$dir"; rmdir "$dir"' EXIT

help_seen() {
    grep -q 'the file system of its backing directory cannot hold it' <<< "$out" \
        && grep -q "Directory: *$dir (MCA parameter osc_newrma_backing_directory)" <<< "$out"
}
# Open MPI 4.1.4's mpirun now and then drops a help message a rank sent it
# ("ORTE_ERROR_LOG: ... in file .../orte/util/show_help.c"; other tests'
# logs show it too): only then is the run repeated, at most twice
for attempt in 1 2 3; do
    out=$(timeout -k 5 120 mpirun --oversubscribe -np "$np" "$@" --mca osc_newrma_backing_directory "$dir" \
          --mca osc_base_verbose 20 "$bin" 2>&1)
    rc=$?
    echo "$out"
    help_seen || ! grep -q 'ORTE_ERROR_LOG: .*orte/util/show_help.c' <<< "$out" || [ "$rc" -ne 0 ] && break
    echo "shm_full: attempt $attempt: mpirun dropped the help message (Open MPI's show_help defect); again"
done
if [ "$rc" -ne 0 ]; then
    echo "shm_full: mpirun exit $rc, expected 0"; errors=$((errors + 1))
fi
if ! grep -q 'shm_full_helper: No Errors' <<< "$out"; then
    echo "shm_full: the helper reported errors or did not finish"; errors=$((errors + 1))
fi
# after three tries, a help message mpirun lost each time (it logged its own
# show_help error) counts if newrma's trace says it raised it
if ! help_seen && ! { grep -q 'ORTE_ERROR_LOG: .*orte/util/show_help.c' <<< "$out" \
        && grep -q "osc/newrma: segment of [0-9]* bytes in $dir: .*(help message \"segment no space\")" <<< "$out"; }; then
    echo "shm_full: osc/newrma's help message (segment no space, naming $dir) did not appear"; errors=$((errors + 1))
fi
# every failed creation on every process was newrma's MPI_ERR_NO_MEM: each
# process's lines carry its "[host:pid]" (the rank in them is the window's,
# in the node modes a node communicator's)
procs=$(grep -o '^\[[^]]*\] osc/newrma: window creation failed on rank [0-9]*: MPI_ERR_NO_MEM' <<< "$out" \
        | sed 's/ .*//' | sort -u | wc -l)
if [ "$procs" -ne "$np" ]; then
    echo "shm_full: $procs of $np processes had a creation fail with MPI_ERR_NO_MEM"; errors=$((errors + 1))
fi
if grep 'osc/newrma: window creation failed on rank' <<< "$out" | grep -vq 'MPI_ERR_NO_MEM'; then
    echo "shm_full: a window creation failed otherwise than with MPI_ERR_NO_MEM"; errors=$((errors + 1))
fi
left=$(ls -A "$dir")
if [ -n "$left" ]; then
    echo "shm_full: files left in the backing directory:" $left; errors=$((errors + 1))
fi
[ "$errors" -eq 0 ] && echo "shm_full: No Errors"
exit "$errors"
