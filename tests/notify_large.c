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
 * Notified RMA (docs/notified-rma.md) with blocks large enough that the
 * transports split or defer them (UCX rendezvous, FIFO fragments: on the
 * message path the packet's header arrives before its data), every window
 * flavor:
 *  - (lock_all) every rank puts ROUNDS blocks of BLOCK words to every rank (itself
 *    too), notifying the origin's counter; whenever the target sees a
 *    counter rise to v, origin's block v-1 is complete in its memory, every
 *    word (a notification counted when the header came, before the data,
 *    fails here); each counter ends at exactly ROUNDS;
 *  - (MPI_Win_lock of each target in turn) every rank gets every rank's
 *    first block with MPIX_Get_notify; the
 *    target, once its get counter says all gets are done, overwrites the
 *    block: the origins' copies are still exact (a get notified before its
 *    reply has read the memory fails here); the counter ends at exactly
 *    size.
 * Checks the path taken (memory, message or fallback) per mode.
 * newrma-test: np>=1 links-mpix
 */
#include "notify_common.h"

#define ROUNDS 4
#define BLOCK 32768             /* int64 words per block: 256 KiB, past UCX's eager limit over TCP */

static int64_t pattern(int origin, int target, int round, int i)
{
    return (int64_t) origin * 1000003 + (int64_t) target * 10007 + round * 101 + i + 1;
}

static void check_block(const int64_t *mem, int origin, int rank, int round, const char *fl)
{
    const int64_t *block = mem + (origin * ROUNDS + round) * BLOCK;

    for (int i = 0; i < BLOCK; ++i) {
        int64_t got = __atomic_load_n(&block[i], __ATOMIC_RELAXED);
        if (got != pattern(origin, rank, round, i)) {
            CHECK(0, "%s: origin %d round %d word %d is %lld once counted", fl, origin, round, i, (long long) got);
            return;
        }
    }
}

static void large_puts(test_win_t *tw, int path, int rank, int size, const char *fl)
{
    int64_t *block = malloc(BLOCK * sizeof(int64_t));
    int *checked = calloc((size_t) size, sizeof(int)), done = 0;

    for (int k = 0; k < ROUNDS; ++k)
        for (int t = 0; t < size; ++t) {
            for (int i = 0; i < BLOCK; ++i) block[i] = pattern(rank, t, k, i);
            MPI_OK(MPIX_Put_notify(block, BLOCK, MPI_INT64_T, t, test_disp(tw, t, (rank * ROUNDS + k) * BLOCK, 8),
                                   BLOCK, MPI_INT64_T, tw->win, rank));
        }
    while (done < size && !test_errors) {
        done = 0;
        for (int o = 0; o < size; ++o) {
            MPI_Count seen = notify_counter(tw->win, o);
            CHECK(seen >= 0 && seen <= ROUNDS, "%s: counter of origin %d is %lld", fl, o, (long long) seen);
            if (MPIX_NOTIFY_PATH_FALLBACK == path) MPI_OK(MPI_Win_sync(tw->win));
            for (; checked[o] < seen && checked[o] < ROUNDS; ++checked[o]) check_block(tw->mem, o, rank, checked[o], fl);
            done += seen >= ROUNDS;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < size; ++o)
        CHECK(notify_counter(tw->win, o) == ROUNDS, "%s: origin %d's counter ends at %lld, expected %d", fl, o,
              (long long) notify_counter(tw->win, o), ROUNDS);
    free(checked);
    free(block);
}

static void large_gets(test_win_t *tw, int path, int rank, int size, const char *fl)
{
    const int idx = size;
    int64_t *got = malloc(BLOCK * sizeof(int64_t)), *mem = tw->mem;

    for (int t = 0; t < size; ++t) {
        /* my own block 0 at t: origin rank, target t, round 0 (a lock
         * epoch of its own: the notified call takes the lazy lock) */
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw->win));
        MPI_OK(MPIX_Get_notify(got, BLOCK, MPI_INT64_T, t, test_disp(tw, t, rank * ROUNDS * BLOCK, 8), BLOCK,
                               MPI_INT64_T, tw->win, idx));
        for (int i = 0; i < BLOCK; ++i)
            if (got[i] != pattern(rank, t, 0, i)) {
                CHECK(0, "%s: get from %d word %d: %lld", fl, t, i, (long long) got[i]);
                break;
            }
        MPI_OK(MPI_Win_unlock(t, tw->win));
    }
    while (notify_counter(tw->win, idx) < size && !test_errors) {
    }
    /* every get of my memory has read it: it is mine again */
    if (MPIX_NOTIFY_PATH_FALLBACK == path) MPI_OK(MPI_Win_sync(tw->win));
    for (int o = 0; o < size; ++o)
        for (int i = 0; i < BLOCK; ++i) __atomic_store_n(&mem[o * ROUNDS * BLOCK + i], -1, __ATOMIC_RELAXED);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(notify_counter(tw->win, idx) == size, "%s: get counter %lld, expected %d", fl,
          (long long) notify_counter(tw->win, idx), size);
    free(got);
}

int main(int argc, char **argv)
{
    int rank, size;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        const char *fl = flavor_names[flavor];
        test_win_t tw;
        int path = notify_win_open(&tw, flavor, (size_t) size * ROUNDS * BLOCK * sizeof(int64_t), size + 1);

        MPI_OK(MPI_Win_lock_all(0, tw.win));
        large_puts(&tw, path, rank, size, fl);
        MPI_OK(MPI_Win_unlock_all(tw.win));
        large_gets(&tw, path, rank, size, fl);
        test_win_free(&tw);
    }
    return test_finalize("notify_large");
}
