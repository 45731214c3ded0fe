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
 * osc/newrma: the loopback transport of the active-message path: packets a
 * process sends to itself (an operation on its own rank, a lock or a PSCW
 * notice to itself).  They are queued and run from progress, never inside
 * the sender's call, so the protocol sees the same order of events as with
 * a remote peer: the sender's state is settled before the packet is
 * handled.  The payload is not copied: the sender keeps it alive until
 * `done`, which runs after the packet has been handled.  The interface is
 * osc_newrma_transport.h; the other transports are
 * osc_newrma_transport_fifo.c and osc_newrma_transport_ucx.c.
 */

#include "ompi_config.h"

#include <string.h>

#include "opal/class/opal_list.h"

#include "osc_newrma.h"
#include "osc_newrma_am.h"
#include "osc_newrma_transport.h"

/* A packet to ourselves. */
typedef struct {
    opal_list_item_t super;
    osc_newrma_am_hdr_t hdr;
    const void *data;
    size_t len;
    osc_newrma_transport_done_fn_t done;
    void *arg;
} loopback_t;
OBJ_CLASS_INSTANCE(loopback_t, opal_list_item_t, NULL, NULL);

/* Packets to ourselves, in send order; built by the first window. */
static opal_list_t queue;
static bool queue_built;

static int loopback_window_init(ompi_osc_newrma_module_t *module)
{
    (void) module;
    osc_newrma_am_enter();
    if (!queue_built) {
        OBJ_CONSTRUCT(&queue, opal_list_t);
        queue_built = true;
    }
    osc_newrma_am_leave();
    return OMPI_SUCCESS;
}

static void loopback_fini(void)
{
    if (queue_built) {
        OPAL_LIST_DESTRUCT(&queue);
        queue_built = false;
    }
}

static bool loopback_reaches(const ompi_osc_newrma_module_t *module, int peer)
{
    return peer == module->rank;
}

static int loopback_send(ompi_osc_newrma_module_t *module, int peer, const void *header, size_t header_len,
                         const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    loopback_t *item;

    (void) module; (void) peer;
    if (OPAL_UNLIKELY(header_len != sizeof(item->hdr))) {
        return OMPI_ERR_BAD_PARAM;
    }
    item = OBJ_NEW(loopback_t);
    if (NULL == item) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(&item->hdr, header, sizeof(item->hdr));
    item->data = payload;
    item->len = len;
    item->done = done;
    item->arg = arg;
    opal_list_append(&queue, &item->super);
    return 0;
}

/* Run the queued packets (and those they send to us in turn). */
static int loopback_progress(void)
{
    loopback_t *item;
    int count = 0;

    if (!queue_built) {
        return 0;
    }
    while (NULL != (item = (loopback_t *) opal_list_remove_first(&queue))) {
        osc_newrma_am_receive(&item->hdr, sizeof(item->hdr), (void *) item->data, item->len, NULL);
        if (NULL != item->done) {
            item->done(item->arg, OMPI_SUCCESS);
        }
        OBJ_RELEASE(item);
        ++count;
    }
    return count;
}

static bool loopback_has_work(void)
{
    return queue_built && !opal_list_is_empty(&queue);
}

/* Not active: only this process's own threads queue packets here, and
 * each runs them from its own wait loop; nothing to wake the progress
 * thread for. */
const osc_newrma_transport_t osc_newrma_transport_loopback = {
    .name = "loopback",
    .window_init = loopback_window_init,
    .fini = loopback_fini,
    .reaches = loopback_reaches,
    .send = loopback_send,
    .progress = loopback_progress,
    .has_work = loopback_has_work,
};
