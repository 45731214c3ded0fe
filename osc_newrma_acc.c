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
 * osc/newrma: the accumulate family -- MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap -- for the node path's two function
 * tables (direct, osc_newrma_ops.c; user memory, osc_newrma_usermem.c).
 * On the user-memory table an operation may also be handed to the
 * target's mailbox (osc_newrma_mailbox.c), shared with the target
 * (osc_newrma_shared_copy.c) or relayed (osc_newrma_relay.c), as
 * osc_newrma_node_policy.h decides; otherwise it is single copies under
 * the stripes (osc_newrma_single_copy.c).
 *
 * Atomicity (MPI: accumulates to the same location with the same basic
 * datatype are atomic per element with respect to each other):
 *
 *  - direct and user-memory tables: every operation of the family reads,
 *    combines and writes the target's bytes while holding the target's
 *    accumulate locks that cover them.  The locks are striped by offset in
 *    the target's window (osc_newrma_accumulate_stripes spin locks of
 *    mpi_accumulate_granularity bytes each; the ranks agree on both at
 *    creation, so every process maps a byte to the same stripe), taken in
 *    ascending order, so accumulates to different parts of a window run in
 *    parallel and two ranges never deadlock.  Two operations touching a
 *    common byte both hold that byte's stripe, so they are serialized --
 *    whatever their op, size, alignment or caller (fetch_and_op and
 *    compare_and_swap included).  There is deliberately no lock-free
 *    per-element path: a CPU atomic on an element would not exclude a
 *    locked bulk combine of the same element.  Under the locks the direct
 *    path combines each contiguous run with one call of Open MPI's
 *    (vectorized) reduction; a single element costs one uncontended
 *    compare-and-swap to lock and a release store to unlock;
 *  - active-message windows (osc_newrma_am_target.c): every operation on
 *    the window's memory is applied by the target's packet handler, which
 *    runs under the component's AM lock -- one at a time -- and, on an
 *    allocate window with a node route (osc_newrma_node_route.c), under the
 *    target's stripes in the node segment, which the node's processes take
 *    for their accumulates by loads and stores (osc_newrma_am_ops.c).
 *
 * Operations complete before they return, in program order -- except an
 * accumulate without result handed to a target's mailbox, which completes
 * at the window's next completion; every accumulate-family call completes
 * that one first -- so any accumulate_ordering holds.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/util/bit_ops.h"
#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/op/op.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_relay.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_shared_copy.h"
#include "osc_newrma_single_copy.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_stripes.h"

/* ------------------------------------------------------------------ */
/* accumulate locks                                                    */
/* ------------------------------------------------------------------ */

typedef osc_newrma_acc_locks_t acc_locks_t;

/* `rank`'s stripe words in the node segment, one line each. */
static inline osc_newrma_stripes_t acc_stripes(const ompi_osc_newrma_module_t *module, int rank)
{
    return (osc_newrma_stripes_t) { .base = (char *) osc_newrma_shm_acc_lock(&module->shm, rank, 0),
                                    .stride = module->shm.layout.cacheline,
                                    .stripes = module->shm.layout.acc_stripes };
}

unsigned int osc_newrma_acc_shift(size_t granularity)
{
    /* opal_cube_dim takes an int: a stripe of 2^30 bytes is as good as one
     * stripe per window anyway */
    return (unsigned int) opal_cube_dim(granularity < ((size_t) 1 << 30) ? (int) granularity : 1 << 30);
}

/* The stripes covering bytes [offset, offset + span) of `rank`'s window:
 * every process computes the same, from values agreed at creation. */
static inline void acc_span(const ompi_osc_newrma_module_t *module, acc_locks_t *locks, int rank, uint64_t offset,
                            size_t span)
{
    locks->rank = rank;
    osc_newrma_stripes_span(module->acc_shift, module->shm.layout.acc_stripes, offset, span, &locks->first,
                            &locks->count);
}

/* Lock every stripe covering bytes [offset, offset + span) of `rank`'s
 * window (none while this process alone reaches it).  Inline for the common
 * case of one stripe. */
static inline void acc_lock(ompi_osc_newrma_module_t *module, acc_locks_t *locks, int rank, uint64_t offset,
                            size_t span)
{
    if (OPAL_UNLIKELY(osc_newrma_alone_at(module, rank))) {
        locks->count = 0;             /* and acc_unlock releases none */
        locks->first = 0;
        return;
    }
    acc_span(module, locks, rank, offset, span);
    if (OPAL_LIKELY(1 == locks->count)) {
        osc_newrma_stripe_lock(osc_newrma_shm_acc_lock(&module->shm, rank, locks->first));
        return;
    }
    osc_newrma_stripes_t stripes = acc_stripes(module, rank);
    osc_newrma_stripes_lock(&stripes, locks->first, locks->count, osc_newrma_stripe_lock);
}

/* No full barrier on unlock: completion at the target is what flush and
 * unlock guarantee, and they have theirs. */
static inline void acc_unlock(ompi_osc_newrma_module_t *module, const acc_locks_t *locks)
{
    osc_newrma_stripes_t stripes = acc_stripes(module, locks->rank);

    osc_newrma_stripes_unlock(&stripes, locks->first, locks->count);
}

/* Byte offset of a mapped target address in `rank`'s window (the stripes'
 * coordinate on the direct path). */
static inline uint64_t direct_offset(const ompi_osc_newrma_module_t *module, int rank, const char *t)
{
    return (uint64_t) (t - (module->shm.base + osc_newrma_shm_peer(&module->shm, rank)->data_offset));
}

/* *target += *origin for one unaligned element of `type` */
#define ADD_IN_PLACE(type, target, origin)          \
    do {                                            \
        type t_, o_;                                \
        memcpy(&t_, (target), sizeof(t_));          \
        memcpy(&o_, (origin), sizeof(o_));          \
        t_ += o_;                                   \
        memcpy((target), &t_, sizeof(t_));          \
    } while (0)

/* Up to NEWRMA_SUM_INLINE elements of MPI_SUM on the commonest types -- 8-
 * and 4-byte integers (counters, the fetch_and_op of every work queue,
 * histograms) and doubles -- added in line: ompi_op_reduce's checks, table
 * lookup and indirect call were about a tenth of a whole fetch_and_op on an
 * allocate window, and about a tenth of an 8-element accumulate's
 * instructions (docs/rationale.md, "Accumulates").  Longer runs
 * go to Open MPI's vectorized loops.  Integers add as unsigned (wrapping, as
 * Open MPI's own loops do in practice), the same bits signed or not. */
#define NEWRMA_SUM_INLINE 8
#define ADD_ELEMENTS_IN_PLACE(type, target, origin, n)                                  \
    do {                                                                                \
        for (size_t i_ = 0 ; i_ < (n) ; ++i_) {                                         \
            ADD_IN_PLACE(type, (target) + i_ * sizeof(type), (const char *) (origin) + i_ * sizeof(type)); \
        }                                                                               \
    } while (0)

static inline bool sum_inline(struct ompi_op_t *op, struct ompi_datatype_t *dt, char *target, const void *origin,
                              size_t n)
{
    if (&ompi_mpi_op_sum.op != op || n > NEWRMA_SUM_INLINE) {
        return false;
    }
    switch (dt->id) {
    case OMPI_DATATYPE_MPI_INT64_T: case OMPI_DATATYPE_MPI_UINT64_T:
    case OMPI_DATATYPE_MPI_LONG: case OMPI_DATATYPE_MPI_UNSIGNED_LONG:
        if (sizeof(uint64_t) != dt->super.size) {   /* a 4-byte long */
            return false;
        }
        ADD_ELEMENTS_IN_PLACE(uint64_t, target, origin, n);
        return true;
    case OMPI_DATATYPE_MPI_INT32_T: case OMPI_DATATYPE_MPI_UINT32_T:
        ADD_ELEMENTS_IN_PLACE(uint32_t, target, origin, n);
        return true;
    case OMPI_DATATYPE_MPI_DOUBLE:
        ADD_ELEMENTS_IN_PLACE(double, target, origin, n);
        return true;
    default:
        return false;
    }
}

/* Under the locks: old values out (if wanted), then combine `n` packed
 * elements of `dt` in place.  Open MPI has no reduction function for
 * MPI_REPLACE and MPI_NO_OP. */
static inline void combine_elements(struct ompi_op_t *op, struct ompi_datatype_t *dt, char *target,
                                    const void *origin, void *old, size_t n, size_t esize)
{
    if (NULL != old) {
        osc_newrma_copy_bytes(old, target, n * esize);
    }
    if (&ompi_mpi_op_replace.op == op) {
        osc_newrma_copy_bytes(target, origin, n * esize);
    } else if (&ompi_mpi_op_no_op.op != op && !sum_inline(op, dt, target, origin, n)) {
        ompi_op_reduce(op, (void *) origin, target, n, dt);
    }
}

/* Never waits, so the order stripes are tried in cannot deadlock: on the
 * first one held, the ones taken go back.  (Refusing spans of two stripes
 * instead left a request the target must serve -- a PSCW hand-off --
 * unserved for good.) */
bool osc_newrma_acc_stripes_trylock(ompi_osc_newrma_module_t *module, uint64_t offset, size_t span,
                                    acc_locks_t *locks)
{
    osc_newrma_stripes_t stripes = acc_stripes(module, module->rank);
    unsigned int taken;

    acc_span(module, locks, module->rank, offset, span);
    for (taken = 0 ; taken < locks->count ; ++taken) {
        if (!osc_newrma_stripe_trylock(osc_newrma_stripe_word(&stripes, locks->first + taken))) {
            acc_unlock(module, &(acc_locks_t) { .rank = locks->rank, .first = locks->first, .count = taken });
            return false;
        }
    }
    return true;
}

void osc_newrma_acc_stripes_unlock(ompi_osc_newrma_module_t *module, const acc_locks_t *locks)
{
    acc_unlock(module, locks);
}

void osc_newrma_acc_combine(struct ompi_op_t *op, struct ompi_datatype_t *dt, char *target, const void *origin,
                            void *old, size_t n, size_t esize)
{
    combine_elements(op, dt, target, origin, old, n, esize);
}

/* ------------------------------------------------------------------ */
/* the generic accumulate                                              */
/* ------------------------------------------------------------------ */

/* One accumulate, described once for both paths.  "Elements" are the
 * target's predefined type; an element array is n of them at the type's
 * extent, which is what Open MPI's reductions work on.  For pair types with
 * padding (MPI_SHORT_INT, MPI_DOUBLE_INT, ...) size < extent, so packed bytes
 * are NOT such an array: conversions between a datatype's layout and an
 * element array always go through the datatype engine. */
typedef struct {
    ompi_osc_newrma_module_t *module;
    int target;
    struct ompi_op_t *op;
    struct ompi_datatype_t *basic;       /* the target's predefined element type */
    size_t esize;                        /* its size */
    ptrdiff_t eextent;                   /* its extent */
    size_t n;                            /* elements */
    const void *origin_addr;             /* the user's origin (ignored for NO_OP) */
    int origin_count;
    struct ompi_datatype_t *origin_dt;
    osc_newrma_layout_t ol;
    void *result_addr;                   /* get_accumulate's result (wanted iff result_dt) */
    int result_count;
    struct ompi_datatype_t *result_dt;
    osc_newrma_layout_t rl;
    uint64_t taddr;                      /* target buffer (local pointer or remote address) */
    uint64_t window_offset;              /* of the first target byte, for the stripes */
    int tcount;
    struct ompi_datatype_t *tdt;
    osc_newrma_layout_t tl;
} acc_t;

static bool is_no_op(const acc_t *a) { return &ompi_mpi_op_no_op.op == a->op; }

/* A datatype's data as an element array: the buffer itself when it already
 * is one (contiguous, elements packed at their extent), else a copy. */
static int as_elements(const acc_t *a, const void *addr, int count, struct ompi_datatype_t *dt,
                       const osc_newrma_layout_t *l, char **elements, char **owned)
{
    *owned = NULL;
    if (l->contiguous && (ptrdiff_t) a->esize == a->eextent) {
        *elements = (char *) addr + l->gap;
        return OMPI_SUCCESS;
    }
    *owned = malloc(a->n * (size_t) a->eextent);
    if (NULL == *owned) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *elements = *owned;
    return ompi_datatype_sndrcv(addr, count, dt, *owned, (int32_t) a->n, a->basic);
}

/* Under the accumulate locks, `target` being a local view of the target
 * buffer (its real memory, or an image of it): old values out, combine,
 * write back (only the datatype's own bytes: never a gap). */
static int acc_combine_locked(const acc_t *a, void *target)
{
    char *origin = NULL, *origin_owned = NULL, *current = NULL, *current_owned = NULL;
    int ret = as_elements(a, target, a->tcount, a->tdt, &a->tl, &current, &current_owned);

    if (OMPI_SUCCESS == ret && NULL != a->result_dt) {
        ret = ompi_datatype_sndrcv(current, (int32_t) a->n, a->basic, a->result_addr, a->result_count,
                                   a->result_dt);
    }
    if (OMPI_SUCCESS == ret && !is_no_op(a)) {
        ret = as_elements(a, a->origin_addr, a->origin_count, a->origin_dt, &a->ol, &origin, &origin_owned);
        if (OMPI_SUCCESS == ret) {
            combine_elements(a->op, a->basic, current, origin, NULL, a->n, (size_t) a->eextent);
            if (NULL != current_owned) {
                ret = ompi_datatype_sndrcv(current_owned, (int32_t) a->n, a->basic, target, a->tcount, a->tdt);
            }
        }
    }
    free(origin_owned);
    free(current_owned);
    return ret;
}

/* Direct path, elements packed at their size: origin and old values as
 * element arrays prepared outside the locks (the user's buffers themselves
 * when they already are such arrays), then each contiguous run of the
 * target combined in place with one reduction under the locks. */
static int acc_combine_runs(const acc_t *a, const struct iovec *runs, size_t nruns)
{
    char *origin = NULL, *origin_owned = NULL, *old = NULL, *old_owned = NULL;
    acc_locks_t locks;
    size_t done = 0;
    int ret = OMPI_SUCCESS;

    if (!is_no_op(a)) {
        ret = as_elements(a, a->origin_addr, a->origin_count, a->origin_dt, &a->ol, &origin, &origin_owned);
    }
    if (OMPI_SUCCESS == ret && NULL != a->result_dt) {
        if (a->rl.contiguous) {
            old = (char *) a->result_addr + a->rl.gap;
        } else if (NULL == (old = old_owned = malloc(a->n * a->esize))) {
            ret = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OMPI_SUCCESS != ret) {
        goto cleanup;
    }
    acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
    for (size_t r = 0 ; r < nruns ; ++r) {
        size_t n = runs[r].iov_len / a->esize;
        combine_elements(a->op, a->basic, runs[r].iov_base, origin ? origin + done * a->esize : NULL,
                         old ? old + done * a->esize : NULL, n, a->esize);
        done += n;
    }
    acc_unlock(a->module, &locks);
    if (NULL != old_owned) {
        ret = ompi_datatype_sndrcv(old_owned, (int32_t) a->n, a->basic, a->result_addr, a->result_count,
                                   a->result_dt);
    }
cleanup:
    free(origin_owned);
    free(old_owned);
    return ret;
}

/* Direct path: the target buffer is mapped here. */
static int acc_direct(acc_t *a, struct iovec *runs, size_t nruns)
{
    acc_locks_t locks;
    int ret;

    if ((ptrdiff_t) a->esize == a->eextent) {
        return acc_combine_runs(a, runs, nruns);
    }
    /* pair types with padding: whole elements via the engine */
    acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
    ret = acc_combine_locked(a, (void *) (uintptr_t) a->taddr);
    acc_unlock(a->module, &locks);
    return ret;
}

/* Single-copy path, one contiguous target run of elements packed at their
 * size: under the locks, a chunk at a time -- read it, combine it with the
 * origin's elements, write it back.  A chunk stays in the cache between the
 * read, the reduction and the write, and the buffer is small: an image of
 * the whole span (megabytes: a fresh mmap, every page faulted in, on each
 * call) made large accumulates several times slower. */
#define NEWRMA_ACC_USERMEM_CHUNK ((size_t) 256 * 1024)

/* The target bytes [off, off + len) of a chunked accumulate, a buffer's
 * worth at a time: read, combine with the origin's elements (old values
 * into `old`), write back. */
typedef struct {
    const acc_t *a;
    pid_t pid;
    uint64_t remote;
    const char *origin;
    char *old;
    char *buffer;
    size_t buffer_bytes;
} acc_range_t;

static int acc_usermem_range(void *ctx, uint64_t off, uint64_t len)
{
    const acc_range_t *r = (const acc_range_t *) ctx;
    const acc_t *a = r->a;
    int ret = OMPI_SUCCESS;

    for (uint64_t at = off ; at < off + len && OMPI_SUCCESS == ret ; at += r->buffer_bytes) {
        size_t n = off + len - at < r->buffer_bytes ? off + len - at : r->buffer_bytes;
        ret = osc_newrma_single_copy_at(NEWRMA_FAIL_ACC_READ, r->pid, r->buffer, r->remote + at, n, false);
        if (OMPI_SUCCESS == ret) {
            combine_elements(a->op, a->basic, r->buffer, r->origin ? r->origin + at : NULL,
                             r->old ? r->old + at : NULL, n / a->esize, a->esize);
            ret = is_no_op(a) ? OMPI_SUCCESS
                              : osc_newrma_single_copy_at(NEWRMA_FAIL_ACC_WRITE, r->pid, r->buffer, r->remote + at, n,
                                                          true);
        }
    }
    return ret;
}

/* One run of the target, under the stripes of the span, not relayed:
 * shared with a target inside MPI if it is large (the target reduces its
 * chunks in place: one system call each against our two, two with old
 * values to bring back), else alone. */
static int acc_usermem_run(acc_t *a, acc_range_t *range, size_t bytes)
{
    int ret = OMPI_ERR_WOULD_BLOCK;

    if (!is_no_op(a) && osc_newrma_node_policy_shared_acc_fits(a->module, bytes, a->esize, NULL != range->old)) {
        ret = osc_newrma_shared_copy_accumulate(a->module, a->target, range->origin, range->old, range->remote,
                                                bytes, a->op, a->basic, acc_usermem_range, range);
    }
    return OMPI_ERR_WOULD_BLOCK == ret ? acc_usermem_range(range, 0, bytes) : ret;
}

/* Runs of the target one by one, their elements `off` bytes into the
 * packed ones. */
static int acc_usermem_runs_alone(acc_t *a, const acc_range_t *range, const struct iovec *runs, unsigned int nruns,
                              uint64_t off)
{
    int ret = OMPI_SUCCESS;

    for (unsigned int i = 0 ; i < nruns && OMPI_SUCCESS == ret ; off += runs[i].iov_len, ++i) {
        acc_range_t one = *range;
        one.remote = (uint64_t) (uintptr_t) runs[i].iov_base;
        one.origin = NULL != range->origin ? range->origin + off : NULL;
        one.old = NULL != range->old ? range->old + off : NULL;
        ret = acc_usermem_run(a, &one, runs[i].iov_len);
    }
    return ret;
}

/* Under the stripes of the span: the target's runs (whole elements), the
 * origin's elements and the old values packed in range->origin/old in the
 * same order.  To a target inside MPI, up to NEWRMA_RELAY_SEGS runs at a
 * time are relayed (the target reduces each chunk of our elements out of
 * shared slots: no system call); runs not relayed go one by one. */
static int acc_usermem_runs(acc_t *a, const acc_range_t *range, const struct iovec *runs, size_t nruns)
{
    uint64_t off = 0;
    int ret = OMPI_SUCCESS;

    for (size_t k = 0 ; k < nruns && OMPI_SUCCESS == ret ; k += NEWRMA_RELAY_SEGS) {
        unsigned int m = nruns - k < NEWRMA_RELAY_SEGS ? (unsigned int) (nruns - k) : NEWRMA_RELAY_SEGS;
        size_t bytes = 0;

        for (unsigned int i = 0 ; i < m ; ++i) {
            bytes += runs[k + i].iov_len;
        }
        ret = OMPI_ERR_WOULD_BLOCK;
        if (osc_newrma_node_policy_relay_acc_fits(a->module, m, a->esize)) {
            ret = osc_newrma_relay_accumulate(a->module, a->target,
                                              NULL != range->origin ? range->origin + off : NULL,
                                              NULL != range->old ? range->old + off : NULL, &runs[k], m,
                                              bytes, a->op, a->basic);
        }
        if (OMPI_ERR_WOULD_BLOCK == ret) {
            ret = acc_usermem_runs_alone(a, range, &runs[k], m, off);
        }
        off += bytes;
    }
    return ret;
}

static int acc_usermem_chunked(acc_t *a, pid_t pid, const struct iovec *runs, size_t nruns)
{
    size_t bytes = a->n * a->esize, chunk = bytes < NEWRMA_ACC_USERMEM_CHUNK ? bytes : NEWRMA_ACC_USERMEM_CHUNK;
    char *origin = NULL, *origin_owned = NULL, *old = NULL, *old_owned = NULL;
    char *buffer = malloc(chunk);
    acc_range_t range = { .a = a, .pid = pid, .buffer = buffer, .buffer_bytes = chunk };
    acc_locks_t locks;
    int ret = NULL == buffer ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;

    if (OMPI_SUCCESS == ret && !is_no_op(a)) {
        ret = as_elements(a, a->origin_addr, a->origin_count, a->origin_dt, &a->ol, &origin, &origin_owned);
    }
    if (OMPI_SUCCESS == ret && NULL != a->result_dt) {
        if (a->rl.contiguous) {
            old = (char *) a->result_addr + a->rl.gap;
        } else if (NULL == (old = old_owned = malloc(bytes))) {
            ret = OMPI_ERR_OUT_OF_RESOURCE;
        }
    }
    if (OMPI_SUCCESS != ret) {
        goto cleanup;
    }
    range.origin = origin;
    range.old = old;
    acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
    ret = acc_usermem_runs(a, &range, runs, nruns);
    acc_unlock(a->module, &locks);
    if (OMPI_SUCCESS == ret && NULL != old_owned) {
        ret = ompi_datatype_sndrcv(old_owned, (int32_t) a->n, a->basic, a->result_addr, a->result_count,
                                   a->result_dt);
    }
cleanup:
    free(buffer);
    free(origin_owned);
    free(old_owned);
    return ret;
}

/* Can a target of several runs be relayed (the policy relays this many
 * runs, every run whole elements)?  Else it goes through an image, two
 * system calls whatever the number of runs. */
static bool acc_runs_relayable(const acc_t *a, const struct iovec *runs, size_t nruns)
{
    if (!osc_newrma_node_policy_relay_acc_fits(a->module, nruns, a->esize)) {
        return false;
    }
    for (size_t i = 0 ; i < nruns ; ++i) {
        if (0 != runs[i].iov_len % a->esize) {
            return false;
        }
    }
    return true;
}

/* Single-copy path: under the locks, read the target's bytes into an image
 * with the same layout, combine there, write the same bytes back -- or,
 * when the target is one run of packed elements (or several, where relays
 * are on), chunk by chunk or relayed, no image.  To self the memory is
 * local: same locks, no image. */
static int acc_usermem(acc_t *a, struct iovec *runs, size_t nruns)
{
    pid_t pid = osc_newrma_shm_peer(&a->module->shm, a->target)->pid;
    uint64_t first = a->taddr + (uint64_t) a->tl.gap;
    char *image = NULL;
    struct iovec *local = NULL, *remote = NULL;
    acc_locks_t locks;
    int ret = OMPI_SUCCESS;

    if (a->target == a->module->rank) {
        acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
        ret = acc_combine_locked(a, (void *) (uintptr_t) a->taddr);
        acc_unlock(a->module, &locks);
        return ret;
    }
    if ((ptrdiff_t) a->esize == a->eextent
        && (1 == nruns ? runs[0].iov_len == a->n * a->esize : acc_runs_relayable(a, runs, nruns))) {
        return acc_usermem_chunked(a, pid, runs, nruns);
    }
    image = malloc(a->tl.span);
    local = malloc(nruns * sizeof(struct iovec));
    remote = malloc(nruns * sizeof(struct iovec));
    if (NULL == image || NULL == local || NULL == remote) {
        ret = OMPI_ERR_OUT_OF_RESOURCE;
        goto cleanup;
    }
    acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
    for (int pass = 0 ; pass < 2 && OMPI_SUCCESS == ret ; ++pass) {
        bool write = 1 == pass;
        if (write && is_no_op(a)) {
            break;
        }
        /* the transfer consumes the lists: rebuild them each time */
        for (size_t r = 0 ; r < nruns ; ++r) {
            remote[r] = runs[r];
            local[r].iov_base = image + ((uint64_t) (uintptr_t) runs[r].iov_base - first);
            local[r].iov_len = runs[r].iov_len;
        }
        ret = osc_newrma_single_copy_transfer(pid, local, nruns, remote, nruns, write);
        if (OMPI_SUCCESS == ret && !write) {
            ret = acc_combine_locked(a, image - a->tl.gap);
        }
    }
    acc_unlock(a->module, &locks);
cleanup:
    free(image);
    free(local);
    free(remote);
    return ret;
}

/* The checks every accumulate makes whatever the path: epoch, sizes (a
 * zero-size target with a non-empty origin or result is a type mismatch,
 * not a no-op), and a target made of one predefined type.  Fills `a`;
 * a->n == 0 means there is nothing to do. */
static int acc_setup(acc_t *a)
{
    uint32_t prim_count;
    ptrdiff_t lb;
    int ret = osc_newrma_epoch_access(a->module, a->target);

    a->n = 0;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    osc_newrma_datatype_layout(a->tdt, a->tcount, &a->tl);
    if (!is_no_op(a)) {
        osc_newrma_datatype_layout(a->origin_dt, a->origin_count, &a->ol);
        if (a->ol.bytes != a->tl.bytes) {
            return MPI_ERR_TYPE;
        }
    }
    if (NULL != a->result_dt) {
        osc_newrma_datatype_layout(a->result_dt, a->result_count, &a->rl);
        if (a->rl.bytes != a->tl.bytes) {
            return MPI_ERR_TYPE;
        }
    }
    if (0 == a->tl.bytes) {
        return OMPI_SUCCESS;
    }
    /* Open MPI leaves the output unset when the type is not made of one
     * predefined type */
    a->basic = NULL;
    ret = ompi_osc_base_get_primitive_type_info(a->tdt, &a->basic, &prim_count);
    if (OMPI_SUCCESS != ret || NULL == a->basic || 0 == prim_count) {
        return MPI_ERR_TYPE;
    }
    ompi_datatype_type_size(a->basic, &a->esize);
    ompi_datatype_get_extent(a->basic, &lb, &a->eextent);
    a->n = a->tl.bytes / a->esize;
    return OMPI_SUCCESS;
}

int osc_newrma_acc_validate(struct ompi_win_t *win, const void *origin_addr, int origin_count,
                            struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                            struct ompi_datatype_t *result_dt, int target, int target_count,
                            struct ompi_datatype_t *target_dt, struct ompi_op_t *op, size_t *bytes)
{
    acc_t a = { .module = osc_newrma_module(win), .target = target, .op = op,
                .origin_addr = origin_addr, .origin_count = origin_count, .origin_dt = origin_dt,
                .result_addr = result_addr, .result_count = result_count, .result_dt = result_dt,
                .tcount = target_count, .tdt = target_dt };
    int ret = acc_setup(&a);

    *bytes = a.n * a.esize;
    return ret;
}

/* `count` elements of a predefined `dt` are one element array: packed at
 * the type's size (not a pair type with padding, nor a bound marker). */
static inline bool is_packed_predefined(struct ompi_datatype_t *dt)
{
    size_t size;
    ptrdiff_t lb, extent;

    if (!ompi_datatype_is_predefined(dt)) {
        return false;
    }
    ompi_datatype_type_size(dt, &size);
    ompi_datatype_get_extent(dt, &lb, &extent);
    return 0 != size && 0 == lb && (ptrdiff_t) size == extent;
}

int osc_newrma_acc_apply_packed(void *target, int target_count, struct ompi_datatype_t *target_dt,
                                const void *packed_origin, size_t bytes, struct ompi_op_t *op,
                                void *packed_result)
{
    acc_t a = { .op = op, .origin_addr = packed_origin, .origin_count = (int) bytes,
                .origin_dt = &ompi_mpi_packed.dt, .result_addr = packed_result,
                .result_count = (int) bytes, .result_dt = NULL != packed_result ? &ompi_mpi_packed.dt : NULL,
                .tcount = target_count, .tdt = target_dt };
    uint32_t prim_count;
    ptrdiff_t lb;

    if (is_packed_predefined(target_dt)) {
        /* the packed bytes are element arrays already: no datatype engine */
        ompi_datatype_type_size(target_dt, &a.esize);
        combine_elements(op, target_dt, target, packed_origin, packed_result, (size_t) target_count, a.esize);
        return OMPI_SUCCESS;
    }
    osc_newrma_datatype_layout(target_dt, target_count, &a.tl);
    osc_newrma_datatype_layout(&ompi_mpi_packed.dt, (int) bytes, &a.ol);
    if (0 == a.tl.bytes) {
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != ompi_osc_base_get_primitive_type_info(target_dt, &a.basic, &prim_count)
        || NULL == a.basic) {
        return MPI_ERR_TYPE;
    }
    ompi_datatype_type_size(a.basic, &a.esize);
    ompi_datatype_get_extent(a.basic, &lb, &a.eextent);
    a.n = a.tl.bytes / a.esize;
    return acc_combine_locked(&a, target);
}

/* The common case, worth a path without the datatype engine: origin (unless
 * MPI_NO_OP), target and result (if any) are `count` elements of one
 * predefined type packed at its size, so all three are element arrays and
 * nothing can mismatch. */
static inline bool acc_is_simple(struct ompi_datatype_t *origin_dt, int origin_count,
                                 struct ompi_datatype_t *result_dt, int result_count, int count,
                                 struct ompi_datatype_t *dt, struct ompi_op_t *op)
{
    return count > 0 && (NULL == result_dt || (result_dt == dt && result_count == count))
           && (&ompi_mpi_op_no_op.op == op || (origin_dt == dt && origin_count == count))
           && is_packed_predefined(dt);
}

bool osc_newrma_acc_simple(struct ompi_datatype_t *origin_dt, int origin_count, struct ompi_datatype_t *result_dt,
                           int result_count, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op)
{
    return acc_is_simple(origin_dt, origin_count, result_dt, result_count, count, dt, op);
}

void osc_newrma_acc_combine_simple(struct ompi_op_t *op, struct ompi_datatype_t *dt, char *target, const void *origin,
                                   void *result, int count)
{
    size_t esize;

    ompi_datatype_type_size(dt, &esize);
    combine_elements(op, dt, target, origin, result, (size_t) count, esize);
}

/* The simple case's target layout (`count` contiguous elements of a
 * predefined `dt`) and the epoch check, shared by both paths. */
static inline int simple_access(ompi_osc_newrma_module_t *module, int target, int count, struct ompi_datatype_t *dt,
                                osc_newrma_layout_t *tl, size_t *esize)
{
    ompi_datatype_type_size(dt, esize);
    *tl = (osc_newrma_layout_t) { .gap = 0, .contiguous = true, .bytes = *esize * (size_t) count };
    tl->span = tl->bytes;
    return osc_newrma_epoch_access(module, target);
}

/* Direct path, simple case: range check, then one reduction (or copy)
 * under the stripes covering the elements. */
static int acc_direct_simple(ompi_osc_newrma_module_t *module, const void *origin_addr, void *result_addr,
                             int target, ptrdiff_t target_disp, int count, struct ompi_datatype_t *dt,
                             struct ompi_op_t *op)
{
    osc_newrma_layout_t tl;
    acc_locks_t locks;
    size_t esize;
    char *t;
    int ret = simple_access(module, target, count, dt, &tl, &esize);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = osc_newrma_direct_target_addr(module, target, target_disp, &tl, &t);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    acc_lock(module, &locks, target, direct_offset(module, target, t), tl.bytes);
    combine_elements(op, dt, t, origin_addr, result_addr, (size_t) count, esize);
    acc_unlock(module, &locks);
    return OMPI_SUCCESS;
}

/* Single-copy path, simple case: hand it to the target if it is inside MPI
 * to apply it (osc_newrma_mailbox.c); OMPI_ERR_WOULD_BLOCK if it is not. */
static int acc_usermem_assisted(ompi_osc_newrma_module_t *module, const void *origin_addr, void *result_addr,
                            int target, ptrdiff_t target_disp, int count, struct ompi_datatype_t *dt,
                            struct ompi_op_t *op)
{
    osc_newrma_layout_t tl;
    size_t esize;
    uint64_t taddr;
    int ret = simple_access(module, target, count, dt, &tl, &esize);

    if (OPAL_LIKELY(OMPI_SUCCESS == ret)) {
        ret = osc_newrma_usermem_target_addr(module, target, target_disp, &tl, &taddr);
    }
    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    return osc_newrma_mailbox_accumulate(module, target, taddr, target_disp, op, dt, count, origin_addr, result_addr);
}

/* Any accumulate, any datatypes, either path. */
static int acc_general(ompi_osc_newrma_module_t *module, const void *origin_addr, int origin_count,
                       struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                       struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                       int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op)
{
    struct iovec single, *runs = NULL;
    size_t nruns = 0;
    acc_t a = { .module = module, .target = target, .op = op,
                .origin_addr = origin_addr, .origin_count = origin_count, .origin_dt = origin_dt,
                .result_addr = result_addr, .result_count = result_count, .result_dt = result_dt,
                .tcount = target_count, .tdt = target_dt };
    int ret = acc_setup(&a);

    if (OMPI_SUCCESS != ret || 0 == a.n) {
        return ret;
    }
    /* the target buffer, range checked */
    if (NEWRMA_PATH_DIRECT == module->path) {
        char *local;
        ret = osc_newrma_direct_target_addr(module, target, target_disp, &a.tl, &local);
        a.taddr = (uint64_t) (uintptr_t) local;
        a.window_offset = direct_offset(module, target, local) + (uint64_t) a.tl.gap;
    } else {
        ret = osc_newrma_usermem_target_addr(module, target, target_disp, &a.tl, &a.taddr);
        a.window_offset = osc_newrma_usermem_stripe_offset(module, target, a.taddr) + (uint64_t) a.tl.gap;
    }
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_datatype_iovecs(target_dt, target_count, (void *) (uintptr_t) a.taddr, &a.tl, &single,
                                         &runs, &nruns);
    }
    if (OMPI_SUCCESS == ret) {
        ret = NEWRMA_PATH_DIRECT == module->path ? acc_direct(&a, runs, nruns) : acc_usermem(&a, runs, nruns);
    }
    if (runs != &single) {
        free(runs);
    }
    return ret;
}

/* Single-copy path (create/dynamic windows), out of line: the direct
 * path's entry points stay small enough to take acc_any in line. */
static __opal_attribute_noinline__ int acc_single_copy_any(ompi_osc_newrma_module_t *module, bool simple,
                                                           const void *origin_addr, int origin_count,
                                                           struct ompi_datatype_t *origin_dt, void *result_addr,
                                                           int result_count, struct ompi_datatype_t *result_dt,
                                                           int target, ptrdiff_t target_disp, int target_count,
                                                           struct ompi_datatype_t *target_dt, struct ompi_op_t *op)
{
    /* accumulates of one origin are ordered: one handed to a target first */
    int ret = osc_newrma_mailbox_flush_pending(module);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (simple && osc_newrma_node_policy_mailbox_fits(module, target, target_count, target_dt)) {
        ret = acc_usermem_assisted(module, origin_addr, result_addr, target, target_disp, target_count, target_dt, op);
        if (OMPI_ERR_WOULD_BLOCK != ret) {
            return ret;
        }
    }
    return acc_general(module, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                       target_disp, target_count, target_dt, op);
}

/* accumulate, get_accumulate (a result iff result_dt) or fetch_and_op;
 * static, so the entry points reach the simple case without a call through
 * the PLT (and, for fetch_and_op's one element of one type, with the
 * simple-case checks folded away) */
static inline __opal_attribute_always_inline__ int
acc_any(struct ompi_win_t *win, const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
        void *result_addr, int result_count, struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
        int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    bool simple = acc_is_simple(origin_dt, origin_count, result_dt, result_count, target_count, target_dt, op);

    NEWRMA_TRACE_OP(module, NULL == result_dt ? "accumulate" : "get_accumulate", target, target_disp,
                    target_count, target_dt);

    if (OPAL_LIKELY(NEWRMA_PATH_DIRECT == module->path)) {
        return simple ? acc_direct_simple(module, origin_addr, result_addr, target, target_disp, target_count,
                                          target_dt, op)
                      : acc_general(module, origin_addr, origin_count, origin_dt, result_addr, result_count,
                                    result_dt, target, target_disp, target_count, target_dt, op);
    }
    return acc_single_copy_any(module, simple, origin_addr, origin_count, origin_dt, result_addr, result_count,
                               result_dt, target, target_disp, target_count, target_dt, op);
}

int osc_newrma_acc_single_copy(ompi_osc_newrma_module_t *module, const void *origin, void *result, int count,
                               struct ompi_datatype_t *dt, int target, ptrdiff_t disp, struct ompi_op_t *op)
{
    return acc_general(module, origin, count, dt, result, NULL != result ? count : 0, NULL != result ? dt : NULL,
                       target, disp, count, dt, op);
}

/* ------------------------------------------------------------------ */
/* compare-and-swap                                                    */
/* ------------------------------------------------------------------ */

/* ompi_op_is_valid, without its message (written only when invalid) */
static inline bool op_valid_for(struct ompi_op_t *op, struct ompi_datatype_t *dt, const char *func)
{
    char *msg = NULL;
    bool ok = ompi_op_is_valid(op, dt, &msg, func);

    if (OPAL_UNLIKELY(NULL != msg)) {
        free(msg);
    }
    return ok;
}

/* MPI allows compare-and-swap on integer, logical, byte (and
 * multi-language) types: exactly those valid for MPI_BOR or MPI_LAND. */
bool osc_newrma_cas_type_ok(struct ompi_datatype_t *dt)
{
    return op_valid_for(&ompi_mpi_op_bor.op, dt, "MPI_Compare_and_swap")
           || op_valid_for(&ompi_mpi_op_land.op, dt, "MPI_Compare_and_swap");
}

/* Direct path: read, compare and maybe write under the stripes covering the
 * element, like every other operation of the family on it. */
static int cas_direct(ompi_osc_newrma_module_t *module, const void *origin_addr, const void *compare_addr,
                      void *result_addr, size_t size, int target, ptrdiff_t target_disp,
                      const osc_newrma_layout_t *tl)
{
    acc_locks_t locks;
    char *t;
    int ret = osc_newrma_direct_target_addr(module, target, target_disp, tl, &t);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    acc_lock(module, &locks, target, direct_offset(module, target, t), size);
    osc_newrma_copy_bytes(result_addr, t, size);
    if (0 == memcmp(t, compare_addr, size)) {
        osc_newrma_copy_bytes(t, origin_addr, size);
    }
    acc_unlock(module, &locks);
    return OMPI_SUCCESS;
}

/* Single-copy path: the same under the locks, through the syscalls (to
 * self, the memory is local). */
int osc_newrma_cas_single_copy(ompi_osc_newrma_module_t *module, int target, uint64_t taddr, const void *origin_addr,
                               const void *compare_addr, void *result_addr, size_t size)
{
    pid_t pid = osc_newrma_shm_peer(&module->shm, target)->pid;
    bool self = target == module->rank;
    acc_locks_t locks;
    int ret = OMPI_SUCCESS;

    acc_lock(module, &locks, target, osc_newrma_usermem_stripe_offset(module, target, taddr), size);
    if (self) {
        memcpy(result_addr, (void *) (uintptr_t) taddr, size);
    } else {
        ret = osc_newrma_single_copy_at(NEWRMA_FAIL_CAS_READ, pid, result_addr, taddr, size, false);
    }
    if (OMPI_SUCCESS == ret && 0 == memcmp(result_addr, compare_addr, size)) {
        if (self) {
            memcpy((void *) (uintptr_t) taddr, origin_addr, size);
        } else {
            ret = osc_newrma_single_copy_at(NEWRMA_FAIL_CAS_WRITE, pid, (void *) origin_addr, taddr, size, true);
        }
    }
    acc_unlock(module, &locks);
    return ret;
}

/* A target inside MPI may do it for us (never ourselves: fits says no). */
static int cas_usermem(ompi_osc_newrma_module_t *module, const void *origin_addr, const void *compare_addr,
                   void *result_addr, struct ompi_datatype_t *dt, size_t size, int target,
                   ptrdiff_t target_disp, const osc_newrma_layout_t *tl)
{
    uint64_t taddr;
    int ret = osc_newrma_mailbox_flush_pending(module);   /* ordered after our earlier accumulates */

    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_usermem_target_addr(module, target, target_disp, tl, &taddr);
    }
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (osc_newrma_node_policy_mailbox_fits(module, target, 2, dt)) {
        ret = osc_newrma_mailbox_cas(module, target, taddr, dt, origin_addr, compare_addr, result_addr);
        if (OMPI_ERR_WOULD_BLOCK != ret) {
            return ret;
        }
    }
    return osc_newrma_cas_single_copy(module, target, taddr, origin_addr, compare_addr, result_addr, size);
}

int osc_newrma_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_layout_t tl;
    size_t size;

    NEWRMA_TRACE_OP(module, "compare_and_swap", target, target_disp, 1, dt);
    int ret = osc_newrma_epoch_access(module, target);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    if (!ompi_datatype_is_predefined(dt) || !osc_newrma_cas_type_ok(dt)) {
        return MPI_ERR_TYPE;
    }
    ompi_datatype_type_size(dt, &size);
    osc_newrma_datatype_layout(dt, 1, &tl);
    return NEWRMA_PATH_DIRECT == module->path
        ? cas_direct(module, origin_addr, compare_addr, result_addr, size, target, target_disp, &tl)
        : cas_usermem(module, origin_addr, compare_addr, result_addr, dt, size, target, target_disp, &tl);
}

/* ------------------------------------------------------------------ */
/* entry points                                                        */
/* ------------------------------------------------------------------ */

int osc_newrma_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                          int target, ptrdiff_t target_disp, int target_count,
                          struct ompi_datatype_t *target_dt, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return acc_any(win, origin_addr, origin_count, origin_dt, NULL, 0, NULL, target, target_disp, target_count,
                   target_dt, op);
}

int osc_newrma_get_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                              void *result_addr, int result_count, struct ompi_datatype_t *result_dt,
                              int target, ptrdiff_t target_disp, int target_count,
                              struct ompi_datatype_t *target_dt, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return acc_any(win, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                   target_disp, target_count, target_dt, op);
}

/* Open MPI's MPI layer checks the op only for (get_)accumulate.  Its table
 * has no entry for MPI_REPLACE and MPI_NO_OP, valid on any type. */
bool osc_newrma_fop_op_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    return ompi_op_is_intrinsic(op)
           && (&ompi_mpi_op_replace.op == op || &ompi_mpi_op_no_op.op == op
               || op_valid_for(op, dt, "MPI_Fetch_and_op"));
}

int osc_newrma_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt,
                            int target, ptrdiff_t target_disp, struct ompi_op_t *op, struct ompi_win_t *win)
{
    if (!osc_newrma_fop_op_ok(op, dt)) {
        return MPI_ERR_OP;
    }
    return acc_any(win, origin_addr, 1, dt, result_addr, 1, dt, target, target_disp, 1, dt, op);
}
