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
 * osc/newrma: the table of transports of the active-message path and the
 * loops over it: which transport reaches a peer, window life cycle,
 * progress and the progress thread's wake-up descriptors.  The interface
 * is osc_newrma_transport.h; the transports are osc_newrma_transport_*.c;
 * the AM layer that uses them is osc_newrma_am_target.c (sending, progress,
 * the progress thread, dispatch).
 */

#include "ompi_config.h"

#include <poll.h>
#include <stddef.h>

#include "osc_newrma.h"
#include "osc_newrma_transport.h"
#include "osc_newrma_transport_fifo.h"
#include "osc_newrma_transport_ucx.h"

/* In the order a peer's transport is chosen: the first that reaches it.
 * Ourselves first, then the node, then the network (which reaches all). */
static const osc_newrma_transport_t *const transports[] = {
    &osc_newrma_transport_loopback,
    &osc_newrma_transport_fifo,
    &osc_newrma_transport_ucx,
};
#define NTRANSPORTS ((int) (sizeof(transports) / sizeof(transports[0])))

const osc_newrma_transport_t *osc_newrma_transport_of(const ompi_osc_newrma_module_t *module, int peer)
{
    for (int i = 0 ; i < NTRANSPORTS ; ++i) {
        if (transports[i]->reaches(module, peer)) {
            return transports[i];
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* window life cycle                                                   */
/* ------------------------------------------------------------------ */

/* Is some peer of the window reached by none of the first `n` transports? */
static bool peer_beyond(const ompi_osc_newrma_module_t *module, int n)
{
    for (int peer = 0 ; peer < module->size ; ++peer) {
        int i = 0;
        while (i < n && !transports[i]->reaches(module, peer)) {
            ++i;
        }
        if (i == n) {
            return true;
        }
    }
    return false;
}

typedef int (*window_step_t)(ompi_osc_newrma_module_t *module);

/* Run one window step (the operation at offset `step` of the struct) of
 * every transport that has it, in table order, stopping at the first
 * failure; `beyond`: only of transports some peer needs (no earlier one
 * reaches it). */
static int window_step(ompi_osc_newrma_module_t *module, size_t step, bool beyond)
{
    for (int i = 0 ; i < NTRANSPORTS ; ++i) {
        window_step_t run = *(const window_step_t *) ((const char *) transports[i] + step);
        int ret;
        if (NULL == run || (beyond && !peer_beyond(module, i))) {
            continue;
        }
        ret = run(module);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
    }
    return OMPI_SUCCESS;
}

int osc_newrma_transports_window_init(ompi_osc_newrma_module_t *module)
{
    return window_step(module, offsetof(osc_newrma_transport_t, window_init), false);
}

int osc_newrma_transports_window_connect(ompi_osc_newrma_module_t *module)
{
    return window_step(module, offsetof(osc_newrma_transport_t, window_connect), true);
}

int osc_newrma_transports_window_quiesce(ompi_osc_newrma_module_t *module)
{
    return window_step(module, offsetof(osc_newrma_transport_t, window_quiesce), false);
}

void osc_newrma_transports_window_fini(ompi_osc_newrma_module_t *module)
{
    for (int i = NTRANSPORTS - 1 ; i >= 0 ; --i) {
        if (NULL != transports[i]->window_fini) {
            transports[i]->window_fini(module);
        }
    }
}

void osc_newrma_transports_fini(void)
{
    for (int i = NTRANSPORTS - 1 ; i >= 0 ; --i) {
        if (NULL != transports[i]->fini) {
            transports[i]->fini();
        }
    }
}

/* ------------------------------------------------------------------ */
/* progress                                                            */
/* ------------------------------------------------------------------ */

bool osc_newrma_transports_progress(void)
{
    bool any = false;

    for (int i = 0 ; i < NTRANSPORTS ; ++i) {
        any = transports[i]->progress() > 0 || any;
    }
    return any;
}

bool osc_newrma_transports_have_work(void)
{
    for (int i = 0 ; i < NTRANSPORTS ; ++i) {
        if (NULL != transports[i]->has_work && transports[i]->has_work()) {
            return true;
        }
    }
    return false;
}

bool osc_newrma_transports_poll(void)
{
    bool any = false;

    for (int i = 0 ; i < NTRANSPORTS ; ++i) {
        if (NULL != transports[i]->has_work) {
            any = transports[i]->progress() > 0 || any;
        }
    }
    return any;
}

bool osc_newrma_transports_polled_active(void)
{
    for (int i = 0 ; i < NTRANSPORTS ; ++i) {
        if (NULL == transports[i]->arm && NULL != transports[i]->active && transports[i]->active()) {
            return true;
        }
    }
    return false;
}

int osc_newrma_transports_arm(struct pollfd *fds, int *count)
{
    *count = 0;
    for (int i = 0 ; i < NTRANSPORTS && *count < OSC_NEWRMA_TRANSPORTS_MAX ; ++i) {
        int fd = -1, ret;
        if (NULL == transports[i]->arm) {
            continue;
        }
        ret = transports[i]->arm(&fd);
        if (OMPI_ERR_WOULD_BLOCK == ret) {
            return ret;
        }
        if (OMPI_SUCCESS == ret) {
            fds[*count] = (struct pollfd) { .fd = fd, .events = POLLIN };
            ++*count;
        }
    }
    return OMPI_SUCCESS;
}
