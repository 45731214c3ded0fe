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
 * osc/newrma: the node route of a window spanning nodes (see
 * osc_newrma_node_route.h and docs/mixed-windows.md).
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"

#include "osc_newrma.h"
#include "osc_newrma_active_target.h"
#include "osc_newrma_am.h"
#include "osc_newrma_epoch.h"
#include "osc_newrma_node_lock.h"
#include "osc_newrma_node_route.h"
#include "osc_newrma_transport_fifo.h"

static size_t align_up(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

static void route_free(osc_newrma_node_route_t *route)
{
    if (NULL != route->leaders) {
        (void) ompi_comm_free(&route->leaders);
    }
    if (route->alone) {
        free(route->base);
        free(route->stripe_mem);
    } else if (NULL != route->base) {
        osc_newrma_shm_unmap(&route->mapping);
    }
    free(route->ranks);
    free(route->peers);
    free(route->open);
    free(route);
}

/* Whether every process of the node could go on (memory), agreed. */
static int node_agree_ok(struct ompi_communicator_t *node_comm, int ok)
{
    int all_ok = 0;
    int ret = node_comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm,
                                                node_comm->c_coll->coll_allreduce_module);

    return OMPI_SUCCESS != ret ? ret : all_ok ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

/* The fence's part of the segment at `offset`: the leader's release
 * line, then the node barrier's words -- one line of arrival words for a
 * node of at most the largest fence_flat_ranks of its processes, else
 * ceil(log2 p) flag lines per process; returns the offset after it. */
static uint64_t fence_layout(osc_newrma_node_route_t *route, int rank, uint64_t offset)
{
    size_t line = mca_osc_newrma_component.cacheline;
    unsigned int flat = 0;
    osc_newrma_node_barrier_t *b = &route->barrier;
    int me = (int) (osc_newrma_node_route_peer(route, rank) - route->peers);

    for (int i = 0 ; i < route->local_size ; ++i) {
        flat = route->peers[i].fence_flat_ranks > flat ? route->peers[i].fence_flat_ranks : flat;
    }
    /* the arrival words share one line */
    flat = flat > line / sizeof(int64_t) ? (unsigned int) (line / sizeof(int64_t)) : flat;
    osc_newrma_node_barrier_setup(b, me, route->local_size, flat);
    route->release_offset = offset;
    b->flags_stride = (size_t) b->rounds * line;
    b->line = line;
    return offset + line + (b->flat ? line : (uint64_t) route->local_size * b->flags_stride);
}

/* Where the fence's words are in this process's mapping. */
static void fence_place(osc_newrma_node_route_t *route)
{
    char *words = route->base + route->release_offset + mca_osc_newrma_component.cacheline;

    route->barrier.arrivals = route->barrier.flat ? (int64_t *) words : NULL;
    route->barrier.flags = route->barrier.flat ? NULL : words;
}

/* Every block at a multiple of the node's largest alignment (a cache line
 * at least), in node-rank (= window-rank) order, then the stripes (one line
 * each, `stripes` per process, the node's largest count), then, if every
 * process of the node wants the node lock, one lock line per process, then
 * the fence's lines (fence_layout); returns the exact total. */
static uint64_t route_layout(osc_newrma_node_route_t *route, int rank)
{
    size_t line = mca_osc_newrma_component.cacheline;
    uint64_t total = 0;

    route->stripes = 1;
    route->alignment = line;
    for (int i = 0 ; i < route->local_size ; ++i) {
        route->alignment = route->peers[i].alignment > route->alignment ? route->peers[i].alignment
                                                                          : route->alignment;
    }
    route->node_lock = true;
    for (int i = 0 ; i < route->local_size ; ++i) {
        route->ranks[i] = route->peers[i].rank;
        route->peers[i].offset = align_up(total, route->alignment);
        total = route->peers[i].offset + route->peers[i].size;
        route->stripes = route->peers[i].stripes > route->stripes ? route->peers[i].stripes : route->stripes;
        route->node_lock = route->node_lock && 0 != route->peers[i].node_lock;
    }
    route->stripes_offset = align_up(total, line);
    total = route->stripes_offset + (uint64_t) route->local_size * route->stripes * line;
    route->locks_offset = total;
    total += route->node_lock ? (uint64_t) route->local_size * line : 0;
    return fence_layout(route, rank, total);
}

/* Alone on this node: the route reaches ourselves only, in our own memory
 * (no segment, no collective). */
static int route_alone(ompi_osc_newrma_module_t *module, osc_newrma_node_route_t *route,
                       const osc_newrma_node_peer_t *mine, void **base)
{
    size_t line = mca_osc_newrma_component.cacheline;

    route->alone = true;
    route->local_size = 1;
    route->stripes = mine->stripes;
    route->ranks = malloc(sizeof(int));
    route->peers = malloc(sizeof(osc_newrma_node_peer_t));
    route->open = calloc(1, sizeof(uint8_t));
    /* (stripes even alone: the packet handler and the process's other
     * threads may accumulate into our memory at once) */
    if (0 != posix_memalign((void **) &route->stripe_mem, line, route->stripes * line)) {
        route->stripe_mem = NULL;
    } else {
        memset(route->stripe_mem, 0, route->stripes * line);
    }
    if (NULL == route->ranks || NULL == route->peers || NULL == route->open || NULL == route->stripe_mem
        || (mine->size > 0 && 0 != posix_memalign((void **) &route->base, mine->alignment, mine->size))) {
        route->base = NULL;
        route_free(route);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    route->peers[0] = *mine;
    route->ranks[0] = mine->rank;
    module->am_node = route;
    *base = route->base;
    return OMPI_SUCCESS;
}

int osc_newrma_node_route_init(ompi_osc_newrma_module_t *module, size_t size, int disp_unit, void **base)
{
    struct ompi_communicator_t *node_comm = osc_newrma_fifo_node_comm(module);
    osc_newrma_node_route_t *route;
    osc_newrma_node_peer_t mine = { .rank = module->rank, .disp_unit = disp_unit, .size = size,
                                    .stripes = mca_osc_newrma_component.acc_stripes,
                                    .alignment = module->memory_alignment,
                                    .node_lock = mca_osc_newrma_component.node_lock,
                                    .fence_flat_ranks = mca_osc_newrma_component.fence_flat_ranks };
    uint64_t total;
    int ret;

    if (MPI_WIN_FLAVOR_ALLOCATE != module->flavor || mca_osc_newrma_component.force_remote) {
        return OMPI_SUCCESS;
    }
    route = calloc(1, sizeof(*route));
    if (NULL == route) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL == node_comm) {
        return route_alone(module, route, &mine, base);
    }
    route->local_size = ompi_comm_size(node_comm);
    route->ranks = malloc(sizeof(int) * (size_t) route->local_size);
    route->peers = malloc(sizeof(osc_newrma_node_peer_t) * (size_t) route->local_size);
    route->open = calloc((size_t) route->local_size, sizeof(uint8_t));
    ret = node_agree_ok(node_comm, NULL != route->ranks && NULL != route->peers && NULL != route->open);
    if (OMPI_SUCCESS == ret) {
        ret = node_comm->c_coll->coll_allgather(&mine, sizeof(mine), MPI_BYTE, route->peers, sizeof(mine),
                                                MPI_BYTE, node_comm, node_comm->c_coll->coll_allgather_module);
    }
    if (OMPI_SUCCESS != ret) {
        route_free(route);
        return ret;
    }
    total = route_layout(route, module->rank);       /* never 0: the stripes */
    ret = osc_newrma_shm_map(node_comm, total, route->alignment, &route->mapping, &route->base, NULL, NULL, NULL);
    if (OMPI_SUCCESS != ret) {
        route->base = NULL;
        route_free(route);
        return ret;
    }
    fence_place(route);
    module->am_node = route;
    *base = 0 == size ? NULL : route->base + osc_newrma_node_route_peer(route, module->rank)->offset;
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "node route to %d processes on this node: segment %lu bytes, %s",
                   route->local_size - 1, (unsigned long) total,
                   route->node_lock ? "node lock" : "locks by the packet handlers only");
    return OMPI_SUCCESS;
}

void osc_newrma_node_route_close(ompi_osc_newrma_module_t *module, int rank)
{
    const osc_newrma_node_peer_t *peer;

    if (NULL != module->am_node && NULL != (peer = osc_newrma_node_route_peer(module->am_node, rank))) {
        osc_newrma_store_relaxed(&module->am_node->open[peer - module->am_node->peers], 0);
    }
}

/* The calls to node peers that skip their poll between two that poll the
 * transports: the polling call's own poll turns progress fully every few
 * calls (osc_newrma_am_call_poll), so a process waiting by such calls is
 * served within a few hundred of them. */
#define NEWRMA_NODE_CALLS_PER_POLL 64

static bool pace_skips_poll(osc_newrma_node_route_t *route)
{
    unsigned int calls = osc_newrma_load_relaxed(&route->quiet_calls);

    osc_newrma_store_relaxed(&route->quiet_calls, calls + 1);
    return 0 != calls % NEWRMA_NODE_CALLS_PER_POLL;
}

bool osc_newrma_node_route_flush(ompi_osc_newrma_module_t *module, int target, int *ret)
{
    osc_newrma_node_route_t *route = module->am_node;
    const osc_newrma_node_peer_t *peer;

    return NULL != route && NULL != (peer = osc_newrma_node_route_peer(route, target))
           && osc_newrma_node_route_flush_peer(module, peer, target, ret);
}

bool osc_newrma_node_route_flush_peer(ompi_osc_newrma_module_t *module, const osc_newrma_node_peer_t *peer,
                                      int target, int *ret)
{
    osc_newrma_node_route_t *route = module->am_node;

    if (!osc_newrma_node_route_is_open(route, peer)
        || OMPI_SUCCESS != osc_newrma_epoch_check(module, NEWRMA_SYNC_FLUSH, target) || !pace_skips_poll(route)) {
        return false;
    }
    /* the node route's operations are complete when they return: what is
     * left is to order them before our next synchronization, as the direct
     * path's flush does */
    osc_newrma_fence_seq_cst();
    *ret = OMPI_SUCCESS;
    return true;
}

bool osc_newrma_node_route_quiet_call(ompi_osc_newrma_module_t *module, int target)
{
    osc_newrma_node_route_t *route = module->am_node;

    return NULL != route && route->node_lock && target != module->rank
           && NULL != osc_newrma_node_route_peer(route, target) && pace_skips_poll(route);
}

/* The node's leader: its lowest window rank (ranks ascending). */
static bool route_leads(const ompi_osc_newrma_module_t *module, const osc_newrma_node_route_t *route)
{
    return route->ranks[0] == module->rank;
}

int osc_newrma_node_route_leaders_init(ompi_osc_newrma_module_t *module)
{
    osc_newrma_node_route_t *route = module->am_node;
    int ret;

    /* a window all on this node has no other leader to meet: the same
     * answer on every process, so all of them skip the split */
    if (NULL == route || !mca_osc_newrma_component.node_fence) {
        return OMPI_SUCCESS;
    }
    route->fence = true;
    if (route->local_size == module->size) {
        return OMPI_SUCCESS;
    }
    ret = ompi_comm_split(module->comm, route_leads(module, route) ? 0 : MPI_UNDEFINED, module->rank,
                          &route->leaders, false);
    if (OMPI_SUCCESS != ret || MPI_COMM_NULL == route->leaders) {
        route->leaders = NULL;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "fence: node barrier of %d (%s), %s", route->local_size,
                   route->barrier.flat ? "arrival words" : "dissemination",
                   NULL != route->leaders ? "leader of this node" : "released by the node's leader");
    return ret;
}

/* Wait, serving the transports, until `done` says yes. */
static void fence_wait(bool (*done)(osc_newrma_node_route_t *route), osc_newrma_node_route_t *route)
{
    osc_newrma_am_enter();
    while (!done(route)) {
        osc_newrma_am_progress_once();
    }
    osc_newrma_am_leave();
}

static bool node_arrived(osc_newrma_node_route_t *route)
{
    return osc_newrma_node_barrier_test(&route->barrier);
}

/* The leader stored this episode (or a later one: it cannot be further,
 * since it waits for us in the next episode's node barrier). */
static bool node_released(osc_newrma_node_route_t *route)
{
    const int64_t *release = (const int64_t *) (route->base + route->release_offset);

    if (osc_newrma_load_relaxed(release) < route->barrier.episode) {
        return false;
    }
    osc_newrma_fence_acquire();            /* MEM_SYNC after PROC_SYNC: what the leader saw */
    return true;
}

int osc_newrma_node_route_fence(ompi_osc_newrma_module_t *module)
{
    osc_newrma_node_route_t *route = module->am_node;
    struct ompi_communicator_t *leaders = route->leaders;
    int ret = OMPI_SUCCESS;

    if (route->local_size > 1) {
        osc_newrma_node_barrier_arrive(&route->barrier);
        fence_wait(node_arrived, route);
    }
    if (!route_leads(module, route)) {
        fence_wait(node_released, route);
        return OMPI_SUCCESS;
    }
    if (NULL != leaders) {
        ret = leaders->c_coll->coll_barrier(leaders, leaders->c_coll->coll_barrier_module);
    }
    if (route->local_size > 1) {
        /* MEM_SYNC before PROC_SYNC: release -- the node's writes (acquired
         * by the node barrier) and, through the leaders' barrier, every
         * other node's arrival */
        osc_newrma_store_release((int64_t *) (route->base + route->release_offset), route->barrier.episode);
    }
    return ret;
}

void osc_newrma_node_route_fini(ompi_osc_newrma_module_t *module)
{
    osc_newrma_mixed_fini(module);
    if (NULL != module->am_node) {
        osc_newrma_node_proxy_fini(module);
        route_free(module->am_node);
        module->am_node = NULL;
    }
}
