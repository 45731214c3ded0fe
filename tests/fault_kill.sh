#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# A rank killed with SIGKILL in the middle of a passive-target epoch (holding
# an exclusive lock others wait for): the job ends within seconds with
# mpirun reporting the death, no process is left spinning, no file is left
# in /dev/shm.  Both window kinds: allocate (lock in the node segment, or
# active messages in the remote modes) and create.
#   tests/fault_kill.sh NP MPIRUN_ARGS...   (run by tests/run.sh)
# newrma-test: np>=2
set -u
np=$1; shift
bin=${NEWRMA_TEST_BINDIR:-$(dirname "$0")/bin}/fault_kill_helper   # tests/run.sh says where
errors=0
# segment files whose creator (the pid in osc_newrma.<host>.<pid>.<n>) is
# gone: what a killed job could leave; files of live processes belong to
# other jobs running at the same time.  NEWRMA_SHM_DIRS: every node's
# /dev/shm as seen from here (tests/run.sh's node modes), default /dev/shm
stale_files() {
    for d in ${NEWRMA_SHM_DIRS:-/dev/shm}; do printf "%s\n" "$d"/osc_newrma.*; done | while read -r f; do
        [ -e "$f" ] || continue
        pid=${f%.*}; pid=${pid##*.}
        kill -0 "$pid" 2> /dev/null || echo "$f"
    done | sort
}
for flavor in allocate create; do
    before=$(stale_files)
    start=$(date +%s.%N)
    out=$(timeout -k 5 60 mpirun --oversubscribe -np "$np" "$@" "$bin" "$flavor" 2>&1)
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    echo "$flavor: mpirun exit $rc after ${secs}s"
    # mpirun reports the death with a non-zero exit (137: the rank's SIGKILL)
    if [ "$rc" -eq 0 ]; then
        echo "$flavor: expected mpirun to end the job with an error, got exit 0"; errors=$((errors + 1))
    fi
    if [ "$(echo "$secs > 20" | bc)" -eq 1 ]; then
        echo "$flavor: the job took ${secs}s to end (exit $rc)"; errors=$((errors + 1))
    fi
    if ! grep -q 'rank 1 holds the lock and dies' <<< "$out"; then
        echo "$flavor: rank 1 never reached its death:"; echo "$out" | tail -20; errors=$((errors + 1))
    fi
    if grep -q 'got a lock whose holder died' <<< "$out"; then
        echo "$flavor: a rank was granted the dead rank's exclusive lock"; errors=$((errors + 1))
    fi
    # the job's processes have 1 s to be gone; looked for every 0.1 s, so
    # that a job that ends at once does not wait the whole second
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        pgrep -f "$bin" > /dev/null || break
        sleep 0.1
    done
    if pgrep -f "$bin" > /dev/null; then
        echo "$flavor: processes left behind:"; pgrep -af "$bin"; pkill -9 -f "$bin"; errors=$((errors + 1))
    fi
    left=$(comm -13 <(echo "$before") <(stale_files))
    if [ -n "$left" ]; then
        echo "$flavor: segment files left in /dev/shm by the job:" $left; errors=$((errors + 1))
    fi
done
[ "$errors" -eq 0 ] && echo "fault_kill: No Errors"
exit "$errors"
