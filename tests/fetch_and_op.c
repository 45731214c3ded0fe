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
 * MPI_Fetch_and_op, exact values.
 *
 * 1. Every predefined C integer type (and MPI_AINT/OFFSET/COUNT), floating
 *    type, complex type, pair type (MAXLOC/MINLOC), MPI_C_BOOL (logical
 *    ops) and MPI_BYTE (bitwise ops), crossed with every op valid for it,
 *    MPI_REPLACE and MPI_NO_OP included; every flavor; under lock (per
 *    target), lock_all and fence.  Every origin updates its own slot at every
 *    target three times (op a, op b, NO_OP): the three returned previous
 *    values and the final target memory are checked exactly.  Values of
 *    SUM/PROD are small (no overflow); the others use the type's full width.
 * 2. Counters: every rank does K fetch_and_op(+1) on an int64 and an int32
 *    counter at rank 0, and K get_accumulate(+1) with count 1 and count 4
 *    (int64 and int32), under lock_all and under a lock per operation.  The
 *    previous values gathered from every rank are, per counter element,
 *    exactly a permutation of 0..size*K-1, each rank's own sequence strictly
 *    increasing, and the counters end at size*K.  (MPI makes accumulates
 *    atomic per element only, so the 4-tuples of the count-4 get_accumulate
 *    are not required to hold equal elements; each element is checked on its
 *    own.)
 */
#include "common.h"

#include <complex.h>
#include <stdbool.h>

enum { OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR,
       OP_MAXLOC, OP_MINLOC, OP_REPLACE, OP_NO_OP, NOPS };
static const char *const op_names[NOPS] = { "MAX", "MIN", "SUM", "PROD", "LAND", "LOR", "LXOR", "BAND",
                                            "BOR", "BXOR", "MAXLOC", "MINLOC", "REPLACE", "NO_OP" };

static MPI_Op mpi_op(int op)
{
    switch (op) {
    case OP_MAX: return MPI_MAX;
    case OP_MIN: return MPI_MIN;
    case OP_SUM: return MPI_SUM;
    case OP_PROD: return MPI_PROD;
    case OP_LAND: return MPI_LAND;
    case OP_LOR: return MPI_LOR;
    case OP_LXOR: return MPI_LXOR;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_MAXLOC: return MPI_MAXLOC;
    case OP_MINLOC: return MPI_MINLOC;
    case OP_REPLACE: return MPI_REPLACE;
    default: return MPI_NO_OP;
    }
}

#define B(op) (1u << (op))
#define OPS_ANY (B(OP_REPLACE) | B(OP_NO_OP))
#define OPS_INT (B(OP_MAX) | B(OP_MIN) | B(OP_SUM) | B(OP_PROD) | B(OP_LAND) | B(OP_LOR) | B(OP_LXOR) | \
                 B(OP_BAND) | B(OP_BOR) | B(OP_BXOR) | OPS_ANY)
#define OPS_MULTI (B(OP_MAX) | B(OP_MIN) | B(OP_SUM) | B(OP_PROD) | B(OP_BAND) | B(OP_BOR) | B(OP_BXOR) | OPS_ANY)
#define OPS_FLOAT (B(OP_MAX) | B(OP_MIN) | B(OP_SUM) | B(OP_PROD) | OPS_ANY)
#define OPS_COMPLEX (B(OP_SUM) | B(OP_PROD) | OPS_ANY)
#define OPS_BOOL (B(OP_LAND) | B(OP_LOR) | B(OP_LXOR) | OPS_ANY)
#define OPS_BYTE (B(OP_BAND) | B(OP_BOR) | B(OP_BXOR) | OPS_ANY)
#define OPS_PAIR (B(OP_MAXLOC) | B(OP_MINLOC) | OPS_ANY)

#define CELL 32   /* bytes per element slot: the largest type (long double complex) */

/* A value from a seed: SUM and PROD get small values (nothing overflows),
 * the others values over the whole width, zero now and then. */
static uint64_t wide(uint32_t s)
{
    if (0 == s % 5) return 0;
    uint64_t x = (uint64_t) s * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29) ^ ((uint64_t) s << 40);
}
static int small_op(int op) { return OP_SUM == op || OP_PROD == op; }

typedef struct {
    const char *name;
    MPI_Datatype dt;
    unsigned ops;
    void (*gen)(void *p, uint32_t seed, int op);
    void (*apply)(int op, const void *origin, void *target);   /* target = origin op target */
    int (*eq)(const void *a, const void *b);
    void (*show)(const void *p, char *s, size_t n);
} type_t;

/* MINMAX63: Open MPI 4.1.4's own MAX/MIN get MPI_UNSIGNED_LONG and MPI_OFFSET
 * wrong past 2^63 (treated as signed resp. unsigned: MPI_Reduce_local shows
 * it; open-mpi/ompi#10525, fixed in 4.1.5), whatever the osc component: their
 * MAX/MIN values stay below 2^63. */
#define INT_TYPE(N, CT, SIGNED, FMT, CAST, MINMAX63)                                         \
    static void gen_##N(void *p, uint32_t s, int op)                                        \
    {                                                                                       \
        uint64_t w = wide(s);                                                               \
        if (MINMAX63 && (OP_MAX == op || OP_MIN == op)) w &= ~(1ull << 63);                 \
        CT x = small_op(op) ? (SIGNED ? (CT) ((int) (s % 7) - 3) : (CT) (s % 6)) : (CT) w;  \
        memcpy(p, &x, sizeof x);                                                            \
    }                                                                                       \
    static void apply_##N(int op, const void *o, void *t)                                   \
    {                                                                                       \
        CT a, b, r;                                                                         \
        memcpy(&a, o, sizeof a);                                                            \
        memcpy(&b, t, sizeof b);                                                            \
        switch (op) {                                                                       \
        case OP_MAX: r = a > b ? a : b; break;                                              \
        case OP_MIN: r = a < b ? a : b; break;                                              \
        case OP_SUM: r = (CT) (a + b); break;                                               \
        case OP_PROD: r = (CT) (a * b); break;                                              \
        case OP_LAND: r = (CT) (a && b); break;                                             \
        case OP_LOR: r = (CT) (a || b); break;                                              \
        case OP_LXOR: r = (CT) (!a != !b); break;                                           \
        case OP_BAND: r = (CT) (a & b); break;                                              \
        case OP_BOR: r = (CT) (a | b); break;                                               \
        case OP_BXOR: r = (CT) (a ^ b); break;                                              \
        case OP_REPLACE: r = a; break;                                                      \
        default: r = b; break;                                                              \
        }                                                                                   \
        memcpy(t, &r, sizeof r);                                                            \
    }                                                                                       \
    static int eq_##N(const void *x, const void *y)                                         \
    {                                                                                       \
        CT a, b;                                                                            \
        memcpy(&a, x, sizeof a);                                                            \
        memcpy(&b, y, sizeof b);                                                            \
        return a == b;                                                                      \
    }                                                                                       \
    static void show_##N(const void *p, char *s, size_t n)                                  \
    {                                                                                       \
        CT a;                                                                               \
        memcpy(&a, p, sizeof a);                                                            \
        snprintf(s, n, FMT, (CAST) a);                                                      \
    }

INT_TYPE(int, int, 1, "%lld", long long, 0)
INT_TYPE(long, long, 1, "%lld", long long, 0)
INT_TYPE(short, short, 1, "%lld", long long, 0)
INT_TYPE(ushort, unsigned short, 0, "%llu", unsigned long long, 0)
INT_TYPE(unsigned, unsigned, 0, "%llu", unsigned long long, 0)
INT_TYPE(ulong, unsigned long, 0, "%llu", unsigned long long, 1)
INT_TYPE(llong, long long, 1, "%lld", long long, 0)
INT_TYPE(ullong, unsigned long long, 0, "%llu", unsigned long long, 0)
INT_TYPE(schar, signed char, 1, "%lld", long long, 0)
INT_TYPE(uchar, unsigned char, 0, "%llu", unsigned long long, 0)
INT_TYPE(i8, int8_t, 1, "%lld", long long, 0)
INT_TYPE(i16, int16_t, 1, "%lld", long long, 0)
INT_TYPE(i32, int32_t, 1, "%lld", long long, 0)
INT_TYPE(i64, int64_t, 1, "%lld", long long, 0)
INT_TYPE(u8, uint8_t, 0, "%llu", unsigned long long, 0)
INT_TYPE(u16, uint16_t, 0, "%llu", unsigned long long, 0)
INT_TYPE(u32, uint32_t, 0, "%llu", unsigned long long, 0)
INT_TYPE(u64, uint64_t, 0, "%llu", unsigned long long, 0)
INT_TYPE(aint, MPI_Aint, 1, "%lld", long long, 0)
INT_TYPE(offset, MPI_Offset, 1, "%lld", long long, 1)
INT_TYPE(count, MPI_Count, 1, "%lld", long long, 0)
INT_TYPE(byte, unsigned char, 0, "0x%02llx", unsigned long long, 0)

#define FLOAT_TYPE(N, CT)                                                                    \
    static void gen_##N(void *p, uint32_t s, int op)                                        \
    {                                                                                       \
        CT x = (CT) ((int) (s % 13) - 6) * (CT) 0.5;                                        \
        (void) op;                                                                          \
        memcpy(p, &x, sizeof x);                                                            \
        clear_ldouble_padding(p, sizeof x);                                                 \
    }                                                                                       \
    static void apply_##N(int op, const void *o, void *t)                                   \
    {                                                                                       \
        CT a, b, r;                                                                         \
        memcpy(&a, o, sizeof a);                                                            \
        memcpy(&b, t, sizeof b);                                                            \
        switch (op) {                                                                       \
        case OP_MAX: r = a > b ? a : b; break;                                              \
        case OP_MIN: r = a < b ? a : b; break;                                              \
        case OP_SUM: r = a + b; break;                                                      \
        case OP_PROD: r = a * b; break;                                                     \
        case OP_REPLACE: r = a; break;                                                      \
        default: r = b; break;                                                              \
        }                                                                                   \
        memcpy(t, &r, sizeof r);                                                            \
    }                                                                                       \
    static int eq_##N(const void *x, const void *y)                                         \
    {                                                                                       \
        CT a, b;                                                                            \
        memcpy(&a, x, sizeof a);                                                            \
        memcpy(&b, y, sizeof b);                                                            \
        return a == b;                                                                      \
    }                                                                                       \
    static void show_##N(const void *p, char *s, size_t n)                                  \
    {                                                                                       \
        CT a;                                                                               \
        memcpy(&a, p, sizeof a);                                                            \
        snprintf(s, n, "%Lg", (long double) a);                                             \
    }

FLOAT_TYPE(float, float)
FLOAT_TYPE(double, double)
FLOAT_TYPE(ldouble, long double)

#define COMPLEX_TYPE(N, CT, RT)                                                              \
    static void gen_##N(void *p, uint32_t s, int op)                                        \
    {                                                                                       \
        RT re = (RT) ((int) (s % 7) - 3) * (RT) 0.5, im = (RT) ((int) ((s / 7) % 7) - 3) * (RT) 0.5; \
        CT x = re + im * (CT) I;                                                            \
        (void) op;                                                                          \
        memcpy(p, &x, sizeof x);                                                            \
        clear_ldouble_padding(p, sizeof re);                                                \
        clear_ldouble_padding((char *) p + sizeof re, sizeof re);                           \
    }                                                                                       \
    static void apply_##N(int op, const void *o, void *t)                                   \
    {                                                                                       \
        CT a, b, r;                                                                         \
        memcpy(&a, o, sizeof a);                                                            \
        memcpy(&b, t, sizeof b);                                                            \
        switch (op) {                                                                       \
        case OP_SUM: r = a + b; break;                                                      \
        case OP_PROD: r = a * b; break;                                                     \
        case OP_REPLACE: r = a; break;                                                      \
        default: r = b; break;                                                              \
        }                                                                                   \
        memcpy(t, &r, sizeof r);                                                            \
    }                                                                                       \
    static int eq_##N(const void *x, const void *y)                                         \
    {                                                                                       \
        CT a, b;                                                                            \
        memcpy(&a, x, sizeof a);                                                            \
        memcpy(&b, y, sizeof b);                                                            \
        return a == b;                                                                      \
    }                                                                                       \
    static void show_##N(const void *p, char *s, size_t n)                                  \
    {                                                                                       \
        CT a;                                                                               \
        memcpy(&a, p, sizeof a);                                                            \
        snprintf(s, n, "(%Lg,%Lg)", (long double) creall(a), (long double) cimagl(a));      \
    }

COMPLEX_TYPE(cfloat, float _Complex, float)
COMPLEX_TYPE(cdouble, double _Complex, double)
COMPLEX_TYPE(cldouble, long double _Complex, long double)

/* C_BOOL */
static void gen_bool(void *p, uint32_t s, int op) { bool x = (s / 3) % 2; (void) op; memcpy(p, &x, sizeof x); }
static void apply_bool(int op, const void *o, void *t)
{
    bool a, b, r;
    memcpy(&a, o, sizeof a);
    memcpy(&b, t, sizeof b);
    switch (op) {
    case OP_LAND: r = a && b; break;
    case OP_LOR: r = a || b; break;
    case OP_LXOR: r = a != b; break;
    case OP_REPLACE: r = a; break;
    default: r = b; break;
    }
    memcpy(t, &r, sizeof r);
}
static int eq_bool(const void *x, const void *y) { return 0 == memcmp(x, y, sizeof(bool)); }
static void show_bool(const void *p, char *s, size_t n) { snprintf(s, n, "0x%02x", *(const unsigned char *) p); }

#define PAIR_TYPE(N, VT)                                                                     \
    typedef struct { VT v; int i; } N##_t;                                                  \
    static void gen_##N(void *p, uint32_t s, int op)                                        \
    {                                                                                       \
        N##_t x;                                                                            \
        (void) op;                                                                          \
        memset(&x, 0, sizeof x);                                                            \
        x.v = (VT) ((int) (s % 7) - 3);                                                     \
        x.i = (int) ((s / 7) % 5) - 1;                                                      \
        memcpy(p, &x, sizeof x);                                                            \
        clear_ldouble_padding(p, sizeof x.v);  /* the memset does not survive x.v's store */ \
    }                                                                                       \
    static void apply_##N(int op, const void *o, void *t)                                   \
    {                                                                                       \
        N##_t a, b, r;                                                                      \
        memcpy(&a, o, sizeof a);                                                            \
        memcpy(&b, t, sizeof b);                                                            \
        r = b;                                                                              \
        if (OP_REPLACE == op) {                                                             \
            r = a;                                                                          \
        } else if (OP_MAXLOC == op || OP_MINLOC == op) {                                    \
            if (a.v == b.v) {                                                               \
                r.i = a.i < b.i ? a.i : b.i;                                                \
            } else if ((OP_MAXLOC == op) == (a.v > b.v)) {                                  \
                r = a;                                                                      \
            }                                                                               \
        }                                                                                   \
        memcpy(&((N##_t *) t)->v, &r.v, sizeof r.v);                                        \
        memcpy(&((N##_t *) t)->i, &r.i, sizeof r.i);                                        \
    }                                                                                       \
    static int eq_##N(const void *x, const void *y)                                         \
    {                                                                                       \
        N##_t a, b;                                                                         \
        memcpy(&a, x, sizeof a);                                                            \
        memcpy(&b, y, sizeof b);                                                            \
        return a.v == b.v && a.i == b.i;                                                    \
    }                                                                                       \
    static void show_##N(const void *p, char *s, size_t n)                                  \
    {                                                                                       \
        N##_t a;                                                                            \
        memcpy(&a, p, sizeof a);                                                            \
        snprintf(s, n, "(%Lg,%d)", (long double) a.v, a.i);                                 \
    }

PAIR_TYPE(float_int, float)
PAIR_TYPE(double_int, double)
PAIR_TYPE(long_int, long)
PAIR_TYPE(two_int, int)
PAIR_TYPE(short_int, short)
PAIR_TYPE(ldouble_int, long double)

static type_t types[64];
static int ntypes;

#define ADD(N, DT, OPS) (types[ntypes++] = (type_t) { #DT, DT, OPS, gen_##N, apply_##N, eq_##N, show_##N })

static void make_types(void)
{
    ADD(int, MPI_INT, OPS_INT);
    ADD(long, MPI_LONG, OPS_INT);
    ADD(short, MPI_SHORT, OPS_INT);
    ADD(ushort, MPI_UNSIGNED_SHORT, OPS_INT);
    ADD(unsigned, MPI_UNSIGNED, OPS_INT);
    ADD(ulong, MPI_UNSIGNED_LONG, OPS_INT);
    ADD(llong, MPI_LONG_LONG_INT, OPS_INT);
    ADD(llong, MPI_LONG_LONG, OPS_INT);
    ADD(ullong, MPI_UNSIGNED_LONG_LONG, OPS_INT);
    ADD(schar, MPI_SIGNED_CHAR, OPS_INT);
    ADD(uchar, MPI_UNSIGNED_CHAR, OPS_INT);
    ADD(i8, MPI_INT8_T, OPS_INT);
    ADD(i16, MPI_INT16_T, OPS_INT);
    ADD(i32, MPI_INT32_T, OPS_INT);
    ADD(i64, MPI_INT64_T, OPS_INT);
    ADD(u8, MPI_UINT8_T, OPS_INT);
    ADD(u16, MPI_UINT16_T, OPS_INT);
    ADD(u32, MPI_UINT32_T, OPS_INT);
    ADD(u64, MPI_UINT64_T, OPS_INT);
    ADD(aint, MPI_AINT, OPS_MULTI);
    ADD(offset, MPI_OFFSET, OPS_MULTI);
    ADD(count, MPI_COUNT, OPS_MULTI);
    ADD(float, MPI_FLOAT, OPS_FLOAT);
    ADD(double, MPI_DOUBLE, OPS_FLOAT);
    ADD(ldouble, MPI_LONG_DOUBLE, OPS_FLOAT);
    ADD(cfloat, MPI_C_FLOAT_COMPLEX, OPS_COMPLEX);
    ADD(cdouble, MPI_C_DOUBLE_COMPLEX, OPS_COMPLEX);
    ADD(cldouble, MPI_C_LONG_DOUBLE_COMPLEX, OPS_COMPLEX);
    ADD(bool, MPI_C_BOOL, OPS_BOOL);
    ADD(byte, MPI_BYTE, OPS_BYTE);
    ADD(float_int, MPI_FLOAT_INT, OPS_PAIR);
    ADD(double_int, MPI_DOUBLE_INT, OPS_PAIR);
    ADD(long_int, MPI_LONG_INT, OPS_PAIR);
    ADD(two_int, MPI_2INT, OPS_PAIR);
    ADD(short_int, MPI_SHORT_INT, OPS_PAIR);
    ADD(ldouble_int, MPI_LONG_DOUBLE_INT, OPS_PAIR);
}

/* (type, op) combinations; each has `size` cells at every target, one per origin */
typedef struct { int type, op; } combo_t;
static combo_t combos[64 * NOPS];
static int ncombos;
static int rank, size;

static void make_combos(void)
{
    for (int t = 0; t < ntypes; ++t)
        for (int op = 0; op < NOPS; ++op)
            if (types[t].ops & B(op)) combos[ncombos++] = (combo_t) { t, op };
}

static size_t cell_offset(int combo, int origin) { return ((size_t) combo * (size_t) size + (size_t) origin) * CELL; }

enum { SEED_INIT, SEED_A, SEED_B };
static uint32_t seed(int what, int mode, int origin, int target, int combo)
{
    uint32_t h = 2166136261u;
    int v[5] = { what, mode, origin, target, combo };
    for (int i = 0; i < 5; ++i) h = (h ^ (uint32_t) v[i]) * 16777619u;
    return h ^ (h >> 15);
}

enum { MODE_LOCK, MODE_LOCK_ALL, MODE_FENCE, NMODES };
static const char *const mode_names[NMODES] = { "lock", "lock_all", "fence" };

static void report(const char *what, const char *fl, const char *mode, int combo, int target, int origin,
                   const void *got, const void *expected)
{
    const type_t *ty = &types[combos[combo].type];
    char g[128], e[128];
    ty->show(got, g, sizeof g);
    ty->show(expected, e, sizeof e);
    CHECK(0, "%s %s %s %s origin %d target %d: %s is %s, expected %s", fl, mode, ty->name,
          op_names[combos[combo].op], origin, target, what, g, e);
}

/* Open MPI 4.1's osc/pt2pt (the reference for create and dynamic windows):
 *  - aborts on MAXLOC/MINLOC with the pair types that have padding
 *    ("datatype is currently unsupported for MPI_MINLOC/MPI_MAXLOC"), and
 *    REPLACE on MPI_SHORT_INT corrupts the int: those combinations are left
 *    out for it;
 *  - does not keep accumulates from one origin to one location in order (the
 *    default accumulate_ordering requires it): it gets a flush (or fence)
 *    between them.
 * newrma is held to everything. */
static int pt2pt_reference(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    if (NULL == osc || NULL != strstr(osc, "newrma") || NULL == strstr(osc, "pt2pt")) return 0;
    return FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor;
}

static int reference_skips(int flavor, int combo)
{
    const type_t *ty = &types[combos[combo].type];
    int op = combos[combo].op;
    if (!pt2pt_reference(flavor)) return 0;
    if (OP_REPLACE == op && ty->dt == MPI_SHORT_INT) return 1;
    if (OP_MAXLOC != op && OP_MINLOC != op) return 0;
    return ty->dt == MPI_DOUBLE_INT || ty->dt == MPI_LONG_INT || ty->dt == MPI_SHORT_INT
        || ty->dt == MPI_LONG_DOUBLE_INT;
}

/* MPI_Fetch_and_op that must succeed, reported with its type and op */
static void fao(const void *origin, void *result, MPI_Datatype dt, int target, MPI_Aint disp, MPI_Op op,
                MPI_Win win, const char *fl, const char *mode, int combo, const char *opname)
{
    int rc = MPI_Fetch_and_op(origin, result, dt, target, disp, op, win);
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        CHECK(0, "%s %s: MPI_Fetch_and_op(%s, %s) to %d returned %s", fl, mode, types[combos[combo].type].name,
              opname, target, msg);
    }
}

/* per target, per combo: origin a, origin b, results 1-3 */
#define CELLP(t, c, k) (buf + ((((size_t) (t) * (size_t) ncombos) + (size_t) (c)) * 5 + (k)) * CELL)

/* Round 0: op with a, 1: op with b, 2: NO_OP, of every (type, op) to target t. */
static void issue_round(test_win_t *tw, int t, int round, unsigned char *buf, const char *mn)
{
    for (int c = 0; c < ncombos; ++c) {
        if (reference_skips(tw->flavor, c)) continue;
        MPI_Datatype dt = types[combos[c].type].dt;
        MPI_Op op = 2 == round ? MPI_NO_OP : mpi_op(combos[c].op);
        MPI_Aint d = test_disp(tw, t, (MPI_Aint) cell_offset(c, rank), 1);
        fao(CELLP(t, c, 2 == round ? 0 : round), CELLP(t, c, 2 + round), dt, t, d, op, tw->win,
            flavor_names[tw->flavor], mn, c, 2 == round ? "NO_OP" : op_names[combos[c].op]);
    }
}

static void all_types(int flavor)
{
    const char *fl = flavor_names[flavor];
    size_t bytes = cell_offset(ncombos, 0);
    test_win_t tw;
    /* per target, per combo: origin a, origin b, results 1-3 */
    unsigned char *buf = malloc((size_t) size * (size_t) ncombos * 5 * CELL);

    test_win_create(&tw, flavor, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    unsigned char *mem = tw.mem;

    for (int mode = 0; mode < NMODES; ++mode) {
        const char *mn = mode_names[mode];
        /* initial values at this rank, as target */
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
        for (int c = 0; c < ncombos; ++c)
            for (int o = 0; o < size; ++o) {
                memset(mem + cell_offset(c, o), 0, CELL);
                types[combos[c].type].gen(mem + cell_offset(c, o), seed(SEED_INIT, mode, o, rank, c), combos[c].op);
            }
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        memset(buf, 0, (size_t) size * (size_t) ncombos * 5 * CELL);
        for (int t = 0; t < size; ++t)
            for (int c = 0; c < ncombos; ++c) {
                types[combos[c].type].gen(CELLP(t, c, 0), seed(SEED_A, mode, rank, t, c), combos[c].op);
                types[combos[c].type].gen(CELLP(t, c, 1), seed(SEED_B, mode, rank, t, c), combos[c].op);
            }
        MPI_Barrier(MPI_COMM_WORLD);

        /* three rounds per (type, op) and target: op a, op b, NO_OP */
        int serialize = pt2pt_reference(flavor);
        if (MODE_FENCE == mode) {
            MPI_OK(MPI_Win_fence(0, tw.win));
            for (int round = 0; round < 3; ++round) {
                for (int i = 0; i < size; ++i) issue_round(&tw, (rank + i) % size, round, buf, mn);
                if (serialize && round < 2) MPI_OK(MPI_Win_fence(0, tw.win));
            }
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
        } else {
            if (MODE_LOCK_ALL == mode) MPI_OK(MPI_Win_lock_all(0, tw.win));
            for (int i = 0; i < size; ++i) {
                int t = (rank + i) % size;
                if (MODE_LOCK == mode) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
                for (int round = 0; round < 3; ++round) {
                    issue_round(&tw, t, round, buf, mn);
                    if (serialize && round < 2) MPI_OK(MPI_Win_flush(t, tw.win));
                }
                if (MODE_LOCK == mode) MPI_OK(MPI_Win_unlock(t, tw.win));
                if (MODE_LOCK_ALL == mode) MPI_OK(MPI_Win_flush(t, tw.win));
            }
            if (MODE_LOCK_ALL == mode) MPI_OK(MPI_Win_unlock_all(tw.win));
        }

        /* the previous values this rank got back */
        for (int t = 0; t < size; ++t)
            for (int c = 0; c < ncombos; ++c) {
                if (reference_skips(flavor, c)) continue;
                const type_t *ty = &types[combos[c].type];
                unsigned char expected[CELL] = { 0 };
                ty->gen(expected, seed(SEED_INIT, mode, rank, t, c), combos[c].op);
                if (!ty->eq(CELLP(t, c, 2), expected)) report("1st previous value", fl, mn, c, t, rank, CELLP(t, c, 2), expected);
                ty->apply(combos[c].op, CELLP(t, c, 0), expected);
                if (!ty->eq(CELLP(t, c, 3), expected)) report("2nd previous value", fl, mn, c, t, rank, CELLP(t, c, 3), expected);
                ty->apply(combos[c].op, CELLP(t, c, 1), expected);
                if (!ty->eq(CELLP(t, c, 4), expected)) report("NO_OP value", fl, mn, c, t, rank, CELLP(t, c, 4), expected);
            }
        /* this rank's memory, as target, once everyone is done */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        for (int c = 0; c < ncombos; ++c)
            for (int o = 0; o < size; ++o) {
                if (reference_skips(flavor, c)) continue;
                const type_t *ty = &types[combos[c].type];
                unsigned char expected[CELL] = { 0 }, a[CELL] = { 0 }, b[CELL] = { 0 };
                ty->gen(expected, seed(SEED_INIT, mode, o, rank, c), combos[c].op);
                ty->gen(a, seed(SEED_A, mode, o, rank, c), combos[c].op);
                ty->gen(b, seed(SEED_B, mode, o, rank, c), combos[c].op);
                ty->apply(combos[c].op, a, expected);
                ty->apply(combos[c].op, b, expected);
                if (!ty->eq(mem + cell_offset(c, o), expected))
                    report("target memory", fl, mn, c, rank, o, mem + cell_offset(c, o), expected);
            }
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    test_win_free(&tw);
    free(buf);
}

/* ---- counters ------------------------------------------------------------ */

#define K 300
/* counter elements at rank 0, in int64 (disp unit 8) slots */
enum { S_FAO64 = 0, S_GA1_64 = 1, S_GA4_64 = 2 /* ..5 */, S_FAO32 = 6, S_GA1_32 = 7, S_GA4_32 = 8 /* 4 int32: 8..9 */ };
#define NSEQ 12   /* fao64, fao32, ga1_64, ga1_32, ga4_64[4], ga4_32[4] */
static const char *const seq_names[NSEQ] = { "fetch_and_op int64", "fetch_and_op int32", "get_accumulate int64",
                                             "get_accumulate int32", "get_accumulate x4 int64 [0]",
                                             "get_accumulate x4 int64 [1]", "get_accumulate x4 int64 [2]",
                                             "get_accumulate x4 int64 [3]", "get_accumulate x4 int32 [0]",
                                             "get_accumulate x4 int32 [1]", "get_accumulate x4 int32 [2]",
                                             "get_accumulate x4 int32 [3]" };

static void counters(int flavor, int per_op_lock)
{
    const char *fl = flavor_names[flavor];
    const char *how = per_op_lock ? "lock per op" : "lock_all";
    test_win_t tw;
    int64_t one64 = 1, ones64[4] = { 1, 1, 1, 1 };
    int32_t one32 = 1, ones32[4] = { 1, 1, 1, 1 };
    int64_t (*r64)[6] = calloc(K, sizeof *r64);    /* fao, ga1, ga4[4] */
    int32_t (*r32)[6] = calloc(K, sizeof *r32);
    int64_t *seq = malloc(sizeof(int64_t) * NSEQ * K), *all = NULL;

    test_win_create(&tw, flavor, 16 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    if (!per_op_lock) MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int k = 0; k < K; ++k) {
        if (per_op_lock) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        MPI_OK(MPI_Fetch_and_op(&one64, &r64[k][0], MPI_INT64_T, 0, test_disp(&tw, 0, S_FAO64, 8), MPI_SUM, tw.win));
        MPI_OK(MPI_Fetch_and_op(&one32, &r32[k][0], MPI_INT32_T, 0, test_disp(&tw, 0, S_FAO32, 8), MPI_SUM, tw.win));
        MPI_OK(MPI_Get_accumulate(&one64, 1, MPI_INT64_T, &r64[k][1], 1, MPI_INT64_T, 0,
                                  test_disp(&tw, 0, S_GA1_64, 8), 1, MPI_INT64_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Get_accumulate(&one32, 1, MPI_INT32_T, &r32[k][1], 1, MPI_INT32_T, 0,
                                  test_disp(&tw, 0, S_GA1_32, 8), 1, MPI_INT32_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Get_accumulate(ones64, 4, MPI_INT64_T, &r64[k][2], 4, MPI_INT64_T, 0,
                                  test_disp(&tw, 0, S_GA4_64, 8), 4, MPI_INT64_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Get_accumulate(ones32, 4, MPI_INT32_T, &r32[k][2], 4, MPI_INT32_T, 0,
                                  test_disp(&tw, 0, S_GA4_32, 8), 4, MPI_INT32_T, MPI_SUM, tw.win));
        if (per_op_lock) MPI_OK(MPI_Win_unlock(0, tw.win));
        else if (pt2pt_reference(flavor)) MPI_OK(MPI_Win_flush(0, tw.win));
    }
    if (!per_op_lock) MPI_OK(MPI_Win_unlock_all(tw.win));

    for (int k = 0; k < K; ++k) {
        seq[0 * K + k] = r64[k][0];
        seq[1 * K + k] = r32[k][0];
        seq[2 * K + k] = r64[k][1];
        seq[3 * K + k] = r32[k][1];
        for (int j = 0; j < 4; ++j) {
            seq[(4 + j) * K + k] = r64[k][2 + j];
            seq[(8 + j) * K + k] = r32[k][2 + j];
        }
    }
    if (0 == rank) all = malloc(sizeof(int64_t) * NSEQ * K * (size_t) size);
    MPI_Gather(seq, NSEQ * K, MPI_INT64_T, all, NSEQ * K, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        int64_t n = (int64_t) size * K;
        char *seen = malloc((size_t) n);
        for (int s = 0; s < NSEQ; ++s) {
            int bad = 0;
            memset(seen, 0, (size_t) n);
            for (int r = 0; r < size; ++r) {
                const int64_t *v = all + ((size_t) r * NSEQ + (size_t) s) * K;
                for (int k = 0; k < K; ++k) {
                    if (v[k] < 0 || v[k] >= n) {
                        if (bad++ < 3) CHECK(0, "%s %s %s: rank %d op %d got %lld, outside 0..%lld", fl, how, seq_names[s], r, k, (long long) v[k], (long long) n - 1);
                        continue;
                    }
                    if (seen[v[k]]++ && bad++ < 3)
                        CHECK(0, "%s %s %s: value %lld returned twice (rank %d op %d)", fl, how, seq_names[s], (long long) v[k], r, k);
                    if (k > 0 && v[k] <= v[k - 1] && bad++ < 3)
                        CHECK(0, "%s %s %s: rank %d op %d got %lld after %lld (not increasing)", fl, how, seq_names[s], r, k, (long long) v[k], (long long) v[k - 1]);
                }
            }
            for (int64_t i = 0; i < n; ++i)
                if (!seen[i]) {
                    CHECK(0, "%s %s %s: value %lld never returned", fl, how, seq_names[s], (long long) i);
                    break;
                }
        }
        free(seen);
        /* final counters */
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        const volatile int64_t *m64 = tw.mem;
        const volatile int32_t *m32 = tw.mem;
        CHECK(m64[S_FAO64] == n, "%s %s: fetch_and_op int64 counter ends at %lld, expected %lld", fl, how, (long long) m64[S_FAO64], (long long) n);
        CHECK(m32[2 * S_FAO32] == n, "%s %s: fetch_and_op int32 counter ends at %d, expected %lld", fl, how, m32[2 * S_FAO32], (long long) n);
        CHECK(m64[S_GA1_64] == n, "%s %s: get_accumulate int64 counter ends at %lld", fl, how, (long long) m64[S_GA1_64]);
        CHECK(m32[2 * S_GA1_32] == n, "%s %s: get_accumulate int32 counter ends at %d", fl, how, m32[2 * S_GA1_32]);
        for (int j = 0; j < 4; ++j) {
            CHECK(m64[S_GA4_64 + j] == n, "%s %s: get_accumulate x4 int64 [%d] ends at %lld", fl, how, j, (long long) m64[S_GA4_64 + j]);
            CHECK(m32[2 * S_GA4_32 + j] == n, "%s %s: get_accumulate x4 int32 [%d] ends at %d", fl, how, j, m32[2 * S_GA4_32 + j]);
        }
        /* untouched: int32 neighbour of the scalar int32 counters, slots past the end */
        CHECK(m32[2 * S_FAO32 + 1] == 0 && m32[2 * S_GA1_32 + 1] == 0, "%s %s: int32 neighbours clobbered", fl, how);
        for (int i = 10; i < 16; ++i) CHECK(m64[i] == 0, "%s %s: slot %d clobbered: %lld", fl, how, i, (long long) m64[i]);
        MPI_OK(MPI_Win_unlock(0, tw.win));
        free(all);
    }
    test_win_free(&tw);
    free(r64);
    free(r32);
    free(seq);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_types();
    make_combos();
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) all_types(flavor);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        counters(flavor, 0);
        counters(flavor, 1);
    }
    return test_finalize("fetch_and_op");
}
