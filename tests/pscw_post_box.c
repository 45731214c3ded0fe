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
 * PSCW posts published in the target's post box and posts through the
 * origins' rings, mixed in one window (docs/rationale.md, "PSCW").  With
 * the default osc_newrma_post_box_origins (6) every post of this test at up
 * to 7 ranks takes the box (at more, the posts to every other rank take the
 * rings); in the minimum mode (1) posts to one origin take the box and larger
 * ones the rings, so the same program mixes both.  Any count from 3 up.  Every
 * flavor; every epoch's data checked after MPI_Win_wait.
 *  - an early post held a long time: rank 1 posts to rank 0 and waits while
 *    rank 0 runs EPOCHS epochs with rank 2 (each a post by rank 2 to {0} or to
 *    {0, 3, ...}, alternating, so its box is rewritten with different origin
 *    counts); only then does rank 0 start with rank 1;
 *  - MPI_MODE_NOCHECK epochs between ordinary ones on the same window (their
 *    completions are counted, the box's are not: a wait must expect each);
 *  - MPI_Win_test polling an exposure epoch of every other rank while each of
 *    them completes at its own time;
 *  - reposts: rank 0 posts to the same group again (the box is only
 *    re-armed, not rewritten), switches groups, and posts with NOCHECK to a
 *    group the box does not list, then to it again without NOCHECK (the box
 *    must be rewritten: re-arming would leave a stale origin list).
 * newrma-test: np>=3
 */
#include "common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define EPOCHS 300

static MPI_Group group_of(MPI_Group wgroup, int n, const int *ranks)
{
    MPI_Group g;
    MPI_OK(MPI_Group_incl(wgroup, n, ranks, &g));
    return g;
}

static int64_t value(int epoch, int origin) { return ((int64_t) epoch << 16) | origin; }

/* rank 1's post stays outstanding while 0 and 2 run EPOCHS epochs.  Its
 * post goes to {0} (3 ranks) or {0, 3, ...} (4 ranks and more: the ring in
 * the minimum mode); rank 2 posts to {0} and to {0, 3, ...} in turn, so its
 * box is rewritten with different origin counts (or its larger posts take
 * the rings).  Ranks 3 and up start with rank 1 at once and with rank 2 at
 * each of its larger posts, with nothing to put. */
static void early_post_held(const test_win_t *tw, MPI_Group wgroup, int rank, int size, const char *fn)
{
    const MPI_Aint u = sizeof(int64_t);
    int zero = 0, one = 1, two = 2;
    int *wide = malloc(sizeof(int) * (size_t) size), nwide = 0;
    int64_t *mine = tw->mem, src;
    MPI_Group g0 = group_of(wgroup, 1, &zero), g1 = group_of(wgroup, 1, &one), g2 = group_of(wgroup, 1, &two), gwide;

    wide[nwide++] = 0;
    for (int r = 3; r < size; ++r) wide[nwide++] = r;
    gwide = group_of(wgroup, nwide, wide);          /* {0, 3, ...}: rank 1 and 2 never in it */
    if (1 == rank) {
        MPI_OK(MPI_Win_post(gwide, 0, tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        CHECK(mine[0] == value(EPOCHS, 0), "%s: held post: word is %lld, expected %lld", fn, (long long) mine[0],
              (long long) value(EPOCHS, 0));
    } else if (2 == rank) {
        for (int e = 0; e < EPOCHS; ++e) {
            MPI_OK(MPI_Win_post(e % 2 ? gwide : g0, 0, tw->win));
            MPI_OK(MPI_Win_wait(tw->win));
            CHECK(mine[0] == value(e, 0), "%s: epoch %d with rank 2: word is %lld, expected %lld", fn, e,
                  (long long) mine[0], (long long) value(e, 0));
        }
    } else if (0 == rank) {
        for (int e = 0; e < EPOCHS; ++e) {
            src = value(e, 0);
            MPI_OK(MPI_Win_start(g2, 0, tw->win));
            MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, 2, test_disp(tw, 2, 0, u), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
        }
        src = value(EPOCHS, 0);
        MPI_OK(MPI_Win_start(g1, 0, tw->win));
        MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, 1, test_disp(tw, 1, 0, u), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
    } else {
        /* every rank of {0, 3, ...} is in rank 1's post group: each must
         * start with rank 1 once, or rank 1's wait never returns */
        MPI_OK(MPI_Win_start(g1, 0, tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
        for (int e = 1; e < EPOCHS; e += 2) {
            MPI_OK(MPI_Win_start(g2, 0, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);
    MPI_Group_free(&gwide);
    free(wide);
}

/* ordinary and NOCHECK epochs in turn: every rank exposes to its left
 * neighbour and accesses its right one */
static void nocheck_between(const test_win_t *tw, MPI_Group wgroup, int rank, int size, const char *fn)
{
    const MPI_Aint u = sizeof(int64_t);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group gl = group_of(wgroup, 1, &left), gr = group_of(wgroup, 1, &right);
    int64_t *mine = tw->mem, src;

    for (int e = 0; e < 40; ++e) {
        int nocheck = e % 3 == 1 ? MPI_MODE_NOCHECK : 0;
        src = value(e, rank);
        MPI_OK(MPI_Win_post(gl, nocheck, tw->win));
        if (nocheck) MPI_Barrier(MPI_COMM_WORLD);   /* every post is done before any start */
        MPI_OK(MPI_Win_start(gr, nocheck, tw->win));
        MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, right, test_disp(tw, right, 1, u), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        CHECK(mine[1] == value(e, left), "%s: %s epoch %d: word is %lld, expected %lld", fn,
              nocheck ? "NOCHECK" : "ordinary", e, (long long) mine[1], (long long) value(e, left));
        /* nobody's next post may land before this epoch's checks */
        if (nocheck) MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
}

/* rank 0 exposes to every other rank and polls MPI_Win_test; each origin
 * completes after a delay of its own */
static void test_polling(const test_win_t *tw, MPI_Group wgroup, int rank, int size, const char *fn)
{
    const MPI_Aint u = sizeof(int64_t);
    int zero = 0, *others = malloc(sizeof(int) * (size_t) size), nothers = 0;
    MPI_Group g0 = group_of(wgroup, 1, &zero), gothers;
    int64_t *mine = tw->mem, src;

    for (int r = 1; r < size; ++r) others[nothers++] = r;
    gothers = group_of(wgroup, nothers, others);
    for (int e = 0; e < 20; ++e) {
        if (0 == rank) {
            int flag = 0;
            long polls = 0;
            MPI_OK(MPI_Win_post(gothers, 0, tw->win));
            while (!flag) {
                MPI_OK(MPI_Win_test(tw->win, &flag));
                polls++;
            }
            for (int r = 1; r < size; ++r)
                CHECK(mine[2 + r] == value(e, r), "%s: MPI_Win_test epoch %d (%ld polls): word of %d is %lld, "
                      "expected %lld", fn, e, polls, r, (long long) mine[2 + r], (long long) value(e, r));
        } else {
            src = value(e, rank);
            MPI_OK(MPI_Win_start(g0, 0, tw->win));
            for (volatile int spin = 0; spin < rank * 20000; ++spin) { }
            MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, 0, test_disp(tw, 0, 2 + rank, u), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);   /* the checks are done before the next epoch's puts */
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&gothers);
    free(others);
}

/* Rank 0 exposes to the groups of `plan` in turn ({1}, {1, 2}, {2}; 'a'
 * 'b' 'c', upper case: MPI_MODE_NOCHECK); each member puts its epoch's
 * value, and the words of the others must keep their last ones. */
static void reposts(const test_win_t *tw, MPI_Group wgroup, int rank, const char *fn)
{
    static const char plan[] = "aaBbbaCCaccbAabb";
    static const int members[3][2] = { { 1, -1 }, { 1, 2 }, { 2, -1 } };
    const MPI_Aint u = sizeof(int64_t);
    int zero = 0, one_two[2] = { 1, 2 };
    MPI_Group g0 = group_of(wgroup, 1, &zero), groups[3] = { group_of(wgroup, 1, &one_two[0]),
                                                            group_of(wgroup, 2, one_two),
                                                            group_of(wgroup, 1, &one_two[1]) };
    int64_t *mine = tw->mem, src, last[3] = { -1, -1, -1 };

    if (0 == rank) {
        mine[3] = mine[4] = -1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int e = 0; plan[e]; ++e) {
        int which = (plan[e] | 0x20) - 'a', nocheck = plan[e] < 'a' ? MPI_MODE_NOCHECK : 0;
        bool member = rank == members[which][0] || rank == members[which][1];

        if (0 == rank) MPI_OK(MPI_Win_post(groups[which], nocheck, tw->win));
        if (nocheck) MPI_Barrier(MPI_COMM_WORLD);   /* the post is done before any start */
        if (member) {
            src = value(e, rank);
            MPI_OK(MPI_Win_start(g0, nocheck, tw->win));
            MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, 0, test_disp(tw, 0, 2 + rank, u), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
        }
        if (0 == rank) {
            MPI_OK(MPI_Win_wait(tw->win));
            for (int r = 1; r <= 2; ++r) {
                bool in = r == members[which][0] || r == members[which][1];
                if (in) last[r] = value(e, r);
                CHECK(mine[2 + r] == last[r], "%s: repost epoch %d ('%c'): word of %d is %lld, expected %lld", fn,
                      e, plan[e], r, (long long) mine[2 + r], (long long) last[r]);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);   /* the checks are done before the next epoch's puts */
    }
    MPI_Group_free(&g0);
    for (int k = 0; k < 3; ++k) MPI_Group_free(&groups[k]);
}

int main(int argc, char **argv)
{
    int rank, size;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        test_win_t tw;
        MPI_Group wgroup;

        test_win_create(&tw, flavor, (size_t) (2 + size) * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                        MPI_COMM_WORLD);
        MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
        MPI_Win_get_group(tw.win, &wgroup);
        early_post_held(&tw, wgroup, rank, size, flavor_names[flavor]);
        nocheck_between(&tw, wgroup, rank, size, flavor_names[flavor]);
        test_polling(&tw, wgroup, rank, size, flavor_names[flavor]);
        reposts(&tw, wgroup, rank, flavor_names[flavor]);
        MPI_Group_free(&wgroup);
        test_win_free(&tw);
    }
    return test_finalize("pscw_post_box");
}
