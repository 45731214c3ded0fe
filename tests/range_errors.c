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
 * MPI_Put / MPI_Get whose target bytes are not all inside the target's
 * window fail with MPI_ERR_RMA_RANGE and write nothing: not the target's
 * window, not what lies next to it (the guard after a create window, the
 * next rank's memory in a contiguous shared window), not the origin buffer
 * of a get.  Legal accesses that end exactly at the window's end still work.
 *
 * create / allocate / allocate_shared windows whose sizes differ per rank
 * (so the check must use the target's size, not the origin's), with
 * disp_unit 8, disp_unit 1, and disp units that differ per rank; and a
 * window where odd ranks have no memory at all.
 *
 * Put / get with origin and target type signatures of different sizes:
 * MPI_ERR_TYPE and nothing written (every flavor, dynamic included).
 *
 * newrma-test: only-newrma
 * (other components do not check target ranges)
 */
#include "common.h"

#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#define GUARD 16                           /* int64 guard elements around a create window */
#define GUARD_VALUE ((int64_t) 0x5a5a5a5a5a5a5a5all)
#define ORIGIN_FILL ((int64_t) -77)

static int rank, size;

enum { MODE_DU8, MODE_DU1, MODE_MIXED, MODE_EMPTY_ODD, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = { "disp_unit 8", "disp_unit 1", "mixed disp units",
                                                    "odd ranks empty" };

static int nelem_of(int mode, int r)
{
    if (MODE_EMPTY_ODD == mode && (r % 2)) return 0;
    return 8 + 4 * r;
}

static int du_of(int mode, int r)
{
    switch (mode) {
    case MODE_DU1: return 1;
    case MODE_MIXED: return (r % 2) ? 1 : 8;
    default: return 8;
    }
}

static int64_t init_value(int owner, int i) { return (int64_t) owner * 1000 + i + 1; }

typedef struct {
    MPI_Win win;
    int flavor, mode;
    int64_t *mem;      /* this rank's window memory */
    int64_t *buffer;   /* create: window memory + guard */
    int nelem;
} rwin_t;

static void rwin_open(rwin_t *w, int flavor, int mode)
{
    MPI_Aint bytes;
    memset(w, 0, sizeof(*w));
    w->flavor = flavor;
    w->mode = mode;
    w->nelem = nelem_of(mode, rank);
    bytes = (MPI_Aint) w->nelem * (MPI_Aint) sizeof(int64_t);
    switch (flavor) {
    case FLAVOR_CREATE:
        /* guards before and after the window memory */
        w->buffer = malloc(sizeof(int64_t) * (size_t) (GUARD + w->nelem + GUARD));
        for (int i = 0; i < GUARD + w->nelem + GUARD; ++i) w->buffer[i] = GUARD_VALUE;
        w->mem = w->buffer + GUARD;
        MPI_OK(MPI_Win_create(w->mem, bytes, du_of(mode, rank), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
        break;
    case FLAVOR_ALLOCATE:
        MPI_OK(MPI_Win_allocate(bytes, du_of(mode, rank), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
        break;
    case FLAVOR_SHARED:
        MPI_OK(MPI_Win_allocate_shared(bytes, du_of(mode, rank), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem,
                                       &w->win));
        break;
    }
    MPI_OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    for (int i = 0; i < w->nelem; ++i) w->mem[i] = init_value(rank, i);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void rwin_close(rwin_t *w)
{
    MPI_OK(MPI_Win_free(&w->win));
    free(w->buffer);
}

/* Displacement, in the target's disp units, of int64 element `index`. */
static MPI_Aint elem_disp(int mode, int target, MPI_Aint index)
{
    return index * (MPI_Aint) sizeof(int64_t) / du_of(mode, target);
}

/* This rank's window (and guard) still hold what they held before. `extra`
 * elements past the window were legally written by the control epoch. */
static void check_unchanged(const rwin_t *w, const char *when, int last_written_by_left)
{
    const char *fl = flavor_names[w->flavor], *md = mode_names[w->mode];
    int left = (rank + size - 1) % size, bad = 0;
    for (int i = 0; i < w->nelem; ++i) {
        int64_t expect = init_value(rank, i);
        if (last_written_by_left && i == w->nelem - 1) expect = -init_value(left, i);
        if (w->mem[i] != expect) {
            if (bad++ < 3)
                CHECK(0, "%s, %s, %s: window element %d is %lld, expected %lld", fl, md, when, i,
                      (long long) w->mem[i], (long long) expect);
        }
    }
    if (FLAVOR_CREATE == w->flavor) {
        for (int i = 0; i < GUARD; ++i) {
            if (w->buffer[i] != GUARD_VALUE && bad++ < 6)
                CHECK(0, "%s, %s, %s: guard element %d before the window start was overwritten (%lld)", fl, md,
                      when, i - GUARD, (long long) w->buffer[i]);
            if (w->mem[w->nelem + i] != GUARD_VALUE && bad++ < 6)
                CHECK(0, "%s, %s, %s: guard element %d past the window end was overwritten (%lld)", fl, md, when,
                      i, (long long) w->mem[w->nelem + i]);
        }
    }
    if (bad > 6) CHECK(0, "%s, %s, %s: %d elements changed in all", fl, md, when, bad);
}

/* Derived types built for a target with nt elements. */
typedef struct {
    MPI_Datatype vec_past;     /* 2 elements, stride nt: the second is at nt */
    MPI_Datatype vec_fit;      /* 2 elements, stride nt-1: the second is the last */
    MPI_Datatype stride2;      /* int64 resized to extent 16 */
    MPI_Datatype at_nt;        /* one element at nt (lower bound past the end) */
    MPI_Datatype at_last;      /* one element at nt-1 */
    MPI_Datatype before;       /* one element at -1 (negative lower bound) */
} types_t;

static void types_build(types_t *t, int nt)
{
    int past = nt, last = nt - 1 > 0 ? nt - 1 : 1;
    MPI_OK(MPI_Type_vector(2, 1, past > 0 ? past : 1, MPI_INT64_T, &t->vec_past));
    MPI_OK(MPI_Type_vector(2, 1, last, MPI_INT64_T, &t->vec_fit));
    MPI_OK(MPI_Type_create_resized(MPI_INT64_T, 0, 2 * sizeof(int64_t), &t->stride2));
    MPI_OK(MPI_Type_create_indexed_block(1, 1, &past, MPI_INT64_T, &t->at_nt));
    last = nt - 1 >= 0 ? nt - 1 : 0;
    MPI_OK(MPI_Type_create_indexed_block(1, 1, &last, MPI_INT64_T, &t->at_last));
    int minus_one = -1;
    MPI_OK(MPI_Type_create_indexed_block(1, 1, &minus_one, MPI_INT64_T, &t->before));
    MPI_OK(MPI_Type_commit(&t->before));
    MPI_OK(MPI_Type_commit(&t->vec_past));
    MPI_OK(MPI_Type_commit(&t->vec_fit));
    MPI_OK(MPI_Type_commit(&t->stride2));
    MPI_OK(MPI_Type_commit(&t->at_nt));
    MPI_OK(MPI_Type_commit(&t->at_last));
}

static void types_free(types_t *t)
{
    MPI_Type_free(&t->vec_past);
    MPI_Type_free(&t->vec_fit);
    MPI_Type_free(&t->stride2);
    MPI_Type_free(&t->at_nt);
    MPI_Type_free(&t->at_last);
    MPI_Type_free(&t->before);
}

#define MAXN 64

/* Every out-of-range access this rank makes to `target`, as put and get. */
static void bad_accesses(rwin_t *w, int target)
{
    const char *fl = flavor_names[w->flavor], *md = mode_names[w->mode];
    int mode = w->mode, nt = nelem_of(mode, target), du = du_of(mode, target);
    int64_t src[2 * MAXN], dst[2 * MAXN];
    types_t t;
    MPI_Win win = w->win;
    const MPI_Aint huge[] = {
        PTRDIFF_MAX,                          /* largest MPI_Aint */
        PTRDIFF_MAX / 8,                      /* offset near the top of the address space */
        PTRDIFF_MAX - 3,                      /* disp_unit 1: offset + size overflows */
        (MPI_Aint) 1 << 61,                   /* x 8 wraps to 0 in 64 bits */
        ((MPI_Aint) 1 << 61) + 1,             /* x 8 wraps to 8 */
        ((MPI_Aint) 1 << 32) + 1,             /* wraps to 1 in 32 bits */
        (MPI_Aint) 1 << 40,
    };

    for (int i = 0; i < 2 * MAXN; ++i) src[i] = -(int64_t) (rank * 1000 + i) - 5000;
    for (int i = 0; i < 2 * MAXN; ++i) dst[i] = ORIGIN_FILL;
    types_build(&t, nt);

#define BAD_PUT(what, count, type, disp)                                                          \
    do {                                                                                         \
        int rc_ = MPI_Put(src, (count), (type), target, (disp), (count), (type), win), cls_;     \
        MPI_Error_class(rc_, &cls_);                                                             \
        CHECK(MPI_ERR_RMA_RANGE == cls_, "%s, %s, target %d (%d elements): put %s returned class %d, expected " \
              "MPI_ERR_RMA_RANGE", fl, md, target, nt, what, cls_);                              \
    } while (0)
#define BAD_GET(what, count, type, disp)                                                          \
    do {                                                                                         \
        int rc_ = MPI_Get(dst, (count), (type), target, (disp), (count), (type), win), cls_;     \
        MPI_Error_class(rc_, &cls_);                                                             \
        CHECK(MPI_ERR_RMA_RANGE == cls_, "%s, %s, target %d (%d elements): get %s returned class %d, expected " \
              "MPI_ERR_RMA_RANGE", fl, md, target, nt, what, cls_);                              \
    } while (0)
#define BAD_BOTH(what, count, type, disp) \
    do { BAD_PUT(what, count, type, disp); BAD_GET(what, count, type, disp); } while (0)

    /* just past the end */
    BAD_BOTH("of 1 element at the end", 1, MPI_INT64_T, elem_disp(mode, target, nt));
    BAD_BOTH("of 1 element 1000 elements past the end", 1, MPI_INT64_T, elem_disp(mode, target, nt + 1000));
    BAD_BOTH("of all elements + 1 at 0", nt + 1, MPI_INT64_T, 0);
    if (nt > 0) {
        BAD_BOTH("of 2 elements at the last one", 2, MPI_INT64_T, elem_disp(mode, target, nt - 1));
        BAD_BOTH("of all elements at 1", nt, MPI_INT64_T, elem_disp(mode, target, 1));
    }
    if (1 == du && nt > 0) {
        /* straddling by less than one element */
        BAD_BOTH("of 1 element 4 bytes before the end", 1, MPI_INT64_T, (MPI_Aint) nt * 8 - 4);
        BAD_BOTH("of 1 byte at the end", 1, MPI_BYTE, (MPI_Aint) nt * 8);
    }
    /* datatypes whose extent runs past the end of the window */
    BAD_BOTH("of vector(2,1,nt) at 0 (second block at the end)", 1, t.vec_past, 0);
    if (nt > 0) BAD_BOTH("of vector(2,1,nt-1) at 1", 1, t.vec_fit, elem_disp(mode, target, 1));
    BAD_BOTH("of nt/2+1 int64 resized to extent 16 at 0", nt / 2 + 1, t.stride2, 0);
    BAD_BOTH("of a type with its only element at nt (lb past the end) at 0", 1, t.at_nt, 0);
    if (nt > 0) BAD_BOTH("of a type with its only element at nt-1, at 1", 1, t.at_last, elem_disp(mode, target, 1));
    /* ... and before its start */
    BAD_BOTH("of a type with its only element at -1 (negative lb), at 0", 1, t.before, 0);
    BAD_BOTH("of 2 int64 from a type with its element at -1, at 0", 2, t.before, 0);
    /* huge displacements */
    for (size_t k = 0; k < sizeof(huge) / sizeof(huge[0]); ++k) {
        char what[96];
        snprintf(what, sizeof(what), "of 1 element at displacement %lld", (long long) huge[k]);
        BAD_BOTH(what, 1, MPI_INT64_T, huge[k]);
        snprintf(what, sizeof(what), "of the lb-shifted type at displacement %lld", (long long) huge[k]);
        BAD_BOTH(what, 1, t.at_last, huge[k]);
    }

    for (int i = 0; i < 2 * MAXN; ++i) {
        if (dst[i] != ORIGIN_FILL) {
            CHECK(0, "%s, %s: a refused get wrote origin element %d (%lld)", fl, md, i, (long long) dst[i]);
            break;
        }
    }
    types_free(&t);
#undef BAD_PUT
#undef BAD_GET
#undef BAD_BOTH
}

/* Legal accesses right up to the end: a vector whose second block is the
 * last element, a type whose only element is the last, a put of the last
 * element.  Called inside a fence epoch; leaves one (unused) open. */
static void good_accesses(rwin_t *w, int target)
{
    const char *fl = flavor_names[w->flavor], *md = mode_names[w->mode];
    int mode = w->mode, nt = nelem_of(mode, target);
    int64_t last = -init_value(rank, nt - 1), got[2] = { 0, 0 }, got1 = 0;
    types_t t;

    if (0 == nt) {
        /* the same fences as below: fence is collective */
        for (int k = 0; k < 3; ++k) MPI_OK(MPI_Win_fence(0, w->win));
        return;
    }
    types_build(&t, nt);
    MPI_OK(MPI_Get(got, 2, MPI_INT64_T, target, 0, 1, t.vec_fit, w->win));
    MPI_OK(MPI_Get(&got1, 1, MPI_INT64_T, target, 0, 1, t.at_last, w->win));
    int64_t first = 0;
    MPI_OK(MPI_Get(&first, 1, MPI_INT64_T, target, elem_disp(mode, target, 1), 1, t.before, w->win));
    MPI_OK(MPI_Win_fence(0, w->win));
    CHECK(first == init_value(target, 0), "%s, %s: get of element 0 through a type with lb -1 at 1 returned %lld, "
          "expected %lld", fl, md, (long long) first, (long long) init_value(target, 0));
    CHECK(got[0] == init_value(target, 0) && got[1] == init_value(target, nt - 1),
          "%s, %s: get of vector(2,1,nt-1) returned %lld,%lld, expected %lld,%lld", fl, md, (long long) got[0],
          (long long) got[1], (long long) init_value(target, 0), (long long) init_value(target, nt - 1));
    CHECK(got1 == init_value(target, nt - 1), "%s, %s: get of the last element returned %lld, expected %lld", fl,
          md, (long long) got1, (long long) init_value(target, nt - 1));

    MPI_OK(MPI_Put(&last, 1, MPI_INT64_T, target, elem_disp(mode, target, nt - 1), 1, MPI_INT64_T, w->win));
    MPI_OK(MPI_Win_fence(0, w->win));
    got1 = 0;
    MPI_OK(MPI_Get(&got1, 1, MPI_INT64_T, target, 0, 1, t.at_last, w->win));
    MPI_OK(MPI_Win_fence(0, w->win));
    CHECK(got1 == last, "%s, %s: get of the last element after a put returned %lld, expected %lld", fl, md,
          (long long) got1, (long long) last);
    types_free(&t);
}

/* ---- spans that overflow 64 bits --------------------------------------- */

/* A crash here is a finding, not noise: say which access caused it. */
static char crash_msg[256];

static void crash_report(int sig)
{
    (void) sig;
    ssize_t ignored = write(2, crash_msg, strlen(crash_msg));
    (void) ignored;
    _exit(3);
}

/* count elements of int64 resized to `extent` bytes: the last one is at
 * (count-1) x extent, which wraps past 2^64 for the larger counts, so a
 * range check that computes the span in 64 bits without an overflow test
 * sees a few bytes.  Every access is out of range. */
static void overflowing_spans(int flavor, int to_right)
{
    static const struct { int shift, count; } cases[] = {
        { 62, 2 }, { 62, 4 },     /* 3 x 2^62 + 8: no wrap */
        { 62, 5 },                /* 4 x 2^62 = 2^64: wraps to 8 bytes */
        { 61, 9 },                /* 8 x 2^61 = 2^64 */
        { 60, 17 },               /* 16 x 2^60 = 2^64 */
    };
    const char *fl = flavor_names[flavor];
    int right = (rank + 1) % size;
    int64_t src[32], dst[32];
    rwin_t w;

    rwin_open(&w, flavor, MODE_DU8);
    for (int i = 0; i < 32; ++i) src[i] = -1000 - i;
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
        MPI_Datatype t;
        int count = cases[k].count, cls;
        MPI_OK(MPI_Type_create_resized(MPI_INT64_T, 0, (MPI_Aint) ((uint64_t) 1 << cases[k].shift), &t));
        MPI_OK(MPI_Type_commit(&t));
        {
            int target = to_right ? right : rank, rc;
            for (int i = 0; i < 32; ++i) dst[i] = ORIGIN_FILL;
            snprintf(crash_msg, sizeof(crash_msg),
                     "[rank %d] range_errors: CRASHED in MPI_Put of %d x int64 resized to extent 2^%d to rank %d "
                     "(%s window) -- expected MPI_ERR_RMA_RANGE\n", rank, count, cases[k].shift, target, fl);
            rc = MPI_Put(src, count, MPI_INT64_T, target, 0, count, t, w.win);
            MPI_Error_class(rc, &cls);
            CHECK(MPI_ERR_RMA_RANGE == cls, "%s: put of %d x int64 resized to extent 2^%d to rank %d returned "
                  "class %d, expected MPI_ERR_RMA_RANGE", fl, count, cases[k].shift, target, cls);
            snprintf(crash_msg, sizeof(crash_msg),
                     "[rank %d] range_errors: CRASHED in MPI_Get of %d x int64 resized to extent 2^%d from rank %d "
                     "(%s window) -- expected MPI_ERR_RMA_RANGE\n", rank, count, cases[k].shift, target, fl);
            rc = MPI_Get(dst, count, MPI_INT64_T, target, 0, count, t, w.win);
            MPI_Error_class(rc, &cls);
            CHECK(MPI_ERR_RMA_RANGE == cls, "%s: get of %d x int64 resized to extent 2^%d from rank %d returned "
                  "class %d, expected MPI_ERR_RMA_RANGE", fl, count, cases[k].shift, target, cls);
            for (int i = 0; i < 32; ++i) {
                if (dst[i] != ORIGIN_FILL) {
                    CHECK(0, "%s: refused get (extent 2^%d, count %d) wrote origin element %d", fl, cases[k].shift,
                          count, i);
                    break;
                }
            }
        }
        MPI_Type_free(&t);
    }
    MPI_OK(MPI_Win_unlock_all(w.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win));
    check_unchanged(&w, to_right ? "after refused accesses with overflowing spans from the left neighbour"
                                 : "after refused accesses with overflowing spans from this rank", 0);
    MPI_OK(MPI_Win_unlock(rank, w.win));
    rwin_close(&w);
}

static void run(int flavor, int mode)
{
    rwin_t w;
    int right = (rank + 1) % size;

    rwin_open(&w, flavor, mode);

    /* passive target: every refused access to every rank */
    MPI_OK(MPI_Win_lock_all(0, w.win));
    for (int t = 0; t < size; ++t) bad_accesses(&w, t);
    MPI_OK(MPI_Win_unlock_all(w.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w.win));
    check_unchanged(&w, "after refused passive-target accesses", 0);
    MPI_OK(MPI_Win_unlock(rank, w.win));

    /* active target: the same to the right neighbour, then legal ones */
    MPI_OK(MPI_Win_fence(0, w.win));
    bad_accesses(&w, right);
    MPI_OK(MPI_Win_fence(0, w.win));
    check_unchanged(&w, "after refused fence-epoch accesses", 0);
    MPI_OK(MPI_Win_fence(0, w.win));
    good_accesses(&w, right);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    check_unchanged(&w, "after legal accesses to the last element", nelem_of(mode, rank) > 0);

    rwin_close(&w);
}

/* Put and get whose origin and target type signatures differ in size:
 * MPI_ERR_TYPE, nothing written at the target or into the get's buffer;
 * the epoch goes on.  Every flavor (dynamic included), every target. */
static void signature_mismatch(int flavor)
{
    enum { N = 4 };
    test_win_t tw;
    int64_t out[N], in[N];
    const char *fl = flavor_names[flavor];

    test_win_create(&tw, flavor, N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    for (int i = 0; i < N; ++i) {
        out[i] = -init_value(rank, i);
        in[i] = ORIGIN_FILL;
        ((int64_t *) tw.mem)[i] = init_value(rank, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int t = 0; t < size; ++t) {
        const MPI_Aint d = test_disp(&tw, t, 0, sizeof(int64_t));
        MPI_FAILS_WITH(MPI_ERR_TYPE, MPI_Put(out, 3, MPI_INT64_T, t, d, 2, MPI_INT64_T, tw.win));
        MPI_FAILS_WITH(MPI_ERR_TYPE, MPI_Put(out, 1, MPI_INT32_T, t, d, 1, MPI_INT64_T, tw.win));
        MPI_FAILS_WITH(MPI_ERR_TYPE, MPI_Get(in, 2, MPI_INT64_T, t, d, 1, MPI_INT64_T, tw.win));
        MPI_FAILS_WITH(MPI_ERR_TYPE, MPI_Get(in, 1, MPI_INT64_T, t, d, 0, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(t, tw.win));
        for (int i = 0; i < N; ++i)
            CHECK(ORIGIN_FILL == in[i], "%s: a refused get from %d wrote element %d: %lld", fl, t, i, (long long) in[i]);
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    for (int i = 0; i < N; ++i)
        CHECK(((volatile int64_t *) tw.mem)[i] == init_value(rank, i), "%s: a refused put wrote element %d: %lld", fl,
              i, (long long) ((volatile int64_t *) tw.mem)[i]);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);   /* everyone looked before the next put lands */
    /* the window works: equal sizes, different types (8 bytes as 2 int32) */
    const int right = (rank + 1) % size;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw.win));
    MPI_OK(MPI_Put(out, 2, MPI_INT32_T, right, test_disp(&tw, right, 1, sizeof(int64_t)), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    const int left = (rank + size - 1) % size;
    CHECK(((volatile int64_t *) tw.mem)[1] == -init_value(left, 0), "%s: put after the refused ones: %lld", fl,
          (long long) ((volatile int64_t *) tw.mem)[1]);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = FLAVOR_CREATE; flavor <= FLAVOR_SHARED; flavor = test_next_flavor(flavor))
        for (int mode = 0; mode < MODE_COUNT; ++mode) run(flavor, mode);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) signature_mismatch(flavor);
    /* last, since a component without an overflow check may crash here */
    signal(SIGSEGV, crash_report);
    signal(SIGBUS, crash_report);
    for (int flavor = FLAVOR_CREATE; flavor <= FLAVOR_SHARED; flavor = test_next_flavor(flavor)) {
        if (size > 1) overflowing_spans(flavor, 1);
        overflowing_spans(flavor, 0);
    }
    return test_finalize("range_errors");
}
