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
 * libmpix_newrma: notified RMA (mpix_newrma.h, docs/notified-rma.md).
 *
 * The counters of a window live in a companion window the library
 * allocates at attach over the same processes (MPI_Win_allocate, or
 * MPI_Win_allocate_shared for a shared window: with newrma, memory in the
 * node segment).  Three paths, chosen at attach by
 * every process together (their increments must be atomic with each
 * other):
 *  - memory: the window is newrma's and reaches every process by memory
 *    on this node (the component's entry point says so,
 *    osc_newrma_notify_entry.h) and every counter is mapped here
 *    (MPI_Win_shared_query on the companion).  An operation is issued,
 *    completed at its target by the component (in any epoch), then the
 *    target's counter is incremented with release order; get_value loads it
 *    with acquire order.
 *  - message: a newrma window of the active-message path (processes on
 *    several nodes, or treated so).  The component sends the operation
 *    as one packet carrying the counter's index; the target's handler
 *    applies the data, then increments the counter with release order.
 *    The counters are this process's companion memory, handed to the
 *    component at attach; get_value turns the component's progress, then
 *    loads its counter with acquire order.
 *  - fallback: any other window.  The operation, MPI_Win_flush of the
 *    target, then MPI_Accumulate(+1) on the companion (kept in a lock_all
 *    epoch) and its flush; get_value is MPI_Fetch_and_op(NO_OP).  Needs a
 *    passive-target epoch on the window (MPI_Win_flush is illegal in the
 *    others): where the component refuses the flush, the call returns
 *    MPI_ERR_RMA_SYNC and does nothing.
 */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpix_newrma.h"
#include "mpix_newrma_internal.h"
#include "osc_newrma_atomic.h"
#include "osc_newrma_notify_entry.h"

typedef struct {
    MPI_Win counters;            /* the companion window, in a lock_all epoch */
    MPI_Comm comm;               /* the window's processes: the fallback's progress */
    int64_t *mine;               /* this process's counters (companion memory) */
    int64_t **peer;              /* memory path: each rank's counters; NULL: another path */
    int path;                    /* MPIX_NOTIFY_PATH_* */
    const osc_newrma_notify_entry_t *entry;
    int count;
    int rank;
    int epoch_held;              /* always in a passive-target epoch (mpix_newrma_epoch_held) */
} notify_state_t;

/* A tag of its own for MPI_Comm_create_group at attach, so that it never
 * matches the user's traffic on MPI_COMM_WORLD */
#define NOTIFY_COMM_TAG 0x6e6f74

static int notify_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t notify_keyval_once = PTHREAD_ONCE_INIT;

/* Every state_free bumps this generation: a thread's cached state (below)
 * is good only while the generation it was read under is current */
static int64_t notify_generation;

/* This thread's last state_of answer: MPI_Win_get_attr takes Open MPI's
 * attribute lock, which every notified call and every poll of a counter
 * would otherwise pay (and contend for between threads).  Per thread, so
 * that threads never share it; only states found are kept, so an attach
 * needs no bump. */
typedef struct {
    MPI_Win win;
    notify_state_t *state;
    int64_t generation;
} state_cache_t;

static _Thread_local state_cache_t cached_state = { MPI_WIN_NULL, NULL, -1 };

static void state_free(notify_state_t *state)
{
    /* release: a thread that sees the new generation drops its cached
     * pointer before it could reach the memory freed below */
    osc_newrma_fetch_add_release(&notify_generation, 1);
    /* the window's module, and with it the handler's hold on the counters,
     * is gone when MPI_Win_free deletes the attribute: detach takes the
     * counters back itself */
    MPI_Win_unlock_all(state->counters);
    MPI_Win_free(&state->counters);
    MPI_Comm_free(&state->comm);
    free(state->peer);
    free(state);
}

/* MPI_Win_free of a window still attached: drop its counters too */
static int state_delete(MPI_Win win, int keyval, void *value, void *extra)
{
    (void) win;
    (void) keyval;
    (void) extra;
    state_free(value);
    return MPI_SUCCESS;
}

static void keyval_create(void)
{
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, state_delete, &notify_keyval, NULL);
}

/* The window's state, or NULL when nothing is attached */
static notify_state_t *state_looked_up(MPI_Win win)
{
    notify_state_t *state = NULL;
    int flag = 0;

    pthread_once(&notify_keyval_once, keyval_create);
    if (MPI_SUCCESS != MPI_Win_get_attr(win, notify_keyval, &state, &flag) || !flag) {
        return NULL;
    }
    return state;
}

/* state_looked_up, from this thread's cache while no state was freed
 * since (a detach or free racing with a call on the same window is
 * erroneous in MPI: nothing more to guard) */
static notify_state_t *state_of(MPI_Win win)
{
    int64_t generation = osc_newrma_load_acquire(&notify_generation);

    if (cached_state.win != win || cached_state.generation != generation) {
        notify_state_t *state = state_looked_up(win);
        if (NULL == state) {
            return NULL;
        }
        cached_state = (state_cache_t) { win, state, generation };
    }
    return cached_state.state;
}

static int info_value(MPI_Info info, const char *key, char *value, int size)
{
    int flag = 0;
#if MPI_VERSION >= 4
    int length = size;
    MPI_Info_get_string(info, key, &length, value, &flag);
#else
    MPI_Info_get(info, key, size - 1, value, &flag);
#endif
    return flag;
}

/* newrma's entry point, published in the window's info; NULL for a window
 * of another component (or whose entry table is older than this library's) */
static const osc_newrma_notify_entry_t *entry_of(MPI_Win win)
{
    const osc_newrma_notify_entry_t *entry = NULL;
    char value[MPI_MAX_INFO_VAL + 1] = "";
    MPI_Info info;
    void *address = NULL;
    int version = 0;

    if (MPI_SUCCESS != MPI_Win_get_info(win, &info)) {
        return NULL;
    }
    if (info_value(info, OSC_NEWRMA_NOTIFY_INFO_KEY, value, (int) sizeof(value))
        && 2 == sscanf(value, "%d:%p", &version, &address) && version >= OSC_NEWRMA_NOTIFY_ENTRY_VERSION) {
        entry = address;
    }
    MPI_Info_free(&info);
    return entry;
}

/* Map every process's counters, if this process can: the window is
 * newrma's, reaches its peers by memory, and so does the companion. */
static int map_peer_counters(notify_state_t *state, MPI_Win win, int size)
{
    MPI_Aint bytes;
    int disp_unit;

    if (NULL == state->entry || !state->entry->reaches_by_memory(win)) {
        return 0;
    }
    state->peer = calloc((size_t) size, sizeof(*state->peer));
    if (NULL == state->peer) {
        return 0;
    }
    for (int r = 0 ; r < size ; ++r) {
        if (MPI_SUCCESS != MPI_Win_shared_query(state->counters, r, &bytes, &disp_unit, &state->peer[r])
            || NULL == state->peer[r]) {
            return 0;
        }
    }
    return 1;
}

/* The paths from worst to best: every process takes the best all can */
static const int path_ranked[] = { MPIX_NOTIFY_PATH_FALLBACK, MPIX_NOTIFY_PATH_MESSAGE, MPIX_NOTIFY_PATH_MEMORY };

/* The rank in path_ranked of the best path this process can take */
static int path_possible(notify_state_t *state, MPI_Win win, int size)
{
    state->entry = entry_of(win);
    if (map_peer_counters(state, win, size)) {
        return 2;
    }
    return NULL != state->entry && state->entry->version >= OSC_NEWRMA_NOTIFY_ENTRY_MESSAGE ? 1 : 0;
}

/* The path every process can take; on the message path the component
 * holds this process's counters before any origin may notify (the
 * allreduce after it is attach's last step everywhere) */
static int choose_path(notify_state_t *state, MPI_Win win, MPI_Comm comm, int size)
{
    int mine = path_possible(state, win, size), all = 0;
    int ret = MPI_SUCCESS;

    if (MPIX_NOTIFY_PATH_MESSAGE == path_ranked[mine]) {
        ret = state->entry->counters_attach(win, state->counters, state->mine, state->count);
        mine = MPI_SUCCESS == ret ? mine : 0;
    }
    ret = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    state->path = path_ranked[MPI_SUCCESS == ret ? all : 0];
    if (MPIX_NOTIFY_PATH_MEMORY != state->path) {
        free(state->peer);
        state->peer = NULL;
    }
    if (MPIX_NOTIFY_PATH_MESSAGE == path_ranked[mine] && MPIX_NOTIFY_PATH_MESSAGE != state->path) {
        state->entry->counters_attach(win, MPI_WIN_NULL, NULL, 0);
    }
    return ret;
}

/* The companion window: `count` zeroed counters per process (at least one
 * word, so that every process has memory to map), open for the fallback's
 * accumulates for its whole life; zeroed before anyone can increment.  Of
 * the window's flavor where that is allocate_shared (a newrma shared
 * window is load/store on any setting; an allocate window may not be). */
static int counters_create(notify_state_t *state, MPI_Win win, MPI_Comm comm)
{
    MPI_Aint words = state->count > 0 ? state->count : 1;
    MPI_Aint bytes = words * (MPI_Aint) sizeof(int64_t);
    int *flavor = NULL, flag = 0, ret;

    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    if (flag && MPI_WIN_FLAVOR_SHARED == *flavor) {
        ret = MPI_Win_allocate_shared(bytes, (int) sizeof(int64_t), MPI_INFO_NULL, comm, &state->mine,
                                      &state->counters);
    } else {
        ret = MPI_Win_allocate(bytes, (int) sizeof(int64_t), MPI_INFO_NULL, comm, &state->mine, &state->counters);
    }
    if (MPI_SUCCESS != ret) {
        return ret;
    }
    MPI_Win_set_errhandler(state->counters, MPI_ERRORS_RETURN);
    for (MPI_Aint i = 0 ; i < words ; ++i) {
        osc_newrma_store_relaxed(&state->mine[i], 0);
    }
    ret = MPI_Win_lock_all(MPI_MODE_NOCHECK, state->counters);
    return MPI_SUCCESS == ret ? MPI_Barrier(comm) : ret;
}

/* Is every process of `group` in MPI_COMM_WORLD?  (The same answer on
 * every process of the window: they all see one group.) */
static int group_in_world(MPI_Group group)
{
    MPI_Group world, common;
    int size, common_size;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_intersection(group, world, &common);
    MPI_Group_size(group, &size);
    MPI_Group_size(common, &common_size);
    MPI_Group_free(&common);
    MPI_Group_free(&world);
    return size == common_size;
}

/* The window's processes, in its rank order, as a communicator.  MPI gives
 * a window's group but not its communicator: MPI_COMM_WORLD holds every
 * process of a program that spawns none (docs/notified-rma.md); a window
 * with processes outside it gets MPI_ERR_GROUP on all of them. */
static int window_comm(MPI_Win win, MPI_Comm *comm)
{
    MPI_Group group;
    int ret = MPI_Win_get_group(win, &group);

    if (MPI_SUCCESS != ret) {
        return ret;
    }
    ret = group_in_world(group) ? MPI_Comm_create_group(MPI_COMM_WORLD, group, NOTIFY_COMM_TAG, comm)
                                : MPI_ERR_GROUP;
    MPI_Group_free(&group);
    return ret;
}

static int attach(MPI_Win win, int notification_num, notify_state_t **out)
{
    notify_state_t *state = calloc(1, sizeof(*state));
    int ret, size;

    if (NULL == state) {
        return MPI_ERR_NO_MEM;
    }
    state->count = notification_num;
    ret = window_comm(win, &state->comm);
    if (MPI_SUCCESS != ret) {
        free(state);
        return ret;
    }
    MPI_Comm_rank(state->comm, &state->rank);
    MPI_Comm_size(state->comm, &size);
    ret = counters_create(state, win, state->comm);
    ret = MPI_SUCCESS == ret ? choose_path(state, win, state->comm, size) : ret;
    if (MPI_SUCCESS != ret) {
        MPI_Comm_free(&state->comm);
        free(state->peer);
        free(state);
        return ret;
    }
    *out = state;
    return MPI_SUCCESS;
}

int MPIX_Win_notify_attach(MPI_Win win, int notification_num, MPI_Info info)
{
    notify_state_t *state = NULL;
    int ret;

    (void) info;
    if (notification_num < 0 || NULL != state_of(win)) {
        return win_error(win, MPI_ERR_ARG);
    }
    ret = attach(win, notification_num, &state);
    ret = MPI_SUCCESS == ret ? MPI_Win_set_attr(win, notify_keyval, state) : ret;
    return win_error(win, ret);
}

int MPIX_Win_notify_detach(MPI_Win win)
{
    notify_state_t *state = state_of(win);

    if (NULL == state) {
        return win_error(win, MPI_ERR_ARG);
    }
    if (MPIX_NOTIFY_PATH_MESSAGE == state->path) {
        state->entry->counters_attach(win, MPI_WIN_NULL, NULL, 0);
    }
    return win_error(win, MPI_Win_delete_attr(win, notify_keyval));
}

/* The attached state and a valid counter index, or an error class */
static int state_checked(MPI_Win win, int notification_idx, notify_state_t **state)
{
    *state = state_of(win);
    if (NULL == *state) {
        return MPI_ERR_ARG;
    }
    return notification_idx < 0 || notification_idx >= (*state)->count ? MPI_ERR_ARG : MPI_SUCCESS;
}

int mpix_newrma_epoch_held(MPI_Win win)
{
    notify_state_t *state = state_of(win);

    if (NULL == state) {
        return MPI_ERR_ARG;
    }
    state->epoch_held = 1;
    return MPI_SUCCESS;
}

int mpix_newrma_held_counters(MPI_Win win)
{
    notify_state_t *state = state_of(win);

    return NULL != state && state->epoch_held ? state->count : -1;
}

int MPIX_Win_notify_path(MPI_Win win, int *path)
{
    notify_state_t *state = state_of(win);

    if (NULL == state) {
        return win_error(win, MPI_ERR_ARG);
    }
    *path = state->path;
    return MPI_SUCCESS;
}

int MPIX_Win_notify_get_value(MPI_Win win, int notification_idx, MPI_Count *value)
{
    notify_state_t *state;
    int64_t now = 0;
    int progressed = 0;
    int ret = state_checked(win, notification_idx, &state);

    if (MPI_SUCCESS != ret) {
        return win_error(win, ret);
    }
    if (MPIX_NOTIFY_PATH_FALLBACK != state->path) {
        /* the message path's handler runs from newrma's progress, which
         * may have no other driver while the target only polls */
        if (MPIX_NOTIFY_PATH_MESSAGE == state->path) {
            state->entry->progress(win);
        }
        /* pairs with the origins' (or the handler's) release increments:
         * their data is visible */
        *value = osc_newrma_load_acquire(&state->mine[notification_idx]);
        return MPI_SUCCESS;
    }
    /* a target polling its counter must let MPI progress: the window's
     * component may apply the origins' operations only from its progress
     * (the companion's own calls may not drive it: a companion reached by
     * load/store beside a window of messages) */
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, state->comm, &progressed, MPI_STATUS_IGNORE);
    ret = MPI_Fetch_and_op(NULL, &now, MPI_INT64_T, state->rank, notification_idx, MPI_NO_OP, state->counters);
    ret = MPI_SUCCESS == ret ? MPI_Win_flush(state->rank, state->counters) : ret;
    osc_newrma_fence_acquire();
    *value = now;
    return win_error(win, ret);
}

int MPIX_Win_notify_set_value(MPI_Win win, int notification_idx, MPI_Count value)
{
    notify_state_t *state;
    int64_t now = value;
    int ret = state_checked(win, notification_idx, &state);

    if (MPI_SUCCESS != ret) {
        return win_error(win, ret);
    }
    if (MPIX_NOTIFY_PATH_FALLBACK != state->path) {
        osc_newrma_store_release(&state->mine[notification_idx], now);
        return MPI_SUCCESS;
    }
    ret = MPI_Accumulate(&now, 1, MPI_INT64_T, state->rank, notification_idx, 1, MPI_INT64_T, MPI_REPLACE,
                         state->counters);
    ret = MPI_SUCCESS == ret ? MPI_Win_flush(state->rank, state->counters) : ret;
    return win_error(win, ret);
}

static int issue(const notify_op_t *op, MPI_Win win)
{
    switch (op->kind) {
    case OSC_NEWRMA_NOTIFY_PUT:
        return MPI_Put(op->origin_addr, op->origin_count, op->origin_datatype, op->target_rank, op->target_disp,
                       op->target_count, op->target_datatype, win);
    case OSC_NEWRMA_NOTIFY_GET:
        return MPI_Get(op->origin_addr, op->origin_count, op->origin_datatype, op->target_rank, op->target_disp,
                       op->target_count, op->target_datatype, win);
    default:
        return MPI_Accumulate(op->origin_addr, op->origin_count, op->origin_datatype, op->target_rank,
                              op->target_disp, op->target_count, op->target_datatype, op->op, win);
    }
}

/* Is the window in a passive-target epoch towards `target`?  Only there
 * may the fallback flush; asked before issuing anything, so that a refused
 * call leaves no operation behind.  The flush is asked as it is: its
 * refusal goes through the window's error handler once, from MPI itself
 * (setting the handler aside for the question would race with every other
 * thread's calls on the window under MPI_THREAD_MULTIPLE). */
static int fallback_epoch_check(MPI_Win win, int target)
{
    return MPI_SUCCESS == MPI_Win_flush(target, win) ? MPI_SUCCESS : NOTIFY_REFUSED_AND_REPORTED;
}

/* The operation, complete at the target, then +1 on its counter */
static int notified_by_memory(notify_state_t *state, const notify_op_t *op, MPI_Win win, int idx)
{
    int ret = issue(op, win);

    ret = MPI_SUCCESS == ret ? state->entry->complete_at(win, op->target_rank) : ret;
    if (MPI_SUCCESS == ret) {
        osc_newrma_fetch_add_release(&state->peer[op->target_rank][idx], 1);
    }
    return ret;
}

static int notified_by_fallback(notify_state_t *state, const notify_op_t *op, MPI_Win win, int idx)
{
    static const int64_t one = 1;
    int ret = state->epoch_held ? MPI_SUCCESS : fallback_epoch_check(win, op->target_rank);

    ret = MPI_SUCCESS == ret ? issue(op, win) : ret;
    ret = MPI_SUCCESS == ret ? MPI_Win_flush(op->target_rank, win) : ret;
    ret = MPI_SUCCESS == ret ? MPI_Accumulate(&one, 1, MPI_INT64_T, op->target_rank, idx, 1, MPI_INT64_T, MPI_SUM,
                                              state->counters)
                             : ret;
    /* the increment leaves now: nothing later may be needed to deliver it */
    return MPI_SUCCESS == ret ? MPI_Win_flush(op->target_rank, state->counters) : ret;
}

/* The library's notify dispatch (mpix_newrma_internal.h): one operation
 * and its notification to one target, by the window's path */
int mpix_newrma_notified(const notify_op_t *op, MPI_Win win, int idx)
{
    notify_state_t *state;
    int ret = state_checked(win, idx, &state);

    if (MPI_SUCCESS != ret) {
        return win_error(win, ret);
    }
    if (MPI_PROC_NULL == op->target_rank) {
        return issue(op, win);       /* no target: nothing to notify */
    }
    switch (state->path) {
    case MPIX_NOTIFY_PATH_MEMORY:
        ret = notified_by_memory(state, op, win, idx);
        break;
    case MPIX_NOTIFY_PATH_MESSAGE:
        ret = state->entry->notified(win, op, idx);
        break;
    default:
        ret = notified_by_fallback(state, op, win, idx);
    }
    return win_error(win, ret);
}

int MPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, int notification_idx)
{
    notify_op_t op = { OSC_NEWRMA_NOTIFY_PUT, (void *) origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, MPI_OP_NULL };
    return mpix_newrma_notified(&op, win, notification_idx);
}

int MPIX_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, int notification_idx)
{
    notify_op_t op = { OSC_NEWRMA_NOTIFY_GET, origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, MPI_OP_NULL };
    return mpix_newrma_notified(&op, win, notification_idx);
}

int MPIX_Accumulate_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, int target_count,
                           MPI_Datatype target_datatype, MPI_Op op_, MPI_Win win, int notification_idx)
{
    notify_op_t op = { OSC_NEWRMA_NOTIFY_ACC, (void *) origin_addr, origin_count, origin_datatype, target_rank,
                       target_disp, target_count, target_datatype, op_ };
    return mpix_newrma_notified(&op, win, notification_idx);
}
