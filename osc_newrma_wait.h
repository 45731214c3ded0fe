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
 * osc/newrma: waiting (osc_newrma_wait.c) -- the node's clock and polite
 * spinning (a short busy phase, then progress and a yield).  Every wait of the
 * component goes through here; what it waits for is in the segment
 * (osc_newrma_shm.h) and the mechanisms' files.
 */

#ifndef OSC_NEWRMA_WAIT_H
#define OSC_NEWRMA_WAIT_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stdint.h>

BEGIN_C_DECLS

/* One spin-wait step: tell the CPU we are spinning (frees the core's
 * resources for a sibling hardware thread, saves power). */
static inline void osc_newrma_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");   /* a compiler barrier at least */
#endif
}

/* CLOCK_MONOTONIC in ns: one clock for every process of the node */
uint64_t osc_newrma_clock_ns(void);

/* Polite spinning past the busy phase: progress, then a yield once the
 * wait has gone on a while, so that oversubscribed runs (more ranks than
 * cores) stay correct and reasonable.  spins: the caller's count for this
 * wait, 0 at its start. */
void osc_newrma_backoff_at(unsigned int *spins);

/* With a core per process: how many steps past its busy phase a wait runs
 * progress (and a pause) before it also yields the core: each step is one
 * opal_progress with newrma's callback and a pause, so the phase lasts many
 * times a yield's cost.  A yield is a system call, far dearer than a
 * cache-line transfer, and a wait in the middle of one notices the awaited
 * store that much later: a target's MPI_Win_wait that yielded early
 * noticed the end of a 32 KiB put late and so posted the next epoch late
 * -- PSCW rows of 32 KiB and more took visibly longer than the same
 * operation under flush (docs/rationale.md, "Waiting").  Nothing else
 * needs the core then; a longer wait still yields, for whatever does (a
 * progress thread bound to the same core, another job's process). */
#define NEWRMA_PROGRESS_SPINS 256

/* The busy phase of a wait, in line.  False: take the rest of the step
 * out of line. */
#define NEWRMA_BUSY_SPINS 16    /* before the first progress: with a core per process the awaited
                                 * write is usually a line transfer away, a yield microseconds */
static inline bool osc_newrma_busy_spin(unsigned int *spins)
{
    if (*spins + 1 >= NEWRMA_BUSY_SPINS) {
        return false;
    }
    ++*spins;
    osc_newrma_cpu_relax();
    return true;
}

/* one step of a wait */
#define osc_newrma_backoff(spins) ((void) (osc_newrma_busy_spin(spins) || (osc_newrma_backoff_at(spins), true)))

END_C_DECLS

#endif /* OSC_NEWRMA_WAIT_H */
