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
 * osc/newrma: accumulate stripe locks -- spin locks in shared memory, one
 * per mpi_accumulate_granularity bytes of a target's window modulo the
 * stripe count (a power of two), taken in ascending order.  The node
 * segment's (osc_newrma_acc.c) and the node route's (osc_newrma_node_route.c)
 * both use these; osc_newrma_acc.c says why accumulates are striped.
 */

#ifndef OSC_NEWRMA_STRIPES_H
#define OSC_NEWRMA_STRIPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sched.h>

#include "osc_newrma_atomic.h"
#include "osc_newrma_wait.h"

/* One target's stripe words: word i at base + i * stride. */
typedef struct {
    char *base;
    size_t stride;
    unsigned int stripes;
} osc_newrma_stripes_t;

static inline int32_t *osc_newrma_stripe_word(const osc_newrma_stripes_t *s, unsigned int i)
{
    return (int32_t *) (s->base + (size_t) (i < s->stripes ? i : i - s->stripes) * s->stride);
}

/* Test before test-and-set, so waiters spin on their cached copy of the
 * line; the backoff yields the core once spinning gets long (with more
 * ranks than cores the holder may be the one waiting for it).  The test is
 * an atomic load and the release an atomic store (plain instructions on
 * x86): threads of one process contend for the same word, and a plain
 * access racing an atomic one is a data race in C11 that ThreadSanitizer
 * reports (contrib/thread-check-tests.sh). */
static inline bool osc_newrma_stripe_trylock(int32_t *word)
{
    int32_t expected = 0;

    return 0 == osc_newrma_load_relaxed(word) && osc_newrma_cas_acquire(word, &expected, 1);
}

static inline void osc_newrma_stripe_lock(int32_t *word)
{
    unsigned int spins = 0;

    while (!osc_newrma_stripe_trylock(word)) {
        osc_newrma_backoff(&spins);
    }
}

/* Without progress while waiting: the node route's stripes, which packet
 * handlers take too -- a process that ran its handlers while holding or
 * waiting for stripes could wait for itself.  Nobody holding stripes
 * waits for anything else, so a spin (yielding once it gets long) ends. */
static inline void osc_newrma_stripe_lock_quiet(int32_t *word)
{
    unsigned int spins = 0;

    while (!osc_newrma_stripe_trylock(word)) {
        if (!osc_newrma_busy_spin(&spins)) {
            sched_yield();
        }
    }
}

/* A release store: the critical section's loads and stores are done
 * before the lock is seen free. */
static inline void osc_newrma_stripe_unlock(int32_t *word)
{
    osc_newrma_store_release(word, 0);
}

/* The stripes covering bytes [offset, offset + span): *first (mod stripes)
 * and *count of them, all when the span wraps around. */
static inline void osc_newrma_stripes_span(unsigned int shift, unsigned int stripes, uint64_t offset, size_t span,
                                           unsigned int *first, unsigned int *count)
{
    uint64_t lo = offset >> shift;
    uint64_t hi = (offset + (span ? span - 1 : 0)) >> shift;

    *first = (unsigned int) lo & (stripes - 1);
    *count = 1;
    if (lo != hi) {
        if (hi - lo + 1 >= stripes) {
            *first = 0;
            *count = stripes;
        } else {
            *count = (unsigned int) (hi - lo + 1);
        }
    }
}

/* Stripes first .. first + count - 1 modulo stripes, in ascending index
 * order: the wrapped-around part (0 .. first + count - stripes - 1) first,
 * then first .. the last stripe. */
static inline void osc_newrma_stripes_lock(const osc_newrma_stripes_t *s, unsigned int first, unsigned int count,
                                           void (*lock)(int32_t *word))
{
    unsigned int end = first + count;

    for (unsigned int i = 0 ; i + s->stripes < end ; ++i) {
        lock(osc_newrma_stripe_word(s, i));
    }
    for (unsigned int i = first ; i < end && i < s->stripes ; ++i) {
        lock(osc_newrma_stripe_word(s, i));
    }
}

static inline void osc_newrma_stripes_unlock(const osc_newrma_stripes_t *s, unsigned int first, unsigned int count)
{
    for (unsigned int i = 0 ; i < count ; ++i) {
        osc_newrma_stripe_unlock(osc_newrma_stripe_word(s, first + i));
    }
}

#endif /* OSC_NEWRMA_STRIPES_H */
