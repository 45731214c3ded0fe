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
 * osc/newrma: passive-target locks in the node segment (osc_newrma_lock.c).
 *
 * The uncontended lock and unlock -- one atomic each on the target's lock
 * word -- are here, in line in MPI_Win_lock / MPI_Win_unlock: as calls into
 * osc_newrma_lock.c (a call, a saved register and the record read back
 * through a pointer) an uncontended exclusive lock + unlock took about a
 * seventh longer than in line, and longer than osc/sm's (docs/rationale.md,
 * "Passive-target locks").  Everything
 * that waits, queues or announces is out of line in osc_newrma_lock.c.
 */

#ifndef OSC_NEWRMA_LOCK_H
#define OSC_NEWRMA_LOCK_H

#include "osc_newrma.h"

/* The lock word's state: reader count << 3 | ANNOUNCE | WRITER_ACTIVE |
 * WRITER_WAITING.  ANNOUNCE is set on every target's word while the window's
 * exclusive lockers announce themselves to lock_all (the lock mode is not
 * QUIET, osc_newrma_lock.c): the uncontended writer's CAS from an all-zero
 * word then fails, so that CAS alone tells it the window is quiet -- no
 * load of the mode after it. */
#define NEWRMA_LOCK_WRITER_WAITING ((int64_t) 1)
#define NEWRMA_LOCK_WRITER_ACTIVE  ((int64_t) 2)
#define NEWRMA_LOCK_WRITER_FLAGS   (NEWRMA_LOCK_WRITER_WAITING | NEWRMA_LOCK_WRITER_ACTIVE)
#define NEWRMA_LOCK_ANNOUNCE       ((int64_t) 4)
#define NEWRMA_LOCK_READER         ((int64_t) 8)

/* The window's lock mode: whether exclusive lockers announce themselves to
 * lock_all (osc_newrma_lock.c, "the lock mode"). */
#define NEWRMA_LOCK_MODE_QUIET     0
#define NEWRMA_LOCK_MODE_SWITCHING 1
#define NEWRMA_LOCK_MODE_ANNOUNCE  2
#define NEWRMA_LOCK_MODE_REVERTING 3

/* An exclusive holder's ticket: its queue node id + 1 (0: none) | announced. */
#define NEWRMA_LOCK_TICKET_ANNOUNCED (1 << 30)

/* Out of line (osc_newrma_lock.c): the cases that wait or hand over. */
void osc_newrma_lock_grant_writer(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock);
void osc_newrma_lock_wake_readers(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock);
void osc_newrma_lock_read_contended(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock);
int osc_newrma_lock_write_slow(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock);
void osc_newrma_lock_write_release_slow(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock, int ticket);

void osc_newrma_lock_all_acquire_slow(ompi_osc_newrma_module_t *module);

static inline int64_t *osc_newrma_lock_mode(ompi_osc_newrma_module_t *module)
{
    return osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_LOCK_MODE);
}

/* After a change that left the state `now`: if that is exactly "a writer
 * waits, nobody holds", hand the lock over (one CAS decides who does). */
static inline void osc_newrma_lock_grant_if_writer_waits(ompi_osc_newrma_module_t *module,
                                                         osc_newrma_lock_word_t *lock, int64_t now)
{
    if (OPAL_UNLIKELY(NEWRMA_LOCK_WRITER_WAITING == (now & ~NEWRMA_LOCK_ANNOUNCE))) {
        osc_newrma_lock_grant_writer(module, lock);
    }
}

/* Take the lock in one CAS if it is entirely free (no holder, nobody
 * queued), whatever the lock mode: the way in of a writer that found the
 * lock taken, and of one without a free queue node (more exclusive locks
 * held at once than osc_newrma_lock_qnodes).  It never overtakes a queued
 * writer, since it needs an empty queue. */
static inline bool osc_newrma_lock_try_write(osc_newrma_lock_word_t *lock)
{
    int64_t seen = osc_newrma_load_relaxed(&lock->state);

    return 0 == osc_newrma_load_relaxed(&lock->writer_tail) && 0 == (seen & ~NEWRMA_LOCK_ANNOUNCE)
           && osc_newrma_cas_acquire(&lock->state, &seen, seen | NEWRMA_LOCK_WRITER_ACTIVE);
}

/* The same on a quiet window only: the CAS from exactly 0 fails while the
 * word carries ANNOUNCE.  Taken this way, the lock is unannounced and the
 * window was quiet at the CAS -- a switch to announcing sets ANNOUNCE on
 * this word before it waits for the word's writer to leave, so it either
 * made this CAS fail or waits for us. */
static inline bool osc_newrma_lock_try_write_quiet(osc_newrma_lock_word_t *lock)
{
    int64_t expected = 0;

    return 0 == osc_newrma_load_relaxed(&lock->writer_tail) && 0 == osc_newrma_load_relaxed(&lock->state)
           && osc_newrma_cas_acquire(&lock->state, &expected, NEWRMA_LOCK_WRITER_ACTIVE);
}

/* One try at shared entry: in unless a writer is active or waiting (the
 * count it added stays in either way). */
static inline bool osc_newrma_lock_try_read(osc_newrma_lock_word_t *lock)
{
    return !(osc_newrma_fetch_add_acquire(&lock->state, NEWRMA_LOCK_READER) & NEWRMA_LOCK_WRITER_FLAGS);
}

/* Drop WRITER_ACTIVE when no queued writer takes over (the release of the
 * lock): grant a writer that started waiting meanwhile, wake the readers
 * that wait.  (A reader that pushes itself after we looked sees the flag
 * gone and wakes itself: a Dekker pair with its push, so both sides
 * seq_cst.) */
static inline void osc_newrma_lock_release_writer_flag(ompi_osc_newrma_module_t *module,
                                                       osc_newrma_lock_word_t *lock)
{
    osc_newrma_lock_grant_if_writer_waits(module, lock,
                                          osc_newrma_fetch_add_seq_cst(&lock->state, -NEWRMA_LOCK_WRITER_ACTIVE)
                                              - NEWRMA_LOCK_WRITER_ACTIVE);
    if (OPAL_UNLIKELY(0 != osc_newrma_load_seq_cst(&lock->reader_head))) {
        osc_newrma_lock_wake_readers(module, lock);
    }
}

static inline void osc_newrma_lock_end_write_unqueued(ompi_osc_newrma_module_t *module,
                                                      osc_newrma_lock_word_t *lock)
{
    osc_newrma_lock_release_writer_flag(module, lock);
}

static inline void osc_newrma_lock_end_read(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock)
{
    osc_newrma_lock_grant_if_writer_waits(module, lock,
                                          osc_newrma_fetch_add_release(&lock->state, -NEWRMA_LOCK_READER)
                                              - NEWRMA_LOCK_READER);
}

/* The ticket of a lock taken: the uncontended cases (a free lock, a quiet
 * window for a writer) here, the rest out of line. */
static inline int osc_newrma_lock_ticket(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock,
                                         bool exclusive)
{
    if (!exclusive) {
        if (OPAL_UNLIKELY(!osc_newrma_lock_try_read(lock))) {
            osc_newrma_lock_read_contended(module, lock);
        }
        return 0;
    }
    if (OPAL_LIKELY(osc_newrma_lock_try_write_quiet(lock))) {
        return 0;                    /* no queue node, not announced */
    }
    return osc_newrma_lock_write_slow(module, lock);
}

/* Take the lock `held` describes (rank, exclusive; NOCHECK takes none and
 * only orders memory); blocks until granted.  Sets held->ticket (an
 * exclusive holder's queue node and whether it announced itself), which
 * the release needs back.  Both return OMPI_SUCCESS. */
static inline int osc_newrma_lock_acquire(ompi_osc_newrma_module_t *module, osc_newrma_lock_record_t *held)
{
    if (held->nocheck) {
        osc_newrma_fence_seq_cst();
        held->ticket = 0;
        held->word = NULL;
    } else {
        held->word = osc_newrma_shm_lock(&module->shm, held->rank);
        held->ticket = osc_newrma_lock_ticket(module, held->word, held->exclusive);
    }
    return OMPI_SUCCESS;
}

/* Operations are complete when they return: the release orders them. */
static inline int osc_newrma_lock_release(ompi_osc_newrma_module_t *module, const osc_newrma_lock_record_t *held)
{
    osc_newrma_lock_word_t *lock = held->word;

    if (held->nocheck) {
        osc_newrma_fence_seq_cst();
    } else if (!held->exclusive) {
        osc_newrma_lock_end_read(module, lock);
    } else if (OPAL_LIKELY(0 == held->ticket)) {
        osc_newrma_lock_end_write_unqueued(module, lock);   /* no queue node, not announced */
    } else {
        osc_newrma_lock_write_release_slow(module, lock, held->ticket);
    }
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* lock_all: shared access to every rank at once, O(1)                 */
/* ------------------------------------------------------------------ */

/* One try at lock_all's entry: count ourselves in, and stay in if the mode
 * is still ANNOUNCE (a revert that began may not have seen us) and no
 * exclusive locker is in or waiting (they wait for the count to drop);
 * otherwise take the count back. */
static inline bool osc_newrma_lock_all_try_enter(ompi_osc_newrma_module_t *module)
{
    int64_t *lockall = osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_LOCKALL_READERS);

    /* Dekker pairs with a revert of the lock mode and with the exclusive
     * lockers (each counts itself in, then reads ours): seq_cst */
    (void) osc_newrma_fetch_add_seq_cst(lockall, 1);
    if (OPAL_LIKELY(NEWRMA_LOCK_MODE_ANNOUNCE == osc_newrma_load_seq_cst(osc_newrma_lock_mode(module))
                    && 0 == osc_newrma_load_seq_cst(osc_newrma_shm_global(&module->shm,
                                                                          NEWRMA_GLOBAL_EXCLUSIVE_WANTED)))) {
        return true;
    }
    (void) osc_newrma_fetch_add_relaxed(lockall, -1);
    return false;
}

/* In line: the window announces exclusive lockers already (every lock_all
 * after the first) and none is in or waiting -- one fetch-and-add.  (Out of
 * line, the waits spilled registers and kept the word's address on the
 * stack; a lock_all + unlock_all took up to twice as long, varying from
 * run to run.) */
static inline void osc_newrma_lock_all_acquire(ompi_osc_newrma_module_t *module)
{
    osc_newrma_store_relaxed(&module->announced_locks, 0);
    if (OPAL_UNLIKELY(NEWRMA_LOCK_MODE_ANNOUNCE != osc_newrma_load_acquire(osc_newrma_lock_mode(module))
                      || !osc_newrma_lock_all_try_enter(module))) {
        osc_newrma_lock_all_acquire_slow(module);
    }
}

static inline void osc_newrma_lock_all_release(ompi_osc_newrma_module_t *module)
{
    (void) osc_newrma_fetch_add_release(osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_LOCKALL_READERS), -1);
}

#endif
