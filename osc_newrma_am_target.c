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
 * osc/newrma: the target side of the active-message path, and the packet
 * layer both sides share: window registration, sending (through the
 * transport that reaches the peer: osc_newrma_transport.h), progress (wait
 * loops, opal_progress, the progress thread, over every transport),
 * dispatch of incoming packets, the target's lock queue, applying
 * operations and replying.
 *
 * Completion is counted, not ordered (design, "Ordering"): a packet that
 * carries UNLOCK, FLUSH or RMA_DONE says how many operations the origin sent
 * since its last such packet, and the target acts on it once it has done
 * that many.  Operations of one origin are applied in the order their
 * headers arrive (every transport delivers those in order per peer): one
 * whose large payload is still being fetched holds the later ones behind it.
 * Every origin waits for the answer to a synchronization before it sends
 * operations of the next segment, so the counts of two segments never mix.
 */

#include "ompi_config.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/op/op.h"
#include "ompi/proc/proc.h"
#include "opal/runtime/opal_progress.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_am.h"
#include "osc_newrma_atomic.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_node_lock.h"
#include "osc_newrma_native_rma.h"
#include "osc_newrma_node_route.h"
#include "osc_newrma_transport.h"

typedef struct held_op held_op_t;

/* What the target knows about one origin with work in flight. */
typedef struct {
    held_op_t *held_head;        /* operations waiting for an earlier one's */
    held_op_t *held_tail;        /* rendezvous payload, in the order sent */
    uint32_t processed;          /* operations done in the current segment */
    uint32_t expected;           /* the segment's size, once its sync arrived */
    uint8_t sync_flags;          /* that sync (0: not arrived yet) */
    uint8_t lock_held;           /* 0, NEWRMA_PF_LOCK_SHARED or NEWRMA_PF_LOCK_EXCL */
    int status;                  /* first error of the segment */
} origin_state_t;

/* A lock request that has to wait, maybe with the single operation that
 * came with it (header and payload copied). */
typedef struct {
    opal_list_item_t super;
    int origin;
    uint8_t lock;
    osc_newrma_am_hdr_t *packet; /* NULL for a LOCK packet */
    size_t len;
} lock_waiter_t;
OBJ_CLASS_INSTANCE(lock_waiter_t, opal_list_item_t, NULL, NULL);

/* An operation that cannot run yet: its large payload is still being
 * fetched, or an earlier operation of the same origin waits for its
 * own.  Operations of one origin run in the order they were sent, which is
 * what MPI's default accumulate ordering (rar,raw,war,waw) asks for. */
struct held_op {
    held_op_t *next;
    ompi_osc_newrma_module_t *module;
    osc_newrma_am_hdr_t hdr;
    bool ready;
    int status;
    size_t len;
    char data[];
};

static void execute_operation(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr,
                              char *data, size_t len);
static void operation_lost(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr, int status);
static void operation_counted(ompi_osc_newrma_module_t *module, int origin, int status);

/* ------------------------------------------------------------------ */
/* sending                                                             */
/* ------------------------------------------------------------------ */

int osc_newrma_am_send(ompi_osc_newrma_module_t *module, int peer, const osc_newrma_am_hdr_t *hdr,
                       const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    const osc_newrma_transport_t *transport = osc_newrma_transport_of(module, peer);

    if (OPAL_UNLIKELY(NULL == transport)) {
        return OMPI_ERR_UNREACH;
    }
    if (peer != module->rank) {
        mca_osc_newrma_component.packets_sent[hdr->kind]++;
    }
    return transport->send(module, peer, hdr, sizeof(*hdr), payload, len, done, arg);
}

/* The progress thread (osc_newrma_progress_thread), if running. */
static struct {
    opal_thread_t thread;
    bool running;       /* started and not joined: only the thread that
                         * starts and stops it reads or writes this */
    bool stop;          /* asks the thread to end: guarded by the AM lock,
                         * which the thread holds whenever it looks */
} progress_thread;

static void proxies_retry(void);

/* opal_progress callback, for the transports that have no callback of
 * their own (has_work: loopback, FIFOs).  With a single thread nothing can
 * change their queues or windows under us, so an idle check costs a load
 * per window and no lock.  With several threads the lock comes first: the
 * loopback queue is a plain list that another thread may be appending to,
 * so even a look at it without the lock would be a data race. */
static int am_progress(void)
{
    bool single = !opal_using_threads() && !progress_thread.running;
    int any;

    if (single && !osc_newrma_transports_have_work() && !osc_newrma_node_proxy_waiting()
        && !osc_newrma_native_pending()) {
        return 0;
    }
    osc_newrma_am_enter();
    any = osc_newrma_transports_poll();
    proxies_retry();
    any += osc_newrma_native_progress();
    osc_newrma_am_leave();
    return any;
}

/* One turn of a wait loop (AM lock held), or of an entry point that did
 * not wait (osc_newrma_am_call_leave: a program polling its window with
 * MPI_Win_sync is a wait loop too).  Our own transports first (in
 * table order: loopback, FIFOs, UCX) -- a packet being waited for is
 * served without a whole opal_progress turn, which also polls every other
 * part of MPI (with btl tcp: libevent's poll(), a system call per turn).
 * opal_progress still runs every few turns, busy or not, so the rest of MPI
 * keeps moving while newrma waits: every 16th turn (an off-node lock + op +
 * unlock over TCP came out a few hundredths of a round trip faster than
 * with every 4th in an A/B; docs/am-protocol.md, "Progress"), every 4th
 * when ranks outnumber cores, where opal_progress is also what gives the
 * core away. */
#define NEWRMA_OWN_POLLS_PER_PROGRESS 16
#define NEWRMA_OWN_POLLS_PER_PROGRESS_OVERSUBSCRIBED 4

void osc_newrma_am_progress_once(void)
{
    /* Every transport each turn: loopback packets never starve the rest (a
     * waiter whose self packets keep coming, a refused lock retried, still
     * needs remote progress).  With more ranks than cores opal_progress is
     * also what gives the core away (it yields when idle), to the receiver
     * that would make room in its queue or the sender we wait for. */
    (void) osc_newrma_transports_progress();
    proxies_retry();
    (void) osc_newrma_native_progress();     /* native locks waiting in line */
    if (0 != ++mca_osc_newrma_component.am_turns
                 % (opal_progress_yield_when_idle ? NEWRMA_OWN_POLLS_PER_PROGRESS_OVERSUBSCRIBED
                                                  : NEWRMA_OWN_POLLS_PER_PROGRESS)) {
        return;
    }
    osc_newrma_am_leave();
    opal_progress();
    osc_newrma_am_enter();
}

/* An entry point that did not wait polls the polled transports (loopback,
 * FIFOs: a few loads when idle) every call and takes a whole turn (UCX's
 * worker, whose progress costs several times a whole empty lock or flush,
 * and opal_progress every few turns) every NEWRMA_CALLS_PER_TURN calls: a
 * program polling its window with such calls is served within that many
 * calls, and a lone lock, unlock or flush does not pay a UCX progress. */
#define NEWRMA_CALLS_PER_TURN 8

void osc_newrma_am_call_poll(void)
{
    static unsigned int calls;      /* guarded by the AM lock */

    if (0 == ++calls % NEWRMA_CALLS_PER_TURN) {
        osc_newrma_am_progress_once();
    } else {
        (void) osc_newrma_transports_poll();
    }
}

/* Serve packets while the application computes outside MPI: every
 * transport, and the node-lock proxies that wait for their word.  Sleeps
 * on the transports' event descriptors (UCX's worker); polled transports
 * (FIFOs) and waiting proxies have none, so while there are such it sleeps
 * 1 ms at a time (5 ms otherwise, to notice it should stop). */
static void *progress_thread_main(opal_object_t *arg)
{
    (void) arg;
    for (;;) {
        struct pollfd fds[OSC_NEWRMA_TRANSPORTS_MAX];
        int ret, nfds = 0, timeout_ms;

        /* the stop flag and the transports' windows change under the AM
         * lock: both are read with it held */
        osc_newrma_am_enter();
        if (progress_thread.stop) {
            osc_newrma_am_leave();
            return NULL;
        }
        ret = osc_newrma_transports_progress() ? OMPI_ERR_WOULD_BLOCK : osc_newrma_transports_arm(fds, &nfds);
        proxies_retry();
        timeout_ms = osc_newrma_transports_polled_active() || osc_newrma_node_proxy_waiting() ? 1 : 5;
        osc_newrma_am_leave();
        if (OMPI_ERR_WOULD_BLOCK == ret) {
            continue;    /* work done or events pending: look again at once */
        }
        (void) poll(fds, (nfds_t) nfds, timeout_ms);
    }
}

/* AM lock held. */
static void progress_thread_start(void)
{
    if (progress_thread.running || !mca_osc_newrma_component.progress_thread) {
        return;
    }
    OBJ_CONSTRUCT(&progress_thread.thread, opal_thread_t);
    progress_thread.thread.t_run = progress_thread_main;
    progress_thread.running = true;
    progress_thread.stop = false;
    if (OPAL_SUCCESS != opal_thread_start(&progress_thread.thread)) {
        progress_thread.running = false;
        OBJ_DESTRUCT(&progress_thread.thread);
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "could not start the progress thread; progress only inside MPI calls");
        return;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "asynchronous progress thread started");
}

static void progress_thread_stop(void)
{
    if (progress_thread.running) {
        osc_newrma_am_enter();
        progress_thread.stop = true;
        osc_newrma_am_leave();
        progress_thread.running = false;
        (void) opal_thread_join(&progress_thread.thread, NULL);
        OBJ_DESTRUCT(&progress_thread.thread);
    }
}

/* Control packets and replies: the header (and a small payload, or a
 * buffer the caller allocated) live until the send is done. */
typedef struct {
    void *owned;
    ompi_osc_newrma_module_t *count_for;  /* count the operation once sent */
    int origin;
    int status;
    osc_newrma_am_hdr_t hdr;
    char data[];
} control_t;

static void control_sent(void *arg, int status)
{
    control_t *control = arg;

    if (NULL != control->count_for) {
        operation_counted(control->count_for, control->origin,
                          OMPI_SUCCESS != control->status ? control->status : status);
    }
    free(control->owned);
    free(control);
}

/* Send hdr + payload; `owned` (malloc'd payload, or NULL) is freed once
 * sent, any other payload is copied unless `borrow` (window memory: the
 * operation it answers is counted only once the send is done, see
 * send_borrowed). */
static int send_copy(ompi_osc_newrma_module_t *module, int peer, const osc_newrma_am_hdr_t *hdr,
                     const void *payload, size_t len, void *owned, bool borrow)
{
    bool copy_payload = NULL == owned && !borrow && len > 0;
    control_t *control = malloc(sizeof(*control) + (copy_payload ? len : 0));
    int ret;

    if (NULL == control) {
        free(owned);
        if (borrow) {
            operation_counted(module, peer, OMPI_ERR_OUT_OF_RESOURCE);
        }
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    control->owned = owned;
    control->count_for = borrow ? module : NULL;
    control->origin = peer;
    control->status = hdr->status;
    control->hdr = *hdr;
    if (copy_payload) {
        memcpy(control->data, payload, len);
        payload = control->data;
    }
    ret = osc_newrma_am_send(module, peer, &control->hdr, payload, len, control_sent, control);
    if (0 != ret) {
        control_sent(control, ret < 0 ? ret : OMPI_SUCCESS);
    }
    return ret < 0 ? ret : OMPI_SUCCESS;
}

int osc_newrma_am_send_control(ompi_osc_newrma_module_t *module, int peer, const osc_newrma_am_hdr_t *hdr,
                               const void *payload, size_t len)
{
    return send_copy(module, peer, hdr, payload, len, NULL, false);
}

static osc_newrma_am_hdr_t reply_header(ompi_osc_newrma_module_t *module, uint8_t kind,
                                        const osc_newrma_am_hdr_t *request)
{
    osc_newrma_am_hdr_t hdr = {
        .kind = kind,
        .sender = module->rank,
        .win = module->am_id,
        .cookie = NULL != request ? request->cookie : 0,
    };
    return hdr;
}

static bool is_operation(uint8_t kind)
{
    return NEWRMA_PKT_PUT == kind || NEWRMA_PKT_GET == kind || NEWRMA_PKT_ACC == kind
        || NEWRMA_PKT_GET_ACC == kind || NEWRMA_PKT_CAS == kind;
}

static bool is_fetching(uint8_t kind)
{
    return NEWRMA_PKT_GET == kind || NEWRMA_PKT_GET_ACC == kind || NEWRMA_PKT_CAS == kind;
}

/* ------------------------------------------------------------------ */
/* origins with work in flight                                         */
/* ------------------------------------------------------------------ */

static origin_state_t *origin_state(ompi_osc_newrma_module_t *module, int origin)
{
    void *value = NULL;

    if (OPAL_SUCCESS == opal_hash_table_get_value_uint32(&module->am_origins, (uint32_t) origin, &value)) {
        return value;
    }
    value = calloc(1, sizeof(origin_state_t));
    if (NULL != value) {
        opal_hash_table_set_value_uint32(&module->am_origins, (uint32_t) origin, value);
    }
    return value;
}

/* Forget an origin that has nothing in flight (keeps the table small). */
static void origin_state_trim(ompi_osc_newrma_module_t *module, int origin, origin_state_t *st)
{
    if (0 == st->processed && 0 == st->sync_flags && 0 == st->lock_held && OMPI_SUCCESS == st->status
        && NULL == st->held_head) {
        opal_hash_table_remove_value_uint32(&module->am_origins, (uint32_t) origin);
        free(st);
    }
}

/* ------------------------------------------------------------------ */
/* the lock queue                                                      */
/* ------------------------------------------------------------------ */

/* Free for `lock` here, and on the node: the node lock's proxy holds it
 * in that mode or takes it now (osc_newrma_node_lock.h; `queued`: a
 * refused request waits in the queue, and progress tries again). */
static bool lock_free_for(ompi_osc_newrma_module_t *module, uint8_t lock, bool queued)
{
    bool exclusive = NEWRMA_PF_LOCK_EXCL == lock;

    return (exclusive ? !module->am_lock_excl && 0 == module->am_lock_shared : !module->am_lock_excl)
           && osc_newrma_node_proxy_take(module, exclusive, queued);
}

static void lock_take(ompi_osc_newrma_module_t *module, origin_state_t *st, uint8_t lock)
{
    if (NEWRMA_PF_LOCK_EXCL == lock) {
        module->am_lock_excl = true;
    } else {
        module->am_lock_shared++;
    }
    st->lock_held = lock;
}

/* The lock is ours for `origin`: run the operation that came with the
 * request, or tell the origin. */
static void lock_granted(ompi_osc_newrma_module_t *module, int origin, osc_newrma_am_hdr_t *packet, size_t len)
{
    if (NULL != packet) {
        execute_operation(module, packet, (char *) (packet + 1), len);
        return;
    }
    osc_newrma_am_hdr_t grant = reply_header(module, NEWRMA_PKT_GRANT, NULL);
    (void) osc_newrma_am_send_control(module, origin, &grant, NULL, 0);
}

/* A request: granted at once if nobody waits before it and the lock is
 * free for it, else queued.  Returns true if granted now. */
static bool lock_request(ompi_osc_newrma_module_t *module, int origin, uint8_t lock,
                         const osc_newrma_am_hdr_t *packet, const void *data, size_t len)
{
    origin_state_t *st = origin_state(module, origin);
    lock_waiter_t *waiter;

    if (opal_list_is_empty(&module->am_lock_waiters) && lock_free_for(module, lock, true)) {
        lock_take(module, st, lock);
        return true;
    }
    waiter = OBJ_NEW(lock_waiter_t);
    waiter->origin = origin;
    waiter->lock = lock;
    waiter->len = len;
    waiter->packet = NULL;
    if (NULL != packet) {
        waiter->packet = malloc(sizeof(*packet) + len);
        *waiter->packet = *packet;
        if (len > 0) {
            memcpy(waiter->packet + 1, data, len);
        }
    }
    opal_list_append(&module->am_lock_waiters, &waiter->super);
    return false;
}

/* Grant from the head of the queue: a run of shared requests together,
 * or one exclusive one. */
static void lock_grant_waiters(ompi_osc_newrma_module_t *module)
{
    lock_waiter_t *waiter;

    while (NULL != (waiter = (lock_waiter_t *) opal_list_get_first(&module->am_lock_waiters))
           && &waiter->super != opal_list_get_end(&module->am_lock_waiters)
           && lock_free_for(module, waiter->lock, true)) {
        opal_list_remove_first(&module->am_lock_waiters);
        lock_take(module, origin_state(module, waiter->origin), waiter->lock);
        lock_granted(module, waiter->origin, waiter->packet, waiter->len);
        free(waiter->packet);
        OBJ_RELEASE(waiter);
    }
}

/* Release (the last holder also gives the node lock back), then grant. */
static void lock_release(ompi_osc_newrma_module_t *module, origin_state_t *st)
{
    if (NEWRMA_PF_LOCK_EXCL == st->lock_held) {
        module->am_lock_excl = false;
    } else if (NEWRMA_PF_LOCK_SHARED == st->lock_held) {
        module->am_lock_shared--;
    }
    st->lock_held = 0;
    if (!module->am_lock_excl && 0 == module->am_lock_shared) {
        osc_newrma_node_proxy_give(module);
    }
    lock_grant_waiters(module);
}

/* The windows whose node-lock proxy waits for the node lock, from
 * progress (AM lock held): their queue's head may be grantable now. */
static void proxies_retry(void)
{
    opal_hash_table_t *windows = &mca_osc_newrma_component.am_windows;
    uint32_t key;
    void *value, *node = NULL;
    int ret;

    if (!osc_newrma_node_proxy_waiting()) {
        return;     /* every progress turn comes here: no walk of the windows then */
    }
    ret = opal_hash_table_get_first_key_uint32(windows, &key, &value, &node);
    while (OPAL_SUCCESS == ret && osc_newrma_node_proxy_waiting()) {
        if (osc_newrma_node_proxy_waits(value)) {
            lock_grant_waiters(value);
        }
        ret = opal_hash_table_get_next_key_uint32(windows, &key, &value, node, &node);
    }
}

/* ------------------------------------------------------------------ */
/* segments: counting operations against synchronizations             */
/* ------------------------------------------------------------------ */

static void segment_sync(origin_state_t *st, const osc_newrma_am_hdr_t *hdr)
{
    st->expected = hdr->count;
    st->sync_flags = hdr->flags & NEWRMA_PF_SYNC;
}

/* If the segment is complete, act on its synchronization.  `reply` (a
 * reply about to go to the origin, or NULL) carries the acknowledgement
 * when there is one. */
static void segment_check(ompi_osc_newrma_module_t *module, int origin, origin_state_t *st,
                          osc_newrma_am_hdr_t *reply)
{
    uint8_t flags = st->sync_flags;
    int status = st->status;

    if (0 == flags || st->processed < st->expected) {
        return;    /* no synchronization yet, or operations still to come */
    }
    st->processed -= st->expected;
    st->expected = 0;
    st->sync_flags = 0;
    st->status = OMPI_SUCCESS;
    if (flags & NEWRMA_PF_DONE) {
        module->am_dones++;
    }
    if (flags & (NEWRMA_PF_UNLOCK | NEWRMA_PF_FLUSH)) {
        if (NULL != reply) {
            reply->flags |= NEWRMA_PF_ACK;
            if (OMPI_SUCCESS == reply->status) {
                reply->status = status;
            }
        } else {
            osc_newrma_am_hdr_t ack = reply_header(module, NEWRMA_PKT_ACK, NULL);
            ack.status = status;
            (void) osc_newrma_am_send_control(module, origin, &ack, NULL, 0);
        }
    }
    if (flags & NEWRMA_PF_UNLOCK) {
        lock_release(module, st);
    }
    origin_state_trim(module, origin, st);
}

/* ------------------------------------------------------------------ */
/* applying operations                                                 */
/* ------------------------------------------------------------------ */

/* Where the operation's target bytes are here, range checked. */
static int target_address(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr,
                          const osc_newrma_layout_t *layout, char **addr)
{
    ptrdiff_t offset = 0;
    int ret;

    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        *addr = (char *) (uintptr_t) hdr->disp;
        if (layout->overflows) {
            return OMPI_ERR_RMA_RANGE;
        }
        return osc_newrma_dyn_check_range(module, module->rank, (uint64_t) hdr->disp + (uint64_t) layout->gap,
                                          layout->span);
    }
    ret = osc_newrma_window_offset(hdr->disp, module->am_disp_unit, module->am_size, layout, &offset);
    *addr = module->am_base + (OMPI_SUCCESS == ret ? offset : 0);
    return ret;
}

/* What an operation's payload must hold: never trust a packet's lengths. */
static bool payload_fits(const osc_newrma_am_hdr_t *hdr, size_t bytes, size_t len)
{
    switch (hdr->kind) {
    case NEWRMA_PKT_PUT:
        return len == bytes;
    case NEWRMA_PKT_ACC:
    case NEWRMA_PKT_GET_ACC:
        return len == bytes || (0 == len && ompi_mpi_op_no_op.op.o_f_to_c_index == hdr->op);
    case NEWRMA_PKT_CAS:
        return len == 2 * bytes;
    default:
        return 0 == len;
    }
}

/* Replies at least this big travel straight from window memory: a copy
 * would cost more than waiting for the send to finish. */
#define NEWRMA_BORROW_MIN 8192

/* One more operation of the origin's segment is done. */
static void count_operation(ompi_osc_newrma_module_t *module, int origin, origin_state_t *st, int status,
                            osc_newrma_am_hdr_t *reply)
{
    if (OMPI_SUCCESS != status && OMPI_SUCCESS == st->status) {
        st->status = status;
    }
    st->processed++;
    segment_check(module, origin, st, reply);
}

static void operation_counted(ompi_osc_newrma_module_t *module, int origin, int status)
{
    count_operation(module, origin, origin_state(module, origin), status, NULL);
}

/* Count the operation, then answer it if it fetches (the answer may carry
 * the acknowledgement of the synchronization it completes).  A reply that
 * borrows window memory is the exception: its operation counts only once
 * the memory has been read, so no synchronization it completes lets the
 * window change under the send (a transport may read a large payload
 * late: until the send is done). */
static void operation_done(ompi_osc_newrma_module_t *module, int origin, origin_state_t *st, bool fetching,
                           osc_newrma_am_hdr_t *reply, int ret, const char *out, size_t n, void *out_owned)
{
    reply->status = ret;
    if (fetching && NULL == out_owned && n >= NEWRMA_BORROW_MIN) {
        (void) send_copy(module, origin, reply, out, n, NULL, true);
        return;
    }
    if (fetching && NULL == out_owned && n > 0 && (st->sync_flags & NEWRMA_PF_UNLOCK)
        && NULL != (out_owned = malloc(n))) {
        /* the count may complete the segment and release the lock: the
         * next holder (a node-local origin taking the node lock, a queued
         * operation applied at once) may then write these bytes of window
         * memory before the reply would copy them */
        memcpy(out_owned, out, n);
        out = out_owned;
    }
    count_operation(module, origin, st, ret, fetching ? reply : NULL);
    if (fetching) {
        (void) send_copy(module, origin, reply, out, n, out_owned, false);
    }
}

/* On a window with a node route, the accumulate stripes covering an
 * operation's bytes of our memory: packets are applied under the locks
 * the node's processes take for their accumulates by loads and stores. */
typedef struct {
    unsigned int first, count;
} node_stripes_t;

static void node_stripes_lock(ompi_osc_newrma_module_t *module, const char *addr, const osc_newrma_layout_t *tl,
                              node_stripes_t *held)
{
    held->count = 0;
    if (NULL != module->am_node) {
        osc_newrma_node_route_acc_lock(module->am_node, osc_newrma_node_route_peer(module->am_node, module->rank),
                                       module->acc_shift, (uint64_t) (addr + tl->gap - module->am_base), tl->span,
                                       &held->first, &held->count);
    }
}

static void node_stripes_unlock(ompi_osc_newrma_module_t *module, const node_stripes_t *held)
{
    if (0 != held->count) {
        osc_newrma_node_route_acc_unlock(module->am_node, osc_newrma_node_route_peer(module->am_node, module->rank),
                                         held->first, held->count);
    }
}

/* A notified operation's data is in (or, a get, out of) window memory:
 * its counter, with release order -- the target's acquire load of it then
 * sees the data.  Atomic: the application thread may set it meanwhile. */
static int notification_apply(ompi_osc_newrma_module_t *module, uint32_t idx)
{
    if (NULL == module->notify_counters || idx >= (uint32_t) module->notify_count) {
        return MPI_ERR_ARG;      /* no counters attached here: reported with the synchronization */
    }
    osc_newrma_fetch_add_release(&module->notify_counters[idx], 1);
    return OMPI_SUCCESS;
}

/* The target side of an operation: datatype (described in the payload, or
 * `tcount` contiguous bytes at disp x disp_unit + gap), address, then the
 * operation itself.  Replies carry the old data of fetching operations. */
static void execute_operation(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr,
                              char *data, size_t len)
{
    int origin = hdr->sender;
    origin_state_t *st = origin_state(module, origin);
    struct ompi_datatype_t *tdt = &ompi_mpi_byte.dt;
    int tcount = hdr->tcount;
    osc_newrma_am_hdr_t reply = reply_header(module, NEWRMA_PKT_REPLY, hdr);
    bool fetching = is_fetching(hdr->kind);
    osc_newrma_layout_t tl;
    node_stripes_t stripes;
    char *addr = NULL, *out = NULL;
    void *out_owned = NULL;
    int ret = OMPI_SUCCESS;

    if (hdr->flags & NEWRMA_PF_SYNC) {
        segment_sync(st, hdr);
    }
    if (hdr->flags & NEWRMA_PF_TDESC) {
        void *desc = data;
        tdt = ompi_osc_base_datatype_create(ompi_comm_peer_lookup(module->comm, origin), &desc);
        data += hdr->desc_len;
        len -= hdr->desc_len;
        if (NULL == tdt) {
            ret = MPI_ERR_TYPE;
            tdt = &ompi_mpi_byte.dt;
        }
    }
    osc_newrma_datatype_layout(tdt, tcount, &tl);
    if (OMPI_SUCCESS == ret && !(hdr->flags & NEWRMA_PF_TDESC)) {
        tl.gap = hdr->gap;
    }
    if (OMPI_SUCCESS == ret && !payload_fits(hdr, tl.bytes, len)) {
        ret = OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS == ret) {
        ret = target_address(module, hdr, &tl, &addr);
    }
    if (OMPI_SUCCESS == ret && fetching && tl.bytes > 0) {
        /* a contiguous get replies straight from window memory -- unless
         * it notifies: the target may change its memory once it sees the
         * count, so the data is copied out first */
        if (NEWRMA_PKT_GET == hdr->kind && tl.contiguous && 0 == hdr->notify) {
            out = addr + tl.gap;
        } else if (NULL == (out = out_owned = malloc(tl.bytes))) {
            ret = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OMPI_SUCCESS == ret && tl.bytes > 0) {
        switch (hdr->kind) {
        case NEWRMA_PKT_PUT:
            if (tl.contiguous) {
                memcpy(addr + tl.gap, data, tl.bytes);
            } else {
                ret = ompi_datatype_sndrcv(data, (int32_t) tl.bytes, &ompi_mpi_packed.dt, addr, tcount, tdt);
            }
            break;
        case NEWRMA_PKT_GET:
            if (0 != hdr->notify && tl.contiguous) {
                memcpy(out, addr + tl.gap, tl.bytes);
            } else if (!tl.contiguous) {
                ret = ompi_datatype_sndrcv(addr, tcount, tdt, out, (int32_t) tl.bytes, &ompi_mpi_packed.dt);
            }
            break;
        case NEWRMA_PKT_ACC:
        case NEWRMA_PKT_GET_ACC: {
            ompi_op_t *op = ompi_osc_base_op_create(hdr->op);
            node_stripes_lock(module, addr, &tl, &stripes);
            /* on a native window, what the native route does atomically is
             * done atomically here too (osc_newrma_native_rma.h) */
            if (!osc_newrma_native_acc_apply(module, addr, tcount, tdt, &tl, len > 0 ? data : NULL, op, out, &ret)) {
                ret = osc_newrma_acc_apply_packed(addr, tcount, tdt, len > 0 ? data : NULL, tl.bytes, op, out);
            }
            node_stripes_unlock(module, &stripes);
            OBJ_RELEASE(op);
            break;
        }
        case NEWRMA_PKT_CAS:
            /* payload: new value, then the value to compare with */
            if (osc_newrma_native_cas_apply(module, addr + tl.gap, tl.bytes, data, data + tl.bytes, out)) {
                break;
            }
            node_stripes_lock(module, addr, &tl, &stripes);
            memcpy(out, addr + tl.gap, tl.bytes);
            if (0 == memcmp(out, data + tl.bytes, tl.bytes)) {
                memcpy(addr + tl.gap, data, tl.bytes);
            }
            node_stripes_unlock(module, &stripes);
            break;
        default:
            ret = OMPI_ERR_BAD_PARAM;
        }
    }
    if (hdr->flags & NEWRMA_PF_TDESC) {
        OMPI_DATATYPE_RELEASE(tdt);
    }
    if (OMPI_SUCCESS == ret && 0 != hdr->notify) {
        ret = notification_apply(module, hdr->notify - 1);
    }
    operation_done(module, origin, st, fetching, &reply, ret, out, OMPI_SUCCESS == ret ? tl.bytes : 0, out_owned);
}

/* An operation that could not even be looked at (its payload never came):
 * counted like any other, its error reported with the synchronization. */
static void operation_lost(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr, int status)
{
    origin_state_t *st = origin_state(module, hdr->sender);
    osc_newrma_am_hdr_t reply = reply_header(module, NEWRMA_PKT_REPLY, hdr);

    if (hdr->flags & NEWRMA_PF_SYNC) {
        segment_sync(st, hdr);
    }
    operation_done(module, hdr->sender, st, is_fetching(hdr->kind), &reply, status, NULL, 0, NULL);
}

/* An operation packet: lock first if it asks for it (single-op packet),
 * else run it. */
static void operation_arrived(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr,
                              char *data, size_t len)
{
    uint8_t lock = hdr->flags & NEWRMA_PF_LOCK;

    if (0 != lock && !lock_request(module, hdr->sender, lock, hdr, data, len)) {
        return;    /* queued with its payload: runs when granted */
    }
    execute_operation(module, hdr, data, len);
}

/* A LOCK packet: queued until granted -- or, when only tried, granted now
 * or refused (a GRANT carrying an error). */
static void lock_arrived(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr)
{
    uint8_t lock = hdr->flags & NEWRMA_PF_LOCK;

    if (hdr->flags & NEWRMA_PF_TRY) {
        if (opal_list_is_empty(&module->am_lock_waiters) && lock_free_for(module, lock, false)) {
            lock_take(module, origin_state(module, hdr->sender), lock);
            lock_granted(module, hdr->sender, NULL, 0);
        } else {
            osc_newrma_am_hdr_t refusal = reply_header(module, NEWRMA_PKT_GRANT, NULL);
            refusal.status = OMPI_ERR_WOULD_BLOCK;
            (void) osc_newrma_am_send_control(module, hdr->sender, &refusal, NULL, 0);
        }
        return;
    }
    if (lock_request(module, hdr->sender, lock, NULL, NULL, 0)) {
        lock_granted(module, hdr->sender, NULL, 0);
    }
}

static void sync_arrived(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr)
{
    origin_state_t *st = origin_state(module, hdr->sender);

    segment_sync(st, hdr);
    segment_check(module, hdr->sender, st, NULL);
}

static void info_requested(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr)
{
    osc_newrma_am_hdr_t reply = reply_header(module, NEWRMA_PKT_INFO_REPLY, hdr);

    reply.disp = module->am_disp_unit;
    reply.gap = (int64_t) module->am_size;
    /* a dynamic window's answer is its table of attached regions */
    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        (void) osc_newrma_am_send_control(module, hdr->sender, &reply, module->dyn.regions,
                                          module->dyn.count * sizeof(osc_newrma_region_t));
        return;
    }
    (void) osc_newrma_am_send_control(module, hdr->sender, &reply, NULL, 0);
}

static void info_arrived(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr, const void *data,
                         size_t len)
{
    module->am_info_replies++;
    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        (void) osc_newrma_dyn_cache_store(module, hdr->sender, data, len / sizeof(osc_newrma_region_t));
        return;
    }
    osc_newrma_peer_cache_t *entry = &module->am_peers[(unsigned int) hdr->sender % mca_osc_newrma_component.peer_cache];

    entry->disp_unit = (int) hdr->disp;
    entry->size = (uint64_t) hdr->gap;
    entry->rank = hdr->sender;
}

/* ------------------------------------------------------------------ */
/* dispatch                                                            */
/* ------------------------------------------------------------------ */

static void dispatch(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr, void *data, size_t len)
{
    switch (hdr->kind) {
    case NEWRMA_PKT_LOCK:
        lock_arrived(module, hdr);
        break;
    case NEWRMA_PKT_SYNC:
        sync_arrived(module, hdr);
        break;
    case NEWRMA_PKT_INFO:
        info_requested(module, hdr);
        break;
    case NEWRMA_PKT_INFO_REPLY:
        info_arrived(module, hdr, data, len);
        break;
    case NEWRMA_PKT_POST:
        osc_newrma_am_post_arrived(module, hdr->sender);
        break;
    case NEWRMA_PKT_GRANT:
        if (module->am_lock_all_window) {
            /* lock_all's window protocol: granted, or a tried lock refused */
            ++*(OMPI_SUCCESS == hdr->status ? &module->am_window_answers : &module->am_window_refusals);
        } else if (OMPI_SUCCESS == hdr->status) {
            osc_newrma_am_granted(module, osc_newrma_target_find(module, hdr->sender));
        } else {
            osc_newrma_am_refused(module, osc_newrma_target_find(module, hdr->sender));
        }
        break;
    case NEWRMA_PKT_ACK:
        osc_newrma_am_ack_arrived(module, hdr);
        break;
    case NEWRMA_PKT_REPLY:
        osc_newrma_am_reply_arrived(hdr, data, len, NULL);
        break;
    default:
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "dropped a packet of unknown kind %d", hdr->kind);
    }
}

/* Run the operations at the head of the origin's held queue whose payload
 * is in.  The ready ones are unlinked first: running one may forget the
 * origin's state once its queue is empty. */
static void held_run(ompi_osc_newrma_module_t *module, origin_state_t *st)
{
    held_op_t *ready = st->held_head, *last = NULL;

    while (NULL != st->held_head && st->held_head->ready) {
        last = st->held_head;
        st->held_head = last->next;
    }
    if (NULL == last) {
        return;
    }
    last->next = NULL;
    if (NULL == st->held_head) {
        st->held_tail = NULL;
    }
    while (NULL != ready) {
        held_op_t *op = ready;
        ready = op->next;
        if (OMPI_SUCCESS == op->status) {
            operation_arrived(module, &op->hdr, op->data, op->len);
        } else {
            operation_lost(module, &op->hdr, op->status);
        }
        free(op);
    }
}

static void held_payload_arrived(void *arg, int status)
{
    held_op_t *op = arg;
    origin_state_t *st = origin_state(op->module, op->hdr.sender);

    op->ready = true;
    op->status = status;
    held_run(op->module, st);
}

static void control_payload_arrived(void *arg, int status)
{
    held_op_t *packet = arg;

    if (OMPI_SUCCESS == status) {
        dispatch(packet->module, &packet->hdr, packet->data, packet->len);
    }
    free(packet);
}

/* A control packet too big to come eagerly (a dynamic window's region
 * table): dispatched once its payload is in. */
static void control_receive_large(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr, size_t len,
                                  const osc_newrma_large_payload_t *large)
{
    held_op_t *packet = malloc(sizeof(*packet) + len);

    if (NULL == packet) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "dropped a control packet: out of memory");
        return;
    }
    *packet = (held_op_t) { .module = module, .hdr = *hdr, .len = len };
    if (OMPI_SUCCESS != osc_newrma_transport_fetch(large, packet->data, len, control_payload_arrived, packet)) {
        free(packet);
    }
}

/* A large contiguous put lands straight in window memory.  It need not
 * keep its place behind earlier operations: MPI orders accumulates only,
 * and a put conflicting with another access of the same epoch is
 * erroneous. */
typedef struct {
    ompi_osc_newrma_module_t *module;
    int origin;
} landing_t;

static void put_landed(void *arg, int status)
{
    landing_t *landing = arg;

    operation_counted(landing->module, landing->origin, status);
    free(landing);
}

static bool put_in_place(ompi_osc_newrma_module_t *module, origin_state_t *st, const osc_newrma_am_hdr_t *hdr,
                         size_t len, const osc_newrma_large_payload_t *large)
{
    osc_newrma_layout_t tl;
    landing_t *landing;
    char *addr;

    if (NEWRMA_PKT_PUT != hdr->kind || (hdr->flags & (NEWRMA_PF_TDESC | NEWRMA_PF_LOCK)) || 0 != hdr->notify) {
        return false;      /* a notified put counts once its data is in: execute_operation */
    }
    osc_newrma_datatype_layout(&ompi_mpi_byte.dt, hdr->tcount, &tl);
    tl.gap = hdr->gap;
    if (len != tl.bytes || OMPI_SUCCESS != target_address(module, hdr, &tl, &addr)
        || NULL == (landing = malloc(sizeof(*landing)))) {
        return false;     /* the general path reports what is wrong */
    }
    *landing = (landing_t) { .module = module, .origin = hdr->sender };
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_MAX, "put of %zu bytes from %d lands in place", len, hdr->sender);
    if (hdr->flags & NEWRMA_PF_SYNC) {
        segment_sync(st, hdr);
    }
    if (OMPI_SUCCESS != osc_newrma_transport_fetch(large, addr + tl.gap, len, put_landed, landing)) {
        put_landed(landing, OMPI_ERROR);
    }
    return true;
}

/* An operation packet, its payload here (data) or still to be fetched
 * (large): it runs now unless it has to keep its place behind an earlier
 * one. */
static void operation_received(ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr, void *data,
                               size_t len, const osc_newrma_large_payload_t *large)
{
    origin_state_t *st = origin_state(module, hdr->sender);
    held_op_t *op;

    if (NULL == large && NULL == st->held_head) {
        operation_arrived(module, hdr, data, len);
        return;
    }
    if (NULL != large && put_in_place(module, st, hdr, len, large)) {
        return;
    }
    op = malloc(sizeof(*op) + len);
    if (NULL == op) {
        operation_lost(module, hdr, OMPI_ERR_OUT_OF_RESOURCE);
        return;
    }
    *op = (held_op_t) { .module = module, .hdr = *hdr, .ready = NULL == large, .status = OMPI_SUCCESS, .len = len };
    if (NULL != st->held_tail) {
        st->held_tail->next = op;
    } else {
        st->held_head = op;
    }
    st->held_tail = op;
    if (NULL == large) {
        memcpy(op->data, data, len);
        return;     /* behind an operation whose payload is still coming */
    }
    if (OMPI_SUCCESS != osc_newrma_transport_fetch(large, op->data, len, held_payload_arrived, op)) {
        held_payload_arrived(op, OMPI_ERROR);
    }
}

void osc_newrma_am_receive(const void *header, size_t header_len, void *data, size_t len,
                           const osc_newrma_large_payload_t *large)
{
    const osc_newrma_am_hdr_t *hdr = header;
    void *module;

    if (header_len < sizeof(*hdr)) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "dropped a packet with a header of %zu bytes", header_len);
        return;
    }
    if (OPAL_SUCCESS != opal_hash_table_get_value_uint32(&mca_osc_newrma_component.am_windows, hdr->win, &module)) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "dropped a packet for an unknown window (id %u, kind %d, sender %d)",
                       (unsigned int) hdr->win, hdr->kind, hdr->sender);
        return;
    }
    if (is_operation(hdr->kind)) {
        operation_received(module, hdr, data, len, large);
    } else if (NULL == large) {
        dispatch(module, hdr, data, len);
    } else if (NEWRMA_PKT_REPLY == hdr->kind) {
        osc_newrma_am_reply_arrived(hdr, NULL, len, large);
    } else {
        control_receive_large(module, hdr, len, large);
    }
}

/* ------------------------------------------------------------------ */
/* window life cycle                                                   */
/* ------------------------------------------------------------------ */

static bool am_progress_registered;

/* Allocate windows: the node route's memory (one segment over the node's
 * processes of the window), or ours when every peer must look remote
 * (osc_newrma_force_remote): mapped for UCX where the native route may
 * take it, else from the heap. */
static int window_memory_init(ompi_osc_newrma_module_t *module, size_t size, int disp_unit, void **base)
{
    int ret = osc_newrma_node_route_init(module, size, disp_unit, base);

    if (OMPI_SUCCESS == ret && NULL == module->am_node && OMPI_SUCCESS == osc_newrma_native_memory(module, size, base)) {
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS == ret && NULL == module->am_node && size > 0) {
        if (0 != posix_memalign(&module->am_owned, module->memory_alignment, size)) {
            module->am_owned = NULL;
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        *base = module->am_owned;
    }
    return ret;
}

/* Collective: our own failure, or OMPI_ERR_OUT_OF_RESOURCE where another
 * process of the window failed (its segment or memory). */
static int window_agree_success(ompi_osc_newrma_module_t *module, int ret)
{
    int ok = OMPI_SUCCESS == ret, all_ok = 0;
    int r = module->comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, module->comm,
                                                 module->comm->c_coll->coll_allreduce_module);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    return OMPI_SUCCESS != r ? r : all_ok ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

int osc_newrma_am_window_init(ompi_osc_newrma_module_t *module, void **base, size_t size, int disp_unit)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    int ret;

    module->am_size = MPI_WIN_FLAVOR_DYNAMIC == module->flavor ? 0 : size;
    module->am_disp_unit = disp_unit;
    OBJ_CONSTRUCT(&module->am_lock_waiters, opal_list_t);
    OBJ_CONSTRUCT(&module->am_origins, opal_hash_table_t);
    ret = opal_hash_table_init(&module->am_origins, 16);
    if (OPAL_SUCCESS != ret) {
        return ret;
    }
    module->am_peers = malloc(sizeof(osc_newrma_peer_cache_t) * c->peer_cache);
    if (NULL == module->am_peers) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (unsigned int i = 0 ; i < c->peer_cache ; ++i) {
        module->am_peers[i].rank = -1;
    }
    ret = osc_newrma_am_pools_init(module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    ret = osc_newrma_transports_window_init(module);
    if (OMPI_SUCCESS == ret && MPI_WIN_FLAVOR_ALLOCATE == module->flavor) {
        ret = window_memory_init(module, size, disp_unit, base);
    }
    /* a node's segments fail alike on the node, but not on the other
     * nodes: every process of the window fails if one does */
    ret = window_agree_success(module, ret);
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_node_route_leaders_init(module);
    }
    if (OMPI_SUCCESS == ret) {
        osc_newrma_mixed_init(module);
    }
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    module->am_base = MPI_WIN_FLAVOR_DYNAMIC == module->flavor ? NULL : *base;
    osc_newrma_am_enter();
    if (!am_progress_registered) {
        opal_progress_register(am_progress);
        am_progress_registered = true;
    }
    progress_thread_start();
    osc_newrma_am_leave();
    /* connect the transports that reach the peers the earlier ones do not
     * (UCX for the peers off the node's FIFOs).  Collective; every rank
     * agrees without asking: either the window is all on one node (each
     * rank's FIFOs reach every peer) or it spans nodes (nobody's do) */
    ret = osc_newrma_transports_window_connect(module);
    /* the same on every process: an MCA value of group scope and the flavor */
    if (OMPI_SUCCESS == ret && c->native_rma && MPI_WIN_FLAVOR_ALLOCATE == module->flavor) {
        ret = osc_newrma_native_window_init(module);
    }
    return ret;
}

/* Window ids (osc_newrma_am.h).  The id must be unique among this process's
 * live windows: a packet names its window by it alone.  The largest
 * proposal is not below any process's next_window_id, so it is free on
 * every process unless another thread of one of them created a window
 * meanwhile (MPI_THREAD_MULTIPLE, another communicator) that took the same
 * id: that process cannot register it, every process hears so in the
 * reduction, releases it and they agree on a larger one (each process that
 * saw the id has moved its next_window_id past it).  The first reduction is
 * all it takes otherwise. */
uint32_t osc_newrma_am_window_id_propose(void)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    uint32_t id;
    void *held;

    osc_newrma_am_enter();
    id = c->next_window_id;
    while (OPAL_SUCCESS == opal_hash_table_get_value_uint32(&c->am_windows, id, &held)) {
        ++id;
    }
    osc_newrma_am_leave();
    return id;
}

/* Take `id` for the window unless a live window of this process holds it. */
static bool window_id_claim(ompi_osc_newrma_module_t *module, uint32_t id)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    void *held;
    bool free_here;

    osc_newrma_am_enter();
    /* ids agreed on from here on are larger (modulo 2^32) */
    if ((int32_t) (id + 1 - c->next_window_id) > 0) {
        c->next_window_id = id + 1;
    }
    free_here = OPAL_SUCCESS != opal_hash_table_get_value_uint32(&c->am_windows, id, &held);
    if (free_here) {
        opal_hash_table_set_value_uint32(&c->am_windows, id, module);
        module->am_id = id;
        module->am_registered = true;
    }
    osc_newrma_am_leave();
    return free_here;
}

static void window_id_release(ompi_osc_newrma_module_t *module)
{
    osc_newrma_am_enter();
    if (module->am_registered) {
        opal_hash_table_remove_value_uint32(&mca_osc_newrma_component.am_windows, module->am_id);
        module->am_registered = false;
    }
    osc_newrma_am_leave();
}

int osc_newrma_am_window_id_agree(ompi_osc_newrma_module_t *module, uint32_t id)
{
    struct ompi_communicator_t *comm = module->comm;
    int ret;

    for (;;) {
        int mine = window_id_claim(module, id), all = 0;
        uint32_t next;

        ret = comm->c_coll->coll_allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm, comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS != ret || all) {
            return ret;
        }
        window_id_release(module);
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "rank %d: window id %u taken on some process, agreeing on another",
                       module->rank, (unsigned int) id);
        next = osc_newrma_am_window_id_propose();
        ret = comm->c_coll->coll_allreduce(&next, &id, 1, MPI_UINT32_T, MPI_MAX, comm,
                                           comm->c_coll->coll_allreduce_module);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
    }
}

int osc_newrma_am_window_quiesce(ompi_osc_newrma_module_t *module)
{
    return osc_newrma_transports_window_quiesce(module);
}

void osc_newrma_am_window_fini(ompi_osc_newrma_module_t *module)
{
    lock_waiter_t *waiter;
    uint32_t key;
    void *value, *node = NULL;

    if (NULL == module->am_peers) {
        return;    /* never got that far */
    }
    osc_newrma_transports_window_fini(module);
    window_id_release(module);
    osc_newrma_am_pools_fini(module);
    while (NULL != (waiter = (lock_waiter_t *) opal_list_remove_first(&module->am_lock_waiters))) {
        free(waiter->packet);
        OBJ_RELEASE(waiter);
    }
    OBJ_DESTRUCT(&module->am_lock_waiters);
    if (OPAL_SUCCESS == opal_hash_table_get_first_key_uint32(&module->am_origins, &key, &value, &node)) {
        do {
            free(value);
        } while (OPAL_SUCCESS == opal_hash_table_get_next_key_uint32(&module->am_origins, &key, &value, node, &node));
    }
    OBJ_DESTRUCT(&module->am_origins);
    free(module->am_peers);
    module->am_peers = NULL;
    free(module->am_owned);
    module->am_owned = NULL;
    osc_newrma_native_window_fini(module);
    osc_newrma_node_route_fini(module);
}

void osc_newrma_am_fini(void)
{
    progress_thread_stop();
    if (am_progress_registered) {
        opal_progress_unregister(am_progress);
        am_progress_registered = false;
    }
    osc_newrma_transports_fini();
}
