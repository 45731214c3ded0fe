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
 * A truly passive target (docs/mixed-windows.md, "Native RMA where UCX has
 * it"): rank 0 computes outside MPI for COMPUTE_S seconds (yielding the CPU,
 * so that the origins run on an oversubscribed machine), while every other
 * rank does, on an MPI_Win_allocate window,
 *  - MPI_Win_lock(EXCLUSIVE, 0) + an 8-byte MPI_Put of its tag into its slot
 *    + MPI_Win_unlock, then
 *  - MPI_Win_lock(SHARED, 0) + MPI_Fetch_and_op(MPI_SUM, 1) on a counter
 *    + MPI_Win_unlock,
 * timing both.  Rank 0 watches its slots with loads while it computes and
 * notes when every tag was there; afterwards it checks the values under a
 * lock of its own: each tag exact, the counter the number of origins, the
 * fetched old values distinct and 0..origins-1.
 *
 * Which route the operations take, and so whether they must be fast:
 *  - osc_newrma_force_remote over UCX shared memory (UCX_TLS without tcp):
 *    the native route, counted by osc_newrma_route_native_ops (exactly two
 *    per origin, no active message): fast, and the tags arrive while rank 0
 *    computes;
 *  - osc_newrma_force_remote over TCP: active messages (no native
 *    operation, two active messages per origin), served once rank 0 is
 *    back in MPI: only the values are checked;
 *  - a window spanning (real or pretend) nodes: rank 0's node peers by the
 *    node route (osc_newrma_route_node_ops), the others by active messages;
 *    only the values and the counts are checked;
 *  - one node without force_remote: the direct path, passive too: fast.
 * "Fast" is below a quarter of the compute time, from the origin's own
 * clock and from rank 0's view of its memory.
 *
 * newrma-test: only-newrma np>=2
 */
#include "common.h"
#include "native_routes.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

#define COMPUTE_S 2.0
#define FAST_S (COMPUTE_S / 4)
#define W_COUNTER 0
#define W_SLOT 1              /* first slot, one per rank */

static int64_t tag(int origin) { return 1000 + origin; }

/* Rank 0: compute for COMPUTE_S, noting when every tag had arrived. */
static double compute_and_watch(volatile int64_t *base, int size)
{
    double t0 = test_now_s(), seen = -1.0, now;

    while ((now = test_now_s()) - t0 < COMPUTE_S) {
        int all = 1;
        for (int o = 1; o < size && all; ++o) {
            all = tag(o) == base[W_SLOT + o];
        }
        if (all && seen < 0) {
            seen = now - t0;
        }
        test_compute_us(200);
        sched_yield();
    }
    return seen;
}

/* An origin: the two epochs, timed. */
static void origin_epochs(MPI_Win win, int rank, double *put_s, double *fop_s, int64_t *old)
{
    int64_t mine = tag(rank), one = 1;
    double t0;

    usleep(200000);          /* rank 0 is computing by now */
    t0 = test_now_s();
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_OK(MPI_Put(&mine, 1, MPI_INT64_T, 0, W_SLOT + rank, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(0, win));
    *put_s = test_now_s() - t0;
    t0 = test_now_s();
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Fetch_and_op(&one, old, MPI_INT64_T, 0, W_COUNTER, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(0, win));
    *fop_s = test_now_s() - t0;
}

static void check_target(MPI_Win win, const int64_t *base, int size)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK(size - 1 == base[W_COUNTER], "counter %lld, expected %d", (long long) base[W_COUNTER], size - 1);
    for (int o = 1; o < size; ++o) {
        CHECK(tag(o) == base[W_SLOT + o], "slot of %d: %lld, expected %lld", o, (long long) base[W_SLOT + o],
              (long long) tag(o));
    }
    MPI_OK(MPI_Win_unlock(0, win));
}

static void check_olds(int64_t old, int rank, int size)
{
    int64_t *olds = malloc(sizeof(int64_t) * (size_t) size);
    MPI_Gather(&old, 1, MPI_INT64_T, olds, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        qsort(olds + 1, (size_t) (size - 1), sizeof(int64_t), test_cmp_int64);
        for (int o = 1; o < size; ++o) {
            CHECK(o - 1 == olds[o], "fetched values not 0..%d: %lld at %d", size - 2, (long long) olds[o], o);
        }
    }
    free(olds);
}

static void check_routes(route_t route, route_counters_t *rc, int size)
{
    unsigned long long native_ops, am_ops, node_ops, ops = 2ULL * (unsigned long long) (size - 1);

    route_counters_total(rc, &native_ops, &am_ops, &node_ops);

    if (ROUTE_NATIVE == route) {
        CHECK(ops == native_ops && 0 == am_ops, "native route: %llu native, %llu active messages, expected %llu, 0",
              native_ops, am_ops, ops);
    } else if (ROUTE_AM == route) {
        CHECK(0 == native_ops && ops == am_ops, "active messages: %llu native, %llu active messages, expected 0, %llu",
              native_ops, am_ops, ops);
    } else if (ROUTE_NODES == route) {
        CHECK(0 == native_ops && ops == am_ops + node_ops,
              "across nodes: %llu native, %llu active messages + %llu by the node route, expected 0, %llu",
              native_ops, am_ops, node_ops, ops);
    } else if (ROUTE_UNKNOWN == route) {
        CHECK(ops == native_ops + am_ops, "%llu native + %llu active messages, expected %llu", native_ops, am_ops, ops);
    } else {
        CHECK(0 == native_ops && 0 == am_ops, "direct path: %llu native, %llu active messages", native_ops, am_ops);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    int64_t *base, old = -1;
    double put_s = 0, fop_s = 0, seen = 0;
    route_counters_t rc;
    MPI_Win win;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    route_t route = native_expected_route();
    int fast = ROUTE_DIRECT == route || ROUTE_NATIVE == route;

    base = native_window(W_SLOT + size, &win, &rc);

    if (0 == rank) {
        seen = compute_and_watch(base, size);
    } else {
        origin_epochs(win, rank, &put_s, &fop_s, &old);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        check_target(win, base, size);
        CHECK(!fast || (seen >= 0 && seen < FAST_S), "tags seen by rank 0 after %.3f s of %.1f s computing",
              seen, COMPUTE_S);
    } else {
        CHECK(!fast || (put_s < FAST_S && fop_s < FAST_S),
              "lock+put+unlock %.3f s, lock+fetch_and_op+unlock %.3f s while the target computes %.1f s",
              put_s, fop_s, COMPUTE_S);
    }
    if (1 == rank) {
        printf("route %s: lock+put+unlock %.1f us, lock+fetch_and_op+unlock %.1f us\n",
               ROUTE_NATIVE == route ? "native" : ROUTE_AM == route ? "am" : ROUTE_NODES == route ? "node and am"
               : ROUTE_DIRECT == route ? "direct" : "ucx's choice",
               put_s * 1e6, fop_s * 1e6);
    }
    check_olds(old, rank, size);
    check_routes(route, &rc, size);
    MPI_OK(MPI_Win_free(&win));
    return test_finalize("native_passive");
}
