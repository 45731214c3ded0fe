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
 * Accumulates under contention: every rank hammers the SAME elements of one
 * target (rank 0), on every flavor, under lock_all and under shared locks.
 * ITER iterations per rank, each of them:
 *   - MPI_SUM on int64 (adds 2^33 + rank + 1, so a value is a*2^33 + b with
 *     a <= b <= size*a: a torn or lost update shows), on double (adds
 *     0.5 * (rank + 1)), on int32, and MPI_MAX on int64; one element, or all
 *     64 at once every 8th iteration;
 *   - MPI_Fetch_and_op(MPI_SUM, 1) on an int64 counter: the values fetched by
 *     all ranks together are exactly 0 .. size*ITER-1;
 *   - the same on int64 elements at odd byte offsets (disp_unit 1; 16 of
 *     them, one or all) and on a misaligned int64 counter;
 *   - the same on long double elements (always the locked path) and a long
 *     double counter;
 *   - on an aligned int64 A and a misaligned int64 U: MPI_SUM on A alone
 *     (newrma's simple path: one predefined type), or on A and U with one
 *     hindexed datatype (the general path, through the datatype engine):
 *     MPI requires these to be atomic with respect to each other;
 *   - every 16th iteration, MPI_Get_accumulate(MPI_NO_OP) / MPI_Fetch_and_op
 *     (MPI_NO_OP) reads of the elements just updated, flushed: each read must
 *     be a valid value, and never less than the previous read of the same
 *     element by this rank (sums of positive numbers, max).
 * Totals are exact.  Then the last case alone, MIX_ITER times.  Then two ranks accumulate into disjoint halves of a
 * large double array of the last rank at the same time (whole halves and
 * small chunks: different accumulate lock stripes), while the others read
 * it with get_accumulate(MPI_NO_OP); totals exact.  And exclusive-lock
 * epochs against lock_all epochs on the same counters (exclusive_vs_lock_all).
 */
#include "common.h"

#define ITER 500
#define NE 64                   /* aligned arrays */
#define NU 16                   /* misaligned int64 / long double arrays */
#define BIG (1ll << 33)

/* byte offsets in the target's window (disp_unit 1) */
#define OFF_S64   0             /* int64[NE]  SUM */
#define OFF_D     512           /* double[NE] SUM */
#define OFF_I32   1024          /* int32[NE]  SUM */
#define OFF_MX    1280          /* int64[NE]  MAX */
#define OFF_CNT   1792          /* int64 counter */
#define OFF_UNAL  1801          /* int64[NU] at odd offsets */
#define OFF_UCNT  1929          /* int64 counter, odd offset */
#define OFF_LD    1952          /* long double[NU] */
#define OFF_LDCNT 2208          /* long double counter */
#define OFF_MIXA  2240          /* aligned int64 */
#define OFF_MIXU  2252          /* int64 at 4 mod 8 */
#define WIN_BYTES 2304

#define HALF 32768              /* doubles per half of the striped array */
#define CHUNK 64

static int rank, size;

static int main_elem(int i) { return (i * 5) % NE; }
static int main_wide(int i) { return 0 == i % 8; }
static int unal_elem(int i) { return (i * 3) % NU; }
static int unal_wide(int i) { return 0 == i % 4; }
static int ld_elem(int i) { return (i * 7) % NU; }
static int ld_wide(int i) { return 2 == i % 4; }

static int64_t get64(const char *p) { int64_t v; memcpy(&v, p, 8); return v; }

/* a valid partial sum of (2^33 + rank + 1) terms */
static int valid_big_sum(int64_t v)
{
    int64_t a = v / BIG, b = v % BIG;
    return v >= 0 && a <= b && b <= (int64_t) size * a;
}

/* Every fetched counter value appears exactly once over all ranks. */
static void check_counter(const char *what, const char *fl, const char *mode, int64_t *mine)
{
    int64_t *all = 0 == rank ? malloc(sizeof(int64_t) * ITER * size) : NULL;
    MPI_Gather(mine, ITER, MPI_INT64_T, all, ITER, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        qsort(all, (size_t) ITER * size, sizeof(int64_t), test_cmp_int64);
        for (int64_t i = 0; i < (int64_t) ITER * size; ++i)
            if (all[i] != i) {
                CHECK(all[i] == i, "%s %s: %s counter: sorted fetched value %lld is %lld (duplicates or gaps)", fl,
                      mode, what, (long long) i, (long long) all[i]);
                break;
            }
        free(all);
    }
}

static void hammer(int flavor, int shared_lock)
{
    const char *fl = flavor_names[flavor], *mode = shared_lock ? "lock shared" : "lock_all";
    const int T = 0;
    test_win_t tw;
    test_win_create(&tw, flavor, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    char *mem = tw.mem;
#define D(off) test_disp(&tw, T, (off), 1)

    MPI_Datatype u16, mix;
    MPI_Type_create_hvector(NU, 1, 8, MPI_INT64_T, &u16);      /* same as contiguous, but a derived type */
    MPI_Type_commit(&u16);
    {
        int blens[2] = { 1, 1 };
        MPI_Aint displs[2] = { 0, OFF_MIXU - OFF_MIXA };
        MPI_Type_create_hindexed(2, blens, displs, MPI_INT64_T, &mix);
        MPI_Type_commit(&mix);
    }

    int64_t v64[NE], mx[NE], one = 1, cnt[ITER], ucnt[ITER], ldcnt[ITER];
    int32_t v32[NE];
    double vd[NE];
    long double vld[NU], ldone = 1.0L;
    int64_t last_s64[NE] = { 0 }, last_mx[NE], last_i32[NE] = { 0 }, last_u[NU] = { 0 };
    double last_d[NE] = { 0 };
    long double last_ld[NU] = { 0 };
    for (int e = 0; e < NE; ++e) {
        v64[e] = BIG + rank + 1;
        vd[e] = 0.5 * (rank + 1);
        v32[e] = rank + 1;
        last_mx[e] = -1;
    }
    for (int j = 0; j < NU; ++j) {
        vld[j] = 0.5L * (rank + 1);
        clear_ldouble_padding(&vld[j], sizeof(long double));
    }
    clear_ldouble_padding(&ldone, sizeof(long double));
    int64_t mixv[2] = { 1, 1 };

    if (shared_lock) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, T, 0, tw.win));
    else MPI_OK(MPI_Win_lock_all(0, tw.win));
    int bad_reads = 0;
    for (int i = 0; i < ITER; ++i) {
        int e = main_elem(i), n = main_wide(i) ? NE : 1, e0 = main_wide(i) ? 0 : e;
        for (int e2 = 0; e2 < NE; ++e2) mx[e2] = (int64_t) rank * 100000 + i;
        MPI_OK(MPI_Accumulate(v64, n, MPI_INT64_T, T, D(OFF_S64 + 8 * e0), n, MPI_INT64_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Accumulate(vd, n, MPI_DOUBLE, T, D(OFF_D + 8 * e0), n, MPI_DOUBLE, MPI_SUM, tw.win));
        MPI_OK(MPI_Accumulate(v32, n, MPI_INT32_T, T, D(OFF_I32 + 4 * e0), n, MPI_INT32_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Accumulate(mx, n, MPI_INT64_T, T, D(OFF_MX + 8 * e0), n, MPI_INT64_T, MPI_MAX, tw.win));
        MPI_OK(MPI_Fetch_and_op(&one, &cnt[i], MPI_INT64_T, T, D(OFF_CNT), MPI_SUM, tw.win));

        int u = unal_elem(i);
        if (unal_wide(i))
            MPI_OK(MPI_Accumulate(v64, NU, MPI_INT64_T, T, D(OFF_UNAL), 1, u16, MPI_SUM, tw.win));
        else
            MPI_OK(MPI_Accumulate(v64, 1, MPI_INT64_T, T, D(OFF_UNAL + 8 * u), 1, MPI_INT64_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Fetch_and_op(&one, &ucnt[i], MPI_INT64_T, T, D(OFF_UCNT), MPI_SUM, tw.win));

        int l = ld_elem(i), ln = ld_wide(i) ? NU : 1, l0 = ld_wide(i) ? 0 : l;
        MPI_OK(MPI_Accumulate(vld, ln, MPI_LONG_DOUBLE, T, D(OFF_LD + 16 * l0), ln, MPI_LONG_DOUBLE, MPI_SUM,
                              tw.win));
        long double ldprev = -1;
        MPI_OK(MPI_Fetch_and_op(&ldone, &ldprev, MPI_LONG_DOUBLE, T, D(OFF_LDCNT), MPI_SUM, tw.win));

        if ((i + rank) % 2)
            MPI_OK(MPI_Accumulate(mixv, 2, MPI_INT64_T, T, D(OFF_MIXA), 1, mix, MPI_SUM, tw.win));
        else
            MPI_OK(MPI_Accumulate(mixv, 1, MPI_INT64_T, T, D(OFF_MIXA), 1, MPI_INT64_T, MPI_SUM, tw.win));

        int64_t rs64 = -1, rmx = -2, ru = -1;
        int32_t ri32 = -1;
        double rd = -1;
        long double rld = -1;
        if (3 == i % 16) {
            MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &rs64, 1, MPI_INT64_T, T, D(OFF_S64 + 8 * e), 1,
                                      MPI_INT64_T, MPI_NO_OP, tw.win));
            MPI_OK(MPI_Fetch_and_op(NULL, &rd, MPI_DOUBLE, T, D(OFF_D + 8 * e), MPI_NO_OP, tw.win));
            MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT32_T, &ri32, 1, MPI_INT32_T, T, D(OFF_I32 + 4 * e), 1,
                                      MPI_INT32_T, MPI_NO_OP, tw.win));
            MPI_OK(MPI_Fetch_and_op(NULL, &rmx, MPI_INT64_T, T, D(OFF_MX + 8 * e), MPI_NO_OP, tw.win));
            MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &ru, 1, MPI_INT64_T, T, D(OFF_UNAL + 8 * u), 1,
                                      MPI_INT64_T, MPI_NO_OP, tw.win));
            MPI_OK(MPI_Fetch_and_op(NULL, &rld, MPI_LONG_DOUBLE, T, D(OFF_LD + 16 * l), MPI_NO_OP, tw.win));
        }
        MPI_OK(MPI_Win_flush(T, tw.win));
        CHECK(ldprev >= 0 && ldprev == (long double) (int64_t) ldprev, "%s %s: long double counter fetched %Lg",
              fl, mode, ldprev);
        ldcnt[i] = (int64_t) ldprev;
        if (3 == i % 16 && bad_reads < 4) {
            int before = test_errors;
            CHECK(valid_big_sum(rs64) && rs64 >= last_s64[e], "%s %s: int64 sum [%d] read %lld after %lld", fl,
                  mode, e, (long long) rs64, (long long) last_s64[e]);
            CHECK(rd >= last_d[e] && rd * 2 == (double) (int64_t) (rd * 2), "%s %s: double sum [%d] read %g after %g",
                  fl, mode, e, rd, last_d[e]);
            CHECK(ri32 >= last_i32[e], "%s %s: int32 sum [%d] read %d after %lld", fl, mode, e, ri32,
                  (long long) last_i32[e]);
            CHECK(rmx >= last_mx[e] && rmx < (int64_t) size * 100000, "%s %s: max [%d] read %lld after %lld", fl,
                  mode, e, (long long) rmx, (long long) last_mx[e]);
            CHECK(valid_big_sum(ru) && ru >= last_u[u], "%s %s: misaligned int64 sum [%d] read %lld after %lld", fl,
                  mode, u, (long long) ru, (long long) last_u[u]);
            CHECK(rld >= last_ld[l] && rld * 2 == (long double) (int64_t) (rld * 2),
                  "%s %s: long double sum [%d] read %Lg after %Lg", fl, mode, l, rld, last_ld[l]);
            last_s64[e] = rs64;
            last_d[e] = rd;
            last_i32[e] = ri32;
            last_mx[e] = rmx;
            last_u[u] = ru;
            last_ld[l] = rld;
            bad_reads += test_errors != before;
        }
    }
    if (shared_lock) MPI_OK(MPI_Win_unlock(T, tw.win));
    else MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    check_counter("int64", fl, mode, cnt);
    check_counter("misaligned int64", fl, mode, ucnt);
    check_counter("long double", fl, mode, ldcnt);

    if (T == rank) {
        const int64_t rsum = (int64_t) size * (size + 1) / 2;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        for (int x = 0; x < NE; ++x) {
            int64_t hits = 0, last = -1;
            for (int i = 0; i < ITER; ++i)
                if (main_wide(i) || main_elem(i) == x) hits++, last = i;
            int64_t s64 = get64(mem + OFF_S64 + 8 * x), m = get64(mem + OFF_MX + 8 * x);
            double d;
            int32_t i32;
            memcpy(&d, mem + OFF_D + 8 * x, 8);
            memcpy(&i32, mem + OFF_I32 + 4 * x, 4);
            int ok = s64 == hits * ((int64_t) size * BIG + rsum) && d == 0.5 * (double) (hits * rsum)
                  && i32 == hits * rsum && m == (int64_t) (size - 1) * 100000 + last;
            CHECK(ok, "%s %s: element %d: int64 sum %lld (expected %lld), double sum %g (%g), int32 sum %d "
                  "(%lld), max %lld (%lld)", fl, mode, x, (long long) s64,
                  (long long) (hits * ((int64_t) size * BIG + rsum)), d, 0.5 * (double) (hits * rsum), i32,
                  (long long) (hits * rsum), (long long) m, (long long) ((int64_t) (size - 1) * 100000 + last));
        }
        CHECK(get64(mem + OFF_CNT) == (int64_t) size * ITER, "%s %s: counter %lld", fl, mode,
              (long long) get64(mem + OFF_CNT));
        for (int x = 0; x < NU; ++x) {
            int64_t hits = 0, ldhits = 0;
            for (int i = 0; i < ITER; ++i) {
                hits += unal_wide(i) || unal_elem(i) == x;
                ldhits += ld_wide(i) || ld_elem(i) == x;
            }
            int64_t v = get64(mem + OFF_UNAL + 8 * x);
            long double ld;
            memcpy(&ld, mem + OFF_LD + 16 * x, sizeof(ld));
            CHECK(v == hits * ((int64_t) size * BIG + rsum), "%s %s: misaligned int64 sum %d = %lld, expected %lld", fl,
                  mode, x, (long long) v, (long long) (hits * ((int64_t) size * BIG + rsum)));
            CHECK(ld == 0.5L * (long double) (ldhits * rsum), "%s %s: long double sum %d = %Lg, expected %Lg", fl,
                  mode, x, ld, 0.5L * (long double) (ldhits * rsum));
        }
        long double ldc;
        memcpy(&ldc, mem + OFF_LDCNT, sizeof(ldc));
        CHECK(get64(mem + OFF_UCNT) == (int64_t) size * ITER, "%s %s: misaligned counter %lld", fl, mode,
              (long long) get64(mem + OFF_UCNT));
        CHECK(ldc == (long double) size * ITER, "%s %s: long double counter %Lg", fl, mode, ldc);
        /* A: every op of every rank; U: the hindexed ones */
        CHECK(get64(mem + OFF_MIXA) == (int64_t) size * ITER,
              "%s %s: aligned int64 updated by single-element and hindexed (aligned + misaligned) accumulates: "
              "%lld, expected %lld (lost updates)", fl, mode, (long long) get64(mem + OFF_MIXA),
              (long long) size * ITER);
        int64_t uops = 0;
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < ITER; ++i) uops += (i + r) % 2;
        CHECK(get64(mem + OFF_MIXU) == uops, "%s %s: misaligned int64 of the hindexed accumulates: %lld, expected %lld",
              fl, mode, (long long) get64(mem + OFF_MIXU), (long long) uops);
        MPI_OK(MPI_Win_unlock(rank, tw.win));
    }
#undef D
    MPI_Type_free(&u16);
    MPI_Type_free(&mix);
    test_win_free(&tw);
}

/* The aligned / misaligned mix alone, many times: single-element MPI_SUM on
 * an aligned int64 A, and MPI_SUM through a datatype covering A and a
 * misaligned int64 U, from every rank.  Same location, same basic type:
 * atomic with respect to each other, whatever path each one takes. */
#define MIX_ITER 20000
static void mixed(int flavor)
{
    const char *fl = flavor_names[flavor];
    const int T = 0;
    test_win_t tw;
    test_win_create(&tw, flavor, 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    MPI_Datatype mix;
    int blens[2] = { 1, 1 };
    MPI_Aint displs[2] = { 0, 12 };             /* A at byte 16, U at byte 28 */
    MPI_Type_create_hindexed(2, blens, displs, MPI_INT64_T, &mix);
    MPI_Type_commit(&mix);
    int64_t v[2] = { 1, 1 };
    MPI_Aint a = test_disp(&tw, T, 16, 1);

    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int i = 0; i < MIX_ITER; ++i) {
        if ((i + rank) % 2)
            MPI_OK(MPI_Accumulate(v, 2, MPI_INT64_T, T, a, 1, mix, MPI_SUM, tw.win));
        else
            MPI_OK(MPI_Accumulate(v, 1, MPI_INT64_T, T, a, 1, MPI_INT64_T, MPI_SUM, tw.win));
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (T == rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        int64_t uops = 0;
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < MIX_ITER; ++i) uops += (i + r) % 2;
        CHECK(get64((char *) tw.mem + 16) == (int64_t) size * MIX_ITER,
              "%s mixed: aligned int64 A (at %p) after single-element and hindexed (A + misaligned U) accumulates is "
              "%lld, expected %lld (%lld updates lost)", fl, (void *) ((char *) tw.mem + 16),
              (long long) get64((char *) tw.mem + 16), (long long) size * MIX_ITER,
              (long long) ((int64_t) size * MIX_ITER - get64((char *) tw.mem + 16)));
        CHECK(get64((char *) tw.mem + 28) == uops, "%s mixed: misaligned U is %lld, expected %lld", fl,
              (long long) get64((char *) tw.mem + 28), (long long) uops);
        MPI_OK(MPI_Win_unlock(rank, tw.win));
    }
    MPI_Type_free(&mix);
    test_win_free(&tw);
}

/* Exclusive-lock epochs (newrma takes no accumulate stripe under them: no
 * other process may access the target) against lock_all epochs (which
 * take the stripes) on the same counters of rank 0, alternating per
 * iteration and per rank: the exclusive lock alone must keep them apart.
 * A one-element fetch_and_op (its fetched values together are exactly
 * 0 .. size*EXCL_ITER-1), a 64-element MPI_SUM and a compare_and_swap
 * increment (retried until it lands). */
#define EXCL_ITER 300
static void exclusive_vs_lock_all(int flavor)
{
    const char *fl = flavor_names[flavor];
    const int T = 0;
    test_win_t tw;
    int64_t one = 1, ones[NE], fetched[EXCL_ITER], *all = NULL;

    test_win_create(&tw, flavor, (2 + NE) * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    for (int e = 0; e < NE; ++e) ones[e] = 1;
    for (int i = 0; i < EXCL_ITER; ++i) {
        int exclusive = (i + rank) % 2;
        int64_t seen = 0, old = -1;
        if (exclusive) MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, tw.win));
        else MPI_OK(MPI_Win_lock_all(0, tw.win));
        MPI_OK(MPI_Fetch_and_op(&one, &fetched[i], MPI_INT64_T, T, test_disp(&tw, T, 0, 8), MPI_SUM, tw.win));
        MPI_OK(MPI_Accumulate(ones, NE, MPI_INT64_T, T, test_disp(&tw, T, 2, 8), NE, MPI_INT64_T, MPI_SUM, tw.win));
        for (int tries = 0; old != seen && tries < 1000000; ++tries) {
            int64_t want;
            MPI_OK(MPI_Fetch_and_op(NULL, &seen, MPI_INT64_T, T, test_disp(&tw, T, 1, 8), MPI_NO_OP, tw.win));
            MPI_OK(MPI_Win_flush(T, tw.win));
            want = seen + 1;
            MPI_OK(MPI_Compare_and_swap(&want, &seen, &old, MPI_INT64_T, T, test_disp(&tw, T, 1, 8), tw.win));
            MPI_OK(MPI_Win_flush(T, tw.win));
        }
        CHECK(old == seen, "%s: compare_and_swap increment never landed", fl);
        if (exclusive) MPI_OK(MPI_Win_unlock(T, tw.win));
        else MPI_OK(MPI_Win_unlock_all(tw.win));
    }
    if (T == rank) all = malloc(sizeof(int64_t) * EXCL_ITER * size);
    MPI_Gather(fetched, EXCL_ITER, MPI_INT64_T, all, EXCL_ITER, MPI_INT64_T, T, MPI_COMM_WORLD);
    if (T == rank) {
        int64_t n = (int64_t) EXCL_ITER * size, *m = tw.mem;
        char *hit = calloc((size_t) n, 1);
        int bad = 0;
        for (int64_t k = 0; k < n; ++k) {
            if (all[k] < 0 || all[k] >= n || hit[all[k]]) ++bad;
            else hit[all[k]] = 1;
        }
        CHECK(0 == bad, "%s: %d fetch_and_op values out of range or fetched twice", fl, bad);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        CHECK(m[0] == n, "%s: fetch_and_op counter %lld, expected %lld", fl, (long long) m[0], (long long) n);
        CHECK(m[1] == n, "%s: compare_and_swap counter %lld, expected %lld", fl, (long long) m[1], (long long) n);
        for (int e = 0; e < NE; ++e)
            CHECK(m[2 + e] == n, "%s: accumulated element %d is %lld, expected %lld", fl, e, (long long) m[2 + e],
                  (long long) n);
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        free(hit);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
}

/* Two ranks, disjoint halves of one large array, at the same time. */
static void stripes(int flavor)
{
    const char *fl = flavor_names[flavor];
    const int T = size - 1;
    test_win_t tw;
    test_win_create(&tw, flavor, 2 * HALF * sizeof(double), 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    double *mem = tw.mem;
    double *src = malloc(sizeof(double) * HALF);
    const int WHOLE = 10, CHUNKS = 200;

    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int h = 0; h < 2; ++h) {
        /* half h is written by rank h (both by rank 0 when alone) */
        if (h != rank && !(1 == size && 0 == rank)) continue;
        MPI_Aint at = (MPI_Aint) h * HALF * (MPI_Aint) sizeof(double);
        for (int i = 0; i < HALF; ++i) src[i] = h + 1;
        for (int w = 0; w < WHOLE; ++w) {
            MPI_OK(MPI_Accumulate(src, HALF, MPI_DOUBLE, T, test_disp(&tw, T, at, 1), HALF, MPI_DOUBLE, MPI_SUM,
                                  tw.win));
            for (int c = 0; c < CHUNKS / WHOLE; ++c) {
                int k = (w * (CHUNKS / WHOLE) + c) * 37 % (HALF / CHUNK);
                double halfs[CHUNK];
                for (int j = 0; j < CHUNK; ++j) halfs[j] = 0.5;
                MPI_OK(MPI_Accumulate(halfs, CHUNK, MPI_DOUBLE, T,
                                      test_disp(&tw, T, at + (MPI_Aint) k * CHUNK * (MPI_Aint) sizeof(double), 1),
                                      CHUNK, MPI_DOUBLE, MPI_SUM, tw.win));
            }
        }
    }
    if (rank >= 2) {
        /* readers: around the boundary between the halves and elsewhere */
        double prev[8] = { 0 };
        for (int i = 0; i < 400; ++i) {
            int slot = i % 8;
            MPI_Aint x = slot < 4 ? HALF - 2 + slot : (MPI_Aint) (slot * 7919) % (2 * HALF);
            double got = -1;
            MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, &got, 1, MPI_DOUBLE, T,
                                      test_disp(&tw, T, x * (MPI_Aint) sizeof(double), 1), 1, MPI_DOUBLE,
                                      MPI_NO_OP, tw.win));
            MPI_OK(MPI_Win_flush(T, tw.win));
            CHECK(got >= prev[slot] && got * 2 == (double) (int64_t) (got * 2), "%s stripes: element %ld read %g after %g",
                  fl, (long) x, got, prev[slot]);
            prev[slot] = got;
        }
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    if (T == rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        int chunk_hits[HALF / CHUNK] = { 0 };
        for (int n = 0; n < CHUNKS; ++n) chunk_hits[n * 37 % (HALF / CHUNK)]++;
        int shown = 0;
        for (int i = 0; i < 2 * HALF && shown < 4; ++i) {
            int h = i / HALF;
            double want = WHOLE * (h + 1) + 0.5 * chunk_hits[(i % HALF) / CHUNK];
            if (mem[i] != want) {
                CHECK(mem[i] == want, "%s stripes: element %d is %g, expected %g", fl, i, mem[i], want);
                shown++;
            }
        }
        MPI_OK(MPI_Win_unlock(rank, tw.win));
    }
    free(src);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        hammer(flavor, 0);
        hammer(flavor, 1);
        mixed(flavor);
        exclusive_vs_lock_all(flavor);
        stripes(flavor);
    }
    return test_finalize("acc_contention");
}
