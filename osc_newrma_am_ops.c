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
 * osc/newrma: the origin side of the active-message path -- RMA operations,
 * the operation table (slots -> target elements -> operation elements), the
 * element pools, and issuing (mpich-new-rma-design.txt, "Data structures",
 * "Operation and Target Element Pools", "Issuing operations").
 *
 * An operation becomes an operation element queued on its target element.
 * When it is sent depends on the target's state:
 *
 *   lock CALLED   nothing is sent: the lock is lazy.  The second operation
 *                 (or one too large to travel with a lock, or a request-based
 *                 one) sends LOCK; a lone small operation waits for the
 *                 unlock and travels as one LOCK+OP+UNLOCK packet.
 *   lock ISSUED   (or PSCW before the target's post) operations wait.
 *   GRANTED       operations go out, except the newest few
 *                 (piggyback_threshold): they wait for the closing
 *                 synchronization, which rides on the last of them.
 *
 * Pools: a window takes operation elements from its own pool
 * (op_pool_local) and then from the component's (op_pool_global); target
 * elements likewise (target_pool_local / target_pool_global).  When both
 * are empty the window cleans up aggressively: it issues everything queued
 * and waits for elements to come back, or completes and frees a target
 * element, so it is never starved.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/op/op.h"
#include "ompi/request/request.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_am.h"
#include "osc_newrma_native_rma.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_node_lock.h"
#include "osc_newrma_node_route.h"
#include "osc_newrma_transport.h"

static void op_construct(osc_newrma_op_t *op)
{
    op->owned = NULL;
    op->request = NULL;
    op->result_dt = NULL;
}

OBJ_CLASS_INSTANCE(osc_newrma_op_t, opal_free_list_item_t, op_construct, NULL);

/* ------------------------------------------------------------------ */
/* requests of MPI_Rput & co.                                          */
/* ------------------------------------------------------------------ */

static int request_free(struct ompi_request_t **request)
{
    if (!REQUEST_COMPLETE(*request)) {
        return OMPI_ERR_REQUEST;
    }
    OBJ_RELEASE(*request);
    *request = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int request_cancel(struct ompi_request_t *request, int complete)
{
    (void) request; (void) complete;
    return OMPI_ERR_REQUEST;
}

static void request_construct(osc_newrma_am_request_t *request)
{
    request->super.req_type = OMPI_REQUEST_WIN;
    request->super.req_status._cancelled = 0;
    request->super.req_free = request_free;
    request->super.req_cancel = request_cancel;
}

OBJ_CLASS_INSTANCE(osc_newrma_am_request_t, ompi_request_t, request_construct, NULL);

static osc_newrma_am_request_t *request_new(void)
{
    osc_newrma_am_request_t *request = OBJ_NEW(osc_newrma_am_request_t);

    if (NULL != request) {
        OMPI_REQUEST_INIT(&request->super, false);
        request->super.req_state = OMPI_REQUEST_ACTIVE;
        request->super.req_status.MPI_ERROR = MPI_SUCCESS;
    }
    return request;
}

/* ------------------------------------------------------------------ */
/* pools                                                               */
/* ------------------------------------------------------------------ */

int osc_newrma_am_pools_init(ompi_osc_newrma_module_t *module)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;

    OBJ_CONSTRUCT(&module->am_ops, opal_free_list_t);
    return opal_free_list_init(&module->am_ops, sizeof(osc_newrma_op_t), c->cacheline,
                               OBJ_CLASS(osc_newrma_op_t), 0, 0, 0, (int) c->op_pool_local,
                               c->op_pool_local < 16 ? (int) c->op_pool_local : 16,
                               NULL, 0, NULL, NULL, NULL);
}

void osc_newrma_am_pools_fini(ompi_osc_newrma_module_t *module)
{
    OBJ_DESTRUCT(&module->am_ops);
}

/* An operation element: the window's pool, then the global one, then
 * aggressive cleanup (issue what is queued, wait for elements to return). */
static void issue_everything(ompi_osc_newrma_module_t *module);

static osc_newrma_op_t *op_get(ompi_osc_newrma_module_t *module)
{
    for (;;) {
        osc_newrma_op_t *op = (osc_newrma_op_t *) osc_newrma_free_list_get(&module->am_ops);
        if (NULL != op) {
            op->from_window_pool = true;
            return op;
        }
        op = (osc_newrma_op_t *) osc_newrma_free_list_get(&mca_osc_newrma_component.ops);
        if (NULL != op) {
            op->from_window_pool = false;
            return op;
        }
        issue_everything(module);
        osc_newrma_am_progress_once();
    }
}

static void op_return(osc_newrma_op_t *op)
{
    free(op->owned);
    op->owned = NULL;
    if (NULL != op->result_dt) {
        OMPI_DATATYPE_RELEASE(op->result_dt);
        op->result_dt = NULL;
    }
    osc_newrma_free_list_return(op->from_window_pool ? &op->module->am_ops : &mca_osc_newrma_component.ops,
                                &op->super);
}

/* A target element: the window's share, then the global one.  In a
 * lock_all, fence or PSCW epoch an element can be completed and freed to
 * make room (its target is contacted again later if needed); the locks a
 * program holds with MPI_Win_lock are its own state and always get one. */
static osc_newrma_target_t *reclaimable_target(ompi_osc_newrma_module_t *module)
{
    if (NEWRMA_WIN_PER_TARGET == module->state) {
        return NULL;
    }
    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        osc_newrma_target_t *t;
        OPAL_LIST_FOREACH(t, &module->slots[s], osc_newrma_target_t) {
            if (0 == t->busy) {      /* not one another thread is waiting on */
                return t;
            }
        }
    }
    return NULL;
}

static bool pscw_post_seen(const ompi_osc_newrma_module_t *module, int rank)
{
    for (size_t i = 0 ; i < module->posts_seen_count ; ++i) {
        if (module->posts_seen[i] == rank) {
            return true;
        }
    }
    return false;
}

/* The state a new target element starts in, by epoch. */
static void target_initial_state(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    switch (module->state) {
    case NEWRMA_WIN_PSCW_GRANTED:
        t->lock_assert = module->lock_all_assert;      /* start's NOCHECK */
        t->lock_state = t->lock_assert || pscw_post_seen(module, t->rank) ? NEWRMA_LOCK_GRANTED
                                                                          : NEWRMA_LOCK_ISSUED;
        break;
    case NEWRMA_WIN_LOCK_ALL_CALLED:
    case NEWRMA_WIN_LOCK_ALL_ISSUED:
    case NEWRMA_WIN_LOCK_ALL_GRANTED:
        t->lock_type = MPI_LOCK_SHARED;
        t->lock_assert = module->lock_all_assert;
        t->lock_state = t->lock_assert || module->am_lock_all_window ? NEWRMA_LOCK_GRANTED : NEWRMA_LOCK_CALLED;
        /* window protocol: the lock is the window's; closing flushes */
        t->window_locked = module->am_lock_all_window;
        break;
    default:                     /* fence; PER_TARGET sets its own */
        t->lock_assert = MPI_MODE_NOCHECK;
        t->lock_state = NEWRMA_LOCK_GRANTED;
    }
}

static uint8_t closing_sync(const ompi_osc_newrma_module_t *module, const osc_newrma_target_t *t);

osc_newrma_target_t *osc_newrma_am_target_get(ompi_osc_newrma_module_t *module, int rank)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    osc_newrma_target_t *t = osc_newrma_target_find(module, rank);

    while (NULL == t) {
        bool local = module->am_targets_local < c->target_pool_local;
        if (local || c->targets_in_use < c->target_pool_global || NULL == reclaimable_target(module)) {
            t = osc_newrma_target_add(module, rank);
            if (NULL == t) {
                return NULL;
            }
            t->from_window_pool = local;
            if (local) {
                module->am_targets_local++;
            } else {
                c->targets_in_use++;
            }
            target_initial_state(module, t);
            break;
        }
        /* aggressive cleanup: complete one target and free its element
         * (unless another thread used it meanwhile: waits on it, or queued
         * operations on it while we waited) */
        osc_newrma_target_t *victim = reclaimable_target(module);
        (void) osc_newrma_am_target_complete(module, victim, closing_sync(module, victim), true);
        if (0 == victim->busy && 0 == victim->npending && 0 == victim->waiting && 0 == victim->sending) {
            osc_newrma_am_target_release(module, victim);
        }
        t = osc_newrma_target_find(module, rank);   /* another thread may have made it */
    }
    return t;
}

void osc_newrma_am_target_release(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    osc_newrma_node_route_close(module, t->rank);
    if (t->from_window_pool) {
        module->am_targets_local--;
    } else {
        mca_osc_newrma_component.targets_in_use--;
    }
    osc_newrma_target_remove(module, t);
}

/* How an epoch's target element is closed when it must be freed early:
 * a lock_all lock is released (and taken again lazily), anything else is
 * flushed. */
static uint8_t closing_sync(const ompi_osc_newrma_module_t *module, const osc_newrma_target_t *t)
{
    return module->state >= NEWRMA_WIN_LOCK_ALL_CALLED && !t->lock_assert && !t->window_locked
        ? NEWRMA_PF_UNLOCK : NEWRMA_PF_FLUSH;
}

/* ------------------------------------------------------------------ */
/* completion                                                          */
/* ------------------------------------------------------------------ */

static void op_settle(osc_newrma_op_t *op, int status)
{
    if (OMPI_SUCCESS != status && OMPI_SUCCESS == op->target->status) {
        op->target->status = status;
    }
    if (0 != op->awaiting) {
        return;
    }
    if (NULL != op->request) {
        op->request->super.req_status.MPI_ERROR = status;
        ompi_request_complete(&op->request->super, true);
    }
    op_return(op);
}

static void op_sent(void *arg, int status)
{
    osc_newrma_op_t *op = arg;

    op->target->sending--;
    op->awaiting &= (uint8_t) ~NEWRMA_OPW_SEND;
    op_settle(op, status);
}

static int issue_queued(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, unsigned int keep,
                        uint8_t sync_flags);
static unsigned int issue_keep(const osc_newrma_target_t *t);

/* A synchronization was answered: operations queued meanwhile (by other
 * threads) may go now. */
static void acked(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, int status)
{
    if (OMPI_SUCCESS != status && OMPI_SUCCESS == t->status) {
        t->status = status;
    }
    t->waiting--;
    if (0 == --t->acks_pending && t->npending > 0 && NEWRMA_LOCK_GRANTED == t->lock_state) {
        (void) issue_queued(module, t, issue_keep(t), 0);
    }
}

void osc_newrma_am_ack_arrived(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr)
{
    osc_newrma_target_t *t = osc_newrma_target_find(module, hdr->sender);

    if (NULL != t) {
        acked(module, t, hdr->status);
    } else {
        module->am_window_answers++;     /* lock_all's window protocol */
    }
}

/* The reply's data into the result buffer (packed bytes -> result type). */
static int unpack_result(osc_newrma_op_t *op, const void *data, size_t len)
{
    if (0 == len) {
        return OMPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(data, (int32_t) len, &ompi_mpi_packed.dt, op->result_addr, op->result_count,
                                op->result_dt);
}

static void reply_done(osc_newrma_op_t *op, const osc_newrma_am_hdr_t *hdr, int status)
{
    osc_newrma_target_t *t = op->target;

    if (OMPI_SUCCESS == status) {
        status = hdr->status;
    }
    t->waiting--;
    if (hdr->flags & NEWRMA_PF_ACK) {
        acked(op->module, t, OMPI_SUCCESS);
    }
    op->awaiting &= (uint8_t) ~NEWRMA_OPW_REPLY;
    op_settle(op, status);
}

/* A reply whose data is fetched (a large payload): straight into a
 * contiguous result buffer, else into a buffer of ours and unpacked from
 * there. */
typedef struct {
    osc_newrma_op_t *op;
    osc_newrma_am_hdr_t hdr;
    bool in_place;
    size_t len;
    char data[];
} reply_fetch_t;

static void reply_fetched(void *arg, int status)
{
    reply_fetch_t *r = arg;

    if (OMPI_SUCCESS == status && !r->in_place) {
        status = unpack_result(r->op, r->data, r->len);
    }
    reply_done(r->op, &r->hdr, status);
    free(r);
}

static char *result_in_place(const osc_newrma_op_t *op, size_t len)
{
    osc_newrma_layout_t rl;

    osc_newrma_datatype_layout(op->result_dt, op->result_count, &rl);
    return rl.contiguous && rl.bytes == len ? (char *) op->result_addr + rl.gap : NULL;
}

void osc_newrma_am_reply_arrived(const osc_newrma_am_hdr_t *hdr, void *data, size_t len,
                                 const osc_newrma_large_payload_t *large)
{
    osc_newrma_op_t *op = (osc_newrma_op_t *) (uintptr_t) hdr->cookie;

    if (NULL != large) {
        char *dst = result_in_place(op, len);
        reply_fetch_t *r = malloc(sizeof(*r) + (NULL != dst ? 0 : len));
        if (NULL == r) {
            reply_done(op, hdr, OMPI_ERR_OUT_OF_RESOURCE);
            return;
        }
        *r = (reply_fetch_t) { .op = op, .hdr = *hdr, .in_place = NULL != dst, .len = len };
        (void) osc_newrma_transport_fetch(large, NULL != dst ? dst : r->data, len, reply_fetched, r);
        return;
    }
    reply_done(op, hdr, unpack_result(op, data, len));
}

/* ------------------------------------------------------------------ */
/* issuing                                                             */
/* ------------------------------------------------------------------ */

static int send_op(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, osc_newrma_op_t *op)
{
    int ret;

    op->awaiting |= NEWRMA_OPW_SEND;
    t->sending++;
    ret = osc_newrma_am_send(module, t->rank, &op->hdr, op->payload, op->payload_len, op_sent, op);
    if (1 == ret) {
        op_sent(op, OMPI_SUCCESS);
    } else if (ret < 0) {
        op->awaiting &= (uint8_t) ~NEWRMA_OPW_REPLY;
        if (op->hdr.flags & (NEWRMA_PF_UNLOCK | NEWRMA_PF_FLUSH)) {
            t->waiting--;
            t->acks_pending--;
        }
        op_sent(op, ret);
        return ret;
    }
    return OMPI_SUCCESS;
}

/* Account for a synchronization riding on a packet: the count of the
 * segment it closes, and the acknowledgement to wait for. */
static void close_segment(osc_newrma_target_t *t, osc_newrma_am_hdr_t *hdr, uint8_t sync_flags)
{
    if (sync_flags & NEWRMA_PF_UNLOCK) {
        t->lock_state = NEWRMA_LOCK_CALLED;    /* a later operation locks again (lock_all) */
    }
    hdr->flags |= sync_flags;
    hdr->count = t->issued;
    t->issued = 0;
    if (sync_flags & (NEWRMA_PF_UNLOCK | NEWRMA_PF_FLUSH)) {
        t->waiting++;
        t->acks_pending++;
    }
}

/* Send the queued operations of a target whose lock (or post) is granted,
 * keeping the newest `keep` back; with sync_flags, the last one carries
 * them (or a SYNC packet does, if nothing is queued and the flags need a
 * packet). */
static int issue_queued(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, unsigned int keep,
                        uint8_t sync_flags)
{
    osc_newrma_op_t *op;
    int ret = OMPI_SUCCESS;

    /* nothing of the next segment goes out before the target has answered
     * the synchronization that closed the last one (it counts per segment) */
    if (0 != t->acks_pending) {
        return OMPI_SUCCESS;
    }
    if (0 == keep) {
        t->urgent = false;
    }
    while (t->npending > keep) {
        op = (osc_newrma_op_t *) opal_list_remove_first(&t->pending);
        t->npending--;
        t->issued++;
        if (0 == t->npending && 0 != sync_flags) {
            close_segment(t, &op->hdr, sync_flags);
            sync_flags = 0;
        }
        if (op->awaiting & NEWRMA_OPW_REPLY) {
            t->waiting++;
        }
        int r = send_op(module, t, op);
        if (OMPI_SUCCESS == ret) {
            ret = r;
        }
    }
    /* nothing to ride on: a packet of its own, when one is needed (a lock
     * to release, operations to acknowledge, an RMA_DONE to count) */
    if ((sync_flags & (NEWRMA_PF_UNLOCK | NEWRMA_PF_DONE)) || ((sync_flags & NEWRMA_PF_FLUSH) && t->issued > 0)) {
        osc_newrma_am_hdr_t hdr = { .kind = NEWRMA_PKT_SYNC, .sender = module->rank, .win = module->am_id };
        close_segment(t, &hdr, sync_flags);
        int r = osc_newrma_am_send_control(module, t->rank, &hdr, NULL, 0);
        if (OMPI_SUCCESS != r) {
            if (sync_flags & (NEWRMA_PF_UNLOCK | NEWRMA_PF_FLUSH)) {
                t->waiting--;
                t->acks_pending--;
            }
            ret = OMPI_SUCCESS == ret ? r : ret;
        }
    }
    return ret;
}

/* How many of the newest queued operations may wait for the closing
 * synchronization: none once a request-based operation is queued (its
 * request must complete without one). */
static unsigned int issue_keep(const osc_newrma_target_t *t)
{
    return t->urgent ? 0 : (unsigned int) mca_osc_newrma_component.piggyback_threshold;
}

/* ------------------------------------------------------------------ */
/* lock order                                                          */
/* ------------------------------------------------------------------ */

/* Lazy locks must not create deadlocks the program avoided:
 *  - MPI_Win_lock: a program that takes several locks in a fixed order
 *    (say increasing rank) is deadlock-free however it then uses them, so
 *    before a lock is really requested, every lock called before it is
 *    requested and granted first, in call order;
 *  - lock_all: shared locks are taken target by target as operations need
 *    them.  While holding some of them, the next one is only tried (the
 *    target refuses instead of queueing); if refused, the held ones are
 *    released (their operations completed) before waiting, so a lock_all
 *    never waits while holding a lock -- and an ordered program holding
 *    exclusive locks is never stuck behind it. */
static osc_newrma_target_t *earliest_unrequested_before(ompi_osc_newrma_module_t *module, const osc_newrma_target_t *t)
{
    osc_newrma_target_t *first = NULL, *u;

    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        OPAL_LIST_FOREACH(u, &module->slots[s], osc_newrma_target_t) {
            if (u != t && NEWRMA_LOCK_CALLED == u->lock_state && !u->lock_assert && u->lock_seq < t->lock_seq
                && (NULL == first || u->lock_seq < first->lock_seq)) {
                first = u;
            }
        }
    }
    return first;
}

static bool holds_other_locks(ompi_osc_newrma_module_t *module, const osc_newrma_target_t *t)
{
    osc_newrma_target_t *u;

    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        OPAL_LIST_FOREACH(u, &module->slots[s], osc_newrma_target_t) {
            if (u != t && NEWRMA_LOCK_CALLED != u->lock_state && !u->lock_assert) {
                return true;
            }
        }
    }
    return false;
}

static int send_lock_packet(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool try_only)
{
    if (osc_newrma_native_on(module)) {
        return osc_newrma_native_lock(module, t, try_only);     /* the lock word, no packet */
    }
    osc_newrma_am_hdr_t hdr = {
        .kind = NEWRMA_PKT_LOCK,
        .flags = (MPI_LOCK_EXCLUSIVE == t->lock_type ? NEWRMA_PF_LOCK_EXCL : NEWRMA_PF_LOCK_SHARED)
                 | (try_only ? NEWRMA_PF_TRY : 0),
        .sender = module->rank,
        .win = module->am_id,
    };

    /* a release still in flight must be done before we ask again */
    while (0 != t->acks_pending) {
        osc_newrma_am_progress_once();
    }
    if (!try_only && osc_newrma_node_lock_applies(module, t)) {
        osc_newrma_node_lock_take(module, t);      /* a peer on our node: no packet */
        return OMPI_SUCCESS;
    }
    t->lock_state = NEWRMA_LOCK_ISSUED;
    t->denied = false;
    t->tried = try_only;
    return osc_newrma_am_send_control(module, t->rank, &hdr, NULL, 0);
}

/* Before `t`'s lock is requested (or rides on a single-op packet): the
 * locks called before it, in order. */
int osc_newrma_am_lock_order(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    osc_newrma_target_t *u;
    int ret = OMPI_SUCCESS;

    if (NEWRMA_WIN_PER_TARGET != module->state || module->lock_count <= 1) {
        return OMPI_SUCCESS;     /* (one lock held: `t`'s, no other called before it) */
    }
    while (OMPI_SUCCESS == ret && NULL != (u = earliest_unrequested_before(module, t))) {
        ret = send_lock_packet(module, u, false);
        while (OMPI_SUCCESS == ret && NEWRMA_LOCK_GRANTED != u->lock_state) {
            osc_newrma_am_progress_once();
        }
    }
    return ret;
}

int osc_newrma_am_send_lock(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    int ret = osc_newrma_am_lock_order(module, t);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    return send_lock_packet(module, t, module->state >= NEWRMA_WIN_LOCK_ALL_CALLED && holds_other_locks(module, t));
}

/* A lock_all lock was refused: release the others, then wait in line. */
static int lock_refused(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    osc_newrma_target_t *u;
    int ret = OMPI_SUCCESS;

    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        OPAL_LIST_FOREACH(u, &module->slots[s], osc_newrma_target_t) {
            if (u != t && NEWRMA_LOCK_CALLED != u->lock_state && !u->lock_assert) {
                int r = osc_newrma_am_target_complete(module, u, NEWRMA_PF_UNLOCK, true);
                ret = OMPI_SUCCESS == ret ? r : ret;
            }
        }
    }
    return OMPI_SUCCESS == ret ? send_lock_packet(module, t, false) : ret;
}

void osc_newrma_am_refused(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    (void) module;
    if (NULL != t && NEWRMA_LOCK_ISSUED == t->lock_state) {
        t->lock_state = NEWRMA_LOCK_CALLED;
        t->denied = true;      /* whoever waits for the lock sorts it out */
    }
}

void osc_newrma_am_granted(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    if (NULL == t || NEWRMA_LOCK_GRANTED == t->lock_state) {
        return;
    }
    t->lock_state = NEWRMA_LOCK_GRANTED;
    (void) issue_queued(module, t, issue_keep(t), 0);
}

static bool single_op_eligible(const osc_newrma_op_t *op)
{
    return op->payload_len <= mca_osc_newrma_component.single_op_threshold && NULL == op->request;
}

/* A refused lock_all lock is sorted out by the next call that waits for
 * the target (a flush, unlock_all).  A request-based operation must
 * complete with no such call -- the program may only MPI_Wait for it, and
 * MPI_Wait does not know the window -- so the answer to a tried lock
 * (immediate: a try is never queued) is waited for at the call that queued
 * it, and a refusal sorted out there: the other locks released, then in
 * line.  AM lock held. */
static int settle_tried_lock(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    int ret = OMPI_SUCCESS;

    t->busy++;      /* progress releases the AM lock */
    while (NEWRMA_LOCK_ISSUED == t->lock_state && t->tried) {
        osc_newrma_am_progress_once();
    }
    if (t->denied) {
        ret = lock_refused(module, t);
    }
    t->busy--;
    return ret;
}

/* The ISSUE step for one target after an operation was queued. */
static int target_kick(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool urgent)
{
    int ret;

    t->urgent = t->urgent || urgent;
    switch (t->lock_state) {
    case NEWRMA_LOCK_CALLED:
        if (urgent || t->npending > 1
            || !single_op_eligible((osc_newrma_op_t *) opal_list_get_last(&t->pending))) {
            ret = osc_newrma_am_send_lock(module, t);
            if (OMPI_SUCCESS == ret && NEWRMA_LOCK_GRANTED == t->lock_state) {
                return issue_queued(module, t, issue_keep(t), 0);   /* a node lock: taken at once */
            }
            return OMPI_SUCCESS == ret && urgent ? settle_tried_lock(module, t) : ret;
        }
        return OMPI_SUCCESS;
    case NEWRMA_LOCK_GRANTED:
        return issue_queued(module, t, issue_keep(t), 0);
    default:
        /* the grant (or post) will issue them -- unless a tried lock is
         * refused and nobody comes back for it */
        return urgent ? settle_tried_lock(module, t) : OMPI_SUCCESS;
    }
}

/* Issue everything queued anywhere in the window (pool cleanup); a target
 * whose tried lock was refused waits in line now (see lock order). */
static void issue_everything(ompi_osc_newrma_module_t *module)
{
    for (unsigned int s = 0 ; s < module->num_slots ; ++s) {
        osc_newrma_target_t *t;
        OPAL_LIST_FOREACH(t, &module->slots[s], osc_newrma_target_t) {
            t->busy++;      /* both may wait, and other threads run meanwhile */
            if (t->denied) {
                (void) lock_refused(module, t);
            } else if (t->npending > 0) {
                (void) target_kick(module, t, true);
            }
            t->busy--;
        }
    }
}

/* The CLEANUP step for one target: everything queued goes out with
 * sync_flags riding on the last packet; with `wait`, until every answer is
 * in.  Returns the first error the target reported. */
static int target_complete(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint8_t sync_flags,
                           bool wait);

/* While a thread waits on a target element (the AM lock is released in
 * progress), no other thread may reclaim it. */
int osc_newrma_am_target_complete(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t,
                                  uint8_t sync_flags, bool wait)
{
    int ret;

    if (sync_flags & NEWRMA_PF_UNLOCK) {
        osc_newrma_node_route_close(module, t->rank);
    }
    t->busy++;
    if ((sync_flags & NEWRMA_PF_UNLOCK) && t->node_locked) {
        /* whatever went as packets acknowledged, then the node lock back */
        ret = target_complete(module, t, (uint8_t) ((sync_flags & ~NEWRMA_PF_UNLOCK) | NEWRMA_PF_FLUSH), true);
        osc_newrma_node_lock_give(module, t);
    } else {
        ret = target_complete(module, t, sync_flags, wait);
    }
    t->busy--;
    return ret;
}

static int target_complete(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint8_t sync_flags,
                           bool wait)
{
    int ret = OMPI_SUCCESS;

    if (NEWRMA_LOCK_CALLED == t->lock_state) {
        if (0 == t->npending) {
            sync_flags &= (uint8_t) ~(NEWRMA_PF_UNLOCK | NEWRMA_PF_FLUSH);   /* no lock was taken */
        } else if (1 == t->npending && (sync_flags & NEWRMA_PF_UNLOCK)
                   && single_op_eligible((osc_newrma_op_t *) opal_list_get_first(&t->pending))
                   && !(module->state >= NEWRMA_WIN_LOCK_ALL_CALLED && holds_other_locks(module, t))
                   && !osc_newrma_native_on(module)      /* its lock is not the handler's */
                   && OMPI_SUCCESS == (ret = osc_newrma_am_lock_order(module, t))) {
            /* the single-op optimization: lock, operation and unlock in one packet */
            osc_newrma_op_t *op = (osc_newrma_op_t *) opal_list_remove_first(&t->pending);
            t->npending = 0;
            op->hdr.flags |= MPI_LOCK_EXCLUSIVE == t->lock_type ? NEWRMA_PF_LOCK_EXCL : NEWRMA_PF_LOCK_SHARED;
            t->issued = 1;
            close_segment(t, &op->hdr, NEWRMA_PF_UNLOCK);
            if (op->awaiting & NEWRMA_OPW_REPLY) {
                t->waiting++;
            }
            ret = send_op(module, t, op);
            sync_flags = 0;
        } else if (OMPI_SUCCESS == ret) {
            ret = osc_newrma_am_send_lock(module, t);
        }
    }
    if (0 != sync_flags) {
        while (OMPI_SUCCESS == ret && (NEWRMA_LOCK_GRANTED != t->lock_state || 0 != t->acks_pending)) {
            if (t->denied) {
                ret = lock_refused(module, t);
                continue;
            }
            osc_newrma_am_progress_once();
        }
        /* the lock is held now, whichever way: a lock word's release waits
         * for the operations (osc_newrma_native_rma.h) */
        if (OMPI_SUCCESS == ret && osc_newrma_native_on(module)) {
            ret = osc_newrma_native_closing(module, t, &sync_flags);
        }
        if (OMPI_SUCCESS == ret) {
            ret = issue_queued(module, t, 0, sync_flags);
        }
    }
    if (wait) {
        while (0 != t->waiting || 0 != t->sending) {
            osc_newrma_am_progress_once();
        }
        if (OMPI_SUCCESS == ret) {
            ret = t->status;
        }
        t->status = OMPI_SUCCESS;
        if (osc_newrma_native_on(module)) {
            int r = osc_newrma_native_unlocked(module, t);
            ret = OMPI_SUCCESS == ret ? r : ret;
        }
    }
    return ret;
}

/* ------------------------------------------------------------------ */
/* remote window sizes (range checks at the origin)                    */
/* ------------------------------------------------------------------ */

/* Ask `rank` for its window's size and disp_unit (a dynamic window: its
 * regions) and wait for an answer -- any answer: with several threads the
 * caches may change under us, so callers check again and ask again. */
static int request_info(ompi_osc_newrma_module_t *module, int rank)
{
    osc_newrma_am_hdr_t hdr = { .kind = NEWRMA_PKT_INFO, .sender = module->rank, .win = module->am_id };
    uint64_t before = module->am_info_replies;
    int ret = osc_newrma_am_send_control(module, rank, &hdr, NULL, 0);

    while (OMPI_SUCCESS == ret && module->am_info_replies == before) {
        osc_newrma_am_progress_once();
    }
    return ret;
}

/* Size and disp_unit of `rank`'s window: our own when the info keys say all
 * are alike, else from the window's bounded cache, asked for on a miss. */
static int peer_bounds(ompi_osc_newrma_module_t *module, int rank, uint64_t *size, int *disp_unit)
{
    osc_newrma_peer_cache_t *entry;
    int ret = OMPI_SUCCESS;

    *size = module->am_size;
    *disp_unit = module->am_disp_unit;
    if (osc_newrma_native_on(module)) {
        osc_newrma_native_bounds(module, rank, size, disp_unit);   /* exchanged at creation */
        return OMPI_SUCCESS;
    }
    if (rank == module->rank || (module->same_size && module->same_disp_unit)) {
        return OMPI_SUCCESS;
    }
    entry = &module->am_peers[(unsigned int) rank % mca_osc_newrma_component.peer_cache];
    while (OMPI_SUCCESS == ret && entry->rank != rank) {
        ret = request_info(module, rank);
    }
    if (!module->same_size) {
        *size = entry->size;
    }
    if (!module->same_disp_unit) {
        *disp_unit = entry->disp_unit;
    }
    return ret;
}

/* A dynamic window's range check against the origin's one-target cache of
 * the target's regions, asked for again when the cache does not cover the
 * range (a region attached since) and at the start of every epoch (a region
 * detached since, see osc_newrma_am_sync.c).  The target checks again on
 * arrival and reports at the next synchronization. */
static int check_dynamic_range(ompi_osc_newrma_module_t *module, int target, uint64_t addr, size_t len)
{
    int ret = OMPI_SUCCESS;

    if (target == module->rank) {
        return osc_newrma_dyn_check_range(module, target, addr, len);
    }
    if (osc_newrma_dyn_cache_covers(module, target, addr, len)) {
        return OMPI_SUCCESS;
    }
    osc_newrma_dyn_cache_forget(module);
    while (OMPI_SUCCESS == ret && module->dyn.cached_rank != target) {
        ret = request_info(module, target);
    }
    if (OMPI_SUCCESS == ret && !osc_newrma_dyn_cache_covers(module, target, addr, len)) {
        ret = OMPI_ERR_RMA_RANGE;
    }
    return ret;
}

/* The origin's range check (the target checks again). */
static int check_range(ompi_osc_newrma_module_t *module, int target, ptrdiff_t disp, const osc_newrma_layout_t *tl)
{
    uint64_t size;
    int disp_unit;
    ptrdiff_t offset;
    int ret;

    if (OPAL_UNLIKELY(tl->overflows)) {
        return OMPI_ERR_RMA_RANGE;
    }
    osc_newrma_am_enter();
    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        ret = check_dynamic_range(module, target, (uint64_t) disp + (uint64_t) tl->gap, tl->span);
        osc_newrma_am_leave();
        return ret;
    }
    ret = peer_bounds(module, target, &size, &disp_unit);
    osc_newrma_am_leave();
    return OMPI_SUCCESS != ret ? ret : osc_newrma_window_offset(disp, disp_unit, size, tl, &offset);
}

/* ------------------------------------------------------------------ */
/* building operations                                                 */
/* ------------------------------------------------------------------ */

/* Everything an operation is, from the MPI call.  Whether data travels
 * and whether a result comes back are flags, never a NULL address:
 * MPI_BOTTOM is NULL and a legal buffer with absolute datatypes.  A result
 * is wanted exactly when result_dt is set. */
typedef struct {
    osc_newrma_pkt_kind_t kind;
    bool has_data;
    const void *origin_addr;
    int origin_count;
    struct ompi_datatype_t *origin_dt;
    const void *compare_addr;            /* compare-and-swap */
    void *result_addr;
    int result_count;
    struct ompi_datatype_t *result_dt;
    int target;
    ptrdiff_t disp;
    int target_count;
    struct ompi_datatype_t *target_dt;
    struct ompi_op_t *op;
    bool want_request;
    uint32_t notify;                     /* notification counter index + 1; 0: none */
} am_call_t;

/* The payload: [target datatype description][packed origin data]. */
static int build_payload(osc_newrma_op_t *op, const am_call_t *call, const osc_newrma_layout_t *ol,
                         const osc_newrma_layout_t *tl, bool describe)
{
    size_t desc_len = describe ? ompi_datatype_pack_description_length(call->target_dt) : 0;
    bool data = call->has_data;
    size_t data_len = data ? (NEWRMA_PKT_CAS == call->kind ? 2 * tl->bytes : ol->bytes) : 0;
    size_t total = desc_len + data_len;
    char *buf;

    op->hdr.desc_len = (uint32_t) desc_len;
    op->payload_len = total;
    /* a contiguous origin with nothing before it travels from the user's
     * buffer, unless it is small enough to copy for nothing -- or notified:
     * that call returns with its buffer free, without waiting for a large
     * send to be fetched by the target */
    if (0 == desc_len && data && NEWRMA_PKT_CAS != call->kind && ol->contiguous && total > NEWRMA_OP_INLINE
        && 0 == call->notify) {
        op->payload = (const char *) call->origin_addr + ol->gap;
        return OMPI_SUCCESS;
    }
    if (0 == total) {
        op->payload = NULL;
        return OMPI_SUCCESS;
    }
    buf = total <= NEWRMA_OP_INLINE ? op->inline_data : (op->owned = malloc(total));
    if (NULL == buf) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (describe) {
        const void *desc = NULL;
        int ret = ompi_datatype_get_pack_description(call->target_dt, &desc);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
        memcpy(buf, desc, desc_len);
    }
    if (NEWRMA_PKT_CAS == call->kind) {
        memcpy(buf + desc_len, call->origin_addr, tl->bytes);
        memcpy(buf + desc_len + tl->bytes, call->compare_addr, tl->bytes);
    } else if (data) {
        int ret = ompi_datatype_sndrcv(call->origin_addr, call->origin_count, call->origin_dt, buf + desc_len,
                                       (int32_t) ol->bytes, &ompi_mpi_packed.dt);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
    }
    op->payload = buf;
    return OMPI_SUCCESS;
}

/* A notified operation has left when its call returns: queued to the
 * transport, so that nothing the origin does later is needed to deliver
 * its notification (a lock or post it waited for is taken here); a
 * notified fetch also has its data.  AM lock held. */
static void notified_wait(osc_newrma_target_t *t, bool fetching)
{
    t->busy++;      /* progress releases the AM lock */
    while (0 != t->npending || (fetching && (0 != t->waiting || 0 != t->sending))) {
        osc_newrma_am_progress_once();
    }
    t->busy--;
}

/* Queue one operation on its target and let the target's state decide
 * when it goes out.  Checked by the caller. */
static int am_queue(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_layout_t *ol,
                    const osc_newrma_layout_t *tl, struct ompi_request_t **request)
{
    bool accumulate = NEWRMA_PKT_ACC == call->kind || NEWRMA_PKT_GET_ACC == call->kind;
    bool describe = accumulate || !tl->contiguous;
    osc_newrma_target_t *t;
    osc_newrma_op_t *op;
    int ret;

    osc_newrma_am_enter();
    /* the operation element first: getting one may make progress, during
     * which another thread could reclaim a target element we held */
    op = op_get(module);
    t = osc_newrma_am_target_get(module, call->target);
    if (NULL == t) {
        op->module = module;
        op->awaiting = 0;
        op_return(op);
        osc_newrma_am_leave();
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    op->module = module;
    op->target = t;
    op->awaiting = NULL != call->result_dt ? NEWRMA_OPW_REPLY : 0;
    op->request = NULL;
    op->hdr = (osc_newrma_am_hdr_t) {
        .kind = (uint8_t) call->kind,
        .op = accumulate ? (uint16_t) call->op->o_f_to_c_index : 0,
        .sender = module->rank,
        .win = module->am_id,
        .disp = call->disp,
        .gap = describe ? 0 : tl->gap,
        .cookie = (uint64_t) (uintptr_t) op,
        .tcount = describe ? call->target_count : (int32_t) tl->bytes,
        .flags = describe ? NEWRMA_PF_TDESC : 0,
        .notify = call->notify,
    };
    if (NULL != call->result_dt) {
        op->result_addr = call->result_addr;
        op->result_count = call->result_count;
        op->result_dt = call->result_dt;
        OMPI_DATATYPE_RETAIN(op->result_dt);
    }
    ret = build_payload(op, call, ol, tl, describe);
    if (OMPI_SUCCESS == ret && call->want_request) {
        op->request = request_new();
        ret = NULL == op->request ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
        *request = &op->request->super;
    }
    if (OMPI_SUCCESS != ret) {
        op->awaiting = 0;
        if (NULL != op->request) {
            OBJ_RELEASE(op->request);
            op->request = NULL;
        }
        op_return(op);
        osc_newrma_am_leave();
        return ret;
    }
    opal_list_append(&t->pending, &op->super.super);
    t->npending++;
    osc_newrma_node_route_close(module, call->target);
    mca_osc_newrma_component.route_am_ops++;
    ret = target_kick(module, t, call->want_request || 0 != call->notify);
    if (OMPI_SUCCESS == ret && 0 != call->notify) {
        notified_wait(t, NULL != call->result_dt);
    }
    osc_newrma_am_leave();
    return ret;
}

/* A request for an operation that had nothing to do. */
static int completed_request(struct ompi_request_t **request)
{
    *request = &ompi_request_empty;
    return OMPI_SUCCESS;
}

/* May the node or native route touch `t`'s memory now?  Yes once the epoch grants
 * access (its lock, its post; a fence epoch's targets start granted),
 * waited for where the active-message path waits too.  A lock_all epoch
 * that holds other locks only tries the lock (it never waits while holding
 * locks); refused, the operation goes by active messages, and the refusal
 * is sorted out where the active-message path sorts it out (the next flush
 * or unlock_all), so that every access of an epoch to a target is made
 * under one hold of its lock.  AM lock held. */
static int target_access(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool *granted)
{
    int ret = OMPI_SUCCESS;

    t->busy++;       /* progress releases the AM lock */
    if (NEWRMA_LOCK_CALLED == t->lock_state && !t->denied) {
        ret = osc_newrma_am_send_lock(module, t);
    }
    while (OMPI_SUCCESS == ret && NEWRMA_LOCK_GRANTED != t->lock_state && !t->denied) {
        osc_newrma_am_progress_once();
    }
    t->busy--;
    *granted = NEWRMA_LOCK_GRANTED == t->lock_state;
    return ret;
}

/* Nothing of ours to `t` queued or travelling: an accumulate applied here
 * now cannot overtake an earlier one still to be applied from a packet
 * (accumulate_ordering: one origin's accumulates to a location apply in
 * program order). */
static bool target_idle(const osc_newrma_target_t *t)
{
    return 0 == t->npending && 0 == t->issued && 0 == t->acks_pending && 0 == t->waiting && 0 == t->sending;
}

/* A route's admission of an operation to `rank` (node or native route):
 * its access granted, and for the accumulate family (`ordered`) nothing of
 * ours to it in flight; *done false: the caller sends the operation as a
 * packet.  AM lock held. */
static int route_admit(ompi_osc_newrma_module_t *module, int rank, bool ordered, osc_newrma_target_t **t, bool *done)
{
    int ret;

    *t = osc_newrma_am_target_get(module, rank);
    ret = NULL == *t ? OMPI_ERR_OUT_OF_RESOURCE : target_access(module, *t, done);
    *done = OMPI_SUCCESS == ret && *done && (!ordered || target_idle(*t));
    return ret;
}

/* The node route's admission: the target's range, then route_admit -- a
 * flag test once the route has the target open (granted and idle,
 * osc_newrma_node_route.h).  *offset: of the target's bytes in its window. */
static int node_admit(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_node_peer_t *peer,
                      const osc_newrma_layout_t *tl, bool ordered, ptrdiff_t *offset, bool *done)
{
    osc_newrma_target_t *t;
    int ret = osc_newrma_window_offset(call->disp, peer->disp_unit, peer->size, tl, offset);

    *done = true;
    if (OMPI_SUCCESS != ret || 0 == tl->bytes) {
        return ret;
    }
    if (!osc_newrma_node_route_is_open(module->am_node, peer)) {
        osc_newrma_am_enter();
        ret = route_admit(module, call->target, ordered, &t, done);
        if (OMPI_SUCCESS == ret && *done && target_idle(t)) {
            osc_newrma_node_route_open(module->am_node, peer);
        }
        osc_newrma_am_leave();
    }
    if (OMPI_SUCCESS == ret && *done) {
        osc_newrma_node_route_count();
    }
    return ret;
}

/* A put or get to a peer on this node (the node route): a load/store into
 * its block of the node's segment.  Complete when it returns, as on the
 * direct path; the unlock, complete or fence that ends the epoch goes out
 * after it as a packet (a release). */
static int node_move(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_node_peer_t *peer,
                     const osc_newrma_layout_t *ol, const osc_newrma_layout_t *tl, bool *done)
{
    ptrdiff_t offset = 0;
    char *taddr;
    int ret = node_admit(module, call, peer, tl, false, &offset, done);

    if (OMPI_SUCCESS != ret || !*done || 0 == tl->bytes) {
        return ret;
    }
    taddr = module->am_node->base + peer->offset + offset;
    if (NEWRMA_PKT_PUT == call->kind) {
        return osc_newrma_local_copy(taddr, call->target_count, call->target_dt, tl, (void *) call->origin_addr,
                                     call->origin_count, call->origin_dt, ol);
    }
    return osc_newrma_local_copy((void *) call->origin_addr, call->origin_count, call->origin_dt, ol, taddr,
                                 call->target_count, call->target_dt, tl);
}

/* An accumulate or get_accumulate to a peer on this node, applied as the
 * target's handler applies the packet (osc_newrma_acc_apply_packed, on the
 * packed origin data and result) under the target's stripes. */
static int node_accumulate(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_node_peer_t *peer,
                           const osc_newrma_layout_t *ol, const osc_newrma_layout_t *tl, bool *done)
{
    const char *packed = NULL;
    char *owned = NULL, *result = NULL, *result_owned = NULL;
    osc_newrma_layout_t rl;
    unsigned int first, count;
    ptrdiff_t offset = 0;
    int ret = node_admit(module, call, peer, tl, true, &offset, done);

    if (OMPI_SUCCESS != ret || !*done || 0 == tl->bytes) {
        return ret;
    }
    if (call->has_data && ol->contiguous) {
        packed = (const char *) call->origin_addr + ol->gap;
    } else if (call->has_data) {
        packed = owned = malloc(ol->bytes);
        ret = NULL == owned ? OMPI_ERR_OUT_OF_RESOURCE
                            : ompi_datatype_sndrcv(call->origin_addr, call->origin_count, call->origin_dt, owned,
                                                   (int32_t) ol->bytes, &ompi_mpi_packed.dt);
    }
    if (OMPI_SUCCESS == ret && NULL != call->result_dt) {
        osc_newrma_datatype_layout(call->result_dt, call->result_count, &rl);
        result = rl.contiguous ? (char *) call->result_addr + rl.gap : (result_owned = malloc(tl->bytes));
        ret = NULL == result ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS == ret) {
        osc_newrma_node_route_acc_lock(module->am_node, peer, module->acc_shift, (uint64_t) (offset + tl->gap),
                                       tl->span, &first, &count);
        ret = osc_newrma_acc_apply_packed(module->am_node->base + peer->offset + offset, call->target_count,
                                          call->target_dt, packed, tl->bytes, call->op, result);
        osc_newrma_node_route_acc_unlock(module->am_node, peer, first, count);
    }
    if (OMPI_SUCCESS == ret && NULL != result_owned) {
        ret = ompi_datatype_sndrcv(result_owned, (int32_t) tl->bytes, &ompi_mpi_packed.dt, call->result_addr,
                                   call->result_count, call->result_dt);
    }
    free(owned);
    free(result_owned);
    return ret;
}

/* A compare-and-swap to a peer on this node, as the handler does it. */
static int node_compare_and_swap(ompi_osc_newrma_module_t *module, const am_call_t *call,
                                 const osc_newrma_node_peer_t *peer, const osc_newrma_layout_t *ol,
                                 const osc_newrma_layout_t *tl, bool *done)
{
    ptrdiff_t offset = 0;
    int ret;

    (void) ol;
    if (tl->bytes > 16) {      /* osc_newrma_node_route_cas's bound, above any type osc_newrma_cas_type_ok takes */
        *done = false;
        return OMPI_SUCCESS;
    }
    ret = node_admit(module, call, peer, tl, true, &offset, done);
    if (OMPI_SUCCESS != ret || !*done || 0 == tl->bytes) {
        return ret;
    }
    osc_newrma_node_route_cas(module->am_node, peer, module->acc_shift, (uint64_t) (offset + tl->gap), tl->bytes,
                              call->origin_addr, call->compare_addr, call->result_addr);
    return OMPI_SUCCESS;
}

typedef int (*node_op_t)(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_node_peer_t *peer,
                         const osc_newrma_layout_t *ol, const osc_newrma_layout_t *tl, bool *done);

/* The node route first when the target is a peer on this node: true when
 * it did the operation, or failed (*ret); false: the caller sends it. */
static bool by_node_route(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_layout_t *ol,
                          const osc_newrma_layout_t *tl, node_op_t node_op, int *ret)
{
    const osc_newrma_node_peer_t *peer;
    bool done = false;

    *ret = OMPI_SUCCESS;
    if (0 != call->notify || NULL == module->am_node
        || NULL == (peer = osc_newrma_node_route_peer(module->am_node, call->target))) {
        return false;      /* a notified operation is one packet, data and notification */
    }
    *ret = node_op(module, call, peer, ol, tl, &done);
    return done || OMPI_SUCCESS != *ret;
}

/* A notified put or accumulate whose counter the native route can
 * increment too (docs/notified-rma.md, "Native route"); a notified get or
 * get_accumulate stays one packet (its data must be out before the count). */
static bool native_notify_eligible(const ompi_osc_newrma_module_t *module, const am_call_t *call)
{
    return mca_osc_newrma_component.native_notify && NULL == call->result_dt
        && (NEWRMA_PKT_PUT == call->kind || NEWRMA_PKT_ACC == call->kind)
        && osc_newrma_native_notify_ok(module, call->target, call->notify - 1);
}

/* Does the native route take this operation (osc_newrma_native_rma.h)?
 * Contiguous puts and gets; one element of the accumulate family with an
 * operation and type UCX's atomics have, its buffers contiguous.  Never a
 * request-based one (its request completes through the packet), nor a
 * notified one whose counter it cannot reach (its notification then rides
 * on the packet). */
static bool native_eligible(const ompi_osc_newrma_module_t *module, const am_call_t *call,
                            const osc_newrma_layout_t *ol, const osc_newrma_layout_t *tl)
{
    osc_newrma_layout_t rl;

    if (call->want_request || 0 == tl->bytes || !tl->contiguous || (call->has_data && !ol->contiguous)
        || (0 != call->notify && !native_notify_eligible(module, call))) {
        return false;
    }
    if (NEWRMA_PKT_PUT == call->kind || NEWRMA_PKT_GET == call->kind) {
        return ol->contiguous;      /* a get's origin is its result */
    }
    if (1 != call->target_count
        || !osc_newrma_native_atomic_ok(NEWRMA_PKT_CAS == call->kind ? NULL : call->op, call->target_dt)) {
        return false;
    }
    if (NULL != call->result_dt) {
        osc_newrma_datatype_layout(call->result_dt, call->result_count, &rl);
        return rl.contiguous && rl.bytes == tl->bytes;
    }
    return true;
}

/* The native route first on a native window: true when it did the
 * operation, or failed (*ret); false: the caller sends it. */
static bool by_native_route(ompi_osc_newrma_module_t *module, const am_call_t *call, const osc_newrma_layout_t *ol,
                            const osc_newrma_layout_t *tl, int *ret)
{
    bool move = NEWRMA_PKT_PUT == call->kind || NEWRMA_PKT_GET == call->kind, done = false;
    const char *origin = (const char *) call->origin_addr + (call->has_data ? ol->gap : 0);
    char *result = NULL;
    osc_newrma_target_t *t;
    osc_newrma_layout_t rl;
    ptrdiff_t offset = 0;
    uint64_t size;
    int disp_unit;

    *ret = OMPI_SUCCESS;
    if (!osc_newrma_native_on(module) || !native_eligible(module, call, ol, tl)) {
        return false;
    }
    if (NULL != call->result_dt) {
        osc_newrma_datatype_layout(call->result_dt, call->result_count, &rl);
        result = (char *) call->result_addr + rl.gap;
    }
    osc_newrma_native_bounds(module, call->target, &size, &disp_unit);
    *ret = osc_newrma_window_offset(call->disp, disp_unit, size, tl, &offset);
    if (OMPI_SUCCESS != *ret) {
        return true;
    }
    offset += tl->gap;
    if (!move && 0 != offset % (ptrdiff_t) tl->bytes) {
        return false;        /* UCX's atomics take aligned elements (the window's base is) */
    }
    osc_newrma_am_enter();
    /* a notified operation, like an accumulate, must not overtake a packet
     * of ours still on its way to the target */
    *ret = route_admit(module, call->target, !move || 0 != call->notify, &t, &done);
    if (OMPI_SUCCESS == *ret && done && move) {
        *ret = osc_newrma_native_move(module, t, NEWRMA_PKT_PUT == call->kind,
                                      NEWRMA_PKT_PUT == call->kind ? (void *) origin : result, tl->bytes,
                                      (uint64_t) offset, call->notify);
    } else if (OMPI_SUCCESS == *ret && done) {
        *ret = osc_newrma_native_atomic(module, call->target, NEWRMA_PKT_CAS == call->kind ? NULL : call->op,
                                        call->target_dt, call->has_data ? origin : NULL, call->compare_addr,
                                        result, (uint64_t) offset);
        *ret = OMPI_SUCCESS == *ret ? osc_newrma_native_notify(module, t, call->notify) : *ret;
    }
    osc_newrma_am_leave();
    return done || OMPI_SUCCESS != *ret;
}

/* put and get */
static int am_move(ompi_osc_newrma_module_t *module, am_call_t *call, struct ompi_request_t **request)
{
    osc_newrma_layout_t ol, tl;
    int ret = call->want_request ? osc_newrma_epoch_request_check(module, call->target, request) : OMPI_SUCCESS;

    NEWRMA_TRACE_OP(module, NEWRMA_PKT_PUT == call->kind ? "put" : "get", call->target, call->disp,
                    call->target_count, call->target_dt);

    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_epoch_access(module, call->target);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_datatype_layout(call->origin_dt, call->origin_count, &ol);
    osc_newrma_datatype_layout(call->target_dt, call->target_count, &tl);
    if (OPAL_UNLIKELY(ol.bytes != tl.bytes)) {
        return MPI_ERR_TYPE;
    }
    if (NEWRMA_PKT_GET == call->kind) {
        /* a get's result is its origin buffer */
        call->result_addr = (void *) call->origin_addr;
        call->result_count = call->origin_count;
        call->result_dt = call->origin_dt;
    }
    call->has_data = NEWRMA_PKT_PUT == call->kind;
    if (by_node_route(module, call, &ol, &tl, node_move, &ret)) {
        return OMPI_SUCCESS == ret && call->want_request ? completed_request(request) : ret;
    }
    if (by_native_route(module, call, &ol, &tl, &ret)) {
        return ret;
    }
    ret = check_range(module, call->target, call->disp, &tl);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (0 == tl.bytes && 0 == call->notify) {
        return call->want_request ? completed_request(request) : OMPI_SUCCESS;
    }
    return am_queue(module, call, &ol, &tl, request);
}

/* accumulate family */
static int am_accumulate(ompi_osc_newrma_module_t *module, am_call_t *call, struct ompi_request_t **request)
{
    osc_newrma_layout_t ol, tl;
    size_t bytes = 0;
    int ret = call->want_request ? osc_newrma_epoch_request_check(module, call->target, request) : OMPI_SUCCESS;

    NEWRMA_TRACE_OP(module, NULL == call->result_dt ? "accumulate" : "get_accumulate", call->target, call->disp,
                    call->target_count, call->target_dt);

    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_acc_validate(module->win, call->origin_addr, call->origin_count, call->origin_dt,
                                      call->result_addr, call->result_count, call->result_dt, call->target,
                                      call->target_count, call->target_dt, call->op, &bytes);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_datatype_layout(call->target_dt, call->target_count, &tl);
    call->has_data = &ompi_mpi_op_no_op.op != call->op;   /* else only the request travels */
    if (call->has_data) {
        osc_newrma_datatype_layout(call->origin_dt, call->origin_count, &ol);
    }
    if (NULL != call->result_dt) {
        call->kind = NEWRMA_PKT_GET_ACC;
    }
    if (0 != bytes && by_node_route(module, call, &ol, &tl, node_accumulate, &ret)) {
        return OMPI_SUCCESS == ret && call->want_request ? completed_request(request) : ret;
    }
    if (0 != bytes && by_native_route(module, call, &ol, &tl, &ret)) {
        return ret;
    }
    ret = check_range(module, call->target, call->disp, &tl);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (0 == bytes && 0 == call->notify) {
        return call->want_request ? completed_request(request) : OMPI_SUCCESS;
    }
    return am_queue(module, call, &ol, &tl, request);
}

/* ------------------------------------------------------------------ */
/* the MPI calls                                                       */
/* ------------------------------------------------------------------ */

static int am_put(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                  struct ompi_datatype_t *tdt, struct ompi_win_t *win)
{
    am_call_t call = { .kind = NEWRMA_PKT_PUT, .origin_addr = oa, .origin_count = oc, .origin_dt = odt,
                       .target = target, .disp = td, .target_count = tc, .target_dt = tdt };
    return am_move(osc_newrma_module(win), &call, NULL);
}

static int am_get(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                  struct ompi_datatype_t *tdt, struct ompi_win_t *win)
{
    am_call_t call = { .kind = NEWRMA_PKT_GET, .origin_addr = oa, .origin_count = oc, .origin_dt = odt,
                       .target = target, .disp = td, .target_count = tc, .target_dt = tdt };
    return am_move(osc_newrma_module(win), &call, NULL);
}

static int am_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                   struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    am_call_t call = { .kind = NEWRMA_PKT_PUT, .origin_addr = oa, .origin_count = oc, .origin_dt = odt,
                       .target = target, .disp = td, .target_count = tc, .target_dt = tdt, .want_request = true };
    return am_move(osc_newrma_module(win), &call, request);
}

static int am_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                   struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    am_call_t call = { .kind = NEWRMA_PKT_GET, .origin_addr = oa, .origin_count = oc, .origin_dt = odt,
                       .target = target, .disp = td, .target_count = tc, .target_dt = tdt, .want_request = true };
    return am_move(osc_newrma_module(win), &call, request);
}

static int am_acc_call(struct ompi_win_t *win, const void *oa, int oc, struct ompi_datatype_t *odt, void *ra,
                       int rc, struct ompi_datatype_t *rdt, int target, ptrdiff_t td, int tc,
                       struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_request_t **request)
{
    am_call_t call = { .kind = NEWRMA_PKT_ACC, .origin_addr = oa, .origin_count = oc, .origin_dt = odt,
                       .result_addr = ra, .result_count = rc, .result_dt = rdt, .target = target, .disp = td,
                       .target_count = tc, .target_dt = tdt, .op = op, .want_request = NULL != request };
    return am_accumulate(osc_newrma_module(win), &call, request);
}

static int am_acc(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                  struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return am_acc_call(win, oa, oc, odt, NULL, 0, NULL, target, td, tc, tdt, op, NULL);
}

static int am_get_acc(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra, int rc,
                      struct ompi_datatype_t *rdt, int target, ptrdiff_t td, int tc, struct ompi_datatype_t *tdt,
                      struct ompi_op_t *op, struct ompi_win_t *win)
{
    return am_acc_call(win, oa, oc, odt, ra, rc, rdt, target, td, tc, tdt, op, NULL);
}

static int am_racc(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                   struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                   struct ompi_request_t **request)
{
    return am_acc_call(win, oa, oc, odt, NULL, 0, NULL, target, td, tc, tdt, op, request);
}

static int am_rget_acc(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra, int rc,
                       struct ompi_datatype_t *rdt, int target, ptrdiff_t td, int tc, struct ompi_datatype_t *tdt,
                       struct ompi_op_t *op, struct ompi_win_t *win, struct ompi_request_t **request)
{
    return am_acc_call(win, oa, oc, odt, ra, rc, rdt, target, td, tc, tdt, op, request);
}

static int am_fetch_and_op(const void *oa, void *ra, struct ompi_datatype_t *dt, int target, ptrdiff_t td,
                           struct ompi_op_t *op, struct ompi_win_t *win)
{
    if (!osc_newrma_fop_op_ok(op, dt)) {
        return MPI_ERR_OP;
    }
    return am_acc_call(win, oa, 1, dt, ra, 1, dt, target, td, 1, dt, op, NULL);
}

static int am_compare_and_swap(const void *oa, const void *ca, void *ra, struct ompi_datatype_t *dt,
                               int target, ptrdiff_t td, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    am_call_t call = { .kind = NEWRMA_PKT_CAS, .has_data = true, .origin_addr = oa, .origin_count = 1, .origin_dt = dt,
                       .compare_addr = ca, .result_addr = ra, .result_count = 1, .result_dt = dt,
                       .target = target, .disp = td, .target_count = 1, .target_dt = dt };
    osc_newrma_layout_t tl;
    int ret = osc_newrma_epoch_access(module, target);

    NEWRMA_TRACE_OP(module, "compare_and_swap", target, td, 1, dt);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (!ompi_datatype_is_predefined(dt) || !osc_newrma_cas_type_ok(dt)) {
        return MPI_ERR_TYPE;
    }
    osc_newrma_datatype_layout(dt, 1, &tl);
    if (by_node_route(module, &call, &tl, &tl, node_compare_and_swap, &ret)) {
        return ret;
    }
    if (by_native_route(module, &call, &tl, &tl, &ret)) {
        return ret;
    }
    ret = check_range(module, target, td, &tl);
    return OMPI_SUCCESS != ret ? ret : am_queue(module, &call, &tl, &tl, NULL);
}

int osc_newrma_am_notified(ompi_osc_newrma_module_t *module, const osc_newrma_notify_op_t *op, int idx)
{
    am_call_t call = { .kind = OSC_NEWRMA_NOTIFY_PUT == op->kind ? NEWRMA_PKT_PUT
                               : OSC_NEWRMA_NOTIFY_GET == op->kind ? NEWRMA_PKT_GET : NEWRMA_PKT_ACC,
                       .origin_addr = op->origin_addr, .origin_count = op->origin_count,
                       .origin_dt = op->origin_datatype, .target = op->target_rank, .disp = op->target_disp,
                       .target_count = op->target_count, .target_dt = op->target_datatype, .op = op->op,
                       .notify = (uint32_t) idx + 1 };

    return NEWRMA_PKT_ACC == call.kind ? am_accumulate(module, &call, NULL) : am_move(module, &call, NULL);
}

static int am_attach(struct ompi_win_t *win, void *base, size_t len)
{
    int ret;

    osc_newrma_am_enter();    /* packet handlers read the region table */
    ret = ompi_osc_newrma_attach(win, base, len);
    osc_newrma_am_leave();
    return ret;
}

static int am_detach(struct ompi_win_t *win, const void *base)
{
    int ret;

    osc_newrma_am_enter();
    ret = ompi_osc_newrma_detach(win, base);
    osc_newrma_am_leave();
    return ret;
}

/* Windows with a peer off this node (or every peer treated as remote). */
const ompi_osc_base_module_t ompi_osc_newrma_am_table = {
    .osc_win_shared_query = ompi_osc_newrma_shared_query,
    .osc_win_attach = am_attach,
    .osc_win_detach = am_detach,
    .osc_free = ompi_osc_newrma_free,
    .osc_put = am_put,
    .osc_get = am_get,
    .osc_accumulate = am_acc,
    .osc_compare_and_swap = am_compare_and_swap,
    .osc_fetch_and_op = am_fetch_and_op,
    .osc_get_accumulate = am_get_acc,
    .osc_rput = am_rput,
    .osc_rget = am_rget,
    .osc_raccumulate = am_racc,
    .osc_rget_accumulate = am_rget_acc,
    .osc_fence = osc_newrma_am_fence,
    .osc_start = osc_newrma_am_start,
    .osc_complete = osc_newrma_am_complete,
    .osc_post = osc_newrma_am_post,
    .osc_wait = osc_newrma_am_wait,
    .osc_test = osc_newrma_am_test,
    .osc_lock = osc_newrma_am_lock_target,
    .osc_unlock = osc_newrma_am_unlock,
    .osc_lock_all = osc_newrma_am_lock_all,
    .osc_unlock_all = osc_newrma_am_unlock_all,
    .osc_sync = osc_newrma_am_sync,
    .osc_flush = osc_newrma_am_flush,
    .osc_flush_all = osc_newrma_am_flush_all,
    .osc_flush_local = osc_newrma_am_flush_local,
    .osc_flush_local_all = osc_newrma_am_flush_local_all,
};
