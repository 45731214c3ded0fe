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
 * MPI_THREAD_MULTIPLE, then MPI_T_init_thread(MPI_THREAD_SINGLE) (the tool
 * interface's own level, legal at any time), then a dynamic window: three
 * threads per process put a block, accumulate +1 into one word and flush,
 * to every target in turn, in one lock_all epoch.  Open MPI 4.1's
 * MPI_T_init_thread overwrites ompi_mpi_thread_multiple; a component that
 * read it set the window up as single-threaded, with its per-window batch
 * of small puts shared by the threads unlocked: puts issued to another
 * thread's target (MPI_ERR_RMA_RANGE) or lost.  Every block and the word
 * checked exactly at every target.  Runs in about a second at 4 ranks.
 * newrma-test: np>=1
 */
#include <pthread.h>
#include "common.h"

#define THREADS 3
#define ROUNDS 20
#define BLOCK 4                 /* int64 words per block */

static int rank, size;
static test_win_t tw;

static int64_t pattern(int origin, int thread, int round, int i)
{
    return ((int64_t) origin * 16 + thread) * 10000 + round * 10 + i + 1;
}

/* block (origin, thread, round) at every target, in int64 words */
static MPI_Aint block_at(int origin, int thread, int round)
{
    return (((MPI_Aint) origin * THREADS + thread) * ROUNDS + round) * BLOCK;
}

static void *worker(void *arg)
{
    const int me = (int) (intptr_t) arg;
    const MPI_Aint word = block_at(size, 0, 0);    /* past every block */
    const int64_t one = 1;
    int64_t block[BLOCK];

    for (int k = 0; k < ROUNDS; ++k)
        for (int j = 0; j < size; ++j) {
            int t = (j + me + rank) % size;    /* the threads of a process at several targets at once */
            for (int i = 0; i < BLOCK; ++i) block[i] = pattern(rank, me, k, i);
            MPI_OK(MPI_Put(block, BLOCK, MPI_INT64_T, t, test_disp(&tw, t, block_at(rank, me, k), 8), BLOCK,
                           MPI_INT64_T, tw.win));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, test_disp(&tw, t, word, 8), 1, MPI_INT64_T, MPI_SUM,
                                  tw.win));
            MPI_OK(MPI_Win_flush(t, tw.win));
        }
    return NULL;
}

static void check_memory(void)
{
    const int64_t *mem = tw.mem;
    int64_t total = (int64_t) size * THREADS * ROUNDS;

    for (int o = 0; o < size; ++o)
        for (int th = 0; th < THREADS; ++th)
            for (int k = 0; k < ROUNDS; ++k)
                for (int i = 0; i < BLOCK; ++i)
                    CHECK(mem[block_at(o, th, k) + i] == pattern(o, th, k, i),
                          "origin %d thread %d round %d word %d: %lld", o, th, k, i,
                          (long long) mem[block_at(o, th, k) + i]);
    CHECK(mem[block_at(size, 0, 0)] == total, "accumulated word %lld, expected %lld",
          (long long) mem[block_at(size, 0, 0)], (long long) total);
}

int main(int argc, char **argv)
{
    pthread_t threads[THREADS];
    int provided;

    if (!test_init_multiple(&argc, &argv)) return test_finalize("threads_mpit_dynamic");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    test_win_create(&tw, FLAVOR_DYNAMIC, ((size_t) block_at(size, 0, 0) + 1) * sizeof(int64_t), 8, MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int th = 0; th < THREADS; ++th)
        CHECK(0 == pthread_create(&threads[th], NULL, worker, (void *) (intptr_t) th), "pthread_create");
    for (int th = 0; th < THREADS; ++th) pthread_join(threads[th], NULL);
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Win_sync(tw.win));      /* the others' data before my loads */
    check_memory();
    MPI_OK(MPI_Win_unlock_all(tw.win));
    test_win_free(&tw);
    MPI_T_finalize();
    return test_finalize("threads_mpit_dynamic");
}
