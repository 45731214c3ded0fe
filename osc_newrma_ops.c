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
 * osc/newrma: the direct table, and what the node path's tables share
 * (osc_newrma_ops.h).
 *
 * direct: every window buffer of the node is in the node segment, mapped
 * here (MPI_Win_allocate, allocate_shared): a put or get is a load/store
 * (memcpy, or Open MPI's datatype engine for non-contiguous types), and
 * completes before it returns, which is what lets flush and the closing
 * synchronizations be pure memory barriers.  Windows of user memory on one
 * node (create, create_dynamic) have their own table,
 * osc_newrma_usermem.c; windows across nodes the active-message table,
 * osc_newrma_am_ops.c.  Shared here: the request-based operations.
 */

#include "ompi_config.h"

#include <stdint.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "ompi/datatype/ompi_datatype.h"

#include "ompi/request/request.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_ops.h"

/* ------------------------------------------------------------------ */
/* direct put and get                                                  */
/* ------------------------------------------------------------------ */

/* Put (write) or get (!write) through the mapped segment. */
static inline int direct_move(struct ompi_win_t *win, bool write, void *origin_addr, int origin_count,
                              struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                              int target_count, struct ompi_datatype_t *target_dt)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    /* (initialized: GCC 12 for aarch64 does not see that the check fills
     * them whenever it succeeds, and warns) */
    osc_newrma_layout_t ol = { 0 }, tl = { 0 };
    char *taddr;
    int ret = osc_newrma_op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    NEWRMA_TRACE_OP(module, write ? "put" : "get", target, target_disp, target_count, target_dt);
    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = osc_newrma_direct_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return write ? osc_newrma_local_copy(taddr, target_count, target_dt, &tl, origin_addr, origin_count, origin_dt, &ol)
                 : osc_newrma_local_copy(origin_addr, origin_count, origin_dt, &ol, taddr, target_count, target_dt, &tl);
}

static int direct_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                      int target, ptrdiff_t target_disp, int target_count,
                      struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return direct_move(win, true, (void *) origin_addr, origin_count, origin_dt, target, target_disp,
                       target_count, target_dt);
}

static int direct_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                      int target, ptrdiff_t target_disp, int target_count,
                      struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return direct_move(win, false, origin_addr, origin_count, origin_dt, target, target_disp,
                       target_count, target_dt);
}

/* ------------------------------------------------------------------ */
/* request-based operations                                            */
/* ------------------------------------------------------------------ */

static int completed(int ret, struct ompi_request_t **request)
{
    if (OMPI_SUCCESS == ret) {
        *request = &ompi_request_empty;
    }
    return ret;
}

int osc_newrma_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                    struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = osc_newrma_epoch_request_check(osc_newrma_module(win), target, request);
    return OMPI_SUCCESS != ret ? ret
        : completed(osc_newrma_module(win)->super.osc_put(oa, oc, odt, target, td, tc, tdt, win), request);
}

int osc_newrma_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                    struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = osc_newrma_epoch_request_check(osc_newrma_module(win), target, request);
    return OMPI_SUCCESS != ret ? ret
        : completed(osc_newrma_module(win)->super.osc_get(oa, oc, odt, target, td, tc, tdt, win), request);
}

int osc_newrma_raccumulate(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td,
                           int tc, struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                           struct ompi_request_t **request)
{
    int ret = osc_newrma_epoch_request_check(osc_newrma_module(win), target, request);
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_accumulate(oa, oc, odt, target, td, tc, tdt, op, win);
    }
    /* complete when it returns: not left pending with a target */
    return completed(OMPI_SUCCESS != ret ? ret : osc_newrma_mailbox_flush_pending(osc_newrma_module(win)), request);
}

int osc_newrma_rget_accumulate(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra, int rc,
                               struct ompi_datatype_t *rdt, int target, ptrdiff_t td, int tc,
                               struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                               struct ompi_request_t **request)
{
    int ret = osc_newrma_epoch_request_check(osc_newrma_module(win), target, request);
    return OMPI_SUCCESS != ret ? ret
        : completed(osc_newrma_get_accumulate(oa, oc, odt, ra, rc, rdt, target, td, tc, tdt, op, win), request);
}

/* ------------------------------------------------------------------ */
/* the direct table                                                    */
/* ------------------------------------------------------------------ */

/* Every window buffer of the node is in the segment: load/store. */
const ompi_osc_base_module_t ompi_osc_newrma_direct_table = {
    NEWRMA_COMMON_ENTRIES,
    .osc_put = direct_put,
    .osc_get = direct_get,
    .osc_rput = osc_newrma_rput,
    .osc_rget = osc_newrma_rget,
    .osc_fence = ompi_osc_newrma_fence,
    .osc_complete = ompi_osc_newrma_complete,
    .osc_unlock = ompi_osc_newrma_unlock,
    .osc_unlock_all = ompi_osc_newrma_unlock_all,
    .osc_flush = ompi_osc_newrma_flush,
    .osc_flush_all = ompi_osc_newrma_flush_all,
    .osc_flush_local = ompi_osc_newrma_flush_local,
    .osc_flush_local_all = ompi_osc_newrma_flush_local_all,
};
