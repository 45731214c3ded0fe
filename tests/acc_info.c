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
 * Info key mpi_accumulate_granularity and accumulates that take the lock path.
 *
 * 1. newrma only: MPI_Win_get_info reports the granularity in effect, for
 *    every flavor: the value given ("1", "8", "65536"), the MCA default (4096)
 *    when the key is absent or malformed ("abc", "0", "-8", "16abc"), and,
 *    when the ranks give different values, one value every rank agrees on
 *    (README: the largest).
 * 2. Contention, every component: every rank accumulates (MPI_SUM, with
 *    MPI_Accumulate and MPI_Get_accumulate) into overlapping contiguous
 *    ranges and into interleaved vector elements (each element's neighbours
 *    belong to other ranks) of every target, on an MPI_Win_create int64
 *    window and an MPI_Win_allocate long double window (16-byte elements:
 *    newrma's lock path on both); with granularity "1", "8", "65536", "abc",
 *    absent, different per rank, and on accumulate_ops=same_op and
 *    accumulate_ordering=none windows.  Final memory exact.
 * 3. One element reached both ways: on an allocate window, every rank
 *    alternately accumulates (+1) with a datatype holding the aligned int64
 *    at byte 0 and an unaligned one at byte 12, and fetch_and_op(+1)s the
 *    element at byte 0 alone.  Same element, same type, same op: atomic with
 *    respect to each other, so the counts are exact.
 */
#include "common.h"

static int rank, size;

static int only_newrma(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL != strstr(osc, "newrma");
}

/* ---- window configurations --------------------------------------------- */

#define MCA_DEFAULT 4096  /* osc_newrma_accumulate_granularity */
#define NCONFIG 8

typedef struct {
    const char *name;
    const char *key, *value;      /* NULL key: no info */
    int per_rank;                 /* value differs per rank (ignore `value`) */
} config_t;

static const config_t configs[NCONFIG] = {
    { "granularity 1", "mpi_accumulate_granularity", "1", 0 },
    { "granularity 8", "mpi_accumulate_granularity", "8", 0 },
    { "granularity 65536", "mpi_accumulate_granularity", "65536", 0 },
    { "granularity abc", "mpi_accumulate_granularity", "abc", 0 },
    { "no granularity", NULL, NULL, 0 },
    { "granularity per rank", "mpi_accumulate_granularity", NULL, 1 },
    { "accumulate_ops same_op", "accumulate_ops", "same_op", 0 },
    { "accumulate_ordering none", "accumulate_ordering", "none", 0 },
};

static const char *const per_rank_values[4] = { "1", "65536", "8", "abc" };
static const int per_rank_effective[4] = { 1, 65536, 8, MCA_DEFAULT };

static MPI_Info config_info(const config_t *c)
{
    MPI_Info info = MPI_INFO_NULL;
    if (NULL == c->key) return info;
    MPI_Info_create(&info);
    MPI_Info_set(info, c->key, c->per_rank ? per_rank_values[rank % 4] : c->value);
    return info;
}

/* ---- 1. what get_info reports (newrma) ----------------------------------- */

static void expect_granularity(MPI_Win win, const char *ctx, long expected)
{
    MPI_Info info = MPI_INFO_NULL;
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_OK(MPI_Win_get_info(win, &info));
    MPI_OK(MPI_Info_get(info, "mpi_accumulate_granularity", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "%s: MPI_Win_get_info has no mpi_accumulate_granularity (expected %ld)", ctx, expected);
    if (flag) {
        char exp[32];
        snprintf(exp, sizeof exp, "%ld", expected);
        CHECK(0 == strcmp(value, exp), "%s: mpi_accumulate_granularity is \"%s\", expected \"%s\"", ctx, value, exp);
        /* every rank must report the same value */
        long mine = strtol(value, NULL, 10), lo = 0, hi = 0;
        MPI_Allreduce(&mine, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        CHECK(lo == hi, "%s: ranks report different granularities (%ld .. %ld)", ctx, lo, hi);
    } else {
        long mine = -1, lo, hi;
        MPI_Allreduce(&mine, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    }
    MPI_Info_free(&info);
}

static void reported(int flavor)
{
    static const struct { const char *value; long expected; } cases[] = {
        { "1", 1 }, { "8", 8 }, { "65536", 65536 }, { "abc", MCA_DEFAULT }, { "0", MCA_DEFAULT },
        { "-8", MCA_DEFAULT }, { "16abc", MCA_DEFAULT }, { NULL, MCA_DEFAULT },
    };
    char ctx[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        test_win_t tw;
        MPI_Info info = MPI_INFO_NULL;
        if (NULL != cases[i].value) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "mpi_accumulate_granularity", cases[i].value);
        }
        test_win_create(&tw, flavor, 64, 8, info, MPI_COMM_WORLD);
        snprintf(ctx, sizeof ctx, "%s, granularity %s%s%s", flavor_names[flavor], cases[i].value ? "\"" : "",
                 cases[i].value ? cases[i].value : "absent", cases[i].value ? "\"" : "");
        expect_granularity(tw.win, ctx, cases[i].expected);
        if (MPI_INFO_NULL != info) MPI_Info_free(&info);
        test_win_free(&tw);
    }
    /* different values on different ranks: one value in effect, the largest */
    {
        test_win_t tw;
        MPI_Info info = config_info(&configs[5]);
        long expected = 0;
        for (int r = 0; r < size; ++r)
            if (per_rank_effective[r % 4] > expected) expected = per_rank_effective[r % 4];
        test_win_create(&tw, flavor, 64, 8, info, MPI_COMM_WORLD);
        snprintf(ctx, sizeof ctx, "%s, granularity per rank (this rank \"%s\")", flavor_names[flavor],
                 per_rank_values[rank % 4]);
        expect_granularity(tw.win, ctx, expected);
        MPI_Info_free(&info);
        test_win_free(&tw);
    }
}

/* ---- 2. contention --------------------------------------------------------- */

#define NE 1100       /* elements per target at up to 4 ranks */
#define ROUNDS 24
#define RANGE_MAX 64
#define VEC 32        /* elements of one interleaved vector accumulate */

/* The op rank r does at target t in round k: a contiguous range, or (odd
 * rounds, in addition) an interleaved vector. */
static int range_start(int r, int t, int k) { return (k * 97 + r * 41 + t * 13) % (NE - RANGE_MAX); }
static int range_len(int r, int k) { return 1 + (k * 5 + r * 3) % RANGE_MAX; }
static int range_value(int r, int i, int k) { return (r + 1) * 100 + (k % 7) * 10 + i % 5; }
static int vec_start(int r, int t, int k) { return (k * 29 + t * 7) % (NE - VEC * 4) + r; }
/* Elements per target: a vector's last element is at vec_start + (VEC - 1) * size,
 * so the window grows by VEC elements per rank beyond 4 (the same ranges and
 * vectors as before at up to 4 ranks). */
static int elems(void) { return NE + (size > 4 ? VEC * (size - 4) : 0); }
static int vec_value(int r, int j) { return (r + 1) * 1000 + j; }

typedef enum { ELEM_INT64, ELEM_LDOUBLE } elem_t;

static void contention(int flavor, elem_t elem, const config_t *c)
{
    const int esz = ELEM_INT64 == elem ? 8 : (int) sizeof(long double);
    MPI_Datatype dt = ELEM_INT64 == elem ? MPI_INT64_T : MPI_LONG_DOUBLE;
    const char *ename = ELEM_INT64 == elem ? "int64" : "long double";
    const char *fl = flavor_names[flavor];
    MPI_Info info = config_info(c);
    test_win_t tw;
    unsigned char origin[RANGE_MAX * 16], result[RANGE_MAX * 16];
    MPI_Datatype vec;

    const int ne = elems();
    test_win_create(&tw, flavor, (size_t) ne * (size_t) esz, esz, info, MPI_COMM_WORLD);
    if (MPI_INFO_NULL != info) MPI_Info_free(&info);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    MPI_Type_vector(VEC, 1, size, dt, &vec);
    MPI_Type_commit(&vec);

    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int k = 0; k < ROUNDS; ++k) {
        for (int i = 0; i < size; ++i) {
            int t = (rank + i) % size;
            int start = range_start(rank, t, k), len = range_len(rank, k);
            for (int j = 0; j < len; ++j) {
                if (ELEM_INT64 == elem) ((int64_t *) origin)[j] = range_value(rank, j, k);
                else {
                    ((long double *) origin)[j] = range_value(rank, j, k);
                    clear_ldouble_padding(&((long double *) origin)[j], sizeof(long double));
                }
            }
            if (k % 3 == 1)
                MPI_OK(MPI_Get_accumulate(origin, len, dt, result, len, dt, t, test_disp(&tw, t, start, esz), len, dt,
                                          MPI_SUM, tw.win));
            else
                MPI_OK(MPI_Accumulate(origin, len, dt, t, test_disp(&tw, t, start, esz), len, dt, MPI_SUM, tw.win));
            if (k % 2) {
                for (int j = 0; j < VEC; ++j) {
                    if (ELEM_INT64 == elem) ((int64_t *) origin)[j] = vec_value(rank, j);
                    else {
                        ((long double *) origin)[j] = vec_value(rank, j);
                        clear_ldouble_padding(&((long double *) origin)[j], sizeof(long double));
                    }
                }
                MPI_OK(MPI_Accumulate(origin, VEC, dt, t, test_disp(&tw, t, vec_start(rank, t, k), esz), 1, vec,
                                      MPI_SUM, tw.win));
            }
        }
        MPI_OK(MPI_Win_flush_all(tw.win));
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* what this rank's memory must hold */
    int64_t *expect = calloc((size_t) ne, sizeof(int64_t));
    for (int r = 0; r < size; ++r)
        for (int k = 0; k < ROUNDS; ++k) {
            int start = range_start(r, rank, k), len = range_len(r, k);
            for (int j = 0; j < len; ++j) expect[start + j] += range_value(r, j, k);
            if (k % 2)
                for (int j = 0; j < VEC; ++j) expect[vec_start(r, rank, k) + j * size] += vec_value(r, j);
        }
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    int bad = 0;
    for (int e = 0; e < ne; ++e) {
        long double got = ELEM_INT64 == elem ? (long double) ((int64_t *) tw.mem)[e] : ((long double *) tw.mem)[e];
        if (got != (long double) expect[e] && bad++ < 5)
            CHECK(0, "%s %s, %s: element %d at rank %d is %.0Lf, expected %lld", fl, ename, c->name, e, rank, got,
                  (long long) expect[e]);
    }
    CHECK(0 == bad, "%s %s, %s: %d wrong elements at rank %d", fl, ename, c->name, bad, rank);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    free(expect);
    MPI_Type_free(&vec);
    test_win_free(&tw);
}

/* ---- 3. one element reached both ways ------------------------------------ */

#define MIXED_ITER 20000

static void mixed_alignment(void)
{
    test_win_t tw;
    MPI_Datatype mixed;
    int bl[2] = { 1, 1 };
    MPI_Aint displs[2] = { 0, 12 };
    int64_t one[2] = { 1, 1 }, prev;

    test_win_create(&tw, FLAVOR_ALLOCATE, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    MPI_Type_create_hindexed(2, bl, displs, MPI_INT64_T, &mixed);
    MPI_Type_commit(&mixed);
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int i = 0; i < MIXED_ITER; ++i) {
        if ((i + rank) % 2)
            MPI_OK(MPI_Accumulate(one, 2, MPI_INT64_T, 0, 0, 1, mixed, MPI_SUM, tw.win));
        else
            MPI_OK(MPI_Fetch_and_op(one, &prev, MPI_INT64_T, 0, 0, MPI_SUM, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        int64_t a, b;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        memcpy(&a, (char *) tw.mem, 8);
        memcpy(&b, (char *) tw.mem + 12, 8);
        MPI_OK(MPI_Win_unlock(0, tw.win));
        CHECK(a == (int64_t) size * MIXED_ITER,
              "mixed alignment: aligned int64 (by fetch_and_op alone, and by accumulate through a datatype that also "
              "has an unaligned int64) is %lld, expected %lld",
              (long long) a, (long long) size * MIXED_ITER);
        CHECK(b == (int64_t) size * (MIXED_ITER / 2), "mixed alignment: unaligned int64 is %lld, expected %lld",
              (long long) b, (long long) size * (MIXED_ITER / 2));
    }
    MPI_Type_free(&mixed);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (only_newrma())
        for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) reported(flavor);
    for (int c = 0; c < NCONFIG; ++c) {
        contention(FLAVOR_CREATE, ELEM_INT64, &configs[c]);
        contention(FLAVOR_ALLOCATE, ELEM_LDOUBLE, &configs[c]);
    }
    mixed_alignment();
    return test_finalize("acc_info");
}
