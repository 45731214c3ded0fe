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
 * osc/newrma: the entry point libmpix_newrma (notified RMA, mpix_newrma.c)
 * calls in the component.  Shared by both sides, so it uses public MPI
 * types only: the library is built against mpi.h alone, out of tree and
 * with any Open MPI newrma supports.
 *
 * How the library finds it: every newrma window carries the info key
 * OSC_NEWRMA_NOTIFY_INFO_KEY, whose value is "<version>:<address>" -- the
 * version of the table below and its address in this process
 * (MPI_Win_get_info reports it).  A window without the key is served by
 * another component (the library's portable fallback).  A later version
 * may append members; it keeps `version` first and raises it.  The
 * library takes a table of its own version or later: handed an older one,
 * it treats the window as another component's (the fallback).
 */

#ifndef OSC_NEWRMA_NOTIFY_ENTRY_H
#define OSC_NEWRMA_NOTIFY_ENTRY_H

#include <stdint.h>

#include <mpi.h>

#define OSC_NEWRMA_NOTIFY_INFO_KEY "osc_newrma_notify"
#define OSC_NEWRMA_NOTIFY_ENTRY_VERSION 2
/* the first version with the message path's members */
#define OSC_NEWRMA_NOTIFY_ENTRY_MESSAGE 2

typedef enum { OSC_NEWRMA_NOTIFY_PUT, OSC_NEWRMA_NOTIFY_GET, OSC_NEWRMA_NOTIFY_ACC } osc_newrma_notify_kind_t;

/* One notified operation's arguments, as MPI_Put / MPI_Get /
 * MPI_Accumulate take them (`op` for the accumulate only) */
typedef struct {
    osc_newrma_notify_kind_t kind;
    void *origin_addr;
    int origin_count;
    MPI_Datatype origin_datatype;
    int target_rank;
    MPI_Aint target_disp;
    int target_count;
    MPI_Datatype target_datatype;
    MPI_Op op;
} osc_newrma_notify_op_t;

typedef struct osc_newrma_notify_entry_t {
    int version;                 /* OSC_NEWRMA_NOTIFY_ENTRY_VERSION */
    /* 1 if every process of `win` reaches every other's window memory on
     * this node (load/store or single copy): complete_at then works for
     * every target; 0 for a window of the active-message path. */
    int (*reaches_by_memory)(MPI_Win win);
    /* Complete at `target` every operation this process issued to it on
     * `win`, in any epoch (fence, PSCW, lock, lock_all): when it returns
     * MPI_SUCCESS the data is in the target's memory.  An MPI error class
     * otherwise.  Only for windows reaches_by_memory accepts. */
    int (*complete_at)(MPI_Win win, int target);

    /* version 2: the message path, for windows reaches_by_memory refuses */
    /* Hand this process's `count` counters to the component (NULL, 0: take
     * them back, before their memory goes), with the companion window
     * `counters_win` whose memory they are (MPI_WIN_NULL on taking them
     * back): the window's packet handler increments counters[idx] with
     * release order once a notified operation's data is in (put,
     * accumulate) or out of (get) window memory; where the window and the
     * companion both reach a target by UCX RMA, the origin increments the
     * target's counter itself with a UCX atomic after the data (the native
     * route, docs/notified-rma.md).  Collective use only (attach, detach). */
    int (*counters_attach)(MPI_Win win, MPI_Win counters_win, int64_t *counters, int count);
    /* The operation as one packet carrying notification `idx` for its
     * target, handed to the transport before the call returns (a get: its
     * data in the origin buffer too).  Legal in the epochs the operation is. */
    int (*notified)(MPI_Win win, const osc_newrma_notify_op_t *op, int idx);
    /* One turn of the window's progress: a target polling its counters
     * serves the packets that increment them */
    void (*progress)(MPI_Win win);
} osc_newrma_notify_entry_t;

#endif /* OSC_NEWRMA_NOTIFY_ENTRY_H */
