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
 * Helper of shm_full.sh, run with osc_newrma_backing_directory on a 1 MiB
 * tmpfs: a window of 1 MiB per process does not fit, and its creation must
 * fail on every rank (window creation reports errors through the
 * communicator's error handler, here MPI_ERRORS_RETURN) instead of a SIGBUS
 * at the first touch.  newrma fails it with MPI_ERR_NO_MEM:
 * MPI_Win_allocate_shared returns that class, but Open MPI 4.1's
 * MPI_Win_allocate returns MPI_ERR_WIN for any failure of the component,
 * so there either class passes and shm_full.sh checks newrma's own
 * MPI_ERR_NO_MEM on every rank in its osc_base_verbose output.
 * MPI_Win_allocate windows have their memory in the node segment, but for
 * the active-message path (force_remote), which needs no segment.  Then a
 * small window in the same directory is created and used.  When the ranks
 * are on several nodes (tests/run.sh's node modes) the allocate_shared
 * windows are made on each node's communicator: no such window spans nodes.
 * newrma-test: helper
 */
#include "common.h"

static MPI_Comm shared_comm;   /* MPI_COMM_WORLD, or this node's ranks */

static int allocate(int flavor, MPI_Aint bytes, int64_t **mem, MPI_Win *win)
{
    return FLAVOR_SHARED == flavor ? MPI_Win_allocate_shared(bytes, 8, MPI_INFO_NULL, shared_comm, mem, win)
                                   : MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, mem, win);
}

/* A window of 1 MiB per process: fails on every rank, with MPI_ERR_NO_MEM
 * (or `also` where Open MPI's MPI layer replaces the class). */
static void too_big_fails(int flavor, int also, int rank, int size)
{
    MPI_Win win = MPI_WIN_NULL;
    int64_t *mem = NULL;
    int rc = allocate(flavor, (MPI_Aint) 1 << 20, &mem, &win);
    int cls = MPI_SUCCESS, no_mem = 0, failed = MPI_SUCCESS != rc, all_failed = 0;

    MPI_Error_class(rc, &cls);
    no_mem = MPI_ERR_NO_MEM == cls;
    MPI_Allreduce(MPI_IN_PLACE, &no_mem, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(size == all_failed, "%s: a window of 1 MiB per process on a 1 MiB file system was created on %d of %d ranks",
          flavor_names[flavor], size - all_failed, size);
    CHECK(!failed || MPI_ERR_NO_MEM == cls || also == cls, "%s: creation failed with class %d, expected "
          "MPI_ERR_NO_MEM (%d) or %d", flavor_names[flavor], cls, MPI_ERR_NO_MEM, also);
    if (!failed) {
        MPI_Win_free(&win);
    }
    if (0 == rank) {
        printf("%s: creation failed on %d of %d ranks, with class MPI_ERR_NO_MEM on %d\n", flavor_names[flavor],
               all_failed, size, no_mem);
    }
}

int main(int argc, char **argv)
{
    int size;
    MPI_Win win = MPI_WIN_NULL;
    int64_t *mem = NULL;

    test_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* window creation reports through the communicator's handler */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    shared_comm = MPI_COMM_WORLD;
    if (test_world_spans_nodes()) {
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared_comm));
        MPI_Comm_set_errhandler(shared_comm, MPI_ERRORS_RETURN);
    }
    if (!test_am_path(FLAVOR_ALLOCATE)) {
        too_big_fails(FLAVOR_ALLOCATE, MPI_ERR_WIN, test_rank, size);
    }
    too_big_fails(FLAVOR_SHARED, MPI_ERR_NO_MEM, test_rank, size);

    /* the job goes on, in the same directory */
    MPI_OK(allocate(FLAVOR_SHARED, 64 * sizeof(int64_t), &mem, &win));
    int shared_rank, shared_size;
    MPI_Comm_rank(shared_comm, &shared_rank);
    MPI_Comm_size(shared_comm, &shared_size);
    test_window_goes_on(win, shared_rank, shared_size);
    if (!test_am_path(FLAVOR_ALLOCATE)) {
        win = MPI_WIN_NULL;
        MPI_OK(allocate(FLAVOR_ALLOCATE, 64 * sizeof(int64_t), &mem, &win));
        test_window_goes_on(win, test_rank, size);
    }
    if (MPI_COMM_WORLD != shared_comm) MPI_Comm_free(&shared_comm);
    return test_finalize("shm_full_helper");
}
