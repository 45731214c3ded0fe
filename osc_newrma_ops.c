/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: RMA operations, one implementation per function table.
 *
 *  direct: the target's window memory is in the node segment, mapped here;
 *          an operation is a load/store (memcpy, or Open MPI's datatype
 *          engine for non-contiguous types).
 *  cma:    the target's window memory is private to the target; an operation
 *          is one process_vm_readv/writev (single copy, no target help).
 *
 * Every operation completes before it returns, which is what lets flush and
 * the closing synchronizations be pure memory barriers on one node.
 */

#include "ompi_config.h"

#include <stdint.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "ompi/datatype/ompi_datatype.h"

#include "osc_newrma.h"
#include "osc_newrma_single_copy.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_relay.h"
#include "ompi/request/request.h"

/* Checks shared by every put/get: epoch, matching sizes.  Fills both layouts. */
static inline int op_check(ompi_osc_newrma_module_t *module, int target,
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

/* ------------------------------------------------------------------ */
/* direct table                                                        */
/* ------------------------------------------------------------------ */

/* Put (write) or get (!write) through the mapped segment. */
static inline int direct_move(struct ompi_win_t *win, bool write, void *origin_addr, int origin_count,
                              struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                              int target_count, struct ompi_datatype_t *target_dt)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_layout_t ol, tl;
    char *taddr;
    int ret = op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

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
/* cma table                                                           */
/* ------------------------------------------------------------------ */

_Static_assert(NEWRMA_CMA_BATCH <= NEWRMA_RELAY_SEGS, "a batch is one relay");

/* Is a group of pieces worth a relay?  From assist_relay_bytes, and with
 * more ranks than cores only a large group (a hand-over then costs a
 * context switch or two) -- unless the target waits in MPI_Win_wait for
 * this very epoch, and so takes the relay at once. */
static inline bool cma_pieces_relayed(const ompi_osc_newrma_module_t *module, unsigned int count, size_t bytes)
{
    return bytes >= module->assist_relay_bytes
           && (bytes >= module->assist_relay_batch_bytes || count >= module->assist_relay_batch_pieces
               || NEWRMA_WIN_PSCW_GRANTED == module->state);
}

/* A group of contiguous pieces (a batch, or part of a derived datatype's
 * transfer): relayed to a target inside MPI, else one system call. */
static int cma_pieces_send(ompi_osc_newrma_module_t *module, int target, bool write, struct iovec *mine,
                           struct iovec *theirs, unsigned int count, size_t bytes)
{
    int ret = OMPI_ERR_WOULD_BLOCK;

    if (cma_pieces_relayed(module, count, bytes)) {
        ret = osc_newrma_assist_relay(module, target, write, mine, theirs, count, bytes);
    }
    return OMPI_ERR_WOULD_BLOCK != ret ? ret
        : osc_newrma_single_copy_transfer(osc_newrma_shm_peer(&module->shm, target)->pid, mine, count, theirs, count, write);
}

/* Issue the batch: one relay to a target inside MPI, where the kernel's
 * work per segment makes the system call dear (64 puts of 1 KiB: 2.6 GB/s
 * by process_vm_writev on Linux 6.18), else one system call for up to
 * NEWRMA_CMA_BATCH operations (each cost about as much as the copy itself
 * when alone). */
static __opal_attribute_noinline__ int cma_batch_send(ompi_osc_newrma_module_t *module,
                                                      struct osc_newrma_cma_batch_t *batch, unsigned int count)
{
    batch->count = 0;
    return cma_pieces_send(module, batch->target, batch->write, batch->local, batch->remote, count, batch->bytes);
}

/* the common case, nothing batched, in line in every completing call */
static inline int cma_batch_issue(ompi_osc_newrma_module_t *module)
{
    struct osc_newrma_cma_batch_t *batch = module->cma_batch;
    unsigned int count = NULL != batch ? batch->count : 0;

    return 0 == count ? OMPI_SUCCESS : cma_batch_send(module, batch, count);
}

/* Complete every operation not complete yet: the put or get handed to a
 * target, then the batch. */
static int cma_complete_pending(ompi_osc_newrma_module_t *module)
{
    int ret = osc_newrma_assist_flush_pending(module);
    int ret2 = cma_batch_issue(module);
    return OMPI_SUCCESS != ret ? ret : ret2;
}

/* Queue one contiguous transfer; the batch goes out first if it is full or
 * for another target or direction. */
static int cma_batch_add(ompi_osc_newrma_module_t *module, int target, bool write, void *local, uint64_t remote,
                         size_t bytes)
{
    struct osc_newrma_cma_batch_t *batch = module->cma_batch;
    unsigned int n = batch->count;
    int ret;

    if (n > 0 && (NEWRMA_CMA_BATCH == n || target != batch->target || write != batch->write)) {
        ret = cma_batch_issue(module);
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
 * ends), relayed up to NEWRMA_RELAY_SEGS at a time -- one hand-over for a
 * vector of 1000 doubles, where one process_vm_writev pays the kernel's
 * work for every block (470 us on Linux 6.18). */
static int cma_move_pieces(ompi_osc_newrma_module_t *module, int target, bool write, const struct iovec *local,
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
            ret = cma_pieces_send(module, target, write, mine, theirs, count, bytes);
            count = 0;
            bytes = 0;
        }
    }
    free(mine);
    return ret;
}

static int cma_move(ompi_osc_newrma_module_t *module, int target, bool write,
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
        /* a target inside MPI takes a small one off our hands: no system
         * call (one at a time; the rest are batched as before) */
        if (ol->bytes <= module->assist_move_bytes
            && OMPI_SUCCESS == osc_newrma_assist_move(module, target, write, local, remote, ol->bytes)) {
            return OMPI_SUCCESS;
        }
        /* small ones, and any size where relays are on: the batch goes as
         * one stream through the relay slots if its target is inside MPI
         * (one hand-over for all of them), else as one system call */
        if (ol->bytes <= module->cma_batch_bytes || ol->bytes >= module->assist_relay_bytes) {
            return cma_batch_add(module, target, write, local, remote, ol->bytes);
        }
        /* a large one: copied by the target too, if it is inside MPI */
        if (ol->bytes >= module->assist_share_bytes) {
            ret = osc_newrma_assist_share(module, target, write, local, remote, ol->bytes);
            if (OMPI_ERR_WOULD_BLOCK != ret) {
                return ret;
            }
        }
        return osc_newrma_single_copy(pid, local, remote, ol->bytes, write);
    }
    ret = osc_newrma_datatype_iovecs(origin_dt, origin_count, origin_addr, ol, &one_local, &local, &nlocal);
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_datatype_iovecs(target_dt, target_count, (void *) (uintptr_t) taddr, tl, &one_remote,
                              &remote, &nremote);
    }
    if (OMPI_SUCCESS == ret && SIZE_MAX != module->assist_relay_bytes) {
        ret = cma_move_pieces(module, target, write, local, nlocal, remote, nremote);
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

/* Put (write) or get (!write) through single-copy syscalls. */
static int cma_op(struct ompi_win_t *win, bool write, void *origin_addr, int origin_count,
                  struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                  int target_count, struct ompi_datatype_t *target_dt)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_layout_t ol, tl;
    uint64_t taddr;
    int ret = op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = osc_newrma_usermem_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return cma_move(module, target, write, origin_addr, origin_count, origin_dt, &ol,
                    taddr, target_count, target_dt, &tl);
}

static int cma_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                   int target, ptrdiff_t target_disp, int target_count,
                   struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return cma_op(win, true, (void *) origin_addr, origin_count, origin_dt, target, target_disp,
                  target_count, target_dt);
}

static int cma_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                   int target, ptrdiff_t target_disp, int target_count,
                   struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return cma_op(win, false, origin_addr, origin_count, origin_dt, target, target_disp,
                  target_count, target_dt);
}

/* ------------------------------------------------------------------ */
/* request-based operations                                            */
/* ------------------------------------------------------------------ */

/* MPI allows request-based operations only in passive-target epochs.  The
 * operation completes before the call returns, so the request handed back
 * is Open MPI's already-complete empty request. */
static int passive_epoch_check(struct ompi_win_t *win, struct ompi_request_t **request)
{
    osc_newrma_win_state_t state = osc_newrma_module(win)->state;

    *request = MPI_REQUEST_NULL;
    if (NEWRMA_WIN_PER_TARGET != state && state < NEWRMA_WIN_LOCK_ALL_CALLED) {
        return MPI_ERR_RMA_SYNC;
    }
    return OMPI_SUCCESS;
}

static int completed(int ret, struct ompi_request_t **request)
{
    if (OMPI_SUCCESS == ret) {
        *request = &ompi_request_empty;
    }
    return ret;
}

static int newrma_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                       struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = passive_epoch_check(win, request);
    return OMPI_SUCCESS != ret ? ret
        : completed(osc_newrma_module(win)->super.osc_put(oa, oc, odt, target, td, tc, tdt, win), request);
}

static int newrma_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                       struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = passive_epoch_check(win, request);
    return OMPI_SUCCESS != ret ? ret
        : completed(osc_newrma_module(win)->super.osc_get(oa, oc, odt, target, td, tc, tdt, win), request);
}

/* Single-copy request-based put/get: the request is complete when the call
 * returns, so the operation cannot wait in the batch. */
static int cma_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                    struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = newrma_rput(oa, oc, odt, target, td, tc, tdt, win, request);
    return OMPI_SUCCESS != ret ? ret : cma_complete_pending(osc_newrma_module(win));
}

static int cma_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td, int tc,
                    struct ompi_datatype_t *tdt, struct ompi_win_t *win, struct ompi_request_t **request)
{
    int ret = newrma_rget(oa, oc, odt, target, td, tc, tdt, win, request);
    return OMPI_SUCCESS != ret ? ret : cma_complete_pending(osc_newrma_module(win));
}

static int newrma_raccumulate(const void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td,
                              int tc, struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                              struct ompi_request_t **request)
{
    int ret = passive_epoch_check(win, request);
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_accumulate(oa, oc, odt, target, td, tc, tdt, op, win);
    }
    /* complete when it returns: not left pending with a target */
    return completed(OMPI_SUCCESS != ret ? ret : osc_newrma_assist_flush_pending(osc_newrma_module(win)), request);
}

static int newrma_rget_accumulate(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra, int rc,
                                  struct ompi_datatype_t *rdt, int target, ptrdiff_t td, int tc,
                                  struct ompi_datatype_t *tdt, struct ompi_op_t *op, struct ompi_win_t *win,
                                  struct ompi_request_t **request)
{
    int ret = passive_epoch_check(win, request);
    return OMPI_SUCCESS != ret ? ret
        : completed(osc_newrma_get_accumulate(oa, oc, odt, ra, rc, rdt, target, td, tc, tdt, op, win), request);
}

/* ------------------------------------------------------------------ */
/* The function tables                                                 */
/* ------------------------------------------------------------------ */

#define NEWRMA_COMMON_ENTRIES                                           \
    .osc_win_shared_query = ompi_osc_newrma_shared_query,               \
    .osc_win_attach = ompi_osc_newrma_attach,                           \
    .osc_win_detach = ompi_osc_newrma_detach,                           \
    .osc_free = ompi_osc_newrma_free,                                   \
    .osc_accumulate = osc_newrma_accumulate,                            \
    .osc_compare_and_swap = osc_newrma_compare_and_swap,                \
    .osc_fetch_and_op = osc_newrma_fetch_and_op,                        \
    .osc_get_accumulate = osc_newrma_get_accumulate,                    \
    .osc_raccumulate = newrma_raccumulate,                              \
    .osc_rget_accumulate = newrma_rget_accumulate,                      \
    .osc_start = ompi_osc_newrma_start,                                 \
    .osc_post = ompi_osc_newrma_post,                                   \
    .osc_wait = ompi_osc_newrma_wait,                                   \
    .osc_test = ompi_osc_newrma_test,                                   \
    .osc_lock = ompi_osc_newrma_lock,                                   \
    .osc_lock_all = ompi_osc_newrma_lock_all,                           \
    .osc_sync = ompi_osc_newrma_sync

/* Every window buffer of the node is in the segment: load/store. */
const ompi_osc_base_module_t ompi_osc_newrma_direct_table = {
    NEWRMA_COMMON_ENTRIES,
    .osc_put = direct_put,
    .osc_get = direct_get,
    .osc_rput = newrma_rput,
    .osc_rget = newrma_rget,
    .osc_fence = ompi_osc_newrma_fence,
    .osc_complete = ompi_osc_newrma_complete,
    .osc_unlock = ompi_osc_newrma_unlock,
    .osc_unlock_all = ompi_osc_newrma_unlock_all,
    .osc_flush = ompi_osc_newrma_flush,
    .osc_flush_all = ompi_osc_newrma_flush_all,
    .osc_flush_local = ompi_osc_newrma_flush_local,
    .osc_flush_local_all = ompi_osc_newrma_flush_local_all,
};

/* The single-copy table's synchronizations that complete operations
 * complete the handed-over put or get and issue the batch first (so the direct table's have no such step). */
#define NEWRMA_CMA_COMPLETING(NAME, PARAMS, ARGS)                        \
static int cma_##NAME PARAMS                                             \
{                                                                        \
    int ret = cma_complete_pending(osc_newrma_module(win));  \
    return OMPI_SUCCESS != ret ? ret : ompi_osc_newrma_##NAME ARGS;      \
}
NEWRMA_CMA_COMPLETING(fence, (int assert, struct ompi_win_t *win), (assert, win))
NEWRMA_CMA_COMPLETING(unlock, (int target, struct ompi_win_t *win), (target, win))
NEWRMA_CMA_COMPLETING(unlock_all, (struct ompi_win_t *win), (win))
NEWRMA_CMA_COMPLETING(flush, (int target, struct ompi_win_t *win), (target, win))
NEWRMA_CMA_COMPLETING(flush_all, (struct ompi_win_t *win), (win))
NEWRMA_CMA_COMPLETING(flush_local, (int target, struct ompi_win_t *win), (target, win))
NEWRMA_CMA_COMPLETING(flush_local_all, (struct ompi_win_t *win), (win))

/* MPI_Win_complete completes operations at the origin only: a put or an
 * accumulate handed to a target may stay in its mailbox until the target's
 * MPI_Win_wait, which applies it (a state check first, so that an
 * erroneous call in another epoch releases nothing).  An operation that
 * owes an answer is collected after the completion is signalled: the
 * target's wait serves it then at the latest, in the same turn in which it
 * sees the completion. */
static int cma_complete(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_complete_grant(module);
    int ret2;

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    ret = NEWRMA_WIN_PSCW_GRANTED == module->state ? osc_newrma_assist_complete_epoch(module) : OMPI_SUCCESS;
    ret2 = cma_batch_issue(module);

    ret = OMPI_SUCCESS != ret ? ret : ret2;
    ret = OMPI_SUCCESS != ret ? ret : osc_newrma_complete_signal_epoch(module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* still in the epoch: a withdrawn answer is done by single copy */
    ret = osc_newrma_assist_collect_answer(module);
    osc_newrma_complete_close_epoch(module);
    return ret;
}

/* Window buffers are the processes' own memory: single-copy syscalls. */
const ompi_osc_base_module_t ompi_osc_newrma_usermem_table = {
    NEWRMA_COMMON_ENTRIES,
    .osc_put = cma_put,
    .osc_get = cma_get,
    .osc_rput = cma_rput,
    .osc_rget = cma_rget,
    .osc_fence = cma_fence,
    .osc_complete = cma_complete,
    .osc_unlock = cma_unlock,
    .osc_unlock_all = cma_unlock_all,
    .osc_flush = cma_flush,
    .osc_flush_all = cma_flush_all,
    .osc_flush_local = cma_flush_local,
    .osc_flush_local_all = cma_flush_local_all,
};
