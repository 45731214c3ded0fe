/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: the accumulate family -- MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap -- for both function tables.
 *
 * Atomicity (MPI: accumulates to the same location with the same basic
 * datatype are atomic per element with respect to each other):
 *
 *  - direct table (window memory mapped here): an element of 4 or 8 bytes
 *    at an aligned address is updated with one CPU atomic: fetch-and-add
 *    for integer sums, swap for MPI_REPLACE, a load for MPI_NO_OP, and a
 *    compare-and-swap loop around Open MPI's own reduction function for
 *    every other op (so MAXLOC on MPI_2INT, PROD on doubles, ... are atomic
 *    too).  Every process takes this path for such an element, so they are
 *    atomic with respect to each other without any lock;
 *  - anything else (other sizes, unaligned elements, and every element of a
 *    create/dynamic window, whose memory is reached by single-copy syscalls)
 *    is read, combined and written under the target's accumulate locks.  The
 *    locks are striped by offset (osc_newrma_accumulate_stripes stripes of
 *    mpi_accumulate_granularity bytes), taken in ascending order, so
 *    accumulates to different parts of a window run in parallel.
 *
 * A location is always reached the same way by every process (the choice
 * depends only on the window, the element size and the address), which is
 * what makes the two mechanisms safe side by side.  Operations complete
 * before they return, in program order, so any accumulate_ordering holds.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/op/op.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_cma.h"
#include "osc_newrma_datatype.h"

/* ------------------------------------------------------------------ */
/* accumulate locks                                                    */
/* ------------------------------------------------------------------ */

typedef struct {
    int rank;
    unsigned int first, count;   /* stripes first .. first+count-1 (mod stripes) */
} acc_locks_t;

/* A stripe lock is taken with an acquiring compare-and-swap and released
 * with a releasing one, never with plain loads and stores: threads of one
 * process contend for the same word, and a plain access racing an atomic one
 * is a data race (C11) that ThreadSanitizer reports.  The backoff, not a
 * read before the CAS, keeps contended spinning off the bus. */
static void stripe_lock(volatile int32_t *word)
{
    unsigned int spins = 0;
    for (;;) {
        int32_t expected = 0;
        if (opal_atomic_compare_exchange_strong_acq_32(word, &expected, 1)) {
            break;
        }
        osc_newrma_backoff(&spins);
    }
    opal_atomic_mb();
}

static void stripe_unlock(volatile int32_t *word)
{
    int32_t held = 1;
    (void) opal_atomic_compare_exchange_strong_rel_32(word, &held, 0);
}

/* Lock every stripe covering bytes [offset, offset + span) of `rank`'s window,
 * in ascending stripe order (no deadlock between two ranges). */
static void acc_lock(ompi_osc_newrma_module_t *module, acc_locks_t *locks, int rank, uint64_t offset, size_t span)
{
    unsigned int stripes = module->shm.layout.acc_stripes;
    uint64_t granularity = module->acc_granularity;
    uint64_t first = offset / granularity, last = (offset + (span ? span - 1 : 0)) / granularity;

    locks->rank = rank;
    if (last - first + 1 >= stripes) {
        locks->first = 0;
        locks->count = stripes;
    } else {
        locks->first = (unsigned int) (first % stripes);
        locks->count = (unsigned int) (last - first + 1);
    }
    /* ascending stripe index, whatever the wrap-around */
    for (unsigned int s = 0 ; s < stripes ; ++s) {
        if ((s - locks->first + stripes) % stripes < locks->count) {
            stripe_lock(osc_newrma_shm_acc_lock(&module->shm, rank, s));
        }
    }
}

static void acc_unlock(ompi_osc_newrma_module_t *module, const acc_locks_t *locks)
{
    unsigned int stripes = module->shm.layout.acc_stripes;

    opal_atomic_mb();
    for (unsigned int s = 0 ; s < stripes ; ++s) {
        if ((s - locks->first + stripes) % stripes < locks->count) {
            stripe_unlock(osc_newrma_shm_acc_lock(&module->shm, locks->rank, s));
        }
    }
}

/* ------------------------------------------------------------------ */
/* one element, atomically                                             */
/* ------------------------------------------------------------------ */

static bool is_integer(struct ompi_datatype_t *dt)
{
    return OMPI_DATATYPE_FLAG_DATA_INT == (dt->super.flags & OMPI_DATATYPE_FLAG_DATA_TYPE);
}

/* Can the element at `addr` be updated with a CPU atomic? */
static inline bool atomic_element(const void *addr, size_t size)
{
    return (4 == size || 8 == size) && 0 == ((uintptr_t) addr & (size - 1));
}

/* *target = *origin op *target on one element of BITS bits, returning the
 * old value in *old (if not NULL). */
#define NEWRMA_DEFINE_ATOMIC_APPLY(BITS)                                                  \
static void atomic_apply_##BITS(volatile int##BITS##_t *t, const void *origin, void *old,  \
                                struct ompi_datatype_t *dt, struct ompi_op_t *op)          \
{                                                                                          \
    int##BITS##_t prev, next;                                                              \
    if (&ompi_mpi_op_no_op.op == op) {                                                     \
        prev = *t;                                                                         \
    } else if (&ompi_mpi_op_replace.op == op) {                                            \
        memcpy(&next, origin, sizeof(next));                                               \
        prev = opal_atomic_swap_##BITS(t, next);                                           \
    } else if (&ompi_mpi_op_sum.op == op && is_integer(dt)) {                              \
        memcpy(&next, origin, sizeof(next));                                               \
        prev = opal_atomic_fetch_add_##BITS(t, next);                                      \
    } else {                                                                               \
        prev = *t;                                                                         \
        do {                                                                               \
            next = prev;                                                                   \
            ompi_op_reduce(op, (void *) origin, &next, 1, dt);                             \
        } while (!opal_atomic_compare_exchange_strong_##BITS(t, &prev, next));             \
    }                                                                                      \
    if (old) {                                                                             \
        memcpy(old, &prev, sizeof(prev));                                                  \
    }                                                                                      \
}

NEWRMA_DEFINE_ATOMIC_APPLY(32)
NEWRMA_DEFINE_ATOMIC_APPLY(64)

static inline void atomic_apply(void *target, const void *origin, void *old, size_t size,
                                struct ompi_datatype_t *dt, struct ompi_op_t *op)
{
    if (8 == size) {
        atomic_apply_64(target, origin, old, dt, op);
    } else {
        atomic_apply_32(target, origin, old, dt, op);
    }
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
            if (&ompi_mpi_op_replace.op == a->op) {
                /* Open MPI has no reduction function for MPI_REPLACE */
                memcpy(current, origin, a->n * (size_t) a->eextent);
            } else {
                ompi_op_reduce(a->op, origin, current, a->n, a->basic);
            }
            if (NULL != current_owned) {
                ret = ompi_datatype_sndrcv(current_owned, (int32_t) a->n, a->basic, target, a->tcount, a->tdt);
            }
        }
    }
    free(origin_owned);
    free(current_owned);
    return ret;
}

/* Combine one run of elements in place (under the accumulate locks). */
static void combine_run_locked(const acc_t *a, char *run, const char *origin, char *old, size_t n)
{
    if (NULL != old) {
        memcpy(old, run, n * a->esize);
    }
    if (is_no_op(a)) {
        return;
    }
    if (&ompi_mpi_op_replace.op == a->op) {
        memcpy(run, origin, n * a->esize);
    } else {
        ompi_op_reduce(a->op, (void *) origin, run, n, a->basic);
    }
}

/* Direct path, elements whose size is their extent, taken run by run: an
 * aligned 4/8-byte element is always one CPU atomic -- even when other
 * elements of the same call need the locks, because every other process
 * updates it with an atomic too -- and the other runs are combined under the
 * accumulate locks, taken only if there is such a run. */
static int acc_combine_runs(const acc_t *a, const struct iovec *runs, size_t nruns)
{
    char *origin = NULL, *origin_owned = NULL, *old = NULL;
    bool need_lock = false;
    acc_locks_t locks;
    size_t done = 0;
    int ret = OMPI_SUCCESS;

    if (!is_no_op(a)) {
        ret = as_elements(a, a->origin_addr, a->origin_count, a->origin_dt, &a->ol, &origin, &origin_owned);
    }
    if (OMPI_SUCCESS == ret && NULL != a->result_dt) {
        old = malloc(a->n * a->esize);
        ret = NULL == old ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != ret) {
        goto cleanup;
    }
    for (size_t r = 0 ; r < nruns && !need_lock ; ++r) {
        need_lock = !atomic_element(runs[r].iov_base, a->esize);
    }
    if (need_lock) {
        acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
    }
    for (size_t r = 0 ; r < nruns ; ++r) {
        char *t = runs[r].iov_base;
        size_t n = runs[r].iov_len / a->esize;
        const char *o = origin ? origin + done * a->esize : NULL;
        char *prev = old ? old + done * a->esize : NULL;
        if (atomic_element(t, a->esize)) {
            for (size_t i = 0 ; i < n ; ++i) {
                atomic_apply(t + i * a->esize, o ? o + i * a->esize : NULL, prev ? prev + i * a->esize : NULL,
                             a->esize, a->basic, a->op);
            }
        } else {
            combine_run_locked(a, t, o, prev, n);
        }
        done += n;
    }
    if (need_lock) {
        acc_unlock(a->module, &locks);
    } else {
        opal_atomic_mb();
    }
    if (NULL != old) {
        ret = ompi_datatype_sndrcv(old, (int32_t) a->n, a->basic, a->result_addr, a->result_count, a->result_dt);
    }
cleanup:
    free(origin_owned);
    free(old);
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
    /* pair types with padding: never atomic, whole elements via the engine */
    acc_lock(a->module, &locks, a->target, a->window_offset, a->tl.span);
    ret = acc_combine_locked(a, (void *) (uintptr_t) a->taddr);
    acc_unlock(a->module, &locks);
    return ret;
}

/* Single-copy path: under the locks, read the target's bytes into an image
 * with the same layout, combine there, write the same bytes back.  To self
 * the memory is local: same locks, no image. */
static int acc_cma(acc_t *a, struct iovec *runs, size_t nruns)
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
        ret = osc_newrma_cma_transfer(pid, local, nruns, remote, nruns, write);
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
    osc_newrma_layout_t rl;
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
        osc_newrma_datatype_layout(a->result_dt, a->result_count, &rl);
        if (rl.bytes != a->tl.bytes) {
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

int osc_newrma_accumulate_any(struct ompi_win_t *win, const void *origin_addr, int origin_count,
                              struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                              struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                              int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
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
        a.window_offset = (uint64_t) (local - (module->shm.base + osc_newrma_shm_peer(&module->shm, target)->data_offset))
                          + (uint64_t) a.tl.gap;
    } else {
        ret = osc_newrma_cma_target_addr(module, target, target_disp, &a.tl, &a.taddr);
        a.window_offset = MPI_WIN_FLAVOR_DYNAMIC == module->flavor
            ? a.taddr + (uint64_t) a.tl.gap
            : a.taddr + (uint64_t) a.tl.gap - osc_newrma_shm_peer(&module->shm, target)->base;
    }
    if (OMPI_SUCCESS == ret) {
        ret = osc_newrma_datatype_iovecs(target_dt, target_count, (void *) (uintptr_t) a.taddr, &a.tl, &single,
                                         &runs, &nruns);
    }
    if (OMPI_SUCCESS == ret) {
        ret = NEWRMA_PATH_DIRECT == module->path ? acc_direct(&a, runs, nruns) : acc_cma(&a, runs, nruns);
    }
    if (runs != &single) {
        free(runs);
    }
    return ret;
}

/* ------------------------------------------------------------------ */
/* compare-and-swap                                                    */
/* ------------------------------------------------------------------ */

/* MPI allows compare-and-swap on integer, logical, byte (and
 * multi-language) types: exactly those valid for MPI_BOR or MPI_LAND. */
bool osc_newrma_cas_type_ok(struct ompi_datatype_t *dt)
{
    char *msg = NULL;
    bool ok = ompi_op_is_valid(&ompi_mpi_op_bor.op, dt, &msg, "MPI_Compare_and_swap");
    free(msg);
    msg = NULL;
    ok = ok || ompi_op_is_valid(&ompi_mpi_op_land.op, dt, &msg, "MPI_Compare_and_swap");
    free(msg);
    return ok;
}

int osc_newrma_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    osc_newrma_layout_t tl;
    size_t size;
    int ret = osc_newrma_epoch_access(module, target);

    if (OPAL_UNLIKELY(OMPI_SUCCESS != ret)) {
        return ret;
    }
    if (!ompi_datatype_is_predefined(dt) || !osc_newrma_cas_type_ok(dt)) {
        return MPI_ERR_TYPE;
    }
    ompi_datatype_type_size(dt, &size);
    osc_newrma_datatype_layout(dt, 1, &tl);

    if (NEWRMA_PATH_DIRECT == module->path) {
        char *t;
        ret = osc_newrma_direct_target_addr(module, target, target_disp, &tl, &t);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
        if (OPAL_LIKELY(atomic_element(t, size))) {
            /* one CPU compare-and-swap */
            if (8 == size) {
                int64_t expected, desired;
                memcpy(&expected, compare_addr, 8);
                memcpy(&desired, origin_addr, 8);
                (void) opal_atomic_compare_exchange_strong_64((volatile int64_t *) t, &expected, desired);
                memcpy(result_addr, &expected, 8);
            } else {
                int32_t expected, desired;
                memcpy(&expected, compare_addr, 4);
                memcpy(&desired, origin_addr, 4);
                (void) opal_atomic_compare_exchange_strong_32((volatile int32_t *) t, &expected, desired);
                memcpy(result_addr, &expected, 4);
            }
            opal_atomic_mb();
            return OMPI_SUCCESS;
        }
        acc_locks_t locks;
        acc_lock(module, &locks, target, (uint64_t) (t - (module->shm.base + osc_newrma_shm_peer(&module->shm, target)->data_offset)), size);
        memcpy(result_addr, t, size);
        if (0 == memcmp(t, compare_addr, size)) {
            memcpy(t, origin_addr, size);
        }
        acc_unlock(module, &locks);
        return OMPI_SUCCESS;
    }

    /* single-copy path: read, compare and maybe write under the locks */
    uint64_t taddr;
    ret = osc_newrma_cma_target_addr(module, target, target_disp, &tl, &taddr);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    uint64_t offset = MPI_WIN_FLAVOR_DYNAMIC == module->flavor
        ? taddr : taddr - osc_newrma_shm_peer(&module->shm, target)->base;
    pid_t pid = osc_newrma_shm_peer(&module->shm, target)->pid;
    bool self = target == module->rank;
    acc_locks_t locks;
    acc_lock(module, &locks, target, offset, size);
    if (self) {
        memcpy(result_addr, (void *) (uintptr_t) taddr, size);
    } else {
        ret = osc_newrma_cma_copy(pid, result_addr, taddr, size, false);
    }
    if (OMPI_SUCCESS == ret && 0 == memcmp(result_addr, compare_addr, size)) {
        if (self) {
            memcpy((void *) (uintptr_t) taddr, origin_addr, size);
        } else {
            ret = osc_newrma_cma_copy(pid, (void *) origin_addr, taddr, size, true);
        }
    }
    acc_unlock(module, &locks);
    return ret;
}

/* ------------------------------------------------------------------ */
/* entry points                                                        */
/* ------------------------------------------------------------------ */

int osc_newrma_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                          int target, ptrdiff_t target_disp, int target_count,
                          struct ompi_datatype_t *target_dt, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return osc_newrma_accumulate_any(win, origin_addr, origin_count, origin_dt, NULL, 0, NULL, target,
                                     target_disp, target_count, target_dt, op);
}

int osc_newrma_get_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                              void *result_addr, int result_count, struct ompi_datatype_t *result_dt,
                              int target, ptrdiff_t target_disp, int target_count,
                              struct ompi_datatype_t *target_dt, struct ompi_op_t *op, struct ompi_win_t *win)
{
    return osc_newrma_accumulate_any(win, origin_addr, origin_count, origin_dt, result_addr, result_count,
                                     result_dt, target, target_disp, target_count, target_dt, op);
}

/* Open MPI's MPI layer checks the op only for (get_)accumulate.  Its table
 * has no entry for MPI_REPLACE and MPI_NO_OP, valid on any type. */
bool osc_newrma_fop_op_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    char *msg = NULL;
    bool ok = ompi_op_is_intrinsic(op)
              && (&ompi_mpi_op_replace.op == op || &ompi_mpi_op_no_op.op == op
                  || ompi_op_is_valid(op, dt, &msg, "MPI_Fetch_and_op"));
    free(msg);
    return ok;
}

int osc_newrma_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt,
                            int target, ptrdiff_t target_disp, struct ompi_op_t *op, struct ompi_win_t *win)
{
    if (!osc_newrma_fop_op_ok(op, dt)) {
        return MPI_ERR_OP;
    }
    if (NEWRMA_PATH_DIRECT == osc_newrma_module(win)->path) {
        /* the common case, a counter in mapped memory: one CPU atomic */
        ompi_osc_newrma_module_t *module = osc_newrma_module(win);
        osc_newrma_layout_t tl;
        char *t;
        osc_newrma_datatype_layout(dt, 1, &tl);
        if (tl.contiguous && (4 == tl.bytes || 8 == tl.bytes) && (size_t) tl.span == tl.bytes
            && OMPI_SUCCESS == osc_newrma_epoch_access(module, target)
            && OMPI_SUCCESS == osc_newrma_direct_target_addr(module, target, target_disp, &tl, &t)
            && atomic_element(t + tl.gap, tl.bytes)) {
            atomic_apply(t + tl.gap, origin_addr, result_addr, tl.bytes, dt, op);
            opal_atomic_mb();
            return OMPI_SUCCESS;
        }
    }
    return osc_newrma_accumulate_any(win, origin_addr, 1, dt, result_addr, 1, dt, target, target_disp, 1, dt, op);
}
