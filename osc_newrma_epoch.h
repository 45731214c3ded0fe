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
 * osc/newrma: the epoch machine -- which synchronization call is legal in
 * which window state, and which state it leads to.  One table
 * (osc_newrma_epoch.c, documented there as a table) serves every path:
 * osc_newrma_sync.c (load/store and single-copy windows) and
 * osc_newrma_am_sync.c (active messages) ask it before they act and tell it
 * when they are done; how an epoch is opened and closed (node barriers,
 * notices and locks, or packets) stays in those two files.  The window
 * states themselves are declared with the window in osc_newrma.h; this
 * header is included at its end, so every file that sees a window sees the
 * machine's in-line checks.
 */

#ifndef OSC_NEWRMA_EPOCH_H
#define OSC_NEWRMA_EPOCH_H

#include <stdlib.h>

#include "osc_newrma.h"

BEGIN_C_DECLS

#define NEWRMA_WIN_STATES (NEWRMA_WIN_LOCK_ALL_GRANTED + 1)

/* The rows of the table: synchronization calls (some split by what their
 * assert, or the path, makes of them) and the two events the paths report
 * (the window protocol of lock_all starting, and a window grant). */
typedef enum {
    NEWRMA_SYNC_OP = 0,          /* an RMA operation to a target */
    NEWRMA_SYNC_REQUEST_OP,      /* rput/rget/raccumulate/rget_accumulate: passive epochs only */
    NEWRMA_SYNC_FENCE,           /* MPI_Win_fence whose barrier is awaited in the call */
    NEWRMA_SYNC_FENCE_NOPRECEDE, /* ... NOPRECEDE alone, on a path whose barrier is nonblocking */
    NEWRMA_SYNC_FENCE_NOSUCCEED, /* ... NOSUCCEED: no epoch after it */
    NEWRMA_SYNC_START,           /* MPI_Win_start; the posts are awaited later */
    NEWRMA_SYNC_START_GRANTED,   /* ... with NOCHECK, or on a path that awaits each post per target */
    NEWRMA_SYNC_COMPLETE,
    NEWRMA_SYNC_POST,
    NEWRMA_SYNC_WAIT,            /* MPI_Win_wait, and MPI_Win_test (applied once it says true) */
    NEWRMA_SYNC_LOCK,
    NEWRMA_SYNC_UNLOCK,
    NEWRMA_SYNC_LOCK_ALL,        /* MPI_Win_lock_all, targets locked later (per-target protocol) */
    NEWRMA_SYNC_LOCK_ALL_GRANTED, /* ... with NOCHECK, or every lock taken in the call */
    NEWRMA_SYNC_UNLOCK_ALL,
    NEWRMA_SYNC_FLUSH,           /* flush and flush_local of one target */
    NEWRMA_SYNC_FLUSH_ALL,       /* flush_all and flush_local_all */
    NEWRMA_SYNC_FREE,            /* MPI_Win_free */
    NEWRMA_SYNC_ISSUE,           /* event: lock_all falls back to its window protocol */
    NEWRMA_SYNC_GRANT,           /* event: the issued epoch is granted (barrier, posts, locks) */
    NEWRMA_SYNC_FENCE_CLOSE,     /* event: a fence epoch no RMA call followed ends (the next
                                  * epoch may begin right there) */
    NEWRMA_SYNC_ROWS
} osc_newrma_sync_t;

/* Conditions beyond the window state under which a cell is legal. */
enum {
    NEWRMA_EPOCH_IF_LOCKS_ALLOWED = 0x01,  /* the window was not created with no_locks */
    NEWRMA_EPOCH_IF_NOT_EXPOSED   = 0x02,  /* no exposure epoch is open */
    NEWRMA_EPOCH_IF_EXPOSED       = 0x04,  /* an exposure epoch is open */
    NEWRMA_EPOCH_IF_LOCKED        = 0x08,  /* this process holds a lock on the target */
    NEWRMA_EPOCH_IF_NOT_LOCKED    = 0x10,  /* ... does not */
    NEWRMA_EPOCH_IF_IN_GROUP      = 0x20,  /* the target is in the start group */
    NEWRMA_EPOCH_IF_FENCE_UNUSED  = 0x40,  /* no RMA call since the fence: that epoch is
                                            * closed first and the call taken from NONE */
};
/* the conditions answered by a field of the window, checked in line */
#define NEWRMA_EPOCH_IF_IN_LINE (NEWRMA_EPOCH_IF_LOCKS_ALLOWED | NEWRMA_EPOCH_IF_NOT_EXPOSED \
                                 | NEWRMA_EPOCH_IF_EXPOSED)

/* What a cell does besides setting the window state. */
enum {
    NEWRMA_EPOCH_THEN_EXPOSED     = 0x01,  /* an exposure epoch opens */
    NEWRMA_EPOCH_THEN_NOT_EXPOSED = 0x02,  /* ... closes */
    NEWRMA_EPOCH_THEN_LOCK_ADDED  = 0x04,  /* one more target locked (LOCK_CALLED or _GRANTED) */
    NEWRMA_EPOCH_THEN_LOCK_GONE   = 0x08,  /* one target fewer; with none left: NONE */
    NEWRMA_EPOCH_THEN_FENCE_FRESH = 0x10,  /* a fence epoch opens: no RMA call in it yet */
    NEWRMA_EPOCH_THEN_FENCE_USED  = 0x20,  /* an RMA call in the fence epoch */
};

#define NEWRMA_EPOCH_ILLEGAL 0             /* a cell's `to`: OMPI_ERR_RMA_SYNC (so the cells
                                            * a table leaves out are illegal) */

typedef struct {
    uint8_t to;                  /* 1 + the next osc_newrma_win_state_t, or NEWRMA_EPOCH_ILLEGAL */
    uint8_t when;                /* NEWRMA_EPOCH_IF_* */
    uint8_t then;                /* NEWRMA_EPOCH_THEN_* */
} osc_newrma_epoch_cell_t;

extern const osc_newrma_epoch_cell_t osc_newrma_epoch_table[NEWRMA_SYNC_ROWS][NEWRMA_WIN_STATES];

/* the state a legal cell leads to */
static inline osc_newrma_win_state_t osc_newrma_epoch_next(osc_newrma_epoch_cell_t cell)
{
    return (osc_newrma_win_state_t) (cell.to - 1);
}

static inline osc_newrma_win_state_t osc_newrma_epoch_state(const ompi_osc_newrma_module_t *module)
{
    /* relaxed: another thread's first operation may be granting the epoch
     * meanwhile (osc_newrma_fence_grant, osc_newrma_pscw_grant_slow), which
     * orders what it saw */
    return osc_newrma_load_relaxed(&module->state);
}

static inline osc_newrma_epoch_cell_t osc_newrma_epoch_cell(const ompi_osc_newrma_module_t *module,
                                                            osc_newrma_sync_t sync)
{
    return osc_newrma_epoch_table[sync][osc_newrma_epoch_state(module)];
}

/* The conditions that need a look-up, and closing an unused fence epoch. */
int osc_newrma_epoch_check_slow(ompi_osc_newrma_module_t *module, osc_newrma_sync_t sync, int target,
                                uint8_t when);

/* Is `sync` legal now (for `target`, if the call has one)?  OMPI_SUCCESS or
 * OMPI_ERR_RMA_SYNC; nothing changes, except that a fence epoch no RMA call
 * followed is closed when the call may start from there.  In line: the
 * common cells decide with the window's own fields (flush is a hot path). */
static inline int osc_newrma_epoch_check(ompi_osc_newrma_module_t *module, osc_newrma_sync_t sync, int target)
{
    const osc_newrma_epoch_cell_t cell = osc_newrma_epoch_cell(module, sync);
    uint8_t when = cell.when;

    if (OPAL_UNLIKELY(NEWRMA_EPOCH_ILLEGAL == cell.to)) {
        return OMPI_ERR_RMA_SYNC;
    }
    if (OPAL_LIKELY(0 == when)) {
        return OMPI_SUCCESS;
    }
    if (NEWRMA_EPOCH_IF_LOCKED == when && osc_newrma_first_lock_is(module, target)) {
        return OMPI_SUCCESS;     /* flush or unlock of the epoch's first lock */
    }
    if (((when & NEWRMA_EPOCH_IF_LOCKS_ALLOWED) && module->no_locks)
        || ((when & NEWRMA_EPOCH_IF_NOT_EXPOSED) && module->exposure_active)
        || ((when & NEWRMA_EPOCH_IF_EXPOSED) && !module->exposure_active)) {
        return OMPI_ERR_RMA_SYNC;
    }
    if ((when & NEWRMA_EPOCH_IF_LOCKED) && osc_newrma_first_lock_is(module, target)) {
        when &= (uint8_t) ~NEWRMA_EPOCH_IF_LOCKED;     /* the epoch's first lock: in the module */
    }
    when &= (uint8_t) ~NEWRMA_EPOCH_IF_IN_LINE;
    return OPAL_LIKELY(0 == when) ? OMPI_SUCCESS : osc_newrma_epoch_check_slow(module, sync, target, when);
}

/* One trace line per synchronization call applied (osc_base_verbose >= 60). */
void osc_newrma_epoch_trace(const ompi_osc_newrma_module_t *module, osc_newrma_sync_t sync,
                            osc_newrma_win_state_t from, osc_newrma_win_state_t to);

/* `sync` has been done (its check said yes, in the state the window is
 * still in): move to the table's next state and apply the cell's effects.
 * A cell that keeps the state stores nothing, so that a call racing with
 * another thread's grant of the epoch cannot undo it. */
static inline void osc_newrma_epoch_apply(ompi_osc_newrma_module_t *module, osc_newrma_sync_t sync)
{
    const osc_newrma_win_state_t state = osc_newrma_epoch_state(module);
    const osc_newrma_epoch_cell_t cell = osc_newrma_epoch_table[sync][state];
    osc_newrma_win_state_t next = osc_newrma_epoch_next(cell);

#if OPAL_ENABLE_DEBUG
    if (NEWRMA_EPOCH_ILLEGAL == cell.to) {
        opal_output(0, "osc/newrma: epoch machine: row %d applied in state %d, where it is illegal",
                    (int) sync, (int) state);
        abort();
    }
#endif
    if (OPAL_UNLIKELY(0 != cell.then)) {
        if (cell.then & (NEWRMA_EPOCH_THEN_EXPOSED | NEWRMA_EPOCH_THEN_NOT_EXPOSED)) {
            module->exposure_active = 0 != (cell.then & NEWRMA_EPOCH_THEN_EXPOSED);
        }
        if (cell.then & NEWRMA_EPOCH_THEN_LOCK_ADDED) {
            module->lock_count++;
        }
        if ((cell.then & NEWRMA_EPOCH_THEN_LOCK_GONE) && 0 == --module->lock_count) {
            next = NEWRMA_WIN_NONE;
        }
        if (cell.then & (NEWRMA_EPOCH_THEN_FENCE_FRESH | NEWRMA_EPOCH_THEN_FENCE_USED)) {
            /* atomic: several threads' first operations may mark it at once */
            osc_newrma_store_relaxed(&module->fence_epoch_used, 0 != (cell.then & NEWRMA_EPOCH_THEN_FENCE_USED));
        }
    }
    if (OPAL_UNLIKELY(ompi_osc_base_framework.framework_verbose >= MCA_BASE_VERBOSE_TRACE)) {
        osc_newrma_epoch_trace(module, sync, state, next);
    }
    if (next != state) {
        /* release: a thread that sees the new state (osc_newrma_pscw_grant
         * reads it with acquire) sees what led to it */
        osc_newrma_store_release(&module->state, next);
    }
}

/* Request-based operations (MPI_Rput, ...): passive-target epochs only, the
 * REQUEST_OP row; the request is MPI_REQUEST_NULL until one is issued. */
static inline int osc_newrma_epoch_request_check(ompi_osc_newrma_module_t *module, int target,
                                                 struct ompi_request_t **request)
{
    *request = MPI_REQUEST_NULL;
    return osc_newrma_epoch_check(module, NEWRMA_SYNC_REQUEST_OP, target);
}

/* Is an RMA call to `target` legal in the current epoch?  The one check
 * every operation makes: the table's OP row, whose common cells are decided
 * here in line (one load and one compare in fence and lock_all epochs, two
 * more for the epoch's first lock); the others, and the grant of an issued
 * epoch by its first operation, in osc_newrma_epoch_access_slow. */
int osc_newrma_epoch_access_slow(ompi_osc_newrma_module_t *module, int target);
static inline int osc_newrma_epoch_access(ompi_osc_newrma_module_t *module, int target)
{
    osc_newrma_win_state_t state = osc_newrma_epoch_state(module);

    if (OPAL_LIKELY(state >= NEWRMA_WIN_FENCE_GRANTED)) {
        /* only a fence epoch needs the mark (NEWRMA_EPOCH_THEN_FENCE_USED),
         * and only its first operation writes it (a line bouncing between
         * the cores of threads issuing operations at once otherwise);
         * atomic accesses, since several threads may see it unset and set
         * it together (relaxed: the next fence, which reads it, is ordered
         * after them by the program) */
        if (NEWRMA_WIN_FENCE_GRANTED == state
            && !osc_newrma_load_relaxed(&module->fence_epoch_used)) {
            osc_newrma_store_relaxed(&module->fence_epoch_used, true);
        }
        return OMPI_SUCCESS;
    }
    /* the epoch's first lock (held only inside a per-target epoch): almost
     * every passive-target program's only one */
    if (OPAL_LIKELY(osc_newrma_first_lock_is(module, target))) {
        return OMPI_SUCCESS;
    }
    return osc_newrma_epoch_access_slow(module, target);
}

/* The grants of the node path (osc_newrma_sync.c), the only one whose
 * epochs stay issued after the call that opened them (FENCE_ISSUED after a
 * NOPRECEDE fence, PSCW_ISSUED after a start): the epoch's first operation
 * or its closing call waits for the barrier or the posts. */
void osc_newrma_fence_grant(ompi_osc_newrma_module_t *module);
int osc_newrma_pscw_grant_slow(ompi_osc_newrma_module_t *module);
static inline int osc_newrma_pscw_grant(ompi_osc_newrma_module_t *module)
{
    return NEWRMA_WIN_PSCW_ISSUED != osc_newrma_load_acquire(&module->state)
               ? OMPI_SUCCESS : osc_newrma_pscw_grant_slow(module);
}

/* In a per-target epoch: does this process hold a lock on target?  The
 * epoch's first lock is recorded in the module (node path), the others in
 * target elements (every lock of the active-message path); the element of
 * such another lock, or NULL. */
bool osc_newrma_epoch_holds_lock(ompi_osc_newrma_module_t *module, int target);
osc_newrma_target_t *osc_newrma_epoch_other_lock(ompi_osc_newrma_module_t *module, int target);

/* MPI_Win_free inside an epoch is erroneous; an unused fence epoch is fine. */
int osc_newrma_epoch_check_free(ompi_osc_newrma_module_t *module);

/* The table's row for each synchronization call and its assert. */
static inline osc_newrma_sync_t osc_newrma_fence_sync(int assert, bool barrier_nonblocking)
{
    if (assert & MPI_MODE_NOSUCCEED) {
        return NEWRMA_SYNC_FENCE_NOSUCCEED;
    }
    return (assert & MPI_MODE_NOPRECEDE) && barrier_nonblocking ? NEWRMA_SYNC_FENCE_NOPRECEDE
                                                                : NEWRMA_SYNC_FENCE;
}

/* A target's lock state when MPI_Win_lock returns on a path that locks
 * lazily: NOCHECK takes no lock, so the target is granted from the start. */
static inline osc_newrma_lock_state_t osc_newrma_epoch_lock_called(int assert)
{
    return (assert & MPI_MODE_NOCHECK) ? NEWRMA_LOCK_GRANTED : NEWRMA_LOCK_CALLED;
}

END_C_DECLS

#endif /* OSC_NEWRMA_EPOCH_H */
