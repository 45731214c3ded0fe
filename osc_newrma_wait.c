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
 * osc/newrma: waiting -- the node's clock, polite spinning and the spin
 * budget learnt per place that waits on an oversubscribed node (see
 * osc_newrma_wait.h).
 */

#include "ompi_config.h"

#include <sched.h>
#include <time.h>

#include "opal/runtime/opal_progress.h"

#include "osc_newrma_wait.h"

uint64_t osc_newrma_clock_ns(void)
{
    struct timespec ts;

    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

void osc_newrma_backoff_at(unsigned int *spins)
{
    ++*spins;
    /* past the busy phase: let the rest of MPI progress and give the core
     * away, since the holder may be waiting for it (oversubscription).  On
     * an oversubscribed node Open MPI sets yield_when_idle and opal_progress
     * yields by itself when it found nothing to do: a second yield here made
     * a fence at 4 ranks on 2 cores nearly twice as slow. */
    opal_progress();
    if (opal_progress_yield_when_idle) {
        return;
    }
    if (*spins < NEWRMA_BUSY_SPINS + NEWRMA_PROGRESS_SPINS) {
        osc_newrma_cpu_relax();
    } else {
        sched_yield();
    }
}
