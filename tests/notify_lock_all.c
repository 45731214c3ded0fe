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
 * Notified RMA (libmpix_newrma, docs/notified-rma.md) in a lock_all epoch,
 * every window flavor:
 *  - producer/consumer, one counter per origin: every rank puts ROUNDS
 *    blocks to every rank (itself too), each with MPIX_Put_notify on the
 *    origin's counter; the target polls the counters and, whenever it sees
 *    counter o at v, finds origin o's first v blocks in its memory
 *    (notification never before its data); at the end each counter is
 *    exactly ROUNDS (none lost, none counted twice);
 *  - many origins, one counter: MPIX_Accumulate_notify(+1) from every rank
 *    into one word, counter exactly size * ROUNDS, word exactly the same;
 *  - notified get: every rank gets every rank's block with MPIX_Get_notify,
 *    checks the bytes, and each target's get counter ends at size * ROUNDS;
 *  - MPIX_Win_notify_set_value/get_value round trip, and the error class of
 *    a bad counter index and of a second attach (MPI_ERR_ARG).
 *  - detach, then attach again with one counter: the detached window's
 *    calls fail (MPI_ERR_ARG), the new counter is 0 and the only one; the
 *    window is freed with it attached, and the next flavor's window starts
 *    with every counter at 0.
 * Reports the path (memory, message or fallback) and checks it against the
 * mode (test_notify_expected_path).
 * newrma-test: np>=1 links-mpix
 */
#include "notify_common.h"

#define ROUNDS 40
#define BLOCK 5                 /* int64 words per block */

static int64_t pattern(int origin, int target, int round, int i)
{
    return (int64_t) origin * 1000003 + (int64_t) target * 10007 + round * 101 + i + 1;
}

/* the fallback's data is in the window's memory, which MPI makes
 * visible to the target's loads after MPI_Win_sync */
static void see_data(MPI_Win win, int path)
{
    if (MPIX_NOTIFY_PATH_FALLBACK == path) {
        MPI_OK(MPI_Win_sync(win));
    }
}

/* Origin o's first `seen` blocks are in my memory. */
static void check_blocks(const int64_t *mem, int origin, int rank, int seen, const char *fl)
{
    for (int k = 0; k < seen; ++k)
        for (int i = 0; i < BLOCK; ++i) {
            int64_t got = __atomic_load_n(&mem[(origin * ROUNDS + k) * BLOCK + i], __ATOMIC_RELAXED);
            CHECK(got == pattern(origin, rank, k, i), "%s: origin %d round %d word %d: %lld after %d notifications",
                  fl, origin, k, i, (long long) got, seen);
        }
}

static void producer_consumer(test_win_t *tw, int path, int rank, int size, const char *fl)
{
    int64_t block[BLOCK];
    int done = 0;

    for (int k = 0; k < ROUNDS; ++k)
        for (int t = 0; t < size; ++t) {
            for (int i = 0; i < BLOCK; ++i) block[i] = pattern(rank, t, k, i);
            MPI_OK(MPIX_Put_notify(block, BLOCK, MPI_INT64_T, t, test_disp(tw, t, (rank * ROUNDS + k) * BLOCK, 8),
                                   BLOCK, MPI_INT64_T, tw->win, rank));
        }
    /* consume: every origin's counter, checking its blocks at each value seen */
    while (done < size) {
        done = 0;
        for (int o = 0; o < size; ++o) {
            MPI_Count seen = notify_counter(tw->win, o);
            CHECK(seen >= 0 && seen <= ROUNDS, "%s: counter of origin %d is %lld", fl, o, (long long) seen);
            see_data(tw->win, path);
            check_blocks(tw->mem, o, rank, (int) (seen > ROUNDS ? ROUNDS : seen), fl);
            done += seen >= ROUNDS;
        }
        if (test_errors) break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < size; ++o)
        CHECK(notify_counter(tw->win, o) == ROUNDS, "%s: origin %d's counter ends at %lld, expected %d", fl, o,
              (long long) notify_counter(tw->win, o), ROUNDS);
}

static void many_to_one(test_win_t *tw, int path, int rank, int size, const char *fl)
{
    const int idx = size;         /* the shared counter */
    const MPI_Aint word = (MPI_Aint) size * ROUNDS * BLOCK;
    const int64_t one = 1;
    const MPI_Count total = (MPI_Count) size * ROUNDS;

    for (int k = 0; k < ROUNDS; ++k)
        for (int t = 0; t < size; ++t)
            MPI_OK(MPIX_Accumulate_notify(&one, 1, MPI_INT64_T, t, test_disp(tw, t, word, 8), 1, MPI_INT64_T, MPI_SUM,
                                          tw->win, idx));
    while (notify_counter(tw->win, idx) < total && !test_errors) {
    }
    see_data(tw->win, path);
    CHECK(__atomic_load_n(&((int64_t *) tw->mem)[word], __ATOMIC_RELAXED) == total,
          "%s: accumulated word %lld, expected %lld", fl, (long long) ((int64_t *) tw->mem)[word], (long long) total);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(notify_counter(tw->win, idx) == total, "%s: shared counter %lld, expected %lld", fl,
          (long long) notify_counter(tw->win, idx), (long long) total);
}

static void notified_gets(test_win_t *tw, int rank, int size, const char *fl)
{
    const int idx = size + 1;
    const MPI_Count total = (MPI_Count) size * ROUNDS;
    int64_t got[BLOCK];

    /* my blocks from the producer phase stay: origin t's round k for me */
    for (int k = 0; k < ROUNDS; ++k)
        for (int t = 0; t < size; ++t) {
            MPI_OK(MPIX_Get_notify(got, BLOCK, MPI_INT64_T, t, test_disp(tw, t, (rank * ROUNDS + k) * BLOCK, 8), BLOCK,
                                   MPI_INT64_T, tw->win, idx));
            for (int i = 0; i < BLOCK; ++i)
                CHECK(got[i] == pattern(rank, t, k, i), "%s: get from %d round %d word %d: %lld", fl, t, k, i,
                      (long long) got[i]);
        }
    while (notify_counter(tw->win, idx) < total && !test_errors) {
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(notify_counter(tw->win, idx) == total, "%s: get counter %lld, expected %lld", fl, (long long) notify_counter(tw->win, idx),
          (long long) total);
}

static void values_and_errors(MPI_Win win, int size, const char *fl)
{
    MPI_Count v = -1;

    MPI_OK(MPIX_Win_notify_set_value(win, size + 2, 123456789012LL));
    MPI_OK(MPIX_Win_notify_get_value(win, size + 2, &v));
    CHECK(v == 123456789012LL, "%s: set/get value %lld", fl, (long long) v);
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_get_value(win, size + 3, &v));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_set_value(win, -1, 0));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_attach(win, 1, MPI_INFO_NULL));
}

/* A detached window refuses the counters' calls; attached again, with one
 * counter, it has a fresh one and only that one (the library keeps no
 * state of the first attach anywhere, a per-thread cache included) */
static void reattached(MPI_Win win, const char *fl)
{
    MPI_Count v = -1;

    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_get_value(win, 0, &v));
    MPI_OK(MPIX_Win_notify_attach(win, 1, MPI_INFO_NULL));
    CHECK(0 == notify_counter(win, 0), "%s: reattached counter %lld", fl, (long long) notify_counter(win, 0));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_get_value(win, 1, &v));
}

int main(int argc, char **argv)
{
    int rank, size;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        const char *fl = flavor_names[flavor];
        size_t bytes = ((size_t) size * ROUNDS * BLOCK + 1) * sizeof(int64_t);
        test_win_t tw;
        int path = notify_win_open(&tw, flavor, bytes, size + 3);

        /* the last flavor's window went freed with counters attached: a new
         * window (maybe the same handle) has all its own, at 0 */
        CHECK(0 == notify_counter(tw.win, size + 2), "%s: fresh counter %lld", fl,
              (long long) notify_counter(tw.win, size + 2));

        MPI_OK(MPI_Win_lock_all(0, tw.win));
        producer_consumer(&tw, path, rank, size, fl);
        many_to_one(&tw, path, rank, size, fl);
        notified_gets(&tw, rank, size, fl);
        values_and_errors(tw.win, size, fl);
        MPI_OK(MPI_Win_unlock_all(tw.win));
        MPI_OK(MPIX_Win_notify_detach(tw.win));
        MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_notify_detach(tw.win));
        reattached(tw.win, fl);
        test_win_free(&tw);
    }
    return test_finalize("notify_lock_all");
}
