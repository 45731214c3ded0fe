/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * Copyright (c) 2026 The newrma developers.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */
/*
 * The MPI program of tests/fault_kill.sh (not a test by itself): rank 1
 * takes an exclusive lock on rank 0's window, puts, flushes, tells every
 * other rank, and dies by SIGKILL while holding the lock.  The others then
 * ask for the same lock and wait for it forever: the job must still end,
 * because mpirun sees rank 1 die and ends the others.
 * newrma-test: helper
 */
#include <signal.h>
#include <unistd.h>
#include "common.h"

int main(int argc, char **argv)
{
    test_win_t tw;
    int64_t value = 42;
    int size, flavor = argc > 1 && 0 == strcmp(argv[1], "create") ? FLAVOR_CREATE : FLAVOR_ALLOCATE;

    test_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_win_create(&tw, flavor, 4096, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    if (1 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
        MPI_OK(MPI_Put(&value, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
        for (int r = 0 ; r < size ; ++r) {
            if (r != 1) MPI_Send(&value, 1, MPI_INT64_T, r, 0, MPI_COMM_WORLD);
        }
        printf("rank 1 holds the lock and dies\n");
        fflush(stdout);
        raise(SIGKILL);
    }
    MPI_Recv(&value, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* a lock may be taken lazily, at the first operation: the flush waits */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
    MPI_OK(MPI_Put(&value, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_flush(0, tw.win));       /* never granted */
    printf("rank %d got a lock whose holder died\n", test_rank);
    MPI_OK(MPI_Win_unlock(0, tw.win));
    test_win_free(&tw);
    return test_finalize("fault_kill_helper");
}
