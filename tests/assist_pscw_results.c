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
 * PSCW epochs with result-bearing operations (osc_newrma_mailbox.c): on
 * create and dynamic windows a fetch_and_op, get_accumulate or
 * compare_and_swap issued in a PSCW access epoch is posted to the target's
 * mailbox and answered by the target -- its MPI_Win_wait, or the progress
 * of any MPI call it is in; MPI_Win_complete collects the answer (or the
 * next operation of the epoch does, before it is issued), and withdraws the
 * request and does the operation by single copy if the target does not
 * take it within osc_newrma_assist_timeout (it computes outside MPI between
 * post and wait).  Checked, on create and dynamic windows:
 *  - every result right after MPI_Win_complete at the origin, and every
 *    value right after MPI_Win_wait (or a true MPI_Win_test) at the target,
 *    in rounds where the target waits at once, tests, or computes first;
 *  - the operations of one epoch in a rotating order (each one finds the
 *    one before still pending and must collect it first);
 *  - fetch_and_op(SUM) of every origin on one counter: all results distinct;
 *  - a ring where every rank is origin and target at once, so both
 *    MPI_Win_complete calls of a pair wait for an answer of the other: no
 *    deadlock, right results;
 *  - with assistance on (osc_newrma_assist_timeout > 0, single-copy path):
 *    some operations answered by their target (MPI_T
 *    osc_newrma_assisted_ops) where every rank has a core of its own, and,
 *    from the computing rounds, some withdrawn (osc_newrma_assist_withdrawn)
 *    at every rank count.
 *
 * newrma-test: np>=2 only-newrma
 */
#include "common.h"

#include <time.h>

#define SLICE 8                  /* int64 words per rank */
#define ROUNDS 60
#define RING_ROUNDS 60
#define COMPUTE_US 300.0         /* far above the assist timeout */

/* words of each origin's slice of rank 0's window; word 0 of rank 0's own
 * slice is the counter every origin adds to; the ring uses the slice after
 * the last rank's */
enum { W_CAS = 0, W_GACC = 1, W_DBL = 2, DBLS = 2, W_COUNTER = 0, W_RING_FOP = 0, W_RING_CAS = 1 };

static MPI_Aint word(const test_win_t *tw, int target, int slice, int k)
{
    return test_disp(tw, target, (MPI_Aint) (slice * SLICE + k), 8);
}

static int64_t cas_value(int round, int origin)
{
    return round < 0 ? 0 : (int64_t) round * 10007 + origin * 101 + 1;
}

static double dbl_value(int round, int origin, int k)
{
    return round < 0 ? 0.0 : 0.5 * (double) cas_value(round, origin) + k;
}

/* sum of (r + 1) over the rounds before `round` */
static int64_t gacc_before(int round)
{
    return (int64_t) round * (round + 1) / 2;
}

/* One origin's epoch: the four operations in an order rotating with the
 * round; its counter result into *fetched; the other results checked. */
static void origin_epoch(test_win_t *tw, MPI_Group target, int round, int64_t *fetched)
{
    int me = test_rank;
    int64_t swap = cas_value(round, me), compare = cas_value(round - 1, me), swapped = -1;
    int64_t add = round + 1, old = -1, one = 1;
    double dbl[DBLS], old_dbl[DBLS] = { -1, -1 };

    for (int k = 0 ; k < DBLS ; ++k) dbl[k] = dbl_value(round, me, k);
    MPI_OK(MPI_Win_start(target, 0, tw->win));
    for (int i = 0 ; i < 4 ; ++i) {
        switch ((i + round) % 4) {
        case 0:
            MPI_OK(MPI_Compare_and_swap(&swap, &compare, &swapped, MPI_INT64_T, 0, word(tw, 0, me, W_CAS), tw->win));
            break;
        case 1:
            MPI_OK(MPI_Get_accumulate(&add, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, 0, word(tw, 0, me, W_GACC), 1,
                                      MPI_INT64_T, MPI_SUM, tw->win));
            break;
        case 2:
            MPI_OK(MPI_Get_accumulate(dbl, DBLS, MPI_DOUBLE, old_dbl, DBLS, MPI_DOUBLE, 0, word(tw, 0, me, W_DBL),
                                      DBLS, MPI_DOUBLE, MPI_REPLACE, tw->win));
            break;
        default:
            MPI_OK(MPI_Fetch_and_op(&one, fetched, MPI_INT64_T, 0, word(tw, 0, 0, W_COUNTER), MPI_SUM, tw->win));
            break;
        }
    }
    MPI_OK(MPI_Win_complete(tw->win));
    CHECK(swapped == compare, "round %d origin %d: compare_and_swap returned %lld, expected %lld", round, me,
          (long long) swapped, (long long) compare);
    CHECK(old == gacc_before(round), "round %d origin %d: get_accumulate returned %lld, expected %lld", round, me,
          (long long) old, (long long) gacc_before(round));
    for (int k = 0 ; k < DBLS ; ++k) {
        CHECK(old_dbl[k] == dbl_value(round - 1, me, k), "round %d origin %d: REPLACE returned %g, expected %g",
              round, me, old_dbl[k], dbl_value(round - 1, me, k));
    }
}

/* The target's check right after its wait of round `round`. */
static void target_check(const test_win_t *tw, int size, int round)
{
    const int64_t *m = tw->mem;

    for (int o = 1 ; o < size ; ++o) {
        const int64_t *s = m + o * SLICE;
        const double *d = (const double *) &s[W_DBL];
        CHECK(s[W_CAS] == cas_value(round, o), "round %d origin %d: swapped word %lld, expected %lld", round, o,
              (long long) s[W_CAS], (long long) cas_value(round, o));
        CHECK(s[W_GACC] == gacc_before(round + 1), "round %d origin %d: summed word %lld, expected %lld", round, o,
              (long long) s[W_GACC], (long long) gacc_before(round + 1));
        for (int k = 0 ; k < DBLS ; ++k) {
            CHECK(d[k] == dbl_value(round, o, k), "round %d origin %d: replaced double %g", round, o, d[k]);
        }
    }
    CHECK(m[W_COUNTER] == (int64_t) (round + 1) * (size - 1), "round %d: counter %lld, expected %lld", round,
          (long long) m[W_COUNTER], (long long) (round + 1) * (size - 1));
}

/* Rounds of rank 0 as every origin's target: it waits at once, computes
 * first, or tests; then every counter result seen once. */
static void target0_rounds(test_win_t *tw, int size, MPI_Group origins, MPI_Group target)
{
    int64_t fetched[ROUNDS], *all = NULL;

    for (int round = 0 ; round < ROUNDS ; ++round) {
        if (0 != test_rank) {
            origin_epoch(tw, target, round, &fetched[round]);
            continue;
        }
        fetched[round] = 0;
        MPI_OK(MPI_Win_post(origins, 0, tw->win));
        if (1 == round % 3) {
            test_compute_us(COMPUTE_US);   /* the origins' completes give up waiting meanwhile */
        }
        test_wait_or_test(tw->win, 2 == round % 3);
        target_check(tw, size, round);
    }
    if (0 == test_rank) all = malloc((size_t) size * ROUNDS * sizeof(int64_t));
    MPI_Gather(fetched, ROUNDS, MPI_INT64_T, all, ROUNDS, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == test_rank) {
        int64_t n = (int64_t) (size - 1) * ROUNDS;
        qsort(all + ROUNDS, (size_t) n, sizeof(int64_t), test_cmp_int64);
        for (int64_t i = 0 ; i < n ; ++i) {
            if (all[ROUNDS + i] != i) {
                CHECK(0, "fetch_and_op results: position %lld holds %lld", (long long) i, (long long) all[ROUNDS + i]);
                break;
            }
        }
        free(all);
    }
}

/* Every rank exposes to its left neighbour and accesses its right one in
 * the same round: each MPI_Win_complete waits for an answer from a rank
 * that is in its own MPI_Win_complete. */
static void ring_rounds(test_win_t *tw, int size)
{
    int right = (test_rank + 1) % size, left = (test_rank + size - 1) % size;
    int64_t *mine = (int64_t *) tw->mem + size * SLICE;
    MPI_Group world, to_right, from_left;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &to_right);
    MPI_Group_incl(world, 1, &left, &from_left);
    for (int round = 0 ; round < RING_ROUNDS ; ++round) {
        int64_t one = 1, fetched = -1, swap = cas_value(round, test_rank), compare = cas_value(round - 1, test_rank),
                swapped = -1;
        MPI_OK(MPI_Win_post(from_left, 0, tw->win));
        MPI_OK(MPI_Win_start(to_right, 0, tw->win));
        MPI_OK(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, right, word(tw, right, size, W_RING_FOP), MPI_SUM,
                                tw->win));
        MPI_OK(MPI_Compare_and_swap(&swap, &compare, &swapped, MPI_INT64_T, right, word(tw, right, size, W_RING_CAS),
                                    tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        CHECK(fetched == round, "ring round %d: fetch_and_op returned %lld", round, (long long) fetched);
        CHECK(swapped == compare, "ring round %d: compare_and_swap returned %lld, expected %lld", round,
              (long long) swapped, (long long) compare);
        CHECK(mine[W_RING_FOP] == round + 1 && mine[W_RING_CAS] == cas_value(round, left),
              "ring round %d: my words %lld %lld", round, (long long) mine[W_RING_FOP], (long long) mine[W_RING_CAS]);
    }
    MPI_Group_free(&to_right);
    MPI_Group_free(&from_left);
    MPI_Group_free(&world);
}

static void run(int flavor, int size, int expected_unused)
{
    test_win_t tw;
    MPI_Group origins, target;
    test_pvar_t assisted_pv, withdrawn_pv;
    unsigned long long assisted, withdrawn;
    /* posted whatever the number of cores (a PSCW target serves them), and
     * withdrawn from a computing target at any count; but whether a target
     * answers one inside the timeout depends on its having a core: with
     * more ranks than cores it may be off its core at every try */
    int expected = test_cvar_int("osc_newrma_assist_timeout") > 0 && !test_am_path(flavor);
    int answers_expected = test_assist_expected(flavor, size);

    (void) expected_unused;
    test_target0_groups(&origins, &target);
    test_win_create(&tw, flavor, (size_t) (size + 1) * SLICE * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    memset(tw.mem, 0, (size_t) (size + 1) * SLICE * sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);

    test_pvar_open(&assisted_pv, "osc_newrma_assisted_ops");
    test_pvar_open(&withdrawn_pv, "osc_newrma_assist_withdrawn");
    assisted = test_pvar_read(&assisted_pv);
    withdrawn = test_pvar_read(&withdrawn_pv);
    target0_rounds(&tw, size, origins, target);
    ring_rounds(&tw, size);
    assisted = test_pvar_close_total(&assisted_pv, assisted);
    withdrawn = test_pvar_close_total(&withdrawn_pv, withdrawn);
    CHECK(!answers_expected || assisted > 0, "%s: no result-bearing operation was answered by its target",
          flavor_names[flavor]);
    CHECK(!expected || withdrawn > 0, "%s: no operation was withdrawn from a computing target", flavor_names[flavor]);
    if (0 == test_rank) {
        printf("%s: %llu operations answered by their target, %llu withdrawn\n", flavor_names[flavor], assisted,
               withdrawn);
    }
    test_win_free(&tw);
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, "assist_pscw_results", run);
}
