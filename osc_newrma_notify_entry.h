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
 * may append members; it keeps `version` first and raises it.
 */

#ifndef OSC_NEWRMA_NOTIFY_ENTRY_H
#define OSC_NEWRMA_NOTIFY_ENTRY_H

#include <mpi.h>

#define OSC_NEWRMA_NOTIFY_INFO_KEY "osc_newrma_notify"
#define OSC_NEWRMA_NOTIFY_ENTRY_VERSION 1

typedef struct osc_newrma_notify_entry_v1_t {
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
} osc_newrma_notify_entry_v1_t;

#endif /* OSC_NEWRMA_NOTIFY_ENTRY_H */
