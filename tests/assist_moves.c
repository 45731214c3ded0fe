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
 * Operations handed to a target and completed later (osc_newrma_mailbox.c):
 * on create and dynamic windows a small put, get or accumulate (no result)
 * may be posted to a target inside MPI and left pending until the window's
 * next completion point.  Every completion point must complete it, with
 * the right data, in every sync mode -- flush, flush_local, flush_all,
 * unlock, unlock_all, fence, PSCW complete, request-based operations -- and
 * an accumulate after a pending one must not overtake it (MPI orders the
 * accumulates of one origin to one location).  Rank 0 is the target; it
 * waits in MPI (a barrier, fences, post/wait) in phase 1 and computes
 * outside MPI in phase 2 (pending requests are then withdrawn and done by
 * single-copy; it leaves its loop when every origin's "done" accumulate has
 * arrived).  Each origin owns a slice of rank 0's window.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_progress_thread:1,osc_newrma_assist_oversubscribed:1
 */
#include "common.h"

#include <time.h>

#define SLICE 64                 /* int64 words per origin */
#define ROUNDS 50
#define BOUND_S 30.0

static MPI_Aint slot(const test_win_t *tw, int origin, int word)
{
    return test_disp(tw, 0, (MPI_Aint) (origin * SLICE + word), 8);
}

/* passive-target patterns of one round; values depend on (round, phase) */
static void passive_round(test_win_t *tw, int me, int64_t base)
{
    MPI_Win win = tw->win;
    int64_t v[8], got[8], r;
    MPI_Request req;

    for (int k = 0 ; k < 8 ; ++k) v[k] = base + k;
    /* put then flush, read back */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Put(&v[0], 1, MPI_INT64_T, 0, slot(tw, me, 0), 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(0, win));
    MPI_OK(MPI_Get(&got[0], 1, MPI_INT64_T, 0, slot(tw, me, 0), 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(got[0] == v[0], "rank %d: put/flush/get read %lld, wrote %lld", me, (long long) got[0], (long long) v[0]);
    /* a put, then a get of another word, both completed by flush_local + flush */
    MPI_OK(MPI_Put(&v[1], 1, MPI_INT64_T, 0, slot(tw, me, 1), 1, MPI_INT64_T, win));
    MPI_OK(MPI_Get(&got[1], 1, MPI_INT64_T, 0, slot(tw, me, 0), 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush_local(0, win));
    CHECK(got[1] == v[0], "rank %d: get after flush_local read %lld", me, (long long) got[1]);
    MPI_OK(MPI_Win_flush(0, win));
    /* a get pending at unlock */
    MPI_OK(MPI_Get(&got[2], 1, MPI_INT64_T, 0, slot(tw, me, 1), 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(0, win));
    CHECK(got[2] == v[1], "rank %d: get completed by unlock read %lld, expected %lld", me, (long long) got[2],
          (long long) v[1]);

    /* lock_all: several small puts (one handed over, the rest batched),
     * flush_all; then a series of accumulates with REPLACE and SUM that
     * must apply in order; a request-based put complete at once */
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0 ; k < 6 ; ++k) {
        MPI_OK(MPI_Put(&v[k], 1, MPI_INT64_T, 0, slot(tw, me, 8 + k), 1, MPI_INT64_T, win));
    }
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Get(got, 6, MPI_INT64_T, 0, slot(tw, me, 8), 6, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(0, win));
    for (int k = 0 ; k < 6 ; ++k) {
        CHECK(got[k] == v[k], "rank %d: put %d of a series read %lld", me, k, (long long) got[k]);
    }
    for (int k = 0 ; k < 8 ; ++k) {
        /* word 16: replace by v[k], then add 1: the adds must follow */
        int64_t one = 1;
        MPI_OK(MPI_Accumulate(&v[k], 1, MPI_INT64_T, 0, slot(tw, me, 16), 1, MPI_INT64_T, MPI_REPLACE, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, slot(tw, me, 16), 1, MPI_INT64_T, MPI_SUM, win));
    }
    /* a fetch_and_op right after a pending accumulate sees it */
    MPI_OK(MPI_Fetch_and_op(NULL, &r, MPI_INT64_T, 0, slot(tw, me, 16), MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(0, win));
    CHECK(r == v[7] + 1, "rank %d: accumulates out of order: %lld, expected %lld", me, (long long) r,
          (long long) (v[7] + 1));
    MPI_OK(MPI_Rput(&v[2], 1, MPI_INT64_T, 0, slot(tw, me, 17), 1, MPI_INT64_T, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Raccumulate(&v[3], 1, MPI_INT64_T, 0, slot(tw, me, 18), 1, MPI_INT64_T, MPI_REPLACE, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Rget(&got[0], 1, MPI_INT64_T, 0, slot(tw, me, 17), 1, MPI_INT64_T, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(got[0] == v[2], "rank %d: rput/rget read %lld", me, (long long) got[0]);
    /* an accumulate left pending at unlock_all */
    MPI_OK(MPI_Accumulate(&v[4], 1, MPI_INT64_T, 0, slot(tw, me, 19), 1, MPI_INT64_T, MPI_REPLACE, win));
    MPI_OK(MPI_Win_unlock_all(win));
}

/* the target's check of an origin's slice after passive_round(base) */
static void check_slice(const int64_t *w, int origin, int64_t base)
{
    const int64_t *s = w + origin * SLICE;
    int64_t expect[20] = { [0] = base, [1] = base + 1, [16] = base + 8, [17] = base + 2, [18] = base + 3,
                           [19] = base + 4 };
    for (int k = 0 ; k < 6 ; ++k) expect[8 + k] = base + k;
    for (int k = 0 ; k < 20 ; ++k) {
        if ((k >= 2 && k < 8) || k == 14 || k == 15) continue;
        CHECK(s[k] == expect[k], "origin %d word %d: %lld, expected %lld", origin, k, (long long) s[k],
              (long long) expect[k]);
    }
}

/* active target: puts and accumulates completed by fence, then by PSCW */
static void active_rounds(test_win_t *tw, int size, MPI_Group origins, MPI_Group target)
{
    int me = test_rank;
    for (int round = 0 ; round < ROUNDS ; ++round) {
        int64_t v = 1000 * round + me, w = -v;
        MPI_OK(MPI_Win_fence(0, tw->win));
        if (0 != me) {
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, 0, slot(tw, me, 32), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Accumulate(&w, 1, MPI_INT64_T, 0, slot(tw, me, 33), 1, MPI_INT64_T, MPI_REPLACE, tw->win));
        }
        MPI_OK(MPI_Win_fence(0, tw->win));
        if (0 == me) {
            const int64_t *m = tw->mem;
            for (int o = 1 ; o < size ; ++o) {
                CHECK(m[o * SLICE + 32] == 1000 * round + o && m[o * SLICE + 33] == -(1000 * round + o),
                      "fence round %d origin %d: %lld %lld", round, o, (long long) m[o * SLICE + 32],
                      (long long) m[o * SLICE + 33]);
            }
        }
        if (0 == me) {
            MPI_OK(MPI_Win_post(origins, 0, tw->win));
            MPI_OK(MPI_Win_wait(tw->win));
            const int64_t *m = tw->mem;
            for (int o = 1 ; o < size ; ++o) {
                CHECK(m[o * SLICE + 34] == 7 * round + o, "pscw round %d origin %d: %lld", round, o,
                      (long long) m[o * SLICE + 34]);
            }
        } else {
            int64_t x = 7 * round + me;
            MPI_OK(MPI_Win_start(target, 0, tw->win));
            MPI_OK(MPI_Put(&x, 1, MPI_INT64_T, 0, slot(tw, me, 34), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
        }
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
}

static void run(int flavor, int size, int assist_expected)
{
    test_win_t tw;
    MPI_Group origins, target;

    test_target0_groups(&origins, &target);
    test_win_create(&tw, flavor, (size_t) size * SLICE * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD);

    /* phase 1: the target waits in MPI */
    test_pvar_t assisted;
    unsigned long long handed;
    test_pvar_open(&assisted, "osc_newrma_assisted_ops");
    handed = test_pvar_read(&assisted);
    for (int round = 0 ; round < ROUNDS ; ++round) {
        int64_t base = 100000 * test_rank + 100 * round;
        if (0 != test_rank) passive_round(&tw, test_rank, base);
        MPI_Barrier(MPI_COMM_WORLD);
        if (0 == test_rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
            for (int o = 1 ; o < size ; ++o) check_slice(tw.mem, o, 100000 * o + 100 * round);
            MPI_OK(MPI_Win_unlock(0, tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    active_rounds(&tw, size, origins, target);
    handed = test_pvar_close_total(&assisted, handed);
    /* not testing what it says unless some were handed over (when the
     * target had a core of its own: see assist_acc.c) */
    CHECK(!assist_expected || handed > 0, "%s: no operation was handed to the target", flavor_names[flavor]);
    if (0 == test_rank) printf("%s: %llu operations handed to the target\n", flavor_names[flavor], handed);

    /* phase 2: the target computes; origins count themselves done in word 63
     * of rank 0's slice */
    if (0 == test_rank) {
        volatile int64_t *w = tw.mem;
        double t0 = test_now_s();
        while (w[63] < size - 1 && test_now_s() - t0 < BOUND_S) {
        }
        CHECK(w[63] == size - 1, "%s: %lld of %d origins done without the target's progress", flavor_names[flavor],
              (long long) w[63], size - 1);
    } else {
        const int64_t one = 1;
        for (int round = 0 ; round < 10 ; ++round) passive_round(&tw, test_rank, 100000 * test_rank + 7 * round);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, slot(&tw, 0, 63), 1, MPI_INT64_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        for (int o = 1 ; o < size ; ++o) check_slice(tw.mem, o, 100000 * o + 7 * 9);
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    test_win_free(&tw);
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, "assist_moves", run);
}
