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
 * Passive-target locks exclude node-local and remote origins alike in an
 * MPI_Win_allocate window spanning nodes (docs/mixed-windows.md, "the node
 * lock"): a node-local origin takes its target's node lock itself, the
 * target's packet handler takes it for the remote origins (and for the
 * target itself).  For every target T and every pair of consecutive ranks
 * (A, B) -- with pretend nodes of 2 (osc_newrma_fifo_node_ranks, as the
 * harness runs it) or the test nodes, the pairs are node-local and remote
 * origins of T in every order, T itself among them -- A locks T, makes
 * sure it holds the lock (an operation and a flush), tells B to lock T,
 * and keeps the lock for a while before it leaves:
 *  - A exclusive, B exclusive or shared: A writes marker 1, tells B, waits,
 *    checks nobody wrote meanwhile, writes marker 2 and unlocks; B's first
 *    read must see marker 2 (it could not get in before A left);
 *  - A shared, B exclusive: A reads, tells B, waits, reads again: nobody
 *    wrote; B then writes its marker;
 *  - A shared, B shared: A waits for B's message that B has read under its
 *    shared lock before A unlocks (shared holders do not exclude each
 *    other: a watchdog turns a wait into a failure).
 * The MPI_T counter osc_newrma_route_node_locks says the node lock was
 * used: exactly one per epoch of an origin on T's node other than T (none
 * without the node lock: windows all on one node, every peer remote, no
 * peer on the node, osc_newrma_node_lock off: tests/node_lock_off.c runs
 * the same with it off, every lock then the target's handler's).
 * newrma-test: only-newrma np>=2
 */
#include "common.h"

#ifndef NODE_LOCK_NAME
#define NODE_LOCK_NAME "node_lock"
#endif

#include <signal.h>
#include <unistd.h>

#define W_MARK 0
#define HOLD_US 10000        /* how long A keeps the lock after telling B */
#define WATCHDOG_S 60
#define TAG_GO 7
#define TAG_READ 8

enum { EX = MPI_LOCK_EXCLUSIVE, SH = MPI_LOCK_SHARED };

static int rank, size;
static int *node_of;
static unsigned long long node_locks_expected;

static void watchdog(int sig)
{
    static const char msg[] = "node_lock: check failed: watchdog: a lock wait did not end\n";
    (void) sig;
    (void) !write(2, msg, sizeof(msg) - 1);
    _exit(3);
}

/* Each rank's node (tests/common.h); returns whether the window takes
 * the active-message path (pretend nodes, or real nodes spanned), where
 * the node route and its lock live. */
static int find_nodes(void)
{
    int pretend = test_cvar_int("osc_newrma_fifo_node_ranks"), spans = 0;
    node_of = test_node_of(pretend);
    for (int r = 0; r < size; ++r) {
        spans = spans || node_of[r] / size != node_of[0] / size;      /* real nodes */
    }
    return spans || pretend > 0;
}

static int64_t marker(int origin, int which) { return 100 * (int64_t) (origin + 1) + which; }

static int64_t get_mark(MPI_Win win, int t)
{
    int64_t got = -1;
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, t, W_MARK, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(t, win));
    return got;
}

static void put_mark(MPI_Win win, int t, int64_t v)
{
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, W_MARK, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(t, win));
}

/* A's epoch: hold T's lock while B tries to get in. */
static void first(MPI_Win win, int t, int a_type, int b, int b_type)
{
    int64_t seen, dummy = 0;
    MPI_OK(MPI_Win_lock(a_type, t, 0, win));
    if (EX == a_type) {
        put_mark(win, t, marker(rank, 1));
        seen = marker(rank, 1);
    } else {
        seen = get_mark(win, t);
    }
    MPI_Send(&dummy, 1, MPI_INT64_T, b, TAG_GO, MPI_COMM_WORLD);
    if (SH == a_type && SH == b_type) {
        MPI_Recv(&dummy, 1, MPI_INT64_T, b, TAG_READ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        usleep(HOLD_US);
    }
    int64_t again = get_mark(win, t);
    CHECK(again == seen, "target %d: %s holder %d saw %lld change to %lld in its epoch (B %d %s)", t,
          EX == a_type ? "exclusive" : "shared", rank, (long long) seen, (long long) again, b,
          EX == b_type ? "exclusive" : "shared");
    if (EX == a_type) {
        put_mark(win, t, marker(rank, 2));
    }
    MPI_OK(MPI_Win_unlock(t, win));
}

/* B's epoch: after A holds the lock. */
static void second(MPI_Win win, int t, int b_type, int a, int a_type)
{
    int64_t dummy = 0, got;
    MPI_Recv(&dummy, 1, MPI_INT64_T, a, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_OK(MPI_Win_lock(b_type, t, 0, win));
    got = get_mark(win, t);
    if (EX == a_type) {
        CHECK(got == marker(a, 2), "target %d: %s locker %d read %lld, expected exclusive holder %d's last "
              "marker %lld (it got in before %d left)", t, EX == b_type ? "exclusive" : "shared", rank,
              (long long) got, a, (long long) marker(a, 2), a);
    }
    if (SH == a_type && SH == b_type) {
        MPI_Send(&dummy, 1, MPI_INT64_T, a, TAG_READ, MPI_COMM_WORLD);
    }
    if (EX == b_type) {
        put_mark(win, t, marker(rank, 3));
    }
    MPI_OK(MPI_Win_unlock(t, win));
}

static void count_epoch(int origin, int t, int node_lock)
{
    if (node_lock && origin != t && node_of[origin] == node_of[t]) {
        node_locks_expected += origin == rank;
    }
}

int main(int argc, char **argv)
{
    static const int modes[4][2] = { { EX, EX }, { EX, SH }, { SH, EX }, { SH, SH } };
    int provided, am_path, node_lock;
    unsigned long long before, total;
    test_pvar_t node_locks;
    int64_t *base;
    MPI_Win win;

    test_init(&argc, &argv);
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = test_rank;
    am_path = find_nodes();
    node_lock = test_cvar_int("osc_newrma_node_lock") && !test_cvar_int("osc_newrma_force_remote");
    test_pvar_open(&node_locks, "osc_newrma_route_node_locks");
    CHECK(node_locks.ok, "no MPI_T counter osc_newrma_route_node_locks");
    before = test_pvar_read(&node_locks);

    MPI_OK(MPI_Win_allocate((MPI_Aint) sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    *base = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < size; ++t) {
        for (int m = 0; m < 4; ++m) {
            for (int a = 0; a < size; ++a) {
                int b = (a + 1) % size;
                if (rank == a) first(win, t, modes[m][0], b, modes[m][1]);
                if (rank == b) second(win, t, modes[m][1], a, modes[m][0]);
                count_epoch(a, t, am_path && node_lock);
                count_epoch(b, t, am_path && node_lock);
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    MPI_OK(MPI_Win_free(&win));
    alarm(0);

    total = test_pvar_close_total(&node_locks, before);
    MPI_Allreduce(MPI_IN_PLACE, &node_locks_expected, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == node_locks_expected, "%llu node locks taken, expected %llu", total, node_locks_expected);
    MPI_T_finalize();
    free(node_of);
    return test_finalize(NODE_LOCK_NAME);
}
