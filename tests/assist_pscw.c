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
 * PSCW hand-offs (osc_newrma_mailbox.c, osc_newrma_mailbox_complete_epoch):
 * on create and dynamic windows a small put or accumulate without result
 * issued in a PSCW access epoch is posted to the target's mailbox, and
 * MPI_Win_complete returns without waiting for it -- MPI completes a put
 * at the target only when the target's MPI_Win_wait returns, and that wait
 * (or a MPI_Win_test returning true) applies whatever the mailbox still
 * holds.  This test checks, on rank 0 as the target:
 *  - values right after MPI_Win_wait / MPI_Win_test, in rounds where the
 *    target computes outside MPI between post and wait (so the requests are
 *    still in its mailbox when the completions arrive) and rounds where it
 *    waits at once;
 *  - accumulates of one origin to one word stay ordered (REPLACE, then SUM)
 *    when the first is left pending and the second must take it back or
 *    wait for it; SUMs of every origin on one shared word (one mailbox, so
 *    most fall back to single-copy) add up;
 *  - a target blocked in MPI_Recv for a message its origins send after
 *    MPI_Win_complete (the standard's "must not deadlock" pattern);
 *  - an accumulate left to the target whose bytes span two accumulate
 *    stripes (granularity 16 bytes here; on dynamic windows stripes follow
 *    addresses, so it happens at any granularity): the target must take
 *    both stripes to apply it, and did not -- its wait hung;
 *  - MPI_Win_complete called by mistake inside a lock epoch fails with
 *    MPI_ERR_RMA_SYNC and leaves the pending put to MPI_Win_unlock;
 *  - with assistance on (osc_newrma_assist_timeout > 0, the single-copy
 *    path), that some requests really were left to the target
 *    (MPI_T osc_newrma_assist_left), at every rank count: these hand-offs
 *    wait for nobody, so they stay when ranks outnumber cores.
 *
 * newrma-test: np>=2 only-newrma
 */
#include "common.h"

#include <time.h>

#define SLICE 8                  /* int64 words per origin */
#define ROUNDS 120
#define SHARED_WORD 0            /* of rank 0's own slice: every origin adds to it */

static MPI_Aint word(const test_win_t *tw, int origin, int k)
{
    return test_disp(tw, 0, (MPI_Aint) (origin * SLICE + k), 8);
}

static int64_t value(int round, int origin, int k)
{
    return (int64_t) round * 10007 + origin * 101 + k + 1;
}

/* One origin's epoch of round `round`: which operations, by round % 4. */
static void origin_epoch(test_win_t *tw, MPI_Group target, int round)
{
    int me = test_rank;
    int64_t v0 = value(round, me, 0), v1 = value(round, me, 1), one = 1;

    MPI_OK(MPI_Win_start(target, 0, tw->win));
    switch (round % 4) {
    case 0:   /* one put, the last operation: left to the target */
        MPI_OK(MPI_Put(&v0, 1, MPI_INT64_T, 0, word(tw, me, 1), 1, MPI_INT64_T, tw->win));
        break;
    case 1:   /* REPLACE then SUM on one word: the SUM must follow */
        MPI_OK(MPI_Accumulate(&v1, 1, MPI_INT64_T, 0, word(tw, me, 2), 1, MPI_INT64_T, MPI_REPLACE, tw->win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, word(tw, me, 2), 1, MPI_INT64_T, MPI_SUM, tw->win));
        break;
    case 2:   /* two puts (one handed off, one batched) and a shared SUM */
        MPI_OK(MPI_Put(&v0, 1, MPI_INT64_T, 0, word(tw, me, 3), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Put(&v1, 1, MPI_INT64_T, 0, word(tw, me, 4), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, word(tw, 0, SHARED_WORD), 1, MPI_INT64_T, MPI_SUM, tw->win));
        break;
    default:  /* the shared SUM alone, and a double accumulate */
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, word(tw, 0, SHARED_WORD), 1, MPI_INT64_T, MPI_SUM, tw->win));
        {
            double d = 0.5 * (double) v0;
            MPI_OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, word(tw, me, 5), 1, MPI_DOUBLE, MPI_REPLACE, tw->win));
        }
        break;
    }
    MPI_OK(MPI_Win_complete(tw->win));
}

/* The target's check right after its wait of round `round`. */
static void target_check(const test_win_t *tw, int size, int round, int64_t shared_expected)
{
    const int64_t *m = tw->mem;

    for (int o = 1 ; o < size ; ++o) {
        const int64_t *s = m + o * SLICE;
        switch (round % 4) {
        case 0:
            CHECK(s[1] == value(round, o, 0), "round %d origin %d: put read %lld, expected %lld", round, o,
                  (long long) s[1], (long long) value(round, o, 0));
            break;
        case 1:
            CHECK(s[2] == value(round, o, 1) + 1, "round %d origin %d: REPLACE+SUM read %lld, expected %lld",
                  round, o, (long long) s[2], (long long) (value(round, o, 1) + 1));
            break;
        case 2:
            CHECK(s[3] == value(round, o, 0) && s[4] == value(round, o, 1),
                  "round %d origin %d: puts read %lld %lld", round, o, (long long) s[3], (long long) s[4]);
            break;
        default: {
            double d;
            memcpy(&d, &s[5], sizeof(d));
            CHECK(d == 0.5 * (double) value(round, o, 0), "round %d origin %d: double read %g", round, o, d);
            break;
        }
        }
    }
    CHECK(m[SHARED_WORD] == shared_expected, "round %d: shared word %lld, expected %lld", round,
          (long long) m[SHARED_WORD], (long long) shared_expected);
}

/* Rounds of post/start/complete/wait; the target computes before waiting
 * in odd rounds and uses MPI_Win_test in every third. */
static void pscw_rounds(test_win_t *tw, int size, MPI_Group origins, MPI_Group target)
{
    int64_t shared = 0;

    for (int round = 0 ; round < ROUNDS ; ++round) {
        if (round % 4 >= 2) {
            shared += size - 1;
        }
        if (0 != test_rank) {
            origin_epoch(tw, target, round);
            continue;
        }
        MPI_OK(MPI_Win_post(origins, 0, tw->win));
        if (round % 2) {
            test_compute_us(50.0);   /* the origins complete meanwhile: requests wait in the mailbox */
        }
        test_wait_or_test(tw->win, 0 == round % 3);
        target_check(tw, size, round, shared);
    }
}

/* The target waits for a message each origin sends after its complete. */
static void recv_before_wait(test_win_t *tw, int size, MPI_Group origins, MPI_Group target)
{
    for (int round = 0 ; round < 10 ; ++round) {
        if (0 == test_rank) {
            int64_t token;
            MPI_OK(MPI_Win_post(origins, 0, tw->win));
            for (int o = 1 ; o < size ; ++o) {
                MPI_Recv(&token, 1, MPI_INT64_T, o, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_OK(MPI_Win_wait(tw->win));
            for (int o = 1 ; o < size ; ++o) {
                CHECK(((const int64_t *) tw->mem)[o * SLICE + 6] == value(round, o, 6),
                      "recv round %d origin %d: %lld", round, o, (long long) ((const int64_t *) tw->mem)[o * SLICE + 6]);
            }
        } else {
            int64_t v = value(round, test_rank, 6);
            MPI_OK(MPI_Win_start(target, 0, tw->win));
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, word(tw, test_rank, 6), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
            MPI_Send(&v, 1, MPI_INT64_T, 0, 7, MPI_COMM_WORLD);
        }
    }
}

/* A 4-word SUM from word 1 of each origin's slice (bytes 8..40: three
 * 16-byte stripes), the epoch's last operation, so it is left pending. */
static void straddling_rounds(int flavor, int size, MPI_Group origins, MPI_Group target)
{
    test_win_t tw;
    MPI_Info info;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_accumulate_granularity", "16");
    test_win_create(&tw, flavor, (size_t) size * SLICE * sizeof(int64_t), 8, info, MPI_COMM_WORLD);
    MPI_Info_free(&info);
    memset(tw.mem, 0, (size_t) size * SLICE * sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0 ; round < 20 ; ++round) {
        if (0 == test_rank) {
            MPI_OK(MPI_Win_post(origins, 0, tw.win));
            if (round % 2) {
                test_compute_us(50.0);
            }
            MPI_OK(MPI_Win_wait(tw.win));
            for (int o = 1 ; o < size ; ++o) {
                for (int k = 1 ; k <= 4 ; ++k) {
                    int64_t got = ((const int64_t *) tw.mem)[o * SLICE + k];
                    CHECK(got == (int64_t) (round + 1) * k, "straddling round %d origin %d word %d: %lld, expected %lld",
                          round, o, k, (long long) got, (long long) ((round + 1) * k));
                }
            }
        } else {
            int64_t add[4] = { 1, 2, 3, 4 };
            MPI_OK(MPI_Win_start(target, 0, tw.win));
            MPI_OK(MPI_Accumulate(add, 4, MPI_INT64_T, 0, word(&tw, test_rank, 1), 4, MPI_INT64_T, MPI_SUM, tw.win));
            MPI_OK(MPI_Win_complete(tw.win));
        }
    }
    test_win_free(&tw);
}

/* MPI_Win_complete in a lock epoch: an error, and the put handed over in
 * that epoch is still completed by the unlock. */
static void complete_in_lock_epoch(test_win_t *tw, int size)
{
    MPI_OK(MPI_Win_set_errhandler(tw->win, MPI_ERRORS_RETURN));
    if (0 != test_rank) {
        int64_t v = value(999, test_rank, 7);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, word(tw, test_rank, 7), 1, MPI_INT64_T, tw->win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        for (int o = 1 ; o < size ; ++o) {
            CHECK(((const int64_t *) tw->mem)[o * SLICE + 7] == value(999, o, 7),
                  "origin %d: put before an erroneous complete read %lld", o,
                  (long long) ((const int64_t *) tw->mem)[o * SLICE + 7]);
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
}

static void run(int flavor, int size, int expected_unused)
{
    test_win_t tw;
    MPI_Group origins, target;
    test_pvar_t left_pv;
    unsigned long long left;
    /* hand-offs wait for nobody: expected whenever the origins ask targets
     * anything at all on this path, whatever the number of cores */
    int expected = test_cvar_int("osc_newrma_assist_timeout") > 0 && !test_am_path(flavor);

    (void) expected_unused;
    test_target0_groups(&origins, &target);
    test_win_create(&tw, flavor, (size_t) size * SLICE * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    memset(tw.mem, 0, (size_t) size * SLICE * sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);

    test_pvar_open(&left_pv, "osc_newrma_assist_left");
    left = test_pvar_read(&left_pv);
    pscw_rounds(&tw, size, origins, target);
    recv_before_wait(&tw, size, origins, target);
    left = test_pvar_close_total(&left_pv, left);
    CHECK(!expected || left > 0, "%s: no operation was left to the target's MPI_Win_wait", flavor_names[flavor]);
    if (0 == test_rank) printf("%s: %llu operations left to the target's wait\n", flavor_names[flavor], left);

    complete_in_lock_epoch(&tw, size);
    test_win_free(&tw);
    straddling_rounds(flavor, size, origins, target);
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, "assist_pscw", run);
}
