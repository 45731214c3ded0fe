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
 * Passive target with MPI_Win_lock/MPI_Win_unlock, every window flavor:
 *  - put under an exclusive lock, get back under a shared lock, to every rank;
 *  - lock to self (put/get of the own window, and local stores seen by a get);
 *  - MPI_MODE_NOCHECK (shared locks to every rank, an exclusive lock to self);
 *  - no lost update: every rank does K read-modify-write cycles of one counter
 *    on rank 0 under an exclusive lock, the counter ends at size*K;
 *  - locks on several targets at once (exclusive, one origin at a time;
 *    shared, all origins at once);
 *  - no torn record: writers put a 16-word record (two puts of 8 words) whose
 *    words are all equal under an exclusive lock; readers get it (two gets)
 *    under a shared lock, or under lock_all, and never see words that differ.
 */
#include "common.h"

#define SLOT 8          /* int64 words each origin owns in a target's window */
#define K 200           /* lost-update iterations per rank */
#define REC 16          /* words of the torn-record test's record */
#define ROUNDS 200      /* torn-record iterations per rank */

static int64_t pattern(int origin, int target, int i, int round)
{
    return (int64_t) round * 100000007 + (int64_t) origin * 1000003 + target * 1009 + i + 1;
}

/* How many targets one origin locks at once: all of them, except against
 * Open MPI 4.1's osc/pt2pt (the reference for create and dynamic windows),
 * which hangs in MPI_Win_unlock once an origin holds locks on three targets,
 * even shared and uncontended; newrma is held to every rank. */
static int max_locks_held(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    if (NULL != osc && NULL == strstr(osc, "newrma") && NULL != strstr(osc, "pt2pt")
        && (FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor))
        return 2;
    return 1 << 30;
}

/* Put under exclusive, get under shared; every rank to every rank. */
static void basic(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    test_win_t tw;
    int64_t src[SLOT], dst[SLOT];

    test_win_create(&tw, flavor, (size_t) size * SLOT * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    int64_t *mine = tw.mem;

    for (int k = 0; k < size; ++k) {
        int t = (rank + k) % size;      /* everyone starts with a different target */
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(rank, t, i, 0);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw.win));
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, sizeof(int64_t)), SLOT,
                       MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(t, tw.win));

        memset(dst, 0, sizeof(dst));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
        MPI_OK(MPI_Get(dst, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, sizeof(int64_t)), SLOT,
                       MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(t, tw.win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(dst[i] == pattern(rank, t, i, 0), "%s: get from %d under shared lock: word %d is %lld, expected %lld",
                  fn, t, i, (long long) dst[i], (long long) pattern(rank, t, i, 0));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* every origin's slot of my window holds what it put */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    for (int o = 0; o < size; ++o)
        for (int i = 0; i < SLOT; ++i)
            CHECK(mine[o * SLOT + i] == pattern(o, rank, i, 0), "%s: my slot of origin %d word %d is %lld, expected %lld",
                  fn, o, i, (long long) mine[o * SLOT + i], (long long) pattern(o, rank, i, 0));
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- lock to self ---- */
    for (int i = 0; i < SLOT; ++i) src[i] = pattern(rank, rank, i, 1);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
    MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, rank, test_disp(&tw, rank, rank * SLOT, sizeof(int64_t)), SLOT,
                   MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_flush(rank, tw.win));
    memset(dst, 0, sizeof(dst));
    MPI_OK(MPI_Get(dst, SLOT, MPI_INT64_T, rank, test_disp(&tw, rank, rank * SLOT, sizeof(int64_t)), SLOT,
                   MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    for (int i = 0; i < SLOT; ++i) {
        CHECK(dst[i] == pattern(rank, rank, i, 1), "%s: self get word %d is %lld", fn, i, (long long) dst[i]);
        CHECK(mine[rank * SLOT + i] == pattern(rank, rank, i, 1), "%s: self put word %d is %lld", fn, i,
              (long long) mine[rank * SLOT + i]);
    }
    /* a local store under an exclusive self lock is seen by a later get */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
    mine[rank * SLOT] = -7;
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    dst[0] = 0;
    MPI_OK(MPI_Get(dst, 1, MPI_INT64_T, rank, test_disp(&tw, rank, rank * SLOT, sizeof(int64_t)), 1, MPI_INT64_T,
                   tw.win));
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    CHECK(dst[0] == -7, "%s: get after a local store under self lock is %lld", fn, (long long) dst[0]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- locks on several targets at once ---- */
    int nlocks = size < max_locks_held(flavor) ? size : max_locks_held(flavor);
    /* exclusive locks on nlocks ranks (me and the ones after me), one origin
     * at a time (so no order of acquisition can deadlock), puts to them,
     * unlocked in reverse order */
    for (int turn = 0; turn < size; ++turn) {
        if (turn == rank) {
            for (int k = 0; k < nlocks; ++k) MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (rank + k) % size, 0, tw.win));
            for (int k = 0; k < nlocks; ++k) {
                int t = (rank + k) % size;
                for (int i = 0; i < SLOT; ++i) src[i] = pattern(rank, t, i, 4);
                MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, sizeof(int64_t)), SLOT,
                               MPI_INT64_T, tw.win));
                MPI_OK(MPI_Win_flush_local(t, tw.win));
            }
            for (int k = nlocks - 1; k >= 0; --k) MPI_OK(MPI_Win_unlock((rank + k) % size, tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* shared locks on nlocks ranks at once, by everyone at the same time,
     * gets of what I put, unlocked in another order */
    {
        int64_t *all = calloc((size_t) size * SLOT, sizeof(int64_t));
        for (int k = 0; k < nlocks; ++k) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, (rank + k) % size, 0, tw.win));
        for (int k = 0; k < nlocks; ++k) {
            int t = (rank + k) % size;
            MPI_OK(MPI_Get(all + t * SLOT, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, sizeof(int64_t)), SLOT,
                           MPI_INT64_T, tw.win));
        }
        for (int k = 0; k < nlocks; ++k) MPI_OK(MPI_Win_unlock((rank + k) % size, tw.win));
        for (int k = 0; k < nlocks; ++k) {
            int t = (rank + k) % size;
            for (int i = 0; i < SLOT; ++i)
                CHECK(all[t * SLOT + i] == pattern(rank, t, i, 4),
                      "%s: get from %d with %d ranks locked: word %d is %lld, expected %lld", fn, t, nlocks, i,
                      (long long) all[t * SLOT + i], (long long) pattern(rank, t, i, 4));
        }
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_MODE_NOCHECK ---- */
    /* shared locks with NOCHECK (nobody locks exclusively in this phase):
     * puts to disjoint slots of every rank, then gets of them */
    for (int t = 0; t < size; ++t) {
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(rank, t, i, 2);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, tw.win));
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, sizeof(int64_t)), SLOT,
                       MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(t, tw.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < size; ++t) {
        int o = (rank + 1) % size;      /* read another origin's slot */
        memset(dst, 0, sizeof(dst));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, tw.win));
        MPI_OK(MPI_Get(dst, SLOT, MPI_INT64_T, t, test_disp(&tw, t, o * SLOT, sizeof(int64_t)), SLOT, MPI_INT64_T,
                       tw.win));
        MPI_OK(MPI_Win_unlock(t, tw.win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(dst[i] == pattern(o, t, i, 2), "%s: NOCHECK get of %d's slot of origin %d word %d is %lld, expected %lld",
                  fn, t, o, i, (long long) dst[i], (long long) pattern(o, t, i, 2));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* an exclusive NOCHECK lock of my own window: nobody else locks it now */
    for (int i = 0; i < SLOT; ++i) src[i] = pattern(rank, rank, i, 3);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, MPI_MODE_NOCHECK, tw.win));
    MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, rank, test_disp(&tw, rank, 0, sizeof(int64_t)), SLOT, MPI_INT64_T,
                   tw.win));
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    {
        int left = (rank + size - 1) % size;
        memset(dst, 0, sizeof(dst));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, left, 0, tw.win));
        MPI_OK(MPI_Get(dst, SLOT, MPI_INT64_T, left, test_disp(&tw, left, 0, sizeof(int64_t)), SLOT, MPI_INT64_T,
                       tw.win));
        MPI_OK(MPI_Win_unlock(left, tw.win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(dst[i] == pattern(left, left, i, 3), "%s: get of %d's NOCHECK self put word %d is %lld", fn, left,
                  i, (long long) dst[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
}

/* Read-modify-write of a counter on rank 0 under an exclusive lock. */
static void lost_update(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    test_win_t tw;

    test_win_create(&tw, flavor, sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    MPI_Aint disp = test_disp(&tw, 0, 0, sizeof(int64_t));
    for (int k = 0; k < K; ++k) {
        int64_t counter = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
        MPI_OK(MPI_Get(&counter, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));       /* the get's value is needed now */
        counter += 1;
        MPI_OK(MPI_Put(&counter, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t final = -1;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
    MPI_OK(MPI_Get(&final, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(0, tw.win));
    CHECK(final == (int64_t) size * K, "%s: counter is %lld after %d x %d locked increments", fn,
          (long long) final, size, K);
    /* and through a fence */
    final = -1;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw.win));
    MPI_OK(MPI_Get(&final, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    CHECK(final == (int64_t) size * K, "%s: counter read through a fence is %lld, expected %lld", fn,
          (long long) final, (long long) size * K);
    test_win_free(&tw);
}

/* A 16-word record on rank 0, written under exclusive, read under shared. */
static void torn_record(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    test_win_t tw;
    int64_t rec[REC];
    int torn = 0, bad_value = 0, reads = 0;

    test_win_create(&tw, flavor, REC * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    MPI_Aint disp0 = test_disp(&tw, 0, 0, sizeof(int64_t));
    MPI_Aint disp1 = test_disp(&tw, 0, REC / 2, sizeof(int64_t));
    for (int r = 0; r < ROUNDS; ++r) {
        if ((r + rank) % 2 == 0) {
            /* writer: two puts of half a record each, all words equal */
            int64_t v = (int64_t) rank * ROUNDS + r + 1;
            for (int i = 0; i < REC; ++i) rec[i] = v;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
            MPI_OK(MPI_Put(rec, REC / 2, MPI_INT64_T, 0, disp0, REC / 2, MPI_INT64_T, tw.win));
            MPI_OK(MPI_Put(rec + REC / 2, REC / 2, MPI_INT64_T, 0, disp1, REC / 2, MPI_INT64_T, tw.win));
            MPI_OK(MPI_Win_unlock(0, tw.win));
        } else {
            /* reader: two gets of half a record each, under a shared lock
             * of rank 0 or (every other read) under lock_all */
            int use_all = (r / 2) % 2;
            for (int i = 0; i < REC; ++i) rec[i] = -1;
            if (use_all) MPI_OK(MPI_Win_lock_all(0, tw.win));
            else MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
            MPI_OK(MPI_Get(rec, REC / 2, MPI_INT64_T, 0, disp0, REC / 2, MPI_INT64_T, tw.win));
            MPI_OK(MPI_Get(rec + REC / 2, REC / 2, MPI_INT64_T, 0, disp1, REC / 2, MPI_INT64_T, tw.win));
            if (use_all) MPI_OK(MPI_Win_unlock_all(tw.win));
            else MPI_OK(MPI_Win_unlock(0, tw.win));
            reads++;
            for (int i = 1; i < REC; ++i) {
                if (rec[i] != rec[0]) {
                    if (torn++ < 3)
                        CHECK(rec[i] == rec[0], "%s: torn record read in round %d: word %d is %lld, word 0 is %lld",
                              fn, r, i, (long long) rec[i], (long long) rec[0]);
                    break;
                }
            }
            /* 0 (never written) or a value some writer wrote */
            int64_t v = rec[0];
            int ok = (0 == v);
            if (v > 0) {
                int64_t w = (v - 1) / ROUNDS, wr = (v - 1) % ROUNDS;
                ok = w < size && (wr + w) % 2 == 0;
            }
            if (!ok && bad_value++ < 3)
                CHECK(ok, "%s: record holds %lld, which no writer wrote", fn, (long long) v);
        }
    }
    CHECK(0 == torn, "%s: %d of %d reads saw a torn record", fn, torn, reads);
    MPI_Barrier(MPI_COMM_WORLD);
    /* at the end the record is whole and is one writer's last value */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
    MPI_OK(MPI_Get(rec, REC, MPI_INT64_T, 0, disp0, REC, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(0, tw.win));
    for (int i = 1; i < REC; ++i)
        CHECK(rec[i] == rec[0], "%s: final record word %d is %lld, word 0 is %lld", fn, i, (long long) rec[i],
              (long long) rec[0]);
    CHECK(rec[0] > 0, "%s: final record is %lld, nobody's write landed", fn, (long long) rec[0]);
    /* nobody detaches (dynamic) while another rank still reads rank 0 */
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        basic(flavor);
        lost_update(flavor);
        torn_record(flavor);
    }
    return test_finalize("lock_unlock");
}
