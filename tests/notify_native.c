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
 * Notified RMA by the native route (docs/notified-rma.md, "Native route"):
 * on an MPI_Win_allocate window in a lock_all epoch,
 *  - every rank MPIX_Put_notify's ROUNDS contiguous blocks to every rank
 *    (itself too) on its own counter, and MPIX_Accumulate_notify's +1 into
 *    one word of every rank on a shared counter; each target polls its
 *    counters and, at every count v it sees of origin o, finds o's first v
 *    blocks exact in its memory; at the end every counter is exact (none
 *    lost, none counted twice) and so is the accumulated word;
 *  - a passive target: rank 0 computes outside MPI for COMPUTE_S seconds
 *    while every other rank notified-puts its tag into a slot; rank 0 sees
 *    the tags arrive while it computes, and on the native route its first
 *    MPIX_Win_notify_get_value afterwards already counts every origin
 *    (no packet was sent, so none was left to serve).
 * The MPI_T route counters say how the operations went: with UCX over
 * shared memory only (--mode remote-sm) and osc_newrma_native_notify on,
 * every one native and no active message; over TCP, or with the variable
 * off, every one an active message; across (pretend) nodes, active
 * messages (a notified operation never takes the node route); on the
 * direct path, neither.
 * newrma-test: only-newrma np>=2 links-mpix
 */
#include "notify_common.h"
#include "native_routes.h"

#include <sched.h>
#include <unistd.h>

#define ROUNDS 40
#define BLOCK 5                 /* int64 words per block */
#define COMPUTE_S 0.5
#define FAST_S (COMPUTE_S / 2)   /* loose: an oversubscribed run still shows a target that is away */
#define W_ACC 0                 /* the accumulated word */
#define W_SLOT 1                /* the passive phase's slots, one per rank */

/* window words and counters, by the number of ranks */
static int w_blocks(int size) { return W_SLOT + size; }
static int c_acc(int size) { return size; }           /* counters 0..size-1: each origin's puts */
static int c_passive(int size) { return size + 1; }

static int64_t pattern(int origin, int target, int round, int i)
{
    return (int64_t) origin * 1000003 + (int64_t) target * 10007 + round * 101 + i + 1;
}

static int64_t tag(int origin) { return 7000 + origin; }

/* Origin o's first `seen` blocks are in my memory. */
static void check_blocks(const int64_t *mem, int origin, int rank, int size, MPI_Count seen)
{
    for (int k = 0; k < seen; ++k)
        for (int i = 0; i < BLOCK; ++i) {
            int64_t got = __atomic_load_n(&mem[w_blocks(size) + (origin * ROUNDS + k) * BLOCK + i], __ATOMIC_RELAXED);
            CHECK(got == pattern(origin, rank, k, i), "origin %d round %d word %d: %lld after %lld notifications",
                  origin, k, i, (long long) got, (long long) seen);
        }
}

/* Every origin's counter as it stands, each checked against its data;
 * true once every one is complete. */
static int poll_counters(MPI_Win win, const int64_t *mem, int rank, int size)
{
    int complete = 1;

    for (int o = 0; o < size; ++o) {
        MPI_Count seen = notify_counter(win, o);
        CHECK(seen >= 0 && seen <= ROUNDS, "counter of %d: %lld", o, (long long) seen);
        check_blocks(mem, o, rank, size, seen > ROUNDS ? ROUNDS : seen);
        complete = complete && ROUNDS == seen;
    }
    return complete;
}

static void producer_consumer(MPI_Win win, const int64_t *mem, int rank, int size)
{
    int64_t block[BLOCK], one = 1;
    MPI_Count acc;

    for (int k = 0; k < ROUNDS; ++k) {
        for (int t = 0; t < size; ++t) {
            for (int i = 0; i < BLOCK; ++i) {
                block[i] = pattern(rank, t, k, i);
            }
            MPI_OK(MPIX_Put_notify(block, BLOCK, MPI_INT64_T, t, w_blocks(size) + (rank * ROUNDS + k) * BLOCK,
                                   BLOCK, MPI_INT64_T, win, rank));
            MPI_OK(MPIX_Accumulate_notify(&one, 1, MPI_INT64_T, t, W_ACC, 1, MPI_INT64_T, MPI_SUM, win,
                                          c_acc(size)));
        }
        (void) poll_counters(win, mem, rank, size);
    }
    while (!poll_counters(win, mem, rank, size)) {
        sched_yield();
    }
    while ((acc = notify_counter(win, c_acc(size))) < (MPI_Count) size * ROUNDS) {
        sched_yield();
    }
    CHECK((MPI_Count) size * ROUNDS == acc, "accumulate counter %lld, expected %d", (long long) acc, size * ROUNDS);
    CHECK((int64_t) size * ROUNDS == __atomic_load_n(&mem[W_ACC], __ATOMIC_RELAXED), "accumulated %lld, expected %d",
          (long long) mem[W_ACC], size * ROUNDS);
}

/* Rank 0: compute for COMPUTE_S without MPI, noting when every tag was in. */
static double compute_and_watch(const int64_t *mem, int size)
{
    double t0 = test_now_s(), seen = -1.0, now;

    while ((now = test_now_s()) - t0 < COMPUTE_S) {
        int all = 1;
        for (int o = 1; o < size && all; ++o) {
            all = tag(o) == __atomic_load_n(&mem[W_SLOT + o], __ATOMIC_RELAXED);
        }
        if (all && seen < 0) {
            seen = now - t0;
        }
        test_compute_us(200);
        sched_yield();
    }
    return seen;
}

static void passive_target(MPI_Win win, const int64_t *mem, int rank, int size, int fast, int native)
{
    if (0 == rank) {
        double seen = compute_and_watch(mem, size);
        MPI_Count first = notify_counter(win, c_passive(size)), count = first;

        CHECK(!native || size - 1 == first, "native route: %lld notifications when back in MPI, expected %d",
              (long long) first, size - 1);
        while (count < size - 1) {
            count = notify_counter(win, c_passive(size));
        }
        CHECK(size - 1 == count, "passive counter %lld, expected %d", (long long) count, size - 1);
        for (int o = 1; o < size; ++o) {
            CHECK(tag(o) == mem[W_SLOT + o], "slot of %d: %lld", o, (long long) mem[W_SLOT + o]);
        }
        CHECK(!fast || (seen >= 0 && seen < FAST_S), "tags seen after %.3f s of %.1f s computing", seen, COMPUTE_S);
        printf("passive target: every tag in after %.1f ms, %lld notifications on its first look\n", seen * 1e3,
               (long long) first);
    } else {
        int64_t mine = tag(rank);
        double t0;

        usleep(50000);        /* rank 0 is computing by now */
        t0 = test_now_s();
        MPI_OK(MPIX_Put_notify(&mine, 1, MPI_INT64_T, 0, W_SLOT + rank, 1, MPI_INT64_T, win, c_passive(size)));
        t0 = test_now_s() - t0;
        CHECK(!fast || t0 < FAST_S, "notified put took %.3f s while the target computes", t0);
    }
}

static void check_routes(route_t route, int native_notify, route_counters_t *rc, int size)
{
    unsigned long long native_ops, am_ops, node_ops;
    unsigned long long ops = 2ULL * ROUNDS * (unsigned long long) size * (unsigned long long) size
                             + (unsigned long long) (size - 1);

    route_counters_total(rc, &native_ops, &am_ops, &node_ops);
    if (0 == test_rank) {
        printf("route counters: %llu native, %llu active messages, %llu by the node route (%llu notified operations)\n",
               native_ops, am_ops, node_ops, ops);
    }
    if (ROUTE_NATIVE == route && native_notify) {
        CHECK(ops == native_ops && 0 == am_ops && 0 == node_ops, "native route: expected %llu native only", ops);
    } else if (ROUTE_NATIVE == route || ROUTE_AM == route || ROUTE_NODES == route) {
        CHECK(0 == native_ops && ops == am_ops && 0 == node_ops, "expected %llu active messages only", ops);
    } else if (ROUTE_UNKNOWN == route) {
        CHECK(ops == native_ops + am_ops && 0 == node_ops, "expected %llu native or active messages", ops);
    } else {
        CHECK(0 == native_ops && 0 == am_ops && 0 == node_ops, "direct path: expected no route");
    }
}

int main(int argc, char **argv)
{
    int rank, size, path = -1;
    route_counters_t rc;
    int64_t *mem;
    MPI_Win win;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    route_t route = native_expected_route();
    int native_notify = test_cvar_int("osc_newrma_native_notify");
    int native = ROUTE_NATIVE == route && native_notify;

    mem = native_window(w_blocks(size) + size * ROUNDS * BLOCK, &win, &rc);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_OK(MPIX_Win_notify_attach(win, c_passive(size) + 1, MPI_INFO_NULL));
    MPI_OK(MPIX_Win_notify_path(win, &path));
    CHECK(path == test_notify_expected_path(win, FLAVOR_ALLOCATE), "path %d", path);
    MPI_OK(MPI_Win_lock_all(0, win));

    producer_consumer(win, mem, rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    passive_target(win, mem, rank, size, native || ROUTE_DIRECT == route, native);

    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_routes(route, native_notify, &rc, size);
    if (0 == rank) {
        printf("%s path, notified operations %s\n", notify_path_name(path),
               native ? "native" : ROUTE_DIRECT == route ? "by memory" : "as packets");
    }
    MPI_OK(MPIX_Win_notify_detach(win));
    MPI_OK(MPI_Win_free(&win));
    return test_finalize("notify_native");
}
