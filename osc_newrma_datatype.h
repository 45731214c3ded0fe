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
 * osc/newrma: where an operation's bytes are.  Datatype layouts (with
 * overflow-safe spans), the target range check, target addresses for each
 * path, scatter lists from Open MPI's datatype engine, and local copies.
 * Shared by put/get (osc_newrma_ops.c, osc_newrma_usermem.c) and the
 * accumulate family (osc_newrma_acc.c).
 */

#ifndef OSC_NEWRMA_DATATYPE_H
#define OSC_NEWRMA_DATATYPE_H

#include "ompi_config.h"

#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "ompi/datatype/ompi_datatype.h"

#include "osc_newrma.h"

/* Where a datatype's bytes are relative to a buffer, and how many. */
typedef struct {
    ptrdiff_t gap;        /* offset of the first byte (may be negative) */
    size_t span;          /* distance from the first to one past the last byte */
    size_t bytes;         /* bytes of data (count x type size) */
    bool contiguous;
    bool overflows;       /* the span does not fit an address: never in range */
} osc_newrma_layout_t;

/* The bytes `count` elements touch: [true_lb + min(0, (count-1) x extent),
 * true_lb + true_extent + max(0, (count-1) x extent)).  Computed with
 * overflow checks, since a resized type may have any extent. */
static inline void osc_newrma_datatype_layout(struct ompi_datatype_t *dt, int count, osc_newrma_layout_t *layout)
{
    ptrdiff_t lb, extent, true_lb, true_extent, stride_total, first, last;
    size_t type_size;

    /* the common case, a type without gaps that starts at its address (every
     * predefined type but the pair types, contiguous derived types): its
     * data is one block of count x size bytes at offset 0 */
    if (OPAL_LIKELY((dt->super.flags & OPAL_DATATYPE_FLAG_NO_GAPS) && 0 == dt->super.true_lb && count >= 0)) {
        layout->contiguous = true;
        layout->gap = 0;
        layout->overflows = __builtin_mul_overflow(dt->super.size, (size_t) count, &layout->bytes)
                            || layout->bytes > (size_t) PTRDIFF_MAX;
        layout->span = layout->bytes;
        return;
    }
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
static inline int osc_newrma_window_offset(ptrdiff_t disp, int disp_unit, uint64_t size,
                                const osc_newrma_layout_t *target, ptrdiff_t *offset)
{
    /* an overflow check, not a division: this is on every operation's path */
    if (OPAL_UNLIKELY(disp < 0 || __builtin_mul_overflow(disp, (ptrdiff_t) disp_unit, offset))) {
        return OMPI_ERR_RMA_RANGE;
    }
    if (0 == target->bytes) {
        return OMPI_SUCCESS;
    }
    ptrdiff_t first;
    if (OPAL_UNLIKELY(target->overflows || __builtin_add_overflow(*offset, target->gap, &first)
                      || first < 0 || target->span > size || (uint64_t) first > size - target->span)) {
        return OMPI_ERR_RMA_RANGE;
    }
    return OMPI_SUCCESS;
}

/* memcpy for RMA payloads: one 8-byte element (a double, a counter, an
 * MPI_Aint) is the commonest, and a variable-length memcpy is a call
 * through the PLT to glibc's size dispatch -- a move in line instead.
 * Other lengths take one memcpy. */
static inline void osc_newrma_copy_bytes(void *dst, const void *src, size_t bytes)
{
    if (OPAL_LIKELY(sizeof(uint64_t) == bytes)) {
        memcpy(dst, src, sizeof(uint64_t));
        return;
    }
    memcpy(dst, src, bytes);
}

/* Copy within this address space, any datatypes. */
static inline int osc_newrma_local_copy(void *dst, int dst_count, struct ompi_datatype_t *dst_dt, const osc_newrma_layout_t *dl,
                             const void *src, int src_count, struct ompi_datatype_t *src_dt, const osc_newrma_layout_t *sl)
{
    if (OPAL_LIKELY(dl->contiguous && sl->contiguous)) {
        osc_newrma_copy_bytes((char *) dst + dl->gap, (const char *) src + sl->gap, sl->bytes);
        return OMPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(src, src_count, src_dt, dst, dst_count, dst_dt);
}

/* Local address of the target buffer in the segment. */
static inline int osc_newrma_direct_target_addr(ompi_osc_newrma_module_t *module, int target, ptrdiff_t disp,
                                     const osc_newrma_layout_t *tgt, char **addr)
{
    const osc_newrma_peer_info_t *peer = osc_newrma_shm_peer(&module->shm, target);
    ptrdiff_t offset = 0;
    int ret = osc_newrma_window_offset(disp, peer->disp_unit, peer->size, tgt, &offset);

    /* only a checked offset becomes a pointer (an unchecked one may overflow) */
    *addr = module->shm.base + peer->data_offset + (OPAL_LIKELY(OMPI_SUCCESS == ret) ? offset : 0);
    return ret;
}

/* Target buffer address in the target's address space, range checked. */
static inline int osc_newrma_usermem_target_addr(ompi_osc_newrma_module_t *module, int target, ptrdiff_t disp,
                                                 const osc_newrma_layout_t *tgt, uint64_t *addr)
{
    const osc_newrma_peer_info_t *peer = osc_newrma_shm_peer(&module->shm, target);
    ptrdiff_t offset = 0;
    int ret;

    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        /* dynamic windows address by absolute address (MPI_Get_address) */
        *addr = (uint64_t) disp;
        if (OPAL_UNLIKELY(tgt->overflows)) {
            return OMPI_ERR_RMA_RANGE;
        }
        return osc_newrma_dyn_check_range(module, target, (uint64_t) disp + (uint64_t) tgt->gap, tgt->span);
    }
    ret = osc_newrma_window_offset(disp, peer->disp_unit, peer->size, tgt, &offset);
    *addr = peer->base + (uint64_t) offset;
    return ret;
}

/* The accumulate-stripe offset of a target address from
 * osc_newrma_usermem_target_addr: from the window's base, or the address itself
 * on a dynamic window (whose stripes follow addresses). */
static inline uint64_t osc_newrma_usermem_stripe_offset(const ompi_osc_newrma_module_t *module, int target,
                                                        uint64_t addr)
{
    return MPI_WIN_FLAVOR_DYNAMIC == module->flavor ? addr : addr - osc_newrma_shm_peer(&module->shm, target)->base;
}

/* A datatype's bytes as a scatter list (contiguous runs, in order).  The
 * address need not be mapped here: the convertor only computes addresses.
 * Contiguous layouts use `single`; otherwise *iov is allocated (free it). */
int osc_newrma_datatype_iovecs(struct ompi_datatype_t *dt, int count, const void *addr,
                               const osc_newrma_layout_t *layout, struct iovec *single,
                               struct iovec **iov, size_t *n);

#endif /* OSC_NEWRMA_DATATYPE_H */
