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

/* On an oversubscribed node (Open MPI sets yield_when_idle) whether to spin
 * depends on who else wants the cores.  When the awaited process is running
 * (the others on the node sit in MPI, yielding), a yield costs two context
 * switches where spinning sees the write after one line transfer, many
 * times sooner: a PSCW epoch between two of 4 ranks on 2 cores was about
 * five times as fast with 64 spins as with 2.  When every rank waits for
 * every other (a fence), the awaited process is often off the CPU and each
 * spin keeps it off: there 64 spins made the fence nearly twice as slow as
 * 2.  So the budget adapts,
 * as an adaptive mutex's does: a wait that outlasts it halves it, a wait
 * that ends inside it grows it by a quarter (so it grows where 3 waits in 4
 * end inside it).  Each place that waits learns on its own
 * (OSC_NEWRMA_SPIN_SITE), per thread.
 *
 * A small budget rarely succeeds and so cannot learn that a large one
 * would: waits in a probe window are allowed the maximum.  The windows are
 * the same for every process of the node (the first 8 us of every 2^16 ns
 * of CLOCK_MONOTONIC), because waits are coupled: the origin of a PSCW
 * epoch waits for the post that the target makes when its own wait for the
 * last epoch's completion ends.  A one-sided probe fails while the other
 * side still yields; and one long wait (the target away in a collective)
 * halved both budgets in turn down to the minimum, where they stayed: the
 * 4-rank pscw + 8 B rows took about six times as long as with a fixed 64
 * spins (docs/rationale.md, "Waiting").  Probing together, both see the other
 * spin, and a collapse lasts until the next window.  Where more waits of a
 * window paid than outlasted, the budget becomes at least twice the most
 * spins a paid probe took; otherwise the site probes in one window of 2,
 * then 4, then 8 (powers of 2, so that sites that back off differently
 * still meet in the windows the larger one picks).  No rarer: a site that
 * failed its probes under one pattern (an all-to-all PSCW round, whose
 * targets share the origin's core) must find the next pattern's budget
 * soon, while a fence's waits lose little to probing in 8 us of 0.5 ms. */
#define NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MAX 64
#define NEWRMA_SPIN_PROBE_PERIOD_SHIFT 16 /* a probe window every 2^16 ns (65 us) */
#define NEWRMA_SPIN_PROBE_WINDOW_NS 8000 /* a few 4-rank PSCW epochs that yield, many more that spin */
#define NEWRMA_SPIN_PROBE_EVERY_MAX 8

static unsigned int clamp_budget(unsigned int budget)
{
    return budget < NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MIN   ? NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MIN
           : budget > NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MAX ? NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MAX
                                                          : budget;
}

/* the probe window the node's clock is in (its number), 0 outside them */
static uint64_t current_probe_window(void)
{
    uint64_t now = osc_newrma_clock_ns();

    if ((now & ((UINT64_C(1) << NEWRMA_SPIN_PROBE_PERIOD_SHIFT) - 1)) >= NEWRMA_SPIN_PROBE_WINDOW_NS) {
        return 0;
    }
    return (now >> NEWRMA_SPIN_PROBE_PERIOD_SHIFT) + 1;
}

/* the site's probe window is over: keep what paid, or probe more rarely */
static void spin_probe_window_ended(osc_newrma_spin_site_t *l)
{
    if (l->probes_paid > l->probes_outlasted) {
        l->budget = clamp_budget(l->probe_proposal > l->budget ? l->probe_proposal : l->budget);
        l->probe_every = 1;
    } else if (l->probe_every < NEWRMA_SPIN_PROBE_EVERY_MAX) {
        l->probe_every *= 2;
    }
    l->probe_window = 0;
    l->probe_proposal = l->probes_paid = l->probes_outlasted = 0;
}

/* a new wait at the site: learn from how the previous one ended */
static void spin_wait_begins(osc_newrma_spin_site_t *l)
{
    uint64_t window;

    if (!l->outlasted) {
        if (l->probing) {
            l->probes_paid++;
            l->probe_proposal = 2 * l->spins > l->probe_proposal ? 2 * l->spins : l->probe_proposal;
        } else {
            l->budget = clamp_budget(l->budget + l->budget / 4 + 1);
        }
    }
    l->outlasted = false;
    window = current_probe_window();
    if (0 != l->probe_window && window != l->probe_window) {
        spin_probe_window_ended(l);
    }
    l->probing = 0 != window && 0 == (window & (l->probe_every - 1));
    if (l->probing) {
        l->probe_window = window;
    }
}

/* the current wait has outlasted its spins */
static void spin_wait_outlasted(osc_newrma_spin_site_t *l)
{
    l->outlasted = true;
    if (l->probing) {
        l->probes_outlasted++;
    } else {
        l->budget = clamp_budget(l->budget / 2);
    }
}

unsigned int osc_newrma_oversubscribed_spins(unsigned int spins, osc_newrma_spin_site_t *l)
{
    unsigned int limit;

    if (1 == spins) {
        spin_wait_begins(l);
    }
    l->spins = spins;
    limit = l->probing ? NEWRMA_BUSY_SPINS_OVERSUBSCRIBED_MAX : l->budget;
    if (spins == limit && !l->outlasted) {
        spin_wait_outlasted(l);
    }
    return limit;
}

void osc_newrma_backoff_at(unsigned int *spins, osc_newrma_spin_site_t *site)
{
    ++*spins;
    if (*spins < (opal_progress_yield_when_idle ? osc_newrma_oversubscribed_spins(*spins, site) : NEWRMA_BUSY_SPINS)) {
        osc_newrma_cpu_relax();
        return;
    }
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
