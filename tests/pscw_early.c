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
 * Early completions: an access epoch that issues no operation may answer a
 * target's next post before it comes (osc_newrma_active_target.c).  The
 * schedules below mix empty epochs and epochs with puts, so that origins
 * run ahead of their targets' posts, and make the targets change their
 * post groups under them: a repost to the same group (the box re-armed),
 * another group that fits the box (re-written: answers given early to the
 * old layout are kept for the next post to that origin), a group too large
 * for the box (the ring: no notice for an origin that answered early; in
 * the minimum mode, a box of one origin, every larger group), and groups
 * without some origin for a few rounds (its early answer waits for the
 * next post to it).  A target checks after every wait that each origin
 * that put in that epoch has its value there: an early answer counted for
 * the wrong post lets the wait return before the put (a stale value), or
 * loses an answer (a hang, which the runner's timeout reports).
 *  - one target, rank 0; the others origins, each with its own pattern of
 *    empty epochs;
 *  - every rank a target of every other and an origin of every other, all
 *    at once, some epochs empty.
 * Every window flavor.  tests/pscw_early_off.c runs the same schedules with
 * early answers off (osc_newrma_pscw_early_answers 0); the minimum mode
 * allows one post ahead, the default 16.  Any rank count from 2 up (groups
 * are built by membership, not bit masks).
 * newrma-test: np>=2
 */
#include "common.h"

#ifndef PSCW_EARLY_NAME
#define PSCW_EARLY_NAME "pscw_early"
#endif
#define ROUNDS 3000
#define ALL_ROUNDS 1000

static int rank, size;

/* The groups the test uses, by kind (no bit masks: any rank count). */
typedef enum {
    G_ORIGINS,       /* every rank but 0 */
    G_ONE,           /* origin 1 alone */
    G_NOT_ONE,       /* every origin but 1 */
    G_ONE_THREE,     /* origins 1 and 3 */
    G_ZERO,          /* the target, rank 0 */
    G_OTHERS,        /* every rank but this one */
    G_KINDS
} group_kind_t;

static int member(group_kind_t kind, int i)
{
    switch (kind) {
    case G_ORIGINS: return 0 != i;
    case G_ONE: return 1 == i;
    case G_NOT_ONE: return 0 != i && 1 != i;
    case G_ONE_THREE: return 1 == i || 3 == i;
    case G_ZERO: return 0 == i;
    default: return rank != i;
    }
}

/* the post group of round r at rank 0; a group that would be the same
 * ranks as G_ORIGINS is G_ORIGINS (the same handle) */
static group_kind_t group_kind(int r)
{
    switch ((r / 3) % 5) {
    case 0: return G_ORIGINS;                        /* the same group, epoch after epoch */
    case 1: return G_ONE;                            /* origin 1 alone */
    case 2: return size > 2 ? G_NOT_ONE : G_ORIGINS; /* everyone but origin 1 */
    case 3: return G_ORIGINS;
    default: return size > 3 ? G_ONE_THREE : G_ORIGINS;   /* origins 1 and 3 */
    }
}

static int empty_epoch(int r, int origin)
{
    return 0 != (r * 7 + origin * 3) % (2 + origin % 3);
}

static int64_t value(int r, int origin, int target)
{
    return (int64_t) r * 1000003 + origin * 1009 + target + 1;
}

/* MPI groups of the window, one per kind, kept so that the same kind is
 * the same group handle (a repost to it re-arms the box) */
static MPI_Group groups[G_KINDS];

static MPI_Group group_of(MPI_Group wgroup, group_kind_t kind)
{
    if (MPI_GROUP_NULL == groups[kind]) {
        int *ranks = malloc((size_t) size * sizeof *ranks), n = 0;
        for (int i = 0; i < size; ++i)
            if (member(kind, i)) ranks[n++] = i;
        MPI_Group_incl(wgroup, n, ranks, &groups[kind]);
        free(ranks);
    }
    return groups[kind];
}

/* After its wait for round r the target holds, from every origin, exactly
 * the value of that origin's last epoch with a put up to round r: an
 * answer counted for an earlier post shows as a stale value (the origins
 * sometimes compute before their put, so that a wait returned too early
 * sees it), one counted for a later post as a value from the future. */
static void one_target(test_win_t *tw, MPI_Group wgroup)
{
    int64_t *mem = tw->mem, src, *last = calloc((size_t) size, sizeof *last);
    MPI_Group zero = group_of(wgroup, G_ZERO);

    for (int r = 0; r < ROUNDS; ++r) {
        group_kind_t kind = group_kind(r);
        if (0 == rank) {
            MPI_OK(MPI_Win_post(group_of(wgroup, kind), 0, tw->win));
            MPI_OK(MPI_Win_wait(tw->win));
            for (int o = 1; o < size; ++o) {
                if (member(kind, o) && !empty_epoch(r, o)) last[o] = value(r, o, 0);
                CHECK(mem[o] == last[o], "%s round %d: origin %d's word is %lld, expected %lld",
                      flavor_names[tw->flavor], r, o, (long long) mem[o], (long long) last[o]);
            }
        } else if (member(kind, rank)) {
            MPI_OK(MPI_Win_start(zero, 0, tw->win));
            if (!empty_epoch(r, rank)) {
                if (0 == r % 7) test_compute_us(20);
                src = value(r, rank, 0);
                MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, 0, test_disp(tw, 0, rank, 8), 1, MPI_INT64_T, tw->win));
            }
            MPI_OK(MPI_Win_complete(tw->win));
        }
    }
    free(last);
}

static void all_to_all(test_win_t *tw, MPI_Group wgroup)
{
    int64_t *mem = tw->mem, *src = calloc((size_t) size, sizeof *src), *last = calloc((size_t) size, sizeof *last);
    MPI_Group others = group_of(wgroup, G_OTHERS);

    for (int r = 0; r < ALL_ROUNDS; ++r) {
        MPI_OK(MPI_Win_post(others, 0, tw->win));
        MPI_OK(MPI_Win_start(others, 0, tw->win));
        if (!empty_epoch(r, rank)) {
            if (0 == r % 5) test_compute_us(20);
            for (int t = 0; t < size; ++t) {
                if (t == rank) continue;
                src[t] = value(r, rank, t);
                MPI_OK(MPI_Put(&src[t], 1, MPI_INT64_T, t, test_disp(tw, t, size + rank, 8), 1, MPI_INT64_T,
                               tw->win));
            }
        }
        MPI_OK(MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        for (int o = 0; o < size; ++o) {
            if (o == rank) continue;
            if (!empty_epoch(r, o)) last[o] = value(r, o, rank);
            CHECK(mem[size + o] == last[o], "%s all-to-all round %d: origin %d's word is %lld, expected %lld",
                  flavor_names[tw->flavor], r, o, (long long) mem[size + o], (long long) last[o]);
        }
    }
    free(src);
    free(last);
}

int main(int argc, char **argv)
{
    MPI_Group wgroup;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        test_win_t tw;
        test_win_create(&tw, flavor, 2 * (size_t) size * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD);
        MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
        MPI_OK(MPI_Win_get_group(tw.win, &wgroup));
        for (int i = 0; i < G_KINDS; ++i) groups[i] = MPI_GROUP_NULL;
        one_target(&tw, wgroup);
        MPI_Barrier(MPI_COMM_WORLD);
        all_to_all(&tw, wgroup);
        for (int i = 0; i < G_KINDS; ++i)
            if (MPI_GROUP_NULL != groups[i]) MPI_Group_free(&groups[i]);
        MPI_Group_free(&wgroup);
        test_win_free(&tw);
    }
    return test_finalize(PSCW_EARLY_NAME);
}
