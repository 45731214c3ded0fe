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
 * osc/newrma: a window's limits on the user-memory path on one node --
 * which puts, gets and accumulates go through the target's mailbox, are
 * shared with the target or relayed (osc_newrma_node_policy.h holds the
 * numbers and the per-call choices; the mechanisms are
 * osc_newrma_single_copy.c, osc_newrma_mailbox.c, osc_newrma_shared_copy.c,
 * osc_newrma_relay.c and the batch in osc_newrma_usermem.c).
 *
 * Every limit comes from this process's MCA parameters, the same on every
 * machine: each is an origin-side choice that any target serves, so the
 * processes of a window have nothing to agree on.
 */

#include "ompi_config.h"

#include "opal/runtime/opal_progress.h"

#include "osc_newrma.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_shared_copy.h"

/* Are targets asked for small operations on this node?  Not with more
 * ranks than cores (Open MPI then yields when idle), unless
 * osc_newrma_assist_oversubscribed says so. */
static bool targets_attended(void)
{
    return !opal_progress_yield_when_idle || mca_osc_newrma_component.assist_oversubscribed;
}

void osc_newrma_node_policy_init(ompi_osc_newrma_module_t *module)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    size_t line = module->shm.layout.cacheline, payload = line - offsetof(osc_newrma_mailbox_t, payload);

    module->assist_max_bytes = module->assist_serve_bytes = 0;
    module->assist_attended = false;
    module->assist_share_bytes = SIZE_MAX;
    module->assist_relay_piece_bytes = 0;
    module->assist_relay_min_pieces = 2;
    if (NEWRMA_PATH_USERMEM != module->path || !module->shm.is_shared || SIZE_MAX == module->shm.layout.assist_in_rank) {
        return;
    }
    /* Every process of the window has the mailbox (the layout is agreed),
     * and serves it whatever its own parameters say: an origin may leave a
     * PSCW put or accumulate there for our MPI_Win_wait to apply. */
    module->assist_serve_bytes = payload < NEWRMA_MAILBOX_MAX_PAYLOAD ? payload : NEWRMA_MAILBOX_MAX_PAYLOAD;
    if (0 == c->assist_timeout) {
        return;   /* this process asks nothing of its targets */
    }
    module->assist_max_bytes = module->assist_serve_bytes;
    /* More ranks than cores (Open MPI then yields when idle): a target is
     * often off its core, and waiting for it costs more than doing it
     * ourselves.  Hand-offs in a PSCW epoch stay: puts and accumulates wait
     * for nobody, and answers are collected after MPI_Win_complete signals,
     * when the target's MPI_Win_wait is about to serve them anyway.  So do
     * relays of large groups (NEWRMA_RELAY_UNATTENDED_PIECES). */
    module->assist_attended = targets_attended();
    if (module->assist_max_bytes >= sizeof(osc_newrma_share_t)) {
        if (module->assist_attended && 0 != c->assist_share_bytes) {
            module->assist_share_bytes = c->assist_share_bytes;
        }
        /* one relay area per process, used by one thread at a time */
        module->assist_relay_piece_bytes = osc_newrma_thread_multiple() ? 0 : c->relay_piece_bytes;
        module->assist_relay_min_pieces = module->assist_attended ? 2 : NEWRMA_RELAY_UNATTENDED_PIECES;
    }
}

void osc_newrma_node_policy_batch_set(ompi_osc_newrma_module_t *module)
{
    /* the largest put or get worth handing over: within one hardware line */
    size_t in_line = NEWRMA_MAILBOX_HW_LINE - offsetof(osc_newrma_mailbox_t, payload);
    size_t move_max = module->assist_max_bytes < in_line ? module->assist_max_bytes : in_line;

    module->assist_move_bytes = osc_newrma_thread_multiple() ? 0 : move_max;
    if (NULL == module->usermem_batch) {
        module->assist_relay_piece_bytes = 0;
    }
}

bool osc_newrma_node_policy_relay_acc_fits(const ompi_osc_newrma_module_t *module, size_t nruns, size_t esize)
{
    /* chunks hold whole elements */
    return osc_newrma_node_policy_relay_group(module, nruns) && 0 != esize && 0 == NEWRMA_RELAY_ACC_CHUNK % esize;
}

bool osc_newrma_node_policy_shared_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize,
                                            bool with_result)
{
    /* chunks are whole pages, so whole elements */
    return bytes >= module->assist_share_bytes && 0 != esize && 0 == NEWRMA_SHARE_PAGE % esize
           && (!with_result || module->assist_max_bytes >= sizeof(osc_newrma_share_result_t));
}
