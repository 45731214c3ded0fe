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
 * General active target synchronization (post/start/complete/wait), every
 * window flavor:
 *  - a ring: each rank exposes its window to its left neighbour and accesses
 *    its right one; several epochs in a row, each with its own values;
 *  - all-to-all: every rank exposes to and accesses every rank, puts into
 *    its own slot of each target, then gets the slots written by others in a
 *    second epoch;
 *  - MPI_Win_test: returns flag = 0 while the origin has certainly not
 *    completed (it waits for a message the target sends after the test),
 *    then is polled until it returns flag = 1, after which the data is there;
 *  - empty post and start groups;
 *  - MPI_MODE_NOCHECK on post and start (the posts are known to be done
 *    through a barrier), several epochs in a row on a fresh window.
 * Groups come from the window's group (MPI_Win_get_group).
 */
#include "common.h"

#define SLOT 4           /* int64 words per origin slot */
#define RING_EPOCHS 5

static int64_t pattern(int round, int origin, int target, int i)
{
    return (int64_t) round * 100000007 + (int64_t) origin * 1000003 + target * 1009 + i + 1;
}

/* Open MPI 4.1's osc/sm (the reference for allocate and allocate_shared
 * windows) resets its count of completed origins only in a post without
 * MPI_MODE_NOCHECK (ompi/mca/osc/sm/osc_sm_active_target.c), so a NOCHECK
 * epoch after any other epoch of the window returns from MPI_Win_wait at once
 * or hangs in it.  Against osc/sm the test makes one NOCHECK epoch on a fresh
 * window; newrma is held to several. */
static int reference_sm_nocheck_bug(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL == strstr(osc, "newrma") && NULL != strstr(osc, "sm")
           && (FLAVOR_ALLOCATE == flavor || FLAVOR_SHARED == flavor);
}

static MPI_Group group_of(MPI_Group wgroup, int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(wgroup, n, ranks, &g);
    return g;
}

static void run(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    const MPI_Aint u = sizeof(int64_t);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    test_win_t tw;
    int64_t src[SLOT], dst[SLOT];

    test_win_create(&tw, flavor, (size_t) size * SLOT * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    int64_t *mine = tw.mem;
    MPI_Group wgroup, gleft, gright, gall;
    MPI_Win_get_group(tw.win, &wgroup);
    gleft = group_of(wgroup, 1, &left);
    gright = group_of(wgroup, 1, &right);
    int *all = malloc(sizeof(int) * (size_t) size);
    for (int r = 0; r < size; ++r) all[r] = (rank + r) % size;     /* any order is fine */
    gall = group_of(wgroup, size, all);

    /* ---- ring, several epochs ---- */
    for (int e = 0; e < RING_EPOCHS; ++e) {
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(e, rank, right, i);
        MPI_OK(MPI_Win_post(gleft, 0, tw.win));
        MPI_OK(MPI_Win_start(gright, 0, tw.win));
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, right, test_disp(&tw, right, 0, u), SLOT, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_complete(tw.win));
        MPI_OK(MPI_Win_wait(tw.win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(mine[i] == pattern(e, left, rank, i), "%s: ring epoch %d: word %d is %lld, expected %lld", fn, e, i,
                  (long long) mine[i], (long long) pattern(e, left, rank, i));
    }
    /* a get in a ring epoch: read what the right neighbour received */
    memset(dst, 0, sizeof(dst));
    MPI_OK(MPI_Win_post(gleft, 0, tw.win));
    MPI_OK(MPI_Win_start(gright, 0, tw.win));
    MPI_OK(MPI_Get(dst, SLOT, MPI_INT64_T, right, test_disp(&tw, right, 0, u), SLOT, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    for (int i = 0; i < SLOT; ++i)
        CHECK(dst[i] == pattern(RING_EPOCHS - 1, rank, right, i), "%s: ring get: word %d is %lld, expected %lld", fn,
              i, (long long) dst[i], (long long) pattern(RING_EPOCHS - 1, rank, right, i));

    /* ---- all-to-all ---- */
    MPI_OK(MPI_Win_post(gall, 0, tw.win));
    MPI_OK(MPI_Win_start(gall, 0, tw.win));
    /* one origin buffer per target: none may change before the epoch ends */
    int64_t *s_all = malloc(sizeof(int64_t) * SLOT * (size_t) size);
    for (int k = 0; k < size; ++k) {
        int t = all[k];
        int64_t *s = s_all + (size_t) t * SLOT;
        for (int i = 0; i < SLOT; ++i) s[i] = pattern(10, rank, t, i);
        MPI_OK(MPI_Put(s, SLOT, MPI_INT64_T, t, test_disp(&tw, t, rank * SLOT, u), SLOT, MPI_INT64_T, tw.win));
    }
    MPI_OK(MPI_Win_complete(tw.win));
    free(s_all);
    MPI_OK(MPI_Win_wait(tw.win));
    for (int o = 0; o < size; ++o)
        for (int i = 0; i < SLOT; ++i)
            CHECK(mine[o * SLOT + i] == pattern(10, o, rank, i), "%s: all-to-all: origin %d word %d is %lld, expected %lld",
                  fn, o, i, (long long) mine[o * SLOT + i], (long long) pattern(10, o, rank, i));
    /* second all-to-all epoch: get the slot of origin (rank+1) from everyone */
    int64_t *got = calloc((size_t) size * SLOT, sizeof(int64_t));
    int other = (rank + 1) % size;
    MPI_OK(MPI_Win_post(gall, 0, tw.win));
    MPI_OK(MPI_Win_start(gall, 0, tw.win));
    for (int t = 0; t < size; ++t)
        MPI_OK(MPI_Get(got + t * SLOT, SLOT, MPI_INT64_T, t, test_disp(&tw, t, other * SLOT, u), SLOT, MPI_INT64_T,
                       tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    for (int t = 0; t < size; ++t)
        for (int i = 0; i < SLOT; ++i)
            CHECK(got[t * SLOT + i] == pattern(10, other, t, i), "%s: all-to-all get from %d: word %d is %lld, expected %lld",
                  fn, t, i, (long long) got[t * SLOT + i], (long long) pattern(10, other, t, i));
    free(got);

    /* ---- MPI_Win_test ---- */
    /* the right neighbour's access waits for a token I send after my first
     * MPI_Win_test, so that test must say "not yet" (size > 1) */
    for (int i = 0; i < SLOT; ++i) src[i] = pattern(20, rank, right, i);
    MPI_OK(MPI_Win_post(gleft, 0, tw.win));
    int flag = -1;
    if (size > 1) {
        MPI_OK(MPI_Win_test(tw.win, &flag));
        CHECK(0 == flag, "%s: MPI_Win_test returned flag %d before the origin could complete", fn, flag);
        int token = rank, from = -1;
        MPI_Request reqs[2];
        MPI_Irecv(&from, 1, MPI_INT, right, 77, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(&token, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        CHECK(from == right, "%s: token from %d", fn, from);
    }
    MPI_OK(MPI_Win_start(gright, 0, tw.win));
    MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, right, test_disp(&tw, right, 0, u), SLOT, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    long polls = 0;
    flag = 0;
    while (!flag) {
        int rc = MPI_Win_test(tw.win, &flag);
        MPI_OK(rc);
        if (MPI_SUCCESS != rc) break;
        polls++;
    }
    CHECK(1 == flag, "%s: MPI_Win_test never returned flag 1", fn);
    for (int i = 0; i < SLOT; ++i)
        CHECK(mine[i] == pattern(20, left, rank, i), "%s: after MPI_Win_test flag 1 (%ld polls): word %d is %lld, expected %lld",
              fn, polls, i, (long long) mine[i], (long long) pattern(20, left, rank, i));
    /* the exposure epoch is over: a new one can start */
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- empty groups: epochs that synchronize with nobody ---- */
    {
        int tflag = 0;
        MPI_OK(MPI_Win_post(MPI_GROUP_EMPTY, 0, tw.win));
        MPI_OK(MPI_Win_start(MPI_GROUP_EMPTY, 0, tw.win));
        MPI_OK(MPI_Win_complete(tw.win));
        MPI_OK(MPI_Win_test(tw.win, &tflag));
        CHECK(1 == tflag, "%s: MPI_Win_test of an exposure to the empty group returned flag %d", fn, tflag);
        if (!tflag) MPI_OK(MPI_Win_wait(tw.win));
        MPI_OK(MPI_Win_post(MPI_GROUP_EMPTY, 0, tw.win));
        MPI_OK(MPI_Win_wait(tw.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- MPI_MODE_NOCHECK, on a fresh window ---- */
    {
        test_win_t nw;
        test_win_create(&nw, flavor, SLOT * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
        MPI_Win_set_errhandler(nw.win, MPI_ERRORS_RETURN);
        int64_t *nmine = nw.mem;
        int epochs = reference_sm_nocheck_bug(flavor) ? 1 : 3;
        for (int e = 0; e < epochs; ++e) {
            for (int i = 0; i < SLOT; ++i) src[i] = pattern(30 + e, rank, right, i);
            MPI_OK(MPI_Win_post(gleft, MPI_MODE_NOCHECK, nw.win));
            MPI_Barrier(MPI_COMM_WORLD);      /* every post is done before any start */
            MPI_OK(MPI_Win_start(gright, MPI_MODE_NOCHECK, nw.win));
            MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, right, test_disp(&nw, right, 0, u), SLOT, MPI_INT64_T, nw.win));
            MPI_OK(MPI_Win_complete(nw.win));
            MPI_OK(MPI_Win_wait(nw.win));
            for (int i = 0; i < SLOT; ++i)
                CHECK(nmine[i] == pattern(30 + e, left, rank, i), "%s: NOCHECK epoch %d: word %d is %lld, expected %lld",
                      fn, e, i, (long long) nmine[i], (long long) pattern(30 + e, left, rank, i));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        test_win_free(&nw);
    }

    MPI_Group_free(&gleft);
    MPI_Group_free(&gright);
    MPI_Group_free(&gall);
    MPI_Group_free(&wgroup);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("pscw");
}
