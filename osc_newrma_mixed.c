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
 * osc/newrma: the per-target table of a mixed window (docs/mixed-windows.md,
 * "Routes and tables").
 *
 * An MPI_Win_allocate window spanning nodes with several of its processes
 * on a node has the active-message table, whose every operation asks the
 * node route first (osc_newrma_am_ops.c: by_node_route).  That costs each
 * call to a node peer the am table's entry work -- the call record, the
 * peer's binary search over the node, the admission's calls.  The mixed
 * table instead dispatches each RMA call and flush on module->routes[target],
 * filled once at creation: node peers' calls go to the functions below,
 * the others' to the am table.
 *
 * The node functions only skip work, never a rule: they act alone only on
 * an *open* peer (its access granted and nothing of ours to it queued or
 * travelling, osc_newrma_node_route.h), which is exactly where the am
 * table's node route admits an operation by one flag test; on a peer not
 * open (first access of an epoch, a lock to wait for, packets in flight),
 * or an operation the node route's short form does not cover, they fall
 * into the am table's entry, which admits it, opens the peer or sends a
 * packet.  The epoch's legality is checked as on every path
 * (osc_newrma_epoch_access); a flush keeps the node route's polling pace.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "ompi/datatype/ompi_datatype.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_am.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_epoch.h"
#include "osc_newrma_node_route.h"
#include "osc_newrma_ops.h"

/* Where a target's calls go: the node route's functions (node_index: the
 * target's place in the node route) or the am table. */
typedef struct osc_newrma_route_t {
    const ompi_osc_base_module_t *ops;
    int node_index;
} osc_newrma_route_t;

static const ompi_osc_base_module_t *const am = &ompi_osc_newrma_am_table;

static const osc_newrma_route_t *route_of(struct ompi_win_t *win, int target)
{
    return &osc_newrma_module(win)->routes[target];
}

/* ------------------------------------------------------------------ */
/* the node route's functions                                          */
/* ------------------------------------------------------------------ */

static const osc_newrma_node_peer_t *node_peer(const ompi_osc_newrma_module_t *module, int target)
{
    return &module->am_node->peers[module->routes[target].node_index];
}

static bool peer_open(const ompi_osc_newrma_module_t *module, const osc_newrma_node_peer_t *peer)
{
    return OPAL_LIKELY(osc_newrma_node_route_is_open(module->am_node, peer));
}

/* The target's bytes at `disp` (tl: their layout) in `peer`'s window: the
 * range check (the target's window, not ours), and where they start in
 * its block (*offset) and in our mapping (*addr). */
static int peer_addr(const ompi_osc_newrma_module_t *module, const osc_newrma_node_peer_t *peer, ptrdiff_t disp,
                     const osc_newrma_layout_t *tl, ptrdiff_t *offset, char **addr)
{
    int ret = osc_newrma_window_offset(disp, peer->disp_unit, peer->size, tl, offset);

    *addr = module->am_node->base + peer->offset + *offset;
    return ret;
}

/* Put (write) or get to an open node peer: a load/store, complete when it
 * returns, as the node route does it behind the am table. */
static int node_move(struct ompi_win_t *win, bool write, void *origin_addr, int origin_count,
                     struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp, int target_count,
                     struct ompi_datatype_t *target_dt)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    const osc_newrma_node_peer_t *peer = node_peer(module, target);
    osc_newrma_layout_t ol = { 0 }, tl = { 0 };
    ptrdiff_t offset = 0;
    char *taddr = NULL;
    int ret;

    if (!peer_open(module, peer)) {
        return write ? am->osc_put(origin_addr, origin_count, origin_dt, target, target_disp, target_count,
                                   target_dt, win)
                     : am->osc_get(origin_addr, origin_count, origin_dt, target, target_disp, target_count,
                                   target_dt, win);
    }
    NEWRMA_TRACE_OP(module, write ? "put" : "get", target, target_disp, target_count, target_dt);
    ret = osc_newrma_op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);
    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = peer_addr(module, peer, target_disp, &tl, &offset, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    osc_newrma_node_route_count();
    return write ? osc_newrma_local_copy(taddr, target_count, target_dt, &tl, origin_addr, origin_count, origin_dt, &ol)
                 : osc_newrma_local_copy(origin_addr, origin_count, origin_dt, &ol, taddr, target_count, target_dt, &tl);
}

static int node_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return node_move(win, true, (void *) origin_addr, origin_count, origin_dt, target, target_disp, target_count,
                     target_dt);
}

static int node_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return node_move(win, false, origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt);
}

/* The accumulate family's simple case (osc_newrma_acc_simple: element
 * arrays of one predefined type) to an open node peer, combined under the
 * target's stripes as the node route combines it behind the am table (open
 * means nothing of ours to it is in flight, so it overtakes no earlier
 * accumulate).  False: the caller's am entry takes the call. */
static bool node_acc_simple(struct ompi_win_t *win, const void *origin_addr, int origin_count,
                            struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                            struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp, int target_count,
                            struct ompi_datatype_t *target_dt, struct ompi_op_t *op, int *ret)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    const osc_newrma_node_peer_t *peer = node_peer(module, target);
    osc_newrma_layout_t tl = { .contiguous = true };
    unsigned int first, count;
    ptrdiff_t offset = 0;
    char *taddr = NULL;
    size_t esize;

    if (!peer_open(module, peer)
        || !osc_newrma_acc_simple(origin_dt, origin_count, result_dt, result_count, target_count, target_dt, op)) {
        return false;
    }
    NEWRMA_TRACE_OP(module, NULL == result_dt ? "accumulate" : "get_accumulate", target, target_disp,
                    target_count, target_dt);
    ompi_datatype_type_size(target_dt, &esize);
    tl.bytes = tl.span = esize * (size_t) target_count;
    *ret = osc_newrma_epoch_access(module, target);
    if (OPAL_LIKELY(OMPI_SUCCESS == *ret)) {
        *ret = peer_addr(module, peer, target_disp, &tl, &offset, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != *ret)) {
        return true;
    }
    osc_newrma_node_route_count();
    osc_newrma_node_route_acc_lock(module->am_node, peer, module->acc_shift, (uint64_t) offset, tl.bytes, &first,
                                   &count);
    osc_newrma_acc_combine_simple(op, target_dt, taddr, origin_addr, result_addr, target_count);
    osc_newrma_node_route_acc_unlock(module->am_node, peer, first, count);
    return true;
}

static int node_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                           ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                           struct ompi_op_t *op, struct ompi_win_t *win)
{
    int ret;

    if (node_acc_simple(win, origin_addr, origin_count, origin_dt, NULL, 0, NULL, target, target_disp, target_count,
                        target_dt, op, &ret)) {
        return ret;
    }
    return am->osc_accumulate(origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt,
                              op, win);
}

static int node_get_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                               void *result_addr, int result_count, struct ompi_datatype_t *result_dt, int target,
                               ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                               struct ompi_op_t *op, struct ompi_win_t *win)
{
    int ret;

    if (node_acc_simple(win, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                        target_disp, target_count, target_dt, op, &ret)) {
        return ret;
    }
    return am->osc_get_accumulate(origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                                  target_disp, target_count, target_dt, op, win);
}

static int node_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt, int target,
                             ptrdiff_t target_disp, struct ompi_op_t *op, struct ompi_win_t *win)
{
    int ret;

    if (!osc_newrma_fop_op_ok(op, dt)) {
        return MPI_ERR_OP;
    }
    if (node_acc_simple(win, origin_addr, 1, dt, result_addr, 1, dt, target, target_disp, 1, dt, op, &ret)) {
        return ret;
    }
    return am->osc_fetch_and_op(origin_addr, result_addr, dt, target, target_disp, op, win);
}

static int node_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                 struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                 struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    const osc_newrma_node_peer_t *peer = node_peer(module, target);
    osc_newrma_layout_t tl;
    ptrdiff_t offset = 0;
    char *taddr = NULL;
    int ret;

    if (!peer_open(module, peer)) {
        return am->osc_compare_and_swap(origin_addr, compare_addr, result_addr, dt, target, target_disp, win);
    }
    NEWRMA_TRACE_OP(module, "compare_and_swap", target, target_disp, 1, dt);
    ret = osc_newrma_epoch_access(module, target);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    if (!ompi_datatype_is_predefined(dt) || !osc_newrma_cas_type_ok(dt)) {
        return MPI_ERR_TYPE;
    }
    osc_newrma_datatype_layout(dt, 1, &tl);
    ret = peer_addr(module, peer, target_disp, &tl, &offset, &taddr);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_node_route_count();
    osc_newrma_node_route_cas(module->am_node, peer, module->acc_shift, (uint64_t) (offset + tl.gap), tl.bytes,
                              origin_addr, compare_addr, result_addr);
    return OMPI_SUCCESS;
}

/* A fence for an open peer (at the node route's polling pace), else the
 * am table's flush. */
static int node_flush(int target, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret;

    if (osc_newrma_node_route_flush_peer(module, node_peer(module, target), target, &ret)) {
        return ret;
    }
    return osc_newrma_am_flush_packets(target, win);
}

static const ompi_osc_base_module_t node_route_table = {
    .osc_put = node_put,
    .osc_get = node_get,
    .osc_accumulate = node_accumulate,
    .osc_get_accumulate = node_get_accumulate,
    .osc_fetch_and_op = node_fetch_and_op,
    .osc_compare_and_swap = node_compare_and_swap,
    .osc_flush = node_flush,
    .osc_flush_local = node_flush,
};

/* ------------------------------------------------------------------ */
/* the mixed table: one load and one indirect call per entry           */
/* ------------------------------------------------------------------ */

static int mixed_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_put(origin_addr, origin_count, origin_dt, target, target_disp,
                                               target_count, target_dt, win);
}

static int mixed_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_get(origin_addr, origin_count, origin_dt, target, target_disp,
                                               target_count, target_dt, win);
}

static int mixed_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                            ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                            struct ompi_op_t *op, struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_accumulate(origin_addr, origin_count, origin_dt, target, target_disp,
                                                      target_count, target_dt, op, win);
}

static int mixed_get_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                                void *result_addr, int result_count, struct ompi_datatype_t *result_dt, int target,
                                ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                                struct ompi_op_t *op, struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_get_accumulate(origin_addr, origin_count, origin_dt, result_addr,
                                                          result_count, result_dt, target, target_disp,
                                                          target_count, target_dt, op, win);
}

static int mixed_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt, int target,
                              ptrdiff_t target_disp, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_fetch_and_op(origin_addr, result_addr, dt, target, target_disp, op, win);
}

static int mixed_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                  struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                  struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_compare_and_swap(origin_addr, compare_addr, result_addr, dt, target,
                                                            target_disp, win);
}

static int mixed_flush(int target, struct ompi_win_t *win)
{
    return route_of(win, target)->ops->osc_flush(target, win);
}

/* The am table with the dispatchers in place of the entries they route
 * (request-based operations and synchronization stay the am table's). */
static void mixed_table_set(ompi_osc_base_module_t *table)
{
    *table = ompi_osc_newrma_am_table;
    table->osc_put = mixed_put;
    table->osc_get = mixed_get;
    table->osc_accumulate = mixed_accumulate;
    table->osc_get_accumulate = mixed_get_accumulate;
    table->osc_fetch_and_op = mixed_fetch_and_op;
    table->osc_compare_and_swap = mixed_compare_and_swap;
    table->osc_flush = mixed_flush;
    table->osc_flush_local = mixed_flush;
}

void osc_newrma_mixed_init(ompi_osc_newrma_module_t *module)
{
    const osc_newrma_node_route_t *route = module->am_node;
    osc_newrma_route_t *routes;

    /* one process per node, or every process on this one: the am table */
    if (!mca_osc_newrma_component.mixed_table || NULL == route || route->local_size < 2
        || route->local_size == module->size) {
        return;
    }
    routes = malloc(sizeof(*routes) * (size_t) module->size);
    if (NULL == routes) {
        /* the am table does the same, with more work per call: no reason
         * to fail a creation the other processes go on with */
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "mixed window: no memory for the per-target table, "
                       "the active-message table serves every peer");
        return;
    }
    for (int r = 0 ; r < module->size ; ++r) {
        routes[r] = (osc_newrma_route_t) { .ops = am, .node_index = -1 };
    }
    for (int i = 0 ; i < route->local_size ; ++i) {
        routes[route->ranks[i]] = (osc_newrma_route_t) { .ops = &node_route_table, .node_index = i };
    }
    module->routes = routes;
    mixed_table_set(&module->super);
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "mixed window: per-target table, %d of its %d processes on this node",
                   route->local_size, module->size);
    return;
}

void osc_newrma_mixed_fini(ompi_osc_newrma_module_t *module)
{
    free(module->routes);
    module->routes = NULL;
}
