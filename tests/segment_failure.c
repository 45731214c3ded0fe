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
 * A window whose node segment cannot be created (here: the backing
 * directory does not exist, osc_newrma_backing_directory; see also
 * segment_too_big.c) fails creation on
 * every rank with an MPI error class -- after a help message saying why --
 * and the job goes on: collectives work, and windows that need no segment
 * file (one process: private memory) are created and used.  With every peer
 * remote (osc_newrma_force_remote, or one rank on each of several nodes)
 * MPI_Win_allocate needs no segment and must succeed instead; with ranks
 * that share a node on several nodes it works by active messages whose
 * packets between those ranks go through a FIFO segment, so it fails.
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_backing_directory:/nonexistent/newrma-segments
 */
#include "common.h"

int main(int argc, char **argv)
{
    int provided, size, remote;
    MPI_Win win = MPI_WIN_NULL;
    int64_t *mem = NULL;

    test_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    const char *node_ranks = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    remote = test_cvar_int("osc_newrma_force_remote")
             || (test_world_spans_nodes() && NULL != node_ranks && 1 == atoi(node_ranks));
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (int round = 0 ; round < 3 ; ++round) {
        int rc = MPI_Win_allocate(64 * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        int ok = MPI_SUCCESS == rc, oks = 0;
        MPI_Allreduce(&ok, &oks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(oks == 0 || oks == size, "round %d: creation succeeded on %d of %d ranks", round, oks, size);
        if (remote) {
            CHECK(ok, "round %d: an active-message window needs no segment, yet creation returned %d", round, rc);
        } else {
            int cls = MPI_SUCCESS;
            MPI_Error_class(rc, &cls);
            CHECK(!ok, "round %d: creation succeeded without a backing directory", round);
            CHECK(cls != MPI_SUCCESS && cls != MPI_ERR_UNKNOWN, "round %d: creation failed with class %d", round,
                  cls);
            CHECK(MPI_WIN_NULL == win, "round %d: a failed creation left a window handle", round);
        }
        if (ok) {
            MPI_OK(MPI_Win_free(&win));
        }
    }

    /* the job goes on: a collective, and a window without a segment file */
    int sum = 0, one = 1;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size, "allreduce after the failures gave %d", sum);
    MPI_OK(MPI_Win_allocate(64 * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_SELF, &mem, &win));
    if (MPI_WIN_NULL != win) {
        int64_t v = 1234 + test_rank, got = 0;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(0, win));
        MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_unlock(0, win));
        CHECK(got == v, "self window: got %lld, expected %lld", (long long) got, (long long) v);
        MPI_OK(MPI_Win_free(&win));
    }
    MPI_T_finalize();
    return test_finalize("segment_failure");
}
