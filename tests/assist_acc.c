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
 * Target-assisted accumulates (osc_newrma_mailbox.c) on create and dynamic
 * windows: rank 0 is the target of every origin's accumulate family, first
 * while it waits inside MPI (MPI_Barrier: its progress serves the mailbox),
 * then while it computes outside MPI (it spins on plain loads of its own
 * window until the origins' "done" accumulates arrive: every operation must
 * complete without it).  In both phases, on the same elements:
 *  - fetch_and_op(SUM, +1): every returned value distinct, in [0, total);
 *  - accumulate(SUM) of one int64 (small enough for the mailbox) interleaved
 *    with accumulates of nine int64 covering the same element (too big for
 *    it: single-copy): both must be atomic with respect to each other;
 *  - increments by compare_and_swap loops (int64 and int32);
 *  - get_accumulate(SUM) of four doubles: old values never above the total;
 *  - accumulate(MAXLOC) of MPI_2INT.
 * Every final value is checked exactly.  With newrma's single-copy path and
 * the assist on, the first phase must have had some operation applied by the
 * target (MPI_T osc_newrma_assisted_ops), else the test is not testing it
 * (when there are no more ranks than cores).
 *
 * Phase 2 on the active-message path (forced remote, or FIFOs) needs newrma's
 * progress thread, which the test turns on.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_progress_thread:1,osc_newrma_assist_oversubscribed:1
 */
#include "common.h"

#include <time.h>

#define N 400                    /* operations of each kind per origin and phase */
#define BOUND_S 30.0

/* int64 words */
enum { W_FOP = 0, W_ACC = 1, W_WIDE = 1, WIDE = 9, W_CAS = 10, W_DBL = 12, DBL = 4, W_MAXLOC = 16,
       W_CAS32 = 17, W_DONE = 18, WORDS = 19 };

/* one origin's work of one phase; fop results into `seen` (N values) */
static void origin_phase(test_win_t *tw, int rank, int64_t *seen)
{
    MPI_Win win = tw->win;
    const int64_t one = 1, two = 2;
    int64_t wide[WIDE];
    double ones[DBL] = { 1, 1, 1, 1 }, old[DBL];

    for (int k = 0 ; k < WIDE ; ++k) wide[k] = 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0 ; i < N ; ++i) {
        int64_t r, cur, prev;
        int32_t c32, p32, n32;
        int pair[2] = { rank * 1000 + i, rank };

        MPI_OK(MPI_Fetch_and_op(&one, &seen[i], MPI_INT64_T, 0, test_disp(tw, 0, W_FOP, 8), MPI_SUM, win));
        if (i % 2) {
            MPI_OK(MPI_Accumulate(&two, 1, MPI_INT64_T, 0, test_disp(tw, 0, W_ACC, 8), 1, MPI_INT64_T, MPI_SUM, win));
        } else {
            MPI_OK(MPI_Accumulate(wide, WIDE, MPI_INT64_T, 0, test_disp(tw, 0, W_WIDE, 8), WIDE, MPI_INT64_T,
                                  MPI_SUM, win));
        }
        MPI_OK(MPI_Fetch_and_op(NULL, &cur, MPI_INT64_T, 0, test_disp(tw, 0, W_CAS, 8), MPI_NO_OP, win));
        MPI_OK(MPI_Win_flush(0, win));
        for (;;) {
            int64_t next = cur + 1;
            MPI_OK(MPI_Compare_and_swap(&next, &cur, &prev, MPI_INT64_T, 0, test_disp(tw, 0, W_CAS, 8), win));
            MPI_OK(MPI_Win_flush(0, win));
            if (prev == cur) break;
            cur = prev;
        }
        MPI_OK(MPI_Fetch_and_op(NULL, &c32, MPI_INT32_T, 0, test_disp(tw, 0, W_CAS32, 8), MPI_NO_OP, win));
        MPI_OK(MPI_Win_flush(0, win));
        for (;;) {
            n32 = c32 + 1;
            MPI_OK(MPI_Compare_and_swap(&n32, &c32, &p32, MPI_INT32_T, 0, test_disp(tw, 0, W_CAS32, 8), win));
            MPI_OK(MPI_Win_flush(0, win));
            if (p32 == c32) break;
            c32 = p32;
        }
        MPI_OK(MPI_Get_accumulate(ones, DBL, MPI_DOUBLE, old, DBL, MPI_DOUBLE, 0, test_disp(tw, 0, W_DBL, 8),
                                  DBL, MPI_DOUBLE, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(pair, 1, MPI_2INT, 0, test_disp(tw, 0, W_MAXLOC, 8), 1, MPI_2INT, MPI_MAXLOC, win));
        MPI_OK(MPI_Win_flush(0, win));
        for (int k = 0 ; k < DBL ; ++k) {
            CHECK(old[k] >= 0 && old[k] == old[0], "rank %d: get_accumulate old values %g %g", rank, old[0], old[k]);
        }
        r = seen[i];
        CHECK(r >= 0, "rank %d: fetch_and_op returned %lld", rank, (long long) r);
    }
    MPI_OK(MPI_Win_unlock_all(win));
}

/* at the target: the words after `phases` phases of `origins` origins */
static void check_totals(const int64_t *w, int origins, int phases, int64_t *all_seen, int size)
{
    int64_t total = (int64_t) origins * N * phases;
    const double *d = (const double *) &w[W_DBL];
    const int *pair = (const int *) &w[W_MAXLOC];
    int32_t c32;

    memcpy(&c32, &w[W_CAS32], sizeof(c32));
    CHECK(w[W_FOP] == total, "fetch_and_op counter %lld, expected %lld", (long long) w[W_FOP], (long long) total);
    /* odd iterations add 2 to W_ACC, even ones 1 through the wide accumulate */
    CHECK(w[W_ACC] == (int64_t) origins * phases * (2 * (N / 2) + (N - N / 2)),
          "accumulate word %lld", (long long) w[W_ACC]);
    for (int k = 1 ; k < WIDE ; ++k) {
        CHECK(w[W_WIDE + k] == (int64_t) origins * phases * (N - N / 2), "wide word %d: %lld", k,
              (long long) w[W_WIDE + k]);
    }
    CHECK(w[W_CAS] == total, "compare_and_swap counter %lld, expected %lld", (long long) w[W_CAS], (long long) total);
    CHECK(c32 == (int32_t) total, "compare_and_swap int32 counter %d, expected %lld", c32, (long long) total);
    for (int k = 0 ; k < DBL ; ++k) {
        CHECK(d[k] == (double) total, "double %d: %g, expected %lld", k, d[k], (long long) total);
    }
    CHECK(pair[0] == (size - 1) * 1000 + N - 1 && pair[1] == size - 1, "maxloc (%d, %d)", pair[0], pair[1]);
    /* every fetch_and_op of a phase saw a distinct value */
    qsort(all_seen, (size_t) origins * N, sizeof(int64_t), test_cmp_int64);
    for (int64_t i = 0 ; i < (int64_t) origins * N ; ++i) {
        if (all_seen[i] != total - (int64_t) origins * N + i) {
            CHECK(0, "fetch_and_op results: position %lld holds %lld", (long long) i, (long long) all_seen[i]);
            break;
        }
    }
}

static void run(int flavor, int size, int assist_expected)
{
    test_win_t tw;
    int64_t *seen = calloc(N, sizeof(int64_t)), *all = NULL;
    unsigned long long before, mine;
    test_pvar_t assisted;

    if (0 == test_rank) all = calloc((size_t) size * N, sizeof(int64_t));
    test_win_create(&tw, flavor, WORDS * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD);

    /* phase 1: the target waits inside MPI */
    test_pvar_open(&assisted, "osc_newrma_assisted_ops");
    before = test_pvar_read(&assisted);
    if (0 != test_rank) origin_phase(&tw, test_rank, seen);
    MPI_Barrier(MPI_COMM_WORLD);
    mine = test_pvar_close_total(&assisted, before);
    MPI_Gather(seen, N, MPI_INT64_T, all, N, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));   /* local reads of the window: an epoch */
        check_totals(tw.mem, size - 1, 1, all + N, size);
        MPI_OK(MPI_Win_unlock(0, tw.win));
        CHECK(!assist_expected || mine > 0, "%s: no operation was applied by the target while it was in MPI",
              flavor_names[flavor]);
        printf("%s: %llu operations assisted while the target was in MPI\n", flavor_names[flavor], mine);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* phase 2: the target computes; each origin adds 1 to W_DONE when done */
    if (0 == test_rank) {
        volatile int64_t *w = tw.mem;
        double t0 = test_now_s();
        while (w[W_DONE] < size - 1 && test_now_s() - t0 < BOUND_S) {
        }
        CHECK(w[W_DONE] == size - 1, "%s: origins finished %lld of %d phases without the target's progress",
              flavor_names[flavor], (long long) w[W_DONE], size - 1);
    } else {
        const int64_t one = 1;
        origin_phase(&tw, test_rank, seen);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, test_disp(&tw, 0, W_DONE, 8), 1, MPI_INT64_T, MPI_SUM,
                              tw.win));
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    MPI_Gather(seen, N, MPI_INT64_T, all, N, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        check_totals(tw.mem, size - 1, 2, all + N, size);
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    test_win_free(&tw);
    free(seen);
    free(all);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, "assist_acc", run);
}
