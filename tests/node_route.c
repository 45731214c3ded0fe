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
 * The node route of an MPI_Win_allocate window spanning nodes
 * (docs/mixed-windows.md): puts, gets and the accumulate family to peers
 * on this node are loads and stores into the node's segment; the other
 * peers take active messages; one synchronization covers both.  Nodes are
 * pretend nodes of 2 consecutive ranks of each real node
 * (osc_newrma_fifo_node_ranks; in the nodes2x2 mode the real nodes, in
 * nodes2x1 single ranks), so the window spans nodes at any rank count.  The MPI_T counters
 * osc_newrma_route_node_ops and osc_newrma_route_am_ops say which route
 * every operation took: exactly one node-route operation per operation to
 * a peer of our node, one remote-route operation per operation to the
 * others (with osc_newrma_force_remote: every peer remote, no node route at
 * all).  A remote-route operation is an active message
 * (osc_newrma_route_am_ops) or, in a window of the native route
 * (osc_newrma_native_rma over UCX shared memory, e.g. the remote-sm mode),
 * a UCX RMA or atomic (osc_newrma_route_native_ops): each counts on one.
 *  - lock_all: every rank puts its tag into its own slot at every target,
 *    flushes, then (after a barrier) gets every slot of every target;
 *  - exclusive locks: every rank increments a counter at every target K
 *    times with get, flush, put under MPI_LOCK_EXCLUSIVE -- node-route and
 *    active-message origins under the same lock: no increment is lost;
 *  - fence: puts into the own slot of every target, read back by each
 *    target with loads after the closing fence;
 *  - PSCW over the whole group: the same, with a get back;
 *  - accumulates, fetch_and_op and compare_and_swap increments on the same
 *    words of every target from everybody (node-local ones by loads and
 *    stores under the target's stripes, the others applied from packets
 *    under the same stripes): exact sums and counts.
 * newrma-test: only-newrma np>=2 mca=osc_newrma_fifo_node_ranks:2
 */
#include "common.h"

#define PRETEND 2            /* osc_newrma_fifo_node_ranks */
#define K 20                 /* increments per rank and target */
#define W_CNT 0              /* the counter */
#define W_ACC 1              /* the accumulate word */
#define W_SLOT 2             /* first slot, one per rank */

static int rank, size, force_remote;
static int *node_of;         /* each rank's pretend node */
static test_pvar_t node_ops, am_ops, native_ops;
static unsigned long long node_before, am_before, native_before;

static int node_local(int target) { return !force_remote && node_of[target] == node_of[rank]; }

static int64_t tag(int origin, int round) { return 1000 * (int64_t) (origin + 1) + round; }

static void counters_start(void)
{
    node_before = test_pvar_read(&node_ops);
    am_before = test_pvar_read(&am_ops);
    native_before = test_pvar_read(&native_ops);
}

/* The routes taken since counters_start: `per_target` operations to each
 * target, by the node route to our node's peers, by the remote route
 * (active messages or native) to the others; plus `extra_remote` more. */
static void counters_check(const char *phase, int per_target, int extra_remote)
{
    unsigned long long want_node = 0, want_remote = (unsigned long long) extra_remote;
    for (int t = 0; t < size; ++t) {
        if (node_local(t)) want_node += (unsigned long long) per_target;
        else want_remote += (unsigned long long) per_target;
    }
    unsigned long long got_node = test_pvar_read(&node_ops) - node_before;
    unsigned long long got_am = test_pvar_read(&am_ops) - am_before;
    unsigned long long got_native = test_pvar_read(&native_ops) - native_before;
    CHECK(got_node == want_node, "%s: %llu operations by the node route, expected %llu", phase, got_node, want_node);
    CHECK(got_am + got_native == want_remote, "%s: %llu operations by active messages and %llu native ones, "
          "expected %llu in all", phase, got_am, got_native, want_remote);
}

static void lock_all_phase(MPI_Win win)
{
    int64_t *got = malloc(sizeof(int64_t) * (size_t) size);
    counters_start();
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; ++t) {
        int64_t v = tag(rank, 1);
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, W_SLOT + rank, 1, MPI_INT64_T, win));
    }
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; ++t) {
        for (int o = 0; o < size; ++o) got[o] = -1;
        MPI_OK(MPI_Get(got, size, MPI_INT64_T, t, W_SLOT, size, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(t, win));
        for (int o = 0; o < size; ++o)
            CHECK(got[o] == tag(o, 1), "lock_all: target %d slot of %d is %lld, expected %lld", t, o,
                  (long long) got[o], (long long) tag(o, 1));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    /* (exact: no exclusive lock meanwhile, so no tried lock is refused --
     * a refused one sends its put or get as an active message) */
    counters_check("lock_all", 2, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    free(got);
}

static void exclusive_phase(MPI_Win win, const int64_t *base)
{
    counters_start();
    for (int k = 0; k < K; ++k) {
        for (int i = 0; i < size; ++i) {
            int t = (rank + i) % size;
            int64_t c = -1;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Get(&c, 1, MPI_INT64_T, t, W_CNT, 1, MPI_INT64_T, win));
            MPI_OK(MPI_Win_flush(t, win));
            c++;
            MPI_OK(MPI_Put(&c, 1, MPI_INT64_T, t, W_CNT, 1, MPI_INT64_T, win));
            MPI_OK(MPI_Win_unlock(t, win));
        }
    }
    counters_check("exclusive locks", 2 * K, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(base[W_CNT] == (int64_t) K * size, "exclusive locks: counter %lld, expected %lld (increments lost)",
          (long long) base[W_CNT], (long long) K * size);
    MPI_OK(MPI_Win_unlock(rank, win));
}

static void fence_phase(MPI_Win win, const int64_t *base)
{
    counters_start();
    MPI_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; ++t) {
        int64_t v = tag(rank, 2);
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, W_SLOT + rank, 1, MPI_INT64_T, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; ++o)
        CHECK(base[W_SLOT + o] == tag(o, 2), "fence: slot of %d is %lld here, expected %lld", o,
              (long long) base[W_SLOT + o], (long long) tag(o, 2));
    MPI_OK(MPI_Win_fence(0, win));
    counters_check("fence", 1, 0);
}

static void pscw_phase(MPI_Win win, const int64_t *base)
{
    MPI_Group world;
    int64_t *got = malloc(sizeof(int64_t) * (size_t) size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    counters_start();
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    for (int t = 0; t < size; ++t) {
        int64_t v = tag(rank, 3);
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, W_SLOT + rank, 1, MPI_INT64_T, win));
    }
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    for (int o = 0; o < size; ++o)
        CHECK(base[W_SLOT + o] == tag(o, 3), "PSCW: slot of %d is %lld here, expected %lld", o,
              (long long) base[W_SLOT + o], (long long) tag(o, 3));
    MPI_Barrier(MPI_COMM_WORLD);     /* every target has read its slots */
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    for (int t = 0; t < size; ++t) {
        got[t] = -1;
        MPI_OK(MPI_Get(&got[t], 1, MPI_INT64_T, t, W_SLOT + (rank + 1) % size, 1, MPI_INT64_T, win));
    }
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    for (int t = 0; t < size; ++t)
        CHECK(got[t] == tag((rank + 1) % size, 3), "PSCW: got %lld from target %d, expected %lld",
              (long long) got[t], t, (long long) tag((rank + 1) % size, 3));
    counters_check("PSCW", 2, 0);
    MPI_Group_free(&world);
    free(got);
}

/* Accumulates, fetch_and_ops and compare_and_swap increments on the same
 * words of every target from every rank: by loads and stores from the
 * target's node, by packets from the others, all atomic with each other. */
static void accumulate_phase(MPI_Win win, const int64_t *base)
{
    int64_t expect_acc = 0;
    counters_start();
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; ++k) {
        for (int t = 0; t < size; ++t) {
            int64_t one = rank + 1, old = -1;
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, W_ACC, 1, MPI_INT64_T, MPI_SUM, win));
            MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, W_ACC, MPI_SUM, win));
            MPI_OK(MPI_Win_flush(t, win));
            CHECK(old >= 0, "fetch_and_op: old value %lld at target %d", (long long) old, t);
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    /* (exact: no lock is refused here and nothing is in flight to a node
     * peer when the next operation to it starts) */
    counters_check("accumulate and fetch_and_op", 2 * K, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; ++k) {
        for (int t = 0; t < size; ++t) {
            int64_t seen = 0, old = -1;
            MPI_OK(MPI_Get(&seen, 1, MPI_INT64_T, t, W_CNT, 1, MPI_INT64_T, win));
            MPI_OK(MPI_Win_flush(t, win));
            for (;;) {         /* a compare-and-swap increment */
                int64_t next = seen + 1;
                MPI_OK(MPI_Compare_and_swap(&next, &seen, &old, MPI_INT64_T, t, W_CNT, win));
                MPI_OK(MPI_Win_flush(t, win));
                if (old == seen) break;
                seen = old;
            }
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int o = 0; o < size; ++o) expect_acc += 2 * K * (o + 1);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(base[W_ACC] == expect_acc, "accumulate and fetch_and_op: %lld here, expected %lld", (long long) base[W_ACC],
          (long long) expect_acc);
    CHECK(base[W_CNT] == 2LL * K * size, "compare_and_swap: counter %lld, expected %lld (the exclusive phase's %d "
          "and %d increments)", (long long) base[W_CNT], 2LL * K * size, K * size, K * size);
    MPI_OK(MPI_Win_unlock(rank, win));
}

int main(int argc, char **argv)
{
    int provided;
    int64_t *base;
    MPI_Win win;

    test_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    force_remote = test_cvar_int("osc_newrma_force_remote");
    node_of = test_node_of(PRETEND);
    CHECK(PRETEND == test_cvar_int("osc_newrma_fifo_node_ranks"), "test run without osc_newrma_fifo_node_ranks=%d",
          PRETEND);
    test_pvar_open(&node_ops, "osc_newrma_route_node_ops");
    test_pvar_open(&am_ops, "osc_newrma_route_am_ops");
    test_pvar_open(&native_ops, "osc_newrma_route_native_ops");
    CHECK(node_ops.ok && am_ops.ok && native_ops.ok,
          "no MPI_T counters osc_newrma_route_node_ops / _am_ops / _native_ops");

    MPI_OK(MPI_Win_allocate((MPI_Aint) sizeof(int64_t) * (W_SLOT + size), sizeof(int64_t), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < W_SLOT + size; ++i) base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    lock_all_phase(win);
    exclusive_phase(win, base);
    fence_phase(win, base);
    pscw_phase(win, base);
    accumulate_phase(win, base);
    MPI_OK(MPI_Win_free(&win));

    test_pvar_close(&node_ops);
    test_pvar_close(&am_ops);
    test_pvar_close(&native_ops);
    MPI_T_finalize();
    free(node_of);
    return test_finalize("node_route");
}
