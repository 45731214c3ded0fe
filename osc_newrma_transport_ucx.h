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
 * osc/newrma: the UCX transport of the active-message path (one of the
 * transports of osc_newrma_transport.h; its code is
 * osc_newrma_transport_ucx.c).
 *
 * One UCP context and worker for the whole component (not per window),
 * created by the first window that needs them.  Worker addresses are learnt
 * per peer process, once, the first time a window's communicator contains
 * a process whose address is unknown; endpoints are created on first send.
 * Both live in component-level tables keyed by the process name, so a
 * window holds no per-peer transport state.  Large payloads come by UCX's
 * rendezvous: the packet arrives first, the receiver fetches the payload
 * (the transport's fetch operation).  See docs/am-protocol.md.
 */

#ifndef OSC_NEWRMA_TRANSPORT_UCX_H
#define OSC_NEWRMA_TRANSPORT_UCX_H

#include "ompi_config.h"

BEGIN_C_DECLS

/* The transport (osc_newrma_transport.h): the last in the table, it
 * reaches every process; window_connect learns the window's worker
 * addresses; progressed by an opal_progress callback of its own, which
 * only tries the AM lock; the worker's event descriptor wakes the
 * progress thread. */
extern const struct osc_newrma_transport_t osc_newrma_transport_ucx;

#if OSC_NEWRMA_HAVE_UCX
#include <stdbool.h>
#include <ucp/api/ucp.h>

struct ompi_osc_newrma_module_t;

/* For the native route (osc_newrma_native_rma.c), AM lock held: bring the
 * context and worker up (OMPI_SUCCESS or an error); the context; the
 * worker (every endpoint's); the endpoint to a window rank whose address window_connect learnt (NULL:
 * none); the transport of the endpoint's first lane with a role
 * ("amo#", "rma_bw#") into name, false if it has none. */
int osc_newrma_ucx_up(void);
ucp_context_h osc_newrma_ucx_context(void);
ucp_worker_h osc_newrma_ucx_worker(void);
ucp_ep_h osc_newrma_ucx_endpoint(struct ompi_osc_newrma_module_t *module, int rank);
bool osc_newrma_ucx_lane_transport(ucp_ep_h ep, const char *role, char *name, size_t name_len);
#endif

END_C_DECLS

#endif /* OSC_NEWRMA_TRANSPORT_UCX_H */
