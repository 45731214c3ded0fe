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
 * MPI_THREAD_MULTIPLE, one allocate window in a lock_all epoch: WORKERS
 * threads per process each accumulate +1 into word 0 of every process,
 * ROUNDS times, each followed by MPI_Win_flush of its target, while the
 * main thread polls its own word 0 with MPI_Iprobe, MPI_Fetch_and_op
 * (MPI_NO_OP) and MPI_Win_flush until it counts every increment; the word
 * ends at exactly size * WORKERS * ROUNDS on every process.  It is the
 * fallback of notified RMA (docs/notified-rma.md) without the library.
 * Runs only when named (tests/run.sh threads_flush_poll): in the remote
 * mode (UCX over TCP) about half the runs at 4 ranks die of a segmentation
 * fault in UCX's TCP receive path (uct_tcp_iface_progress, address
 * 0xfffffffffffffff8), a bug not fixed yet (docs/notified-rma.md,
 * "Threads"); with one worker thread it passes.
 * newrma-test: np>=1 named-only
 */
#include <pthread.h>
#include "common.h"

#define WORKERS 3
#define ROUNDS 20

static int rank, size;
static MPI_Win win;

static void *worker(void *arg)
{
    int me = (int) (intptr_t) arg;
    const int64_t one = 1;

    for (int k = 0; k < ROUNDS; ++k)
        for (int j = 0; j < size; ++j) {
            int t = (j + me + rank) % size;
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, MPI_SUM, win));
            MPI_OK(MPI_Win_flush(t, win));
        }
    return NULL;
}

static int64_t own_word(void)
{
    int64_t now = -1;
    int flag;

    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Fetch_and_op(NULL, &now, MPI_INT64_T, rank, 0, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(rank, win));
    return now;
}

int main(int argc, char **argv)
{
    const int64_t total = (int64_t) WORKERS * ROUNDS;
    pthread_t threads[WORKERS];
    int64_t *mem, now;

    if (!test_init_multiple(&argc, &argv)) return test_finalize("threads_flush_poll");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = test_rank;
    MPI_OK(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    *mem = 0;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < WORKERS; ++i)
        CHECK(0 == pthread_create(&threads[i], NULL, worker, (void *) (intptr_t) i), "pthread_create");
    while ((now = own_word()) < total * size && !test_errors) {
    }
    for (int i = 0; i < WORKERS; ++i) pthread_join(threads[i], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    now = own_word();
    CHECK(now == total * size, "word %lld, expected %lld", (long long) now, (long long) (total * size));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
    return test_finalize("threads_flush_poll");
}
