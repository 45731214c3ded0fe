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
 * Notified RMA (libmpix_newrma, docs/notified-rma.md) under
 * MPI_THREAD_MULTIPLE, every window flavor, one lock_all epoch:
 *  - WORKERS threads per process each put ROUNDS blocks to every process
 *    (itself too; each thread starts at another target, so that the
 *    threads of a process notify several targets at once) with
 *    MPIX_Put_notify on the counter of its (origin, thread), and after each
 *    block MPIX_Accumulate_notify(+1) into one word whose counter every
 *    thread of every process shares;
 *  - meanwhile the main thread polls its counters and, whenever it sees the
 *    counter of (origin, thread) at v, finds that thread's first v blocks in
 *    its memory (notification never before its data, with other threads
 *    calling the library at the same time);
 *  - at the end every (origin, thread) counter is exactly ROUNDS, the
 *    shared counter and the accumulated word exactly size * WORKERS *
 *    ROUNDS (none lost, none counted twice);
 *  - the window's own error handler (a counting one) is still the
 *    window's after the threads: the library never changes it, so an error
 *    afterwards (a bad counter index) reaches it exactly once.
 * Runs in about a second at 4 ranks.
 * newrma-test: np>=1 links-mpix
 */
#include <pthread.h>
#include "notify_common.h"

#define WORKERS 3
#define ROUNDS 20
#define BLOCK 4                 /* int64 words per block */

typedef struct {
    test_win_t *tw;
    int rank, size, thread;
} worker_arg_t;

static int handler_calls;

static void counting_handler(MPI_Win *win, int *code, ...)
{
    (void) win;
    (void) code;
    __atomic_add_fetch(&handler_calls, 1, __ATOMIC_RELAXED);
}

static int64_t pattern(int origin, int thread, int target, int round, int i)
{
    return (((int64_t) origin * 16 + thread) * 1000 + target) * 10000 + round * 10 + i + 1;
}

/* block (origin, thread, round) at its target, in int64 words */
static MPI_Aint block_at(int origin, int thread, int round)
{
    return (((MPI_Aint) origin * WORKERS + thread) * ROUNDS + round) * BLOCK;
}

static int stream_counter(int origin, int thread) { return origin * WORKERS + thread; }

static void *worker(void *p)
{
    const worker_arg_t *a = p;
    const MPI_Aint word = block_at(a->size, 0, 0);      /* past every block */
    const int shared_counter = a->size * WORKERS;
    const int64_t one = 1;
    int64_t block[BLOCK];

    for (int k = 0; k < ROUNDS; ++k)
        for (int j = 0; j < a->size; ++j) {
            int t = (j + a->thread + a->rank) % a->size;
            for (int i = 0; i < BLOCK; ++i) block[i] = pattern(a->rank, a->thread, t, k, i);
            MPI_OK(MPIX_Put_notify(block, BLOCK, MPI_INT64_T, t, test_disp(a->tw, t, block_at(a->rank, a->thread, k), 8),
                                   BLOCK, MPI_INT64_T, a->tw->win, stream_counter(a->rank, a->thread)));
            MPI_OK(MPIX_Accumulate_notify(&one, 1, MPI_INT64_T, t, test_disp(a->tw, t, word, 8), 1, MPI_INT64_T,
                                          MPI_SUM, a->tw->win, shared_counter));
        }
    return NULL;
}

/* The first `seen` blocks of (origin, thread) are in my memory. */
static void check_blocks(const int64_t *mem, int origin, int thread, int rank, int seen, const char *fl)
{
    for (int k = 0; k < seen; ++k)
        for (int i = 0; i < BLOCK; ++i) {
            int64_t got = __atomic_load_n(&mem[block_at(origin, thread, k) + i], __ATOMIC_RELAXED);
            CHECK(got == pattern(origin, thread, rank, k, i), "%s: origin %d thread %d round %d word %d: %lld after %d notifications",
                  fl, origin, thread, k, i, (long long) got, seen);
        }
}

/* Poll every stream's counter until all reach ROUNDS, checking the data
 * at each value seen (the fallback's data is made visible to my loads by
 * MPI_Win_sync). */
static void consume(test_win_t *tw, int path, int rank, int size, const char *fl)
{
    int done = 0;

    while (done < size * WORKERS && !test_errors) {
        done = 0;
        for (int o = 0; o < size; ++o)
            for (int th = 0; th < WORKERS; ++th) {
                MPI_Count seen = notify_counter(tw->win, stream_counter(o, th));
                CHECK(seen >= 0 && seen <= ROUNDS, "%s: counter of origin %d thread %d is %lld", fl, o, th, (long long) seen);
                if (MPIX_NOTIFY_PATH_FALLBACK == path) MPI_OK(MPI_Win_sync(tw->win));
                check_blocks(tw->mem, o, th, rank, (int) (seen > ROUNDS ? ROUNDS : seen), fl);
                done += seen >= ROUNDS;
            }
    }
}

static void final_counts(test_win_t *tw, int path, int size, const char *fl)
{
    const MPI_Count total = (MPI_Count) size * WORKERS * ROUNDS;
    const int shared_counter = size * WORKERS;
    int64_t word;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < size; ++o)
        for (int th = 0; th < WORKERS; ++th)
            CHECK(notify_counter(tw->win, stream_counter(o, th)) == ROUNDS, "%s: origin %d thread %d counter %lld, expected %d",
                  fl, o, th, (long long) notify_counter(tw->win, stream_counter(o, th)), ROUNDS);
    CHECK(notify_counter(tw->win, shared_counter) == total, "%s: shared counter %lld, expected %lld", fl,
          (long long) notify_counter(tw->win, shared_counter), (long long) total);
    if (MPIX_NOTIFY_PATH_FALLBACK == path) MPI_OK(MPI_Win_sync(tw->win));
    word = __atomic_load_n(&((int64_t *) tw->mem)[block_at(size, 0, 0)], __ATOMIC_RELAXED);
    CHECK(word == total, "%s: accumulated word %lld, expected %lld", fl, (long long) word, (long long) total);
}

/* The handler set before the threads is still the window's: one error,
 * one call. */
static void handler_kept(MPI_Win win, int size, const char *fl)
{
    MPI_Count v;
    int before = __atomic_load_n(&handler_calls, __ATOMIC_RELAXED);

    CHECK(before == 0, "%s: error handler called %d times during the threads", fl, before);
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_get_value(win, size * WORKERS + 1, &v));
    CHECK(__atomic_load_n(&handler_calls, __ATOMIC_RELAXED) == before + 1, "%s: error handler called %d times for one error",
          fl, __atomic_load_n(&handler_calls, __ATOMIC_RELAXED) - before);
    __atomic_store_n(&handler_calls, 0, __ATOMIC_RELAXED);
}

static void threaded_phase(test_win_t *tw, int path, int rank, int size, const char *fl)
{
    pthread_t threads[WORKERS];
    worker_arg_t args[WORKERS];

    for (int th = 0; th < WORKERS; ++th) {
        args[th] = (worker_arg_t) { tw, rank, size, th };
        CHECK(0 == pthread_create(&threads[th], NULL, worker, &args[th]), "%s: pthread_create", fl);
    }
    consume(tw, path, rank, size, fl);
    for (int th = 0; th < WORKERS; ++th) pthread_join(threads[th], NULL);
    final_counts(tw, path, size, fl);
}

int main(int argc, char **argv)
{
    MPI_Errhandler counting;
    int rank, size;

    if (!test_init_multiple(&argc, &argv)) return test_finalize("notify_threads");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_create_errhandler(counting_handler, &counting);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        const char *fl = flavor_names[flavor];
        size_t bytes = ((size_t) block_at(size, 0, 0) + 1) * sizeof(int64_t);
        test_win_t tw;
        int path = notify_win_open(&tw, flavor, bytes, size * WORKERS + 1);

        MPI_OK(MPI_Win_set_errhandler(tw.win, counting));
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        threaded_phase(&tw, path, rank, size, fl);
        handler_kept(tw.win, size, fl);
        MPI_OK(MPI_Win_unlock_all(tw.win));
        MPI_OK(MPIX_Win_notify_detach(tw.win));
        test_win_free(&tw);
    }
    MPI_Errhandler_free(&counting);
    return test_finalize("notify_threads");
}
