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
 * MPI_THREAD_MULTIPLE: 4 threads per rank issue puts, gets, accumulates,
 * fetch_and_ops and flushes concurrently on one window inside one lock_all
 * epoch (the interleavings mpich-new-rma-design.txt lists as valid: op+op,
 * op+flush, flush+flush), and on separate windows, one per thread, under
 * per-thread lock/unlock: put, flush, get, flush, accumulate.  Every thread
 * owns its own slots, so all values are exact; the shared counters (one
 * fetch_and_op'ed, one accumulated, next to each other: the same accumulate
 * stripe) must count every increment.
 * Then fence epochs (the design's op+op interleaving inside a fence epoch):
 * the main thread fences, 4 threads put, accumulate and get (what the
 * previous epoch put) concurrently, the main thread fences again.  (Open
 * MPI 4.1.4's osc/ucx fails this phase at 4 ranks: MPI_ERR_OTHER from
 * MPI_Put; osc/sm + osc/ucx pass the rest.)
 * Then PSCW epochs (pscw_phase): every thread's first operations of each
 * epoch race to wait for the posts.
 * Last, every thread of a process accumulates under one exclusive lock the
 * main thread holds (exclusive_phase).
 * newrma-test: np>=1
 */
#include <pthread.h>
#include "common.h"

#define THREADS 4
#define ITERS 300
#define SLOTS 8

static int rank, size;
static test_win_t shared_win;
static test_win_t own_win[THREADS];

/* window layout (int64): [0]: fetch_and_op counter, [1]: accumulate counter,
 * then per (origin, thread) SLOTS words */
static MPI_Aint slot(int origin, int thread, int i) { return 2 + ((MPI_Aint) origin * THREADS + thread) * SLOTS + i; }

/* own windows (int64): [o]: accumulate counter of origin o, [size + o]: the
 * cell origin o puts into (the value of its last iteration at this target) */
static int64_t own_value(int origin, int thread, int it) { return (int64_t) origin * 1000000 + thread * 10000 + it; }

static void *worker(void *arg)
{
    int me = (int) (intptr_t) arg;
    int64_t one = 1, prev, buf[SLOTS], got[SLOTS];

    for (int it = 0; it < ITERS; ++it) {
        int t = (it + me + rank) % size;
        for (int i = 0; i < SLOTS; ++i) buf[i] = (int64_t) rank * 1000000 + me * 10000 + it * 10 + i;
        MPI_OK(MPI_Put(buf, SLOTS, MPI_INT64_T, t, test_disp(&shared_win, t, slot(rank, me, 0), 8), SLOTS,
                       MPI_INT64_T, shared_win.win));
        MPI_OK(MPI_Fetch_and_op(&one, &prev, MPI_INT64_T, t, test_disp(&shared_win, t, 0, 8), MPI_SUM,
                                shared_win.win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, test_disp(&shared_win, t, 1, 8), 1, MPI_INT64_T, MPI_SUM,
                              shared_win.win));
        MPI_OK(MPI_Win_flush(t, shared_win.win));
        MPI_OK(MPI_Get(got, SLOTS, MPI_INT64_T, t, test_disp(&shared_win, t, slot(rank, me, 0), 8), SLOTS,
                       MPI_INT64_T, shared_win.win));
        MPI_OK(MPI_Win_flush(t, shared_win.win));
        for (int i = 0; i < SLOTS; ++i)
            CHECK(got[i] == buf[i], "thread %d iter %d: slot %d at %d is %lld, expected %lld", me, it, i, t,
                  (long long) got[i], (long long) buf[i]);
        /* and a window of its own, with its own lock epochs */
        int u = (it + rank) % size;
        int64_t mine = own_value(rank, me, it), back = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, u, 0, own_win[me].win));
        MPI_OK(MPI_Put(&mine, 1, MPI_INT64_T, u, test_disp(&own_win[me], u, size + rank, 8), 1, MPI_INT64_T,
                       own_win[me].win));
        MPI_OK(MPI_Win_flush(u, own_win[me].win));
        MPI_OK(MPI_Get(&back, 1, MPI_INT64_T, u, test_disp(&own_win[me], u, size + rank, 8), 1, MPI_INT64_T,
                       own_win[me].win));
        MPI_OK(MPI_Win_flush(u, own_win[me].win));
        CHECK(back == mine, "thread %d iter %d: own window cell at %d is %lld, expected %lld", me, it, u,
              (long long) back, (long long) mine);
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, u, test_disp(&own_win[me], u, rank, 8), 1, MPI_INT64_T, MPI_SUM,
                              own_win[me].win));
        MPI_OK(MPI_Win_unlock(u, own_win[me].win));
    }
    return NULL;
}

/* fence epochs: in round r thread `me` puts into its slots at target
 * (r + me + rank) % size, adds one to counter [0] there, and gets back what
 * it put in round r - 1 (a previous epoch: no conflict). */
#define FENCE_ROUNDS 20
static int fence_round;
static int64_t fence_got[THREADS][SLOTS];

static int64_t fence_value(int origin, int thread, int round, int i)
{
    return -((int64_t) origin * 1000000 + thread * 10000 + round * 10 + i) - 1;
}

static void *fence_worker(void *arg)
{
    int me = (int) (intptr_t) arg, r = fence_round;
    int64_t one = 1, buf[SLOTS];
    int t = (r + me + rank) % size, prev = (r - 1 + me + rank) % size;

    for (int i = 0; i < SLOTS; ++i) buf[i] = fence_value(rank, me, r, i);
    MPI_OK(MPI_Put(buf, SLOTS, MPI_INT64_T, t, test_disp(&shared_win, t, slot(rank, me, 0), 8), SLOTS, MPI_INT64_T,
                   shared_win.win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, test_disp(&shared_win, t, 0, 8), 1, MPI_INT64_T, MPI_SUM,
                          shared_win.win));
    if (r > 0 && prev != t) {
        MPI_OK(MPI_Get(fence_got[me], SLOTS, MPI_INT64_T, prev, test_disp(&shared_win, prev, slot(rank, me, 0), 8),
                       SLOTS, MPI_INT64_T, shared_win.win));
    }
    return NULL;
}

/* PSCW epochs: every rank exposes its window to every rank and accesses
 * every rank; in round r thread `me` puts into its slots at each target and
 * adds one to counter [1] there, all threads at once as the epoch's first
 * operations -- newrma's MPI_Win_start does not wait for the posts, so the
 * threads race to wait for them (only one may) -- and the main thread
 * completes and waits. */
#define PSCW_ROUNDS 20
static int pscw_round;

static int64_t pscw_value(int origin, int thread, int round, int i)
{
    return (int64_t) origin * 1000000 + thread * 10000 + round * 10 + i + 7;
}

static void *pscw_worker(void *arg)
{
    int me = (int) (intptr_t) arg;
    int64_t one = 1, buf[SLOTS];

    for (int i = 0; i < SLOTS; ++i) buf[i] = pscw_value(rank, me, pscw_round, i);
    for (int k = 0; k < size; ++k) {
        int t = (k + me + rank) % size;
        MPI_OK(MPI_Put(buf, SLOTS, MPI_INT64_T, t, test_disp(&shared_win, t, slot(rank, me, 0), 8), SLOTS,
                       MPI_INT64_T, shared_win.win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, test_disp(&shared_win, t, 1, 8), 1, MPI_INT64_T, MPI_SUM,
                              shared_win.win));
    }
    return NULL;
}

static void pscw_phase(const char *flavor)
{
    pthread_t th[THREADS];
    MPI_Group all;
    int64_t *m = shared_win.mem, before;

    MPI_OK(MPI_Win_get_group(shared_win.win, &all));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, shared_win.win));
    before = m[1];
    MPI_OK(MPI_Win_unlock(rank, shared_win.win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (pscw_round = 0; pscw_round < PSCW_ROUNDS; ++pscw_round) {
        MPI_OK(MPI_Win_post(all, 0, shared_win.win));
        MPI_OK(MPI_Win_start(all, 0, shared_win.win));
        for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, pscw_worker, (void *) (intptr_t) t);
        for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
        MPI_OK(MPI_Win_complete(shared_win.win));
        MPI_OK(MPI_Win_wait(shared_win.win));
        for (int o = 0; o < size; ++o)
            for (int t = 0; t < THREADS; ++t)
                for (int i = 0; i < SLOTS; ++i)
                    CHECK(m[slot(o, t, i)] == pscw_value(o, t, pscw_round, i),
                          "%s: PSCW round %d: slot %d of origin %d thread %d is %lld, expected %lld", flavor,
                          pscw_round, i, o, t, (long long) m[slot(o, t, i)],
                          (long long) pscw_value(o, t, pscw_round, i));
    }
    CHECK(m[1] - before == (int64_t) PSCW_ROUNDS * size * THREADS,
          "%s: accumulate counter grew by %lld in the PSCW epochs, expected %lld", flavor, (long long) (m[1] - before),
          (long long) PSCW_ROUNDS * size * THREADS);
    MPI_Group_free(&all);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* One exclusive lock, held by the main thread, shared by every thread of
 * the process: their fetch_and_ops and accumulates on one target must still
 * be atomic with each other (an exclusive lock keeps other processes out,
 * not this process's other threads). */
#define EXCL_ITERS 2000
static int excl_target;

static void *exclusive_worker(void *arg)
{
    int64_t one = 1, prev;
    (void) arg;
    for (int it = 0; it < EXCL_ITERS; ++it) {
        MPI_OK(MPI_Fetch_and_op(&one, &prev, MPI_INT64_T, excl_target, test_disp(&shared_win, excl_target, 0, 8),
                                MPI_SUM, shared_win.win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, excl_target, test_disp(&shared_win, excl_target, 1, 8), 1,
                              MPI_INT64_T, MPI_SUM, shared_win.win));
    }
    return NULL;
}

static void exclusive_phase(const char *flavor)
{
    pthread_t th[THREADS];
    int64_t before[2], *m = shared_win.mem;

    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, shared_win.win));
    before[0] = m[0];
    before[1] = m[1];
    MPI_OK(MPI_Win_unlock(rank, shared_win.win));
    MPI_Barrier(MPI_COMM_WORLD);
    excl_target = (rank + 1) % size;   /* every rank locks a different target */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, excl_target, 0, shared_win.win));
    for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, exclusive_worker, NULL);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    MPI_OK(MPI_Win_unlock(excl_target, shared_win.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, shared_win.win));
    for (int i = 0; i < 2; ++i)
        CHECK(m[i] - before[i] == THREADS * EXCL_ITERS, "%s: counter %d under one exclusive lock grew by %lld, "
              "expected %d", flavor, i, (long long) (m[i] - before[i]), THREADS * EXCL_ITERS);
    MPI_OK(MPI_Win_unlock(rank, shared_win.win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Counter [0] of every rank: `before` plus one per (origin, thread, round)
 * that chose it. */
static void fence_phase(const char *flavor, int64_t before)
{
    pthread_t th[THREADS];

    MPI_OK(MPI_Win_fence(0, shared_win.win));
    for (fence_round = 0; fence_round < FENCE_ROUNDS; ++fence_round) {
        for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, fence_worker, (void *) (intptr_t) t);
        for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
        MPI_OK(MPI_Win_fence(0, shared_win.win));
        int r = fence_round;
        for (int me = 0; me < THREADS && r > 0; ++me) {
            if ((r - 1 + me + rank) % size == (r + me + rank) % size) continue;
            for (int i = 0; i < SLOTS; ++i)
                CHECK(fence_got[me][i] == fence_value(rank, me, r - 1, i),
                      "%s: fence round %d thread %d: got %lld, expected %lld", flavor, r, me,
                      (long long) fence_got[me][i], (long long) fence_value(rank, me, r - 1, i));
        }
    }
    int64_t expect = before, *m = shared_win.mem;
    for (int o = 0; o < size; ++o)
        for (int t = 0; t < THREADS; ++t)
            for (int r = 0; r < FENCE_ROUNDS; ++r) expect += (r + t + o) % size == rank;
    CHECK(m[0] == expect, "%s: counter after the fence epochs %lld, expected %lld", flavor, (long long) m[0],
          (long long) expect);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, shared_win.win));
}

int main(int argc, char **argv)
{
    if (!test_init_multiple(&argc, &argv)) {
        return test_finalize("threads_ops");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        test_win_create(&shared_win, flavor, (2 + (size_t) size * THREADS * SLOTS) * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
        for (int t = 0; t < THREADS; ++t)
            test_win_create(&own_win[t], flavor, 2 * (size_t) size * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock_all(0, shared_win.win));
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
        for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
        MPI_OK(MPI_Win_unlock_all(shared_win.win));
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t *m = shared_win.mem;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, shared_win.win));
        /* each rank's counter got one increment per (origin, thread, iteration) that chose it */
        int64_t expect = 0;
        for (int o = 0; o < size; ++o)
            for (int t = 0; t < THREADS; ++t)
                for (int it = 0; it < ITERS; ++it) expect += (it + t + o) % size == rank;
        CHECK(m[0] == expect, "%s: counter %lld, expected %lld", flavor_names[flavor], (long long) m[0],
              (long long) expect);
        CHECK(m[1] == expect, "%s: accumulate counter %lld, expected %lld", flavor_names[flavor], (long long) m[1],
              (long long) expect);
        int64_t counted = m[0];
        MPI_OK(MPI_Win_unlock(rank, shared_win.win));
        MPI_Barrier(MPI_COMM_WORLD);
        fence_phase(flavor_names[flavor], counted);
        pscw_phase(flavor_names[flavor]);
        exclusive_phase(flavor_names[flavor]);
        for (int t = 0; t < THREADS; ++t) {
            int64_t *c = own_win[t].mem;
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, own_win[t].win));
            for (int o = 0; o < size; ++o) {
                int64_t e = 0, last = -1;
                for (int it = 0; it < ITERS; ++it) {
                    e += (it + o) % size == rank;
                    if ((it + o) % size == rank) last = own_value(o, t, it);
                }
                CHECK(c[o] == e, "%s: own window %d: from %d %lld, expected %lld", flavor_names[flavor], t, o,
                      (long long) c[o], (long long) e);
                CHECK(c[size + o] == last, "%s: own window %d: cell of %d is %lld, expected %lld",
                      flavor_names[flavor], t, o, (long long) c[size + o], (long long) last);
            }
            MPI_OK(MPI_Win_unlock(rank, own_win[t].win));
        }
        test_win_free(&shared_win);
        for (int t = 0; t < THREADS; ++t) test_win_free(&own_win[t]);
    }
    return test_finalize("threads_ops");
}
