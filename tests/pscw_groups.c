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
 * General active target synchronization with different groups, every window
 * flavor.  In every epoch a target stores an "info" word in its window
 * before MPI_Win_post; each origin gets it and puts a pattern into its own
 * slot of the target; everything is checked after MPI_Win_wait (target) and
 * MPI_Win_complete (origin).
 *  - overlapping groups: rank 0 exposes its window to every other rank while
 *    it accesses only rank 1; every other rank accesses rank 0 and its right
 *    neighbour (so rank 0 has several origins in one exposure epoch, each
 *    writing its own slot, and ranks are origin and target in the same epoch,
 *    post then start); again with every rank also accessing itself;
 *  - groups listed in an order different from the communicator's
 *    (MPI_Group_incl with the ranks in reverse), on a window of
 *    MPI_COMM_WORLD and on a window of a communicator whose ranks are
 *    MPI_COMM_WORLD's in reverse, with groups built from MPI_COMM_WORLD's
 *    group (so they must be translated);
 *  - disjoint groups: pairs (0,1) and (2,3) run epochs at the same time, in
 *    one direction, the other, and both; a rank without partner makes epochs
 *    with empty groups;
 *  - empty groups mixed with non-empty ones: a rank posts to someone but
 *    starts an empty access epoch, and the reverse;
 *  - consecutive epochs whose target set changes: origin 0 does
 *    start({1}), start({2}), start({1}) while rank 1 posts again for 0 right
 *    after its first epoch and rank 2 posts late: the early notice of rank 1
 *    must not let start({2}) through (rank 2's pre-post store would then
 *    overwrite 0's put);
 *  - MPI_Win_post does not block (MPI-3.1 11.5.2): ranks 1..n-1 post to
 *    rank 0 and then enter an MPI_Barrier before their MPI_Win_wait, while
 *    rank 0 accesses rank 1, enters the barrier, then accesses the others
 *    one by one.
 * A watchdog turns a deadlock into a failure with the phase it was in.
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

#define SLOT 2                 /* int64 words per origin slot */
#define W_INFO 0               /* the target's own word, stored before post */
#define W_SLOT(o) (1 + (o) * SLOT)
#define WORDS(size) (1 + (size) * SLOT)
#define WATCHDOG_S 30

static int rank, size;
static const char *fn;
static const char *volatile phase = "start";

static void watchdog(int sig)
{
    char msg[256];
    (void) sig;
    int n = snprintf(msg, sizeof(msg), "[rank %d] pscw_groups: check failed: watchdog: no progress in %d s, "
                     "stuck in %s (%s)\n", rank, WATCHDOG_S, phase, fn ? fn : "-");
    if (n > 0) (void) !write(2, msg, (size_t) n);
    _exit(3);
}

static int64_t pattern(int e, int origin, int target, int i)
{
    return (int64_t) (e + 1) * 100000007 + (int64_t) origin * 1000003 + target * 1009 + i + 1;
}

static int64_t info(int e, int target) { return -((int64_t) (e + 1) * 1000 + target + 1); }

/* a group of `n` ranks of `base`, in the given order */
static MPI_Group group_of(MPI_Group base, int n, const int *ranks)
{
    MPI_Group g;
    if (0 == n) return MPI_GROUP_EMPTY;
    MPI_Group_incl(base, n, ranks, &g);
    return g;
}

static void group_free(MPI_Group *g)
{
    if (MPI_GROUP_EMPTY != *g) MPI_Group_free(g);
}

/*
 * One PSCW epoch on `tw` (window communicator `wcomm`) whose access relation
 * is acc(origin, target) in window ranks.  Groups are built from `base`
 * (whose rank r is window rank to_win[r]); `reverse` lists them in
 * decreasing order.  Every rank posts, then starts.
 */
static void epoch(test_win_t *tw, MPI_Comm wcomm, int e, int (*acc)(int, int, int), int variant, MPI_Group base,
                  const int *to_base, int reverse)
{
    int me, n;
    MPI_Comm_rank(wcomm, &me);
    MPI_Comm_size(wcomm, &n);
    volatile int64_t *mine = tw->mem;
    int *origins = malloc(sizeof(int) * (size_t) n), *targets = malloc(sizeof(int) * (size_t) n);
    int no = 0, nt = 0;
    for (int k = 0; k < n; ++k) {
        int r = reverse ? n - 1 - k : k;
        if (acc(r, me, variant)) origins[no++] = to_base[r];
        if (acc(me, r, variant)) targets[nt++] = to_base[r];
    }
    MPI_Group gpost = group_of(base, no, origins), gstart = group_of(base, nt, targets);
    int64_t *got = calloc((size_t) n, sizeof(int64_t));

    mine[W_INFO] = info(e, me);
    MPI_OK(MPI_Win_post(gpost, 0, tw->win));
    MPI_OK(MPI_Win_start(gstart, 0, tw->win));
    /* one origin buffer per target: none may change before the epoch ends */
    int64_t *src_all = malloc(sizeof(int64_t) * SLOT * (size_t) n);
    for (int t = 0; t < n; ++t) {
        if (!acc(me, t, variant)) continue;
        int64_t *src = src_all + (size_t) t * SLOT;
        for (int i = 0; i < SLOT; ++i) src[i] = pattern(e, me, t, i);
        MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(tw, t, W_SLOT(me), sizeof(int64_t)), SLOT, MPI_INT64_T,
                       tw->win));
        MPI_OK(MPI_Get(&got[t], 1, MPI_INT64_T, t, test_disp(tw, t, W_INFO, sizeof(int64_t)), 1, MPI_INT64_T,
                       tw->win));
    }
    MPI_OK(MPI_Win_complete(tw->win));
    free(src_all);
    for (int t = 0; t < n; ++t)
        if (acc(me, t, variant))
            CHECK(got[t] == info(e, t), "%s: %s epoch %d: info of target %d is %lld, expected %lld", fn, phase, e, t,
                  (long long) got[t], (long long) info(e, t));
    MPI_OK(MPI_Win_wait(tw->win));
    for (int o = 0; o < n; ++o) {
        if (!acc(o, me, variant)) continue;
        for (int i = 0; i < SLOT; ++i)
            CHECK(mine[W_SLOT(o) + i] == pattern(e, o, me, i), "%s: %s epoch %d: slot of origin %d word %d is %lld, "
                  "expected %lld", fn, phase, e, o, i, (long long) mine[W_SLOT(o) + i], (long long) pattern(e, o, me, i));
    }
    group_free(&gpost);
    group_free(&gstart);
    free(origins);
    free(targets);
    free(got);
}

/* rank 0 exposes to all others and accesses 1; r > 0 accesses 0 and r + 1;
 * variant 1: everyone also accesses itself */
static int acc_overlap(int o, int t, int variant)
{
    if (variant && o == t) return 1;
    if (0 == o) return 1 == t;
    return 0 == t || o + 1 == t;
}

/* pairs (0,1), (2,3): variant 0: even accesses odd, 1: odd accesses even,
 * 2: both */
static int acc_pairs(int o, int t, int variant)
{
    if (o == t || o / 2 != t / 2) return 0;
    if (2 == variant) return 1;
    return (o % 2) == variant;
}

/* rank r accesses r + 1 only when r is even; odd ranks post to r - 1 but
 * start an empty access epoch, even ranks the reverse; the last rank of an
 * odd size has both groups empty */
static int acc_half(int o, int t, int variant)
{
    (void) variant;
    return o % 2 == 0 && t == o + 1;
}

static void changing_targets(test_win_t *tw, MPI_Group wg)
{
    /* 0 = origin O, 1 = A, 2 = B */
    volatile int64_t *mine = tw->mem;
    const int O = 0, A = 1, B = 2;
    int zero = 0;
    MPI_Group gO = group_of(wg, 1, &zero);
    if (rank == O) {
        int a = A, b = B;
        MPI_Group gA = group_of(wg, 1, &a), gB = group_of(wg, 1, &b);
        int64_t src[SLOT];
        for (int round = 0; round < 3; ++round) {
            int t = (1 == round) ? B : A;
            for (int i = 0; i < SLOT; ++i) src[i] = pattern(50 + round, O, t, i);
            MPI_OK(MPI_Win_start(1 == round ? gB : gA, 0, tw->win));
            MPI_OK(MPI_Put(src, SLOT, MPI_INT64_T, t, test_disp(tw, t, W_SLOT(O), sizeof(int64_t)), SLOT,
                           MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
        }
        group_free(&gA);
        group_free(&gB);
    } else if (rank == A) {
        for (int round = 0; round < 3; round += 2) {
            /* the second post comes right after the first wait: while
             * rank 0 is (or is about to be) in start({B}) */
            MPI_OK(MPI_Win_post(gO, 0, tw->win));
            MPI_OK(MPI_Win_wait(tw->win));
            for (int i = 0; i < SLOT; ++i)
                CHECK(mine[W_SLOT(O) + i] == pattern(50 + round, O, A, i), "%s: changing targets: A's slot word %d "
                      "after epoch %d is %lld, expected %lld", fn, i, round, (long long) mine[W_SLOT(O) + i],
                      (long long) pattern(50 + round, O, A, i));
        }
    } else if (rank == B) {
        usleep(30000);       /* rank 1's second post is there long before */
        for (int i = 0; i < SLOT; ++i) mine[W_SLOT(O) + i] = -5;     /* before the post: rank 0 writes after */
        MPI_OK(MPI_Win_post(gO, 0, tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        for (int i = 0; i < SLOT; ++i)
            CHECK(mine[W_SLOT(O) + i] == pattern(51, O, B, i), "%s: changing targets: B's slot word %d is %lld, "
                  "expected %lld (start({B}) went through before B posted?)", fn, i, (long long) mine[W_SLOT(O) + i],
                  (long long) pattern(51, O, B, i));
    }
    group_free(&gO);
}

static void post_does_not_block(test_win_t *tw, MPI_Group wg)
{
    volatile int64_t *mine = tw->mem;
    int zero = 0;
    if (0 == rank) {
        for (int t = 1; t < size; ++t) {
            MPI_Group gt = group_of(wg, 1, &t);
            int64_t v = pattern(60, 0, t, 0);
            MPI_OK(MPI_Win_start(gt, 0, tw->win));
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, test_disp(tw, t, W_SLOT(0), sizeof(int64_t)), 1, MPI_INT64_T,
                           tw->win));
            MPI_OK(MPI_Win_complete(tw->win));
            group_free(&gt);
            if (1 == t) MPI_Barrier(MPI_COMM_WORLD);
        }
        if (1 == size) MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Group g0 = group_of(wg, 1, &zero);
        if (rank > 1) usleep(10000);        /* rank 1's notice comes first */
        MPI_OK(MPI_Win_post(g0, 0, tw->win));
        MPI_Barrier(MPI_COMM_WORLD);        /* a post returns without rank 0's help */
        MPI_OK(MPI_Win_wait(tw->win));
        CHECK(mine[W_SLOT(0)] == pattern(60, 0, rank, 0), "%s: post/barrier/wait: slot is %lld, expected %lld", fn,
              (long long) mine[W_SLOT(0)], (long long) pattern(60, 0, rank, 0));
        group_free(&g0);
    }
}

static void run(int flavor)
{
    test_win_t tw;
    fn = flavor_names[flavor];
    MPI_Group wg, worldg;
    int *ident = malloc(sizeof(int) * (size_t) size);
    for (int r = 0; r < size; ++r) ident[r] = r;

    test_win_create(&tw, flavor, (size_t) WORDS(size) * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    MPI_Win_get_group(tw.win, &wg);
    int e = 0;

    phase = "overlapping groups";
    for (int k = 0; k < 4; ++k) epoch(&tw, MPI_COMM_WORLD, e++, acc_overlap, k % 2, wg, ident, k >= 2);
    phase = "disjoint pairs";
    for (int k = 0; k < 6; ++k) epoch(&tw, MPI_COMM_WORLD, e++, acc_pairs, k % 3, wg, ident, k % 2);
    phase = "empty and non-empty groups";
    for (int k = 0; k < 3; ++k) epoch(&tw, MPI_COMM_WORLD, e++, acc_half, 0, wg, ident, k % 2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size >= 3) {
        phase = "changing target sets";
        changing_targets(&tw, wg);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    phase = "post, barrier, wait";
    post_does_not_block(&tw, wg);
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);

    /* a window of a communicator in reverse order; groups from
     * MPI_COMM_WORLD's group, in reverse and in order */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_group(MPI_COMM_WORLD, &worldg);
    int *world_of = malloc(sizeof(int) * (size_t) size);
    for (int r = 0; r < size; ++r) world_of[r] = size - 1 - r;     /* window rank r is world rank size-1-r */
    test_win_t rw;
    test_win_create(&rw, flavor, (size_t) WORDS(size) * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, rev);
    MPI_Win_set_errhandler(rw.win, MPI_ERRORS_RETURN);
    phase = "reversed communicator";
    for (int k = 0; k < 4; ++k) epoch(&rw, rev, e++, acc_overlap, k % 2, worldg, world_of, k % 2);
    for (int k = 0; k < 3; ++k) epoch(&rw, rev, e++, acc_pairs, k, worldg, world_of, k % 2);
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&rw);
    MPI_Comm_free(&rev);
    MPI_Group_free(&worldg);
    MPI_Group_free(&wg);
    free(world_of);
    free(ident);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    alarm(0);
    return test_finalize("pscw_groups");
}
