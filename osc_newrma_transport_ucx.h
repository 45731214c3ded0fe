/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: the UCX transport of the active-message path.
 *
 * One UCP context and worker for the whole component (not per window),
 * created by the first window that needs them.  Worker addresses are learnt
 * per peer process, once, the first time a window's communicator contains
 * a process whose address is unknown; endpoints are created on first send.
 * Both live in component-level tables keyed by the process name, so a
 * window holds no per-peer transport state.  See docs/am-protocol.md.
 */

#ifndef OSC_NEWRMA_UCX_H
#define OSC_NEWRMA_UCX_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>

BEGIN_C_DECLS

struct ompi_communicator_t;
struct ompi_proc_t;

/* Local completion of a send (the payload may be reused); status is
 * OMPI_SUCCESS or an error code. */
typedef void (*osc_newrma_ucx_done_fn_t)(void *arg, int status);

/* Called for every incoming packet, with the AM lock held.  `data` is the
 * payload (NULL and rndv != NULL when the payload must be fetched with
 * osc_newrma_ucx_recv_data). */
typedef void (*osc_newrma_ucx_recv_fn_t)(const void *header, size_t header_len,
                                         void *data, size_t len, void *rndv);

/* Collective over `comm`: bring the transport up if needed and make sure
 * every member's worker address is known.  Fails alike on every rank. */
int osc_newrma_ucx_connect(struct ompi_communicator_t *comm, osc_newrma_ucx_recv_fn_t recv);

/* Send header + payload to `peer`.  Returns 1 if the send completed at once
 * (done is not called), 0 if `done` will be called from progress, or an
 * error code. */
int osc_newrma_ucx_send(struct ompi_proc_t *peer, const void *header, size_t header_len,
                        const void *payload, size_t len, osc_newrma_ucx_done_fn_t done, void *arg);

/* Fetch a rendezvous payload into `buffer`; `done` is called when it is
 * there (possibly before this returns). */
int osc_newrma_ucx_recv_data(void *rndv, void *buffer, size_t len,
                             osc_newrma_ucx_done_fn_t done, void *arg);

/* Progress the worker unless another thread holds the AM lock.
 * Registered with opal_progress once the transport is up. */
int osc_newrma_ucx_progress(void);

/* Progress the worker; the caller holds the AM lock.  Returns the number
 * of events. */
int osc_newrma_ucx_progress_locked(void);

/* Arm the worker's event descriptor for the progress thread: OMPI_SUCCESS
 * (poll *fd), OMPI_ERR_WOULD_BLOCK (events pending: progress again first)
 * or OMPI_ERR_NOT_AVAILABLE (no UCX, or no descriptor).  AM lock held. */
int osc_newrma_ucx_arm(int *fd);

/* Tear down (component finalize). */
void osc_newrma_ucx_fini(void);

END_C_DECLS

#endif /* OSC_NEWRMA_UCX_H */
