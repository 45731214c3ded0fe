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
 * A process that waits inside MPI by polling its own window serves the
 * other ranks' operations meanwhile (OpenCoarrays' event_wait waits this
 * way).  Every odd rank w is a waiter; its origins are w - 1 and, with an
 * odd number of ranks, also the last rank for waiter size - 2 (any number
 * of ranks from 2 up; no two origins write the same word).  Each origin
 * accumulates ITERS values into its own word of the waiter's window,
 * flushes, then puts 1 into its own flag word there and flushes again; the
 * waiter loops on a polling call until every origin's flag is up, then
 * checks the sums exactly.  The polling calls, one variant each:
 *  - inside MPI_Win_lock_all: MPI_Win_sync followed by MPI_Win_flush of
 *    itself, MPI_Win_flush_local of itself, MPI_Win_flush of an origin (to
 *    which the waiter did nothing), MPI_Win_flush_all,
 *    MPI_Win_flush_local_all, or nothing else;
 *  - in a PSCW exposure epoch (the waiter posts to its origins, which
 *    start, accumulate, put and complete): MPI_Win_test.
 * Window flavors create, allocate and dynamic (newrma's active-message
 * path in the remote modes; create and dynamic in the fifo modes).
 *
 * On the active-message path none of these calls may return without
 * polling the transports once: the waiter's window is only reached through
 * packets it serves itself.  A wall-clock bound turns a waiter that never
 * sees its flags into a failed check instead of a hang (POLL_TIMEOUT_S for
 * the first; once one has timed out, later variants wait AFTER_TIMEOUT_S,
 * so that the run ends within the harness's limit).
 *
 * newrma-test: np>=2
 */
#include "common.h"

#define ITERS 16
#define POLL_TIMEOUT_S 20.0
#define AFTER_TIMEOUT_S 2.0

enum {
    POLL_FLUSH_SELF,
    POLL_FLUSH_LOCAL_SELF,
    POLL_FLUSH_OTHER,
    POLL_FLUSH_ALL,
    POLL_FLUSH_LOCAL_ALL,
    POLL_SYNC_ONLY,
    POLL_WIN_TEST,      /* PSCW: the only one outside lock_all */
    POLL_KINDS
};
static const char *const poll_names[POLL_KINDS] = {
    "MPI_Win_sync + MPI_Win_flush(self)", "MPI_Win_sync + MPI_Win_flush_local(self)",
    "MPI_Win_sync + MPI_Win_flush(origin)", "MPI_Win_sync + MPI_Win_flush_all",
    "MPI_Win_sync + MPI_Win_flush_local_all", "MPI_Win_sync", "MPI_Win_test",
};

static double poll_timeout_s = POLL_TIMEOUT_S;

/* window layout (int64 words): origin o's sum at 2o, its flag at 2o + 1 */
#define W_SUM(o) (2 * (o))
#define W_FLAG(o) (2 * (o) + 1)

static int64_t value(int origin, int kind, int i)
{
    return (int64_t) origin * 1000003 + (int64_t) kind * 10007 + i + 1;
}

static int64_t expected_sum(int origin, int kind)
{
    int64_t sum = 0;
    for (int i = 0; i < ITERS; ++i) sum += value(origin, kind, i);
    return sum;
}

/* The waiter an origin writes to, or -1 for a waiter. */
static int waiter_of(int rank, int size)
{
    if (rank % 2) return -1;
    if (rank + 1 < size) return rank + 1;
    return size >= 3 ? size - 2 : -1;    /* the last rank of an odd count */
}

/* The origins of waiter `w` (at most 2). */
static int origins_of(int w, int size, int origins[2])
{
    int n = 0;
    origins[n++] = w - 1;
    if (size % 2 && w == size - 2) origins[n++] = size - 1;
    return n;
}

/* The origins whose flag is up in my window. */
static int flags_up(const int64_t *mine, const int *origins, int n)
{
    int up = 0;
    for (int k = 0; k < n; ++k) up += 1 == __atomic_load_n(&mine[W_FLAG(origins[k])], __ATOMIC_ACQUIRE);
    return up;
}

static void poll_once(test_win_t *tw, int kind, int self, int other)
{
    MPI_OK(MPI_Win_sync(tw->win));
    switch (kind) {
    case POLL_FLUSH_SELF: MPI_OK(MPI_Win_flush(self, tw->win)); break;
    case POLL_FLUSH_LOCAL_SELF: MPI_OK(MPI_Win_flush_local(self, tw->win)); break;
    case POLL_FLUSH_OTHER: MPI_OK(MPI_Win_flush(other, tw->win)); break;
    case POLL_FLUSH_ALL: MPI_OK(MPI_Win_flush_all(tw->win)); break;
    case POLL_FLUSH_LOCAL_ALL: MPI_OK(MPI_Win_flush_local_all(tw->win)); break;
    default: break;
    }
}

/* Poll until every origin's flag is up; false after the time bound. */
static int waiter_polls(test_win_t *tw, int kind, int rank, const int *origins, int n)
{
    const int64_t *mine = tw->mem;
    const double start = test_now_s();
    int done = 0;

    while (!done) {
        if (POLL_WIN_TEST == kind) {
            MPI_OK(MPI_Win_test(tw->win, &done));
        } else {
            poll_once(tw, kind, rank, origins[0]);
            done = flags_up(mine, origins, n) == n;
        }
        if (!done && test_now_s() - start > poll_timeout_s) return 0;
    }
    return 1;
}

static void waiter_checks(const char *fn, int kind, const int64_t *mine, int size, const int *origins, int n)
{
    for (int o = 0; o < size; ++o) {
        int mine_origin = 0;
        for (int k = 0; k < n; ++k) mine_origin |= origins[k] == o;
        int64_t sum = mine_origin ? expected_sum(o, kind) : 0, flag = mine_origin;
        CHECK(mine[W_SUM(o)] == sum, "%s, %s: sum of origin %d is %lld, expected %lld", fn, poll_names[kind], o,
              (long long) mine[W_SUM(o)], (long long) sum);
        CHECK(mine[W_FLAG(o)] == flag, "%s, %s: flag of origin %d is %lld, expected %lld", fn, poll_names[kind], o,
              (long long) mine[W_FLAG(o)], (long long) flag);
    }
}

/* The origin's side, inside the epoch the caller opened: the sums, then
 * the flag.  It ends its part of a PSCW epoch itself (MPI_Win_complete):
 * the origin buffers live here and may be read until then. */
static void origin_writes(test_win_t *tw, int kind, int rank, int w, int passive)
{
    const MPI_Aint u = sizeof(int64_t);
    const int64_t one = 1;
    int64_t v[ITERS];

    for (int i = 0; i < ITERS; ++i) {
        v[i] = value(rank, kind, i);
        MPI_OK(MPI_Accumulate(&v[i], 1, MPI_INT64_T, w, test_disp(tw, w, W_SUM(rank), u), 1, MPI_INT64_T, MPI_SUM,
                              tw->win));
    }
    /* in PSCW the accumulates are done before the waiter's epoch ends,
     * where it looks at the flag */
    if (passive) MPI_OK(MPI_Win_flush(w, tw->win));
    MPI_OK(MPI_Put(&one, 1, MPI_INT64_T, w, test_disp(tw, w, W_FLAG(rank), u), 1, MPI_INT64_T, tw->win));
    if (passive) MPI_OK(MPI_Win_flush(w, tw->win));
    else MPI_OK(MPI_Win_complete(tw->win));
}

static void run(int flavor, int kind)
{
    int rank, size, origins[2], n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    const int w = waiter_of(rank, size), waiter = rank % 2;
    test_win_t tw;

    if (waiter) n = origins_of(rank, size, origins);
    test_win_create(&tw, flavor, (size_t) 2 * (size_t) size * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);

    if (POLL_WIN_TEST == kind) {
        MPI_Group world, group;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        if (waiter) {
            MPI_Group_incl(world, n, origins, &group);
            MPI_OK(MPI_Win_post(group, 0, tw.win));
            if (!waiter_polls(&tw, kind, rank, origins, n)) {
                CHECK(0, "%s, %s: the origins' epochs did not complete within %.0f s", fn, poll_names[kind],
                      poll_timeout_s);
                poll_timeout_s = AFTER_TIMEOUT_S;
                MPI_OK(MPI_Win_wait(tw.win));
            } else {
                waiter_checks(fn, kind, tw.mem, size, origins, n);
            }
        } else if (w >= 0) {
            MPI_Group_incl(world, 1, &w, &group);
            MPI_OK(MPI_Win_start(group, 0, tw.win));
            origin_writes(&tw, kind, rank, w, 0);
        }
        if (waiter || w >= 0) MPI_Group_free(&group);
        MPI_Group_free(&world);
    } else {
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        if (waiter) {
            if (!waiter_polls(&tw, kind, rank, origins, n)) {
                CHECK(0, "%s, %s: %d of %d origins' flags up after %.0f s", fn, poll_names[kind],
                      flags_up(tw.mem, origins, n), n, poll_timeout_s);
                poll_timeout_s = AFTER_TIMEOUT_S;
            } else {
                MPI_OK(MPI_Win_sync(tw.win));
                waiter_checks(fn, kind, tw.mem, size, origins, n);
            }
        } else if (w >= 0) {
            origin_writes(&tw, kind, rank, w, 1);
        }
        MPI_OK(MPI_Win_unlock_all(tw.win));
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    int size;
    test_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks (a waiter and an origin), got %d", size);
    if (size >= 2) {
        const int flavors[] = { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_DYNAMIC };
        for (size_t f = 0; f < sizeof(flavors) / sizeof(flavors[0]); ++f)
            for (int kind = 0; kind < POLL_KINDS; ++kind) run(flavors[f], kind);
    }
    return test_finalize("am_sync_polling");
}
