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
 * Errors of the accumulate family, with MPI_ERRORS_RETURN on the window, on
 * every flavor; after each error the window still works (an accumulate to a
 * counter right after it gives an exact total at the end), and nothing the
 * failed call could have written changed.
 *
 *  1. MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
 *     MPI_Compare_and_swap (and MPI_Raccumulate, MPI_Rget_accumulate) outside
 *     any epoch -- before the first synchronization, after a closing fence,
 *     during an exposure-only PSCW epoch, to a rank not locked, to a rank not
 *     in the start group: MPI_ERR_RMA_SYNC.
 *  2. Target data beyond the target's window (just past the end, straddling
 *     it, far beyond, a datatype whose extent reaches past the end, bytes
 *     before / after an attached region of a dynamic window):
 *     MPI_ERR_RMA_RANGE, and every rank's window (with guards around create
 *     and dynamic memory) and the result buffers unchanged.  A negative
 *     displacement: MPI_ERR_DISP (Open MPI's MPI layer).
 *  3. Op/datatype pairs MPI forbids (MPI-3.1 5.9.2: bitwise ops on floating
 *     types, logical ops on floating / complex types, MAX on complex,
 *     MAXLOC on a non-pair type, MINLOC on double, SUM on C_BOOL, SUM on a
 *     pair type, any reduction on MPI_WCHAR, BAND on a derived type of
 *     floats): MPI_ERR_OP from MPI_Accumulate and MPI_Get_accumulate (Open
 *     MPI's MPI layer checks these) and from MPI_Fetch_and_op (the
 *     component's check).  (MPI also forbids e.g. MPI_SUM on MPI_BYTE or
 *     MPI_CHAR, but Open MPI's reduction table accepts those, so they are not
 *     errors in Open MPI at all.)  A user-defined op: MPI_ERR_OP for all three.
 *  4. MPI_Compare_and_swap on MPI_DOUBLE, MPI_FLOAT, MPI_LONG_DOUBLE,
 *     MPI_C_DOUBLE_COMPLEX, MPI_2INT and a derived type: MPI_ERR_TYPE; on
 *     MPI_C_BOOL, MPI_BYTE, MPI_INT8_T, MPI_AINT, MPI_UINT64_T it works.
 *  5. Origin / result / target type signatures of different sizes (also
 *     with a zero-count target): MPI_ERR_TYPE.
 *  6. (last) An accumulate datatype mixing int and double: an error; with
 *     MPI_REPLACE / MPI_NO_OP, which Open MPI's MPI layer does not check,
 *     MPI_ERR_TYPE from the component.
 *
 * The error classes of 1, 2 (except MPI_ERR_DISP), 3 for fetch_and_op, 4, 5
 * and 6, and "nothing written" are what newrma promises (docs/errors.md); other
 * components only have to pass the rest (Open MPI's osc/sm checks no epochs
 * or ranges, osc/pt2pt crashes on a forbidden op in fetch_and_op), so with
 * another component those checks are skipped in the code (newrma() below).
 */
#include "common.h"

#include <stdbool.h>
#include <wchar.h>

#define W 16                    /* int64 elements per rank (disp_unit 8) */
#define CNT (W - 1)             /* the counter element */
#define GUARD 8                 /* int64 guard elements around create / dynamic memory */
#define GUARD_VALUE ((int64_t) 0x5a5a5a5a5a5a5a5all)
#define RES_FILL ((int64_t) -77)

static int rank, size, right, left;
static int is_newrma;

static int newrma(void) { return is_newrma; }

static int64_t init_value(int owner, int i) { return (int64_t) owner * 1000 + i + 1; }

typedef struct {
    MPI_Win win;
    int flavor;
    int64_t *mem;               /* this rank's W elements */
    int64_t *buffer;            /* create / dynamic: GUARD + W + GUARD */
    MPI_Aint *bases;            /* dynamic: every rank's address of element 0 */
    int counter_adds;           /* accumulates to the right neighbour's counter */
} ewin_t;

static void ewin_open(ewin_t *w, int flavor)
{
    memset(w, 0, sizeof(*w));
    w->flavor = flavor;
    switch (flavor) {
    case FLAVOR_CREATE:
    case FLAVOR_DYNAMIC:
        w->buffer = malloc(sizeof(int64_t) * (GUARD + W + GUARD));
        for (int i = 0; i < GUARD + W + GUARD; ++i) w->buffer[i] = GUARD_VALUE;
        w->mem = w->buffer + GUARD;
        if (FLAVOR_CREATE == flavor) {
            MPI_OK(MPI_Win_create(w->mem, W * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &w->win));
        } else {
            MPI_Aint mine;
            MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
            MPI_OK(MPI_Win_attach(w->win, w->mem, W * sizeof(int64_t)));
            MPI_Get_address(w->mem, &mine);
            w->bases = malloc(sizeof(MPI_Aint) * size);
            MPI_Allgather(&mine, 1, MPI_AINT, w->bases, 1, MPI_AINT, MPI_COMM_WORLD);
        }
        break;
    case FLAVOR_ALLOCATE:
        MPI_OK(MPI_Win_allocate(W * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem,
                                &w->win));
        break;
    case FLAVOR_SHARED:
        MPI_OK(MPI_Win_allocate_shared(W * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                                       &w->mem, &w->win));
        break;
    }
    MPI_OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    for (int i = 0; i < W; ++i) w->mem[i] = init_value(rank, i);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void ewin_close(ewin_t *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (FLAVOR_DYNAMIC == w->flavor) MPI_OK(MPI_Win_detach(w->win, w->mem));
    MPI_OK(MPI_Win_free(&w->win));
    free(w->buffer);
    free(w->bases);
}

/* Displacement of element i (may be out of range) at `target`. */
static MPI_Aint edisp(const ewin_t *w, int target, MPI_Aint i)
{
    if (FLAVOR_DYNAMIC == w->flavor) return w->bases[target] + i * (MPI_Aint) sizeof(int64_t);
    return i;
}

/* Proof of life after an error: +1 on the right neighbour's counter. */
static void still_works(ewin_t *w, const char *after)
{
    int64_t one = 1;
    int rc = MPI_Accumulate(&one, 1, MPI_INT64_T, right, edisp(w, right, CNT), 1, MPI_INT64_T, MPI_SUM, w->win);
    CHECK(MPI_SUCCESS == rc, "%s: accumulate after %s failed (%d)", flavor_names[w->flavor], after, rc);
    if (MPI_SUCCESS == rc) w->counter_adds++;
}

static int class_of(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT(w, expected, what, call)                                                                  \
    do {                                                                                                  \
        int cls_ = class_of(call);                                                                        \
        CHECK(cls_ == (expected), "%s: %s: %s returned class %d, expected %s (%d)", flavor_names[(w)->flavor], \
              what, #call, cls_, #expected, (expected));                                                  \
    } while (0)

/* result buffers of failed calls */
static int64_t res[8];
static void res_reset(void) { for (int i = 0; i < 8; ++i) res[i] = RES_FILL; }
static void res_check(const ewin_t *w, const char *what)
{
    if (!newrma()) return;
    for (int i = 0; i < 8; ++i)
        CHECK(RES_FILL == res[i], "%s: %s: the failed call wrote result element %d (%lld)", flavor_names[w->flavor],
              what, i, (long long) res[i]);
}

/* ---- 1. no epoch ------------------------------------------------------------ */

static void no_epoch_calls(ewin_t *w, int target, const char *what)
{
    int64_t o[2] = { 5, 5 }, c = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Aint d = edisp(w, target, 0);
    res_reset();
    EXPECT(w, MPI_ERR_RMA_SYNC, what, MPI_Accumulate(o, 2, MPI_INT64_T, target, d, 2, MPI_INT64_T, MPI_SUM, w->win));
    EXPECT(w, MPI_ERR_RMA_SYNC, what,
           MPI_Get_accumulate(o, 2, MPI_INT64_T, res, 2, MPI_INT64_T, target, d, 2, MPI_INT64_T, MPI_SUM, w->win));
    EXPECT(w, MPI_ERR_RMA_SYNC, what, MPI_Fetch_and_op(o, res + 2, MPI_INT64_T, target, d, MPI_SUM, w->win));
    EXPECT(w, MPI_ERR_RMA_SYNC, what, MPI_Compare_and_swap(o, &c, res + 3, MPI_INT64_T, target, d, w->win));
    EXPECT(w, MPI_ERR_RMA_SYNC, what,
           MPI_Raccumulate(o, 2, MPI_INT64_T, target, d, 2, MPI_INT64_T, MPI_SUM, w->win, &req));
    if (MPI_REQUEST_NULL != req) MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT(w, MPI_ERR_RMA_SYNC, what,
           MPI_Rget_accumulate(o, 2, MPI_INT64_T, res + 4, 2, MPI_INT64_T, target, d, 2, MPI_INT64_T, MPI_SUM,
                               w->win, &req));
    if (MPI_REQUEST_NULL != req) MPI_Wait(&req, MPI_STATUS_IGNORE);
    res_check(w, what);
}

static void sync_errors(ewin_t *w)
{
    MPI_Group world, only_self, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Win_get_group(w->win, &group);
    MPI_Group_incl(group, 1, &rank, &only_self);

    no_epoch_calls(w, right, "before any synchronization");

    MPI_OK(MPI_Win_fence(0, w->win));
    still_works(w, "calls outside any epoch");
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
    no_epoch_calls(w, right, "after a closing fence");

    /* an exposure epoch (to ourselves) without an access epoch */
    MPI_OK(MPI_Win_post(only_self, 0, w->win));
    no_epoch_calls(w, right, "in an exposure-only epoch");
    /* an access epoch to ourselves only */
    MPI_OK(MPI_Win_start(only_self, 0, w->win));
    if (size > 1) no_epoch_calls(w, right, "to a rank not in the start group");
    MPI_OK(MPI_Win_complete(w->win));
    MPI_OK(MPI_Win_wait(w->win));

    /* lock on ourselves only */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win));
    if (size > 1) no_epoch_calls(w, right, "to a rank not locked");
    MPI_OK(MPI_Win_unlock(rank, w->win));
    no_epoch_calls(w, right, "after unlock");

    MPI_OK(MPI_Win_lock_all(0, w->win));
    still_works(w, "epoch errors");
    MPI_OK(MPI_Win_unlock_all(w->win));
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Group_free(&only_self);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
}

/* ---- 2. range --------------------------------------------------------------- */

static void range_errors(ewin_t *w)
{
    const int t = right;
    int64_t o[4] = { 9, 9, 9, 9 }, c = init_value(t, 0);
    MPI_Datatype reach;
    MPI_Type_vector(2, 1, W, MPI_INT64_T, &reach);      /* element 0 and element W: one past the end */
    MPI_Type_commit(&reach);
    const struct { const char *what; MPI_Aint i; int n; } cases[] = {
        { "just past the end", W, 1 },
        { "straddling the end", W - 1, 2 },
        { "far beyond the end", 1000 * W, 1 },
    };

    MPI_OK(MPI_Win_lock_all(0, w->win));
    for (int k = 0; k < 3; ++k) {
        const char *what = cases[k].what;
        MPI_Aint d = edisp(w, t, cases[k].i);
        int n = cases[k].n;
        res_reset();
        EXPECT(w, MPI_ERR_RMA_RANGE, what, MPI_Accumulate(o, n, MPI_INT64_T, t, d, n, MPI_INT64_T, MPI_SUM, w->win));
        still_works(w, what);
        EXPECT(w, MPI_ERR_RMA_RANGE, what,
               MPI_Get_accumulate(o, n, MPI_INT64_T, res, n, MPI_INT64_T, t, d, n, MPI_INT64_T, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_RMA_RANGE, what,
               MPI_Get_accumulate(o, n, MPI_INT64_T, res + 2, n, MPI_INT64_T, t, d, n, MPI_INT64_T, MPI_NO_OP,
                                  w->win));
        still_works(w, what);
        if (1 == n) {
            EXPECT(w, MPI_ERR_RMA_RANGE, what, MPI_Fetch_and_op(o, res + 4, MPI_INT64_T, t, d, MPI_SUM, w->win));
            EXPECT(w, MPI_ERR_RMA_RANGE, what, MPI_Compare_and_swap(o, &c, res + 5, MPI_INT64_T, t, d, w->win));
            still_works(w, what);
        }
        MPI_OK(MPI_Win_flush(t, w->win));
        res_check(w, what);
    }
    {
        const char *what = "a datatype reaching past the end";
        res_reset();
        EXPECT(w, MPI_ERR_RMA_RANGE, what,
               MPI_Accumulate(o, 2, MPI_INT64_T, t, edisp(w, t, 0), 1, reach, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_RMA_RANGE, what,
               MPI_Get_accumulate(o, 2, MPI_INT64_T, res, 2, MPI_INT64_T, t, edisp(w, t, 0), 1, reach, MPI_REPLACE,
                                  w->win));
        still_works(w, what);
        res_check(w, what);
    }
    if (FLAVOR_DYNAMIC == w->flavor) {
        const char *what = "bytes before the attached region";
        res_reset();
        EXPECT(w, MPI_ERR_RMA_RANGE, what,
               MPI_Accumulate(o, 2, MPI_INT64_T, t, edisp(w, t, -1), 2, MPI_INT64_T, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_RMA_RANGE, what, MPI_Fetch_and_op(o, res, MPI_INT64_T, t, edisp(w, t, -1), MPI_SUM, w->win));
        still_works(w, what);
        res_check(w, what);
    } else {
        const char *what = "a negative displacement";
        res_reset();
        EXPECT(w, MPI_ERR_DISP, what, MPI_Accumulate(o, 1, MPI_INT64_T, t, -1, 1, MPI_INT64_T, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_DISP, what,
               MPI_Get_accumulate(o, 1, MPI_INT64_T, res, 1, MPI_INT64_T, t, -1, 1, MPI_INT64_T, MPI_SUM, w->win));
        still_works(w, what);
        res_check(w, what);
    }
    MPI_OK(MPI_Win_unlock_all(w->win));
    MPI_Type_free(&reach);
}

/* ---- 3. ops ----------------------------------------------------------------- */

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; ++i) ((int64_t *) inout)[i] += ((int64_t *) in)[i];
}

static void op_errors(ewin_t *w)
{
    const int t = right;
    /* origin values for any type: 64 bytes of small numbers */
    _Alignas(32) char o[64];
    memset(o, 0, sizeof(o));
    o[0] = 1;
    MPI_Datatype floats;
    MPI_Type_contiguous(2, MPI_FLOAT, &floats);
    MPI_Type_commit(&floats);
    const struct { const char *what; MPI_Op op; MPI_Datatype dt; int predefined; } bad[] = {
        { "MPI_BAND on MPI_FLOAT", MPI_BAND, MPI_FLOAT, 1 },
        { "MPI_BOR on MPI_DOUBLE", MPI_BOR, MPI_DOUBLE, 1 },
        { "MPI_BXOR on MPI_LONG_DOUBLE", MPI_BXOR, MPI_LONG_DOUBLE, 1 },
        { "MPI_LAND on MPI_DOUBLE", MPI_LAND, MPI_DOUBLE, 1 },
        { "MPI_LXOR on MPI_C_FLOAT_COMPLEX", MPI_LXOR, MPI_C_FLOAT_COMPLEX, 1 },
        { "MPI_MAX on MPI_C_DOUBLE_COMPLEX", MPI_MAX, MPI_C_DOUBLE_COMPLEX, 1 },
        { "MPI_MAXLOC on MPI_INT", MPI_MAXLOC, MPI_INT, 1 },
        { "MPI_MINLOC on MPI_DOUBLE", MPI_MINLOC, MPI_DOUBLE, 1 },
        { "MPI_SUM on MPI_C_BOOL", MPI_SUM, MPI_C_BOOL, 1 },
        { "MPI_SUM on MPI_2INT", MPI_SUM, MPI_2INT, 1 },
        { "MPI_MIN on MPI_WCHAR", MPI_MIN, MPI_WCHAR, 1 },
        { "MPI_BAND on a contiguous type of MPI_FLOAT", MPI_BAND, floats, 0 },
    };
    MPI_Op user;
    MPI_Op_create(user_fn, 1, &user);

    MPI_OK(MPI_Win_lock_all(0, w->win));
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); ++k) {
        const char *what = bad[k].what;
        MPI_Aint d = edisp(w, t, 0);
        res_reset();
        EXPECT(w, MPI_ERR_OP, what, MPI_Accumulate(o, 1, bad[k].dt, t, d, 1, bad[k].dt, bad[k].op, w->win));
        still_works(w, what);
        EXPECT(w, MPI_ERR_OP, what,
               MPI_Get_accumulate(o, 1, bad[k].dt, res, 1, bad[k].dt, t, d, 1, bad[k].dt, bad[k].op, w->win));
        still_works(w, what);
        if (bad[k].predefined && newrma()) {
            EXPECT(w, MPI_ERR_OP, what, MPI_Fetch_and_op(o, res, bad[k].dt, t, d, bad[k].op, w->win));
            still_works(w, what);
        }
        MPI_OK(MPI_Win_flush(t, w->win));
        res_check(w, what);
    }
    {
        const char *what = "a user-defined op";
        int64_t v = 3;
        MPI_Aint d = edisp(w, t, 1);
        res_reset();
        EXPECT(w, MPI_ERR_OP, what, MPI_Accumulate(&v, 1, MPI_INT64_T, t, d, 1, MPI_INT64_T, user, w->win));
        still_works(w, what);
        EXPECT(w, MPI_ERR_OP, what,
               MPI_Get_accumulate(&v, 1, MPI_INT64_T, res, 1, MPI_INT64_T, t, d, 1, MPI_INT64_T, user, w->win));
        still_works(w, what);
        if (newrma()) {
            EXPECT(w, MPI_ERR_OP, what, MPI_Fetch_and_op(&v, res, MPI_INT64_T, t, d, user, w->win));
            still_works(w, what);
        }
        MPI_OK(MPI_Win_flush(t, w->win));
        res_check(w, what);
    }
    MPI_OK(MPI_Win_unlock_all(w->win));
    MPI_Op_free(&user);
    MPI_Type_free(&floats);
}

/* ---- 4, 5. compare_and_swap types, mismatched sizes --------------------------- */

static void type_errors(ewin_t *w)
{
    const int t = right;
    _Alignas(32) char o[32], c[32];
    memset(o, 0, sizeof(o));
    memset(c, 0x11, sizeof(c));         /* never equal to the target: a success would not write either */
    MPI_Datatype one_int64;
    MPI_Type_contiguous(1, MPI_INT64_T, &one_int64);
    MPI_Type_commit(&one_int64);
    const struct { const char *what; MPI_Datatype dt; } bad[] = {
        { "compare_and_swap on MPI_DOUBLE", MPI_DOUBLE },
        { "compare_and_swap on MPI_FLOAT", MPI_FLOAT },
        { "compare_and_swap on MPI_LONG_DOUBLE", MPI_LONG_DOUBLE },
        { "compare_and_swap on MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX },
        { "compare_and_swap on MPI_2INT", MPI_2INT },
        { "compare_and_swap on a derived type", one_int64 },
    };

    MPI_OK(MPI_Win_lock_all(0, w->win));
    if (newrma()) {
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); ++k) {
            res_reset();
            EXPECT(w, MPI_ERR_TYPE, bad[k].what,
                   MPI_Compare_and_swap(o, c, res, bad[k].dt, t, edisp(w, t, 2), w->win));
            still_works(w, bad[k].what);
            MPI_OK(MPI_Win_flush(t, w->win));
            res_check(w, bad[k].what);
        }
        /* sizes that do not match */
        int64_t v[4] = { 1, 1, 1, 1 };
        res_reset();
        EXPECT(w, MPI_ERR_TYPE, "origin larger than target",
               MPI_Accumulate(v, 2, MPI_INT64_T, t, edisp(w, t, 2), 1, MPI_INT64_T, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_TYPE, "origin smaller than target",
               MPI_Accumulate(v, 1, MPI_INT64_T, t, edisp(w, t, 2), 2, MPI_INT64_T, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_TYPE, "result smaller than target",
               MPI_Get_accumulate(v, 2, MPI_INT64_T, res, 1, MPI_INT64_T, t, edisp(w, t, 2), 2, MPI_INT64_T, MPI_SUM,
                                  w->win));
        EXPECT(w, MPI_ERR_TYPE, "result larger than target",
               MPI_Get_accumulate(v, 1, MPI_INT64_T, res, 2, MPI_INT64_T, t, edisp(w, t, 2), 1, MPI_INT64_T, MPI_SUM,
                                  w->win));
        /* a zero-count target does not make other sizes right (MPI_Put says MPI_ERR_TYPE here too) */
        EXPECT(w, MPI_ERR_TYPE, "origin of 2 elements, target of none",
               MPI_Accumulate(v, 2, MPI_INT64_T, t, edisp(w, t, 2), 0, MPI_INT64_T, MPI_SUM, w->win));
        EXPECT(w, MPI_ERR_TYPE, "result of 2 elements, target of none",
               MPI_Get_accumulate(v, 0, MPI_INT64_T, res, 2, MPI_INT64_T, t, edisp(w, t, 2), 0, MPI_INT64_T,
                                  MPI_NO_OP, w->win));
        still_works(w, "mismatched sizes");
        MPI_OK(MPI_Win_flush(t, w->win));
        res_check(w, "mismatched sizes");
    }
    MPI_OK(MPI_Win_unlock_all(w->win));
    MPI_Type_free(&one_int64);
}

/* compare_and_swap on the other types MPI allows it for (logical, byte,
 * multi-language, unsigned): MPI_BYTE on element 4, MPI_INT8_T on 5,
 * MPI_AINT on 6, MPI_UINT64_T on 7 of the right neighbour's window (the
 * 1-byte ones on the element's first byte), then MPI_BYTE to clear element
 * 3's first byte and MPI_C_BOOL to set it to true. */
static void cas_ok(ewin_t *w)
{
    const int t = right;
    MPI_OK(MPI_Win_lock_all(0, w->win));
    bool bnew = true, bcmp = false, bold = true;
    unsigned char ynew = 0xab, yold = 0, ycmp = (unsigned char) (init_value(t, 4) & 0xff);  /* little-endian */
    int8_t inew = -5, iold = 0, icmp = (int8_t) (init_value(t, 5) & 0xff);
    MPI_Aint anew = 424242, acmp = init_value(t, 6), aold = -1;
    uint64_t unew = 0xfedcba9876543210ull, ucmp = (uint64_t) init_value(t, 7), uold = 0;
    MPI_OK(MPI_Compare_and_swap(&ynew, &ycmp, &yold, MPI_BYTE, t, edisp(w, t, 4), w->win));
    MPI_OK(MPI_Compare_and_swap(&inew, &icmp, &iold, MPI_INT8_T, t, edisp(w, t, 5), w->win));
    MPI_OK(MPI_Compare_and_swap(&anew, &acmp, &aold, MPI_AINT, t, edisp(w, t, 6), w->win));
    MPI_OK(MPI_Compare_and_swap(&unew, &ucmp, &uold, MPI_UINT64_T, t, edisp(w, t, 7), w->win));
    /* C_BOOL into element 3, whose first byte we first make 0 with a byte CAS */
    unsigned char zero = 0, low3 = (unsigned char) (init_value(t, 3) & 0xff), old3 = 0;
    MPI_OK(MPI_Compare_and_swap(&zero, &low3, &old3, MPI_BYTE, t, edisp(w, t, 3), w->win));
    MPI_OK(MPI_Compare_and_swap(&bnew, &bcmp, &bold, MPI_C_BOOL, t, edisp(w, t, 3), w->win));
    MPI_OK(MPI_Win_unlock_all(w->win));
    const char *fl = flavor_names[w->flavor];
    CHECK(yold == ycmp && iold == icmp && aold == acmp && uold == ucmp && old3 == low3 && !bold,
          "%s: compare_and_swap returned byte %#x (%#x) int8 %d (%d) aint %ld (%ld) uint64 %llx (%llx) byte %#x (%#x) "
          "bool %d (0)", fl, yold, ycmp, iold, icmp, (long) aold, (long) acmp, (unsigned long long) uold,
          (unsigned long long) ucmp, old3, low3, bold);
}

/* An accumulate datatype mixing two predefined types (MPI-3.1 11.3.4: all
 * basic components must be the same predefined type).  For MPI_SUM Open
 * MPI's MPI layer refuses it (MPI_ERR_ARG in 4.1); for MPI_REPLACE and
 * MPI_NO_OP it does not look, so the component must: MPI_ERR_TYPE.  Run
 * last, on a window of its own: a crash here leaves the other results
 * already printed. */
static void mixed_type_errors(int flavor)
{
    ewin_t w;
    ewin_open(&w, flavor);
    const int t = right;
    MPI_Datatype mixed;
    int blens[2] = { 1, 1 };
    MPI_Aint displs[2] = { 0, 8 };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE };
    MPI_Type_create_struct(2, blens, displs, types, &mixed);
    MPI_Type_commit(&mixed);
    _Alignas(16) char o[16];
    memset(o, 0, sizeof(o));
    const char *what = "a datatype of int and double";

    MPI_OK(MPI_Win_lock_all(0, w.win));
    res_reset();
    int rc = MPI_Accumulate(o, 1, mixed, t, edisp(&w, t, 0), 1, mixed, MPI_SUM, w.win);
    CHECK(MPI_SUCCESS != rc, "%s: %s: MPI_Accumulate(MPI_SUM) succeeded", flavor_names[flavor], what);
    if (newrma()) {
        EXPECT(&w, MPI_ERR_TYPE, what, MPI_Accumulate(o, 1, mixed, t, edisp(&w, t, 0), 1, mixed, MPI_REPLACE, w.win));
        EXPECT(&w, MPI_ERR_TYPE, what,
               MPI_Get_accumulate(o, 1, mixed, res, 1, mixed, t, edisp(&w, t, 0), 1, mixed, MPI_NO_OP, w.win));
        EXPECT(&w, MPI_ERR_TYPE, what,
               MPI_Get_accumulate(o, 1, mixed, res, 1, mixed, t, edisp(&w, t, 0), 1, mixed, MPI_REPLACE, w.win));
    }
    still_works(&w, what);
    MPI_OK(MPI_Win_unlock_all(w.win));
    res_check(&w, what);
    MPI_Barrier(MPI_COMM_WORLD);
    int adds = 0;
    MPI_Sendrecv(&w.counter_adds, 1, MPI_INT, right, 0, &adds, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win));
    for (int i = 0; i < W; ++i) {
        int64_t want = init_value(rank, i) + (CNT == i ? adds : 0);
        CHECK(w.mem[i] == want, "%s: %s: window element %d is %lld, expected %lld", flavor_names[flavor], what, i,
              (long long) w.mem[i], (long long) want);
    }
    MPI_OK(MPI_Win_unlock(rank, w.win));
    MPI_Type_free(&mixed);
    ewin_close(&w);
}

/* ---- checks ------------------------------------------------------------------ */

static void check_memory(ewin_t *w)
{
    const char *fl = flavor_names[w->flavor];
    int adds = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    /* how many counter adds my left neighbour made */
    MPI_Sendrecv(&w->counter_adds, 1, MPI_INT, right, 0, &adds, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win));
    for (int i = 0; i < W; ++i) {
        int64_t want = init_value(rank, i);
        if (CNT == i) want += adds;
        if (3 <= i && i <= 7) {
            /* cas_ok() changed these */
            int64_t v = init_value(rank, i);
            unsigned char *b = (unsigned char *) &v;
            if (3 == i) b[0] = 1;                       /* byte CAS to 0, then bool CAS to true */
            if (4 == i) b[0] = 0xab;
            if (5 == i) b[0] = (unsigned char) -5;
            if (6 == i) v = 424242;
            if (7 == i) v = (int64_t) 0xfedcba9876543210ull;
            want = v;
        }
        CHECK(w->mem[i] == want, "%s: window element %d is %lld, expected %lld%s", fl, i, (long long) w->mem[i],
              (long long) want, CNT == i ? " (the counter: accumulates after errors lost or doubled)" : "");
    }
    if (w->buffer && newrma()) {
        for (int i = 0; i < GUARD; ++i) {
            CHECK(GUARD_VALUE == w->buffer[i], "%s: guard before the window, element %d, changed", fl, i);
            CHECK(GUARD_VALUE == w->buffer[GUARD + W + i], "%s: guard after the window, element %d, changed", fl, i);
        }
    }
    MPI_OK(MPI_Win_unlock(rank, w->win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    const char *osc = getenv("OMPI_MCA_osc");
    is_newrma = NULL == osc || NULL != strstr(osc, "newrma");

    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        ewin_t w;
        ewin_open(&w, flavor);
        if (newrma()) {
            sync_errors(&w);
            range_errors(&w);
        }
        op_errors(&w);
        type_errors(&w);
        cas_ok(&w);
        check_memory(&w);
        ewin_close(&w);
    }
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) mixed_type_errors(flavor);
    return test_finalize("acc_errors");
}
