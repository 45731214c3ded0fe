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
 * osc/newrma: passive-target locks in the node segment
 * (passive-target-rw-locks-slides.txt).
 *
 * Each target has a reader/writer queue lock after Mellor-Crummey and Scott:
 *   - writers queue in FIFO order (an MCS queue of queue nodes) and each
 *     waits on its own node's cache line -- after trying a while to take
 *     the lock unqueued (write_lock_barging), never ahead of a queued one;
 *   - writer preference: a reader enters only while no writer is active or
 *     waiting; otherwise it steps back and waits on its own node in a stack
 *     of waiting readers, which the last writer to leave wakes;
 *   - the target never takes part: origins do every step with atomics.
 *
 * State word: reader count << 3 | ANNOUNCE | WRITER_ACTIVE | WRITER_WAITING
 * (ANNOUNCE: the lock mode, below).  The grant of a waiting writer is one
 * CAS from exactly WRITER_WAITING to WRITER_ACTIVE (ANNOUNCE kept as it is),
 * tried by whoever makes the state become WRITER_WAITING (the writer itself,
 * the last reader to leave, the writer that leaves), so exactly one of them
 * hands the lock over and no wake-up is lost.
 *
 * Orders (osc_newrma_atomic.h): every way in reads the state or its queue
 * node with acquire, every step that lets another process in or publishes
 * a queue node writes with release; seq_cst only where a store must be
 * ordered before a later load of another word (the Dekker-style pairs:
 * reader stack push vs writer leaving, exclusive lockers vs lock_all
 * holders, a revert of the lock mode vs lock_all).  Full barriers
 * everywhere made an uncontended lock/unlock about 30 % slower.
 *
 * lock_all is O(1): a window-wide count of lock_all holders, checked
 * against a window-wide count of exclusive lockers (a Dekker-style pair of
 * seq_cst fetch-and-adds and loads); an exclusive locker waits
 * for the lock_all holders to leave, a lock_all caller for the exclusive
 * lockers.  Exclusive lockers announce themselves only from the window's
 * first lock_all on (the lock mode, below).  See docs/rationale.md,
 * "Passive-target locks".
 */

#include "ompi_config.h"

#include "osc_newrma.h"
#include "osc_newrma_lock.h"

/* ------------------------------------------------------------------ */
/* queue nodes: this process's own, by index                           */
/* ------------------------------------------------------------------ */

static int qnode_take(ompi_osc_newrma_module_t *module)
{
    for (unsigned int i = 0 ; i < module->shm.layout.qnodes ; ++i) {
        if (!(module->qnodes_busy & ((uint64_t) 1 << i))) {
            module->qnodes_busy |= (uint64_t) 1 << i;
            return module->rank * (int) module->shm.layout.qnodes + (int) i;
        }
    }
    return -1;
}

static void qnode_give(ompi_osc_newrma_module_t *module, int id)
{
    module->qnodes_busy &= ~((uint64_t) 1 << (id % (int) module->shm.layout.qnodes));
}

static osc_newrma_qnode_t *qnode(ompi_osc_newrma_module_t *module, int id)
{
    return osc_newrma_shm_qnode(&module->shm, id);
}

static void wait_unblocked(osc_newrma_qnode_t *node)
{
    unsigned int spins = 0;
    while (osc_newrma_load_acquire(&node->blocked)) {
        osc_newrma_backoff(&spins);
    }
}

/* ------------------------------------------------------------------ */
/* the reader/writer queue lock                                        */
/* ------------------------------------------------------------------ */

/* (Out of line: the uncontended release only tests whether to call it.)
 * A CAS that failed only because ANNOUNCE changed (a switch or a revert of
 * the lock mode) is tried again: nobody else would hand the lock over. */
__opal_attribute_noinline__ void osc_newrma_lock_grant_writer(ompi_osc_newrma_module_t *module,
                                                           osc_newrma_lock_word_t *lock)
{
    int64_t seen = osc_newrma_load_relaxed(&lock->state);

    while (NEWRMA_LOCK_WRITER_WAITING == (seen & ~NEWRMA_LOCK_ANNOUNCE)) {
        /* acquire: the leaving holders' releases and the head writer's
         * writer_head, which it published with its WRITER_WAITING */
        if (osc_newrma_cas_acq_rel(&lock->state, &seen, (seen & NEWRMA_LOCK_ANNOUNCE) | NEWRMA_LOCK_WRITER_ACTIVE)) {
            osc_newrma_store_release(&qnode(module, osc_newrma_load_relaxed(&lock->writer_head) - 1)->blocked, 0);
            return;
        }
    }
}

/* Wake every waiting reader; each retries from the start. */
__opal_attribute_noinline__ void osc_newrma_lock_wake_readers(ompi_osc_newrma_module_t *module,
                                                           osc_newrma_lock_word_t *lock)
{
    int32_t head = osc_newrma_exchange_acquire(&lock->reader_head, 0);   /* the pushed nodes' next */

    while (0 != head) {
        osc_newrma_qnode_t *node = qnode(module, head - 1);
        head = osc_newrma_load_relaxed(&node->next);
        /* release: the load of next above before the reader may reuse its node */
        osc_newrma_store_release(&node->blocked, 0);
    }
}

static void start_write_unqueued(osc_newrma_lock_word_t *lock)
{
    unsigned int spins = 0;

    while (!osc_newrma_lock_try_write(lock)) {
        osc_newrma_backoff(&spins);
    }
}

static void start_write(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock, int me)
{
    osc_newrma_qnode_t *node = qnode(module, me);
    int32_t pred;

    osc_newrma_store_relaxed(&node->blocked, 1);
    osc_newrma_store_relaxed(&node->next, 0);
    /* release: our node's words; acquire: the predecessor's, whose next we write */
    pred = osc_newrma_exchange_acq_rel(&lock->writer_tail, me + 1);
    if (0 == pred) {
        /* first in the writer queue: announce, then whoever sees the lock
         * free of readers and writers hands it over (maybe ourselves) */
        osc_newrma_store_relaxed(&lock->writer_head, me + 1);
        osc_newrma_lock_grant_if_writer_waits(module, lock,
                                              osc_newrma_fetch_or_acq_rel(&lock->state, NEWRMA_LOCK_WRITER_WAITING)
                                                  | NEWRMA_LOCK_WRITER_WAITING);
    } else {
        osc_newrma_store_release(&qnode(module, pred - 1)->next, me + 1);
    }
    wait_unblocked(node);
}

static void end_write(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock, int me)
{
    osc_newrma_qnode_t *node = qnode(module, me);
    int32_t next, expected = me + 1;
    unsigned int spins = 0;

    if (0 == osc_newrma_load_acquire(&node->next) && osc_newrma_cas_acq_rel(&lock->writer_tail, &expected, 0)) {
        /* no writer behind us: the lock goes back to whoever comes */
        osc_newrma_lock_release_writer_flag(module, lock);
        return;
    }
    while (0 == (next = osc_newrma_load_acquire(&node->next))) {   /* a writer is linking in behind us */
        osc_newrma_backoff(&spins);
    }
    /* hand over directly: the lock stays WRITER_ACTIVE, readers keep waiting */
    osc_newrma_store_relaxed(&lock->writer_head, next);
    osc_newrma_store_release(&qnode(module, next - 1)->blocked, 0);   /* the lock and writer_head */
}

/* Shared acquisition after a failed osc_newrma_lock_try_read (the reader count it added is
 * still in).  `me` is a queue node to wait on, or -1 (then spin). */
static void start_read(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock, int me)
{
    unsigned int spins = 0;

    for (;;) {
        /* a writer is active or waiting: step back (writer preference) */
        osc_newrma_lock_end_read(module, lock);
        if (me < 0) {
            osc_newrma_backoff(&spins);
        } else {
            osc_newrma_qnode_t *node = qnode(module, me);
            int32_t head;
            osc_newrma_store_relaxed(&node->blocked, 1);
            head = osc_newrma_load_relaxed(&lock->reader_head);
            do {
                osc_newrma_store_relaxed(&node->next, head);
            } while (!osc_newrma_cas_seq_cst(&lock->reader_head, &head, me + 1));
            /* the writer may have left before we were on the stack (a
             * Dekker pair with its leaving: seq_cst push, seq_cst load) */
            if (!(osc_newrma_load_seq_cst(&lock->state) & NEWRMA_LOCK_WRITER_FLAGS)) {
                osc_newrma_lock_wake_readers(module, lock);
            }
            wait_unblocked(node);
        }
        if (osc_newrma_lock_try_read(lock)) {
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* the lock mode: when exclusive lockers announce themselves           */
/* ------------------------------------------------------------------ */

/* lock_all's O(1) path needs exclusive lockers to announce themselves on a
 * window-wide word (two atomics on a line every locker writes, and a full
 * barrier).  Most windows never see a lock_all, so announcing starts with
 * the first one: it sets the window-wide mode to SWITCHING, then on each
 * target sets the word's ANNOUNCE bit and waits until the target has no
 * unannounced writer, and sets ANNOUNCE.  The uncontended writer's CAS from
 * an all-zero word fails once the bit is set (osc_newrma_lock_try_write_quiet):
 * on that word, the switch either made the CAS fail or waits for the
 * writer.  A writer that takes the lock any other way (after it found it
 * taken) checks the mode after it got the lock (a Dekker pair with the
 * switch: it sees the switch, or the switch sees its lock); if a switch
 * began, it steps out and comes back announced.
 * A process that then takes many exclusive locks and no lock_all tries to
 * go back (osc_newrma_lock_quiet_after): ANNOUNCE -> REVERTING, and QUIET if
 * no lock_all holder is in (a Dekker pair with lock_all's entry, which
 * checks the mode after counting itself in and starts over if it is no
 * longer ANNOUNCE), else back to ANNOUNCE.  Going QUIET, the revert clears
 * every word's ANNOUNCE bit before it stores QUIET: no switch can begin
 * before that store (it needs QUIET), so it cannot clear a switch's bits.
 * Announced holders keep their announcement until they release; the next
 * lock_all switches again.  So: a word carries ANNOUNCE whenever the mode is
 * ANNOUNCE, and from a switch's visit to it until the revert's. */
/* (The modes and the ticket's NEWRMA_LOCK_TICKET_ANNOUNCED are in
 * osc_newrma_lock.h, for the path in line.) */

static int64_t lock_mode_read(ompi_osc_newrma_module_t *module)
{
    return osc_newrma_load_acquire(osc_newrma_lock_mode(module));
}

static void wait_no_writer(osc_newrma_lock_word_t *lock)
{
    unsigned int spins = 0;

    while (osc_newrma_load_acquire(&lock->state) & NEWRMA_LOCK_WRITER_ACTIVE) {
        osc_newrma_backoff(&spins);
    }
}

/* Until the mode is ANNOUNCE: switch to it from QUIET (waiting out the
 * unannounced writers), or wait for another process's switch or revert. */
static void lock_mode_announce(ompi_osc_newrma_module_t *module)
{
    unsigned int spins = 0;

    for (;;) {
        int64_t mode = lock_mode_read(module);
        if (NEWRMA_LOCK_MODE_ANNOUNCE == mode) {
            return;
        }
        if (NEWRMA_LOCK_MODE_QUIET == mode
            && osc_newrma_cas_acquire(osc_newrma_lock_mode(module), &mode, NEWRMA_LOCK_MODE_SWITCHING)) {
            for (int target = 0 ; target < module->size ; ++target) {
                osc_newrma_lock_word_t *lock = osc_newrma_shm_lock(&module->shm, target);
                /* release: a writer whose (acquire) CAS comes after this
                 * one on the word sees SWITCHING (osc_newrma_lock_write_slow) */
                (void) osc_newrma_fetch_or_acq_rel(&lock->state, NEWRMA_LOCK_ANNOUNCE);
                wait_no_writer(lock);
            }
            osc_newrma_store_release(osc_newrma_lock_mode(module), NEWRMA_LOCK_MODE_ANNOUNCE);
            NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "lock mode: exclusive lockers announce themselves (a lock_all)");
            return;
        }
        osc_newrma_backoff(&spins);
    }
}

/* ANNOUNCE -> QUIET when no lock_all holder is in. */
static void lock_mode_try_quiet(ompi_osc_newrma_module_t *module)
{
    int64_t *lockall = osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_LOCKALL_READERS);
    int64_t mode = NEWRMA_LOCK_MODE_ANNOUNCE;

    /* the mode we set before the holders we read: a Dekker pair with
     * lock_all's entry (osc_newrma_lock_all_try_enter), seq_cst */
    if (!osc_newrma_cas_seq_cst(osc_newrma_lock_mode(module), &mode, NEWRMA_LOCK_MODE_REVERTING)) {
        return;
    }
    mode = 0 == osc_newrma_load_seq_cst(lockall) ? NEWRMA_LOCK_MODE_QUIET : NEWRMA_LOCK_MODE_ANNOUNCE;
    if (NEWRMA_LOCK_MODE_QUIET == mode) {
        for (int target = 0 ; target < module->size ; ++target) {
            (void) osc_newrma_fetch_and_acq_rel(&osc_newrma_shm_lock(&module->shm, target)->state,
                                                ~NEWRMA_LOCK_ANNOUNCE);
        }
    }
    osc_newrma_store_release(osc_newrma_lock_mode(module), mode);
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "lock mode: %s",
                   NEWRMA_LOCK_MODE_QUIET == mode ? "exclusive lockers stop announcing"
                                                  : "still announcing (a lock_all holder is in)");
}

/* Count an announced exclusive lock; many in a row: try to end announcing. */
static void lock_mode_count_announced(ompi_osc_newrma_module_t *module)
{
    unsigned int after = mca_osc_newrma_component.lock_quiet_after;

    /* a heuristic count: threads may share it without a lock */
    if (0 != after
        && osc_newrma_fetch_add_relaxed(&module->announced_locks, 1) + 1 >= after * (unsigned int) module->size) {
        osc_newrma_store_relaxed(&module->announced_locks, 0);
        lock_mode_try_quiet(module);
    }
}

/* ------------------------------------------------------------------ */
/* MPI_Win_lock / unlock on one target                                 */
/* ------------------------------------------------------------------ */

static int64_t *global_word(ompi_osc_newrma_module_t *module, int which)
{
    return osc_newrma_shm_global(&module->shm, which);
}

/* Keep O(1) lock_all holders out, and wait for those already in. */
static void exclusive_announce(ompi_osc_newrma_module_t *module)
{
    int64_t *lockall = global_word(module, NEWRMA_GLOBAL_LOCKALL_READERS);
    unsigned int spins = 0;

    /* a Dekker pair with lock_all's entry (osc_newrma_lock_all_try_enter):
     * seq_cst; the holders leave with release */
    (void) osc_newrma_fetch_add_seq_cst(global_word(module, NEWRMA_GLOBAL_EXCLUSIVE_WANTED), 1);
    while (0 != osc_newrma_load_seq_cst(lockall)) {
        osc_newrma_backoff(&spins);
    }
}

/* A writer that finds the lock taken first tries a while to take it
 * without queueing (spinning, then yielding), and queues only after
 * osc_newrma_lock_barge_tries failures.  A FIFO hand-over costs the queue's
 * atomics on every acquisition and hands the lock to the next writer in
 * line whether or not it runs: on an oversubscribed node everybody then
 * waits for the scheduler to run that one again (the DHT demo's inserts at
 * 4 ranks on 2 cores ran about six times as fast trying first as queueing
 * at once); with a core per process, a writer that releases and wants the
 * lock again keeps it in its cache (at 2 ranks about 1.6 times as fast;
 * docs/rationale.md, "Passive-target locks").  A trying
 * writer never overtakes a queued one (osc_newrma_lock_try_write needs an
 * empty queue), so under sustained contention every writer ends up queued, FIFO,
 * and none waits forever -- the queue lock of the design, entered later. */
static bool write_lock_barging(osc_newrma_lock_word_t *lock)
{
    unsigned int spins = 0;

    for (unsigned int tries = mca_osc_newrma_component.lock_barge_tries ; tries > 0 ; --tries) {
        if (osc_newrma_lock_try_write(lock)) {
            return true;
        }
        osc_newrma_backoff(&spins);
    }
    return false;
}

/* A writer that found the lock taken: try, then queue (or, without a free
 * node, wait for it to be free).  Out of line: the uncontended path stays
 * short. */
static __opal_attribute_noinline__ int write_lock_contended(ompi_osc_newrma_module_t *module,
                                                             osc_newrma_lock_word_t *lock)
{
    int me;

    if (write_lock_barging(lock)) {
        return -1;                  /* held without a queue node, as an uncontended lock */
    }
    me = qnode_take(module);

    if (me < 0) {
        start_write_unqueued(lock);
    } else {
        start_write(module, lock, me);
    }
    return me;
}

/* The writer's half of the lock: returns the queue node it keeps, or -1. */
static inline int write_lock(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock)
{
    if (OPAL_LIKELY(osc_newrma_lock_try_write(lock))) {
        return -1;                  /* uncontended: no queue, no node */
    }
    return write_lock_contended(module, lock);
}

static __opal_attribute_noinline__ void write_unlock_queued(ompi_osc_newrma_module_t *module,
                                                            osc_newrma_lock_word_t *lock, int me)
{
    end_write(module, lock, me);
    qnode_give(module, me);
}

static inline void write_unlock(ompi_osc_newrma_module_t *module, osc_newrma_lock_word_t *lock, int me)
{
    if (OPAL_LIKELY(me < 0)) {
        osc_newrma_lock_end_write_unqueued(module, lock);
    } else {
        write_unlock_queued(module, lock, me);
    }
}

/* A reader that found a writer active or waiting (the count
 * osc_newrma_lock_try_read added is still in): wait on a queue node if there
 * is one free. */
__opal_attribute_noinline__ void osc_newrma_lock_read_contended(ompi_osc_newrma_module_t *module,
                                                             osc_newrma_lock_word_t *lock)
{
    int me = qnode_take(module);

    start_read(module, lock, me);
    if (me >= 0) {
        qnode_give(module, me);   /* readers need no node while they hold */
    }
}

/* A writer's lock on a window where exclusive lockers announce
 * themselves, or on a lock that was taken. */
__opal_attribute_noinline__ int osc_newrma_lock_write_slow(ompi_osc_newrma_module_t *module,
                                                         osc_newrma_lock_word_t *lock)
{
    for (;;) {
        int me;
        if (NEWRMA_LOCK_MODE_QUIET != lock_mode_read(module)) {
            /* (not waiting for a switch to end: this process may hold
             * unannounced locks the switch waits for) */
            exclusive_announce(module);
            me = write_lock(module, lock);
            lock_mode_count_announced(module);
            return (me + 1) | NEWRMA_LOCK_TICKET_ANNOUNCED;
        }
        /* our lock before the mode we read: the lock's acquire CAS (or
         * grant) comes before or after a switch's release fetch-or on the
         * same word; after it, it sees SWITCHING; before, the switch waits
         * for us (lock_mode_announce) */
        me = write_lock(module, lock);
        if (NEWRMA_LOCK_MODE_QUIET == lock_mode_read(module)) {
            return me + 1;
        }
        write_unlock(module, lock, me);   /* the first lock_all may not see us */
    }
}

/* A release that may hand the lock over or ends an announced lock. */
__opal_attribute_noinline__ void osc_newrma_lock_write_release_slow(ompi_osc_newrma_module_t *module,
                                                                 osc_newrma_lock_word_t *lock, int ticket)
{
    write_unlock(module, lock, (ticket & ~NEWRMA_LOCK_TICKET_ANNOUNCED) - 1);
    if (ticket & NEWRMA_LOCK_TICKET_ANNOUNCED) {
        (void) osc_newrma_fetch_add_release(global_word(module, NEWRMA_GLOBAL_EXCLUSIVE_WANTED), -1);
    }
}

/* ------------------------------------------------------------------ */
/* MPI_Win_lock_all / unlock_all                                       */
/* ------------------------------------------------------------------ */

/* lock_all never holds some locks while waiting for others (that could
 * deadlock against a process holding several exclusive locks): it enters in
 * one step when no exclusive lock is held or wanted, and otherwise waits
 * outside until there is none (writer preference).  This is the way in
 * after the one in line (osc_newrma_lock_all_acquire) failed: switch the
 * window to announcing exclusive lockers first, or wait for the exclusive
 * lockers in or waiting to leave. */
__opal_attribute_noinline__ void osc_newrma_lock_all_acquire_slow(ompi_osc_newrma_module_t *module)
{
    int64_t *wanted = global_word(module, NEWRMA_GLOBAL_EXCLUSIVE_WANTED);
    unsigned int spins = 0;

    for (;;) {
        lock_mode_announce(module);
        if (osc_newrma_lock_all_try_enter(module)) {
            return;
        }
        while (0 != osc_newrma_load_acquire(wanted)) {
            osc_newrma_backoff(&spins);
        }
    }
}
