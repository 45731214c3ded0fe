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
 * osc/newrma: the function table of windows of user memory on one node
 * (MPI_Win_create and create_dynamic whose processes share a node): the
 * target's window memory is private to the target, and a put or get moves
 * it by the mechanism osc_newrma_node_policy.h picks for it -- handed to
 * the target's mailbox (osc_newrma_mailbox.c), batched (here: gathered per
 * target and direction, issued at the next synchronization that completes
 * operations as one relay or one system call), shared with the target
 * (osc_newrma_shared_copy.c), relayed (osc_newrma_relay.c) or one
 * process_vm_readv/writev (osc_newrma_single_copy.c).  The accumulate
 * family is osc_newrma_acc.c's.  Its completing synchronizations complete
 * the mailbox's pending operation and issue the batch first, then do what
 * the direct table's do (osc_newrma_ops.c).
 */

#include "ompi_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/datatype/ompi_datatype.h"

#include "osc_newrma.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_ops.h"
#include "osc_newrma_relay.h"
#include "osc_newrma_shared_copy.h"
#include "osc_newrma_single_copy.h"

/* ------------------------------------------------------------------ */
/* the batch                                                           */
/* ------------------------------------------------------------------ */

/* A group of contiguous pieces (a batch, or part of a derived datatype's
 * transfer): relayed to a target inside MPI, else one system call. */
static int usermem_pieces_send(ompi_osc_newrma_module_t *module, int target, bool write, struct iovec *mine,
                               struct iovec *theirs, unsigned int count, size_t bytes)
{
    int ret = OMPI_ERR_WOULD_BLOCK;

    if (osc_newrma_node_policy_relay_pieces(module, count, bytes)) {
        ret = osc_newrma_relay_move(module, target, write, mine, theirs, count, bytes);
    }
    return OMPI_ERR_WOULD_BLOCK != ret ? ret
        : osc_newrma_single_copy_transfer(osc_newrma_shm_peer(&module->shm, target)->pid, mine, count, theirs, count,
                                          write);
}

/* Issue the batch: one relay to a target inside MPI where its pieces are
 * small (the kernel's work per piece then makes the system call dear;
 * docs/rationale.md, "Relays"), else one system call for up to
 * NEWRMA_USERMEM_BATCH operations (each cost about as much as the copy itself
 * when alone). */
static __opal_attribute_noinline__ int usermem_batch_send(ompi_osc_newrma_module_t *module,
                                                          struct osc_newrma_usermem_batch_t *batch, unsigned int count)
{
    batch->count = 0;
    return usermem_pieces_send(module, batch->target, batch->write, batch->local, batch->remote, count, batch->bytes);
}

/* the common case, nothing batched, in line in every completing call */
static inline int usermem_batch_issue(ompi_osc_newrma_module_t *module)
{
    struct osc_newrma_usermem_batch_t *batch = module->usermem_batch;
    unsigned int count = NULL != batch ? batch->count : 0;

    return 0 == count ? OMPI_SUCCESS : usermem_batch_send(module, batch, count);
}

/* Complete every operation not complete yet: the put or get handed to a
 * target, then the batch. */
int osc_newrma_usermem_complete_pending(ompi_osc_newrma_module_t *module)
{
    int ret = osc_newrma_mailbox_flush_pending(module);
    int ret2 = usermem_batch_issue(module);
    return OMPI_SUCCESS != ret ? ret : ret2;
}

/* Queue one contiguous transfer; the batch goes out first if it is full or
 * for another target or direction. */
static int usermem_batch_add(ompi_osc_newrma_module_t *module, int target, bool write, void *local, uint64_t remote,
                             size_t bytes)
{
    struct osc_newrma_usermem_batch_t *batch = module->usermem_batch;
    unsigned int n = batch->count;
    int ret;

    if (n > 0 && (NEWRMA_USERMEM_BATCH == n || target != batch->target || write != batch->write)) {
        ret = usermem_batch_issue(module);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
        n = 0;
    }
    batch->bytes = 0 == n ? bytes : batch->bytes + bytes;
    batch->target = target;
    batch->write = write;
    batch->local[n] = (struct iovec) { .iov_base = local, .iov_len = bytes };
    batch->remote[n] = (struct iovec) { .iov_base = (void *) (uintptr_t) remote, .iov_len = bytes };
    batch->count = n + 1;
    return OMPI_SUCCESS;
}

/* A non-contiguous put or get where relays are on: cut into pieces
 * contiguous on both sides (the two datatypes' blocks cut where either
 * ends), up to NEWRMA_RELAY_SEGS at a time, each group relayed if its
 * pieces are small -- one hand-over for a vector of 1000 doubles, where one
 * process_vm_writev pays the kernel's work for every block
 * (docs/rationale.md, "Relays") -- else one system call. */
static int usermem_move_pieces(ompi_osc_newrma_module_t *module, int target, bool write, const struct iovec *local,
                               size_t nlocal, const struct iovec *remote, size_t nremote)
{
    /* cutting at both sides' ends makes fewer than nlocal + nremote pieces */
    size_t group = nlocal + nremote < NEWRMA_RELAY_SEGS ? nlocal + nremote : NEWRMA_RELAY_SEGS;
    struct iovec *mine = malloc(2 * group * sizeof(struct iovec)), *theirs = mine + group;
    size_t i = 0, j = 0, in_local = 0, in_remote = 0, bytes = 0;
    unsigned int count = 0;
    int ret = NULL != mine ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;

    while (OMPI_SUCCESS == ret && i < nlocal && j < nremote) {
        size_t left_local = local[i].iov_len - in_local, left_remote = remote[j].iov_len - in_remote;
        size_t piece = left_local < left_remote ? left_local : left_remote;

        if (piece > 0) {
            mine[count] = (struct iovec) { .iov_base = (char *) local[i].iov_base + in_local, .iov_len = piece };
            theirs[count++] = (struct iovec) { .iov_base = (char *) remote[j].iov_base + in_remote, .iov_len = piece };
            bytes += piece;
        }
        in_local += piece;
        in_remote += piece;
        if (in_local == local[i].iov_len) {
            ++i;
            in_local = 0;
        }
        if (in_remote == remote[j].iov_len) {
            ++j;
            in_remote = 0;
        }
        if (group == count || (count > 0 && (i == nlocal || j == nremote))) {
            ret = usermem_pieces_send(module, target, write, mine, theirs, count, bytes);
            count = 0;
            bytes = 0;
        }
    }
    free(mine);
    return ret;
}

static int usermem_move(ompi_osc_newrma_module_t *module, int target, bool write,
                        void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                        const osc_newrma_layout_t *ol, uint64_t taddr, int target_count,
                        struct ompi_datatype_t *target_dt, const osc_newrma_layout_t *tl)
{
    struct iovec one_local, one_remote, *local = NULL, *remote = NULL;
    size_t nlocal = 0, nremote = 0;
    pid_t pid = osc_newrma_shm_peer(&module->shm, target)->pid;
    int ret;

    if (target == module->rank) {
        void *tptr = (void *) (uintptr_t) taddr;
        return write ? osc_newrma_local_copy(tptr, target_count, target_dt, tl, origin_addr, origin_count, origin_dt, ol)
                     : osc_newrma_local_copy(origin_addr, origin_count, origin_dt, ol, tptr, target_count, target_dt, tl);
    }
    if (OPAL_LIKELY(ol->contiguous && tl->contiguous)) {
        char *local = (char *) origin_addr + ol->gap;
        uint64_t remote = taddr + (uint64_t) tl->gap;
        osc_newrma_node_way_t way = osc_newrma_node_policy_contiguous(module, ol->bytes);

        /* a target inside MPI takes a small one off our hands: no system
         * call (one at a time; the rest are batched as before) */
        if (NEWRMA_NODE_MAILBOX == way) {
            if (OMPI_SUCCESS == osc_newrma_mailbox_move(module, target, write, local, remote, ol->bytes)) {
                return OMPI_SUCCESS;
            }
            way = osc_newrma_node_policy_no_mailbox(module, ol->bytes);
        }
        if (NEWRMA_NODE_BATCH == way) {
            return usermem_batch_add(module, target, write, local, remote, ol->bytes);
        }
        /* a large one: copied by the target too, if it is inside MPI */
        if (NEWRMA_NODE_SHARED_COPY == way) {
            ret = osc_newrma_shared_copy(module, target, write, local, remote, ol->bytes);
            if (OMPI_ERR_WOULD_BLOCK != ret) {
                return ret;
            }
        }
        return osc_newrma_single_copy_at(NEWRMA_FAIL_MOVE, pid, local, remote, ol->bytes, write);
    }
    ret = osc_newrma_datatype_iovecs(origin_dt, origin_count, origin_addr, ol, &one_local, &local, &nlocal);
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_datatype_iovecs(target_dt, target_count, (void *) (uintptr_t) taddr, tl, &one_remote,
                              &remote, &nremote);
    }
    if (OMPI_SUCCESS == ret && osc_newrma_node_policy_relays(module)) {
        ret = usermem_move_pieces(module, target, write, local, nlocal, remote, nremote);
    } else if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_single_copy_transfer(pid, local, nlocal, remote, nremote, write);
    }
    if (local != &one_local) {
        free(local);
    }
    if (remote != &one_remote) {
        free(remote);
    }
    return ret;
}

/* Put (write) or get (!write) of user memory on this node. */
static int usermem_op(struct ompi_win_t *win, bool write, void *origin_addr, int origin_count,
                      struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                      int target_count, struct ompi_datatype_t *target_dt)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_layout_t ol, tl;
    uint64_t taddr;
    int ret = osc_newrma_op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    NEWRMA_TRACE_OP(module, write ? "put" : "get", target, target_disp, target_count, target_dt);
    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = osc_newrma_usermem_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return usermem_move(module, target, write, origin_addr, origin_count, origin_dt, &ol,
                        taddr, target_count, target_dt, &tl);
}

static int usermem_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                       int target, ptrdiff_t target_disp, int target_count,
                       struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return usermem_op(win, true, (void *) origin_addr, origin_count, origin_dt, target, target_disp,
                      target_count, target_dt);
}

static int usermem_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                       int target, ptrdiff_t target_disp, int target_count,
                       struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return usermem_op(win, false, origin_addr, origin_count, origin_dt, target, target_disp,
                      target_count, target_dt);
}

/* Request-based put/get: the request is complete when the call
 * returns, so the operation cannot wait in the batch. */
static int usermem_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                        struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = osc_newrma_rput(oa, oc, odt, target, td, tc, tdt, win, request);
    return OMPI_SUCCESS != ret ? ret : osc_newrma_usermem_complete_pending(osc_newrma_module(win));
}

static int usermem_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                        struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = osc_newrma_rget(oa, oc, odt, target, td, tc, tdt, win, request);
    return OMPI_SUCCESS != ret ? ret : osc_newrma_usermem_complete_pending(osc_newrma_module(win));
}

/* This table's synchronizations that complete operations complete the
 * handed-over operation and issue the batch first (the direct table's have
 * no such step). */
#define NEWRMA_USERMEM_COMPLETING(NAME, PARAMS, ARGS)                    \
static int usermem_##NAME PARAMS                                         \
{                                                                        \
    int ret = osc_newrma_usermem_complete_pending(osc_newrma_module(win));          \
    return OMPI_SUCCESS != ret ? ret : ompi_osc_newrma_##NAME ARGS;      \
}
NEWRMA_USERMEM_COMPLETING(fence, (int assert, struct ompi_win_t *win), (assert, win))
NEWRMA_USERMEM_COMPLETING(unlock, (int target, struct ompi_win_t *win), (target, win))
NEWRMA_USERMEM_COMPLETING(unlock_all, (struct ompi_win_t *win), (win))
NEWRMA_USERMEM_COMPLETING(flush, (int target, struct ompi_win_t *win), (target, win))
NEWRMA_USERMEM_COMPLETING(flush_all, (struct ompi_win_t *win), (win))
NEWRMA_USERMEM_COMPLETING(flush_local, (int target, struct ompi_win_t *win), (target, win))
NEWRMA_USERMEM_COMPLETING(flush_local_all, (struct ompi_win_t *win), (win))

/* MPI_Win_complete completes operations at the origin only: a put or an
 * accumulate handed to a target may stay in its mailbox until the target's
 * MPI_Win_wait, which applies it (a state check first, so that an
 * erroneous call in another epoch releases nothing).  An operation that
 * owes an answer is collected after the completion is signalled: the
 * target's wait serves it then at the latest, in the same turn in which it
 * sees the completion. */
static int usermem_complete(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_complete_grant(module);
    int ret2;

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    ret = NEWRMA_WIN_PSCW_GRANTED == module->state ? osc_newrma_mailbox_complete_epoch(module) : OMPI_SUCCESS;
    ret2 = usermem_batch_issue(module);

    ret = OMPI_SUCCESS != ret ? ret : ret2;
    ret = OMPI_SUCCESS != ret ? ret : osc_newrma_complete_signal_epoch(module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* still in the epoch: a withdrawn answer is done by single copy */
    ret = osc_newrma_mailbox_collect_answer(module);
    osc_newrma_complete_close_epoch(module);
    return ret;
}

/* Window buffers are the processes' own memory: single-copy syscalls. */
const ompi_osc_base_module_t ompi_osc_newrma_usermem_table = {
    NEWRMA_COMMON_ENTRIES,
    .osc_put = usermem_put,
    .osc_get = usermem_get,
    .osc_rput = usermem_rput,
    .osc_rget = usermem_rget,
    .osc_fence = usermem_fence,
    .osc_complete = usermem_complete,
    .osc_unlock = usermem_unlock,
    .osc_unlock_all = usermem_unlock_all,
    .osc_flush = usermem_flush,
    .osc_flush_all = usermem_flush_all,
    .osc_flush_local = usermem_flush_local,
    .osc_flush_local_all = usermem_flush_local_all,
};
