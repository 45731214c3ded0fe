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
 * MPI_Compare_and_swap, exact values, every flavor.
 *
 * 1. Every type MPI allows (C integers of every size, int8..uint64,
 *    MPI_AINT/OFFSET/COUNT, MPI_C_BOOL, MPI_BYTE) and MPI_CHAR (not in the
 *    standard's list, accepted by Open MPI and newrma alike), under lock,
 *    lock_all and fence: every origin, at every target, on its own slot:
 *    a compare value differing only in the most significant byte (no swap),
 *    the right compare value (swap), the old compare value again (no swap).
 *    Returned values and the final memory exact.  (newrma only: MPI_FLOAT
 *    and MPI_2INT are MPI_ERR_TYPE.)
 * 2. Election: in each of ELECT rounds every rank does CAS(rank+1 if 0) on a
 *    fresh slot at rank 0, for 8-, 16-, 32- and 64-bit types: exactly one
 *    rank gets 0 back, every other gets the winner's value.
 * 3. A spin lock made of CAS (64-bit and 8-bit lock words) protecting a
 *    non-atomic get/increment/put of a separate counter: exact final count.
 * 4. Neighbours: each rank CAS-increments its own uint8 (resp. uint16 at odd,
 *    unaligned offsets, resp. int32 at offsets 2 mod 4) next to the other
 *    ranks' elements, which they change concurrently the same way; every CAS
 *    must find exactly the value this rank left, and untouched sentinel
 *    elements keep their values.  The arrays are sized by the rank count.
 * Any count from 1 up to 255 ranks: the 8-bit election stores rank + 1 in
 * one byte.
 * newrma-test: np<=255
 */
#include "common.h"

#include <stdbool.h>

static int rank, size;

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int bytes;
    int is_bool;
} cas_type_t;

static cas_type_t types[32];
static int ntypes;

#define ADD(DT, CT) (types[ntypes++] = (cas_type_t) { #DT, DT, (int) sizeof(CT), 0 })

static void make_types(void)
{
    ADD(MPI_INT, int);
    ADD(MPI_LONG, long);
    ADD(MPI_SHORT, short);
    ADD(MPI_UNSIGNED_SHORT, unsigned short);
    ADD(MPI_UNSIGNED, unsigned);
    ADD(MPI_UNSIGNED_LONG, unsigned long);
    ADD(MPI_LONG_LONG_INT, long long);
    ADD(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    ADD(MPI_SIGNED_CHAR, signed char);
    ADD(MPI_UNSIGNED_CHAR, unsigned char);
    ADD(MPI_CHAR, char);
    ADD(MPI_INT8_T, int8_t);
    ADD(MPI_INT16_T, int16_t);
    ADD(MPI_INT32_T, int32_t);
    ADD(MPI_INT64_T, int64_t);
    ADD(MPI_UINT8_T, uint8_t);
    ADD(MPI_UINT16_T, uint16_t);
    ADD(MPI_UINT32_T, uint32_t);
    ADD(MPI_UINT64_T, uint64_t);
    ADD(MPI_AINT, MPI_Aint);
    ADD(MPI_OFFSET, MPI_Offset);
    ADD(MPI_COUNT, MPI_Count);
    ADD(MPI_BYTE, unsigned char);
    types[ntypes++] = (cas_type_t) { "MPI_C_BOOL", MPI_C_BOOL, (int) sizeof(bool), 1 };
}

static int only_newrma(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL != strstr(osc, "newrma");
}

/* Open MPI 4.1's osc/pt2pt (create and dynamic windows) does not keep
 * accumulate-family operations from one origin to one location in order:
 * it gets a flush (or fence) between dependent ones.  Not newrma. */
static int pt2pt_reference(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    if (NULL == osc || NULL != strstr(osc, "newrma") || NULL == strstr(osc, "pt2pt")) return 0;
    return FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor;
}

static void cas(const void *origin, const void *compare, void *result, MPI_Datatype dt, int target, MPI_Aint disp,
                MPI_Win win, const char *ctx, const char *tname)
{
    int rc = MPI_Compare_and_swap(origin, compare, result, dt, target, disp, win);
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        CHECK(0, "%s: MPI_Compare_and_swap(%s) to %d returned %s", ctx, tname, target, msg);
    }
}

static void show(const unsigned char *p, int n, char *s)
{
    s[0] = '\0';
    strcat(s, "0x");
    for (int i = n - 1; i >= 0; --i) sprintf(s + strlen(s), "%02x", p[i]);
}

static void expect_bytes(const unsigned char *got, const unsigned char *expected, int n, const char *ctx,
                         const char *tname, const char *what, int origin, int target)
{
    if (0 != memcmp(got, expected, (size_t) n)) {
        char g[40], e[40];
        show(got, n, g);
        show(expected, n, e);
        CHECK(0, "%s %s origin %d target %d: %s is %s, expected %s", ctx, tname, origin, target, what, g, e);
    }
}

/* ---- 1. every type ----------------------------------------------------- */

#define CELL 8
enum { MODE_LOCK, MODE_LOCK_ALL, MODE_FENCE, NMODES };
static const char *const mode_names[NMODES] = { "lock", "lock_all", "fence" };

/* Values of type ty for (mode, origin, target): X initial, Y = X but the most
 * significant byte, Z = X with every byte changed, W another. */
static void values(int ty, int mode, int origin, int target, unsigned char v[4][CELL])
{
    int n = types[ty].bytes;
    uint32_t h = 2166136261u;
    int in[4] = { ty, mode, origin, target };
    memset(v, 0, 4 * CELL);
    for (int i = 0; i < 4; ++i) h = (h ^ (uint32_t) in[i]) * 16777619u;
    if (types[ty].is_bool) {
        v[0][0] = (h >> 7) & 1;
        v[1][0] = !v[0][0];
        v[2][0] = !v[0][0];
        v[3][0] = v[0][0];
        return;
    }
    for (int i = 0; i < n; ++i) {
        h = (h ^ (uint32_t) i) * 16777619u;
        v[0][i] = (unsigned char) (h >> 11);
        v[1][i] = v[0][i];
        v[2][i] = v[0][i] ^ 0x5a;
        v[3][i] = v[0][i] ^ 0x0f;
    }
    v[1][n - 1] ^= 0x80;   /* little endian: the most significant byte */
}

static size_t slot(int ty, int origin) { return ((size_t) ty * (size_t) size + (size_t) origin) * CELL; }

/* Round 0: compare Y (no swap), 1: compare X (swap in Z), 2: compare X
 * again (no swap, W stays out); every type, to target t. */
static void issue_round(test_win_t *tw, int t, int round, unsigned char (*val)[4][CELL],
                        unsigned char (*res)[3][CELL], const char *ctx)
{
    static const int origin_of[3] = { 2, 2, 3 }, compare_of[3] = { 1, 0, 0 };
    for (int ty = 0; ty < ntypes; ++ty) {
        unsigned char (*v)[CELL] = val[t * ntypes + ty];
        cas(v[origin_of[round]], v[compare_of[round]], res[t * ntypes + ty][round], types[ty].dt, t,
            test_disp(tw, t, (MPI_Aint) slot(ty, rank), 1), tw->win, ctx, types[ty].name);
    }
}

static void every_type(int flavor)
{
    const char *fl = flavor_names[flavor];
    test_win_t tw;
    unsigned char (*res)[3][CELL] = calloc((size_t) size * (size_t) ntypes, sizeof *res);
    unsigned char (*val)[4][CELL] = calloc((size_t) size * (size_t) ntypes, sizeof *val);
    int serialize = pt2pt_reference(flavor);

    test_win_create(&tw, flavor, slot(ntypes, 0), 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    unsigned char *mem = tw.mem;
    for (int mode = 0; mode < NMODES; ++mode) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "%s %s", fl, mode_names[mode]);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
        for (int ty = 0; ty < ntypes; ++ty)
            for (int o = 0; o < size; ++o) {
                unsigned char v[4][CELL];
                values(ty, mode, o, rank, v);
                memcpy(mem + slot(ty, o), v[0], CELL);
            }
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        for (int t = 0; t < size; ++t)
            for (int ty = 0; ty < ntypes; ++ty) values(ty, mode, rank, t, val[t * ntypes + ty]);
        memset(res, 0xee, (size_t) size * (size_t) ntypes * sizeof *res);
        MPI_Barrier(MPI_COMM_WORLD);

        if (MODE_FENCE == mode) {
            MPI_OK(MPI_Win_fence(0, tw.win));
            for (int round = 0; round < 3; ++round) {
                for (int i = 0; i < size; ++i) issue_round(&tw, (rank + i) % size, round, val, res, ctx);
                if (serialize && round < 2) MPI_OK(MPI_Win_fence(0, tw.win));
            }
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
        } else {
            if (MODE_LOCK_ALL == mode) MPI_OK(MPI_Win_lock_all(0, tw.win));
            for (int i = 0; i < size; ++i) {
                int t = (rank + i) % size;
                if (MODE_LOCK == mode) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
                for (int round = 0; round < 3; ++round) {
                    issue_round(&tw, t, round, val, res, ctx);
                    if (serialize && round < 2) MPI_OK(MPI_Win_flush(t, tw.win));
                }
                if (MODE_LOCK == mode) MPI_OK(MPI_Win_unlock(t, tw.win));
                if (MODE_LOCK_ALL == mode) MPI_OK(MPI_Win_flush(t, tw.win));
            }
            if (MODE_LOCK_ALL == mode) MPI_OK(MPI_Win_unlock_all(tw.win));
        }

        for (int t = 0; t < size; ++t)
            for (int ty = 0; ty < ntypes; ++ty) {
                unsigned char (*v)[CELL] = val[t * ntypes + ty];
                int n = types[ty].bytes;
                expect_bytes(res[t * ntypes + ty][0], v[0], n, ctx, types[ty].name, "result of a failing compare", rank, t);
                expect_bytes(res[t * ntypes + ty][1], v[0], n, ctx, types[ty].name, "result of the swap", rank, t);
                expect_bytes(res[t * ntypes + ty][2], v[2], n, ctx, types[ty].name, "result after the swap", rank, t);
            }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        for (int ty = 0; ty < ntypes; ++ty)
            for (int o = 0; o < size; ++o) {
                unsigned char v[4][CELL];
                values(ty, mode, o, rank, v);
                expect_bytes(mem + slot(ty, o), v[2], types[ty].bytes, ctx, types[ty].name, "target memory", o, rank);
                /* the bytes after the element are nobody's */
                for (int b = types[ty].bytes; b < CELL; ++b)
                    CHECK(0 == mem[slot(ty, o) + (size_t) b], "%s %s: byte %d after origin %d's element is 0x%02x",
                          ctx, types[ty].name, b, o, mem[slot(ty, o) + (size_t) b]);
            }
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
    }

    if (only_newrma()) {
        /* not a CAS type: MPI_ERR_TYPE, nothing written */
        MPI_Datatype bad[2] = { MPI_FLOAT, MPI_2INT };
        const char *bad_names[2] = { "MPI_FLOAT", "MPI_2INT" };
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
        for (int i = 0; i < 2; ++i) {
            unsigned char o[CELL] = { 1, 2, 3, 4, 5, 6, 7, 8 }, c[CELL], r[CELL];
            memcpy(c, mem, CELL);
            int rc = MPI_Compare_and_swap(o, c, r, bad[i], rank, test_disp(&tw, rank, 0, 1), tw.win), cls;
            MPI_Error_class(rc, &cls);
            CHECK(MPI_ERR_TYPE == cls, "%s: MPI_Compare_and_swap(%s) returned class %d, expected MPI_ERR_TYPE", fl,
                  bad_names[i], cls);
            CHECK(0 == memcmp(c, mem, CELL), "%s: MPI_Compare_and_swap(%s) wrote the window", fl, bad_names[i]);
        }
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    test_win_free(&tw);
    free(res);
    free(val);
}

/* ---- 2. election ------------------------------------------------------- */

#define ELECT 40

static void election(int flavor)
{
    const char *fl = flavor_names[flavor];
    MPI_Datatype dts[4] = { MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T };
    const char *names[4] = { "int8", "int16", "int32", "int64" };
    int64_t mine[ELECT][4], *all = NULL;
    test_win_t tw;

    /* slot (round, type): 8 bytes each at rank 0 */
    test_win_create(&tw, flavor, ELECT * 4 * 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int round = 0; round < ELECT; ++round) {
        MPI_Barrier(MPI_COMM_WORLD);   /* everyone races for the same fresh slot */
        for (int k = 0; k < 4; ++k) {
            int i = (k + rank + round) % 4;     /* different types first on different ranks */
            int64_t me = rank + 1, zero = 0, got = -1;
            cas(&me, &zero, &got, dts[i], 0, test_disp(&tw, 0, (round * 4 + i) * 8, 1), tw.win, fl, names[i]);
            MPI_OK(MPI_Win_flush(0, tw.win));
            /* little endian: the low bytes of the int64 are the smaller type's value */
            int64_t v = 0;
            memcpy(&v, &got, (size_t) 1 << i);
            mine[round][i] = v;
        }
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    if (0 == rank) all = malloc(sizeof(int64_t) * ELECT * 4 * (size_t) size);
    MPI_Gather(mine, ELECT * 4, MPI_INT64_T, all, ELECT * 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        const unsigned char *mem = tw.mem;
        for (int round = 0; round < ELECT; ++round)
            for (int i = 0; i < 4; ++i) {
                int winners = 0, winner = -1;
                for (int r = 0; r < size; ++r)
                    if (0 == all[(r * ELECT + round) * 4 + i]) {
                        winners++;
                        winner = r;
                    }
                CHECK(1 == winners, "%s %s round %d: %d ranks got 0 back", fl, names[i], round, winners);
                for (int r = 0; r < size && 1 == winners; ++r)
                    if (r != winner)
                        CHECK(all[(r * ELECT + round) * 4 + i] == winner + 1,
                              "%s %s round %d: rank %d got %lld, the winner was %d", fl, names[i], round, r,
                              (long long) all[(r * ELECT + round) * 4 + i], winner + 1);
                int64_t v = 0;
                memcpy(&v, mem + (round * 4 + i) * 8, (size_t) 1 << i);
                CHECK(1 == winners && v == winner + 1, "%s %s round %d: slot holds %lld, winner %d", fl, names[i],
                      round, (long long) v, winner + 1);
                for (int b = 1 << i; b < 8; ++b)
                    CHECK(0 == mem[(round * 4 + i) * 8 + b], "%s %s round %d: byte %d past the element written", fl,
                          names[i], round, b);
            }
        MPI_OK(MPI_Win_unlock(0, tw.win));
        free(all);
    }
    test_win_free(&tw);
}

/* ---- 3. spin lock -------------------------------------------------------- */

#define SPIN_ROUNDS 30

static void spin_lock(int flavor, MPI_Datatype lock_dt, const char *lname)
{
    const char *fl = flavor_names[flavor];
    test_win_t tw;
    /* int64 slots at rank 0: [0] lock word, [8] counter, [16] holder */
    test_win_create(&tw, flavor, 24 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    MPI_Aint lock_disp = test_disp(&tw, 0, 0, 8), counter_disp = test_disp(&tw, 0, 8, 8),
             holder_disp = test_disp(&tw, 0, 16, 8);
    int64_t one = 1, zero = 0, me = rank + 1;
    int bad_release = 0, intruders = 0;

    double deadline = MPI_Wtime() + 30.0;   /* a broken lock must fail, not hang */
    int stuck = 0;
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int k = 0; k < SPIN_ROUNDS && !stuck; ++k) {
        int64_t got;
        for (;;) {
            got = -1;
            cas(&one, &zero, &got, lock_dt, 0, lock_disp, tw.win, fl, lname);
            MPI_OK(MPI_Win_flush(0, tw.win));
            if (0 == (got & 0xff)) break;
            if (MPI_Wtime() > deadline) {
                stuck = 1;
                break;
            }
        }
        if (stuck) {
            CHECK(0, "%s %s lock: rank %d could not take the lock in 30 s (round %d, lock word %lld)", fl, lname,
                  rank, k, (long long) got);
            break;
        }
        /* critical section: announce, non-atomic read-modify-write, check nobody else came in */
        int64_t c = -1, h = -1;
        MPI_OK(MPI_Put(&me, 1, MPI_INT64_T, 0, holder_disp, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Get(&c, 1, MPI_INT64_T, 0, counter_disp, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
        c++;
        MPI_OK(MPI_Put(&c, 1, MPI_INT64_T, 0, counter_disp, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
        MPI_OK(MPI_Get(&h, 1, MPI_INT64_T, 0, holder_disp, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
        intruders += h != me;
        /* release: must find the lock still taken */
        got = -1;
        cas(&zero, &one, &got, lock_dt, 0, lock_disp, tw.win, fl, lname);
        MPI_OK(MPI_Win_flush(0, tw.win));
        bad_release += 1 != (got & 0xff);
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    CHECK(0 == intruders, "%s %s lock: another rank was in the critical section %d times", fl, lname, intruders);
    CHECK(0 == bad_release, "%s %s lock: the lock was not held at release %d times", fl, lname, bad_release);
    int any_stuck = 0;
    MPI_Allreduce(&stuck, &any_stuck, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && !any_stuck) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        const volatile int64_t *m = tw.mem;
        CHECK(m[8] == (int64_t) size * SPIN_ROUNDS, "%s %s lock: counter is %lld, expected %lld", fl, lname,
              (long long) m[8], (long long) size * SPIN_ROUNDS);
        CHECK(m[0] == 0, "%s %s lock: lock word is %lld at the end", fl, lname, (long long) m[0]);
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    test_win_free(&tw);
}

/* ---- 4. neighbours ------------------------------------------------------- */

#define NB_ROUNDS 150
#define NB_SENTINELS 4   /* per array: element r < size belongs to rank r, then this many sentinels */
#define NB_GAP 8         /* sentinel bytes between the arrays */

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int bytes;
    int offset;     /* byte offset of element 0 in the window */
} nb_array_t;

static uint64_t nb_init(const nb_array_t *a, int e)
{
    /* every byte nonzero, distinct between neighbouring elements */
    uint64_t v = 0;
    for (int b = 0; b < a->bytes; ++b) {
        uint8_t byte = (uint8_t) (0x11 * (e + 1) + 0x40 * b);
        v |= (uint64_t) (0 == byte ? 0x01 : byte) << (8 * b);
    }
    return v & (a->bytes == 8 ? ~0ull : ((1ull << (8 * a->bytes)) - 1));
}

static void neighbours(int flavor)
{
    const char *fl = flavor_names[flavor];
    /* the arrays grow with the job, one after the other with sentinel bytes
     * between them: no two ranks' elements overlap at any count */
    const int nb_elems = size + NB_SENTINELS;
    const int off16 = (nb_elems + NB_GAP) | 1;                         /* odd */
    const int off32 = ((off16 + 2 * nb_elems + NB_GAP + 3) & ~3) + 2;  /* 2 mod 4 */
    const int nb_bytes = off32 + 4 * nb_elems + NB_GAP;
    const nb_array_t arrays[3] = {
        { "uint8", MPI_UINT8_T, 1, 0 },
        { "uint16 (odd offsets)", MPI_UINT16_T, 2, off16 },
        { "int32 (offsets 2 mod 4)", MPI_INT32_T, 4, off32 },
    };
    test_win_t tw;
    int misses = 0;

    test_win_create(&tw, flavor, (size_t) nb_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    unsigned char *mem = tw.mem;
    if (0 == rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
        memset(mem, 0xa5, (size_t) nb_bytes);
        for (int a = 0; a < 3; ++a)
            for (int e = 0; e < nb_elems; ++e) {
                uint64_t v = nb_init(&arrays[a], e);
                memcpy(mem + arrays[a].offset + e * arrays[a].bytes, &v, (size_t) arrays[a].bytes);
            }
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    uint64_t cur[3];
    for (int a = 0; a < 3; ++a) cur[a] = nb_init(&arrays[a], rank);
    for (int k = 0; k < NB_ROUNDS; ++k)
        for (int a = 0; a < 3; ++a) {
            const nb_array_t *ar = &arrays[a];
            uint64_t next = cur[a] + 1, got = 0;
            MPI_Aint d = test_disp(&tw, 0, ar->offset + rank * ar->bytes, 1);
            cas(&next, &cur[a], &got, ar->dt, 0, d, tw.win, fl, ar->name);
            MPI_OK(MPI_Win_flush(0, tw.win));
            if (0 != memcmp(&got, &cur[a], (size_t) ar->bytes)) {
                if (misses++ < 5)
                    CHECK(0, "%s %s: rank %d round %d: CAS found 0x%llx, this rank left 0x%llx", fl, ar->name, rank, k,
                          (unsigned long long) got, (unsigned long long) cur[a]);
                memcpy(&cur[a], &got, (size_t) ar->bytes);   /* carry on from what is there */
            } else {
                cur[a] = next;
            }
        }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        unsigned char *expect = malloc((size_t) nb_bytes);
        memset(expect, 0xa5, (size_t) nb_bytes);
        for (int a = 0; a < 3; ++a)
            for (int e = 0; e < nb_elems; ++e) {
                uint64_t v = nb_init(&arrays[a], e) + (e < size ? NB_ROUNDS : 0);
                memcpy(expect + arrays[a].offset + e * arrays[a].bytes, &v, (size_t) arrays[a].bytes);
            }
        for (int b = 0; b < nb_bytes; ++b)
            CHECK(mem[b] == expect[b], "%s neighbours: window byte %d is 0x%02x, expected 0x%02x", fl, b, mem[b],
                  expect[b]);
        MPI_OK(MPI_Win_unlock(0, tw.win));
        free(expect);
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_types();
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        every_type(flavor);
        election(flavor);
        spin_lock(flavor, MPI_INT64_T, "int64");
        spin_lock(flavor, MPI_INT8_T, "int8");
        neighbours(flavor);
    }
    return test_finalize("compare_and_swap");
}
