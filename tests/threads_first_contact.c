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
 * MPI_THREAD_MULTIPLE, first contact: right after creating two windows,
 * two threads per process put and flush, accumulate and flush, to every
 * target in the same order -- so every process's first packets reach
 * rank 0 at once, from several threads, while rank 0 may still be in the
 * barrier after creation.  A target then answers origins it never sent to
 * from inside its transport's progress (docs/am-protocol.md, "First
 * contact from inside progress"): over UCX's TCP transport, creating that endpoint inside the
 * interface's event loop crashed the target.  Exact counts and data.
 * newrma-test: np>=1
 */
#include <pthread.h>
#include "common.h"

#define THREADS 2
#define ITERS 12
#define WORDS 4

static int rank, size;
static MPI_Win data_win, count_win;

static int64_t value(int origin, int thread, int it, int i) { return ((int64_t) origin * 100 + thread) * 1000 + it * 10 + i; }

static void *worker(void *arg)
{
    int me = (int) (intptr_t) arg;
    int64_t one = 1, buf[WORDS];

    for (int it = 0; it < ITERS; ++it) {
        for (int t = 0; t < size; ++t) {
            for (int i = 0; i < WORDS; ++i) buf[i] = value(rank, me, it, i);
            MPI_OK(MPI_Put(buf, WORDS, MPI_INT64_T, t, ((MPI_Aint) rank * THREADS + me) * WORDS, WORDS, MPI_INT64_T,
                           data_win));
            MPI_OK(MPI_Win_flush(t, data_win));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, MPI_SUM, count_win));
            MPI_OK(MPI_Win_flush(t, count_win));
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int64_t *data, *count;
    pthread_t th[THREADS];

    if (!test_init_multiple(&argc, &argv)) {
        return test_finalize("threads_first_contact");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Win_allocate((MPI_Aint) size * THREADS * WORDS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &data, &data_win));
    MPI_OK(MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &count, &count_win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, count_win));
    count[0] = 0;
    MPI_OK(MPI_Win_unlock(rank, count_win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, data_win));
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, count_win));
    for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    MPI_OK(MPI_Win_unlock_all(count_win));
    MPI_OK(MPI_Win_unlock_all(data_win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, count_win));
    CHECK(count[0] == (int64_t) size * THREADS * ITERS, "counter %lld, expected %lld", (long long) count[0],
          (long long) size * THREADS * ITERS);
    MPI_OK(MPI_Win_unlock(rank, count_win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, data_win));
    for (int o = 0; o < size; ++o)
        for (int t = 0; t < THREADS; ++t)
            for (int i = 0; i < WORDS; ++i) {
                int64_t got = data[((size_t) o * THREADS + t) * WORDS + i];
                CHECK(got == value(o, t, ITERS - 1, i), "slot of origin %d thread %d word %d: %lld, expected %lld", o,
                      t, i, (long long) got, (long long) value(o, t, ITERS - 1, i));
            }
    MPI_OK(MPI_Win_unlock(rank, data_win));
    MPI_OK(MPI_Win_free(&count_win));
    MPI_OK(MPI_Win_free(&data_win));
    return test_finalize("threads_first_contact");
}
