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
 * memory on one node (MPI_Win_create/create_dynamic), origin and target
 * side.
 *
 * On the single-copy path an accumulate, fetch_and_op or compare_and_swap
 * costs the origin two system calls under the stripe lock (read, combine,
 * write back), and a small put or get one, where a target that is inside
 * MPI anyway -- waiting in a barrier, a receive, a fence, MPI_Win_wait --
 * could apply it in place in a fraction of that.  So each rank block of
 * such a window has a mailbox line, a presence line and an answer line
 * (docs/shared-segment.md):
 *
 *  - the target stamps its presence line (CLOCK_MONOTONIC) from newrma's
 *    progress callback (osc_newrma_progress.c), at most once every
 *    NEWRMA_MAILBOX_STAMP_NS;
 *  - an origin whose target stamped within NEWRMA_MAILBOX_FRESH_NS claims the
 *    mailbox (compare-and-swap FREE -> CLAIMED with the next sequence
 *    number), writes the request and posts it, then waits up to
 *    osc_newrma_assist_timeout us for the target to take it;
 *  - the target, in progress, sees POSTED, takes the element's accumulate
 *    stripe with a try (the same stripes the single-copy path locks, so the
 *    two exclude each other as MPI's atomicity requires), takes the request
 *    (POSTED -> TAKEN), applies it to its own memory, gives the stripe back
 *    and answers: on the origin's own answer line when the origin waits
 *    there (the mailbox is freed first), else in the mailbox (DONE);
 *  - an origin that was not answered in time withdraws (POSTED -> FREE): one
 *    of the two compare-and-swaps wins, so a request is applied exactly once
 *    -- by the target, or after the withdrawal by the origin itself over the
 *    single-copy path.  The origin remembers the stamp that did not answer
 *    and does not try that target again until it stamps anew.
 *  - a put, or an accumulate without result, may be left pending (one per
 *    window) until the window's next completion; in a PSCW epoch until the
 *    target's MPI_Win_wait, which drains the mailbox.
 *
 * Passive targets stay passive: a target computing outside MPI has a stale
 * stamp, and its origins go straight to single-copy (one extra load and a
 * clock reading).  Nothing waits on the target for long, progress never
 * waits for a request to come, and an operation is still complete when the
 * synchronization that completes it returns.  The sequence number in the
 * state word is what makes the target's compare-and-swap safe: it copied
 * the request before taking it, and a request withdrawn and replaced
 * meanwhile has another sequence.
 *
 * Large operations are posted in the same mailbox: shared copies
 * (osc_newrma_shared_copy.c) and relays (osc_newrma_relay.c); the target
 * side here dispatches them to their files.  Which operation goes where,
 * and every limit: osc_newrma_node_policy.h.
 */

#include "ompi_config.h"

#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/op/op.h"
#include "opal/runtime/opal_progress.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_relay.h"
#include "osc_newrma_shared_copy.h"
#include "osc_newrma_single_copy.h"

/* ------------------------------------------------------------------ */
/* origin side                                                         */
/* ------------------------------------------------------------------ */

/* The mailbox holds a datatype id and an op index in a byte each: every
 * predefined datatype fits, and so does every predefined op (Open MPI
 * numbers them first, before any user-defined one). */
_Static_assert(OMPI_DATATYPE_MPI_MAX_PREDEFINED <= 256, "predefined datatype ids fit in a byte");

/* How long an origin waits for its target to take a request. */
typedef enum {
    ASSIST_WITHDRAW_AT_ONCE,   /* not at all: the target is likely busy outside MPI */
    ASSIST_SPIN,               /* up to the timeout, spinning: the target looked present */
    ASSIST_SPIN_POLITELY,      /* up to the timeout, serving our own mailbox and giving
                                * the core away: a PSCW epoch, whose target is likely
                                * in MPI_Win_wait but may be off its core */
    ASSIST_AFTER_COMPLETION,   /* the same after MPI_Win_complete signalled: a withdrawal
                                * holds the mailbox (WITHDRAWING) until the single copy
                                * is done, as the target's wait may be draining it */
} assist_patience_t;

/* Has a wait passed osc_newrma_assist_timeout?  *deadline: 0 at the
 * wait's start (the first call sets it). */
static bool assist_timed_out(uint64_t *deadline)
{
    uint64_t now = osc_newrma_clock_ns();

    if (0 == *deadline) {
        *deadline = now + 1000ull * mca_osc_newrma_component.assist_timeout;
        return false;
    }
    return now > *deadline;
}

/* Wait until the target takes request `posted` or the timeout passes. */
static bool wait_taken(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t posted,
                       assist_patience_t patience)
{
    uint64_t deadline = 0;
    unsigned int spins = 0, turns = 0, clock_turns = ASSIST_SPIN == patience ? NEWRMA_MAILBOX_CLOCK_SPINS : 1;

    while (posted == osc_newrma_load_acquire(&box->state)) {
        if (ASSIST_SPIN == patience) {
            osc_newrma_cpu_relax();
        } else {
            /* two completing epochs may wait for each other's answers */
            osc_newrma_mailbox_backoff(module, &spins);
        }
        if (0 == ++turns % clock_turns && assist_timed_out(&deadline)) {
            return false;
        }
    }
    return true;
}

/* Wait until our answer line holds `tag` or the timeout passes. */
static bool wait_answer(const osc_newrma_mailbox_answer_t *answer, uint64_t tag)
{
    uint64_t deadline = 0;
    unsigned int turns = 0;

    while (tag != osc_newrma_load_acquire(&answer->tag)) {
        osc_newrma_cpu_relax();
        if (0 == ++turns % NEWRMA_MAILBOX_CLOCK_SPINS && assist_timed_out(&deadline)) {
            return false;
        }
    }
    return true;
}

/* Claim a free mailbox: a compare-and-swap from the state it is expected
 * in -- where our last claim left it, if that was this target's, which
 * saves fetching the line before taking it -- then from the state seen. */
static bool assist_claim(ompi_osc_newrma_module_t *module, int target, osc_newrma_mailbox_t *box,
                         uint64_t *mine)
{
    uint64_t seen = target + 1 == osc_newrma_load_relaxed(&module->assist_box_hint_target)
                        ? osc_newrma_load_relaxed(&module->assist_box_hint)
                        : osc_newrma_load_relaxed(&box->state);

    for (int attempt = 0 ; attempt < 2 ; ++attempt) {
        /* busy (another origin's request): single-copy, no waiting in line */
        if (NEWRMA_MAILBOX_FREE != (seen & NEWRMA_MAILBOX_MASK)) {
            return false;
        }
        *mine = (seen & ~NEWRMA_MAILBOX_MASK) + ((uint64_t) 1 << NEWRMA_MAILBOX_BITS);
        if (osc_newrma_cas_acquire(&box->state, &seen, *mine | NEWRMA_MAILBOX_CLAIMED)) {
            /* every way out of a request leaves the mailbox FREE under its sequence */
            osc_newrma_store_relaxed(&module->assist_box_hint, *mine | NEWRMA_MAILBOX_FREE);
            osc_newrma_store_relaxed(&module->assist_box_hint_target, target + 1);
            return true;
        }
    }
    return false;
}

/* The request into the mailbox, packed (relaxed atomic stores: a target
 * may be reading a withdrawn one; the caller orders them). */
static void request_write(osc_newrma_mailbox_t *box, const osc_newrma_mailbox_request_t *req)
{
    bool large = osc_newrma_mailbox_kind_is_large(req->kind);

    osc_newrma_store_relaxed(&box->kind, (uint8_t) (req->kind | (req->want_result ? NEWRMA_MAILBOX_WANT_RESULT : 0)));
    osc_newrma_store_relaxed(&box->dt_id, (uint8_t) req->dt_id);
    osc_newrma_store_relaxed(&box->op_index, (uint8_t) req->op_index);
    osc_newrma_store_relaxed(&box->count, (uint8_t) (large ? 0 : req->count));
    osc_newrma_store_relaxed(&box->peer, large ? (int32_t) req->count : req->answer_to);
    osc_newrma_store_relaxed(&box->addr, req->addr);
}

/* The target's copy of a posted request (relaxed atomic loads; nothing in
 * it is trusted before the request is taken). */
static osc_newrma_mailbox_request_t request_read(const osc_newrma_mailbox_t *box)
{
    uint8_t kind = osc_newrma_load_relaxed(&box->kind);
    int32_t peer = osc_newrma_load_relaxed(&box->peer);
    osc_newrma_mailbox_request_t req = { .kind = kind & ~NEWRMA_MAILBOX_WANT_RESULT,
                                         .want_result = 0 != (kind & NEWRMA_MAILBOX_WANT_RESULT),
                                         .dt_id = osc_newrma_load_relaxed(&box->dt_id),
                                         .op_index = osc_newrma_load_relaxed(&box->op_index),
                                         .addr = osc_newrma_load_relaxed(&box->addr) };

    if (osc_newrma_mailbox_kind_is_large(req.kind)) {
        req.count = (uint32_t) peer;
    } else {
        req.count = osc_newrma_load_relaxed(&box->count);
        req.answer_to = peer;
    }
    return req;
}

/* Claim the target's mailbox and post a request: OMPI_ERR_WOULD_BLOCK if
 * the mailbox is busy.  *mine: the request's sequence. */
static int assist_claim_post(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                             const void *in, size_t in_bytes, uint64_t *mine)
{
    osc_newrma_mailbox_t *box = osc_newrma_shm_mailbox(&module->shm, target);

    if (!osc_newrma_mailbox_kind_is_large(req->kind) && req->count > UINT8_MAX) {
        return OMPI_ERR_WOULD_BLOCK;   /* (never: small operations fit the payload) */
    }
    if (!assist_claim(module, target, box, mine)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* A target may still be reading the line for a request withdrawn
     * before our claim (osc_newrma_mailbox_serve reads it before it takes
     * it): our claim before the request we write (a seqlock writer's
     * release fence), relaxed atomic stores, the post a release. */
    osc_newrma_fence_release();
    request_write(box, req);
    osc_newrma_copy_to_shared(box->payload, in, in_bytes);
    osc_newrma_store_release(&box->state, *mine | NEWRMA_MAILBOX_POSTED);
    return OMPI_SUCCESS;
}

/* The same for a request the origin will wait for: only to a target that
 * is present.  *stamp: the presence stamp it was posted on. */
static int assist_post(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                       const void *in, size_t in_bytes, uint64_t *mine, uint64_t *stamp)
{
    if (!module->assist_attended || !osc_newrma_mailbox_target_present(module, target, stamp)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    return assist_claim_post(module, target, req, in, in_bytes, mine);
}

/* Take back a request the target did not take in time (POSTED -> `back`):
 * false if it took it meanwhile.  The stamp it was asked on is remembered
 * (unless 0: not asked on a stamp, nothing learned). */
static bool assist_withdraw(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t mine,
                            uint64_t stamp, uint64_t back)
{
    uint64_t posted = mine | NEWRMA_MAILBOX_POSTED;

    if (!osc_newrma_cas_relaxed(&box->state, &posted, mine | back)) {
        return false;
    }
    if (0 != stamp) {
        osc_newrma_store_relaxed(&module->assist_miss_stamp, stamp);
    }
    (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.assist_withdrawn, 1);
    return true;
}

int osc_newrma_mailbox_post(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                            const void *in, size_t in_bytes, uint64_t *mine)
{
    return assist_claim_post(module, target, req, in, in_bytes, mine);
}

bool osc_newrma_mailbox_withdraw(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t mine,
                                 uint64_t stamp, uint64_t back)
{
    return assist_withdraw(module, box, mine, stamp, back);
}

/* A target answered: count it, and trust it for the next requests. */
static void assist_answered(ompi_osc_newrma_module_t *module, int target)
{
    osc_newrma_store_relaxed(&module->assist_trusted, osc_newrma_mailbox_target_word(target, NEWRMA_MAILBOX_TRUSTED_ANSWERS));
    (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.assisted_ops, 1);
}

/* Wait for a posted request's answer (its payload into `out`), or withdraw
 * it if the target does not take it in time: OMPI_ERR_WOULD_BLOCK, and the
 * caller does the operation itself. */
static int assist_finish(ompi_osc_newrma_module_t *module, int target, uint64_t mine, uint64_t stamp,
                         assist_patience_t patience, void *out, size_t out_bytes)
{
    osc_newrma_mailbox_t *box = osc_newrma_shm_mailbox(&module->shm, target);
    uint64_t state;
    unsigned int spins = 0;

    if ((ASSIST_WITHDRAW_AT_ONCE == patience || !wait_taken(module, box, mine | NEWRMA_MAILBOX_POSTED, patience))
        && assist_withdraw(module, box, mine, stamp,
                           ASSIST_AFTER_COMPLETION == patience ? NEWRMA_MAILBOX_WITHDRAWING : NEWRMA_MAILBOX_FREE)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* taken: the target is applying it, a few instructions away; it
     * answers DONE, or frees the mailbox itself when it owes no answer */
    while ((mine | NEWRMA_MAILBOX_TAKEN) == (state = osc_newrma_load_acquire(&box->state))) {
        osc_newrma_backoff(&spins);
    }
    if ((mine | NEWRMA_MAILBOX_DONE) == state) {
        memcpy(out, box->payload, out_bytes);
        osc_newrma_store_release(&box->state, mine | NEWRMA_MAILBOX_FREE);
    }
    assist_answered(module, target);
    return OMPI_SUCCESS;
}

/* The same for a request answered on our answer line: we spin on a line of
 * our own, the target frees its mailbox before it answers, and nothing of
 * ours stays to be written back to the target's line. */
static int assist_finish_on_line(ompi_osc_newrma_module_t *module, int target, uint64_t mine, uint64_t stamp,
                                 void *out, size_t out_bytes)
{
    const osc_newrma_mailbox_answer_t *answer = osc_newrma_shm_mailbox_answer(&module->shm, module->rank);
    uint64_t tag = mine | NEWRMA_MAILBOX_DONE;   /* the line was cleared before the post (assist_run) */
    unsigned int spins = 0;

    if (!wait_answer(answer, tag)) {
        if (assist_withdraw(module, osc_newrma_shm_mailbox(&module->shm, target), mine, stamp,
                            NEWRMA_MAILBOX_FREE)) {
            return OMPI_ERR_WOULD_BLOCK;
        }
        /* taken meanwhile: the answer is a few instructions away */
        while (tag != osc_newrma_load_acquire(&answer->tag)) {
            osc_newrma_backoff(&spins);
        }
    }
    memcpy(out, answer->payload, out_bytes);
    assist_answered(module, target);
    return OMPI_SUCCESS;
}

/* Our answer line serves one request at a time: with threads, taken with
 * a try (a thread that finds it taken has the answer left in the mailbox). */
static inline bool answer_line_take(ompi_osc_newrma_module_t *module)
{
    return !opal_using_threads() || !osc_newrma_exchange_acquire(&module->assist_answer_busy, true);
}

static inline void answer_line_give(ompi_osc_newrma_module_t *module)
{
    if (opal_using_threads()) {
        osc_newrma_store_release(&module->assist_answer_busy, false);
    }
}

/* A request the caller waits for: answered on our answer line when it
 * owes an answer and we have the line to ourselves, else in the mailbox
 * (one owing none, an accumulate without result, only frees it). */
static int assist_run(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                      const void *in, size_t in_bytes, void *out, size_t out_bytes)
{
    osc_newrma_mailbox_request_t on_line = *req;
    bool own_line = 0 != out_bytes && answer_line_take(module);
    uint64_t mine;
    uint64_t stamp;
    int ret;

    on_line.answer_to = own_line ? module->rank + 1 : 0;
    if (own_line) {
        /* the last answer's tag may be another target's with the same
         * sequence: cleared before the post, which publishes the clear */
        osc_newrma_store_relaxed(&osc_newrma_shm_mailbox_answer(&module->shm, module->rank)->tag, 0);
    }
    ret = assist_post(module, target, &on_line, in, in_bytes, &mine, &stamp);
    if (OMPI_SUCCESS == ret) {
        ret = own_line ? assist_finish_on_line(module, target, mine, stamp, out, out_bytes)
                       : assist_finish(module, target, mine, stamp, ASSIST_SPIN, out, out_bytes);
    }
    if (own_line) {
        answer_line_give(module);
    }
    return ret;
}

/* Post a request that completes later: at most one per window.  In a PSCW
 * epoch the target is sure to serve it -- its MPI_Win_wait drains the
 * mailbox -- so it is posted whether or not the target looks present
 * (stamp 0: unattended). */
static int assist_defer(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                        const osc_newrma_mailbox_pending_t *what, const void *in, size_t in_bytes)
{
    osc_newrma_mailbox_pending_t *pending = &module->assist_pending;
    uint64_t mine;
    uint64_t stamp = 0;
    int ret;

    if (pending->active) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    ret = NEWRMA_WIN_PSCW_GRANTED == module->state
              ? assist_claim_post(module, target, req, in, in_bytes, &mine)
              : assist_post(module, target, req, in, in_bytes, &mine, &stamp);
    if (OMPI_SUCCESS == ret) {
        *pending = *what;
        memcpy(pending->data, in, in_bytes);
        pending->active = true;
        pending->kind = req->kind;
        pending->target = target;
        pending->mine = mine;
        pending->stamp = stamp;
    }
    return ret;
}

int osc_newrma_mailbox_move(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                            uint64_t taddr, size_t bytes)
{
    osc_newrma_mailbox_request_t req = { .kind = write ? NEWRMA_MAILBOX_PUT : NEWRMA_MAILBOX_GET,
                                         .count = (uint32_t) bytes, .addr = taddr };
    osc_newrma_mailbox_pending_t what = { .local = local, .taddr = taddr, .bytes = bytes };

    return assist_defer(module, target, &req, &what, local, write ? bytes : 0);
}

/* Where a pending request's answer goes: a get's buffer, a get_accumulate's
 * or compare-and-swap's result; NULL if it owes none (a put, an accumulate). */
static inline void *pending_answer(const osc_newrma_mailbox_pending_t *p)
{
    return NEWRMA_MAILBOX_PUT == p->kind ? NULL : p->local;
}

/* An unattended request's target may be busy outside MPI: without
 * assistance for attended ones (more ranks than cores) it most likely is,
 * so it is taken back at once rather than after the timeout -- except in a
 * PSCW epoch: that target has posted and waits, or soon will, in
 * MPI_Win_wait, and a few yields give it the core. */
static assist_patience_t pending_patience(const ompi_osc_newrma_module_t *module,
                                          const osc_newrma_mailbox_pending_t *p)
{
    if (NEWRMA_WIN_PSCW_GRANTED == module->state) {
        return ASSIST_SPIN_POLITELY;
    }
    return 0 != p->stamp || module->assist_attended ? ASSIST_SPIN : ASSIST_WITHDRAW_AT_ONCE;
}

/* The pending request by single copy after its withdrawal: from the data
 * as it was at the call, or into the answer's buffer (still the caller's
 * to fill). */
static int pending_single_copy(ompi_osc_newrma_module_t *module, const osc_newrma_mailbox_pending_t *p, void *answer)
{
    if (NEWRMA_MAILBOX_ACC == p->kind) {
        return osc_newrma_acc_single_copy(module, p->data, answer, p->count, p->dt, p->target, p->disp, p->op);
    }
    if (NEWRMA_MAILBOX_CAS == p->kind) {
        return osc_newrma_cas_single_copy(module, p->target, p->taddr, p->data, p->data + p->bytes, answer,
                                          p->bytes);
    }
    return osc_newrma_single_copy_at(NEWRMA_FAIL_MOVE, osc_newrma_shm_peer(&module->shm, p->target)->pid,
                                     NEWRMA_MAILBOX_PUT == p->kind ? (void *) p->data : p->local, p->taddr,
                                     p->bytes, NEWRMA_MAILBOX_PUT == p->kind);
}

static int pending_complete(ompi_osc_newrma_module_t *module, assist_patience_t patience)
{
    osc_newrma_mailbox_pending_t *p = &module->assist_pending;
    void *answer = pending_answer(p);
    int ret;

    p->active = false;
    ret = assist_finish(module, p->target, p->mine, p->stamp, patience, answer, NULL != answer ? p->bytes : 0);
    if (OMPI_ERR_WOULD_BLOCK != ret) {
        return ret;
    }
    ret = pending_single_copy(module, p, answer);
    if (ASSIST_AFTER_COMPLETION == patience) {
        /* done: the target's MPI_Win_wait may return */
        osc_newrma_store_release(&osc_newrma_shm_mailbox(&module->shm, p->target)->state, p->mine | NEWRMA_MAILBOX_FREE);
    }
    return ret;
}

int osc_newrma_mailbox_move_complete(ompi_osc_newrma_module_t *module)
{
    return pending_complete(module, pending_patience(module, &module->assist_pending));
}

int osc_newrma_mailbox_complete_epoch(ompi_osc_newrma_module_t *module)
{
    /* a put or an accumulate without result may complete at the target as
     * late as its MPI_Win_wait, which drains the mailbox before it returns
     * (osc_newrma_mailbox_drained); a get, get_accumulate or
     * compare-and-swap stays pending for its answer, collected after the
     * completion is signalled (osc_newrma_mailbox_collect_answer) */
    if (module->assist_pending.active && NULL == pending_answer(&module->assist_pending)) {
        module->assist_pending.active = false;
        (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.assist_left, 1);
    }
    return OMPI_SUCCESS;
}

int osc_newrma_mailbox_collect_answer(ompi_osc_newrma_module_t *module)
{
    return module->assist_pending.active ? pending_complete(module, ASSIST_AFTER_COMPLETION) : OMPI_SUCCESS;
}

/* The target finds predefined types and intrinsic ops by index: the same in
 * every process. */
static inline bool dt_indexable(struct ompi_datatype_t *dt)
{
    return dt->id >= 0 && dt->id < OMPI_DATATYPE_MPI_MAX_PREDEFINED && ompi_datatype_basicDatatypes[dt->id] == dt;
}

int osc_newrma_mailbox_accumulate(ompi_osc_newrma_module_t *module, int target, uint64_t taddr, ptrdiff_t disp,
                                  struct ompi_op_t *op, struct ompi_datatype_t *dt, int count,
                                  const void *origin, void *result)
{
    size_t bytes = (size_t) count * dt->super.size, in_bytes = &ompi_mpi_op_no_op.op == op ? 0 : bytes;
    osc_newrma_mailbox_request_t req = { .kind = NEWRMA_MAILBOX_ACC, .want_result = NULL != result,
                                         .dt_id = (uint16_t) dt->id, .op_index = op->o_f_to_c_index,
                                         .count = (uint32_t) count, .addr = taddr };

    if (!dt_indexable(dt) || !ompi_op_is_intrinsic(op)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* No result wanted: complete it at the next completion point, like a
     * put.  In a PSCW epoch, results too: the target has posted and will
     * serve the mailbox in its MPI_Win_wait; MPI_Win_complete collects the
     * answer (the result may not be read before then). */
    if ((NULL == result || NEWRMA_WIN_PSCW_GRANTED == module->state) && 0 != module->assist_move_bytes) {
        osc_newrma_mailbox_pending_t what = { .local = result, .taddr = taddr, .bytes = bytes, .op = op,
                                             .dt = dt, .count = count, .disp = disp };
        return assist_defer(module, target, &req, &what, origin, in_bytes);
    }
    return assist_run(module, target, &req, origin, in_bytes, result, NULL != result ? bytes : 0);
}

int osc_newrma_mailbox_cas(ompi_osc_newrma_module_t *module, int target, uint64_t taddr,
                           struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result)
{
    size_t size = dt->super.size;
    uint8_t in[NEWRMA_MAILBOX_MAX_PAYLOAD];
    osc_newrma_mailbox_request_t req = { .kind = NEWRMA_MAILBOX_CAS, .want_result = 1, .dt_id = (uint16_t) dt->id,
                                         .count = 1, .addr = taddr };

    if (!dt_indexable(dt)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    memcpy(in, origin, size);
    memcpy(in + size, compare, size);
    /* in a PSCW epoch, answered at MPI_Win_complete (as get_accumulate) */
    if (NEWRMA_WIN_PSCW_GRANTED == module->state && 0 != module->assist_move_bytes) {
        osc_newrma_mailbox_pending_t what = { .local = result, .taddr = taddr, .bytes = size, .dt = dt, .count = 1 };
        return assist_defer(module, target, &req, &what, in, 2 * size);
    }
    return assist_run(module, target, &req, in, 2 * size, result, size);
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

/* Apply a request we have taken, to our own memory, under its stripe:
 * old values (or the compare-and-swap's result) into `out`. */
static void apply(const osc_newrma_mailbox_request_t *req, struct ompi_datatype_t *dt, const uint8_t *in,
                  uint8_t *out)
{
    size_t size = NULL != dt ? dt->super.size : 0;
    char *t = (char *) (uintptr_t) req->addr;

    if (NEWRMA_MAILBOX_PUT == req->kind) {
        osc_newrma_copy_bytes(t, in, req->count);
        return;
    }
    if (NEWRMA_MAILBOX_GET == req->kind) {
        osc_newrma_copy_bytes(out, t, req->count);
        return;
    }
    if (NEWRMA_MAILBOX_CAS == req->kind) {
        memcpy(out, t, size);
        if (0 == memcmp(t, in + size, size)) {
            memcpy(t, in, size);
        }
        return;
    }
    osc_newrma_acc_combine((struct ompi_op_t *) opal_pointer_array_get_item(ompi_op_f_to_c_table, req->op_index),
                           dt, t, in, req->want_result ? out : NULL, req->count, size);
}

/* Bytes a request carries in (origin data [| compare]) and the target's
 * bytes it touches; 0 if the request cannot be valid (a stale copy). */
static size_t request_bytes(const osc_newrma_mailbox_request_t *req, struct ompi_datatype_t **dt,
                            size_t *in_bytes)
{
    size_t bytes;

    if (NEWRMA_MAILBOX_PUT == req->kind || NEWRMA_MAILBOX_GET == req->kind) {
        *dt = NULL;
        *in_bytes = NEWRMA_MAILBOX_PUT == req->kind ? req->count : 0;
        return req->count;
    }
    if (req->dt_id >= OMPI_DATATYPE_MPI_MAX_PREDEFINED) {
        return 0;
    }
    *dt = (struct ompi_datatype_t *) ompi_datatype_basicDatatypes[req->dt_id];
    bytes = (size_t) req->count * (*dt)->super.size;
    *in_bytes = NEWRMA_MAILBOX_CAS == req->kind ? 2 * bytes : bytes;
    return bytes;
}

/* Answer a request on its origin's answer line: the mailbox is free first
 * (the origin claims it again as soon as it has its answer), then the
 * payload, then the tag that says it is there. */
static void answer_on_line(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t taken,
                           int origin, const uint8_t *out, size_t bytes)
{
    osc_newrma_mailbox_answer_t *answer = osc_newrma_shm_mailbox_answer(&module->shm, origin);
    uint64_t sequence = taken & ~NEWRMA_MAILBOX_MASK;

    osc_newrma_store_release(&box->state, sequence | NEWRMA_MAILBOX_FREE);
    memcpy(answer->payload, out, bytes);
    osc_newrma_store_release(&answer->tag, sequence | NEWRMA_MAILBOX_DONE);
}

int osc_newrma_mailbox_serve(ompi_osc_newrma_module_t *module, uint64_t now)
{
    osc_newrma_mailbox_t *box = osc_newrma_shm_mailbox(&module->shm, module->rank);
    _Alignas(16) uint8_t in[NEWRMA_MAILBOX_MAX_PAYLOAD], out[NEWRMA_MAILBOX_MAX_PAYLOAD];
    uint64_t posted, taken;
    struct ompi_datatype_t *dt;
    osc_newrma_mailbox_request_t req;
    osc_newrma_acc_locks_t stripes;
    bool locked;
    size_t bytes, in_bytes;

    posted = osc_newrma_load_acquire(&box->state);
    osc_newrma_mailbox_stamp(module, now);
    if (NEWRMA_MAILBOX_POSTED != (posted & NEWRMA_MAILBOX_MASK)) {
        return 0;
    }
    /* a copy first: until our compare-and-swap succeeds the request may be
     * withdrawn and the line rewritten under us, so nothing read here is
     * trusted (beyond staying in bounds) before then.  A seqlock read:
     * relaxed atomic loads, then an acquire fence before the CAS that
     * validates them (a new origin's words are seen only with its claim). */
    req = request_read(box);
    osc_newrma_copy_from_shared(in, box->payload, module->assist_serve_bytes);
    osc_newrma_fence_acquire();
    if (NEWRMA_MAILBOX_SHARE_PUT == req.kind || NEWRMA_MAILBOX_SHARE_GET == req.kind
        || NEWRMA_MAILBOX_SHARE_ACC == req.kind) {
        return osc_newrma_shared_copy_serve(module, box, posted, &req, in);
    }
    if (NEWRMA_MAILBOX_RELAY_PUT == req.kind || NEWRMA_MAILBOX_RELAY_GET == req.kind
        || NEWRMA_MAILBOX_RELAY_ACC == req.kind) {
        return osc_newrma_relay_serve(module, box, posted, &req, in);
    }
    bytes = request_bytes(&req, &dt, &in_bytes);
    if (0 == bytes || in_bytes > module->assist_serve_bytes || bytes > module->assist_serve_bytes
        || req.answer_to < 0 || req.answer_to > module->size || req.answer_to == module->rank + 1) {
        return 0;
    }
    /* the accumulate family excludes the single-copy path's read-combine-
     * write through the element's stripe; puts and gets need no lock */
    locked = NULL != dt;
    if (locked
        && !osc_newrma_acc_stripes_trylock(module, osc_newrma_usermem_stripe_offset(module, module->rank, req.addr),
                                           bytes, &stripes)) {
        return 0;
    }
    taken = (posted & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_TAKEN;
    if (!osc_newrma_cas_acquire(&box->state, &posted, taken)) {
        if (locked) {
            osc_newrma_acc_stripes_unlock(module, &stripes);
        }
        return 0;
    }
    apply(&req, dt, in, out);
    if (locked) {
        osc_newrma_acc_stripes_unlock(module, &stripes);
    }
    /* no answer owed (a put, an accumulate without result): the mailbox
     * is free again at once -- its origin may not be waiting at all */
    if (NEWRMA_MAILBOX_PUT == req.kind || (NEWRMA_MAILBOX_ACC == req.kind && !req.want_result)) {
        osc_newrma_store_release(&box->state, (taken & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_FREE);
        return 1;
    }
    if (0 != req.answer_to) {
        answer_on_line(module, box, taken, req.answer_to - 1, out, bytes);
        return 1;
    }
    osc_newrma_copy_to_shared(box->payload, out, bytes);   /* a stale serve may still be reading it */
    osc_newrma_store_release(&box->state, (taken & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_DONE);
    return 1;
}

bool osc_newrma_mailbox_drained(ompi_osc_newrma_module_t *module)
{
    osc_newrma_mailbox_t *box;
    uint64_t state;

    if (!osc_newrma_mailbox_served(module)) {
        return true;
    }
    box = osc_newrma_shm_mailbox(&module->shm, module->rank);
    state = osc_newrma_load_acquire(&box->state) & NEWRMA_MAILBOX_MASK;
    if (NEWRMA_MAILBOX_POSTED == state) {
        (void) osc_newrma_progress_serve(module);
        state = osc_newrma_load_acquire(&box->state) & NEWRMA_MAILBOX_MASK;
    }
    /* TAKEN: being applied (by another thread's progress); WITHDRAWING:
     * by its origin, which signalled its completion before */
    return NEWRMA_MAILBOX_POSTED != state && NEWRMA_MAILBOX_TAKEN != state && NEWRMA_MAILBOX_WITHDRAWING != state;
}
