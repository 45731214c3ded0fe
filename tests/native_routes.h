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
 * What the native-route tests (native_passive.c, native_mixed.c,
 * notify_native.c) share: the route a run takes, a zeroed MPI_Win_allocate window of int64 words, and the MPI_T counters of
 * the routes operations took (osc_newrma_route_native_ops,
 * osc_newrma_route_am_ops, osc_newrma_route_node_ops) from a barrier on.  Include after common.h.
 */
#ifndef NEWRMA_TEST_NATIVE_ROUTES_H
#define NEWRMA_TEST_NATIVE_ROUTES_H

#include <stdlib.h>
#include <string.h>

typedef enum { ROUTE_DIRECT, ROUTE_NATIVE, ROUTE_AM, ROUTE_NODES, ROUTE_UNKNOWN } route_t;

/* The route this run's operations on an MPI_Win_allocate window over
 * MPI_COMM_WORLD take to rank 0: the direct path (no route), the native
 * route (UCX over shared memory only), active messages (UCX over TCP),
 * rank 0's node peers by the node route and the others by active messages
 * (a window spanning real or pretend nodes), or UCX's choice. */
static inline route_t native_expected_route(void)
{
    const char *tls = getenv("UCX_TLS");

    if (!test_am_path(FLAVOR_ALLOCATE)) {
        return ROUTE_DIRECT;
    }
    if (!test_cvar_int("osc_newrma_force_remote")
        && (test_world_spans_nodes() || test_cvar_int("osc_newrma_fifo_node_ranks") > 0)) {
        return ROUTE_NODES;
    }
    if (NULL == tls) {
        return ROUTE_UNKNOWN;
    }
    return NULL == strstr(tls, "tcp") ? ROUTE_NATIVE : ROUTE_AM;
}

typedef struct {
    test_pvar_t native, am, node;
    unsigned long long native_before, am_before, node_before;
} route_counters_t;

/* The window (its words zeroed under our own lock), the counters started,
 * then a barrier: nobody's operations come before everybody's zeroes. */
static inline int64_t *native_window(int words, MPI_Win *win, route_counters_t *rc)
{
    int rank;
    int64_t *base;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_OK(MPI_Win_allocate((MPI_Aint) (sizeof(int64_t) * (size_t) words), sizeof(int64_t), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, *win));
    memset(base, 0, sizeof(int64_t) * (size_t) words);
    MPI_OK(MPI_Win_unlock(rank, *win));
    test_pvar_open(&rc->native, "osc_newrma_route_native_ops");
    test_pvar_open(&rc->am, "osc_newrma_route_am_ops");
    test_pvar_open(&rc->node, "osc_newrma_route_node_ops");
    rc->native_before = test_pvar_read(&rc->native);
    rc->am_before = test_pvar_read(&rc->am);
    rc->node_before = test_pvar_read(&rc->node);
    MPI_Barrier(MPI_COMM_WORLD);
    return base;
}

/* Collective: every rank's operations since native_window, per route. */
static inline void route_counters_total(route_counters_t *rc, unsigned long long *native_ops,
                                        unsigned long long *am_ops, unsigned long long *node_ops)
{
    *native_ops = test_pvar_close_total(&rc->native, rc->native_before);
    *am_ops = test_pvar_close_total(&rc->am, rc->am_before);
    *node_ops = test_pvar_close_total(&rc->node, rc->node_before);
}

#endif /* NEWRMA_TEST_NATIVE_ROUTES_H */
