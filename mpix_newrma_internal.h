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
 * libmpix_newrma's insides shared by its files (never installed):
 * mpix_newrma.c keeps the notification counters and the notify dispatch;
 * mpix_newrma_signal.c (signals and batches, experimental) builds on them.
 */

#ifndef MPIX_NEWRMA_INTERNAL_H
#define MPIX_NEWRMA_INTERNAL_H

#include <mpi.h>

#include "osc_newrma_notify_entry.h"

/* One operation's arguments, as MPI_Put / MPI_Get / MPI_Accumulate take
 * them (osc_newrma_notify_entry.h: the component takes them as they are on
 * the message path) */
typedef osc_newrma_notify_op_t notify_op_t;

/* The fallback's epoch check was refused by MPI_Win_flush, which has
 * called the window's error handler already: MPI_ERR_RMA_SYNC to the
 * caller, without a second call of the handler.  Negative: no MPI error
 * code is. */
#define NOTIFY_REFUSED_AND_REPORTED (-1)

/* Errors go through the window's error handler, as MPI's own calls do */
static inline int win_error(MPI_Win win, int code)
{
    if (NOTIFY_REFUSED_AND_REPORTED == code) {
        return MPI_ERR_RMA_SYNC;
    }
    if (MPI_SUCCESS != code) {
        MPI_Win_call_errhandler(win, code);
    }
    return code;
}

/* The notify dispatch: issue `op` on `win` and +1 on counter `idx` of its
 * target once the operation is complete there, on the best path the
 * attached window has.  Errors went through the window's handler already. */
int mpix_newrma_notified(const notify_op_t *op, MPI_Win win, int idx);

/* The caller keeps `win` (attached) in a passive-target epoch for the rest
 * of its life: the fallback may skip asking which epoch it is in (one more
 * MPI_Win_flush of the target per notified call). */
int mpix_newrma_epoch_held(MPI_Win win);

/* The number of counters of a window mpix_newrma_epoch_held marked, or -1
 * for any other window */
int mpix_newrma_held_counters(MPI_Win win);

#endif /* MPIX_NEWRMA_INTERNAL_H */
