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
 * osc/newrma: the target's mailbox for small operations on windows of user
 * memory on one node (osc_newrma_mailbox.c; its lines are in the segment,
 * osc_newrma_shm.h, docs/shared-segment.md "Assist mailbox").  The origin
 * side hands a small put, get, accumulate or compare-and-swap to a target
 * inside MPI; the target side, from progress, applies it and dispatches the
 * large requests posted in the same mailbox to their own files (shared
 * copies: osc_newrma_shared_copy.c, relays: osc_newrma_relay.c).  When to
 * use which is osc_newrma_node_policy.h's.
 */

#ifndef OSC_NEWRMA_MAILBOX_H
#define OSC_NEWRMA_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_newrma.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_progress.h"

/* what a request asks (the mailbox's `kind`): the small operations first,
 * then the shared copies and relays (osc_newrma_mailbox_kind_is_large) */
enum { NEWRMA_MAILBOX_ACC = 1, NEWRMA_MAILBOX_CAS, NEWRMA_MAILBOX_PUT, NEWRMA_MAILBOX_GET,
       NEWRMA_MAILBOX_SHARE_PUT, NEWRMA_MAILBOX_SHARE_GET, NEWRMA_MAILBOX_SHARE_ACC,
       NEWRMA_MAILBOX_RELAY_PUT, NEWRMA_MAILBOX_RELAY_GET, NEWRMA_MAILBOX_RELAY_ACC };

/* the state word (64-bit): sequence << NEWRMA_MAILBOX_BITS | state, a
 * 61-bit sequence that no stale view outlives */
enum {
    NEWRMA_MAILBOX_FREE = 0,
    NEWRMA_MAILBOX_CLAIMED,
    NEWRMA_MAILBOX_POSTED,
    NEWRMA_MAILBOX_TAKEN,
    NEWRMA_MAILBOX_DONE,
    /* withdrawn after its origin's MPI_Win_complete signalled: the origin
     * is doing it by single copy, and the target's MPI_Win_wait must not
     * return before it is done (the origin frees the mailbox then) */
    NEWRMA_MAILBOX_WITHDRAWING,
};
/* in the mailbox's kind byte, over the kind */
#define NEWRMA_MAILBOX_WANT_RESULT 0x80
#define NEWRMA_MAILBOX_BITS 3
#define NEWRMA_MAILBOX_MASK (((uint64_t) 1 << NEWRMA_MAILBOX_BITS) - 1)

/* What one request says, besides its payload (the target reads a copy of
 * it before it takes the request).  The mailbox holds it packed
 * (osc_newrma_mailbox_t): `count` in a byte for the small operations,
 * where it is at most NEWRMA_MAILBOX_MAX_PAYLOAD, and `answer_to` of a
 * small operation and `count` of a shared copy or relay in one word. */
typedef struct {
    uint8_t kind;
    uint8_t want_result;
    uint16_t dt_id;
    int32_t op_index;
    int32_t answer_to;   /* 1 + the rank whose answer line gets the answer; 0: the mailbox */
    uint32_t count;      /* elements; shared copies and relays: the origin's rank */
    uint64_t addr;
} osc_newrma_mailbox_request_t;

/* ------------------------------------------------------------------ */
/* origin side: small operations                                       */
/* ------------------------------------------------------------------ */

/* Have the target apply the operation (an accumulate or get_accumulate of
 * `count` elements, old values into `result` if not NULL; a
 * compare-and-swap of one element).  OMPI_SUCCESS: done, as if by the
 * single-copy path -- or, for an accumulate without result on a
 * single-threaded window, posted and pending like a handed-over put
 * (osc_newrma_mailbox_move_complete); OMPI_ERR_WOULD_BLOCK: the target is
 * not inside MPI (or its mailbox is busy, or it did not answer in time) --
 * the caller does it itself.  `taddr`: the first target byte,
 * range-checked. */
int osc_newrma_mailbox_accumulate(ompi_osc_newrma_module_t *module, int target, uint64_t taddr, ptrdiff_t disp,
                                  struct ompi_op_t *op, struct ompi_datatype_t *dt, int count,
                                  const void *origin, void *result);
int osc_newrma_mailbox_cas(ompi_osc_newrma_module_t *module, int target, uint64_t taddr,
                           struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result);

/* Small contiguous puts and gets of the user-memory table: post one to the
 * target and return (OMPI_ERR_WOULD_BLOCK: not posted -- target absent,
 * mailbox busy, or this window has one in flight already; the caller
 * batches it as usual).  Whatever synchronization completes the window's
 * operations calls move_complete first when the window has one pending: it
 * waits for the answer (a get's data into its buffer), or withdraws the
 * request and does it by single copy. */
int osc_newrma_mailbox_move(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                            uint64_t taddr, size_t bytes);

/* Complete the window's pending handed-over operation, if any: every
 * accumulate-family call does first (accumulates from one origin are
 * ordered, and the pending one may be an accumulate), and so do the
 * synchronizations that complete operations. */
int osc_newrma_mailbox_move_complete(ompi_osc_newrma_module_t *module);
static inline int osc_newrma_mailbox_flush_pending(ompi_osc_newrma_module_t *module)
{
    return OPAL_UNLIKELY(module->assist_pending.active) ? osc_newrma_mailbox_move_complete(module) : OMPI_SUCCESS;
}

/* MPI_Win_complete, before it signals the completion: a pending put or
 * accumulate (no answer owed) is left in the target's mailbox for its
 * MPI_Win_wait.  After the signal: collect_answer waits for the answer a
 * pending get, get_accumulate or compare-and-swap owes (the target's wait
 * serves it, and cannot return before), or withdraws it after
 * osc_newrma_assist_timeout and does it by single copy. */
int osc_newrma_mailbox_complete_epoch(ompi_osc_newrma_module_t *module);
int osc_newrma_mailbox_collect_answer(ompi_osc_newrma_module_t *module);

/* ------------------------------------------------------------------ */
/* origin side: what shared copies and relays post through the mailbox */
/* ------------------------------------------------------------------ */

static inline uint64_t osc_newrma_mailbox_target_word(int target, uint32_t low)
{
    return (uint64_t) (uint32_t) target << 32 | low;
}

/* Has the target run progress lately, and not failed us since?  *stamp:
 * the stamp seen (remembered if the target then does not answer). */
static inline bool osc_newrma_mailbox_target_present(ompi_osc_newrma_module_t *module, int target, uint64_t *stamp)
{
    uint64_t trusted;

    *stamp = osc_newrma_load_relaxed(&osc_newrma_shm_mailbox_presence(&module->shm, target)->stamp);
    if (0 == *stamp || *stamp == osc_newrma_load_relaxed(&module->assist_miss_stamp)) {
        return false;
    }
    /* a lost decrement (threads) only trusts one answer more */
    trusted = osc_newrma_load_relaxed(&module->assist_trusted);
    if ((trusted >> 32) == (uint32_t) target && (uint32_t) trusted > 0) {
        osc_newrma_store_relaxed(&module->assist_trusted, trusted - 1);
        return true;
    }
    return osc_newrma_clock_ns() - *stamp < NEWRMA_MAILBOX_FRESH_NS;
}

/* Claim the target's mailbox and post `req` with `in_bytes` of payload,
 * whether or not the target looks present: OMPI_ERR_WOULD_BLOCK if the
 * mailbox is busy.  *mine: the request's sequence. */
int osc_newrma_mailbox_post(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                            const void *in, size_t in_bytes, uint64_t *mine);

/* Take back a request the target did not take in time (POSTED -> `back`):
 * false if it took it meanwhile.  The stamp it was asked on is remembered
 * (unless 0: not asked on a stamp, nothing learned). */
bool osc_newrma_mailbox_withdraw(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t mine,
                                 uint64_t stamp, uint64_t back);

/* the length of the chunk at `off` of `bytes` in chunks of `chunk` (the
 * last one may be short): shared copies and relays cut alike */
static inline uint64_t osc_newrma_chunk_len(uint64_t bytes, uint64_t off, uint64_t chunk)
{
    return bytes - off < chunk ? bytes - off : chunk;
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

/* From opal_progress (osc_newrma_progress.c): refresh the presence stamp
 * if `now` (0: no clock reading this call), then apply a posted request if
 * its stripe is free, or join a shared copy or serve a relay.  Never waits
 * for a request to come.  Returns the work done. */
int osc_newrma_mailbox_serve(ompi_osc_newrma_module_t *module, uint64_t now);

/* Refresh our presence stamp at most every NEWRMA_MAILBOX_STAMP_NS. */
static inline void osc_newrma_mailbox_stamp(ompi_osc_newrma_module_t *module, uint64_t now)
{
    if (0 != now && now - module->assist_stamp_written >= NEWRMA_MAILBOX_STAMP_NS) {
        module->assist_stamp_written = now;
        osc_newrma_store_relaxed(&osc_newrma_shm_mailbox_presence(&module->shm, module->rank)->stamp, now);
    }
}

/* Is the window served from progress (has it a mailbox)? */
static inline bool osc_newrma_mailbox_served(const ompi_osc_newrma_module_t *module)
{
    return 0 != module->assist_serve_bytes;
}

/* MPI_Win_wait/test, once every completion has arrived: serve our mailbox
 * and say whether it holds no request still to apply (an origin may have
 * left one there before its MPI_Win_complete). */
bool osc_newrma_mailbox_drained(ompi_osc_newrma_module_t *module);

/* Is the request a shared copy or a relay (large), not a small operation? */
static inline bool osc_newrma_mailbox_kind_is_large(uint8_t kind)
{
    return kind >= NEWRMA_MAILBOX_SHARE_PUT;
}

/* Is a request posted in our own mailbox?  One load of our own line, so
 * that a spin-wait takes the serving lock (two locked instructions) only
 * when there is something to serve. */
static inline bool osc_newrma_mailbox_request_posted(const ompi_osc_newrma_module_t *module)
{
    const osc_newrma_mailbox_t *box = osc_newrma_shm_mailbox(&module->shm, module->rank);

    return NEWRMA_MAILBOX_POSTED == (osc_newrma_load_relaxed(&box->state) & NEWRMA_MAILBOX_MASK);
}

/* One step of a window's own spin-wait where origins may be waiting for
 * us (fence, MPI_Win_wait): answer the mailbox at once rather than only
 * from opal_progress, which the backoff reaches after its busy phase. */
static inline void osc_newrma_mailbox_serve_now(ompi_osc_newrma_module_t *module)
{
    if (osc_newrma_mailbox_served(module) && osc_newrma_mailbox_request_posted(module)) {
        (void) osc_newrma_progress_serve(module);
    }
}

#define osc_newrma_mailbox_backoff(module, spins) (osc_newrma_mailbox_serve_now(module), osc_newrma_backoff(spins))

#endif /* OSC_NEWRMA_MAILBOX_H */
