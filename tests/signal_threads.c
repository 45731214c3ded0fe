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
 * Signals and batches from several threads at once (libmpix_newrma,
 * experimental; docs/notified-rma.md), MPI_THREAD_MULTIPLE, no epoch opened
 * by the test: THREADS threads per process each issue ROUNDS batches, each
 * spanning every rank (a block put, +1 accumulated into one word shared by
 * every thread of every process, a get of the thread's previous block from
 * the target), closed with the thread's own signal (origin o, thread j:
 * signal o * THREADS + j).  Odd rounds add a batch without a signal (a put
 * into the thread's own word, which the same thread then reads back through
 * a get batch).  Meanwhile the main thread of every process waits for
 * every (origin, thread) signal at each value k+1 and then finds that
 * thread's first k+1 blocks.  In the end: every signal exactly ROUNDS, the
 * shared word exactly size * THREADS * ROUNDS.
 * newrma-test: np>=1 links-mpix
 */
#include <pthread.h>
#include "signal_common.h"

#define THREADS 4
#define ROUNDS 12

static int rank, size;
static MPI_Win win;
static int64_t *mem;

/* window layout (int64 words): blocks [origin][thread][round][BLOCK], the
 * shared accumulated word, then one word per (origin, thread) */
static MPI_Aint block_at(int origin, int thread, int round)
{
    return (((MPI_Aint) origin * THREADS + thread) * ROUNDS + round) * BLOCK;
}
static MPI_Aint acc_word(void) { return block_at(size, 0, 0); }
static MPI_Aint own_word(int origin, int thread) { return acc_word() + 1 + (MPI_Aint) origin * THREADS + thread; }
static int signal_of(int origin, int thread) { return origin * THREADS + thread; }

/* put this round's block to every rank and read the previous one back */
static void signalled_round(int me, int k, int64_t *block, int64_t *back)
{
    const int64_t one = 1;
    MPIX_Batch batch = MPIX_BATCH_NULL;

    MPI_OK(MPIX_Batch_open(win, &batch));
    for (int t = 0; t < size; ++t) {
        for (int i = 0; i < BLOCK; ++i) block[t * BLOCK + i] = signal_pattern(rank * THREADS + me, t, k, i);
        MPI_OK(MPIX_Batch_put(&block[t * BLOCK], BLOCK, MPI_INT64_T, t, block_at(rank, me, k), BLOCK, MPI_INT64_T,
                              batch));
        MPI_OK(MPIX_Batch_accumulate(&one, 1, MPI_INT64_T, t, acc_word(), 1, MPI_INT64_T, MPI_SUM, batch));
        if (k > 0)
            MPI_OK(MPIX_Batch_get(&back[t * BLOCK], BLOCK, MPI_INT64_T, t, block_at(rank, me, k - 1), BLOCK,
                                  MPI_INT64_T, batch));
    }
    MPI_OK(MPIX_Batch_close(&batch, signal_of(rank, me)));
    for (int t = 0; k > 0 && t < size; ++t)
        signal_check_blocks(back, t * BLOCK, rank * THREADS + me, t, k - 1, 1, "thread get");
}

/* a batch without a signal, then a get batch that must see it */
static void unsignalled_round(int me, int k)
{
    const int64_t value = signal_pattern(rank * THREADS + me, 0, k, 0);
    int t = (rank + me + k) % size;
    int64_t got = -1;
    MPIX_Batch batch = MPIX_BATCH_NULL;

    MPI_OK(MPIX_Batch_open(win, &batch));
    MPI_OK(MPIX_Batch_put(&value, 1, MPI_INT64_T, t, own_word(rank, me), 1, MPI_INT64_T, batch));
    MPI_OK(MPIX_Batch_close(&batch, MPIX_SIGNAL_NONE));
    MPI_OK(MPIX_Batch_open(win, &batch));
    MPI_OK(MPIX_Batch_get(&got, 1, MPI_INT64_T, t, own_word(rank, me), 1, MPI_INT64_T, batch));
    MPI_OK(MPIX_Batch_close(&batch, MPIX_SIGNAL_NONE));
    CHECK(got == value, "thread %d round %d: read back %lld from %d, expected %lld", me, k, (long long) got, t,
          (long long) value);
}

static void *worker(void *arg)
{
    int me = (int) (intptr_t) arg;
    int64_t *block = malloc((size_t) size * BLOCK * sizeof(*block));
    int64_t *back = malloc((size_t) size * BLOCK * sizeof(*back));

    for (int k = 0; k < ROUNDS; ++k) {
        signalled_round(me, k, block, back);
        if (k % 2) unsignalled_round(me, k);
    }
    free(block);
    free(back);
    return NULL;
}

/* the main thread, while the workers run: every (origin, thread) signal at
 * every value, with its data */
static void consume(void)
{
    for (int o = 0; o < size; ++o)
        for (int j = 0; j < THREADS; ++j)
            for (int k = 0; k < ROUNDS; ++k) {
                MPI_OK(MPIX_Signal_wait(win, signal_of(o, j), k + 1));
                signal_check_blocks(mem, block_at(o, j, 0), o * THREADS + j, rank, 0, k + 1, "thread put");
            }
}

int main(int argc, char **argv)
{
    pthread_t threads[THREADS];

    if (!test_init_multiple(&argc, &argv)) return test_finalize("signal_threads");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    win = signal_win_open(own_word(size, 0), size * THREADS, &mem);

    for (int j = 0; j < THREADS; ++j) pthread_create(&threads[j], NULL, worker, (void *) (intptr_t) j);
    consume();
    for (int j = 0; j < THREADS; ++j) pthread_join(threads[j], NULL);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_sync(win));
    CHECK(mem[acc_word()] == (int64_t) size * THREADS * ROUNDS, "shared word %lld, expected %lld",
          (long long) mem[acc_word()], (long long) size * THREADS * ROUNDS);
    for (int s = 0; s < size * THREADS; ++s) {
        MPI_Count v = -1;
        MPI_OK(MPIX_Win_notify_get_value(win, s, &v));
        CHECK(v == ROUNDS, "signal %d ends at %lld", s, (long long) v);
    }
    MPI_OK(MPIX_Win_free_signals(&win));
    return test_finalize("signal_threads");
}
