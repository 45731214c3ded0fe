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
 *
 * The design's MEM_SYNC around each PROC_SYNC is a release fence before the
 * signal and an acquire fence after it is seen (opal_atomic_wmb / rmb: the
 * C11 release / acquire fences with the compiler builtins).  Here the
 * PROC_SYNC is itself a store or atomic in the segment, so that pair is what
 * publishes everything before the signal to everyone who sees it; no step
 * needs a store ordered before a later load (the one thing a full barrier
 * adds), and on x86 a full barrier stalls until the signal's own cache line
 * transfer is done.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "osc_newrma.h"
#include "osc_newrma_signal.h"
#include "osc_newrma_assist.h"
#include "opal/runtime/opal_progress.h"

/* ------------------------------------------------------------------ */
/* node barrier                                                        */
/* ------------------------------------------------------------------ */

void osc_newrma_barrier_arrive(ompi_osc_newrma_module_t *module)
{
    module->barrier_episode++;
    opal_atomic_wmb();                     /* MEM_SYNC before PROC_SYNC (release) */
    (void) opal_atomic_fetch_add_64(osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_BARRIER_ARRIVALS), 1);
}

static bool barrier_done(ompi_osc_newrma_module_t *module)
{
    return *osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_BARRIER_ARRIVALS)
           >= module->barrier_episode * module->size;
}

void osc_newrma_barrier_wait(ompi_osc_newrma_module_t *module)
{
    unsigned int spins = 0;

    while (!barrier_done(module)) {
        osc_newrma_assist_backoff(module, &spins);
    }
    opal_atomic_rmb();                     /* MEM_SYNC after PROC_SYNC (acquire) */
}

/* Arrivals count cumulatively, so an episode nobody waited for (a NOPRECEDE
 * fence) must end here before this process's next arrival counts. */
void osc_newrma_barrier(ompi_osc_newrma_module_t *module)
{
    osc_newrma_barrier_wait(module);
    osc_newrma_barrier_arrive(module);
    osc_newrma_barrier_wait(module);
}

/* ------------------------------------------------------------------ */
/* PSCW: post notices                                                  */
/* ------------------------------------------------------------------ */

static int ring_drain(ompi_osc_newrma_module_t *module);
static void ring_drain_locked(ompi_osc_newrma_module_t *module);

/* A ring cell is one 64-bit word: the lap of the ticket it serves in the
 * high half, the posting rank + 1 in the low half (0: empty).  Ticket t
 * may fill its cell once the cell reads "empty, lap t / slots"; the owner
 * consumes ticket h once it reads "lap h / slots, rank r + 1" and leaves
 * "empty, next lap" behind (a bounded MPMC queue after Vyukov, with one
 * consumer).  Posters therefore never read the owner's head, and the owner
 * never touches the tail: a post-and-take costs the transfer of the cell's
 * line each way and nothing else.  A zeroed segment is every cell empty
 * for lap 0. */
static inline int64_t ring_cell(int64_t ticket, int64_t slots, int32_t value_plus_one)
{
    return (int64_t) (((uint64_t) (ticket / slots) << 32) | (uint32_t) value_plus_one);
}

/* A ring that cannot fill needs no "empty" mark: posters do not read their
 * cell, and the owner compares the lap.  Not writing it keeps the line the
 * poster writes next out of the owner's store buffer: the owner's next
 * locked instruction (a completion) would wait for that write's transfer. */
static inline bool ring_can_fill(const ompi_osc_newrma_module_t *module)
{
    return module->shm.layout.ring_slots < (unsigned int) module->size;
}

static void ring_push(ompi_osc_newrma_module_t *module, int origin, int value)
{
    const osc_newrma_shm_t *shm = &module->shm;
    int64_t slots = shm->layout.ring_slots;
    int64_t ticket = opal_atomic_fetch_add_64(osc_newrma_shm_post_tail(shm, origin), 1);
    volatile int64_t *cell = &osc_newrma_shm_ring(shm, origin)[ticket % slots];
    unsigned int spins = 0;

    /* A ring with a cell for every rank cannot be full: a rank has at most
     * one notice per origin not yet taken (it posts again only after this
     * origin completed with it, and the origin takes notices in ticket
     * order), so the cell is free and the poster need not read it -- one
     * line transfer less per PSCW round.
     * A smaller ring: a cell still holding the previous lap's notice is a
     * full ring, so wait for the origin to take it (back-pressure).
     * Meanwhile we take our own: ranks that all post to each other before
     * starting (all-to-all PSCW with rings smaller than the group) would
     * otherwise wait for each other forever. */
    while (ring_can_fill(module) && *cell != ring_cell(ticket, slots, 0)) {
        ring_drain_locked(module);
        osc_newrma_backoff(&spins);
    }
    opal_atomic_wmb();
    *cell = ring_cell(ticket, slots, value + 1);
}

/* Is the owner's next cell filled (for the head's lap)? */
static inline bool ring_ready(const ompi_osc_newrma_module_t *module)
{
    int64_t slots = module->shm.layout.ring_slots, head = module->post_head;
    int64_t cell = osc_newrma_shm_ring(&module->shm, module->rank)[head % slots];

    return cell > ring_cell(head, slots, 0);
}


/* Move every notice in our ring to the private list of notices not yet
 * matched by a start. */
static int ring_drain(ompi_osc_newrma_module_t *module)
{
    volatile int64_t *ring = osc_newrma_shm_ring(&module->shm, module->rank);
    int64_t slots = module->shm.layout.ring_slots;

    while (ring_ready(module)) {
        int64_t head = module->post_head;
        if (module->posts_seen_count == module->posts_seen_capacity) {
            size_t capacity = module->posts_seen_capacity ? 2 * module->posts_seen_capacity : 16;
            int *grown = realloc(module->posts_seen, capacity * sizeof(int));
            if (NULL == grown) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            module->posts_seen = grown;
            module->posts_seen_capacity = capacity;
        }
        opal_atomic_rmb();
        module->posts_seen[module->posts_seen_count++] = (int32_t) (uint32_t) ring[head % slots] - 1;
        if (ring_can_fill(module)) {
            ring[head % slots] = ring_cell(head + slots, slots, 0);
        }
        module->post_head = head + 1;
    }
    return OMPI_SUCCESS;
}

static void ring_drain_locked(ompi_osc_newrma_module_t *module)
{
    OPAL_THREAD_LOCK(&module->lock);
    (void) ring_drain(module);
    OPAL_THREAD_UNLOCK(&module->lock);
}

/* ------------------------------------------------------------------ */
/* draining rings from the progress engine                             */
/* ------------------------------------------------------------------ */

/* A ring smaller than the number of ranks can fill: a poster then waits
 * for the origin to take its notices.  The origin may be anywhere in MPI
 * by then (a barrier, a receive), so such a window's ring is drained from
 * opal_progress too (osc_newrma_progress.c); no other window's is. */
bool osc_newrma_signal_needs_progress(const ompi_osc_newrma_module_t *module)
{
    return ring_can_fill(module);
}

int osc_newrma_signal_progress(ompi_osc_newrma_module_t *module)
{
    int count = 0;

    if (0 == opal_mutex_trylock(&module->lock)) {
        if (ring_ready(module)) {
            (void) ring_drain(module);
            count = 1;
        }
        opal_mutex_unlock(&module->lock);
    }
    return count;
}

int osc_newrma_post_signal(ompi_osc_newrma_module_t *module, const int *origins, size_t count)
{
    opal_atomic_wmb();                     /* MEM_SYNC before PROC_SYNC (release) */
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
        OPAL_THREAD_LOCK(&module->lock);
        ret = ring_drain(module);
        OPAL_THREAD_UNLOCK(&module->lock);
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
    opal_atomic_rmb();                     /* MEM_SYNC after PROC_SYNC (acquire) */
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* PSCW: completions                                                   */
/* ------------------------------------------------------------------ */

void osc_newrma_complete_signal(ompi_osc_newrma_module_t *module, const int *targets, size_t count)
{
    opal_atomic_wmb();                     /* MEM_SYNC before PROC_SYNC (release) */
    for (size_t i = 0 ; i < count ; ++i) {
        (void) opal_atomic_fetch_add_64(osc_newrma_shm_completes(&module->shm, targets[i]), 1);
    }
}

bool osc_newrma_completions_arrived(ompi_osc_newrma_module_t *module)
{
    if (*osc_newrma_shm_completes(&module->shm, module->rank) < module->completes_expected) {
        return false;
    }
    opal_atomic_rmb();                     /* MEM_SYNC after PROC_SYNC (acquire) */
    return true;
}
