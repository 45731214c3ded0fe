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
 * A window far bigger than the backing directory's file system can hold
 * (as if /dev/shm were too small: 1 TiB per process asked for) fails
 * creation on every rank with an MPI error class -- newrma checks the free
 * space before creating the segment, after a help message saying why -- and
 * the job goes on: a window of a sensible size in the same directory is then
 * created and used.  In the active-message modes MPI_Win_allocate needs no
 * segment: there the test asks for MPI_Win_allocate_shared, which always
 * does -- on each node's communicator when the ranks are on several (no
 * such window spans nodes), with 2 ranks on each: one rank alone has
 * private memory, no segment.
 *
 * newrma-test: only-newrma np>=1 per-node>=2
 */
#include "common.h"

int main(int argc, char **argv)
{
    int size, rank;
    MPI_Win win = MPI_WIN_NULL;
    int64_t *mem = NULL;

    test_init(&argc, &argv);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm comm = MPI_COMM_WORLD;
    if (test_world_spans_nodes()) {
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comm));
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }

    int rc = MPI_Win_allocate_shared((MPI_Aint) 1 << 40, 1, MPI_INFO_NULL, comm, &mem, &win);
    int ok = MPI_SUCCESS == rc, oks = 0, cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    MPI_Allreduce(&ok, &oks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(0 == oks, "a window of 1 TiB per process was created on %d of %d ranks", oks, size);
    CHECK(!ok || cls != MPI_ERR_UNKNOWN, "creation failed with class %d", cls);
    if (ok) {
        MPI_Win_free(&win);
    }

    /* the job goes on, in the same directory */
    MPI_OK(MPI_Win_allocate_shared(64 * sizeof(int64_t), 8, MPI_INFO_NULL, comm, &mem, &win));
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    test_window_goes_on(win, rank, size);
    if (MPI_COMM_WORLD != comm) MPI_Comm_free(&comm);
    return test_finalize("segment_too_big");
}
