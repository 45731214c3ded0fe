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
 * osc/newrma: the native route -- UCX RMA and atomics to peers whose memory
 * UCX reaches without their CPU (what and why: osc_newrma_native_rma.h and
 * docs/mixed-windows.md).  Every call into UCX is made with the component's
 * AM lock held, as in osc_newrma_transport_ucx.c.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/op/op.h"
#include "opal/align.h"

#include "osc_newrma.h"
#include "osc_newrma_am.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_native_rma.h"
#include "osc_newrma_transport_ucx.h"

#if OSC_NEWRMA_HAVE_UCX

#include <ucp/api/ucp.h>

/* The lock word: readers count up from 0 in the low half, a writer holds
 * bit 32, writers waiting in line count up from bit 40. */
#define NATIVE_LOCK_READERS (((uint64_t) 1 << 32) - 1)
#define NATIVE_LOCK_WRITER ((uint64_t) 1 << 32)
#define NATIVE_LOCK_WAITING ((uint64_t) 1 << 40)
#define NATIVE_LOCK_WAITERS (~((uint64_t) NATIVE_LOCK_WAITING - 1))

/* What a process tells the others about its window at creation. */
typedef struct {
    uint64_t base;               /* the window's first byte */
    uint64_t lock;               /* its lock word */
    uint64_t size;
    int32_t disp_unit;
    uint32_t key_len;            /* 0: memory not mapped for UCX */
} native_card_t;

typedef struct {
    uint64_t base;
    uint64_t lock;
    uint64_t size;
    int disp_unit;
    ucp_ep_h ep;
    ucp_rkey_h rkey;
} native_peer_t;

struct osc_newrma_native_t {
    bool on;                     /* every peer native (agreed at creation) */
    ucp_mem_h memh;              /* lock line + window memory */
    char *mapped;                /* the mapping's first byte */
    char *window;                /* the window's first byte, at the window's memory alignment */
    size_t line;                 /* the lock word's line, right before the window */
    native_peer_t *peers;        /* per window rank, once on */
};

bool osc_newrma_native_on(const ompi_osc_newrma_module_t *module)
{
    return NULL != module->native && module->native->on;
}

/* Locks waiting in line (osc_newrma_native_progress), AM lock held. */
typedef struct {
    ompi_osc_newrma_module_t *module;
    osc_newrma_target_t *t;
} native_waiter_t;

static struct {
    native_waiter_t *list;
    size_t count, capacity;
} waiters;

/* ------------------------------------------------------------------ */
/* window life cycle                                                   */
/* ------------------------------------------------------------------ */

/* The mapping holds the window at `alignment` (mpi_minimum_memory_alignment,
 * a cache line at least) after its lock line: UCX's allocator does not
 * promise that alignment, so the padding up to it is mapped too. */
static int map_memory(struct osc_newrma_native_t *native, size_t size, size_t alignment)
{
    size_t length = native->line + alignment + size;
    ucp_mem_map_params_t params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .length = length,
        .flags = UCP_MEM_MAP_ALLOCATE,
    };
    ucp_mem_attr_t attr = { .field_mask = UCP_MEM_ATTR_FIELD_ADDRESS };

    if (UCS_OK != ucp_mem_map(osc_newrma_ucx_context(), &params, &native->memh)) {
        native->memh = NULL;
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (UCS_OK != ucp_mem_query(native->memh, &attr)) {
        (void) ucp_mem_unmap(osc_newrma_ucx_context(), native->memh);
        native->memh = NULL;
        return OMPI_ERR_NOT_AVAILABLE;
    }
    native->mapped = attr.address;
    native->window = (char *) OPAL_ALIGN((uintptr_t) native->mapped + native->line, alignment, uintptr_t);
    memset(native->window - native->line, 0, native->line);    /* the lock word: free */
    return OMPI_SUCCESS;
}

int osc_newrma_native_memory(ompi_osc_newrma_module_t *module, size_t size, void **base)
{
    struct osc_newrma_native_t *native;
    int ret;

    if (!mca_osc_newrma_component.native_rma) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    native = calloc(1, sizeof(*native));
    if (NULL == native) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    native->line = mca_osc_newrma_component.cacheline;
    osc_newrma_am_enter();
    ret = osc_newrma_ucx_up();
    if (OMPI_SUCCESS == ret) {
        ret = map_memory(native, size, module->memory_alignment);
    }
    osc_newrma_am_leave();
    if (OMPI_SUCCESS != ret) {
        free(native);
        return OMPI_ERR_NOT_AVAILABLE;
    }
    module->native = native;
    *base = native->window;
    return OMPI_SUCCESS;
}

/* Our card and packed key (*key: free with ucp_rkey_buffer_release). */
static void own_card(ompi_osc_newrma_module_t *module, native_card_t *card, void **key)
{
    struct osc_newrma_native_t *native = module->native;
    size_t key_len = 0;

    *card = (native_card_t) { .size = module->am_size, .disp_unit = module->am_disp_unit };
    *key = NULL;
    if (NULL == native || UCS_OK != ucp_rkey_pack(osc_newrma_ucx_context(), native->memh, key, &key_len)) {
        *key = NULL;
        return;
    }
    card->base = (uint64_t) (uintptr_t) native->window;
    card->lock = card->base - native->line;
    card->key_len = (uint32_t) key_len;
}

/* Can this process reach `rank`'s memory without rank's CPU?  UCX's
 * endpoint must do atomics on a lane of its own (over TCP it has none: it
 * would emulate them with messages its target's progress answers), and the
 * key must map the memory here (shared memory).  Fills the peer. */
static bool peer_reachable(ompi_osc_newrma_module_t *module, int rank, const native_card_t *card, const void *key,
                           native_peer_t *peer)
{
    char transport[32];
    void *where;

    *peer = (native_peer_t) { .base = card->base, .lock = card->lock, .size = card->size,
                              .disp_unit = card->disp_unit };
    if (0 == card->key_len || NULL == (peer->ep = osc_newrma_ucx_endpoint(module, rank))
        || !osc_newrma_ucx_lane_transport(peer->ep, "amo#", transport, sizeof(transport))) {
        return false;
    }
    if (UCS_OK != ucp_ep_rkey_unpack(peer->ep, key, &peer->rkey)) {
        peer->rkey = NULL;
        return false;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "native route: rank %d atomics over %s", rank, transport);
    return UCS_OK == ucp_rkey_ptr(peer->rkey, card->lock, &where);
}

static void peers_release(ompi_osc_newrma_module_t *module, native_peer_t *peers)
{
    for (int r = 0 ; NULL != peers && r < module->size ; ++r) {
        if (NULL != peers[r].rkey) {
            ucp_rkey_destroy(peers[r].rkey);
        }
    }
    free(peers);
}

/* Every peer's card and key, in two allgathers (cards, then keys). */
static int exchange_cards(ompi_osc_newrma_module_t *module, native_card_t *cards, char **keys, int *offsets)
{
    struct ompi_communicator_t *comm = module->comm;
    int size = module->size, *lengths = malloc(sizeof(int) * (size_t) size), total = 0, ret;
    native_card_t mine;
    void *key;

    osc_newrma_am_enter();
    own_card(module, &mine, &key);
    osc_newrma_am_leave();
    ret = NULL == lengths ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    /* collectives without the AM lock: they progress, and progress takes it */
    int r2 = comm->c_coll->coll_allgather(&mine, sizeof(mine), MPI_BYTE, cards, sizeof(mine), MPI_BYTE, comm,
                                          comm->c_coll->coll_allgather_module);
    ret = OMPI_SUCCESS == ret ? r2 : ret;
    for (int r = 0 ; OMPI_SUCCESS == ret && r < size ; ++r) {
        offsets[r] = total;
        lengths[r] = (int) cards[r].key_len;
        total += lengths[r];
    }
    *keys = OMPI_SUCCESS == ret ? malloc((size_t) total + 1) : NULL;
    /* every process takes part in the second allgather even when it failed
     * locally: the agreement that follows reports it */
    r2 = comm->c_coll->coll_allgatherv(NULL == key ? "" : key, (int) mine.key_len, MPI_BYTE, NULL == *keys ? NULL : *keys,
                                       lengths, offsets, MPI_BYTE, comm, comm->c_coll->coll_allgatherv_module);
    ret = OMPI_SUCCESS == ret ? r2 : ret;
    ret = OMPI_SUCCESS == ret && NULL == *keys ? OMPI_ERR_OUT_OF_RESOURCE : ret;
    if (NULL != key) {
        ucp_rkey_buffer_release(key);
    }
    free(lengths);
    return ret;
}

int osc_newrma_native_window_init(ompi_osc_newrma_module_t *module)
{
    struct ompi_communicator_t *comm = module->comm;
    native_card_t *cards = malloc(sizeof(native_card_t) * (size_t) module->size);
    int *offsets = malloc(sizeof(int) * (size_t) module->size);
    native_peer_t *peers = calloc((size_t) module->size, sizeof(native_peer_t));
    char *keys = NULL;
    int ok, all_ok = 0, ret;

    ret = NULL == cards || NULL == offsets || NULL == peers ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    if (OMPI_SUCCESS == ret) {
        ret = exchange_cards(module, cards, &keys, offsets);
    }
    ok = OMPI_SUCCESS == ret;
    osc_newrma_am_enter();
    for (int r = 0 ; ok && r < module->size ; ++r) {
        ok = peer_reachable(module, r, &cards[r], keys + offsets[r], &peers[r]);
    }
    osc_newrma_am_leave();
    ret = comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm, comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS == ret && all_ok) {
        module->native->peers = peers;
        module->native->on = true;
        peers = NULL;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "window %d: native route %s", module->am_id,
                   OMPI_SUCCESS == ret && all_ok ? "on" : "off");
    osc_newrma_am_enter();
    peers_release(module, peers);
    osc_newrma_am_leave();
    free(cards);
    free(offsets);
    free(keys);
    return ret;
}

void osc_newrma_native_window_fini(ompi_osc_newrma_module_t *module)
{
    struct osc_newrma_native_t *native = module->native;

    if (NULL == native) {
        return;
    }
    osc_newrma_am_enter();
    for (size_t i = waiters.count ; i-- > 0 ; ) {      /* none but in an erroneous program */
        if (waiters.list[i].module == module) {
            waiters.list[i] = waiters.list[--waiters.count];
        }
    }
    peers_release(module, native->peers);
    (void) ucp_mem_unmap(osc_newrma_ucx_context(), native->memh);
    osc_newrma_am_leave();
    free(native);
    module->native = NULL;
}

/* ------------------------------------------------------------------ */
/* operations                                                          */
/* ------------------------------------------------------------------ */

/* Wait for a request of ours, progressing the worker (AM lock held). */
static int request_wait(ucs_status_ptr_t request)
{
    ucs_status_t status;

    if (NULL == request) {
        return OMPI_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return OMPI_ERROR;
    }
    while (UCS_INPROGRESS == (status = ucp_request_check_status(request))) {
        (void) osc_newrma_transport_ucx.progress();
    }
    ucp_request_free(request);
    return UCS_OK == status ? OMPI_SUCCESS : OMPI_ERROR;
}

/* One atomic of `size` bytes at `address` of the peer, done at the target
 * on return; *old: the value before.  UCX's compare-and-swap compares with
 * the operand and swaps in *old's value on entry. */
static int atomic_fetch(const native_peer_t *peer, ucp_atomic_op_t op, const void *operand, void *old, size_t size,
                        uint64_t address)
{
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(size),
        .reply_buffer = old,
    };

    return request_wait(ucp_atomic_op_nbx(peer->ep, op, operand, 1, address, peer->rkey, &param));
}

static int lock_word_add(const native_peer_t *peer, uint64_t delta, uint64_t *old)
{
    return atomic_fetch(peer, UCP_ATOMIC_OP_ADD, &delta, old, sizeof(delta), peer->lock);
}

/* One try at the lock word: *held when taken.  A reader backs out when a
 * writer holds the word or waits for it. */
static int lock_word_try(const native_peer_t *peer, int lock_type, bool *held)
{
    uint64_t old = NATIVE_LOCK_WRITER, free_word = 0;
    int ret;

    if (MPI_LOCK_EXCLUSIVE == lock_type) {
        ret = atomic_fetch(peer, UCP_ATOMIC_OP_CSWAP, &free_word, &old, sizeof(old), peer->lock);
        *held = OMPI_SUCCESS == ret && 0 == old;
        return ret;
    }
    ret = lock_word_add(peer, 1, &old);
    *held = OMPI_SUCCESS == ret && 0 == (old & (NATIVE_LOCK_WRITER | NATIVE_LOCK_WAITERS));
    if (OMPI_SUCCESS == ret && !*held) {
        ret = lock_word_add(peer, (uint64_t) -1, &old);     /* a writer has it: back out */
    }
    return ret;
}

/* An exclusive lock's next step once its writer counts as waiting (so
 * that new readers back out -- without that, readers whose holds overlap
 * keep the word above 0 and a writer never takes it): swap waiting for
 * holding if no reader or writer is left. */
static int exclusive_step(const native_peer_t *peer, bool *held)
{
    uint64_t seen, old;
    int ret = lock_word_add(peer, 0, &seen);

    *held = false;
    while (OMPI_SUCCESS == ret && 0 == (seen & (NATIVE_LOCK_READERS | NATIVE_LOCK_WRITER))) {
        old = seen - NATIVE_LOCK_WAITING + NATIVE_LOCK_WRITER;
        ret = atomic_fetch(peer, UCP_ATOMIC_OP_CSWAP, &seen, &old, sizeof(old), peer->lock);
        if (old == seen) {
            *held = true;
            break;
        }
        seen = old;       /* the word changed meanwhile: look again */
    }
    return ret;
}

/* Locks waiting in line.  The call that asks for one does not wait for it:
 * an operation that takes a lock lazily must not block on a holder that
 * may wait for this process (a message, tests/request_ops.c), as a LOCK
 * packet queued at the target does not.  Whoever needs the lock waits for
 * the grant in its progress loop, as for a packet; progress retries them
 * (osc_newrma_native_progress). */

static bool waiter_add(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    if (waiters.count == waiters.capacity) {
        size_t capacity = waiters.capacity ? 2 * waiters.capacity : 8;
        native_waiter_t *grown = realloc(waiters.list, capacity * sizeof(*grown));
        if (NULL == grown) {
            return false;
        }
        waiters.list = grown;
        waiters.capacity = capacity;
    }
    waiters.list[waiters.count++] = (native_waiter_t) { .module = module, .t = t };
    t->busy++;       /* not reclaimed while it waits */
    return true;
}

/* The lock is taken: the element's queued operations go. */
static void lock_held(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "native lock %s of rank %d: held",
                   MPI_LOCK_EXCLUSIVE == t->lock_type ? "exclusive" : "shared", t->rank);
    t->native_lock = t->lock_type;
    osc_newrma_am_granted(module, t);
}

/* One more try for a lock waiting in line. */
static int waiting_step(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool *held)
{
    const native_peer_t *peer = &module->native->peers[t->rank];

    return MPI_LOCK_EXCLUSIVE == t->lock_type ? exclusive_step(peer, held)
                                              : lock_word_try(peer, MPI_LOCK_SHARED, held);
}

bool osc_newrma_native_pending(void)
{
    return 0 != waiters.count;
}

int osc_newrma_native_progress(void)
{
    int done = 0;

    for (size_t i = waiters.count ; i-- > 0 ; ) {
        native_waiter_t w = waiters.list[i];
        bool held = false;
        int ret = waiting_step(w.module, w.t, &held);
        if (OMPI_SUCCESS != ret || held) {
            waiters.list[i] = waiters.list[--waiters.count];
            w.t->busy--;
            w.t->status = OMPI_SUCCESS == w.t->status ? ret : w.t->status;
            if (held) {
                lock_held(w.module, w.t);
            }
            ++done;
        }
    }
    return done;
}

int osc_newrma_native_lock(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool try_only)
{
    const native_peer_t *peer = &module->native->peers[t->rank];
    bool held = false;
    uint64_t old;
    int ret = OMPI_SUCCESS;

    t->busy++;       /* progress releases the AM lock */
    while (0 != t->acks_pending) {      /* a release still in flight */
        osc_newrma_am_progress_once();
    }
    t->busy--;
    t->denied = false;
    t->tried = try_only;
    if (MPI_LOCK_EXCLUSIVE == t->lock_type && !try_only) {
        ret = lock_word_add(peer, NATIVE_LOCK_WAITING, &old);
        ret = OMPI_SUCCESS == ret ? exclusive_step(peer, &held) : ret;
    } else {
        ret = lock_word_try(peer, t->lock_type, &held);
    }
    if (OMPI_SUCCESS == ret && held) {
        lock_held(module, t);
    } else if (OMPI_SUCCESS == ret && !try_only) {
        t->lock_state = NEWRMA_LOCK_ISSUED;     /* granted from progress */
        ret = waiter_add(module, t) ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
    } else {
        t->lock_state = NEWRMA_LOCK_CALLED;
        t->denied = OMPI_SUCCESS == ret;     /* sorted out as a refused tried lock is */
    }
    return ret;
}

static int endpoint_flush(const native_peer_t *peer)
{
    ucp_request_param_t param = { .op_attr_mask = 0 };

    return request_wait(ucp_ep_flush_nbx(peer->ep, &param));
}

int osc_newrma_native_closing(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint8_t *sync_flags)
{
    int ret = OMPI_SUCCESS;

    if (0 == (*sync_flags & NEWRMA_PF_SYNC)) {
        return OMPI_SUCCESS;
    }
    if (0 != t->native_issued) {
        ret = endpoint_flush(&module->native->peers[t->rank]);
        t->native_issued = 0;
    }
    if ((*sync_flags & NEWRMA_PF_UNLOCK) && 0 != t->native_lock) {
        *sync_flags = (uint8_t) ((*sync_flags & ~NEWRMA_PF_UNLOCK) | NEWRMA_PF_FLUSH);
        t->native_unlocking = true;
    }
    return ret;
}

int osc_newrma_native_unlocked(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    const native_peer_t *peer = &module->native->peers[t->rank];
    uint64_t old;

    if (!t->native_unlocking) {
        return OMPI_SUCCESS;
    }
    t->native_unlocking = false;
    t->lock_state = NEWRMA_LOCK_CALLED;      /* a later operation locks again (lock_all) */
    old = MPI_LOCK_EXCLUSIVE == t->native_lock ? NATIVE_LOCK_WRITER : 1;
    t->native_lock = 0;
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "native unlock of rank %d", t->rank);
    return lock_word_add(peer, (uint64_t) 0 - old, &old);
}

void osc_newrma_native_bounds(const ompi_osc_newrma_module_t *module, int rank, uint64_t *size, int *disp_unit)
{
    *size = module->native->peers[rank].size;
    *disp_unit = module->native->peers[rank].disp_unit;
}

bool osc_newrma_native_notify_ok(const ompi_osc_newrma_module_t *module, int rank, uint32_t idx)
{
    const ompi_osc_newrma_module_t *companion = module->notify_companion;

    return NULL != companion && osc_newrma_native_on(module) && osc_newrma_native_on(companion)
        && module->native->peers[rank].ep == companion->native->peers[rank].ep
        && ((uint64_t) idx + 1) * sizeof(int64_t) <= companion->native->peers[rank].size;
}

/* Why the target never sees the counter before the data: ucp_worker_fence
 * (UCX 1.13 has no per-endpoint fence; the worker's covers every endpoint)
 * orders every operation posted to UCT before it ahead of every one after
 * it, and on the shared-memory transports the native route runs on it is
 * a CPU memory fence, the put a copy into the target's mapping made by
 * this CPU and the add a locked instruction on it.  A UCP request still
 * pending is not posted to UCT yet, so the put's request is waited for
 * before the fence.  The target loads its counter with acquire order. */
int osc_newrma_native_notify(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint32_t notify)
{
    const native_peer_t *counter;
    uint64_t one = 1;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
        .datatype = ucp_dt_make_contig(sizeof(one)),
    };

    if (0 == notify) {
        return OMPI_SUCCESS;
    }
    counter = &module->notify_companion->native->peers[t->rank];
    if (UCS_OK != ucp_worker_fence(osc_newrma_ucx_worker())) {
        return OMPI_ERROR;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "native notify: counter %u of rank %d", notify - 1, t->rank);
    /* `one` is read until the request completes locally; the add reaches
     * the target by the next flush of the endpoint at the latest (t's) */
    t->native_issued++;
    return request_wait(ucp_atomic_op_nbx(counter->ep, UCP_ATOMIC_OP_ADD, &one, 1,
                                          counter->base + (uint64_t) (notify - 1) * sizeof(int64_t), counter->rkey,
                                          &param));
}

int osc_newrma_native_move(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool put, void *buffer,
                           size_t len, uint64_t offset, uint32_t notify)
{
    const native_peer_t *peer = &module->native->peers[t->rank];
    ucp_request_param_t param = { .op_attr_mask = 0 };
    ucs_status_ptr_t request = put ? ucp_put_nbx(peer->ep, buffer, len, peer->base + offset, peer->rkey, &param)
                                   : ucp_get_nbx(peer->ep, buffer, len, peer->base + offset, peer->rkey, &param);

    if (UCS_PTR_IS_ERR(request)) {
        return OMPI_ERROR;
    }
    t->native_issued++;
    mca_osc_newrma_component.route_native_ops++;
    if (0 != notify) {
        /* posted to UCT before the fence (osc_newrma_native_notify) */
        int ret = request_wait(request);
        return OMPI_SUCCESS == ret ? osc_newrma_native_notify(module, t, notify) : ret;
    }
    if (NULL != request) {
        ucp_request_free(request);     /* completes anyway; the flush waits for it */
    }
    return OMPI_SUCCESS;
}

/* The UCX atomic of an MPI operation on integers; false if it has none. */
static bool atomic_of(struct ompi_op_t *op, ucp_atomic_op_t *uop)
{
    static const struct { struct ompi_op_t *op; ucp_atomic_op_t uop; } table[] = {
        { &ompi_mpi_op_sum.op, UCP_ATOMIC_OP_ADD },  { &ompi_mpi_op_band.op, UCP_ATOMIC_OP_AND },
        { &ompi_mpi_op_bor.op, UCP_ATOMIC_OP_OR },   { &ompi_mpi_op_bxor.op, UCP_ATOMIC_OP_XOR },
        { &ompi_mpi_op_replace.op, UCP_ATOMIC_OP_SWAP },
        { &ompi_mpi_op_no_op.op, UCP_ATOMIC_OP_ADD },    /* adds 0: an atomic read */
    };

    for (size_t i = 0 ; i < sizeof(table) / sizeof(table[0]) ; ++i) {
        if (table[i].op == op) {
            *uop = table[i].uop;
            return true;
        }
    }
    return false;
}

static bool is_integer(struct ompi_datatype_t *dt)
{
    return OMPI_DATATYPE_FLAG_DATA_INT == (dt->super.flags & OMPI_DATATYPE_FLAG_DATA_TYPE);
}

/* Elements of this size and type go native (and are applied atomically by
 * the handler): a compare-and-swap (op NULL) compares bits, the others
 * compute on integers. */
static bool atomic_type_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    size_t size;

    if (!ompi_datatype_is_predefined(dt)) {
        return false;
    }
    ompi_datatype_type_size(dt, &size);
    return (4 == size || 8 == size) && (NULL == op || is_integer(dt));
}

bool osc_newrma_native_atomic_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    ucp_atomic_op_t uop;

    return atomic_type_ok(op, dt) && (NULL == op || atomic_of(op, &uop));
}

int osc_newrma_native_atomic(ompi_osc_newrma_module_t *module, int rank, struct ompi_op_t *op,
                             struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result,
                             uint64_t offset)
{
    const native_peer_t *peer = &module->native->peers[rank];
    uint64_t operand = 0, old = 0;
    ucp_atomic_op_t uop = UCP_ATOMIC_OP_CSWAP;
    size_t size;
    int ret;

    ompi_datatype_type_size(dt, &size);
    if (NULL == op) {
        /* a compare-and-swap compares with the operand, swaps in `old` */
        memcpy(&operand, compare, size);
        memcpy(&old, origin, size);
    } else {
        (void) atomic_of(op, &uop);
        if (NULL != origin) {
            memcpy(&operand, origin, size);
        }
    }
    ret = atomic_fetch(peer, uop, &operand, &old, size, peer->base + offset);
    if (OMPI_SUCCESS == ret && NULL != result) {
        memcpy(result, &old, size);
    }
    mca_osc_newrma_component.route_native_ops++;
    return ret;
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

/* One element with the CPU's atomics, as UCX's shared-memory lanes do it. */
#define NATIVE_APPLY(type, uop, addr, operand, old)                                                   \
    do {                                                                                              \
        type *a_ = (type *) (addr), v_, o_;                                                           \
        memcpy(&v_, (operand), sizeof(type));                                                         \
        switch (uop) {                                                                                \
        case UCP_ATOMIC_OP_ADD: o_ = __atomic_fetch_add(a_, v_, __ATOMIC_ACQ_REL); break;             \
        case UCP_ATOMIC_OP_AND: o_ = __atomic_fetch_and(a_, v_, __ATOMIC_ACQ_REL); break;             \
        case UCP_ATOMIC_OP_OR: o_ = __atomic_fetch_or(a_, v_, __ATOMIC_ACQ_REL); break;               \
        case UCP_ATOMIC_OP_XOR: o_ = __atomic_fetch_xor(a_, v_, __ATOMIC_ACQ_REL); break;             \
        default: o_ = __atomic_exchange_n(a_, v_, __ATOMIC_ACQ_REL); break;                           \
        }                                                                                             \
        memcpy((old), &o_, sizeof(type));                                                             \
    } while (0)

/* A misaligned element -- which the native route never takes, and which the
 * caller's stripes guard -- through an aligned copy. */
static void apply_element(ucp_atomic_op_t uop, size_t size, char *addr, const char *operand, char *old)
{
    if (0 != (uintptr_t) addr % size) {
        uint64_t copy;
        memcpy(&copy, addr, size);
        apply_element(uop, size, (char *) &copy, operand, old);
        memcpy(addr, &copy, size);
        return;
    }
    if (4 == size) {
        NATIVE_APPLY(uint32_t, uop, addr, operand, old);
    } else {
        NATIVE_APPLY(uint64_t, uop, addr, operand, old);
    }
}

bool osc_newrma_native_acc_apply(const ompi_osc_newrma_module_t *module, char *addr, int count,
                                 struct ompi_datatype_t *dt, const osc_newrma_layout_t *tl, const void *packed,
                                 struct ompi_op_t *op, void *result, int *ret)
{
    static const uint64_t zero = 0;
    struct ompi_datatype_t *basic = NULL;
    struct iovec single, *runs = NULL;
    const char *in = packed;
    char *out = result, scratch[8];
    size_t nruns = 0, size;
    uint32_t prim_count;
    ucp_atomic_op_t uop;

    if (!osc_newrma_native_on(module) || !atomic_of(op, &uop)
        || OMPI_SUCCESS != ompi_osc_base_get_primitive_type_info(dt, &basic, &prim_count) || NULL == basic
        || !atomic_type_ok(op, basic)) {
        return false;
    }
    ompi_datatype_type_size(basic, &size);
    *ret = osc_newrma_datatype_iovecs(dt, count, addr, tl, &single, &runs, &nruns);
    for (size_t r = 0 ; OMPI_SUCCESS == *ret && r < nruns ; ++r) {
        for (size_t b = 0 ; b + size <= runs[r].iov_len ; b += size) {
            apply_element(uop, size, (char *) runs[r].iov_base + b, NULL == in ? (const char *) &zero : in,
                          NULL == out ? scratch : out);
            in = NULL == in ? NULL : in + size;
            out = NULL == out ? NULL : out + size;
        }
    }
    if (runs != &single) {
        free(runs);
    }
    return true;
}

/* A compare-and-swap of one element with the CPU's atomics; *old: the
 * value found. */
#define NATIVE_CAS(type, addr, value, compare, old)                                                  \
    do {                                                                                              \
        type expected_, desired_;                                                                     \
        memcpy(&expected_, (compare), sizeof(type));                                                  \
        memcpy(&desired_, (value), sizeof(type));                                                     \
        (void) __atomic_compare_exchange_n((type *) (addr), &expected_, desired_, false,             \
                                           __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);                      \
        memcpy((old), &expected_, sizeof(type));                                                      \
    } while (0)

bool osc_newrma_native_cas_apply(const ompi_osc_newrma_module_t *module, void *addr, size_t size,
                                 const void *value, const void *compare, void *old)
{
    if (!osc_newrma_native_on(module) || (4 != size && 8 != size) || 0 != (uintptr_t) addr % size) {
        return false;
    }
    if (4 == size) {
        NATIVE_CAS(uint32_t, addr, value, compare, old);
    } else {
        NATIVE_CAS(uint64_t, addr, value, compare, old);
    }
    return true;
}

#else /* !OSC_NEWRMA_HAVE_UCX */

/* Built without UCX: no window is ever native; the calls below are only
 * made on native windows. */
bool osc_newrma_native_on(const ompi_osc_newrma_module_t *module)
{
    (void) module;
    return false;
}

int osc_newrma_native_memory(ompi_osc_newrma_module_t *module, size_t size, void **base)
{
    (void) module; (void) size; (void) base;
    return OMPI_ERR_NOT_AVAILABLE;
}

int osc_newrma_native_window_init(ompi_osc_newrma_module_t *module)
{
    (void) module;
    return OMPI_SUCCESS;
}

void osc_newrma_native_window_fini(ompi_osc_newrma_module_t *module)
{
    (void) module;
}

int osc_newrma_native_lock(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool try_only)
{
    (void) module; (void) t; (void) try_only;
    return OMPI_ERR_NOT_SUPPORTED;
}

int osc_newrma_native_closing(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint8_t *sync_flags)
{
    (void) module; (void) t; (void) sync_flags;
    return OMPI_SUCCESS;
}

bool osc_newrma_native_pending(void)
{
    return false;
}

int osc_newrma_native_progress(void)
{
    return 0;
}

int osc_newrma_native_unlocked(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t)
{
    (void) module; (void) t;
    return OMPI_SUCCESS;
}

void osc_newrma_native_bounds(const ompi_osc_newrma_module_t *module, int rank, uint64_t *size, int *disp_unit)
{
    (void) module; (void) rank; (void) size; (void) disp_unit;
}

int osc_newrma_native_move(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, bool put, void *buffer,
                           size_t len, uint64_t offset, uint32_t notify)
{
    (void) module; (void) t; (void) put; (void) buffer; (void) len; (void) offset; (void) notify;
    return OMPI_ERR_NOT_SUPPORTED;
}

bool osc_newrma_native_notify_ok(const ompi_osc_newrma_module_t *module, int rank, uint32_t idx)
{
    (void) module; (void) rank; (void) idx;
    return false;
}

int osc_newrma_native_notify(ompi_osc_newrma_module_t *module, osc_newrma_target_t *t, uint32_t notify)
{
    (void) module; (void) t; (void) notify;
    return OMPI_ERR_NOT_SUPPORTED;
}

bool osc_newrma_native_atomic_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    (void) op; (void) dt;
    return false;
}

int osc_newrma_native_atomic(ompi_osc_newrma_module_t *module, int rank, struct ompi_op_t *op,
                             struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result,
                             uint64_t offset)
{
    (void) module; (void) rank; (void) op; (void) dt; (void) origin; (void) compare; (void) result; (void) offset;
    return OMPI_ERR_NOT_SUPPORTED;
}

bool osc_newrma_native_acc_apply(const ompi_osc_newrma_module_t *module, char *addr, int count,
                                 struct ompi_datatype_t *dt, const osc_newrma_layout_t *tl, const void *packed,
                                 struct ompi_op_t *op, void *result, int *ret)
{
    (void) module; (void) addr; (void) count; (void) dt; (void) tl; (void) packed; (void) op; (void) result;
    (void) ret;
    return false;
}

bool osc_newrma_native_cas_apply(const ompi_osc_newrma_module_t *module, void *addr, size_t size,
                                 const void *value, const void *compare, void *old)
{
    (void) module; (void) addr; (void) size; (void) value; (void) compare; (void) old;
    return false;
}

#endif /* OSC_NEWRMA_HAVE_UCX */
