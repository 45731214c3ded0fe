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
 * Passive target with MPI_Win_lock_all/MPI_Win_unlock_all and the flush
 * family, every window flavor:
 *  - puts to every target, each followed by MPI_Win_flush(target) and a get
 *    of the same words that must see them;
 *  - puts to every target, MPI_Win_flush_all, gets from every target,
 *    MPI_Win_flush_local_all;
 *  - MPI_Win_flush_local(target): the origin buffer is reusable right after
 *    it (it is overwritten before the next put and the target still holds
 *    what was put);
 *  - a put completed by MPI_Win_flush is seen by the target (a get of its own
 *    window) after a barrier inside the same lock_all epoch;
 *  - MPI_MODE_NOCHECK lock_all.
 * After each unlock_all and a barrier every target finds each origin's words
 * in its own memory.
 */
#include "common.h"

#define SLOT 6      /* int64 words each origin owns in a target's window */

static int64_t pattern(int round, int origin, int target, int i)
{
    return (int64_t) round * 100000007 + (int64_t) origin * 1000003 + target * 1009 + i + 1;
}

/* After unlock_all + barrier: my window holds every origin's round data. */
static void check_mine(const char *fn, const char *what, const int64_t *mine, int round, int rank, int size)
{
    for (int o = 0; o < size; ++o)
        for (int i = 0; i < SLOT; ++i)
            CHECK(mine[o * SLOT + i] == pattern(round, o, rank, i),
                  "%s: %s: word %d of origin %d's slot is %lld, expected %lld", fn, what, i, o,
                  (long long) mine[o * SLOT + i], (long long) pattern(round, o, rank, i));
}

static void run(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    test_win_t tw;
    int64_t src[SLOT];
    int64_t *got = malloc(sizeof(int64_t) * SLOT * (size_t) size);
    const MPI_Aint u = sizeof(int64_t);

    /* slots 0..size-1: one per origin; slot size: the owner's own words */
    test_win_create(&tw, flavor, (size_t) (size + 1) * SLOT * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    int64_t *mine = tw.mem;

    /* ---- round 1: put, flush(target), get back ---- */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int k = 0; k < size; ++k) {
        int t = (rank + k) % size;
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(1, rank, t, i);
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(t, tw.win));
        memset(got, 0, sizeof(int64_t) * SLOT);
        MPI_OK(MPI_Get(got, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(t, tw.win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(got[i] == pattern(1, rank, t, i), "%s: flush: get from %d after put+flush: word %d is %lld, expected %lld",
                  fn, t, i, (long long) got[i], (long long) pattern(1, rank, t, i));
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_mine(fn, "after flush round", mine, 1, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- round 2: puts to all, flush_all, gets from all, flush_local_all ---- */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    int64_t *srcs = malloc(sizeof(int64_t) * SLOT * (size_t) size);
    for (int t = 0; t < size; ++t) {
        for (int i = 0; i < SLOT; ++i) srcs[t * SLOT + i] = pattern(2, rank, t, i);
        MPI_OK(MPI_Put(srcs + t * SLOT, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T,
                       tw.win));
    }
    MPI_OK(MPI_Win_flush_all(tw.win));
    for (int i = 0; i < SLOT * size; ++i) got[i] = 0;
    for (int t = 0; t < size; ++t)
        MPI_OK(MPI_Get(got + t * SLOT, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T,
                       tw.win));
    MPI_OK(MPI_Win_flush_local_all(tw.win));
    for (int t = 0; t < size; ++t)
        for (int i = 0; i < SLOT; ++i)
            CHECK(got[t * SLOT + i] == pattern(2, rank, t, i),
                  "%s: flush_all: get from %d: word %d is %lld, expected %lld", fn, t, i,
                  (long long) got[t * SLOT + i], (long long) pattern(2, rank, t, i));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    free(srcs);
    MPI_Barrier(MPI_COMM_WORLD);
    check_mine(fn, "after flush_all round", mine, 2, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- round 3: one origin buffer reused after each flush_local ---- */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int k = 0; k < size; ++k) {
        int t = (rank + k) % size;
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(3, rank, t, i);
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush_local(t, tw.win));
        for (int i = 0; i < SLOT; ++i) src[i] = -1;     /* the put must not see this */
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_mine(fn, "after flush_local round", mine, 3, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- round 4: a flushed put is visible to the target within the epoch ---- */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(4, rank, right, i);
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, right, test_disp(&tw, right, size * SLOT, u), SLOT, MPI_INT64_T,
                       tw.win));
        MPI_OK(MPI_Win_flush(right, tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
        memset(got, 0, sizeof(int64_t) * SLOT);
        MPI_OK(MPI_Get(got, SLOT, MPI_INT64_T, rank, test_disp(&tw, rank, size * SLOT, u), SLOT, MPI_INT64_T,
                       tw.win));
        MPI_OK(MPI_Win_flush_local(rank, tw.win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(got[i] == pattern(4, left, rank, i),
                  "%s: own window after %d's put+flush+barrier: word %d is %lld, expected %lld", fn, left, i,
                  (long long) got[i], (long long) pattern(4, left, rank, i));
        MPI_OK(MPI_Win_unlock_all(tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* ---- round 5: MPI_MODE_NOCHECK lock_all (nobody locks exclusively) ---- */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, tw.win));
    for (int k = 0; k < size; ++k) {
        int t = (rank + size - k) % size;
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(5, rank, t, i);
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush_local(t, tw.win));
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_mine(fn, "after NOCHECK lock_all round", mine, 5, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    /* and gets under a NOCHECK lock_all, completed by unlock_all */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, tw.win));
    for (int i = 0; i < SLOT * size; ++i) got[i] = 0;
    for (int t = 0; t < size; ++t)
        MPI_OK(MPI_Get(got + t * SLOT, SLOT, MPI_INT64_T, t, test_disp(&tw, t, ((rank + 1) % size) * SLOT, u), SLOT,
                       MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    for (int t = 0; t < size; ++t)
        for (int i = 0; i < SLOT; ++i)
            CHECK(got[t * SLOT + i] == pattern(5, (rank + 1) % size, t, i),
                  "%s: NOCHECK get from %d: word %d is %lld, expected %lld", fn, t, i,
                  (long long) got[t * SLOT + i], (long long) pattern(5, (rank + 1) % size, t, i));

    /* nobody detaches (dynamic) or frees while another rank still reads */
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
    free(got);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("lock_all_flush");
}
