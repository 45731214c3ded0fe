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
 * osc/newrma: what the node path's two function tables share
 * (osc_newrma_ops.c: the direct table; osc_newrma_usermem.c: the table of
 * windows of user memory on one node): the checks of every put and get,
 * the request-based operations and the entries both take from the
 * synchronization and accumulate files.
 */

#ifndef OSC_NEWRMA_OPS_H
#define OSC_NEWRMA_OPS_H

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_datatype.h"

/* Checks shared by every put/get: epoch, matching sizes.  Fills both layouts. */
static inline int osc_newrma_op_check(ompi_osc_newrma_module_t *module, int target,
                                      struct ompi_datatype_t *origin_dt, int origin_count, osc_newrma_layout_t *origin,
                                      struct ompi_datatype_t *target_dt, int target_count, osc_newrma_layout_t *tgt)
{
    int ret = osc_newrma_epoch_access(module, target);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_datatype_layout(origin_dt, origin_count, origin);
    osc_newrma_datatype_layout(target_dt, target_count, tgt);
    /* matching type signatures have the same size; anything else would read
     * or write past one of the buffers */
    return OPAL_LIKELY(origin->bytes == tgt->bytes) ? OMPI_SUCCESS : MPI_ERR_TYPE;
}


/* Request-based operations: MPI allows them only in passive-target epochs,
 * and they complete before the call returns, so the request handed back
 * is Open MPI's already-complete empty request. */
int osc_newrma_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                    struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request);
int osc_newrma_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                    struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request);
int osc_newrma_raccumulate(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td,
                           int tc, struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                           struct ompi_request_t **request);
int osc_newrma_rget_accumulate(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra, int rc,
                               struct ompi_datatype_t *rdt, int target, ptrdiff_t td, int tc,
                               struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                               struct ompi_request_t **request);

/* The entries of both node tables that do not depend on where the window's
 * memory is. */
#define NEWRMA_COMMON_ENTRIES                                           \
    .osc_win_shared_query = ompi_osc_newrma_shared_query,               \
    .osc_win_attach = ompi_osc_newrma_attach,                           \
    .osc_win_detach = ompi_osc_newrma_detach,                           \
    .osc_free = ompi_osc_newrma_free,                                   \
    .osc_accumulate = osc_newrma_accumulate,                            \
    .osc_compare_and_swap = osc_newrma_compare_and_swap,                \
    .osc_fetch_and_op = osc_newrma_fetch_and_op,                        \
    .osc_get_accumulate = osc_newrma_get_accumulate,                    \
    .osc_raccumulate = osc_newrma_raccumulate,                            \
    .osc_rget_accumulate = osc_newrma_rget_accumulate,                      \
    .osc_start = ompi_osc_newrma_start,                                 \
    .osc_post = ompi_osc_newrma_post,                                   \
    .osc_wait = ompi_osc_newrma_wait,                                   \
    .osc_test = ompi_osc_newrma_test,                                   \
    .osc_lock = ompi_osc_newrma_lock,                                   \
    .osc_lock_all = ompi_osc_newrma_lock_all,                           \
    .osc_sync = ompi_osc_newrma_sync

#endif /* OSC_NEWRMA_OPS_H */
