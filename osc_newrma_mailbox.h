/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: target-assisted accumulates on windows of user memory
 * (osc_newrma_assist.c, docs/shared-segment.md "Assist mailbox").
 */

#ifndef OSC_NEWRMA_MAILBOX_H
#define OSC_NEWRMA_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "osc_newrma.h"
#include "osc_newrma_progress.h"

enum { NEWRMA_ASSIST_ACC = 1, NEWRMA_ASSIST_CAS, NEWRMA_ASSIST_PUT, NEWRMA_ASSIST_GET,
       NEWRMA_ASSIST_SHARE_PUT, NEWRMA_ASSIST_SHARE_GET, NEWRMA_ASSIST_SHARE_ACC,
       NEWRMA_ASSIST_RELAY_PUT, NEWRMA_ASSIST_RELAY_GET, NEWRMA_ASSIST_RELAY_ACC };

/* What a process does with the bytes [off, off + len) of a shared operation. */
typedef int (*osc_newrma_share_chunk_fn_t)(void *ctx, uint64_t off, uint64_t len);

/* Could `count` elements of predefined `dt` to `target` go through the
 * mailbox at all?  (A window with a mailbox, not ourselves, payload fits.) */
static inline bool osc_newrma_assist_fits(const ompi_osc_newrma_module_t *module, int target, int count,
                                          struct ompi_datatype_t *dt)
{
    return (size_t) count * dt->super.size <= module->assist_max_bytes && target != module->rank;
}

/* Origin side: have the target apply the operation (an accumulate or
 * get_accumulate of `count` elements, old values into `result` if not NULL;
 * a compare-and-swap of one element).  OMPI_SUCCESS: done, as if by the
 * single-copy path -- or, for an accumulate without result on a
 * single-threaded window, posted and pending like a handed-over put
 * (osc_newrma_assist_move_complete); OMPI_ERR_WOULD_BLOCK: the target is not inside MPI (or
 * its mailbox is busy, or it did not answer in time) -- the caller does it
 * itself.  `taddr`: the first target byte, range-checked. */
int osc_newrma_assist_accumulate(ompi_osc_newrma_module_t *module, int target, uint64_t taddr, ptrdiff_t disp,
                                 struct ompi_op_t *op, struct ompi_datatype_t *dt, int count,
                                 const void *origin, void *result);
int osc_newrma_assist_cas(ompi_osc_newrma_module_t *module, int target, uint64_t taddr,
                          struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result);

/* Complete the window's pending handed-over operation, if any: every
 * accumulate-family call does first (accumulates from one origin are
 * ordered, and the pending one may be an accumulate), and so do the
 * synchronizations that complete operations. */
int osc_newrma_assist_move_complete(ompi_osc_newrma_module_t *module);
static inline int osc_newrma_assist_flush_pending(ompi_osc_newrma_module_t *module)
{
    return OPAL_UNLIKELY(module->assist_pending.active) ? osc_newrma_assist_move_complete(module) : OMPI_SUCCESS;
}

/* Origin side, small contiguous puts and gets of the single-copy table:
 * post one to the target and return (OMPI_ERR_WOULD_BLOCK: not posted --
 * target absent, mailbox busy, or this window has one in flight already;
 * the caller batches it as usual).  Whatever synchronization completes
 * the window's operations calls move_complete first when the window has one
 * pending: it waits for the answer (a get's data into its buffer), or
 * withdraws the request and does it by single copy. */
int osc_newrma_assist_move(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                           uint64_t taddr, size_t bytes);

/* Origin side, large contiguous puts and gets of the single-copy table:
 * post the copy to the target's mailbox and copy `bytes` with whichever
 * help it gives (a target inside MPI joins; each process takes the next
 * chunk until none are left); complete when it returns
 * (OMPI_ERR_WOULD_BLOCK: mailbox busy, not posted -- the caller copies it
 * alone). */
int osc_newrma_assist_share(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                            uint64_t taddr, size_t bytes);

/* Origin side, puts and gets of the single-copy table -- a window's
 * batch, or the contiguous pieces of a derived datatype's transfer -- to
 * a target inside MPI (its presence stamp
 * is fresh): stream the `bytes` of `nsegs` (at most NEWRMA_RELAY_SEGS)
 * segments through this process's relay area (osc_newrma_relay.h) -- the
 * writer copies chunks into its slots, the reader out of them -- and
 * return complete.  `local[i]` and `remote[i]` (target addresses) have the
 * same length.  OMPI_ERR_WOULD_BLOCK: not done (target absent, mailbox
 * busy, no area, not taken in time, or the target cannot map the area);
 * the caller copies it another way. */
int osc_newrma_assist_relay(ompi_osc_newrma_module_t *module, int target, bool write, const struct iovec *local,
                            const struct iovec *remote, unsigned int nsegs, size_t bytes);

/* Origin side, accumulates and get_accumulates on the single-copy table
 * to a target inside MPI, under the stripes of the whole span (the caller
 * holds them for both processes): `bytes` of packed elements of predefined
 * `dt` at `origin` (NULL for MPI_NO_OP) streamed through this process's
 * relay area, half a slot at a time; the target reduces each chunk into
 * its `nsegs` (at most NEWRMA_RELAY_SEGS) segments `remote`, of whole
 * elements, as it arrives, first leaving its old values in the slot for
 * `old` (unless NULL; packed like `origin`).  Complete when it returns;
 * OMPI_ERR_WOULD_BLOCK: nothing done, as osc_newrma_assist_relay.  _fits:
 * relays on for this size, chunks of whole elements. */
bool osc_newrma_assist_relay_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize);
int osc_newrma_assist_relay_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin, void *old,
                                       const struct iovec *remote, unsigned int nsegs, size_t bytes,
                                       struct ompi_op_t *op, struct ompi_datatype_t *dt);

/* Origin side, large accumulates and get_accumulates on the single-copy
 * table (`bytes` of packed elements of predefined `dt` at `origin`, to
 * `taddr`; old values into `result` unless NULL): the caller holds the
 * accumulate stripes of the whole span, for both processes; each takes the
 * next chunk until none are left -- the target reads the origin's elements
 * (writes its old ones to `result`) and reduces them into its memory in
 * place, the origin does its chunks with `fn` (read, combine, write back).
 * Same returns as osc_newrma_assist_share.  _fits: is it worth posting? */
bool osc_newrma_assist_share_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize,
                                      bool with_result);
int osc_newrma_assist_share_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin,
                                       void *result, uint64_t taddr, size_t bytes, struct ompi_op_t *op,
                                       struct ompi_datatype_t *dt, osc_newrma_share_chunk_fn_t fn, void *ctx);

/* Target side, from opal_progress (osc_newrma_progress.c): refresh the
 * presence stamp if `now` (0: no clock reading this call), then apply a
 * posted request if its stripe is free.  Never waits.  Returns the work done. */
int osc_newrma_assist_serve(ompi_osc_newrma_module_t *module, uint64_t now);

/* Creation: size the payload (0: no mailbox use); whether the window is
 * served from progress. */
void osc_newrma_assist_init(ompi_osc_newrma_module_t *module);
/* the largest put or get worth handing over (within one hardware line) */
size_t osc_newrma_assist_move_max(const ompi_osc_newrma_module_t *module);
static inline bool osc_newrma_assist_served(const ompi_osc_newrma_module_t *module)
{
    return 0 != module->assist_serve_bytes;
}

/* MPI_Win_complete, before it signals the completion: a pending put or
 * accumulate (no answer owed) is left in the target's mailbox for its
 * MPI_Win_wait.  After the signal: collect_answer waits for the answer a
 * pending get, get_accumulate or compare-and-swap owes (the target's wait
 * serves it, and cannot return before), or withdraws it after
 * osc_newrma_assist_timeout and does it by single copy. */
int osc_newrma_assist_complete_epoch(ompi_osc_newrma_module_t *module);
int osc_newrma_assist_collect_answer(ompi_osc_newrma_module_t *module);

/* MPI_Win_wait/test, once every completion has arrived: serve our mailbox
 * and say whether it holds no request still to apply (an origin may have
 * left one there before its MPI_Win_complete). */
bool osc_newrma_assist_drained(ompi_osc_newrma_module_t *module);

/* the state word: sequence << NEWRMA_ASSIST_BITS | state */
enum {
    NEWRMA_ASSIST_FREE = 0,
    NEWRMA_ASSIST_CLAIMED,
    NEWRMA_ASSIST_POSTED,
    NEWRMA_ASSIST_TAKEN,
    NEWRMA_ASSIST_DONE,
    /* withdrawn after its origin's MPI_Win_complete signalled: the origin
     * is doing it by single copy, and the target's MPI_Win_wait must not
     * return before it is done (the origin frees the mailbox then) */
    NEWRMA_ASSIST_WITHDRAWING,
};
#define NEWRMA_ASSIST_BITS 3
#define NEWRMA_ASSIST_MASK ((1u << NEWRMA_ASSIST_BITS) - 1)

/* Is a request posted in our own mailbox?  One load of our own line, so
 * that a spin-wait takes the serving lock (two locked instructions) only
 * when there is something to serve. */
static inline bool osc_newrma_assist_request_posted(const ompi_osc_newrma_module_t *module)
{
    const osc_newrma_assist_box_t *box = osc_newrma_shm_assist_box(&module->shm, module->rank);

    return NEWRMA_ASSIST_POSTED == (__atomic_load_n(&box->state, __ATOMIC_RELAXED) & NEWRMA_ASSIST_MASK);
}

/* One step of a window's own spin-wait where origins may be waiting for
 * us (fence, MPI_Win_wait): answer the mailbox at once rather than only
 * from opal_progress, which the backoff reaches after its busy phase. */
static inline void osc_newrma_assist_serve_now(ompi_osc_newrma_module_t *module)
{
    if (osc_newrma_assist_served(module) && osc_newrma_assist_request_posted(module)) {
        (void) osc_newrma_progress_serve(module);
    }
}

#define osc_newrma_assist_backoff(module, spins) (osc_newrma_assist_serve_now(module), osc_newrma_backoff(spins))

#endif
