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
 * Illegal synchronization sequences return MPI_ERR_RMA_SYNC (with
 * MPI_ERRORS_RETURN on the window) and leave the window usable: after each
 * error the sequence is finished correctly or a fresh correct epoch moves
 * exact data.  Every flavor, on MPI_COMM_WORLD (and one window on half of
 * it: a start/post group with a process outside the window is
 * MPI_ERR_GROUP).  Fence, start, lock_all, lock and post are refused inside
 * the epochs they may not start in; MPI_Win_free is refused in every kind of epoch: lock,
 * lock_all, a fence epoch with an RMA call, PSCW access, exposure.
 *
 * Every rank runs the same sequence, and every erroneous call is one that
 * fails locally, so no rank is left waiting in a collective.
 *
 * newrma-test: only-newrma
 * (osc/sm does not check epochs at all; the error classes are newrma's)
 */
#include "common.h"

#define NSLOT 8          /* int64 slots per rank */
#define SLOT_PROOF 0     /* slot written by prove_usable() */
#define SLOT_SEQ 1       /* slot written by the sequences themselves */

static int rank, size, right, left, leftleft;

static int64_t value(int writer, int round) { return (int64_t) writer * 100000 + round * 10 + 7; }

static void open_window(test_win_t *tw, int flavor, MPI_Info info)
{
    test_win_create(tw, flavor, NSLOT * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw->win, MPI_ERRORS_RETURN));
}

static MPI_Aint disp(const test_win_t *tw, int target, int slot)
{
    return test_disp(tw, target, slot, sizeof(int64_t));
}

/* Read this rank's own window slot inside a passive epoch on itself (the
 * standard-conforming way to look at memory others wrote with RMA). */
static int64_t read_own(test_win_t *tw, int slot)
{
    int64_t v;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw->win));
    v = ((volatile int64_t *) tw->mem)[slot];
    MPI_OK(MPI_Win_unlock(rank, tw->win));
    return v;
}

/* A correct fence epoch after an error: put to the right, get from the left,
 * exact values.  `round` makes every call's data distinct. */
static void prove_usable(test_win_t *tw, int round, const char *after)
{
    const char *fl = flavor_names[tw->flavor];
    int64_t out = value(rank, round), in = -1;
    volatile int64_t *mine = tw->mem;

    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(tw, right, SLOT_PROOF), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    CHECK(mine[SLOT_PROOF] == value(left, round), "%s: after %s: put delivered %lld, expected %lld", fl,
          after, (long long) mine[SLOT_PROOF], (long long) value(left, round));
    MPI_OK(MPI_Get(&in, 1, MPI_INT64_T, left, disp(tw, left, SLOT_PROOF), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    CHECK(in == value(leftleft, round), "%s: after %s: get returned %lld, expected %lld", fl, after,
          (long long) in, (long long) value(leftleft, round));
}

static MPI_Group group_of(MPI_Win win, int member)
{
    MPI_Group all, one;
    MPI_OK(MPI_Win_get_group(win, &all));
    MPI_OK(MPI_Group_incl(all, 1, &member, &one));
    MPI_OK(MPI_Group_free(&all));
    return one;
}

/* ---- the sequences ----------------------------------------------------- */

/* RMA calls on a window no epoch was ever opened on, after a fence with
 * NOSUCCEED, after unlock; nothing lands in memory. */
static void rma_outside_epoch(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 1), in = -5;
    const char *fl = flavor_names[flavor];

    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Get(&in, 1, MPI_INT64_T, left, disp(&tw, left, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    CHECK(in == -5, "%s: failed get wrote the origin buffer (%lld)", fl, (long long) in);

    /* after a fence that closes the epoch */
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));

    /* after the unlock that ends a lock epoch */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Get(&in, 1, MPI_INT64_T, left, disp(&tw, left, SLOT_SEQ), 1, MPI_INT64_T, tw.win));

    /* after unlock_all */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));

    /* no failed put reached its target */
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t seen = read_own(&tw, SLOT_SEQ);
    CHECK(seen == 0, "%s: a put that failed with RMA_SYNC wrote %lld", fl, (long long) seen);
    CHECK(in == -5, "%s: failed get wrote the origin buffer (%lld)", fl, (long long) in);
    prove_usable(&tw, 1, "RMA outside any epoch");
    test_win_free(&tw);
}

/* In a lock epoch on one target, an RMA call to another target; in a PSCW
 * epoch, a call to a process outside the start group. */
static void rma_to_target_outside_epoch(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 2);
    const char *fl = flavor_names[flavor];

    if (size < 2) return;
    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(rank, tw.win));

    if (size >= 3) {
        /* start group {right}, access to left */
        MPI_Group to = group_of(tw.win, right), from = group_of(tw.win, left);
        MPI_OK(MPI_Win_post(from, 0, tw.win));
        MPI_OK(MPI_Win_start(to, 0, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                       MPI_Put(&out, 1, MPI_INT64_T, left, disp(&tw, left, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_complete(tw.win));
        MPI_OK(MPI_Win_wait(tw.win));
        MPI_OK(MPI_Group_free(&to));
        MPI_OK(MPI_Group_free(&from));
        int64_t seen = ((volatile int64_t *) tw.mem)[SLOT_SEQ];
        CHECK(seen == value(left, 2), "%s: PSCW put after a refused one: %lld, expected %lld", fl,
              (long long) seen, (long long) value(left, 2));
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t seen = read_own(&tw, SLOT_SEQ);
        CHECK(seen == 0, "%s: a put to an unlocked target wrote %lld", fl, (long long) seen);
    }
    prove_usable(&tw, 2, "RMA to a target outside the epoch");
    test_win_free(&tw);
}

/* Unlock with no lock at all, unlock of a target that is not the locked one,
 * unlock_all without lock_all. */
static void unlock_without_lock(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 3);
    const char *fl = flavor_names[flavor];

    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(rank, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(tw.win));
    if (size >= 2) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(tw.win));
        MPI_OK(MPI_Win_unlock(rank, tw.win));
    }
    /* a second unlock of a target that was just unlocked */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t seen = read_own(&tw, SLOT_SEQ);
    CHECK(seen == value(left, 3), "%s: lock epoch between refused unlocks delivered %lld, expected %lld", fl,
          (long long) seen, (long long) value(left, 3));
    prove_usable(&tw, 3, "unlock without lock");
    test_win_free(&tw);
}

/* A second lock on a target this process already locked (shared then
 * shared, exclusive then exclusive, shared then exclusive): refused at once
 * (an exclusive re-lock must not deadlock), the first lock stays valid. */
static void second_lock(int flavor)
{
    static const int kinds[3][2] = {
        { MPI_LOCK_SHARED, MPI_LOCK_SHARED },
        { MPI_LOCK_EXCLUSIVE, MPI_LOCK_EXCLUSIVE },
        { MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE },
    };
    test_win_t tw;
    const char *fl = flavor_names[flavor];

    open_window(&tw, flavor, MPI_INFO_NULL);
    for (int k = 0; k < 3; ++k) {
        int64_t out = value(rank, 40 + k);
        MPI_OK(MPI_Win_lock(kinds[k][0], right, 0, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(kinds[k][1], right, 0, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(kinds[k][1], right, MPI_MODE_NOCHECK, tw.win));
        /* the first lock still holds: an operation goes through, one unlock ends it */
        MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(right, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t seen = read_own(&tw, SLOT_SEQ);
        CHECK(seen == value(left, 40 + k), "%s: case %d: put under the first lock delivered %lld, expected %lld",
              fl, k, (long long) seen, (long long) value(left, 40 + k));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* a lock_all on top of a per-target lock, and a lock on top of lock_all */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    prove_usable(&tw, 4, "a second lock on the same target");
    test_win_free(&tw);
}

/* Locks released out of order: lock A, lock B, unlock A, lock C (newrma
 * keeps an epoch's first lock apart from the others; C takes the place A
 * left).  A is refused everywhere once unlocked, B and C are not, a lock
 * again on B or C is refused; data put under B and C arrives exactly.
 * Shared locks only (every rank runs the same sequence); C with NOCHECK.
 * With two processes C is A again. */
#define SLOT_SEQ_C 2
static void locks_released_out_of_order(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 6), none = -1;
    int a = rank, b = right, c = size >= 3 ? left : rank, c_writer = size >= 3 ? right : rank;
    const char *fl = flavor_names[flavor];

    if (size < 2) return;
    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, tw.win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, b, 0, tw.win));
    MPI_OK(MPI_Win_unlock(a, tw.win));
    if (a != b && a != c) {
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                       MPI_Put(&none, 1, MPI_INT64_T, a, disp(&tw, a, SLOT_PROOF), 1, MPI_INT64_T, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush(a, tw.win));
    }
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(a, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, b, 0, tw.win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, c, MPI_MODE_NOCHECK, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, c, 0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, b, disp(&tw, b, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, c, disp(&tw, c, SLOT_SEQ_C), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_flush(b, tw.win));
    MPI_OK(MPI_Win_flush(c, tw.win));
    MPI_OK(MPI_Win_unlock(c, tw.win));
    if (b != c) {
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                       MPI_Put(&none, 1, MPI_INT64_T, c, disp(&tw, c, SLOT_PROOF), 1, MPI_INT64_T, tw.win));
    }
    MPI_OK(MPI_Win_unlock(b, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                   MPI_Put(&none, 1, MPI_INT64_T, b, disp(&tw, b, SLOT_PROOF), 1, MPI_INT64_T, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t seen_b = read_own(&tw, SLOT_SEQ), seen_c = read_own(&tw, SLOT_SEQ_C);
    int64_t seen_proof = read_own(&tw, SLOT_PROOF);
    CHECK(seen_b == value(left, 6), "%s: put under the second lock delivered %lld, expected %lld", fl,
          (long long) seen_b, (long long) value(left, 6));
    CHECK(seen_c == value(c_writer, 6), "%s: put under the reused first lock delivered %lld, expected %lld", fl,
          (long long) seen_c, (long long) value(c_writer, 6));
    CHECK(seen_proof == 0, "%s: a refused put wrote %lld", fl, (long long) seen_proof);
    MPI_Barrier(MPI_COMM_WORLD);
    prove_usable(&tw, 6, "locks released out of order");
    test_win_free(&tw);
}

/* fence(0), an RMA call, then lock / lock_all / start: refused; the fence
 * epoch goes on and its data arrives.  A fence followed by no RMA call opens
 * no epoch, so lock after it is legal. */
static void lock_in_used_fence_epoch(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 5);
    const char *fl = flavor_names[flavor];
    MPI_Group to;

    open_window(&tw, flavor, MPI_INFO_NULL);
    to = group_of(tw.win, right);
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, MPI_MODE_NOCHECK, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(MPI_MODE_NOCHECK, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_start(to, MPI_MODE_NOCHECK, tw.win));
    /* still in the fence epoch: another operation is fine */
    /* a second buffer: the first put's may not change before the epoch ends */
    int64_t out2 = value(rank, 6);
    MPI_OK(MPI_Put(&out2, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ + 1), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    volatile int64_t *mine = tw.mem;
    CHECK(mine[SLOT_SEQ] == value(left, 5) && mine[SLOT_SEQ + 1] == value(left, 6),
          "%s: fence epoch after refused locks delivered %lld,%lld, expected %lld,%lld", fl,
          (long long) mine[SLOT_SEQ], (long long) mine[SLOT_SEQ + 1], (long long) value(left, 5),
          (long long) value(left, 6));

    /* fence(0) with no RMA call after it: lock and lock_all are legal */
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_OK(MPI_Group_free(&to));
    prove_usable(&tw, 5, "lock in a fence epoch");
    test_win_free(&tw);
}

/* complete without start (never started, and a second complete); wait and
 * test without post (never posted, and a second wait).  Then PSCW works. */
static void pscw_without_opening(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 7);
    int flag = 12345;
    const char *fl = flavor_names[flavor];
    MPI_Group to, from;

    open_window(&tw, flavor, MPI_INFO_NULL);
    to = group_of(tw.win, right);
    from = group_of(tw.win, left);
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_complete(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_wait(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_test(tw.win, &flag));

    /* a correct PSCW epoch, then the closing calls again */
    MPI_OK(MPI_Win_post(from, 0, tw.win));
    MPI_OK(MPI_Win_start(to, 0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_wait(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_test(tw.win, &flag));
    int64_t seen = ((volatile int64_t *) tw.mem)[SLOT_SEQ];
    CHECK(seen == value(left, 7), "%s: PSCW after refused complete/wait delivered %lld, expected %lld", fl,
          (long long) seen, (long long) value(left, 7));

    /* complete in a lock epoch and inside a fence epoch is not a PSCW close */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));

    /* test closes an exposure epoch too (flag eventually 1), then refuses */
    out = value(rank, 8);
    MPI_OK(MPI_Win_post(from, 0, tw.win));
    MPI_OK(MPI_Win_start(to, 0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    flag = 0;
    for (int spins = 0; !flag && spins < 10000000; ++spins) {
        int rc = MPI_Win_test(tw.win, &flag);
        if (MPI_SUCCESS != rc) {
            MPI_OK(rc);
            break;
        }
    }
    CHECK(flag == 1, "%s: MPI_Win_test never completed the exposure epoch", fl);
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_test(tw.win, &flag));
    seen = ((volatile int64_t *) tw.mem)[SLOT_SEQ];
    CHECK(seen == value(left, 8), "%s: PSCW closed by test delivered %lld, expected %lld", fl, (long long) seen,
          (long long) value(left, 8));

    MPI_OK(MPI_Group_free(&to));
    MPI_OK(MPI_Group_free(&from));
    prove_usable(&tw, 7, "complete/wait/test without start/post");
    test_win_free(&tw);
}

/* flush, flush_all, flush_local, flush_local_all with no passive epoch: no
 * epoch at all, a used fence epoch, a PSCW epoch; flush of a target that
 * is not locked while another one is. */
static void flush_outside_passive(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 9);
    const char *fl = flavor_names[flavor];
    MPI_Group to, from;

    open_window(&tw, flavor, MPI_INFO_NULL);
    to = group_of(tw.win, right);
    from = group_of(tw.win, left);

    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_local(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_local_all(tw.win));

    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_local(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_local_all(tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    CHECK(((volatile int64_t *) tw.mem)[SLOT_SEQ] == value(left, 9), "%s: fence epoch with refused flushes lost its put",
          fl);

    MPI_OK(MPI_Win_post(from, 0, tw.win));
    MPI_OK(MPI_Win_start(to, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_local_all(tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));

    if (size >= 2) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_local(right, tw.win));
        MPI_OK(MPI_Win_flush(rank, tw.win));
        MPI_OK(MPI_Win_flush_all(tw.win));
        MPI_OK(MPI_Win_unlock(rank, tw.win));
    }
    /* and after the passive epoch ended */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Win_flush(right, tw.win));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(tw.win));

    MPI_OK(MPI_Group_free(&to));
    MPI_OK(MPI_Group_free(&from));
    prove_usable(&tw, 9, "flush outside a passive epoch");
    test_win_free(&tw);
}

/* Inside each kind of open epoch -- lock, lock_all, PSCW access, exposure
 * -- the synchronizations that may not start there: fence (in all four),
 * start and lock_all (in the access epochs), a lock in lock_all and PSCW
 * epochs, a second post in an exposure epoch.  Each is refused on every
 * rank (fence is collective: nobody is left in it), and the epoch then
 * delivers its put. */
static void sync_inside_open_epochs(int flavor)
{
    enum { E_LOCK, E_LOCK_ALL, E_ACCESS, E_EXPOSURE, E_COUNT };
    static const char *const names[E_COUNT] = { "lock", "lock_all", "PSCW access", "exposure" };
    test_win_t tw;
    const char *fl = flavor_names[flavor];

    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_Group to = group_of(tw.win, right), from = group_of(tw.win, left);
    for (int k = 0; k < E_COUNT; ++k) {
        int64_t out = value(rank, 50 + k);
        switch (k) {
        case E_LOCK: MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win)); break;
        case E_LOCK_ALL: MPI_OK(MPI_Win_lock_all(0, tw.win)); break;
        default:
            MPI_OK(MPI_Win_post(from, 0, tw.win));
            if (E_ACCESS == k) MPI_OK(MPI_Win_start(to, 0, tw.win));
        }
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, tw.win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_fence(MPI_MODE_NOPRECEDE, tw.win));
        if (E_EXPOSURE != k) {
            MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_start(to, 0, tw.win));
            MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, tw.win));
        }
        if (E_LOCK_ALL == k || E_ACCESS == k)
            MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw.win));
        if (E_ACCESS == k || E_EXPOSURE == k) MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_post(from, 0, tw.win));
        if (E_EXPOSURE == k) MPI_OK(MPI_Win_start(to, 0, tw.win));   /* access is independent of exposure */
        MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
        switch (k) {
        case E_LOCK: MPI_OK(MPI_Win_unlock(right, tw.win)); break;
        case E_LOCK_ALL: MPI_OK(MPI_Win_unlock_all(tw.win)); break;
        default:
            MPI_OK(MPI_Win_complete(tw.win));
            MPI_OK(MPI_Win_wait(tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t seen = read_own(&tw, SLOT_SEQ);
        CHECK(seen == value(left, 50 + k), "%s: %s epoch after refused synchronizations delivered %lld, expected %lld",
              fl, names[k], (long long) seen, (long long) value(left, 50 + k));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    prove_usable(&tw, 50, "synchronizations refused inside open epochs");
    test_win_free(&tw);
}

/* MPI_Win_free inside a lock epoch and inside a lock_all epoch: refused,
 * the handle stays valid, the epoch goes on, a later free works. */
static void free_in_lock_epoch(int flavor)
{
    test_win_t tw;
    const char *fl = flavor_names[flavor];
    MPI_Win saved;

    open_window(&tw, flavor, MPI_INFO_NULL);
    saved = tw.win;
    for (int k = 0; k < 2; ++k) {
        int64_t out = value(rank, 10 + k);
        if (0 == k) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw.win));
        } else {
            MPI_OK(MPI_Win_lock_all(0, tw.win));
        }
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_free(&tw.win));
        if (tw.win != saved) {
            /* the window is gone: nothing more can be checked on it */
            CHECK(tw.win == saved, "%s: MPI_Win_free in a %s epoch freed the window", fl,
                  k ? "lock_all" : "lock");
            free(tw.owned);
            free(tw.bases);
            return;
        }
        MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
        if (0 == k) {
            MPI_OK(MPI_Win_unlock(right, tw.win));
        } else {
            MPI_OK(MPI_Win_unlock_all(tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t seen = read_own(&tw, SLOT_SEQ);
        CHECK(seen == value(left, 10 + k), "%s: %s epoch after refused free delivered %lld, expected %lld", fl,
              k ? "lock_all" : "lock", (long long) seen, (long long) value(left, 10 + k));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    prove_usable(&tw, 10, "MPI_Win_free in a lock epoch");
    test_win_free(&tw);
    CHECK(MPI_WIN_NULL == tw.win, "%s: MPI_Win_free did not set the handle to MPI_WIN_NULL", fl);
}

/* MPI_Win_free inside a fence epoch an RMA call was made in, inside a PSCW
 * access epoch and inside an exposure epoch: refused on every rank (so
 * nobody waits in the free's collective part), the epoch then ends
 * normally and delivers its put. */
static void free_in_active_epochs(int flavor)
{
    test_win_t tw;
    const char *fl = flavor_names[flavor];
    static const char *const epochs[3] = { "used fence", "PSCW access", "exposure" };

    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_Group to = group_of(tw.win, right), from = group_of(tw.win, left);
    for (int k = 0; k < 3; ++k) {
        const MPI_Win saved = tw.win;
        int64_t out = value(rank, 20 + k);
        if (0 == k) {
            MPI_OK(MPI_Win_fence(0, tw.win));
            MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
        } else {
            MPI_OK(MPI_Win_post(from, 0, tw.win));
            if (1 == k) MPI_OK(MPI_Win_start(to, 0, tw.win));
        }
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_free(&tw.win));
        CHECK(tw.win == saved, "%s: MPI_Win_free in a %s epoch freed the window", fl, epochs[k]);
        if (tw.win != saved) {
            free(tw.owned);
            free(tw.bases);
            return;   /* the window is gone: nothing more can be checked on it */
        }
        if (0 == k) {
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
        } else {
            if (2 == k) MPI_OK(MPI_Win_start(to, 0, tw.win));
            MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
            MPI_OK(MPI_Win_complete(tw.win));
            MPI_OK(MPI_Win_wait(tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int64_t seen = read_own(&tw, SLOT_SEQ);
        CHECK(seen == value(left, 20 + k), "%s: %s epoch after refused free delivered %lld, expected %lld", fl,
              epochs[k], (long long) seen, (long long) value(left, 20 + k));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&to);
    MPI_Group_free(&from);
    prove_usable(&tw, 20, "MPI_Win_free in an active-target epoch");
    test_win_free(&tw);
}

/* A start or post group with a process that is not in the window: the
 * window is on half of the processes (even / odd ranks), the group is all
 * of MPI_COMM_WORLD.  MPI_ERR_GROUP, and PSCW within the window works
 * afterwards.  (One process: no process outside any window.) */
static void group_outside_window(int flavor)
{
    MPI_Comm half;
    MPI_Group world, mine;
    test_win_t tw;
    int hrank, hsize;
    const char *fl = flavor_names[flavor];

    if (size < 2) return;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    test_win_create(&tw, flavor, NSLOT * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, half);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_FAILS_WITH(MPI_ERR_GROUP, MPI_Win_post(world, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_GROUP, MPI_Win_start(world, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_GROUP, MPI_Win_start(world, MPI_MODE_NOCHECK, tw.win));
    /* the window is untouched: a PSCW epoch with its own group moves data */
    const int hright = (hrank + 1) % hsize, hleft = (hrank + hsize - 1) % hsize;
    int64_t out = value(rank, 30);
    MPI_OK(MPI_Win_get_group(tw.win, &mine));
    MPI_OK(MPI_Win_post(mine, 0, tw.win));
    MPI_OK(MPI_Win_start(mine, 0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, hright, test_disp(&tw, hright, SLOT_SEQ, sizeof(int64_t)), 1, MPI_INT64_T,
                   tw.win));
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    int wleft;
    MPI_Group_translate_ranks(mine, 1, &hleft, world, &wleft);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, hrank, 0, tw.win));
    const int64_t seen = ((volatile int64_t *) tw.mem)[SLOT_SEQ], want = value(wleft, 30);
    MPI_OK(MPI_Win_unlock(hrank, tw.win));
    CHECK(seen == want, "%s: PSCW after MPI_ERR_GROUP delivered %lld, expected %lld", fl, (long long) seen,
          (long long) want);
    MPI_Group_free(&mine);
    MPI_Group_free(&world);
    test_win_free(&tw);
    MPI_Comm_free(&half);
}

/* A fence(0) that closes the last epoch (not NOSUCCEED) and then free: the
 * unused fence epoch does not make the free erroneous. */
static void free_after_final_fence(int flavor)
{
    test_win_t tw;
    int64_t out = value(rank, 12);

    open_window(&tw, flavor, MPI_INFO_NULL);
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, disp(&tw, right, SLOT_SEQ), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    CHECK(((volatile int64_t *) tw.mem)[SLOT_SEQ] == value(left, 12), "%s: fence put lost",
          flavor_names[flavor]);
    test_win_free(&tw);
}

/* no_locks=true: lock and lock_all refused, active target works. */
static void lock_with_no_locks(int flavor)
{
    test_win_t tw;
    MPI_Info info;

    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    open_window(&tw, flavor, info);
    MPI_Info_free(&info);
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, MPI_MODE_NOCHECK, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(MPI_MODE_NOCHECK, tw.win));
    /* nothing was locked: no unlock is legal either */
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, tw.win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(tw.win));
    prove_usable(&tw, 13, "lock with no_locks=true");
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    leftleft = (left + size - 1) % size;

    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        rma_outside_epoch(flavor);
        rma_to_target_outside_epoch(flavor);
        unlock_without_lock(flavor);
        second_lock(flavor);
        locks_released_out_of_order(flavor);
        sync_inside_open_epochs(flavor);
        lock_in_used_fence_epoch(flavor);
        pscw_without_opening(flavor);
        flush_outside_passive(flavor);
        free_in_lock_epoch(flavor);
        free_in_active_epochs(flavor);
        group_outside_window(flavor);
        free_after_final_fence(flavor);
        lock_with_no_locks(flavor);
    }
    return test_finalize("epoch_errors");
}
