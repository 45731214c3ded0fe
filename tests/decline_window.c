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
 * A window newrma cannot serve gets a clear error, never a crash, and the
 * job goes on: with single-copy access turned off (osc_newrma_use_cma=0),
 * MPI_Win_create and MPI_Win_create_dynamic on more than one process are
 * declined; with newrma the only osc component, creation returns an error
 * (after a help message saying why) while allocate windows keep working.
 * With every peer treated as remote (osc_newrma_force_remote=1) the same
 * windows take the active-message path, which needs no single-copy access:
 * then they must be served, and work -- and the same with
 * osc_newrma_force_am, where they take that path over the node's FIFOs,
 * and when the ranks really are on several nodes (tests/run.sh's node modes).
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_use_cma:0
 */
#include "common.h"


int main(int argc, char **argv)
{
    int provided;
    test_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    /* the active-message path serves them: every peer remote (or some
     * really on other nodes), or the node's FIFOs instead of single-copy
     * (osc_newrma_force_am) */
    int remote = test_cvar_int("osc_newrma_force_remote") || test_cvar_int("osc_newrma_force_am")
                 || test_world_spans_nodes();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int64_t mem[4] = { 0 };
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_create(mem, sizeof(mem), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (remote) {
        CHECK(MPI_SUCCESS == rc, "MPI_Win_create was refused on the active-message path (error %d)", rc);
        if (MPI_SUCCESS == rc) {
            int rank, size;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            MPI_Comm_size(MPI_COMM_WORLD, &size);
            int64_t v = rank + 7;
            MPI_OK(MPI_Win_fence(0, win));
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, (rank + 1) % size, 1, 1, MPI_INT64_T, win));
            MPI_OK(MPI_Win_fence(0, win));
            CHECK(mem[1] == (rank + size - 1) % size + 7, "create window over active messages: %lld",
                  (long long) mem[1]);
        }
    } else {
        CHECK(MPI_SUCCESS != rc, "MPI_Win_create was served with osc_newrma_use_cma=0");
    }
    if (MPI_SUCCESS == rc) MPI_Win_free(&win);
    rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (remote) {
        CHECK(MPI_SUCCESS == rc, "MPI_Win_create_dynamic was refused on the active-message path (error %d)", rc);
    } else {
        CHECK(MPI_SUCCESS != rc, "MPI_Win_create_dynamic was served with osc_newrma_use_cma=0");
    }
    if (MPI_SUCCESS == rc) MPI_Win_free(&win);

    /* the job goes on: an allocate window works */
    test_win_t tw;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_win_create(&tw, FLAVOR_ALLOCATE, 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    int64_t v = rank + 100;
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, (rank + 1) % size, 0, 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    CHECK(*(int64_t *) tw.mem == (rank + size - 1) % size + 100, "allocate window after the refusals: %lld",
          (long long) *(int64_t *) tw.mem);
    test_win_free(&tw);
    MPI_T_finalize();
    return test_finalize("decline_window");
}
