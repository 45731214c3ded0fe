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
 * osc/newrma: every access to a word that another process or thread may
 * touch at the same time (the shared segment's words, the FIFO's cells and
 * positions, counters and flags shared between threads) goes through this
 * header: C11 semantics over GCC's __atomic builtins, each order spelled in
 * the name.  Nothing else in the component uses volatile, opal_atomic_* or
 * __atomic/__sync for such words.
 *
 * Which order, as a rule of thumb:
 * - a flag, counter or index that hands over other data: the writer
 *   publishes with store_release (or a release read-modify-write) after
 *   writing the data; the reader sees it with load_acquire (or an acquire
 *   read-modify-write) before reading the data.  A lock is the same:
 *   taking it is acquire, giving it back is release.
 * - a word read or written for its own value only (a statistic, a hint, a
 *   retry after which an acquire follows anyway): relaxed.
 * - a loop that polls with relaxed loads may finish with one fence_acquire
 *   instead of an acquire load per turn; data written with relaxed stores
 *   may be published by a fence_release before the relaxed store of the
 *   flag -- the seqlock (the post box) needs exactly these two.
 * - "I store to X, then load Y; the other side stores to Y, then loads X,
 *   and one of us must see the other" (a Dekker pair, as between lock_all
 *   and the exclusive lockers): both stores (or read-modify-writes) and
 *   both loads seq_cst.  acquire/release do not order a store before a
 *   later load.
 * - MPI_Win_sync and the like (all of the process's memory, not a word):
 *   fence_seq_cst.
 * Data that is accessed concurrently is accessed atomically too (relaxed
 * loads and stores), never by plain or volatile accesses: that is a data
 * race in C11, which the compiler may tear or cache in a register.
 *
 * The operations are macros over the type-generic builtins, so that one
 * name serves every width used (bool, 32- and 64-bit words, enums); the
 * builtins reject what is not an integer or a pointer.
 */

#ifndef OSC_NEWRMA_ATOMIC_H
#define OSC_NEWRMA_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* loads and stores */
#define osc_newrma_load_relaxed(p)       __atomic_load_n((p), __ATOMIC_RELAXED)
#define osc_newrma_load_acquire(p)       __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define osc_newrma_load_seq_cst(p)       __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define osc_newrma_store_relaxed(p, v)   __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define osc_newrma_store_release(p, v)   __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* compare-and-swap (strong): true when *p was *expected and is now
 * `desired`; otherwise *expected is what *p held (loaded with the
 * order of the name; acquire for _acq_rel) */
#define osc_newrma_cas_relaxed(p, expected, desired)                                                \
    __atomic_compare_exchange_n((p), (expected), (desired), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define osc_newrma_cas_acquire(p, expected, desired)                                                \
    __atomic_compare_exchange_n((p), (expected), (desired), false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)
#define osc_newrma_cas_acq_rel(p, expected, desired)                                                \
    __atomic_compare_exchange_n((p), (expected), (desired), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define osc_newrma_cas_seq_cst(p, expected, desired)                                                \
    __atomic_compare_exchange_n((p), (expected), (desired), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

/* read-modify-writes: each returns the value *p held before */
#define osc_newrma_fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define osc_newrma_fetch_add_acquire(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQUIRE)
#define osc_newrma_fetch_add_release(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELEASE)
#define osc_newrma_fetch_add_seq_cst(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define osc_newrma_fetch_or_acq_rel(p, v)  __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define osc_newrma_fetch_and_acq_rel(p, v) __atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL)
#define osc_newrma_exchange_acquire(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define osc_newrma_exchange_acq_rel(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)

/* fences: they order the relaxed accesses around them (see above) */
static inline void osc_newrma_fence_acquire(void)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline void osc_newrma_fence_release(void)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void osc_newrma_fence_seq_cst(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Copies of bytes that another process may be writing or reading at the
 * same time (a mailbox request's payload, read before the request is
 * taken): relaxed atomic accesses to the shared side, 8 bytes at a time
 * where it is aligned.  The ordering is the caller's (fences). */
static inline void osc_newrma_copy_to_shared(uint8_t *shared, const void *private_bytes, size_t bytes)
{
    const uint8_t *from = private_bytes;
    size_t i = 0;

    for (; i + 8 <= bytes && 0 == ((uintptr_t) (shared + i) & 7) ; i += 8) {
        uint64_t word;
        memcpy(&word, from + i, 8);
        osc_newrma_store_relaxed((uint64_t *) (void *) (shared + i), word);
    }
    for (; i < bytes ; ++i) {
        osc_newrma_store_relaxed(&shared[i], from[i]);
    }
}

static inline void osc_newrma_copy_from_shared(void *private_bytes, const uint8_t *shared, size_t bytes)
{
    uint8_t *to = private_bytes;
    size_t i = 0;

    for (; i + 8 <= bytes && 0 == ((uintptr_t) (shared + i) & 7) ; i += 8) {
        uint64_t word = osc_newrma_load_relaxed((const uint64_t *) (const void *) (shared + i));
        memcpy(to + i, &word, 8);
    }
    for (; i < bytes ; ++i) {
        to[i] = osc_newrma_load_relaxed(&shared[i]);
    }
}

#endif /* OSC_NEWRMA_ATOMIC_H */
