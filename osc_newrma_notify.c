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
 * osc/newrma: the component's side of notified RMA (docs/notified-rma.md).
 *
 * libmpix_newrma does the operations and keeps the counters; what it
 * cannot know from outside is whether a window reaches its targets'
 * memory on this node and how to complete one target's operations in any
 * epoch (MPI_Win_flush is legal only in passive-target epochs).  This file
 * answers both through a versioned table (osc_newrma_notify_entry.h) whose
 * address every newrma window publishes in its info.  On the
 * active-message path it also sends an operation with its notification as
 * one packet (osc_newrma_am_notified; on the native route a put or
 * accumulate and a UCX atomic on the counter, osc_newrma_native_notify),
 * and holds the counters the packet handler increments.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdio.h>

#include "ompi/errhandler/errcode-internal.h"

#include "osc_newrma.h"
#include "osc_newrma_am.h"
#include "osc_newrma_notify_entry.h"

/* A window the library hands us could carry our info key without being
 * ours (the user copied a newrma window's info into another creation):
 * only windows whose module frees through newrma are. */
static ompi_osc_newrma_module_t *newrma_module_of(MPI_Win win)
{
    struct ompi_win_t *w = (struct ompi_win_t *) win;

    if (NULL == w || NULL == w->w_osc_module || ompi_osc_newrma_free != w->w_osc_module->osc_free) {
        return NULL;
    }
    return osc_newrma_module(w);
}

static int notify_reaches_by_memory(MPI_Win win)
{
    ompi_osc_newrma_module_t *module = newrma_module_of(win);

    return NULL != module && NEWRMA_PATH_AM != module->path;
}

/* Direct windows: a put or get is a memcpy, complete when it returns; the
 * caller's release increment of the counter orders it.  Usermem windows:
 * the handed-over operation and the batch are what may still be pending. */
static int notify_complete_at(MPI_Win win, int target)
{
    ompi_osc_newrma_module_t *module = newrma_module_of(win);
    int ret;

    if (NULL == module || NEWRMA_PATH_AM == module->path) {
        return MPI_ERR_WIN;
    }
    if (target < 0 || target >= module->size) {
        return MPI_ERR_RANK;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "notify: window %p \"%s\", rank %d completes its operations at %d",
                   (void *) module->win, module->win->w_name, module->rank, target);
    ret = NEWRMA_PATH_USERMEM == module->path ? osc_newrma_usermem_complete_pending(module) : OMPI_SUCCESS;
    return OMPI_SUCCESS == ret ? MPI_SUCCESS : ompi_errcode_get_mpi_code(ret);
}

/* The window of the active-message path behind `win`, or NULL */
static ompi_osc_newrma_module_t *am_module_of(MPI_Win win)
{
    ompi_osc_newrma_module_t *module = newrma_module_of(win);

    return NULL != module && NEWRMA_PATH_AM == module->path ? module : NULL;
}

/* Under the AM lock: the packet handler reads them, and the native route
 * the companion (NULL when another component serves it: the native route
 * then stays off for the window) */
static int notify_counters_attach(MPI_Win win, MPI_Win counters_win, int64_t *counters, int count)
{
    ompi_osc_newrma_module_t *module = am_module_of(win);

    if (NULL == module) {
        return MPI_ERR_WIN;
    }
    osc_newrma_am_enter();
    module->notify_counters = counters;
    module->notify_count = NULL == counters ? 0 : count;
    module->notify_companion = NULL == counters ? NULL : am_module_of(counters_win);
    osc_newrma_am_leave();
    return MPI_SUCCESS;
}

static int notify_notified(MPI_Win win, const osc_newrma_notify_op_t *op, int idx)
{
    ompi_osc_newrma_module_t *module = am_module_of(win);
    int ret;

    if (NULL == module) {
        return MPI_ERR_WIN;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "notify: window %p \"%s\", rank %d sends a notified %s to %d, counter %d",
                   (void *) module->win, module->win->w_name, module->rank,
                   OSC_NEWRMA_NOTIFY_PUT == op->kind ? "put" : OSC_NEWRMA_NOTIFY_GET == op->kind ? "get" : "accumulate",
                   op->target_rank, idx);
    ret = osc_newrma_am_notified(module, op, idx);
    return OMPI_SUCCESS == ret ? MPI_SUCCESS : ompi_errcode_get_mpi_code(ret);
}

static void notify_progress(MPI_Win win)
{
    if (NULL != am_module_of(win)) {
        osc_newrma_am_enter();
        osc_newrma_am_progress_once();
        osc_newrma_am_leave();
    }
}

static const osc_newrma_notify_entry_t notify_entry = {
    .version = OSC_NEWRMA_NOTIFY_ENTRY_VERSION,
    .reaches_by_memory = notify_reaches_by_memory,
    .complete_at = notify_complete_at,
    .counters_attach = notify_counters_attach,
    .notified = notify_notified,
    .progress = notify_progress,
};

static char notify_entry_text[48];

static void notify_entry_text_fill(void)
{
    snprintf(notify_entry_text, sizeof(notify_entry_text), "%d:%p", OSC_NEWRMA_NOTIFY_ENTRY_VERSION,
             (const void *) &notify_entry);
}

/* "<version>:<address>": fixed for the life of the process, so every
 * window shares one buffer, filled once (threads may create windows on
 * several communicators at the same time) */
char *osc_newrma_notify_entry_value(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, notify_entry_text_fill);
    return notify_entry_text;
}
