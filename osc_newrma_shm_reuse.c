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
 * osc/newrma: reuse of a freed window's node segment.
 *
 * A new segment costs a file in the backing directory, a broadcast of its
 * name, a mapping and page faults in every process, a reduction, an unlink
 * and, at free, an unmapping: most of a window's creation time on one node.
 * Applications that create and free windows over and over (one per phase or
 * per solver call) mostly do so on the same processes, so each process keeps
 * the segment of the last window it freed (up to osc_newrma_segment_cache_bytes)
 * and reports it in the creation's allgather.  The segment is reused when
 * every process of the new window reports the same one, with the same use
 * count, and the new layout fits: a segment mapped by exactly n processes and
 * reported by all n processes of the new window belongs to no one else, and
 * all of them have left the old window (they are in this creation).  The
 * decision is a function of the gathered inputs, so every process takes the
 * same one without another message.
 *
 * Refilling: rank 0 zeroes the part the new layout uses (a new file would be
 * zero too: lock words, rings, counters, window memory), writes the header
 * and peer info, and publishes the new use count last; the others wait for
 * it.  Single-copy windows still have to agree that every process can reach
 * its neighbour: refusals go in the header and the segment's own barrier
 * ends the vote.  Neither needs an MPI call.
 */

#include "ompi_config.h"

#include <string.h>

#include "osc_newrma.h"
#include "osc_newrma_active_target.h"

static struct {
    opal_mutex_t lock;          /* creation and free may run in several threads */
    osc_newrma_shm_t kept;      /* kept.base == NULL: nothing kept */
} segment_cache = { .lock = OPAL_MUTEX_STATIC_INIT };

void osc_newrma_shm_cache_take(osc_newrma_shm_t *shm)
{
    OPAL_THREAD_LOCK(&segment_cache.lock);
    *shm = segment_cache.kept;
    segment_cache.kept.base = NULL;
    OPAL_THREAD_UNLOCK(&segment_cache.lock);
}

void osc_newrma_shm_cache_keep(osc_newrma_shm_t *shm)
{
    osc_newrma_shm_t older = { .base = NULL };

    if (NULL == shm->base || !shm->is_shared) {
        return;
    }
    if (shm->capacity > mca_osc_newrma_component.segment_cache_bytes) {
        osc_newrma_shm_detach(shm);
        return;
    }
    OPAL_THREAD_LOCK(&segment_cache.lock);
    older = segment_cache.kept;
    segment_cache.kept = *shm;
    OPAL_THREAD_UNLOCK(&segment_cache.lock);
    shm->base = NULL;
    /* the newest is the likelier to match the next window */
    osc_newrma_shm_detach(&older);
}

void osc_newrma_shm_cache_flush(void)
{
    osc_newrma_shm_t kept;

    osc_newrma_shm_cache_take(&kept);
    osc_newrma_shm_detach(&kept);
}

bool osc_newrma_shm_reusable(const osc_newrma_shm_t *shm, const osc_newrma_peer_input_t *peers, int nranks,
                             size_t alignment)
{
    /* a base aligned to a page is aligned to a line too: a segment kept from a
     * large window serves small ones */
    if (NULL == shm->base || shm->members != nranks || shm->layout.total_size > shm->capacity
        || 0 != shm->alignment % alignment) {
        return false;
    }
    for (int i = 0 ; i < nranks ; ++i) {
        if (peers[i].segment_id != shm->id || peers[i].segment_uses != shm->uses) {
            return false;
        }
    }
    return true;
}

static osc_newrma_shm_header_t *segment_header(const osc_newrma_shm_t *shm)
{
    return (osc_newrma_shm_header_t *) (shm->base + shm->layout.header_offset);
}

/* Rank 0: what a new file would hold, then the use count that releases the
 * others. */
static void refill(ompi_osc_newrma_module_t *module, const osc_newrma_peer_input_t *peers)
{
    osc_newrma_shm_t *shm = &module->shm;

    memset(shm->base, 0, shm->layout.total_size);
    osc_newrma_shm_fill(shm, module->size, module->flavor, peers);
    osc_newrma_store_release(&segment_header(shm)->uses, shm->uses);   /* the refill before it */
}

static void wait_for_refill(const osc_newrma_shm_t *shm)
{
    unsigned int spins = 0;

    while (osc_newrma_load_acquire(&segment_header(shm)->uses) != shm->uses) {
        osc_newrma_backoff(&spins);
    }
}

int osc_newrma_shm_reuse(ompi_osc_newrma_module_t *module, const osc_newrma_peer_input_t *peers, int vote)
{
    osc_newrma_shm_t *shm = &module->shm;

    shm->uses++;
    if (0 == module->rank) {
        refill(module, peers);
    } else {
        wait_for_refill(shm);
    }
    if (NEWRMA_PATH_USERMEM != module->path) {
        return OMPI_SUCCESS;
    }
    if (!vote) {
        osc_newrma_store_relaxed(&segment_header(shm)->refused, 1);   /* the barrier publishes it */
    }
    osc_newrma_barrier(module);
    if (0 != osc_newrma_load_relaxed(&segment_header(shm)->refused)) {
        /* the window goes over the FIFOs; the segment is good for another */
        osc_newrma_shm_cache_keep(shm);
        return OMPI_ERR_UNREACH;
    }
    return OMPI_SUCCESS;
}
