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
 * osc/newrma: waiting (osc_newrma_wait.c) -- the node's clock, polite
 * spinning (a short busy phase, then progress and a yield) and, on an
 * oversubscribed node, the spin budget each place that waits learns, with
 * probe windows shared by every process of the node.  Every wait of the
 * component goes through here; what it waits for is in the segment
 * (osc_newrma_shm.h) and the mechanisms' files.
 */

#ifndef OSC_NEWRMA_WAIT_H
#define OSC_NEWRMA_WAIT_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stdint.h>

#include "opal/runtime/opal_progress.h"

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

/* What a place in the code that waits has learnt about spinning there on
 * an oversubscribed node (osc_newrma_wait.c, osc_newrma_backoff_at). */
typedef struct {
    unsigned int budget;          /* spins a wait may take before it yields */
    unsigned int spins;           /* the current wait's spins so far */
    uint64_t probe_window;        /* the probe window this site is probing in, 0: none */
    unsigned int probe_every;     /* probes in one probe window of this many (a power of 2) */
    unsigned int probe_proposal;  /* twice the most spins a paid probe of the window took */
    unsigned int probes_paid;     /* probes of the window that ended inside their spins */
    unsigned int probes_outlasted;
    bool probing;                 /* the current wait is a probe */
    bool outlasted;               /* the current wait has outlasted its budget */
} osc_newrma_spin_site_t;

#define NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MIN 2
#define OSC_NEWRMA_SPIN_SITE_INITIALIZER                                                           \
    {                                                                                              \
        .budget = NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MIN, .probe_every = 1                           \
    }

/* On an oversubscribed node: the spins a wait at `site` may take before it
 * yields; spins: the wait's count so far, 1 at its first step (from which
 * the site learns: call it at every step). */
unsigned int osc_newrma_oversubscribed_spins(unsigned int spins, osc_newrma_spin_site_t *site);

/* CLOCK_MONOTONIC in ns: one clock for every process of the node */
uint64_t osc_newrma_clock_ns(void);

/* Polite spinning: a short busy phase, then progress + yield, so that
 * oversubscribed runs (more ranks than cores) stay fast.  spins: the
 * caller's count for this wait, 0 at its start. */
void osc_newrma_backoff_at(unsigned int *spins, osc_newrma_spin_site_t *site);

/* the spin site of the place in the code where this expands: each place
 * that waits learns on its own (per thread), as waits at one place wait for
 * one kind of event */
#define OSC_NEWRMA_SPIN_SITE()                                                                     \
    ({                                                                                             \
        static _Thread_local osc_newrma_spin_site_t osc_newrma_spin_site_ = OSC_NEWRMA_SPIN_SITE_INITIALIZER; \
        &osc_newrma_spin_site_;                                                                    \
    })

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

/* The busy phase of a wait on a node that is not oversubscribed, in line:
 * it needs no spin site, which -- thread-local in a shared library -- costs
 * a __tls_get_addr call, and that on every poll delayed noticing the store
 * being waited for.  False: take the rest of the step out of line. */
#define NEWRMA_BUSY_SPINS 16    /* before the first yield: with a core per process the awaited
                                 * write is usually a line transfer away, a yield microseconds */
static inline bool osc_newrma_busy_spin(unsigned int *spins)
{
    if (opal_progress_yield_when_idle || *spins + 1 >= NEWRMA_BUSY_SPINS) {
        return false;
    }
    ++*spins;
    osc_newrma_cpu_relax();
    return true;
}

/* one step of a wait */
#define osc_newrma_backoff(spins)                                                                  \
    ((void) (osc_newrma_busy_spin(spins) || (osc_newrma_backoff_at((spins), OSC_NEWRMA_SPIN_SITE()), true)))

END_C_DECLS

#endif /* OSC_NEWRMA_WAIT_H */
