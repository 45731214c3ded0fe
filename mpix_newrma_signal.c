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
 * libmpix_newrma, EXPERIMENTAL: signals and batches (mpix_newrma.h,
 * docs/notified-rma.md, "Signals and batches (experimental)").
 *
 * Built on notified RMA: a window's signals are its notification counters,
 * attached when the library allocates the window, which it then keeps in
 * a lock_all(NOCHECK) epoch until MPIX_Win_free_signals.  A batch issues
 * its operations at once and remembers its targets; closing it with a
 * signal sends each target a zero-byte put through the notify dispatch
 * (mpix_newrma_notified), whose +1 lands once everything this process
 * issued to that target is complete there -- the batch's operations
 * included -- on whichever path the window's notifications take.  Waiting
 * polls the counter (acquire) and then MPI_Win_sync, so that the data is
 * visible to loads on every path.
 */

#include <sched.h>
#include <stdlib.h>

#include "mpix_newrma.h"
#include "mpix_newrma_internal.h"

struct mpix_newrma_batch {
    MPI_Win win;
    int nsignals;
    int size;
    int ntargets;
    int *targets;                /* distinct targets, in the order first used */
    unsigned char *used;         /* by rank: already in targets */
};

/* The number of signals of a window of MPIX_Win_allocate_signals, or -1
 * for any other window: the library holds the epoch of those only */
static int signals_of(MPI_Win win)
{
    return MPI_WIN_NULL == win ? -1 : mpix_newrma_held_counters(win);
}

/* The window's signals and a valid index, or an error class */
static int signal_checked(MPI_Win win, int signal_idx)
{
    int nsignals = signals_of(win);

    if (nsignals < 0) {
        return MPI_ERR_WIN;
    }
    return signal_idx < 0 || signal_idx >= nsignals ? MPI_ERR_ARG : MPI_SUCCESS;
}

/* The signals, and the epoch the library holds for the window's life
 * (each MPI call reports its own errors through the window's handler) */
static int signals_attach(MPI_Win win, int nsignals)
{
    int ret = MPIX_Win_notify_attach(win, nsignals, MPI_INFO_NULL);

    ret = MPI_SUCCESS == ret ? MPI_Win_lock_all(MPI_MODE_NOCHECK, win) : ret;
    return MPI_SUCCESS == ret ? mpix_newrma_epoch_held(win) : ret;
}

int MPIX_Win_allocate_signals(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, int nsignals,
                              void *baseptr, MPI_Win *win)
{
    int ret;

    if (nsignals < 0) {
        MPI_Comm_call_errhandler(comm, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    ret = MPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    if (MPI_SUCCESS != ret) {
        return ret;
    }
    return signals_attach(*win, nsignals);
}

int MPIX_Win_free_signals(MPI_Win *win)
{
    int ret;

    if (NULL == win || MPI_WIN_NULL == *win) {
        return MPI_ERR_WIN;
    }
    if (signals_of(*win) < 0) {
        return win_error(*win, MPI_ERR_WIN);
    }
    ret = MPI_Win_unlock_all(*win);
    /* MPI_Win_free drops the counters (the signals) with its attributes */
    return MPI_SUCCESS == ret ? MPI_Win_free(win) : ret;
}

/* The number of processes of `win` */
static int win_size(MPI_Win win)
{
    MPI_Group group;
    int size = 0;

    MPI_Win_get_group(win, &group);
    MPI_Group_size(group, &size);
    MPI_Group_free(&group);
    return size;
}

int MPIX_Batch_open(MPI_Win win, MPIX_Batch *batch)
{
    int nsignals = signals_of(win), size;
    MPIX_Batch b;

    if (nsignals < 0) {
        return MPI_WIN_NULL == win ? MPI_ERR_WIN : win_error(win, MPI_ERR_WIN);
    }
    size = win_size(win);
    b = calloc(1, sizeof(*b));
    if (NULL != b) {
        b->targets = malloc((size_t) size * sizeof(*b->targets));
        b->used = calloc((size_t) size, 1);
    }
    if (NULL == b || NULL == b->targets || NULL == b->used) {
        if (NULL != b) {
            free(b->targets);
            free(b->used);
            free(b);
        }
        return win_error(win, MPI_ERR_NO_MEM);
    }
    b->win = win;
    b->nsignals = nsignals;
    b->size = size;
    *batch = b;
    return MPI_SUCCESS;
}

static void batch_free(MPIX_Batch *batch)
{
    free((*batch)->targets);
    free((*batch)->used);
    free(*batch);
    *batch = MPIX_BATCH_NULL;
}

/* Remember `target` as one of the batch's: MPI_ERR_RANK outside the window */
static int batch_target(MPIX_Batch batch, int target)
{
    if (MPI_PROC_NULL == target) {
        return MPI_SUCCESS;
    }
    if (target < 0 || target >= batch->size) {
        return MPI_ERR_RANK;
    }
    if (!batch->used[target]) {
        batch->used[target] = 1;
        batch->targets[batch->ntargets++] = target;
    }
    return MPI_SUCCESS;
}

/* The batch's handle is usable, or MPI_ERR_ARG (there is no window to
 * report through: MPI_COMM_SELF's handler, as for calls without an object) */
static int batch_checked(const MPIX_Batch *batch)
{
    if (NULL == batch || MPIX_BATCH_NULL == *batch) {
        MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* Issue one operation of the batch: the window's own call, in the
 * library's epoch (which reports its own errors) */
static int batch_issue(MPIX_Batch batch, osc_newrma_notify_kind_t kind, const void *origin_addr, int origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op)
{
    int ret = batch_checked(&batch);

    if (MPI_SUCCESS != ret) {
        return ret;
    }
    ret = batch_target(batch, target_rank);
    if (MPI_SUCCESS != ret) {
        return win_error(batch->win, ret);
    }
    if (OSC_NEWRMA_NOTIFY_PUT == kind) {
        ret = MPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, batch->win);
    } else if (OSC_NEWRMA_NOTIFY_GET == kind) {
        ret = MPI_Get((void *) origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, batch->win);
    } else {
        ret = MPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, batch->win);
    }
    return ret;
}

int MPIX_Batch_put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIX_Batch batch)
{
    return batch_issue(batch, OSC_NEWRMA_NOTIFY_PUT, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                       target_count, target_datatype, MPI_OP_NULL);
}

int MPIX_Batch_get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIX_Batch batch)
{
    return batch_issue(batch, OSC_NEWRMA_NOTIFY_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                       target_count, target_datatype, MPI_OP_NULL);
}

int MPIX_Batch_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPIX_Batch batch)
{
    return batch_issue(batch, OSC_NEWRMA_NOTIFY_ACC, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                       target_count, target_datatype, op);
}

/* Release signal `idx` at every target: a zero-byte notified put each.
 * On the fallback and the memory path its notification waits for all this
 * process issued to that target; on the message path it covers its own
 * (empty) data only -- the batch's operations may have gone by other
 * carriers (native UCX RMA, the node route) or be a large payload still
 * travelling -- so a flush of the target comes first.  Each call reports
 * its own errors. */
static int batch_release(MPIX_Batch batch, int idx)
{
    static char nothing;
    notify_op_t op = { OSC_NEWRMA_NOTIFY_PUT, &nothing, 0, MPI_BYTE, MPI_PROC_NULL, 0, 0, MPI_BYTE, MPI_OP_NULL };
    int path = MPIX_NOTIFY_PATH_FALLBACK;
    int ret = MPIX_Win_notify_path(batch->win, &path);

    for (int i = 0 ; i < batch->ntargets && MPI_SUCCESS == ret ; ++i) {
        op.target_rank = batch->targets[i];
        ret = MPIX_NOTIFY_PATH_MESSAGE == path ? MPI_Win_flush(op.target_rank, batch->win) : MPI_SUCCESS;
        ret = MPI_SUCCESS == ret ? mpix_newrma_notified(&op, batch->win, idx) : ret;
    }
    return ret;
}

/* Complete the batch's operations at each target (remote: no signal) or at
 * this process (local: what a signal's path may have left, e.g. a get's
 * data still travelling).  The flushes report their own errors. */
static int batch_complete(MPIX_Batch batch, int remote)
{
    int ret = MPI_SUCCESS;

    for (int i = 0 ; i < batch->ntargets && MPI_SUCCESS == ret ; ++i) {
        ret = remote ? MPI_Win_flush(batch->targets[i], batch->win)
                     : MPI_Win_flush_local(batch->targets[i], batch->win);
    }
    return ret;
}

int MPIX_Batch_close(MPIX_Batch *batch, int signal_idx)
{
    int ret = batch_checked(batch);

    if (MPI_SUCCESS != ret) {
        return ret;
    }
    /* a bad index leaves the batch open: nothing has been done */
    if (MPIX_SIGNAL_NONE != signal_idx && (signal_idx < 0 || signal_idx >= (*batch)->nsignals)) {
        return win_error((*batch)->win, MPI_ERR_ARG);
    }
    if (MPIX_SIGNAL_NONE == signal_idx) {
        ret = batch_complete(*batch, 1);
    } else {
        ret = batch_release(*batch, signal_idx);
        ret = MPI_SUCCESS == ret ? batch_complete(*batch, 0) : ret;
    }
    batch_free(batch);
    return ret;
}

int MPIX_Signal_test(MPI_Win win, int signal_idx, MPI_Count value, int *flag)
{
    MPI_Count now = 0;
    int ret = signal_checked(win, signal_idx);

    if (MPI_SUCCESS != ret) {
        return MPI_WIN_NULL == win ? ret : win_error(win, ret);
    }
    ret = MPIX_Win_notify_get_value(win, signal_idx, &now);
    *flag = MPI_SUCCESS == ret && now >= value;
    /* the counter's acquire orders this process's loads; MPI_Win_sync
     * makes the window's memory agree with them where MPI needs it (the
     * fallback's data arrived through the component) */
    return MPI_SUCCESS == ret && *flag ? MPI_Win_sync(win) : ret;
}

int MPIX_Signal_wait(MPI_Win win, int signal_idx, MPI_Count value)
{
    int flag = 0;
    int ret = MPIX_Signal_test(win, signal_idx, value, &flag);

    while (MPI_SUCCESS == ret && !flag) {
        /* the origins may need this core (more processes than cores) */
        sched_yield();
        ret = MPIX_Signal_test(win, signal_idx, value, &flag);
    }
    return ret;
}

int MPIX_Signal_reset(MPI_Win win, int signal_idx)
{
    int ret = signal_checked(win, signal_idx);

    if (MPI_SUCCESS != ret) {
        return MPI_WIN_NULL == win ? ret : win_error(win, ret);
    }
    return MPIX_Win_notify_set_value(win, signal_idx, 0);
}
