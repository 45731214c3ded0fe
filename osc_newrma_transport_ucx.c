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
 * osc/newrma: the UCX transport of the active-message path (see
 * osc_newrma_transport_ucx.h for what it offers, osc_newrma_transport.h for
 * the interface it implements and docs/am-protocol.md for why).
 *
 * Threading: every call into the worker is made with the component's AM
 * lock held (UCS_THREAD_MODE_SERIALIZED is enough), including the optional
 * progress thread's, which sleeps on the worker's event descriptor without
 * the lock.
 */

#include "ompi_config.h"

#include "osc_newrma.h"
#include "osc_newrma_transport.h"
#include "osc_newrma_transport_ucx.h"

#if OSC_NEWRMA_HAVE_UCX

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "opal/class/opal_hash_table.h"
#include "opal/runtime/opal_progress.h"
#include "ompi/communicator/communicator.h"
#include "ompi/proc/proc.h"
#include "ompi/runtime/mpiruntime.h"

#define NEWRMA_UCX_AM_ID 0

/* What we know about one peer process. */
typedef struct {
    void *address;
    size_t address_len;
    ucp_ep_h ep;               /* created on first send */
    size_t eager_limit;        /* payloads up to this go eagerly (set with ep) */
} ucx_peer_t;

static struct {
    bool up;
    ucp_context_h context;
    ucp_worker_h worker;
    void *address;
    size_t address_len;
    opal_hash_table_t peers;   /* process name (uint64) -> ucx_peer_t */
    int efd;                   /* event descriptor, for the progress thread */
    bool in_progress;          /* inside ucp_worker_progress (AM lock held) */
    opal_list_t deferred;      /* first sends to a peer from inside progress */
} ucx = { .efd = -1 };

static uint64_t proc_key(const struct ompi_proc_t *proc)
{
    uint64_t key;
    memcpy(&key, &proc->super.proc_name, sizeof(key));
    return key;
}

static ucx_peer_t *peer_lookup(const struct ompi_proc_t *proc)
{
    void *value = NULL;
    return OPAL_SUCCESS == opal_hash_table_get_value_uint64(&ucx.peers, proc_key(proc), &value) ? value : NULL;
}

/* ------------------------------------------------------------------ */
/* receive                                                             */
/* ------------------------------------------------------------------ */

/* UCX hands over the header and an eager payload wherever they sit in its
 * receive buffer (over tcp: at any byte offset).  Packets are read as
 * structures and payloads as arrays of their elements, so both are given
 * to the packet layer aligned: the header copied (64 bytes), a misaligned
 * eager payload copied too (eager payloads are small). */
#define NEWRMA_UCX_ALIGN 16
#define NEWRMA_UCX_HEADER_MAX 128

static ucs_status_t am_handler(void *arg, const void *header, size_t header_len, void *data, size_t len,
                               const ucp_am_recv_param_t *param)
{
    bool rndv = 0 != (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
    uint64_t aligned_header[NEWRMA_UCX_HEADER_MAX / sizeof(uint64_t)];
    void *copy = NULL;
    osc_newrma_large_payload_t large = { .transport = &osc_newrma_transport_ucx, .handle = data };

    (void) arg;
    if (OPAL_UNLIKELY(header_len > sizeof(aligned_header))) {
        return UCS_OK;     /* not one of ours */
    }
    memcpy(aligned_header, header, header_len);
    if (!rndv && 0 != ((uintptr_t) data % NEWRMA_UCX_ALIGN) && len > 0) {
        copy = malloc(len);
        if (NULL != copy) {  /* else as it is: x86 reads it all the same */
            data = memcpy(copy, data, len);
        }
    }
    mca_osc_newrma_component.ucx_rendezvous_received += rndv;
    osc_newrma_am_receive(aligned_header, header_len, rndv ? NULL : data, len, rndv ? &large : NULL);
    free(copy);
    return UCS_OK;    /* eager data is consumed or copied by the handler */
}

typedef struct {
    osc_newrma_transport_done_fn_t done;
    void *arg;
} ucx_completion_t;

static void recv_data_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    ucx_completion_t *c = user_data;

    (void) length;
    c->done(c->arg, UCS_OK == status ? OMPI_SUCCESS : OMPI_ERROR);
    free(c);
    ucp_request_free(request);
}

/* Fetch a rendezvous payload (the handle am_handler gave with the packet). */
static int ucx_fetch(void *rndv, void *buffer, size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    ucx_completion_t *c = malloc(sizeof(*c));
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv_am = recv_data_done,
        .user_data = c,
    };
    ucs_status_ptr_t request;

    if (NULL == c) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    c->done = done;
    c->arg = arg;
    request = ucp_am_recv_data_nbx(ucx.worker, rndv, buffer, len, &param);
    if (NULL == request || UCS_PTR_IS_ERR(request)) {
        free(c);
        done(arg, NULL == request ? OMPI_SUCCESS : OMPI_ERROR);
    }
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* send                                                                */
/* ------------------------------------------------------------------ */

static void send_done(void *request, ucs_status_t status, void *user_data)
{
    ucx_completion_t *c = user_data;

    c->done(c->arg, UCS_OK == status ? OMPI_SUCCESS : OMPI_ERROR);
    free(c);
    ucp_request_free(request);
}

/* The transport of the first lane of `ep` with `role` in UCX's printed
 * configuration of the endpoint ("rma_bw#", "amo#"): UCX 1.13 offers no
 * query of an endpoint's transports; its printed configuration names each
 * lane's transport and roles ("lane[0]:  1:tcp/lo.0 md[1] -> ... rma_bw#0
 * am ...").  If the format ever changes, nothing matches (false). */
bool osc_newrma_ucx_lane_transport(ucp_ep_h ep, const char *role, char *name, size_t name_len)
{
    char *text = NULL, *line, *save = NULL;
    size_t size = 0;
    bool found = false;
    FILE *stream = open_memstream(&text, &size);

    if (NULL == stream) {
        return false;
    }
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    for (line = strtok_r(text, "\n", &save); NULL != line && !found; line = strtok_r(NULL, "\n", &save)) {
        const char *lane = strstr(line, "]:"), *tl = NULL == lane ? NULL : strchr(lane + 2, ':');
        if (NULL != strstr(line, role) && NULL != tl) {
            size_t n = strcspn(tl + 1, "/ ");
            snprintf(name, name_len, "%.*s", (int) n, tl + 1);
            found = true;
        }
    }
    free(text);
    return found;
}

/* Whether UCX's rendezvous to this endpoint moves data over TCP.  A
 * rendezvous there costs a handshake and then sends the data through the
 * same socket (its put/get emulation), which measured 1.2-2x slower than
 * one eager message at 32-128 KiB on loopback (faster from 256 KiB: the
 * limit's default is 128 KiB); a zero-copy transport (cma, RDMA) is the
 * other way round. */
static bool rendezvous_over_tcp(ucp_ep_h ep)
{
    char name[32];

    return osc_newrma_ucx_lane_transport(ep, "rma_bw#", name, sizeof(name)) && 0 == strcmp(name, "tcp");
}

static ucp_ep_h peer_endpoint(ucx_peer_t *peer)
{
    if (NULL == peer->ep) {
        ucp_ep_params_t params = {
            .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
            .address = peer->address,
        };
        if (UCS_OK != ucp_ep_create(ucx.worker, &params, &peer->ep)) {
            peer->ep = NULL;
            return NULL;
        }
        peer->eager_limit = rendezvous_over_tcp(peer->ep) ? mca_osc_newrma_component.ucx_eager_limit : 0;
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "UCX endpoint: payloads up to %zu bytes sent eagerly", peer->eager_limit);
    }
    return peer->ep;
}

/* Send on an endpoint: 1 if complete already, 0 if `done` will be called
 * from progress, an error otherwise. */
static int send_on(ucx_peer_t *peer, ucp_ep_h ep, const void *header, size_t header_len, const void *payload,
                   size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    ucx_completion_t *c;
    ucs_status_ptr_t request;

    c = malloc(sizeof(*c));
    if (OPAL_UNLIKELY(NULL == c)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    c->done = done;
    c->arg = arg;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA
                        | UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_FLAGS,
        .flags = len <= peer->eager_limit ? UCP_AM_SEND_FLAG_EAGER : 0,
        .cb.send = send_done,
        .user_data = c,
        .datatype = ucp_dt_make_contig(1),
    };
    request = ucp_am_send_nbx(ep, NEWRMA_UCX_AM_ID, header, header_len, payload, len, &param);
    if (OPAL_LIKELY(NULL == request)) {
        free(c);
        return 1;
    }
    if (UCS_PTR_IS_ERR(request)) {
        free(c);
        return OMPI_ERROR;
    }
    return 0;
}

/*
 * A first send to a peer from inside ucp_worker_progress -- a packet
 * handler's reply to an origin this process never sent to -- waits until
 * progress returns, and the endpoint is created then.  UCX 1.13's TCP
 * transport crashed (in uct_tcp_iface_progress) when an endpoint was
 * created from inside its interface's event loop while connections from
 * several origins were being accepted.  Later sends to that peer from the
 * same progress queue behind it, so the order of the peer's packets holds.
 */
typedef struct {
    opal_list_item_t super;
    ucx_peer_t *peer;
    uint64_t header[NEWRMA_UCX_HEADER_MAX / sizeof(uint64_t)];
    size_t header_len;
    const void *payload;       /* the caller keeps it until `done` */
    size_t len;
    osc_newrma_transport_done_fn_t done;
    void *arg;
} deferred_send_t;

static OBJ_CLASS_INSTANCE(deferred_send_t, opal_list_item_t, NULL, NULL);

static int send_deferred(ucx_peer_t *peer, const void *header, size_t header_len, const void *payload,
                         size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    deferred_send_t *d;

    if (OPAL_UNLIKELY(header_len > sizeof(d->header))) {
        return OMPI_ERR_BAD_PARAM;
    }
    d = OBJ_NEW(deferred_send_t);
    if (OPAL_UNLIKELY(NULL == d)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    d->peer = peer;
    memcpy(d->header, header, header_len);
    d->header_len = header_len;
    d->payload = payload;
    d->len = len;
    d->done = done;
    d->arg = arg;
    opal_list_append(&ucx.deferred, &d->super);
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "UCX: first send to a peer from inside progress deferred");
    return 0;
}

/* A deferred send is done: the caller's completion, then the record. */
static void deferred_sent(void *arg, int status)
{
    deferred_send_t *d = arg;

    d->done(d->arg, status);
    OBJ_RELEASE(d);
}

/* After progress: create the endpoints and send what waited, in order.
 * The record (whose copy of the header UCX is given) lives until the send
 * is done: ucp_am_send_nbx reads the header when it really sends, which
 * on a new endpoint is after the connection is made, in a later progress
 * (UCX 1.18 documents it; a header freed by then went out as garbage,
 * dropped by the peer as "a packet for an unknown window", and the peer
 * waited for its answer for ever). */
static void deferred_sends_flush(void)
{
    deferred_send_t *d;

    while (NULL != (d = (deferred_send_t *) opal_list_remove_first(&ucx.deferred))) {
        ucp_ep_h ep = peer_endpoint(d->peer);
        int ret = NULL == ep ? OMPI_ERR_UNREACH
                             : send_on(d->peer, ep, d->header, d->header_len, d->payload, d->len, deferred_sent, d);
        if (0 != ret) {
            deferred_sent(d, 1 == ret ? OMPI_SUCCESS : ret);
        }
    }
}

static int ucx_send(ompi_osc_newrma_module_t *module, int rank, const void *header, size_t header_len,
                    const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    ucx_peer_t *peer = peer_lookup(ompi_comm_peer_lookup(module->comm, rank));
    ucp_ep_h ep;

    if (OPAL_UNLIKELY(NULL == peer)) {
        return OMPI_ERR_UNREACH;
    }
    if (OPAL_UNLIKELY(NULL == peer->ep && ucx.in_progress)) {
        return send_deferred(peer, header, header_len, payload, len, done, arg);
    }
    ep = peer_endpoint(peer);
    if (OPAL_UNLIKELY(NULL == ep)) {
        return OMPI_ERR_UNREACH;
    }
    return send_on(peer, ep, header, header_len, payload, len, done, arg);
}

/* ------------------------------------------------------------------ */
/* progress                                                            */
/* ------------------------------------------------------------------ */

/* The caller holds the AM lock: wait loops and the progress thread. */
static int ucx_progress_locked(void)
{
    int count = 0;

    if (!ucx.up) {
        return 0;
    }
    ucx.in_progress = true;
    while (ucp_worker_progress(ucx.worker)) {
        ++count;
    }
    ucx.in_progress = false;
    if (OPAL_UNLIKELY(!opal_list_is_empty(&ucx.deferred))) {
        deferred_sends_flush();
        ++count;
    }
    return count;
}

/* From opal_progress: if another thread holds the AM lock it is either
 * progressing the worker already (the progress thread, another waiter) or
 * will before it waits; queueing behind it only adds latency. */
static int ucx_progress(void)
{
    int count;

    if (!ucx.up || 0 != opal_mutex_trylock(&mca_osc_newrma_component.am_lock)) {
        return 0;
    }
    count = ucx_progress_locked();
    opal_mutex_unlock(&mca_osc_newrma_component.am_lock);
    return count;
}

/* For the progress thread (osc_newrma_am_target.c): arm the worker's event
 * descriptor so that poll() on it wakes at the next event.  AM lock held. */
static int ucx_arm(int *fd)
{
    ucs_status_t status;

    if (!ucx.up || ucx.efd < 0) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    status = ucp_worker_arm(ucx.worker);
    if (UCS_ERR_BUSY == status) {
        return OMPI_ERR_WOULD_BLOCK;    /* events pending: progress first */
    }
    if (UCS_OK != status) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    *fd = ucx.efd;
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* bring-up and teardown                                               */
/* ------------------------------------------------------------------ */

static void ucx_fini(void);

/* Set one of the UCX context's parameters (NAME without "UCX_") unless the
 * user set it in the environment: the user's choice wins. */
static bool ucx_config_default(ucp_config_t *config, const char *name, const char *value)
{
    char env_name[64];

    snprintf(env_name, sizeof(env_name), "UCX_%s", name);
    return NULL == getenv(env_name) && UCS_OK == ucp_config_modify(config, name, value);
}

/*
 * With MPI_THREAD_MULTIPLE, leave out the context's own registration cache
 * (UCX_RCACHE_ENABLE, UCX 1.13 and later) unless the user set it.  That cache
 * is invalidated from the memory hooks of whichever thread unmaps or
 * madvises memory, outside the AM lock, and UCX 1.13 aborted there
 * (rcache.c "UCS_RCACHE_REGION_PUT_FLAG_IN_PGTABLE") while another thread of
 * the process was sending.  Transports that need registration (InfiniBand)
 * keep their memory domain's own cache; TCP and shared memory register for
 * free.
 */
static void ucx_config_for_threads(ucp_config_t *config)
{
    if (osc_newrma_thread_multiple() && ucx_config_default(config, "RCACHE_ENABLE", "n")) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "MPI_THREAD_MULTIPLE: UCX context without its registration cache");
    }
}

/*
 * UCX's first protocol layer (UCX_PROTO_ENABLE=n, UCX 1.13's default)
 * unless the user set it.  The second one (the default in UCX 1.18, Debian
 * 13's) sends an active message over TCP in copied segments at every size,
 * and when asked for a rendezvous (UCP_AM_SEND_FLAG_RNDV) runs one through
 * copied fragments too; the first moves a payload above the rendezvous
 * threshold by a rendezvous that lands in the target's buffer
 * (ucp_am_recv_data_nbx).  In the remote mode a lock, a put or get of
 * 256 KiB-2 MiB and an unlock took several times longer with the second
 * layer (docs/ompi5.md, "UCX's protocol layer").  newrma's UCX path was
 * written and measured against the first layer.
 */
static void ucx_config_protocols(ucp_config_t *config)
{
    if (ucx_config_default(config, "PROTO_ENABLE", "n")) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "UCX context with UCX's first protocol layer (UCX_PROTO_ENABLE=n)");
    }
}

static int transport_up(void)
{
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        /* RMA and atomics only when asked for: they add lanes (and their
         * wire-up) to every endpoint, the TCP ones included */
        .features = UCP_FEATURE_AM | (mca_osc_newrma_component.progress_thread ? UCP_FEATURE_WAKEUP : 0)
                    | (mca_osc_newrma_component.native_rma ? UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 : 0),
        .mt_workers_shared = 0,
    };
    ucp_worker_params_t wparams = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    ucp_am_handler_param_t hparams = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB
                      | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = NEWRMA_UCX_AM_ID,
        .cb = am_handler,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
    };
    ucp_config_t *config = NULL;
    ucs_status_t status;

    if (ucx.up) {
        return OMPI_SUCCESS;
    }
    status = ucp_config_read(NULL, NULL, &config);
    if (UCS_OK != status) {
        return OMPI_ERROR;
    }
    ucx_config_for_threads(config);
    ucx_config_protocols(config);
    status = ucp_init(&params, config, &ucx.context);
    ucp_config_release(config);
    if (UCS_OK != status) {
        return OMPI_ERROR;
    }
    status = ucp_worker_create(ucx.context, &wparams, &ucx.worker);
    if (UCS_OK == status) {
        status = ucp_worker_get_address(ucx.worker, (ucp_address_t **) &ucx.address, &ucx.address_len);
    }
    if (UCS_OK == status) {
        status = ucp_worker_set_am_recv_handler(ucx.worker, &hparams);
    }
    if (UCS_OK != status) {
        ucx_fini();
        return OMPI_ERROR;
    }
    OBJ_CONSTRUCT(&ucx.peers, opal_hash_table_t);
    opal_hash_table_init(&ucx.peers, 64);
    OBJ_CONSTRUCT(&ucx.deferred, opal_list_t);
    ucx.up = true;
    opal_progress_register(ucx_progress);
    if (mca_osc_newrma_component.progress_thread && UCS_OK != ucp_worker_get_efd(ucx.worker, &ucx.efd)) {
        ucx.efd = -1;
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "no UCX event descriptor: the progress thread polls UCX every few milliseconds");
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "UCX transport up (worker address %lu bytes)", (unsigned long) ucx.address_len);
    return OMPI_SUCCESS;
}

static void ucx_fini(void)
{
    /* the progress thread is stopped already (osc_newrma_am_fini) */
    if (ucx.up) {
        uint64_t key;
        void *value, *node = NULL;
        opal_progress_unregister(ucx_progress);
        if (OPAL_SUCCESS == opal_hash_table_get_first_key_uint64(&ucx.peers, &key, &value, &node)) {
            do {
                ucx_peer_t *peer = value;
                if (NULL != peer->ep) {
                    ucs_status_ptr_t req = ucp_ep_close_nb(peer->ep, UCP_EP_CLOSE_MODE_FORCE);
                    while (UCS_PTR_IS_PTR(req) && UCS_INPROGRESS == ucp_request_check_status(req)) {
                        ucp_worker_progress(ucx.worker);
                    }
                    if (UCS_PTR_IS_PTR(req)) {
                        ucp_request_free(req);
                    }
                }
                free(peer->address);
                free(peer);
            } while (OPAL_SUCCESS == opal_hash_table_get_next_key_uint64(&ucx.peers, &key, &value, node, &node));
        }
        OBJ_DESTRUCT(&ucx.peers);
        OPAL_LIST_DESTRUCT(&ucx.deferred);
        ucx.up = false;
        ucx.efd = -1;
    }
    if (NULL != ucx.address) {
        ucp_worker_release_address(ucx.worker, ucx.address);
        ucx.address = NULL;
    }
    if (NULL != ucx.worker) {
        ucp_worker_destroy(ucx.worker);
        ucx.worker = NULL;
    }
    if (NULL != ucx.context) {
        ucp_cleanup(ucx.context);
        ucx.context = NULL;
    }
}

/* ------------------------------------------------------------------ */
/* address exchange                                                    */
/* ------------------------------------------------------------------ */

static bool all_members_known(struct ompi_communicator_t *comm)
{
    for (int r = 0 ; r < ompi_comm_size(comm) ; ++r) {
        if (NULL == peer_lookup(ompi_comm_peer_lookup(comm, r))) {
            return false;
        }
    }
    return true;
}

/* Learn every member's address: lengths first, then the addresses.  The
 * collectives run without the AM lock (they progress, and progress takes
 * it). */
static int exchange_addresses(struct ompi_communicator_t *comm)
{
    int size = ompi_comm_size(comm), mine = (int) ucx.address_len, ret;
    int *lengths = malloc(sizeof(int) * (size_t) size), *offsets = malloc(sizeof(int) * (size_t) size);
    char *all = NULL;

    if (NULL == lengths || NULL == offsets) {
        ret = OMPI_ERR_OUT_OF_RESOURCE;
        goto cleanup;
    }
    ret = comm->c_coll->coll_allgather(&mine, 1, MPI_INT, lengths, 1, MPI_INT, comm,
                                       comm->c_coll->coll_allgather_module);
    if (OMPI_SUCCESS != ret) {
        goto cleanup;
    }
    size_t total = 0;
    for (int r = 0 ; r < size ; ++r) {
        offsets[r] = (int) total;
        total += (size_t) lengths[r];
    }
    all = malloc(total);
    if (NULL == all) {
        ret = OMPI_ERR_OUT_OF_RESOURCE;
        goto cleanup;
    }
    ret = comm->c_coll->coll_allgatherv(ucx.address, mine, MPI_BYTE, all, lengths, offsets, MPI_BYTE, comm,
                                        comm->c_coll->coll_allgatherv_module);
    /* the tables are read by packet handlers: fill them under the lock */
    opal_mutex_lock(&mca_osc_newrma_component.am_lock);
    for (int r = 0 ; OMPI_SUCCESS == ret && r < size ; ++r) {
        struct ompi_proc_t *proc = ompi_comm_peer_lookup(comm, r);
        ucx_peer_t *peer;
        if (NULL != peer_lookup(proc)) {
            continue;
        }
        peer = calloc(1, sizeof(*peer));
        if (NULL == peer || NULL == (peer->address = malloc((size_t) lengths[r]))) {
            free(peer);
            ret = OMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        memcpy(peer->address, all + offsets[r], (size_t) lengths[r]);
        peer->address_len = (size_t) lengths[r];
        opal_hash_table_set_value_uint64(&ucx.peers, proc_key(proc), peer);
    }
    opal_mutex_unlock(&mca_osc_newrma_component.am_lock);
cleanup:
    free(lengths);
    free(offsets);
    free(all);
    return ret;
}

/* Collective over the window: bring the transport up if needed and make
 * sure every member's worker address is known.  Fails alike on every rank. */
static int ucx_window_connect(ompi_osc_newrma_module_t *module)
{
    struct ompi_communicator_t *comm = module->comm;
    int state[2], agreed[2], ret;

    /* state[0]: transport up here; state[1]: every member already known */
    opal_mutex_lock(&mca_osc_newrma_component.am_lock);
    state[0] = OMPI_SUCCESS == transport_up();
    state[1] = state[0] && all_members_known(comm);
    opal_mutex_unlock(&mca_osc_newrma_component.am_lock);
    ret = comm->c_coll->coll_allreduce(state, agreed, 2, MPI_INT, MPI_MIN, comm,
                                       comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (!agreed[0]) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    if (agreed[1]) {
        return OMPI_SUCCESS;
    }
    return exchange_addresses(comm);
}

static bool ucx_active(void)
{
    return ucx.up;
}

/* For the native route (osc_newrma_transport_ucx.h).  AM lock held. */
int osc_newrma_ucx_up(void)
{
    return transport_up();
}

ucp_context_h osc_newrma_ucx_context(void)
{
    return ucx.context;
}

ucp_worker_h osc_newrma_ucx_worker(void)
{
    return ucx.worker;
}

ucp_ep_h osc_newrma_ucx_endpoint(ompi_osc_newrma_module_t *module, int rank)
{
    ucx_peer_t *peer = peer_lookup(ompi_comm_peer_lookup(module->comm, rank));

    return NULL == peer ? NULL : peer_endpoint(peer);
}

#else /* !OSC_NEWRMA_HAVE_UCX */

/* Built without UCX: windows with remote peers are declined at query
 * (osc_newrma_component.c), so no packet is ever given to this transport. */
static int ucx_window_connect(ompi_osc_newrma_module_t *module)
{
    (void) module;
    return OMPI_ERR_NOT_AVAILABLE;
}

static int ucx_send(ompi_osc_newrma_module_t *module, int rank, const void *header, size_t header_len,
                    const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    (void) module; (void) rank; (void) header; (void) header_len; (void) payload; (void) len; (void) done;
    (void) arg;
    return OMPI_ERR_NOT_AVAILABLE;
}

static int ucx_progress_locked(void)
{
    return 0;
}

#define ucx_fetch NULL
#define ucx_arm NULL
#define ucx_active NULL
#define ucx_fini NULL

#endif /* OSC_NEWRMA_HAVE_UCX */

/* The last transport of the table: every process not reached otherwise. */
static bool ucx_reaches(const ompi_osc_newrma_module_t *module, int rank)
{
    (void) module; (void) rank;
    return true;
}

/* No has_work: the transport progresses itself from opal_progress
 * (ucx_progress, registered once it is up, only tries the AM lock), so the
 * AM layer's callback leaves it alone. */
const osc_newrma_transport_t osc_newrma_transport_ucx = {
    .name = "ucx",
    .window_connect = ucx_window_connect,
    .fini = ucx_fini,
    .reaches = ucx_reaches,
    .send = ucx_send,
    .fetch = ucx_fetch,
    .progress = ucx_progress_locked,
    .active = ucx_active,
    .arm = ucx_arm,
};
