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
#include "osc_newrma_cma.h"

/* Where a datatype's bytes are relative to a buffer, and how many. */
typedef struct {
    ptrdiff_t gap;        /* offset of the first byte (may be negative) */
    size_t span;          /* distance from the first to one past the last byte */
    size_t bytes;         /* bytes of data (count x type size) */
    bool contiguous;
    bool overflows;       /* the span does not fit an address: never in range */
} newrma_layout_t;

/* The bytes `count` elements touch: [true_lb + min(0, (count-1) x extent),
 * true_lb + true_extent + max(0, (count-1) x extent)).  Computed with
 * overflow checks, since a resized type may have any extent. */
static inline void datatype_layout(struct ompi_datatype_t *dt, int count, newrma_layout_t *layout)
{
    ptrdiff_t lb, extent, true_lb, true_extent, stride_total, first, last;
    size_t type_size;

    ompi_datatype_type_size(dt, &type_size);
    layout->bytes = type_size * (size_t) count;
    layout->contiguous = ompi_datatype_is_contiguous_memory_layout(dt, count);
    layout->overflows = false;
    layout->gap = 0;
    layout->span = 0;
    if (OPAL_UNLIKELY(0 == count || 0 == type_size)) {
        return;
    }
    ompi_datatype_get_extent(dt, &lb, &extent);
    ompi_datatype_get_true_extent(dt, &true_lb, &true_extent);
    if (OPAL_UNLIKELY(__builtin_mul_overflow((ptrdiff_t) (count - 1), extent, &stride_total)
                      || __builtin_add_overflow(true_lb, stride_total < 0 ? stride_total : 0, &first)
                      || __builtin_add_overflow(true_lb, true_extent, &last)
                      || __builtin_add_overflow(last, stride_total > 0 ? stride_total : 0, &last))) {
        layout->overflows = true;
        return;
    }
    layout->gap = first;
    layout->span = (size_t) (last - first);
}

/* Byte offset of target data in a window of `size` bytes, or RMA_RANGE. */
static inline int window_offset(ptrdiff_t disp, int disp_unit, uint64_t size,
                                const newrma_layout_t *target, ptrdiff_t *offset)
{
    if (OPAL_UNLIKELY(disp < 0 || (disp_unit > 0 && disp > PTRDIFF_MAX / disp_unit))) {
        return MPI_ERR_RMA_RANGE;
    }
    *offset = disp * disp_unit;
    if (0 == target->bytes) {
        return OMPI_SUCCESS;
    }
    ptrdiff_t first;
    if (OPAL_UNLIKELY(target->overflows || __builtin_add_overflow(*offset, target->gap, &first)
                      || first < 0 || target->span > size || (uint64_t) first > size - target->span)) {
        return MPI_ERR_RMA_RANGE;
    }
    return OMPI_SUCCESS;
}

/* Checks shared by every put/get: epoch, matching sizes.  Fills both layouts. */
static inline int op_check(ompi_osc_newrma_module_t *module, int target,
                           struct ompi_datatype_t *origin_dt, int origin_count, newrma_layout_t *origin,
                           struct ompi_datatype_t *target_dt, int target_count, newrma_layout_t *tgt)
{
    int ret = osc_newrma_epoch_access(module, target);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    datatype_layout(origin_dt, origin_count, origin);
    datatype_layout(target_dt, target_count, tgt);
    /* matching type signatures have the same size; anything else would read
     * or write past one of the buffers */
    return OPAL_LIKELY(origin->bytes == tgt->bytes) ? OMPI_SUCCESS : MPI_ERR_TYPE;
}

/* Copy within this address space, any datatypes. */
static inline int local_copy(void *dst, int dst_count, struct ompi_datatype_t *dst_dt, const newrma_layout_t *dl,
                             const void *src, int src_count, struct ompi_datatype_t *src_dt, const newrma_layout_t *sl)
{
    if (OPAL_LIKELY(dl->contiguous && sl->contiguous)) {
        memcpy((char *) dst + dl->gap, (const char *) src + sl->gap, sl->bytes);
        return OMPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(src, src_count, src_dt, dst, dst_count, dst_dt);
}

/* ------------------------------------------------------------------ */
/* direct table                                                        */
/* ------------------------------------------------------------------ */

/* Local address of the target buffer in the segment. */
static inline int direct_target_addr(ompi_osc_newrma_module_t *module, int target, ptrdiff_t disp,
                                     const newrma_layout_t *tgt, char **addr)
{
    const osc_newrma_peer_info_t *peer = osc_newrma_shm_peer(&module->shm, target);
    ptrdiff_t offset;
    int ret = window_offset(disp, peer->disp_unit, peer->size, tgt, &offset);

    *addr = module->shm.base + peer->data_offset + offset;
    return ret;
}

static int direct_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                      int target, ptrdiff_t target_disp, int target_count,
                      struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    newrma_layout_t ol, tl;
    char *taddr;
    int ret = op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = direct_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return local_copy(taddr, target_count, target_dt, &tl, origin_addr, origin_count, origin_dt, &ol);
}

static int direct_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                      int target, ptrdiff_t target_disp, int target_count,
                      struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    newrma_layout_t ol, tl;
    char *taddr;
    int ret = op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = direct_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return local_copy(origin_addr, origin_count, origin_dt, &ol, taddr, target_count, target_dt, &tl);
}

/* ------------------------------------------------------------------ */
/* cma table                                                           */
/* ------------------------------------------------------------------ */

/* A datatype's bytes as a scatter list (contiguous runs, in order).  The
 * address need not be mapped here: the convertor only computes addresses. */
static int datatype_iovecs(struct ompi_datatype_t *dt, int count, const void *addr,
                           const newrma_layout_t *layout, struct iovec *single,
                           struct iovec **iov, size_t *n)
{
    opal_convertor_t convertor;
    size_t capacity = 64, used = 0;
    struct iovec *list;
    int done = 0;

    if (layout->contiguous) {
        single->iov_base = (char *) addr + layout->gap;
        single->iov_len = layout->bytes;
        *iov = single;
        *n = 1;
        return OMPI_SUCCESS;
    }
    list = malloc(capacity * sizeof(struct iovec));
    if (NULL == list) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, (size_t) count,
                                             addr, 0, &convertor);
    while (!done) {
        uint32_t chunk;
        size_t length;
        if (used == capacity) {
            struct iovec *grown = realloc(list, 2 * capacity * sizeof(struct iovec));
            if (NULL == grown) {
                OBJ_DESTRUCT(&convertor);
                free(list);
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            list = grown;
            capacity *= 2;
        }
        chunk = (uint32_t) (capacity - used);
        done = opal_convertor_raw(&convertor, list + used, &chunk, &length);
        used += chunk;
    }
    OBJ_DESTRUCT(&convertor);
    *iov = list;
    *n = used;
    return OMPI_SUCCESS;
}

/* Target buffer address in the target's address space, range checked. */
static inline int cma_target_addr(ompi_osc_newrma_module_t *module, int target, ptrdiff_t disp,
                                  const newrma_layout_t *tgt, uint64_t *addr)
{
    const osc_newrma_peer_info_t *peer = osc_newrma_shm_peer(&module->shm, target);
    ptrdiff_t offset;
    int ret;

    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        /* dynamic windows address by absolute address (MPI_Get_address) */
        *addr = (uint64_t) disp;
        if (OPAL_UNLIKELY(tgt->overflows)) {
            return MPI_ERR_RMA_RANGE;
        }
        return osc_newrma_dyn_check_range(module, target, (uint64_t) disp + (uint64_t) tgt->gap, tgt->span);
    }
    ret = window_offset(disp, peer->disp_unit, peer->size, tgt, &offset);
    *addr = peer->base + (uint64_t) offset;
    return ret;
}

static int cma_move(ompi_osc_newrma_module_t *module, int target, bool write,
                    void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                    const newrma_layout_t *ol, uint64_t taddr, int target_count,
                    struct ompi_datatype_t *target_dt, const newrma_layout_t *tl)
{
    struct iovec one_local, one_remote, *local = NULL, *remote = NULL;
    size_t nlocal = 0, nremote = 0;
    pid_t pid = osc_newrma_shm_peer(&module->shm, target)->pid;
    int ret;

    if (target == module->rank) {
        void *tptr = (void *) (uintptr_t) taddr;
        return write ? local_copy(tptr, target_count, target_dt, tl, origin_addr, origin_count, origin_dt, ol)
                     : local_copy(origin_addr, origin_count, origin_dt, ol, tptr, target_count, target_dt, tl);
    }
    if (OPAL_LIKELY(ol->contiguous && tl->contiguous)) {
        return osc_newrma_cma_copy(pid, (char *) origin_addr + ol->gap, taddr + (uint64_t) tl->gap,
                                   ol->bytes, write);
    }
    ret = datatype_iovecs(origin_dt, origin_count, origin_addr, ol, &one_local, &local, &nlocal);
    if (OMPI_SUCCESS == ret) {
        ret = datatype_iovecs(target_dt, target_count, (void *) (uintptr_t) taddr, tl, &one_remote,
                              &remote, &nremote);
    }
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_cma_transfer(pid, local, nlocal, remote, nremote, write);
    }
    if (local != &one_local) {
        free(local);
    }
    if (remote != &one_remote) {
        free(remote);
    }
    return ret;
}

static int cma_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                   int target, ptrdiff_t target_disp, int target_count,
                   struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    newrma_layout_t ol, tl;
    uint64_t taddr;
    int ret = op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = cma_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return cma_move(module, target, true, (void *) origin_addr, origin_count, origin_dt, &ol,
                    taddr, target_count, target_dt, &tl);
}

static int cma_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                   int target, ptrdiff_t target_disp, int target_count,
                   struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    newrma_layout_t ol, tl;
    uint64_t taddr;
    int ret = op_check(module, target, origin_dt, origin_count, &ol, target_dt, target_count, &tl);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = cma_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret || 0 == tl.bytes)) {
        return ret;
    }
    return cma_move(module, target, false, origin_addr, origin_count, origin_dt, &ol,
                    taddr, target_count, target_dt, &tl);
}

/* ------------------------------------------------------------------ */
/* Operations of later milestones                                      */
/* ------------------------------------------------------------------ */

/* Accumulate-family and request-based operations are not provided yet
 * (README, "What works today").  They refuse with a clear MPI error class
 * after the same epoch check every operation makes, never touching memory. */
static int not_yet(struct ompi_win_t *win, int target)
{
    int ret = osc_newrma_epoch_access(osc_newrma_module(win), target);
    return OMPI_SUCCESS != ret ? ret : MPI_ERR_UNSUPPORTED_OPERATION;
}

static int unsupported_accumulate(const void *oa, int oc, struct ompi_datatype_t *odt, int target,
                                  ptrdiff_t td, int tc, struct ompi_datatype_t *tdt,
                                  struct ompi_op_t *op, struct ompi_win_t *win)
{
    (void) oa; (void) oc; (void) odt; (void) td; (void) tc; (void) tdt; (void) op;
    return not_yet(win, target);
}

static int unsupported_cas(const void *oa, const void *ca, void *ra, struct ompi_datatype_t *dt,
                           int target, ptrdiff_t td, struct ompi_win_t *win)
{
    (void) oa; (void) ca; (void) ra; (void) dt; (void) td;
    return not_yet(win, target);
}

static int unsupported_fetch_and_op(const void *oa, void *ra, struct ompi_datatype_t *dt, int target,
                                    ptrdiff_t td, struct ompi_op_t *op, struct ompi_win_t *win)
{
    (void) oa; (void) ra; (void) dt; (void) td; (void) op;
    return not_yet(win, target);
}

static int unsupported_get_accumulate(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra,
                                      int rc, struct ompi_datatype_t *rdt, int target, ptrdiff_t td,
                                      int tc, struct ompi_datatype_t *tdt, struct ompi_op_t *op,
                                      struct ompi_win_t *win)
{
    (void) oa; (void) oc; (void) odt; (void) ra; (void) rc; (void) rdt; (void) td; (void) tc;
    (void) tdt; (void) op;
    return not_yet(win, target);
}

static int unsupported_rput(const void *oa, int oc, struct ompi_datatype_t *odt, int target,
                            ptrdiff_t td, int tc, struct ompi_datatype_t *tdt, struct ompi_win_t *win,
                            struct ompi_request_t **request)
{
    (void) oa; (void) oc; (void) odt; (void) td; (void) tc; (void) tdt;
    *request = MPI_REQUEST_NULL;
    return not_yet(win, target);
}

static int unsupported_rget(void *oa, int oc, struct ompi_datatype_t *odt, int target, ptrdiff_t td,
                            int tc, struct ompi_datatype_t *tdt, struct ompi_win_t *win,
                            struct ompi_request_t **request)
{
    (void) oa; (void) oc; (void) odt; (void) td; (void) tc; (void) tdt;
    *request = MPI_REQUEST_NULL;
    return not_yet(win, target);
}

static int unsupported_raccumulate(const void *oa, int oc, struct ompi_datatype_t *odt, int target,
                                   ptrdiff_t td, int tc, struct ompi_datatype_t *tdt,
                                   struct ompi_op_t *op, struct ompi_win_t *win,
                                   struct ompi_request_t **request)
{
    *request = MPI_REQUEST_NULL;
    return unsupported_accumulate(oa, oc, odt, target, td, tc, tdt, op, win);
}

static int unsupported_rget_accumulate(const void *oa, int oc, struct ompi_datatype_t *odt, void *ra,
                                       int rc, struct ompi_datatype_t *rdt, int target, ptrdiff_t td,
                                       int tc, struct ompi_datatype_t *tdt, struct ompi_op_t *op,
                                       struct ompi_win_t *win, struct ompi_request_t **request)
{
    *request = MPI_REQUEST_NULL;
    return unsupported_get_accumulate(oa, oc, odt, ra, rc, rdt, target, td, tc, tdt, op, win);
}

/* ------------------------------------------------------------------ */
/* The function tables                                                 */
/* ------------------------------------------------------------------ */

#define NEWRMA_COMMON_ENTRIES                                           \
    .osc_win_shared_query = ompi_osc_newrma_shared_query,               \
    .osc_win_attach = ompi_osc_newrma_attach,                           \
    .osc_win_detach = ompi_osc_newrma_detach,                           \
    .osc_free = ompi_osc_newrma_free,                                   \
    .osc_accumulate = unsupported_accumulate,                           \
    .osc_compare_and_swap = unsupported_cas,                            \
    .osc_fetch_and_op = unsupported_fetch_and_op,                       \
    .osc_get_accumulate = unsupported_get_accumulate,                   \
    .osc_rput = unsupported_rput,                                       \
    .osc_rget = unsupported_rget,                                       \
    .osc_raccumulate = unsupported_raccumulate,                         \
    .osc_rget_accumulate = unsupported_rget_accumulate,                 \
    .osc_fence = ompi_osc_newrma_fence,                                 \
    .osc_start = ompi_osc_newrma_start,                                 \
    .osc_complete = ompi_osc_newrma_complete,                           \
    .osc_post = ompi_osc_newrma_post,                                   \
    .osc_wait = ompi_osc_newrma_wait,                                   \
    .osc_test = ompi_osc_newrma_test,                                   \
    .osc_lock = ompi_osc_newrma_lock,                                   \
    .osc_unlock = ompi_osc_newrma_unlock,                               \
    .osc_lock_all = ompi_osc_newrma_lock_all,                           \
    .osc_unlock_all = ompi_osc_newrma_unlock_all,                       \
    .osc_sync = ompi_osc_newrma_sync,                                   \
    .osc_flush = ompi_osc_newrma_flush,                                 \
    .osc_flush_all = ompi_osc_newrma_flush_all,                         \
    .osc_flush_local = ompi_osc_newrma_flush_local,                     \
    .osc_flush_local_all = ompi_osc_newrma_flush_local_all

/* Every window buffer of the node is in the segment: load/store. */
const ompi_osc_base_module_t ompi_osc_newrma_direct_table = {
    NEWRMA_COMMON_ENTRIES,
    .osc_put = direct_put,
    .osc_get = direct_get,
};

/* Window buffers are the processes' own memory: single-copy syscalls. */
const ompi_osc_base_module_t ompi_osc_newrma_cma_table = {
    NEWRMA_COMMON_ENTRIES,
    .osc_put = cma_put,
    .osc_get = cma_get,
};
