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
 * osc/newrma: synchronization of the node paths (load/store and
 * single-copy windows): the FENCE / PSCW / LOCK / LOCK_ALL / FLUSH
 * algorithms of mpich-new-rma-design.txt over the node segment.  Which
 * call is legal in which state and where it leads is the epoch machine's
 * (osc_newrma_epoch.c, shared with the active-message path,
 * osc_newrma_am_sync.c): each call here asks it first
 * (osc_newrma_epoch_check; OMPI_ERR_RMA_SYNC leaves the window as it was)
 * and tells it when done (osc_newrma_epoch_apply).  This file also holds
 * the node path's grants of issued epochs and the PSCW group translation
 * both paths use.
 *
 * Memory barriers follow the design's "RMA + shared memory" section:
 * MEM_SYNC on both sides of a fence's PROC_SYNC, before PROC_SYNC in post and
 * complete, after it in start and wait, after the lock is granted and before
 * it is released, and in every flush.  The PROC_SYNCs themselves go through
 * the node segment: osc_newrma_active_target.c (barrier, PSCW notices) and
 * osc_newrma_lock.c (locks).
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "osc_newrma.h"
#include "osc_newrma_epoch.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_lock.h"
#include "osc_newrma_active_target.h"

/* FENCE_ISSUED -> FENCE_GRANTED: everyone has arrived at the fence. */
void osc_newrma_fence_grant(ompi_osc_newrma_module_t *module)
{
    if (NEWRMA_WIN_FENCE_ISSUED == osc_newrma_epoch_state(module)) {
        osc_newrma_barrier_wait(module);
        /* several threads' first operations may get here at once: the
         * grant is idempotent, its store atomic */
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_GRANT);
    }
}

/* ------------------------------------------------------------------ */
/* FENCE                                                               */
/* ------------------------------------------------------------------ */

int ompi_osc_newrma_fence(int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    /* a fence that opens an epoch with nothing before it (NOPRECEDE) does
     * not wait for the barrier: the first operation does (FENCE_ISSUED) */
    const osc_newrma_sync_t sync = osc_newrma_fence_sync(assert, true);
    int ret = osc_newrma_epoch_check(module, sync, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }

    /* The epoch's operations are complete at the origin by now: loads and
     * stores at their call, and the single-copy table issues its batch and
     * completes a put or get handed to a target before it calls this
     * (cma_fence, osc_newrma_ops.c).  So a fence only orders memory and
     * synchronizes processes: arrive at the window's node barrier
     * (MEM_SYNC first, inside). */
    /* Episodes follow each other, so nobody may arrive at the next one
     * before the previous one completed for it: an unfinished episode (a
     * NOPRECEDE fence nobody waited for) is waited for first -- with the
     * dissemination flags, its later rounds' signals, which the others wait
     * for, are sent only while this process waits. */
    osc_newrma_barrier_wait(module);
    osc_newrma_barrier_arrive(module);
    if (NEWRMA_SYNC_FENCE_NOPRECEDE == sync) {
        osc_newrma_epoch_apply(module, sync);
        return OMPI_SUCCESS;
    }
    /* A NOSUCCEED fence opens no fence epoch whose first operation could
     * wait, yet whatever epoch comes next (a lock, say) may reach a target
     * only after that target called this fence (its stores before it
     * included): so even NOPRECEDE | NOSUCCEED waits here. */
    osc_newrma_barrier_wait(module);       /* MEM_SYNC after, inside */
    osc_newrma_epoch_apply(module, sync);
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* POST / START / COMPLETE / WAIT / TEST                               */
/* ------------------------------------------------------------------ */

/* Translate a group to sorted ranks of the window's communicator. */
static int group_to_comm_ranks(ompi_osc_newrma_module_t *module, ompi_group_t *group, int **ranks_out,
                               size_t *count_out)
{
    int count = ompi_group_size(group);
    int *in = NULL, *out = NULL;
    int ret = OMPI_ERR_OUT_OF_RESOURCE;

    *ranks_out = NULL;
    *count_out = 0;
    if (count <= 0) {
        return OMPI_SUCCESS;
    }
    in = malloc(sizeof(int) * (size_t) count);
    out = malloc(sizeof(int) * (size_t) count);
    if (NULL == in || NULL == out) {
        goto cleanup;
    }
    for (int i = 0 ; i < count ; ++i) {
        in[i] = i;
    }
    ret = ompi_group_translate_ranks(group, count, in, module->group, out);
    if (OMPI_SUCCESS != ret) {
        goto cleanup;
    }
    for (int i = 0 ; i < count ; ++i) {
        if (MPI_UNDEFINED == out[i]) {
            ret = MPI_ERR_GROUP;    /* a process that is not in the window */
            goto cleanup;
        }
    }
    qsort(out, (size_t) count, sizeof(int), osc_newrma_int_compare);
    *ranks_out = out;
    *count_out = (size_t) count;
    out = NULL;
    ret = OMPI_SUCCESS;
cleanup:
    free(in);
    free(out);
    return ret;
}

void osc_newrma_group_cache_release(osc_newrma_group_cache_t *cache)
{
    if (NULL != cache->group) {
        OBJ_RELEASE(cache->group);
    }
    free(cache->ranks);
    *cache = (osc_newrma_group_cache_t) { .group = NULL };
}

/* A group not in `cache`: translate it and cache it instead (the hit is
 * osc_newrma_group_ranks, in line). */
int osc_newrma_group_cache_fill(ompi_osc_newrma_module_t *module, osc_newrma_group_cache_t *cache,
                                ompi_group_t *group)
{
    int *ranks;
    size_t count;
    int ret = group_to_comm_ranks(module, group, &ranks, &count);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    osc_newrma_group_cache_release(cache);
    OBJ_RETAIN(group);
    *cache = (osc_newrma_group_cache_t) { .group = group, .ranks = ranks, .count = count };
    return OMPI_SUCCESS;
}

void osc_newrma_start_group_clear(ompi_osc_newrma_module_t *module)
{
    module->start_ranks = NULL;
    module->start_count = 0;
}

int ompi_osc_newrma_start(struct ompi_group_t *group, int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    const osc_newrma_sync_t sync = (assert & MPI_MODE_NOCHECK) ? NEWRMA_SYNC_START_GRANTED : NEWRMA_SYNC_START;
    int ret = osc_newrma_epoch_check(module, sync, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    ret = osc_newrma_group_ranks(module, &module->start_groups, group, &module->start_ranks, &module->start_count);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* NOCHECK: the matching posts were NOCHECK too, and expect counted
     * completions.  Otherwise no post is awaited here (the design's
     * PSCW_ISSUED): the epoch's first operation or its complete waits, so
     * whatever the origin does between start and there overlaps the posts'
     * travel. */
    ret = osc_newrma_start_matches_reset(module, module->start_count,
                                         (assert & MPI_MODE_NOCHECK) ? NEWRMA_POST_RING : NEWRMA_POST_UNSEEN);
    if (OMPI_SUCCESS != ret) {
        osc_newrma_start_group_clear(module);
        return ret;
    }
    if (assert & MPI_MODE_NOCHECK) {
        osc_newrma_fence_seq_cst();
    }
    osc_newrma_epoch_apply(module, sync);
    return OMPI_SUCCESS;
}

/* Wait for the posts of a started epoch (once, whichever thread comes
 * first; the others find it granted). */
int osc_newrma_pscw_grant_slow(ompi_osc_newrma_module_t *module)
{
    int ret = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&module->grant_lock);
    if (NEWRMA_WIN_PSCW_ISSUED == osc_newrma_epoch_state(module)) {
        ret = osc_newrma_start_wait_posts(module, module->start_ranks, module->start_count);
        if (OMPI_SUCCESS == ret) {
            osc_newrma_epoch_apply(module, NEWRMA_SYNC_GRANT);    /* stored with release */
        }
    }
    OPAL_THREAD_UNLOCK(&module->grant_lock);
    return ret;
}

/* MPI_Win_complete's first step: OMPI_ERR_RMA_SYNC outside a PSCW access
 * epoch; an epoch that issued no operation (still PSCW_ISSUED) answers
 * early the posts it may (osc_newrma_active_target.c); the others are waited for. */
int osc_newrma_complete_grant(ompi_osc_newrma_module_t *module)
{
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_COMPLETE, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (NEWRMA_WIN_PSCW_ISSUED == module->state) {
        osc_newrma_complete_early(module, module->start_ranks, module->start_count);
    }
    return osc_newrma_pscw_grant(module);
}

int osc_newrma_complete_signal_epoch(ompi_osc_newrma_module_t *module)
{
    int ret = osc_newrma_complete_grant(module);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* operations are complete already (or owe only answers that the
     * targets serve before their waits return); tell each target
     * (MEM_SYNC inside) */
    osc_newrma_complete_signal(module, module->start_ranks, module->start_count);
    return OMPI_SUCCESS;
}

void osc_newrma_complete_close_epoch(ompi_osc_newrma_module_t *module)
{
    osc_newrma_start_group_clear(module);
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_COMPLETE);
}

int ompi_osc_newrma_complete(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_complete_signal_epoch(module);

    if (OMPI_SUCCESS == ret) {
        osc_newrma_complete_close_epoch(module);
    }
    return ret;
}

int ompi_osc_newrma_post(struct ompi_group_t *group, int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    const int *origins = NULL;
    size_t count = 0;
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_POST, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (group != module->post_groups.group) {
        module->post_box_current = false;    /* the box lists another group's ranks */
    }
    ret = osc_newrma_group_ranks(module, &module->post_groups, group, &origins, &count);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (!(assert & MPI_MODE_NOCHECK)) {
        ret = osc_newrma_post_signal(module, origins, count);   /* box or ring, and what wait expects */
    } else {
        /* the matching starts are NOCHECK too: they complete through the counter */
        module->completes_expected += (int64_t) count;
        osc_newrma_fence_seq_cst();
    }
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_POST);
    return OMPI_SUCCESS;
}

int ompi_osc_newrma_wait(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    unsigned int spins = 0;
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_WAIT, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* every origin has completed, and left nothing in our mailbox to apply */
    while (!osc_newrma_completions_arrived(module) || !osc_newrma_mailbox_drained(module)) {
        osc_newrma_mailbox_backoff(module, &spins);
    }
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_WAIT);
    return OMPI_SUCCESS;
}

int ompi_osc_newrma_test(struct ompi_win_t *win, int *flag)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_WAIT, -1);

    *flag = 0;
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (osc_newrma_completions_arrived(module) && osc_newrma_mailbox_drained(module)) {
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_WAIT);
        *flag = 1;
    }
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* LOCK / UNLOCK                                                       */
/* ------------------------------------------------------------------ */

/* (Field by field: a compound literal is built on the stack in byte
 * stores and copied with wide loads, which stall store forwarding and
 * made the whole lock/unlock pair 80 % slower.) */
static void lock_record_set(osc_newrma_lock_record_t *held, int lock_type, int target, int assert)
{
    held->in_use = true;
    held->nocheck = 0 != (assert & MPI_MODE_NOCHECK);
    held->exclusive = MPI_LOCK_EXCLUSIVE == lock_type;
    held->alone = held->exclusive && !osc_newrma_thread_multiple();
    held->rank = target;
}

/* A lock beside the first: recorded in a target element, as the design's
 * per-target epoch has it.  The first lock of an epoch (almost every
 * program's only one) lives in the module: no element to take, reset,
 * link and give back on the path of every lock/unlock pair. */
static __opal_attribute_noinline__ int lock_other(ompi_osc_newrma_module_t *module, int lock_type, int target,
                                                  int assert)
{
    osc_newrma_lock_record_t held;
    osc_newrma_target_t *element = osc_newrma_target_add(module, target);

    if (NULL == element) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    lock_record_set(&held, lock_type, target, assert);
    (void) osc_newrma_lock_acquire(module, &held);
    element->lock_type = lock_type;
    element->lock_assert = assert & MPI_MODE_NOCHECK;
    element->lock_ticket = held.ticket;
    element->lock_state = NEWRMA_LOCK_GRANTED;     /* taken in the call */
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_LOCK);
    return OMPI_SUCCESS;
}

/* The first lock of an epoch, recorded in the module; the lock itself is
 * taken in the segment, no message (MEM_SYNC after the grant, inside).
 * In line in MPI_Win_lock, with the uncontended lock (osc_newrma_lock.h). */
static inline __opal_attribute_always_inline__ int lock_first(ompi_osc_newrma_module_t *module, int lock_type,
                                                               int target, int assert)
{
    lock_record_set(&module->first_lock, lock_type, target, assert);
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_LOCK);
    return osc_newrma_lock_acquire(module, &module->first_lock);
}

int ompi_osc_newrma_lock(int lock_type, int target, int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_LOCK, target);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    if (OPAL_UNLIKELY(module->first_lock.in_use)) {
        return lock_other(module, lock_type, target, assert);
    }
    return lock_first(module, lock_type, target, assert);
}

/* Unlock a target other than the first lock's. */
static __opal_attribute_noinline__ int unlock_other(ompi_osc_newrma_module_t *module, int target)
{
    osc_newrma_target_t *element = osc_newrma_epoch_other_lock(module, target);
    osc_newrma_lock_record_t held;

    if (NULL == element) {
        return OMPI_ERR_RMA_SYNC;      /* (the epoch machine said it is locked) */
    }
    lock_record_set(&held, element->lock_type, target, element->lock_assert);
    held.ticket = element->lock_ticket;
    held.word = osc_newrma_shm_lock(&module->shm, target);
    osc_newrma_target_remove(module, element);
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_UNLOCK);
    return osc_newrma_lock_release(module, &held);
}

int ompi_osc_newrma_unlock(int target, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_UNLOCK, target);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    if (OPAL_UNLIKELY(!osc_newrma_first_lock_is(module, target))) {
        return unlock_other(module, target);
    }
    module->first_lock.in_use = module->first_lock.alone = false;
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_UNLOCK);
    return osc_newrma_lock_release(module, &module->first_lock);
}

/* ------------------------------------------------------------------ */
/* LOCK_ALL / UNLOCK_ALL                                               */
/* ------------------------------------------------------------------ */

/* Every target's lock is taken in the call (the design's window protocol
 * at once): the epoch is LOCK_ALL_GRANTED when the call returns. */
int ompi_osc_newrma_lock_all(int assert, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_LOCK_ALL_GRANTED, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    module->lock_all_assert = assert & MPI_MODE_NOCHECK;
    if (!module->lock_all_assert) {
        osc_newrma_lock_all_acquire(module);
    } else {
        osc_newrma_fence_seq_cst();
    }
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_LOCK_ALL_GRANTED);
    return OMPI_SUCCESS;
}

int ompi_osc_newrma_unlock_all(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_epoch_check(module, NEWRMA_SYNC_UNLOCK_ALL, -1);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (!module->lock_all_assert) {
        osc_newrma_lock_all_release(module);
    } else {
        osc_newrma_fence_seq_cst();
    }
    osc_newrma_epoch_apply(module, NEWRMA_SYNC_UNLOCK_ALL);
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* FLUSH family and WIN_SYNC                                           */
/* ------------------------------------------------------------------ */

int ompi_osc_newrma_flush(int target, struct ompi_win_t *win)
{
    int ret = osc_newrma_epoch_check(osc_newrma_module(win), NEWRMA_SYNC_FLUSH, target);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_fence_seq_cst();     /* MEM_SYNC: our operations are visible before any later PROC_SYNC */
    return OMPI_SUCCESS;
}

int ompi_osc_newrma_flush_all(struct ompi_win_t *win)
{
    int ret = osc_newrma_epoch_check(osc_newrma_module(win), NEWRMA_SYNC_FLUSH_ALL, -1);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_fence_seq_cst();
    return OMPI_SUCCESS;
}

int ompi_osc_newrma_flush_local(int target, struct ompi_win_t *win)
{
    return ompi_osc_newrma_flush(target, win);
}

int ompi_osc_newrma_flush_local_all(struct ompi_win_t *win)
{
    return ompi_osc_newrma_flush_all(win);
}

int ompi_osc_newrma_sync(struct ompi_win_t *win)
{
    (void) win;
    osc_newrma_fence_seq_cst();     /* MEM_SYNC between local loads/stores and RMA */
    return OMPI_SUCCESS;
}
