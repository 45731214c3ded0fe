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
 * osc/newrma: the epoch machine.  Every synchronization call of every path
 * asks this table whether it is legal in the window's state and tells it
 * when it is done, which moves the window to the table's next state; the
 * RMA operations ask its OP row (in line in osc_newrma_epoch.h).  How
 * epochs are opened and closed is the paths' business: osc_newrma_sync.c
 * for load/store and single-copy windows (node barrier, PSCW notices and
 * locks in the segment: osc_newrma_active_target.c, osc_newrma_lock.c),
 * osc_newrma_am_sync.c for active messages (packets, target elements).
 * An illegal call returns OMPI_ERR_RMA_SYNC before anything changes, so the
 * window stays usable (docs/errors.md, tests/epoch_errors.c).
 *
 * States (mpich-new-rma-design.txt, "Epoch States").  Window states, of the
 * access epoch: NONE; FENCE_ISSUED (a fence whose barrier is not complete
 * yet) and FENCE_GRANTED; PSCW_ISSUED (started, posts not all seen) and
 * PSCW_GRANTED; LOCK_ALL_CALLED (targets locked lazily, per target),
 * LOCK_ALL_ISSUED (the window protocol is taking every lock) and
 * LOCK_ALL_GRANTED; PER_TARGET (MPI_Win_lock: the targets' own states
 * count).  Target states, kept per target element: LOCK_CALLED (no lock
 * request sent yet), LOCK_ISSUED, LOCK_GRANTED.  The exposure epoch (post
 * to wait/test) is a flag beside the window state: a process's access and
 * exposure epochs are independent.
 *
 * Which path reaches which state: the node path takes locks in the call
 * (its targets are GRANTED at once, LOCK_ALL goes straight to
 * LOCK_ALL_GRANTED) and leaves FENCE_ISSUED after a NOPRECEDE fence and
 * PSCW_ISSUED after a start, for the epoch's first operation or closing
 * call to grant (osc_newrma_fence_grant, osc_newrma_pscw_grant_slow).  The
 * active-message path awaits every fence barrier in the call, waits for
 * each target's post in its target element (LOCK_ISSUED until the post
 * comes: its start is START_GRANTED), locks lazily (LOCK_CALLED, then
 * LOCK_ISSUED when an operation needs the lock, osc_newrma_am_ops.c) and
 * falls back to lock_all's window protocol when its target elements cannot
 * cover the window (ISSUE, then GRANT).
 *
 * The table: row = call or event, column = window state; a cell is the
 * next state ("=": unchanged, "-": illegal, OMPI_ERR_RMA_SYNC), the
 * conditions it also needs [in brackets] and its effects {in braces}.
 *
 *   conditions: la  locks allowed (no info no_locks)
 *               ne / ex   no exposure epoch open / one open
 *               lk / nl   the target is locked by us / is not
 *               grp the target is in the start group
 *               u   the fence epoch saw no RMA call; it is closed first
 *                   (FENCE_CLOSE) and the call proceeds as from NONE
 *   effects:    +E / -E   exposure epoch opens / closes
 *               +L / -L   a target is locked / unlocked (the last: NONE)
 *               F0 / F1   fence epoch without / with an RMA call
 *   columns:    NONE, PER_T(ARGET), PSCW_I(SSUED), PSCW_G(RANTED),
 *               FENCE_I, FENCE_G, LA_C(ALLED), LA_I(SSUED), LA_G(RANTED)
 *
 *   row            NONE        PER_T       PSCW_I     PSCW_G    FENCE_I       FENCE_G       LA_C   LA_I   LA_G
 *   OP             -           =[lk]       PSCW_G*    =[grp]    FENCE_G*{F1}  ={F1}         =      =      =
 *                                          [grp]
 *   REQUEST_OP     -           =[lk]       -          -         -             -             =      =      =
 *   FENCE          FENCE_G     -           -          -         FENCE_G       FENCE_G       -      -      -
 *                  [ne]{F0}                                     [ne]{F0}      [ne]{F0}
 *   FENCE_NOPRECEDE  as FENCE, to FENCE_I
 *   FENCE_NOSUCCEED  as FENCE, to NONE
 *   START          PSCW_I      -           -          -         PSCW_I[u]     PSCW_I[u]     -      -      -
 *   START_GRANTED    as START, to PSCW_G
 *   COMPLETE       -           -           NONE*      NONE      -             -             -      -      -
 *   POST           =[ne]{+E} in every state
 *   WAIT           =[ex]{-E} in every state (MPI_Win_test: applied once it returns true)
 *   LOCK           PER_T       PER_T       -          -         PER_T         PER_T         -      -      -
 *                  [la]{+L}    [la,nl]{+L}                      [la,u]{+L}    [la,u]{+L}
 *   UNLOCK         -           =[lk]{-L}   -          -         -             -             -      -      -
 *   LOCK_ALL       LA_C[la]    -           -          -         LA_C[la,u]    LA_C[la,u]    -      -      -
 *   LOCK_ALL_GRANTED as LOCK_ALL, to LA_G
 *   UNLOCK_ALL     -           -           -          -         -             -             NONE   NONE   NONE
 *   FLUSH          -           =[lk]       -          -         -             -             =      =      =
 *   FLUSH_ALL      -           =           -          -         -             -             =      =      =
 *   FREE           =[ne]       -           -          -         NONE[ne,u]    NONE[ne,u]    -      -      -
 *   ISSUE          -           -           -          -         -             -             LA_I   -      -
 *   GRANT          -           -           PSCW_G     =         FENCE_G       =             -      LA_G   =
 *   FENCE_CLOSE    -           -           -          -         -             NONE          -      -      -
 *
 *   * the path grants first: an operation or MPI_Win_complete in an issued
 *     epoch waits for the barrier or the posts (GRANT), then goes on from
 *     the granted state.
 *
 * The OP row is every operation's check: its cells from FENCE_G on, and
 * the epoch's first lock, are decided in line by one load and one compare
 * (osc_newrma_epoch_access; the enum's order keeps those states last), the
 * others by osc_newrma_epoch_access_slow below.
 *
 * MPI_Win_sync is legal in every state and changes nothing: it has no row.
 *
 * Threads: the OP row is applied by whichever of several threads' first
 * operations gets there (the grants are idempotent, the fence mark an
 * atomic store) and reads the state relaxed; every transition is stored
 * with release (osc_newrma_epoch_apply).
 */

#include "ompi_config.h"

#include "osc_newrma.h"
#include "osc_newrma_epoch.h"

/* table notation */
#define TO(state, when, then) { 1 + NEWRMA_WIN_##state, (when), (then) }
#define la NEWRMA_EPOCH_IF_LOCKS_ALLOWED
#define ne NEWRMA_EPOCH_IF_NOT_EXPOSED
#define ex NEWRMA_EPOCH_IF_EXPOSED
#define lk NEWRMA_EPOCH_IF_LOCKED
#define nl NEWRMA_EPOCH_IF_NOT_LOCKED
#define grp NEWRMA_EPOCH_IF_IN_GROUP
#define u NEWRMA_EPOCH_IF_FENCE_UNUSED
#define plusE NEWRMA_EPOCH_THEN_EXPOSED
#define minusE NEWRMA_EPOCH_THEN_NOT_EXPOSED
#define plusL NEWRMA_EPOCH_THEN_LOCK_ADDED
#define minusL NEWRMA_EPOCH_THEN_LOCK_GONE
#define F0 NEWRMA_EPOCH_THEN_FENCE_FRESH
#define F1 NEWRMA_EPOCH_THEN_FENCE_USED

/* a row that leaves the state as it is, legal in every state */
#define EVERY_STATE(when, then) { \
        [NEWRMA_WIN_NONE] = TO(NONE, when, then), \
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, when, then), \
        [NEWRMA_WIN_PSCW_ISSUED] = TO(PSCW_ISSUED, when, then), \
        [NEWRMA_WIN_PSCW_GRANTED] = TO(PSCW_GRANTED, when, then), \
        [NEWRMA_WIN_FENCE_ISSUED] = TO(FENCE_ISSUED, when, then), \
        [NEWRMA_WIN_FENCE_GRANTED] = TO(FENCE_GRANTED, when, then), \
        [NEWRMA_WIN_LOCK_ALL_CALLED] = TO(LOCK_ALL_CALLED, when, then), \
        [NEWRMA_WIN_LOCK_ALL_ISSUED] = TO(LOCK_ALL_ISSUED, when, then), \
        [NEWRMA_WIN_LOCK_ALL_GRANTED] = TO(LOCK_ALL_GRANTED, when, then) }

/* the fence rows: from no epoch or a fence epoch, never during exposure */
#define FENCE_ROW(next, then) { \
        [NEWRMA_WIN_NONE] = TO(next, ne, then), \
        [NEWRMA_WIN_FENCE_ISSUED] = TO(next, ne, then), \
        [NEWRMA_WIN_FENCE_GRANTED] = TO(next, ne, then) }

/* the rows of calls that open an access epoch: from no epoch, or from a
 * fence epoch that no RMA call followed */
#define OPENING_ROW(next, when, then) { \
        [NEWRMA_WIN_NONE] = TO(next, when, then), \
        [NEWRMA_WIN_FENCE_ISSUED] = TO(next, (when) | u, then), \
        [NEWRMA_WIN_FENCE_GRANTED] = TO(next, (when) | u, then) }

/* the lock_all columns of a row whose call changes nothing there */
#define LOCK_ALL_STAYS \
        [NEWRMA_WIN_LOCK_ALL_CALLED] = TO(LOCK_ALL_CALLED, 0, 0), \
        [NEWRMA_WIN_LOCK_ALL_ISSUED] = TO(LOCK_ALL_ISSUED, 0, 0), \
        [NEWRMA_WIN_LOCK_ALL_GRANTED] = TO(LOCK_ALL_GRANTED, 0, 0)

const osc_newrma_epoch_cell_t osc_newrma_epoch_table[NEWRMA_SYNC_ROWS][NEWRMA_WIN_STATES] = {
    [NEWRMA_SYNC_OP] = {
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, lk, 0),
        [NEWRMA_WIN_PSCW_ISSUED] = TO(PSCW_GRANTED, grp, 0),
        [NEWRMA_WIN_PSCW_GRANTED] = TO(PSCW_GRANTED, grp, 0),
        [NEWRMA_WIN_FENCE_ISSUED] = TO(FENCE_GRANTED, 0, F1),
        [NEWRMA_WIN_FENCE_GRANTED] = TO(FENCE_GRANTED, 0, F1),
        LOCK_ALL_STAYS },
    [NEWRMA_SYNC_REQUEST_OP] = {
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, lk, 0),
        LOCK_ALL_STAYS },
    [NEWRMA_SYNC_FENCE] = FENCE_ROW(FENCE_GRANTED, F0),
    [NEWRMA_SYNC_FENCE_NOPRECEDE] = FENCE_ROW(FENCE_ISSUED, F0),
    [NEWRMA_SYNC_FENCE_NOSUCCEED] = FENCE_ROW(NONE, F0),
    [NEWRMA_SYNC_START] = OPENING_ROW(PSCW_ISSUED, 0, 0),
    [NEWRMA_SYNC_START_GRANTED] = OPENING_ROW(PSCW_GRANTED, 0, 0),
    [NEWRMA_SYNC_COMPLETE] = {
        [NEWRMA_WIN_PSCW_ISSUED] = TO(NONE, 0, 0),
        [NEWRMA_WIN_PSCW_GRANTED] = TO(NONE, 0, 0) },
    [NEWRMA_SYNC_POST] = EVERY_STATE(ne, plusE),
    [NEWRMA_SYNC_WAIT] = EVERY_STATE(ex, minusE),
    [NEWRMA_SYNC_LOCK] = {
        [NEWRMA_WIN_NONE] = TO(PER_TARGET, la, plusL),
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, la | nl, plusL),
        [NEWRMA_WIN_FENCE_ISSUED] = TO(PER_TARGET, la | u, plusL),
        [NEWRMA_WIN_FENCE_GRANTED] = TO(PER_TARGET, la | u, plusL) },
    [NEWRMA_SYNC_UNLOCK] = {
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, lk, minusL) },
    [NEWRMA_SYNC_LOCK_ALL] = OPENING_ROW(LOCK_ALL_CALLED, la, 0),
    [NEWRMA_SYNC_LOCK_ALL_GRANTED] = OPENING_ROW(LOCK_ALL_GRANTED, la, 0),
    [NEWRMA_SYNC_UNLOCK_ALL] = {
        [NEWRMA_WIN_LOCK_ALL_CALLED] = TO(NONE, 0, 0),
        [NEWRMA_WIN_LOCK_ALL_ISSUED] = TO(NONE, 0, 0),
        [NEWRMA_WIN_LOCK_ALL_GRANTED] = TO(NONE, 0, 0) },
    [NEWRMA_SYNC_FLUSH] = {
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, lk, 0),
        LOCK_ALL_STAYS },
    [NEWRMA_SYNC_FLUSH_ALL] = {
        [NEWRMA_WIN_PER_TARGET] = TO(PER_TARGET, 0, 0),
        LOCK_ALL_STAYS },
    [NEWRMA_SYNC_FREE] = OPENING_ROW(NONE, ne, 0),
    [NEWRMA_SYNC_ISSUE] = {
        [NEWRMA_WIN_LOCK_ALL_CALLED] = TO(LOCK_ALL_ISSUED, 0, 0) },
    [NEWRMA_SYNC_GRANT] = {
        [NEWRMA_WIN_PSCW_ISSUED] = TO(PSCW_GRANTED, 0, 0),
        [NEWRMA_WIN_PSCW_GRANTED] = TO(PSCW_GRANTED, 0, 0),
        [NEWRMA_WIN_FENCE_ISSUED] = TO(FENCE_GRANTED, 0, 0),
        [NEWRMA_WIN_FENCE_GRANTED] = TO(FENCE_GRANTED, 0, 0),
        [NEWRMA_WIN_LOCK_ALL_ISSUED] = TO(LOCK_ALL_GRANTED, 0, 0),
        [NEWRMA_WIN_LOCK_ALL_GRANTED] = TO(LOCK_ALL_GRANTED, 0, 0) },
    [NEWRMA_SYNC_FENCE_CLOSE] = {
        [NEWRMA_WIN_FENCE_GRANTED] = TO(NONE, 0, 0) },
};

#undef TO
#undef EVERY_STATE
#undef FENCE_ROW
#undef OPENING_ROW
#undef LOCK_ALL_STAYS
#undef la
#undef ne
#undef ex
#undef lk
#undef nl
#undef grp
#undef u
#undef plusE
#undef minusE
#undef plusL
#undef minusL
#undef F0
#undef F1

/* ------------------------------------------------------------------ */
/* Conditions that need a look-up                                      */
/* ------------------------------------------------------------------ */

/* The element of a lock held beside the epoch's first one, or NULL. */
osc_newrma_target_t *osc_newrma_epoch_other_lock(ompi_osc_newrma_module_t *module, int target)
{
    return module->lock_count > (unsigned int) module->first_lock.in_use
        ? osc_newrma_target_find(module, target) : NULL;
}

bool osc_newrma_epoch_holds_lock(ompi_osc_newrma_module_t *module, int target)
{
    return osc_newrma_first_lock_is(module, target) || NULL != osc_newrma_epoch_other_lock(module, target);
}

static bool pscw_group_has(const ompi_osc_newrma_module_t *module, int target)
{
    /* the start group, as sorted communicator ranks */
    return osc_newrma_rank_index(module->start_ranks, module->start_count, target) >= 0;
}

/* The look-up conditions of `when` (lk, nl, grp) hold for target. */
static inline bool lookups_hold(ompi_osc_newrma_module_t *module, int target, uint8_t when)
{
    return !((when & NEWRMA_EPOCH_IF_LOCKED) && !osc_newrma_epoch_holds_lock(module, target))
           && !((when & NEWRMA_EPOCH_IF_NOT_LOCKED) && osc_newrma_epoch_holds_lock(module, target))
           && !((when & NEWRMA_EPOCH_IF_IN_GROUP) && !pscw_group_has(module, target));
}

int osc_newrma_epoch_check_slow(ompi_osc_newrma_module_t *module, osc_newrma_sync_t sync, int target,
                                uint8_t when)
{
    if (when & NEWRMA_EPOCH_IF_FENCE_UNUSED) {
        /* A fence that no RMA call followed opens no real epoch: the design
         * lets any other synchronization take the window straight from
         * there (once the fence's barrier is complete). */
        if (osc_newrma_load_relaxed(&module->fence_epoch_used)) {
            return OMPI_ERR_RMA_SYNC;
        }
        osc_newrma_fence_grant(module);
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_FENCE_CLOSE);
        return osc_newrma_epoch_check(module, sync, target);
    }
    return lookups_hold(module, target, when) ? OMPI_SUCCESS : OMPI_ERR_RMA_SYNC;
}

/* ------------------------------------------------------------------ */
/* The OP row out of line                                              */
/* ------------------------------------------------------------------ */

/* (Every operation of a PSCW or lock epoch comes here: the cell's
 * conditions, look-ups only in this row, are looked at directly.) */
int osc_newrma_epoch_access_slow(ompi_osc_newrma_module_t *module, int target)
{
    /* acquire: a PSCW epoch another thread granted is seen with what that
     * thread saw of the posts (osc_newrma_pscw_grant_slow stores with
     * release) */
    const osc_newrma_win_state_t state = osc_newrma_load_acquire(&module->state);
    const osc_newrma_epoch_cell_t cell = osc_newrma_epoch_table[NEWRMA_SYNC_OP][state];
    int ret = OMPI_SUCCESS;

    if (NEWRMA_EPOCH_ILLEGAL == cell.to || !lookups_hold(module, target, cell.when)) {
        return OMPI_ERR_RMA_SYNC;
    }
    if (OPAL_LIKELY(osc_newrma_epoch_next(cell) == state && 0 == cell.then)) {
        return OMPI_SUCCESS;       /* nothing to do but check: PSCW_GRANTED, PER_TARGET */
    }
    /* the first operation of an issued epoch waits for its grant (node
     * path: the fence's barrier, the posts of the start group) */
    switch (state) {
    case NEWRMA_WIN_FENCE_ISSUED:
        osc_newrma_fence_grant(module);
        break;
    case NEWRMA_WIN_PSCW_ISSUED:
        ret = osc_newrma_pscw_grant_slow(module);
        break;
    default:
        break;
    }
    if (OMPI_SUCCESS == ret) {
        osc_newrma_epoch_apply(module, NEWRMA_SYNC_OP);
    }
    return ret;
}

int osc_newrma_epoch_check_free(ompi_osc_newrma_module_t *module)
{
    return osc_newrma_epoch_check(module, NEWRMA_SYNC_FREE, -1);
}

void osc_newrma_epoch_trace(const ompi_osc_newrma_module_t *module, osc_newrma_sync_t sync,
                            osc_newrma_win_state_t from, osc_newrma_win_state_t to)
{
    static const char *const calls[NEWRMA_SYNC_ROWS] = {
        [NEWRMA_SYNC_OP] = "first operation", [NEWRMA_SYNC_REQUEST_OP] = "request-based operation",
        [NEWRMA_SYNC_FENCE] = "fence", [NEWRMA_SYNC_FENCE_NOPRECEDE] = "fence (noprecede)",
        [NEWRMA_SYNC_FENCE_NOSUCCEED] = "fence (nosucceed)", [NEWRMA_SYNC_START] = "start",
        [NEWRMA_SYNC_START_GRANTED] = "start (granted)", [NEWRMA_SYNC_COMPLETE] = "complete",
        [NEWRMA_SYNC_POST] = "post", [NEWRMA_SYNC_WAIT] = "wait", [NEWRMA_SYNC_LOCK] = "lock",
        [NEWRMA_SYNC_UNLOCK] = "unlock", [NEWRMA_SYNC_LOCK_ALL] = "lock_all",
        [NEWRMA_SYNC_LOCK_ALL_GRANTED] = "lock_all (granted)", [NEWRMA_SYNC_UNLOCK_ALL] = "unlock_all",
        [NEWRMA_SYNC_FLUSH] = "flush", [NEWRMA_SYNC_FLUSH_ALL] = "flush_all", [NEWRMA_SYNC_FREE] = "free",
        [NEWRMA_SYNC_ISSUE] = "lock_all issued", [NEWRMA_SYNC_GRANT] = "epoch granted",
        [NEWRMA_SYNC_FENCE_CLOSE] = "unused fence epoch closed",
    };
    static const char *const states[NEWRMA_WIN_STATES] = {
        [NEWRMA_WIN_NONE] = "NONE", [NEWRMA_WIN_PER_TARGET] = "PER_TARGET",
        [NEWRMA_WIN_PSCW_ISSUED] = "PSCW_ISSUED", [NEWRMA_WIN_PSCW_GRANTED] = "PSCW_GRANTED",
        [NEWRMA_WIN_FENCE_ISSUED] = "FENCE_ISSUED", [NEWRMA_WIN_FENCE_GRANTED] = "FENCE_GRANTED",
        [NEWRMA_WIN_LOCK_ALL_CALLED] = "LOCK_ALL_CALLED", [NEWRMA_WIN_LOCK_ALL_ISSUED] = "LOCK_ALL_ISSUED",
        [NEWRMA_WIN_LOCK_ALL_GRANTED] = "LOCK_ALL_GRANTED",
    };

    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "%s: window %p \"%s\", rank %d, %s -> %s", calls[sync],
                   (void *) module->win, module->win->w_name, module->rank, states[from],
                   NEWRMA_EPOCH_ILLEGAL == osc_newrma_epoch_table[sync][from].to ? "?" : states[to]);
}
