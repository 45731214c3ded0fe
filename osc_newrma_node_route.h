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
 * osc/newrma: the node route of a window spanning nodes (docs/mixed-windows.md).
 *
 * An MPI_Win_allocate window whose processes span nodes takes the
 * active-message path for synchronization, accumulates and remote peers.
 * Its memory on each node is one segment over the node's processes of the
 * window (ompi-rfc-fragmented-sm-allocations.txt: one allocation, every
 * block cache-line aligned, the exact size), so that a put or a get to a
 * peer on this node is a load/store once the active-message path has the
 * target's access granted (lock, post or fence).  The node's processes are
 * found by the FIFO transport's split; this file keeps a table of them (in
 * window-rank order: a lookup is a binary search over the node, never a
 * table over the window).
 */

#ifndef OSC_NEWRMA_NODE_ROUTE_H
#define OSC_NEWRMA_NODE_ROUTE_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "osc_newrma.h"
#include "osc_newrma_atomic.h"
#include "osc_newrma_shm.h"
#include "osc_newrma_stripes.h"

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;

/* One process of the node: its window rank, memory and disp_unit. */
typedef struct {
    int rank;
    int disp_unit;
    uint64_t size;
    uint64_t offset;            /* of its block in the segment */
    uint32_t stripes;           /* its osc_newrma_accumulate_stripes (the node takes the largest) */
    uint64_t alignment;         /* of its window memory (mpi_minimum_memory_alignment; the node
                                 * takes the largest) */
    uint32_t node_lock;         /* its osc_newrma_node_lock (the node lock if every process says so) */
    uint32_t fence_flat_ranks;  /* its osc_newrma_fence_flat_ranks (the node takes the largest) */
} osc_newrma_node_peer_t;

typedef struct osc_newrma_node_route_t {
    osc_newrma_mapping_t mapping;
    char *base;                 /* where this process mapped the segment (NULL: no memory on the node) */
    bool alone;                 /* no other process of the window here: base is our own allocation */
    int local_size;
    int *ranks;                 /* window ranks of the node's processes, ascending */
    osc_newrma_node_peer_t *peers;
    /* accumulate stripes (osc_newrma_stripes.h): `stripes` lines per node
     * process after the window blocks (alone: in stripe_mem); the
     * target's packet handler takes them too, so an accumulate by loads
     * and stores and one applied from a packet exclude each other */
    unsigned int stripes;
    uint64_t stripes_offset;
    size_t alignment;           /* of every block, and of the segment's base */
    char *stripe_mem;
    /* the node lock (osc_newrma_node_lock.h): one line per node process
     * after the stripes, if the node agreed to it; the proxy's hold on
     * ours (0, NEWRMA_PF_LOCK_SHARED or NEWRMA_PF_LOCK_EXCL) and whether it
     * waits for the word */
    bool node_lock;
    uint64_t locks_offset;
    uint8_t proxy_held;
    bool proxy_waits;
    /* per node process, this process's view: its access is granted to us
     * and nothing of ours to it is queued or travelling.  Set under the AM
     * lock by an admission that saw both, cleared as an operation to it is
     * queued as a packet or its lock or target element is given up
     * (osc_newrma_am_ops.c); while set, an operation to it is admitted by
     * one load and a flush to it is a fence. */
    uint8_t *open;
    unsigned int quiet_calls;       /* calls to node peers that may skip their
                                     * poll, for its pace (threads may lose a count) */
    /* the fence (osc_newrma_node_route_fence): after the lock lines, the
     * leader's release line, then the node barrier's words (one line of
     * arrival words, or each process's dissemination flags); the leader is
     * the node's lowest window rank and meets the other nodes' leaders in
     * a barrier of `leaders` (MPI_COMM_NULL on the other processes; NULL:
     * the window is on one node, or the route is alone -- then it is the
     * window's communicator) */
    bool fence;                 /* the hierarchical fence is on (osc_newrma_node_fence) */
    uint64_t release_offset;
    osc_newrma_node_barrier_t barrier;
    struct ompi_communicator_t *leaders;
} osc_newrma_node_route_t;

/* For an allocate window of the active-message path (it spans nodes),
 * unless every peer must look remote (osc_newrma_force_remote): map the
 * node's window memory (collective over the node's processes of the
 * window, the FIFO transport's split), or, alone on the node, allocate
 * ours; set *base to ours and module->am_node.  Otherwise leave both. */
int osc_newrma_node_route_init(struct ompi_osc_newrma_module_t *module, size_t size, int disp_unit, void **base);
void osc_newrma_node_route_fini(struct ompi_osc_newrma_module_t *module);

/* The node peer `rank` is, or NULL if it is on another node. */
static inline const osc_newrma_node_peer_t *osc_newrma_node_route_peer(const osc_newrma_node_route_t *route,
                                                                        int rank)
{
    int index = osc_newrma_rank_index(route->ranks, (size_t) route->local_size, rank);

    return index < 0 ? NULL : &route->peers[index];
}

/* The node lock word of node peer `peer` (route->node_lock only). */
static inline int64_t *osc_newrma_node_route_lock_word(const osc_newrma_node_route_t *route,
                                                      const osc_newrma_node_peer_t *peer)
{
    return (int64_t *) (route->base + route->locks_offset
                        + (size_t) (peer - route->peers) * mca_osc_newrma_component.cacheline);
}

/* Is `peer` open (above)?  One load, no lock: the flag changes only in
 * calls of this process, and a call racing with the one that clears it is
 * a call of another thread with no order to keep. */
static inline bool osc_newrma_node_route_is_open(const osc_newrma_node_route_t *route,
                                                 const osc_newrma_node_peer_t *peer)
{
    return 0 != osc_newrma_load_relaxed(&route->open[peer - route->peers]);
}

/* Open `peer` (AM lock held: its target element is granted and idle). */
static inline void osc_newrma_node_route_open(osc_newrma_node_route_t *route, const osc_newrma_node_peer_t *peer)
{
    osc_newrma_store_relaxed(&route->open[peer - route->peers], 1);
}

/* One more operation done by the node route (the MPI_T counter
 * osc_newrma_route_node_ops): a locked add only where threads may count
 * at once -- on the fast path it would cost more than the operation. */
static inline void osc_newrma_node_route_count(void)
{
    uint64_t *ops = &mca_osc_newrma_component.route_node_ops;

    if (opal_using_threads()) {
        (void) osc_newrma_fetch_add_relaxed(ops, 1);
    } else {
        osc_newrma_store_relaxed(ops, osc_newrma_load_relaxed(ops) + 1);
    }
}

/* Close window rank `rank` if it is a node peer (AM lock held): something
 * of ours to it is queued, or its grant is given up. */
void osc_newrma_node_route_close(struct ompi_osc_newrma_module_t *module, int rank);

/* MPI_Win_flush to an open node peer: true when done (*ret), false when
 * the active-message path's flush must run (not a node peer, not open, an
 * epoch error to report, or the flush that polls: one in
 * NEWRMA_NODE_CALLS_PER_POLL, so that a process waiting by flushing a
 * node peer in a loop still serves remote origins). */
bool osc_newrma_node_route_flush(struct ompi_osc_newrma_module_t *module, int target, int *ret);
/* The same for node peer `peer` (window rank `target`): no look-up. */
bool osc_newrma_node_route_flush_peer(struct ompi_osc_newrma_module_t *module, const osc_newrma_node_peer_t *peer,
                                      int target, int *ret);

/* May MPI_Win_lock or MPI_Win_unlock of `target` leave without polling the
 * transports?  Yes for a peer on our node under the node lock (it sent
 * nothing and waits for nothing), but for one call in
 * NEWRMA_NODE_CALLS_PER_POLL (as a flush). */
bool osc_newrma_node_route_quiet_call(struct ompi_osc_newrma_module_t *module, int target);

/* Collective over the window, after the route is made: the node leaders'
 * communicator, where the window spans nodes. */
int osc_newrma_node_route_leaders_init(struct ompi_osc_newrma_module_t *module);

/* Whether MPI_Win_fence's barrier is osc_newrma_node_route_fence (below). */
static inline bool osc_newrma_node_route_fences(const osc_newrma_node_route_t *route)
{
    return NULL != route && route->fence;
}

/* MPI_Win_fence's barrier on a window with a node route: the node barrier
 * in the route's segment, the node leaders' barrier, the leader's release
 * (docs/mixed-windows.md, "Fence").  Serves the transports while it waits:
 * remote origins' flushes to this process must be answered for their
 * fences to reach the barrier.  Called without the AM lock. */
int osc_newrma_node_route_fence(struct ompi_osc_newrma_module_t *module);

/* The stripe words of node peer `peer`. */
static inline osc_newrma_stripes_t osc_newrma_node_route_stripes(const osc_newrma_node_route_t *route,
                                                                 const osc_newrma_node_peer_t *peer)
{
    size_t line = mca_osc_newrma_component.cacheline;
    char *base = route->alone ? route->stripe_mem : route->base + route->stripes_offset;

    return (osc_newrma_stripes_t) { .base = base + (size_t) (peer - route->peers) * route->stripes * line,
                                    .stride = line, .stripes = route->stripes };
}

/* Lock (and unlock) the stripes of `peer` covering bytes [offset, offset +
 * span) of its window; *first and *count say which, for the unlock. */
static inline void osc_newrma_node_route_acc_lock(const osc_newrma_node_route_t *route,
                                                  const osc_newrma_node_peer_t *peer, unsigned int shift,
                                                  uint64_t offset, size_t span, unsigned int *first,
                                                  unsigned int *count)
{
    osc_newrma_stripes_t stripes = osc_newrma_node_route_stripes(route, peer);

    osc_newrma_stripes_span(shift, route->stripes, offset, span, first, count);
    osc_newrma_stripes_lock(&stripes, *first, *count, osc_newrma_stripe_lock_quiet);
}

static inline void osc_newrma_node_route_acc_unlock(const osc_newrma_node_route_t *route,
                                                    const osc_newrma_node_peer_t *peer, unsigned int first,
                                                    unsigned int count)
{
    osc_newrma_stripes_t stripes = osc_newrma_node_route_stripes(route, peer);

    osc_newrma_stripes_unlock(&stripes, first, count);
}

/* Compare-and-swap of `bytes` (at most 16) at byte `offset` of node peer
 * `peer`'s window, as the target's handler does it: under its stripes. */
static inline void osc_newrma_node_route_cas(const osc_newrma_node_route_t *route, const osc_newrma_node_peer_t *peer,
                                             unsigned int shift, uint64_t offset, size_t bytes, const void *origin,
                                             const void *compare, void *result)
{
    char old[16];
    char *taddr = route->base + peer->offset + offset;
    unsigned int first, count;

    osc_newrma_node_route_acc_lock(route, peer, shift, offset, bytes, &first, &count);
    memcpy(old, taddr, bytes);
    if (0 == memcmp(old, compare, bytes)) {
        memcpy(taddr, origin, bytes);
    }
    osc_newrma_node_route_acc_unlock(route, peer, first, count);
    memcpy(result, old, bytes);
}

/* The per-target table of a window spanning nodes with node peers
 * (docs/mixed-windows.md, "Routes and tables"): module->routes and the
 * mixed function table, set at creation after the node route (not
 * collective); a window without node peers keeps the am table. */
void osc_newrma_mixed_init(struct ompi_osc_newrma_module_t *module);
void osc_newrma_mixed_fini(struct ompi_osc_newrma_module_t *module);

END_C_DECLS

#endif /* OSC_NEWRMA_NODE_ROUTE_H */
