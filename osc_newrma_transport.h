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
 * osc/newrma: the transport interface of the active-message path.  A
 * transport moves packets (a header and a payload) between the processes of
 * a window; the active-message files (osc_newrma_am_*.c) reach every
 * transport through the operations below and name none of them.  The
 * transports, in the order a peer's is chosen (the first that reaches it):
 *
 *   loopback  osc_newrma_transport_loopback.c  packets to ourselves
 *   fifo      osc_newrma_transport_fifo.c      peers on this node, through
 *                                              FIFOs in shared memory
 *   ucx       osc_newrma_transport_ucx.c       every other peer (UCX active
 *                                              messages, with rendezvous)
 *
 * The table and the loops over it are in osc_newrma_transport.c.  What each
 * operation must guarantee, and what adding a transport takes, is in
 * docs/transports.md.  Everything here runs with the component's AM lock
 * held unless it says otherwise.
 */

#ifndef OSC_NEWRMA_TRANSPORT_H
#define OSC_NEWRMA_TRANSPORT_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;
struct pollfd;

/* Local completion of a send (the payload may be reused) or arrival of a
 * fetched payload; status is OMPI_SUCCESS or an error code. */
typedef void (*osc_newrma_transport_done_fn_t)(void *arg, int status);

/* A payload still at the sender, announced by a packet that came without
 * it (UCX's rendezvous): the receiver fetches it into memory of its choice
 * with osc_newrma_transport_fetch().  Valid only during the
 * osc_newrma_am_receive() call that hands it over. */
typedef struct {
    const struct osc_newrma_transport_t *transport;
    void *handle;                /* the transport's own */
} osc_newrma_large_payload_t;

typedef struct osc_newrma_transport_t {
    const char *name;

    /* --- window life cycle (AM lock not held) --- */
    /* Collective over the window's communicator, before the window takes
     * packets: set up what this transport needs for it (may be NULL). */
    int (*window_init)(struct ompi_osc_newrma_module_t *module);
    /* Collective, once the window takes packets; called on every rank when
     * some peer of the window is reached by no earlier transport (every rank
     * sees the same), on none otherwise (may be NULL). */
    int (*window_connect)(struct ompi_osc_newrma_module_t *module);
    /* Before the barrier of MPI_Win_free: hand every packet this process
     * still holds for the window to the receivers (may be NULL). */
    int (*window_quiesce)(struct ompi_osc_newrma_module_t *module);
    /* After that barrier: receive what is left, release (may be NULL). */
    void (*window_fini)(struct ompi_osc_newrma_module_t *module);
    /* Component finalize, once the progress thread has stopped (may be NULL). */
    void (*fini)(void);

    /* --- sending --- */
    /* Does this transport carry packets to window rank `peer`? */
    bool (*reaches)(const struct ompi_osc_newrma_module_t *module, int peer);
    /* Send header + payload to `peer`; packets to one peer arrive in the
     * order they were sent.  Returns 1: done already (the caller's buffers
     * are free again; `done` is not called), 0: `done` is called from
     * progress once they are, or an error code (`done` is not called). */
    int (*send)(struct ompi_osc_newrma_module_t *module, int peer, const void *header, size_t header_len,
                const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg);
    /* Fetch a large payload into `buffer` (len bytes): OMPI_SUCCESS and
     * `done` is called once it is there (maybe before this returns), or an
     * error code and `done` is not called.  NULL if the transport never
     * announces one. */
    int (*fetch)(void *handle, void *buffer, size_t len, osc_newrma_transport_done_fn_t done, void *arg);

    /* --- progress --- */
    /* Deliver what arrived, push what waits; the number of things done. */
    int (*progress)(void);
    /* Would progress() have something to do?  Cheap; without the AM lock
     * when the process has a single thread.  The AM layer's opal_progress
     * callback progresses the transports that have it; NULL: the transport
     * is progressed from opal_progress by a callback of its own. */
    bool (*has_work)(void);
    /* Does the transport carry packets of some window now (may be NULL: never)? */
    bool (*active)(void);
    /* For the progress thread: make *fd readable at the next event.
     * OMPI_SUCCESS (poll *fd), OMPI_ERR_WOULD_BLOCK (events pending: progress
     * first) or OMPI_ERR_NOT_AVAILABLE (no descriptor now).  NULL: the
     * transport has no descriptor; while it is active the thread polls it
     * every millisecond. */
    int (*arm)(int *fd);
} osc_newrma_transport_t;

/* The transports (the FIFO's and UCX's are declared in their headers). */
extern const osc_newrma_transport_t osc_newrma_transport_loopback;

/* The upcall: every transport hands each incoming packet to the AM layer
 * (osc_newrma_am_target.c), AM lock held.  `data` is the payload, or NULL
 * with `large` set when it is still to be fetched. */
void osc_newrma_am_receive(const void *header, size_t header_len, void *data, size_t len,
                           const osc_newrma_large_payload_t *large);

static inline int osc_newrma_transport_fetch(const osc_newrma_large_payload_t *large, void *buffer, size_t len,
                                             osc_newrma_transport_done_fn_t done, void *arg)
{
    return large->transport->fetch(large->handle, buffer, len, done, arg);
}

/* ------------------------------------------------------------------ */
/* the table (osc_newrma_transport.c)                                  */
/* ------------------------------------------------------------------ */

/* The transport of window rank `peer`: the first in the table that
 * reaches it, or NULL. */
const osc_newrma_transport_t *osc_newrma_transport_of(const struct ompi_osc_newrma_module_t *module, int peer);

/* Window life cycle over every transport (AM lock not held).  init stops
 * at the first failure; connect follows init once the window takes packets. */
int osc_newrma_transports_window_init(struct ompi_osc_newrma_module_t *module);
int osc_newrma_transports_window_connect(struct ompi_osc_newrma_module_t *module);
int osc_newrma_transports_window_quiesce(struct ompi_osc_newrma_module_t *module);
void osc_newrma_transports_window_fini(struct ompi_osc_newrma_module_t *module);
void osc_newrma_transports_fini(void);

/* Progress every transport, in table order; true if anything happened. */
bool osc_newrma_transports_progress(void);
/* The AM layer's opal_progress callback: does any transport it serves have
 * work (has_work), and progress those. */
bool osc_newrma_transports_have_work(void);
bool osc_newrma_transports_poll(void);
/* Is a transport without a wake-up descriptor (its peers polled, on this
 * node) active? */
bool osc_newrma_transports_polled_active(void);
/* Arm every descriptor into fds[] (room for OSC_NEWRMA_TRANSPORTS_MAX):
 * OMPI_SUCCESS with *count set, or OMPI_ERR_WOULD_BLOCK (progress first). */
#define OSC_NEWRMA_TRANSPORTS_MAX 8
int osc_newrma_transports_arm(struct pollfd *fds, int *count);

END_C_DECLS

#endif /* OSC_NEWRMA_TRANSPORT_H */
