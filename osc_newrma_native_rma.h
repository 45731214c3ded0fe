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
 * osc/newrma: the native route of the active-message path
 * (docs/mixed-windows.md, "Native RMA where UCX has it").
 *
 * An MPI_Win_allocate window of the active-message path (osc_newrma_native_rma
 * set) maps its memory with ucp_mem_map, a lock word in the cache line before
 * the window's first byte.  At creation every process sends every other its
 * packed key (one allgather: the first access to a target must not need the
 * target's CPU, and a key asked for lazily would).  The window goes native
 * when every process reaches every peer's memory, itself included, without
 * that peer's CPU: UCX's endpoint has atomic lanes and the peer's key maps
 * its memory here (ucp_rkey_ptr: shared memory, whose atomics are the CPU's
 * lock-prefixed instructions).  Decided once, collectively; a window is
 * native for all its peers or for none.
 *
 * In a native window:
 *  - locks are the lock word (shared: fetch-add of one reader, backed out
 *    when a writer holds or waits; exclusive: count as a waiting writer,
 *    then compare-and-swap waiting -> holding once the word has no reader),
 *    taken where the active-message path would send LOCK (its lazy,
 *    ordered and tried locks keep their rules; a lock that must wait is
 *    granted from progress, as a queued LOCK is) and released after
 *    ucp_ep_flush_nbx where it would send UNLOCK;
 *  - aligned elements only for the atomics (UCX requires it);
 *  - contiguous puts and gets without request are ucp_put_nbx/ucp_get_nbx;
 *  - single-element 4/8-byte integer accumulates, get_accumulates and
 *    fetch_and_ops with sum, band, bor, bxor, replace or no_op, and 4/8-byte
 *    compare_and_swap, are ucp_atomic_op_nbx, done when the call returns;
 *  - a notified put or single-element accumulate (libmpix_newrma) whose
 *    counters' companion window is native too: the operation, a worker
 *    fence, then a UCX atomic add on the target's counter;
 *  - everything else is an active message, and the target's handler applies
 *    those same (operation, type) pairs element by element with the CPU's
 *    atomics, so that both routes are atomic with each other.
 * Every synchronization flushes the endpoint before its packet goes (fence,
 * complete and unlock order the native operations before what they
 * announce).
 */

#ifndef OSC_NEWRMA_NATIVE_RMA_H
#define OSC_NEWRMA_NATIVE_RMA_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_newrma.h"
#include "osc_newrma_datatype.h"

BEGIN_C_DECLS

struct osc_newrma_native_t;

/* Is the window native (decided at creation)?  No AM lock needed. */
bool osc_newrma_native_on(const struct ompi_osc_newrma_module_t *module);

/* --- window life cycle (AM lock not held) --- */
/* An allocate window's memory, mapped for UCX (module->native keeps it):
 * OMPI_SUCCESS, or OMPI_ERR_NOT_AVAILABLE (not asked for, or UCX cannot
 * map it): the caller allocates as without. */
int osc_newrma_native_memory(struct ompi_osc_newrma_module_t *module, size_t size, void **base);
/* Collective over the window, after the transports are connected, on every
 * process of an allocate window when osc_newrma_native_rma is set: keys
 * exchanged, the window native on every process or on none. */
int osc_newrma_native_window_init(struct ompi_osc_newrma_module_t *module);
/* After the closing barrier: keys and memory released. */
void osc_newrma_native_window_fini(struct ompi_osc_newrma_module_t *module);

/* --- origin side, AM lock held, native windows only --- */
/* Where the active-message path sends LOCK: take t's lock word.  Tried
 * (try_only): granted or refused at once (t->denied), as a tried LOCK is
 * answered; else granted now or, like a queued LOCK, from progress (t
 * ISSUED until then: callers wait for the grant as for a packet). */
int osc_newrma_native_lock(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool try_only);
/* Locks waiting in line: any (no AM lock needed)?  Retry them (AM lock
 * held): the number granted or failed. */
bool osc_newrma_native_pending(void);
int osc_newrma_native_progress(void);
/* Before a synchronization (NEWRMA_PF_* flags) goes to t: the native
 * operations flushed; an UNLOCK of a lock word becomes a FLUSH of the
 * active messages, the word released by native_unlocked once they are
 * acknowledged. */
int osc_newrma_native_closing(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint8_t *sync_flags);
int osc_newrma_native_unlocked(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *t);
/* `rank`'s window size and disp_unit (exchanged at creation). */
void osc_newrma_native_bounds(const struct ompi_osc_newrma_module_t *module, int rank, uint64_t *size,
                              int *disp_unit);
/* A contiguous put (`put`) or get of len bytes at byte `offset` of t's
 * window, complete at the next synchronization of t; a notified put
 * (`notify` counter index + 1, 0: none) is followed by its notification
 * (osc_newrma_native_notify). */
int osc_newrma_native_move(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool put, void *buffer,
                           size_t len, uint64_t offset, uint32_t notify);
/* May a notified operation to `rank` have its counter (index idx of the
 * companion window libmpix_newrma attached, module->notify_companion)
 * incremented natively: both windows native, one endpoint, the counter
 * inside the companion? */
bool osc_newrma_native_notify_ok(const struct ompi_osc_newrma_module_t *module, int rank, uint32_t idx);
/* After a native operation to t that osc_newrma_native_notify_ok accepted:
 * a worker fence, then a non-fetching atomic add of 1 on counter
 * `notify` - 1 at t (0: nothing), locally complete on return. */
int osc_newrma_native_notify(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint32_t notify);
/* Would one element of `dt` with `op` (NULL: compare-and-swap) go native? */
bool osc_newrma_native_atomic_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt);
/* One element at byte `offset` of rank's window: the operation (origin: the
 * operand, NULL for no_op; compare: compare-and-swap's), the old value into
 * result (NULL: not wanted); done at the target on return. */
int osc_newrma_native_atomic(struct ompi_osc_newrma_module_t *module, int rank, struct ompi_op_t *op,
                             struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result,
                             uint64_t offset);

/* --- target side (packet handler, AM lock held) --- */
/* An accumulate packet on a native window: applied element by element with
 * the CPU's atomics when its (op, type) is one the native route does
 * (*ret set, true); false: the caller applies it as usual.  Under the
 * caller's stripes either way: they guard its misaligned elements, which
 * the native route never takes.  packed: the origin's elements (NULL for
 * no_op); result: the old elements, or NULL. */
bool osc_newrma_native_acc_apply(const struct ompi_osc_newrma_module_t *module, char *addr, int count,
                                 struct ompi_datatype_t *dt, const osc_newrma_layout_t *tl,
                                 const void *packed, struct ompi_op_t *op, void *result, int *ret);
/* A compare-and-swap packet of `size` bytes: atomic when 4 or 8 (true). */
bool osc_newrma_native_cas_apply(const struct ompi_osc_newrma_module_t *module, void *addr, size_t size,
                                 const void *value, const void *compare, void *old);

END_C_DECLS

#endif /* OSC_NEWRMA_NATIVE_RMA_H */
