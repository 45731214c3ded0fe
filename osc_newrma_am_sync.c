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
 * osc/newrma: synchronization of the active-message path
 * (mpich-new-rma-design.txt, the FENCE / PSCW / LOCK / LOCK_ALL / FLUSH
 * algorithms over messages).  Which call is legal in which state and where
 * it leads is the epoch machine's (osc_newrma_epoch.c, shared with the
 * node paths' osc_newrma_sync.c): each call here asks it first and tells it
 * when done.  What is this path's own is how an epoch ends: each target
 * element is completed (osc_newrma_am_target_complete) with the closing
 * synchronization riding on its last operation.
 *
 *   fence        FLUSH to every target touched, wait for the acks, barrier
 *                (with a node route, the hierarchical one: node barrier in
 *                the route's segment, node leaders' barrier, the release)
 *   post         one POST packet per origin of the group (none with NOCHECK)
 *   start        nothing: operations to a target wait for its post
 *   complete     RMA_DONE to every target of the group, counted by the target
 *   wait/test    the target's count of RMA_DONEs reaches its groups' sizes
 *   lock         nothing (lazy): LOCK_CALLED until an operation needs it
 *   unlock       UNLOCK on the last operation (or the single-op packet); no
 *                packet at all if nothing was done
 *   lock_all     nothing: each target is locked lazily, per target
 *   flush        FLUSH on the last operation, wait for the ack
 *
 * Every legal call but fence also polls the transports once on its way out
 * if it did not wait (osc_newrma_am_call_leave, osc_newrma_am.h): a program
 * that waits by calling MPI_Win_sync or an empty flush in a loop is served.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "osc_newrma.h"
#include "osc_newrma_epoch.h"
#include "osc_newrma_am.h"
#include "osc_newrma_node_route.h"
#include "osc_newrma_native_rma.h"

/* Locking ourselves is not lazy: the program may load and store its own
 * window memory as soon as the call returns, so the lock must be held by
 * then.  AM lock held. */
static int lock_self_now(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    int ret = osc_newrma_am_send_lock(module, t);

    while (OMPI_SUCCESS == ret && NEWRMA_LOCK_GRANTED != t->lock_state) {
        osc_newrma_am_progress_once();
    }
    return ret;
}

/* A new epoch may see regions attached or detached since the last one: a
 * dynamic window's cached copy of a target's regions is asked for again
 * (once per epoch and target accessed), so a detached region is refused at
 * the call. */
static void epoch_opens(ompi_osc_newrma_module_t *module)
{
    osc_newrma_dyn_cache_forget(module);
}

/* The synchronization that closes a target's part of the current epoch. */
typedef uint8_t (*closing_fn_t)(const osc_newrma_target_t *t);

static uint8_t close_by_flush(const osc_newrma_target_t *t) { (void) t; return NEWRMA_PF_FLUSH; }
static uint8_t closed_already(const osc_newrma_target_t *t) { (void) t; return 0; }
static uint8_t close_by_unlock(const osc_newrma_target_t *t)
{
    return t->lock_assert ? NEWRMA_PF_FLUSH : NEWRMA_PF_UNLOCK;   /* NOCHECK took no lock */
}

/* Complete every target element of the window in two passes: issue all
 * (so targets work in parallel), then wait for all, freeing them if
 * `release`.  AM lock held. */
static int issue_all(ompi_osc_newrma_module_t *module, closing_fn_t closing)
{
    int ret = OMPI_SUCCESS;

    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        osc_newrma_target_t *t;
        OPAL_LIST_FOREACH(t, &module->slots[s], osc_newrma_target_t) {
            int r = osc_newrma_am_target_complete(module, t, closing(t), false);
            ret = OMPI_SUCCESS == ret ? r : ret;
        }
    }
    return ret;
}

static int wait_all(ompi_osc_newrma_module_t *module, bool release)
{
    int ret = OMPI_SUCCESS;

    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        osc_newrma_target_t *t, *next;
        OPAL_LIST_FOREACH_SAFE(t, next, &module->slots[s], osc_newrma_target_t) {
            int r = osc_newrma_am_target_complete(module, t, 0, true);
            ret = OMPI_SUCCESS == ret ? r : ret;
            if (release) {
                osc_newrma_am_target_release(module, t);
            }
        }
    }
    return ret;
}

static int complete_all(ompi_osc_newrma_module_t *module, closing_fn_t closing, bool release)
{
    int ret = issue_all(module, closing);
    int ret2 = wait_all(module, release);

    return OMPI_SUCCESS != ret ? ret : ret2;
}

/* ------------------------------------------------------------------ */
/* FENCE                                                               */
/* ------------------------------------------------------------------ */

int osc_newrma_am_fence(int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    /* this path's fence always waits for its barrier: never FENCE_ISSUED */
    const osc_newrma_sync_t sync = osc_newrma_fence_sync(assert, false);
    int ret, barrier;

    osc_newrma_am_enter();
    ret = osc_newrma_epoch_check(module, sync, -1);
    if (OMPI_SUCCESS != ret) {
        osc_newrma_am_leave();
        return ret;
    }
    /* our operations are done at their targets ... */
    ret = complete_all(module, close_by_flush, true);
    osc_newrma_am_leave();
    /* ... and, after the barrier, everyone's are done at us: the remote
     * origins' because each waited for our acks before its barrier, the
     * node peers' because theirs were stores before their arrival */
    barrier = osc_newrma_node_route_fences(module->am_node) ? osc_newrma_node_route_fence(module)
                                      : module->comm->c_coll->coll_barrier(module->comm,
                                                                           module->comm->c_coll->coll_barrier_module);
    osc_newrma_epoch_apply(module, sync);
    epoch_opens(module);
    return OMPI_SUCCESS != ret ? ret : barrier;
}

/* ------------------------------------------------------------------ */
/* POST / START / COMPLETE / WAIT / TEST                               */
/* ------------------------------------------------------------------ */

int osc_newrma_am_post(struct ompi_group_t *group, int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_am_hdr_t hdr = { .kind = NEWRMA_PKT_POST, .sender = module->rank, .win = module->am_id };
    const int *origins = NULL;
    size_t count = 0;
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_POST, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    ret = osc_newrma_group_ranks(module, &module->post_groups, group, &origins, &count);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    const unsigned int turns = osc_newrma_am_call_enter();
    for (size_t i = 0 ; i < count && OMPI_SUCCESS == ret && !(assert & MPI_MODE_NOCHECK) ; ++i) {
        ret = osc_newrma_am_send_control(module, origins[i], &hdr, NULL, 0);
    }
    if (OMPI_SUCCESS == ret) {
        module->completes_expected += (int64_t) count;
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_POST);
    }
    osc_newrma_am_call_leave(turns);
    return ret;
}

/* A target's post: remembered until our complete consumes it; operations
 * queued for that target go out now. */
void osc_newrma_am_post_arrived(ompi_osc_newrma_module_t *module, int from)
{
    osc_newrma_target_t *t;

    if (module->posts_seen_count == module->posts_seen_capacity) {
        size_t capacity = module->posts_seen_capacity ? 2 * module->posts_seen_capacity : 8;
        int *grown = realloc(module->posts_seen, capacity * sizeof(int));
        if (NULL == grown) {
            return;
        }
        module->posts_seen = grown;
        module->posts_seen_capacity = capacity;
    }
    module->posts_seen[module->posts_seen_count++] = from;
    if (NEWRMA_WIN_PSCW_GRANTED == module->state && NULL != (t = osc_newrma_target_find(module, from))) {
        osc_newrma_am_granted(module, t);
    }
}

/* Take `from`'s post out of the list; false if it has not come yet. */
static bool post_consume(ompi_osc_newrma_module_t *module, int from)
{
    for (size_t i = 0 ; i < module->posts_seen_count ; ++i) {
        if (module->posts_seen[i] == from) {
            module->posts_seen[i] = module->posts_seen[--module->posts_seen_count];
            return true;
        }
    }
    return false;
}

int osc_newrma_am_start(struct ompi_group_t *group, int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret;

    /* Granted at once: this path waits for each target's post in the
     * target's element (LOCK_ISSUED until the post comes,
     * osc_newrma_am_ops.c), never for all of them at the window. */
    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_START_GRANTED, -1);
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_group_ranks(module, &module->start_groups, group, &module->start_ranks,
                                     &module->start_count);
    }
    if (OMPI_SUCCESS == ret) {
        module->lock_all_assert = assert & MPI_MODE_NOCHECK;    /* read by new target elements */
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_START_GRANTED);
        epoch_opens(module);
    }
    osc_newrma_am_call_leave(turns);
    return ret;
}

int osc_newrma_am_complete(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_COMPLETE, -1);
    if (OMPI_SUCCESS != ret) {
        osc_newrma_am_leave();
        return ret;
    }
    /* every target of the group gets its RMA_DONE, once it has posted */
    for (size_t i = 0 ; i < module->start_count ; ++i) {
        int rank = module->start_ranks[i];
        osc_newrma_target_t *t = osc_newrma_am_target_get(module, rank);
        if (NULL == t) {
            ret = OMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        while (!module->lock_all_assert && !post_consume(module, rank)) {
            osc_newrma_am_progress_once();
        }
        osc_newrma_am_granted(module, t);
        int r = osc_newrma_am_target_complete(module, t, NEWRMA_PF_DONE, false);
        ret = OMPI_SUCCESS == ret ? r : ret;
    }
    int r = complete_all(module, closed_already, true);
    ret = OMPI_SUCCESS == ret ? r : ret;
    osc_newrma_start_group_clear(module);
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_COMPLETE);
    osc_newrma_am_call_leave(turns);
    return ret;
}

/* MPI_Win_wait (`block`) or MPI_Win_test: the exposure epoch ends once
 * every origin's RMA_DONE has come; a test looks once. */
static int exposure_end(struct ompi_win_t *win, bool block, int *flag)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret;

    *flag = 0;
    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_WAIT, -1);
    if (OMPI_SUCCESS == ret) {
        while (module->am_dones < module->completes_expected) {
            osc_newrma_am_progress_once();
            if (!block) {
                break;
            }
        }
        if (module->am_dones >= module->completes_expected) {
            osc_newrma_epoch_apply(module, NEWRMA_SYNC_WAIT);
            *flag = 1;
        }
    }
    osc_newrma_am_call_leave(turns);
    return ret;
}

int osc_newrma_am_wait(struct ompi_win_t *win)
{
    int done;

    return exposure_end(win, true, &done);
}

int osc_newrma_am_test(struct ompi_win_t *win, int *flag)
{
    return exposure_end(win, false, flag);
}

/* ------------------------------------------------------------------ */
/* LOCK / UNLOCK / LOCK_ALL / UNLOCK_ALL                               */
/* ------------------------------------------------------------------ */

/* The way out of a lock or unlock of `target`: a peer on our node under
 * the node lock polls only now and then (osc_newrma_node_route.h). */
static void leave_to(ompi_osc_newrma_module_t *module, int target, unsigned int turns)
{
    if (osc_newrma_node_route_quiet_call(module, target)) {
        osc_newrma_am_leave();
    } else {
        osc_newrma_am_call_leave(turns);
    }
}

int osc_newrma_am_lock_target(int lock_type, int target, int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_target_t *t;
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_LOCK, target);
    if (OMPI_SUCCESS != ret) {
        osc_newrma_am_leave();
        return ret;
    }
    t = osc_newrma_am_target_get(module, target);
    if (NULL == t) {
        osc_newrma_am_leave();
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* lazy: no packet until an operation needs the lock */
    t->lock_type = lock_type;
    t->lock_assert = assert & MPI_MODE_NOCHECK;
    t->lock_seq = ++module->am_lock_calls;
    t->lock_state = osc_newrma_epoch_lock_called(assert);
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_LOCK);
    epoch_opens(module);
    if (target == module->rank && !t->lock_assert) {
        ret = lock_self_now(module, t);
    }
    leave_to(module, target, turns);
    return ret;
}

int osc_newrma_am_unlock(int target, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_target_t *t;
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_UNLOCK, target);
    if (OMPI_SUCCESS != ret || NULL == (t = osc_newrma_target_find(module, target))) {
        osc_newrma_am_leave();
        return OMPI_SUCCESS != ret ? ret : OMPI_ERR_RMA_SYNC;
    }
    ret = osc_newrma_am_target_complete(module, t, close_by_unlock(t), true);
    osc_newrma_am_target_release(module, t);
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_UNLOCK);
    leave_to(module, target, turns);
    return ret;
}

/* The design's window protocol for lock_all, used when the target elements
 * could not cover every process of the window (the per-target protocol
 * would have to give locks back to reuse elements): every target's shared
 * lock is taken before the epoch begins.  Like the per-target protocol it
 * never waits while holding a lock: one lock is waited for in line while
 * nothing is held, every other one is only tried (granted now or refused);
 * on a refusal everything held is released and the refused target's lock
 * is the one waited for next.  (Waiting for each in rank order instead
 * deadlocked with a program holding exclusive locks taken in another
 * order, tests/lock_mode_switch.c.)  Targets are then GRANTED from the
 * start; their elements may be flushed and freed at will.  Grants, refusals
 * and acknowledgements for targets without an element are counted on the
 * window (osc_newrma_am_ops.c, osc_newrma_am_target.c). */
static bool window_protocol_needed(const ompi_osc_newrma_module_t *module)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    return (size_t) c->target_pool_local + c->target_pool_global < (size_t) module->size;
}

/* One target's shared lock, waited for in line or only tried. */
static int window_lock_one(ompi_osc_newrma_module_t *module, int target, bool try_only, bool *granted)
{
    osc_newrma_am_hdr_t hdr = { .kind = NEWRMA_PKT_LOCK,
                                .flags = NEWRMA_PF_LOCK_SHARED | (try_only ? NEWRMA_PF_TRY : 0),
                                .sender = module->rank, .win = module->am_id };
    int answers = module->am_window_answers, refusals = module->am_window_refusals;
    int ret = osc_newrma_am_send_control(module, target, &hdr, NULL, 0);

    while (OMPI_SUCCESS == ret && answers == module->am_window_answers
           && refusals == module->am_window_refusals) {
        osc_newrma_am_progress_once();
    }
    *granted = answers != module->am_window_answers;
    return ret;
}

/* Give back the locks held: `first`'s and those of the ranks below `upto`
 * (a SYNC that unlocks each; its acknowledgement is counted). */
static int window_unlock_held(ompi_osc_newrma_module_t *module, int first, int upto)
{
    osc_newrma_am_hdr_t hdr = { .kind = NEWRMA_PKT_SYNC, .flags = NEWRMA_PF_UNLOCK,
                                .sender = module->rank, .win = module->am_id, .count = 0 };
    int answers = module->am_window_answers, sent = 0, ret = OMPI_SUCCESS;

    for (int r = 0 ; r < module->size ; ++r) {
        if (r < upto || r == first) {
            int ret2 = osc_newrma_am_send_control(module, r, &hdr, NULL, 0);
            ret = OMPI_SUCCESS == ret ? ret2 : ret;
            sent += OMPI_SUCCESS == ret2;
        }
    }
    while (module->am_window_answers - answers < sent) {
        osc_newrma_am_progress_once();
    }
    return ret;
}

static int lock_all_window(ompi_osc_newrma_module_t *module)
{
    int first = 0, ret;

    for (;;) {
        bool granted;
        int r;

        ret = window_lock_one(module, first, false, &granted);     /* nothing held: wait */
        for (r = 0 ; OMPI_SUCCESS == ret && r < module->size ; ++r) {
            if (r != first && (OMPI_SUCCESS != (ret = window_lock_one(module, r, true, &granted)) || !granted)) {
                break;
            }
        }
        if (OMPI_SUCCESS != ret || r == module->size) {
            return ret;
        }
        ret = window_unlock_held(module, first, r);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
        first = r;
    }
}

static int compare_ranks(const void *a, const void *b)
{
    return *(const int *) a - *(const int *) b;
}

/* The ranks we hold a target element for, sorted (at most the pools'
 * capacity: bounded, whatever the window's size).  Caller frees. */
static int *element_ranks(const ompi_osc_newrma_module_t *module, size_t *count)
{
    size_t n = 0;
    int *ranks;

    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        n += opal_list_get_size(&module->slots[s]);
    }
    ranks = malloc((n > 0 ? n : 1) * sizeof(int));
    *count = 0;
    for (unsigned int s = 0 ; NULL != ranks && s < module->num_slots ; ++s) {
        osc_newrma_target_t *t;
        OPAL_LIST_FOREACH(t, &module->slots[s], osc_newrma_target_t) {
            ranks[(*count)++] = t->rank;
        }
    }
    if (NULL != ranks) {
        qsort(ranks, *count, sizeof(int), compare_ranks);
    }
    return ranks;
}

/* Window protocol: targets with an element are unlocked through it (the
 * UNLOCK rides on their last operation, as in the per-target protocol);
 * every other one by a SYNC, whose acknowledgement is counted on the
 * window.  All are issued before any is waited for. */
static int unlock_all_window(ompi_osc_newrma_module_t *module)
{
    osc_newrma_am_hdr_t hdr = { .kind = NEWRMA_PKT_SYNC, .flags = NEWRMA_PF_UNLOCK,
                                .sender = module->rank, .win = module->am_id, .count = 0 };
    size_t nelements, next = 0;
    int *with_element = element_ranks(module, &nelements);
    int ret, ret2, syncs = 0;

    if (NULL == with_element) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ret = issue_all(module, close_by_unlock);
    module->am_window_answers = 0;
    for (int r = 0 ; r < module->size ; ++r) {
        if (next < nelements && with_element[next] == r) {
            ++next;
            continue;
        }
        ret2 = osc_newrma_am_send_control(module, r, &hdr, NULL, 0);
        ret = OMPI_SUCCESS == ret ? ret2 : ret;
        syncs += OMPI_SUCCESS == ret2;
    }
    free(with_element);
    ret2 = wait_all(module, true);
    while (module->am_window_answers < syncs) {
        osc_newrma_am_progress_once();
    }
    return OMPI_SUCCESS != ret ? ret : ret2;
}

int osc_newrma_am_lock_all(int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    /* NOCHECK takes no lock: granted at once */
    const osc_newrma_sync_t sync = (assert & MPI_MODE_NOCHECK) ? NEWRMA_SYNC_LOCK_ALL_GRANTED : NEWRMA_SYNC_LOCK_ALL;
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, sync, -1);
    if (OMPI_SUCCESS != ret) {
        osc_newrma_am_leave();
        return ret;
    }
    module->lock_all_assert = assert & MPI_MODE_NOCHECK;
    /* a native window's locks are lock words, never the handler's */
    module->am_lock_all_window = !module->lock_all_assert && window_protocol_needed(module)
                                 && !osc_newrma_native_on(module);
    epoch_opens(module);
    osc_newrma_epoch_apply(module, sync);
    if (module->am_lock_all_window) {
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_ISSUE);
        ret = lock_all_window(module);
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_GRANT);
    }
    if (!module->lock_all_assert && !module->am_lock_all_window) {
        /* per target and lazy: a target is locked by the first operation to
         * it; ourselves at once (local loads and stores) */
        osc_newrma_target_t *self = osc_newrma_am_target_get(module, module->rank);
        ret = NULL == self ? OMPI_ERR_OUT_OF_RESOURCE : lock_self_now(module, self);
    }
    osc_newrma_am_call_leave(turns);
    return ret;
}

int osc_newrma_am_unlock_all(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_UNLOCK_ALL, -1);
    if (OMPI_SUCCESS != ret) {
        osc_newrma_am_leave();
        return ret;
    }
    ret = module->am_lock_all_window ? unlock_all_window(module) : complete_all(module, close_by_unlock, true);
    module->am_lock_all_window = false;
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_UNLOCK_ALL);
    osc_newrma_am_call_leave(turns);
    return ret;
}

/* ------------------------------------------------------------------ */
/* FLUSH family and WIN_SYNC                                           */
/* ------------------------------------------------------------------ */

int osc_newrma_am_flush(int target, struct ompi_win_t *win)
{
    int ret;

    if (osc_newrma_node_route_flush(osc_newrma_module(win), target, &ret)) {
        return ret;
    }
    return osc_newrma_am_flush_packets(target, win);
}

int osc_newrma_am_flush_packets(int target, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_target_t *t;
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_FLUSH, target);
    if (OMPI_SUCCESS == ret && NULL != (t = osc_newrma_target_find(module, target))) {
        /* no element: nothing was done to that target in this epoch */
        ret = osc_newrma_am_target_complete(module, t, NEWRMA_PF_FLUSH, true);
    }
    osc_newrma_am_call_leave(turns);
    return ret;
}

int osc_newrma_am_flush_all(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret;

    const unsigned int turns = osc_newrma_am_call_enter();
    ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_FLUSH_ALL, -1);
    if (OMPI_SUCCESS == ret) {
        ret = complete_all(module, close_by_flush, false);
    }
    osc_newrma_am_call_leave(turns);
    return ret;
}

/* Local completion needs the data of gets in and the sends done; a flush
 * gives that (and a little more: the target's acknowledgement). */
int osc_newrma_am_flush_local(int target, struct ompi_win_t *win)
{
    return osc_newrma_am_flush(target, win);
}

int osc_newrma_am_flush_local_all(struct ompi_win_t *win)
{
    return osc_newrma_am_flush_all(win);
}

/* A memory barrier, and a turn of progress: a program may wait for its
 * window to change by calling this in a loop. */
int osc_newrma_am_sync(struct ompi_win_t *win)
{
    (void) win;
    osc_newrma_am_call_leave(osc_newrma_am_call_enter());
    osc_newrma_fence_seq_cst();
    return OMPI_SUCCESS;
}
