/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: signals between the processes of a window through its node
 * segment, for active-target synchronization.
 *
 * Node barrier (fence): one arrival counter for the window, never reset.
 * Episode e is complete once the counter reaches e x nranks.  Arriving and
 * waiting are separate steps, so a fence that opens an epoch
 * (MPI_MODE_NOPRECEDE) arrives and returns, and only the first operation
 * that needs the others waits (the design's nonblocking fence).  Counts
 * are cumulative, so a process finishes waiting for episode e before it
 * arrives at e+1 (osc_newrma_fence); that wait is free unless e was left
 * unfinished.
 *
 * PSCW notices: MPI_Win_post puts the target's rank in a bounded ring of each
 * origin in its group; MPI_Win_start takes from its own ring the notices of
 * its group's targets and keeps any early notice (a target that already
 * posted for a later epoch) until a later start.  MPI_Win_complete adds one
 * to each target's completion counter; MPI_Win_wait waits for the counter to
 * reach the number of origins posted to.  Work is O(group); memory is a ring
 * of at most osc_newrma_post_ring_slots entries per rank, no P x P table.
 * A completion can never be early: an origin completes to a target only
 * after that target's post for the same epoch.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "osc_newrma.h"
#include "osc_newrma_signal.h"

/* ------------------------------------------------------------------ */
/* node barrier                                                        */
/* ------------------------------------------------------------------ */

void osc_newrma_barrier_arrive(ompi_osc_newrma_module_t *module)
{
    module->barrier_episode++;
    opal_atomic_mb();                      /* MEM_SYNC before PROC_SYNC */
    (void) opal_atomic_fetch_add_64(osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_BARRIER_ARRIVALS), 1);
}

bool osc_newrma_barrier_done(ompi_osc_newrma_module_t *module)
{
    return *osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_BARRIER_ARRIVALS)
           >= module->barrier_episode * module->size;
}

void osc_newrma_barrier_wait(ompi_osc_newrma_module_t *module)
{
    unsigned int spins = 0;

    while (!osc_newrma_barrier_done(module)) {
        osc_newrma_backoff(&spins);
    }
    opal_atomic_mb();                      /* MEM_SYNC after PROC_SYNC */
}

/* ------------------------------------------------------------------ */
/* PSCW: post notices                                                  */
/* ------------------------------------------------------------------ */

static int ring_drain(ompi_osc_newrma_module_t *module);

static void ring_push(ompi_osc_newrma_module_t *module, int origin, int value)
{
    const osc_newrma_shm_t *shm = &module->shm;
    int64_t slots = shm->layout.ring_slots;
    int64_t ticket = opal_atomic_fetch_add_64(osc_newrma_shm_post_tail(shm, origin), 1);
    volatile int64_t *head = osc_newrma_shm_post_head(shm, origin);
    unsigned int spins = 0;

    /* A full ring waits for the origin to take notices (back-pressure).
     * Meanwhile we take our own: ranks that all post to each other before
     * starting (all-to-all PSCW with rings smaller than the group) would
     * otherwise wait for each other forever. */
    while (ticket - *head >= slots) {
        (void) ring_drain(module);
        osc_newrma_backoff(&spins);
    }
    opal_atomic_mb();
    osc_newrma_shm_ring(shm, origin)[ticket % slots] = value + 1;
}

/* Move every notice in our ring to the private list of notices not yet
 * matched by a start. */
static int ring_drain(ompi_osc_newrma_module_t *module)
{
    const osc_newrma_shm_t *shm = &module->shm;
    volatile int32_t *ring = osc_newrma_shm_ring(shm, module->rank);
    volatile int64_t *head = osc_newrma_shm_post_head(shm, module->rank);
    int64_t slots = shm->layout.ring_slots;

    for (;;) {
        volatile int32_t *slot = &ring[*head % slots];
        int32_t value = *slot;
        if (0 == value) {
            return OMPI_SUCCESS;
        }
        if (module->posts_seen_count == module->posts_seen_capacity) {
            size_t capacity = module->posts_seen_capacity ? 2 * module->posts_seen_capacity : 16;
            int *grown = realloc(module->posts_seen, capacity * sizeof(int));
            if (NULL == grown) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            module->posts_seen = grown;
            module->posts_seen_capacity = capacity;
        }
        module->posts_seen[module->posts_seen_count++] = value - 1;
        *slot = 0;
        opal_atomic_wmb();
        *head = *head + 1;
    }
}

int osc_newrma_post_signal(ompi_osc_newrma_module_t *module, const int *origins, size_t count)
{
    opal_atomic_mb();                      /* MEM_SYNC before PROC_SYNC */
    for (size_t i = 0 ; i < count ; ++i) {
        ring_push(module, origins[i], module->rank);
    }
    return OMPI_SUCCESS;
}

static bool sorted_contains(const int *ranks, size_t count, int rank)
{
    return NULL != bsearch(&rank, ranks, count, sizeof(int), osc_newrma_int_compare);
}

/* Wait for the post of every target of the start group (sorted ranks). */
int osc_newrma_start_wait_posts(ompi_osc_newrma_module_t *module, const int *targets, size_t count)
{
    size_t matched = 0;
    unsigned int spins = 0;
    int ret;

    for (;;) {
        ret = ring_drain(module);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
        /* consume notices of our group; keep the others in order */
        size_t kept = 0;
        for (size_t i = 0 ; i < module->posts_seen_count ; ++i) {
            int rank = module->posts_seen[i];
            /* a target has at most one notice outstanding per origin: it
             * cannot post again before this origin completes with it */
            if (matched < count && sorted_contains(targets, count, rank)) {
                matched++;
            } else {
                module->posts_seen[kept++] = rank;
            }
        }
        module->posts_seen_count = kept;
        if (matched == count) {
            break;
        }
        osc_newrma_backoff(&spins);
    }
    opal_atomic_mb();                      /* MEM_SYNC after PROC_SYNC */
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* PSCW: completions                                                   */
/* ------------------------------------------------------------------ */

void osc_newrma_complete_signal(ompi_osc_newrma_module_t *module, const int *targets, size_t count)
{
    opal_atomic_mb();                      /* MEM_SYNC before PROC_SYNC */
    for (size_t i = 0 ; i < count ; ++i) {
        (void) opal_atomic_fetch_add_64(osc_newrma_shm_completes(&module->shm, targets[i]), 1);
    }
}

bool osc_newrma_completions_arrived(ompi_osc_newrma_module_t *module)
{
    if (*osc_newrma_shm_completes(&module->shm, module->rank) < module->completes_expected) {
        return false;
    }
    opal_atomic_mb();                      /* MEM_SYNC after PROC_SYNC */
    return true;
}
