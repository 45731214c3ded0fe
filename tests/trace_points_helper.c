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
 * The MPI program of tests/trace_points.sh (not a test by itself): one
 * window of each flavor newrma serves here, and on each every kind of
 * synchronization (fence, PSCW between ranks 0 and 1, lock/unlock,
 * lock_all/unlock_all) with a put, a get and an accumulate in it.  Values
 * are checked so that a trace point that broke an operation shows too.
 * newrma-test: helper
 */
#include "common.h"

static void epochs(test_win_t *tw, int size)
{
    int64_t one = 1, got = -1;
    int right = (test_rank + 1) % size;
    int64_t *mine = (int64_t *) tw->mem;

    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Put(&one, 1, MPI_INT64_T, right, test_disp(tw, right, 0, 8), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    CHECK(1 == mine[0], "fence put: %lld", (long long) mine[0]);

    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw->win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, right, test_disp(tw, right, 1, 8), 1, MPI_INT64_T, MPI_SUM,
                          tw->win));
    MPI_OK(MPI_Win_unlock(right, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_OK(MPI_Win_lock_all(0, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, 1, 8), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock_all(tw->win));
    CHECK(1 == got, "lock_all get: %lld", (long long) got);

    if (test_rank < 2) {
        MPI_Group world, other;
        int peer = 1 - test_rank;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &peer, &other);
        MPI_OK(MPI_Win_post(other, 0, tw->win));
        MPI_OK(MPI_Win_start(other, 0, tw->win));
        MPI_OK(MPI_Put(&one, 1, MPI_INT64_T, peer, test_disp(tw, peer, 2, 8), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        CHECK(1 == mine[2], "pscw put: %lld", (long long) mine[2]);
        MPI_Group_free(&other);
        MPI_Group_free(&world);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int size;

    test_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = FLAVOR_CREATE ; flavor <= FLAVOR_ALLOCATE ; ++flavor) {
        test_win_t tw;
        test_win_create(&tw, flavor, 4096, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
        memset(tw.mem, 0, 4096);
        MPI_Barrier(MPI_COMM_WORLD);
        epochs(&tw, size);
        test_win_free(&tw);
    }
    return test_finalize("trace_points_helper");
}
