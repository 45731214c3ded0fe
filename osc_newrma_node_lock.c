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
 * osc/newrma: the node lock of a window spanning nodes and its proxy (see
 * osc_newrma_node_lock.h and docs/mixed-windows.md).
 *
 * Orders (osc_newrma_atomic.h): every way in is an acquire CAS on the word,
 * every way out a release on it, so the holders' loads and stores -- an
 * origin's by the node route, the handler's applying packets -- are
 * ordered between one hold and the next.
 */

#include "ompi_config.h"

#include "osc_newrma.h"
#include "osc_newrma_am.h"
#include "osc_newrma_atomic.h"
#include "osc_newrma_node_lock.h"
#include "osc_newrma_node_route.h"

#define NODE_LOCK_WRITER ((int64_t) 1)
#define NODE_LOCK_PROXY_WANTS ((int64_t) 2)
#define NODE_LOCK_WRITER_WAITS ((int64_t) 4)          /* one waiting node-local writer */
#define NODE_LOCK_WAITING_MASK ((int64_t) 0xfffc)
#define NODE_LOCK_READER ((int64_t) 1 << 16)

/* Windows whose proxy waits for its word (AM lock). */
static int proxies_waiting;

static int64_t *word_of(const osc_newrma_node_route_t *route, int rank)
{
    return osc_newrma_node_route_lock_word(route, osc_newrma_node_route_peer(route, rank));
}

static bool holders_block(int64_t seen, bool exclusive)
{
    return (seen & NODE_LOCK_WRITER) || (exclusive && seen >= NODE_LOCK_READER);
}

/* ------------------------------------------------------------------ */
/* node-local origins                                                  */
/* ------------------------------------------------------------------ */

bool osc_newrma_node_lock_applies(ompi_osc_newrma_module_t *module, const osc_newrma_target_t *t)
{
    const osc_newrma_node_route_t *route = module->am_node;

    return NULL != route && route->node_lock && NEWRMA_WIN_PER_TARGET == module->state && !t->lock_assert
           && t->rank != module->rank && NULL != osc_newrma_node_route_peer(route, t->rank);
}

/* One try at the word for a node-local origin: never while the proxy
 * announces itself; a reader also never while a writer waits. */
static bool local_try(int64_t *word, bool exclusive)
{
    int64_t seen = osc_newrma_load_relaxed(word);

    if (exclusive) {
        return !holders_block(seen, true) && !(seen & NODE_LOCK_PROXY_WANTS)
               && osc_newrma_cas_acquire(word, &seen, seen - NODE_LOCK_WRITER_WAITS + NODE_LOCK_WRITER);
    }
    return !(seen & (NODE_LOCK_WRITER | NODE_LOCK_PROXY_WANTS | NODE_LOCK_WAITING_MASK))
           && osc_newrma_cas_acquire(word, &seen, seen + NODE_LOCK_READER);
}

void osc_newrma_node_lock_take(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    int64_t *word = word_of(module->am_node, t->rank);
    bool exclusive = MPI_LOCK_EXCLUSIVE == t->lock_type;

    t->busy++;       /* progress releases the AM lock */
    if (exclusive) {
        (void) osc_newrma_fetch_add_relaxed(word, NODE_LOCK_WRITER_WAITS);   /* readers hold back */
    }
    while (!local_try(word, exclusive)) {
        osc_newrma_am_progress_once();
    }
    t->busy--;
    t->lock_state = NEWRMA_LOCK_GRANTED;
    t->node_locked = true;
    mca_osc_newrma_component.route_node_locks++;
}

void osc_newrma_node_lock_give(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    int64_t *word = word_of(module->am_node, t->rank);

    (void) osc_newrma_fetch_add_release(word, MPI_LOCK_EXCLUSIVE == t->lock_type ? -NODE_LOCK_WRITER
                                                                                : -NODE_LOCK_READER);
    t->node_locked = false;
    t->lock_state = NEWRMA_LOCK_CALLED;
}

/* ------------------------------------------------------------------ */
/* the proxy (target side)                                             */
/* ------------------------------------------------------------------ */

static void proxy_waits(osc_newrma_node_route_t *route, bool waits)
{
    if (route->proxy_waits != waits) {
        route->proxy_waits = waits;
        proxies_waiting += waits ? 1 : -1;
    }
}

/* One try at our word in the proxy's name.  A holder in the way: announce
 * (node-local origins step back until we are in).  Only waiting node-local
 * writers in the way (and not announced yet): let them in first. */
static bool proxy_try(int64_t *word, bool exclusive, bool queued)
{
    int64_t seen = osc_newrma_load_relaxed(word);

    if (holders_block(seen, exclusive)) {
        if (queued && !(seen & NODE_LOCK_PROXY_WANTS)) {
            (void) osc_newrma_fetch_or_acq_rel(word, NODE_LOCK_PROXY_WANTS);
        }
        return false;
    }
    if (!(seen & NODE_LOCK_PROXY_WANTS) && (seen & NODE_LOCK_WAITING_MASK)) {
        return false;
    }
    return osc_newrma_cas_acquire(word, &seen, (seen & ~NODE_LOCK_PROXY_WANTS)
                                                   + (exclusive ? NODE_LOCK_WRITER : NODE_LOCK_READER));
}

bool osc_newrma_node_proxy_take(ompi_osc_newrma_module_t *module, bool exclusive, bool queued)
{
    osc_newrma_node_route_t *route = module->am_node;
    int64_t *word;
    bool taken;

    if (NULL == route || !route->node_lock) {
        return true;
    }
    word = word_of(route, module->rank);
    if (0 != route->proxy_held) {
        /* shared already (an exclusive grant comes only with no holder):
         * no new holder in while a node-local writer waits for us to leave */
        taken = !exclusive && !(osc_newrma_load_relaxed(word) & NODE_LOCK_WAITING_MASK);
    } else if ((taken = proxy_try(word, exclusive, queued))) {
        route->proxy_held = exclusive ? NEWRMA_PF_LOCK_EXCL : NEWRMA_PF_LOCK_SHARED;
    }
    if (queued) {
        proxy_waits(route, !taken);
    }
    return taken;
}

void osc_newrma_node_proxy_give(ompi_osc_newrma_module_t *module)
{
    osc_newrma_node_route_t *route = module->am_node;

    if (NULL == route || 0 == route->proxy_held) {
        return;
    }
    (void) osc_newrma_fetch_add_release(word_of(route, module->rank), NEWRMA_PF_LOCK_EXCL == route->proxy_held
                                                                          ? -NODE_LOCK_WRITER
                                                                          : -NODE_LOCK_READER);
    route->proxy_held = 0;
}

bool osc_newrma_node_proxy_waiting(void)
{
    return 0 != proxies_waiting;
}

bool osc_newrma_node_proxy_waits(const ompi_osc_newrma_module_t *module)
{
    return NULL != module->am_node && module->am_node->proxy_waits;
}

void osc_newrma_node_proxy_fini(ompi_osc_newrma_module_t *module)
{
    if (NULL != module->am_node) {
        osc_newrma_node_proxy_give(module);
        proxy_waits(module->am_node, false);
    }
}
