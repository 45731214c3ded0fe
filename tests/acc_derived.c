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
 * MPI_Accumulate and MPI_Get_accumulate with derived datatypes at the
 * origin, the target and the result independently, on every flavor.
 *
 * Eleven layouts of N elements of a basic type B -- B itself, contiguous,
 * vector, hvector (a byte stride that is not a multiple of B's size, so on
 * allocate windows some elements are misaligned), indexed, indexed with a
 * negative lower bound, indexed_block with displacements out of order,
 * struct of one basic type with a nonzero lower bound, resized, resized to
 * an extent smaller than the data (instances interleave), and a vector of
 * indexed blocks -- over four basic types: MPI_INT and MPI_INT64_T (CPU
 * atomics on aligned elements of allocate windows), MPI_SHORT (always the
 * locked path) and MPI_DOUBLE_INT (a pair type whose size, 12, is less than
 * its extent, 16).
 *
 *  A. MPI_Accumulate for all 121 (origin layout, target layout) pairs
 *     (SUM / REPLACE alternating; DOUBLE_INT: MAXLOC / MINLOC / REPLACE),
 *     under fence;
 *  B. MPI_Get_accumulate for all 121 (target layout, result layout) pairs,
 *     origin layouts rotating (SUM / NO_OP / REPLACE; DOUBLE_INT: MAXLOC /
 *     NO_OP / REPLACE), under lock_all;
 *  C. zero counts (every layout at every side, accumulate and
 *     get_accumulate), and get_accumulate(MPI_NO_OP) with a zero-count
 *     origin, under a shared lock.
 *  D. get_accumulate of 3000 elements, every other one at the target (more
 *     pieces than one process_vm_readv takes), into a resized result.
 * Each operation has its own slot of the target's window and of the result
 * buffer, filled with a byte pattern (data and gaps alike).  Afterwards every
 * byte is checked: of the target's window (the target elements combined in
 * type-map order with the origin's, nothing else changed, not even the
 * padding inside an MPI_DOUBLE_INT), of the result buffer (the target's old
 * elements in the result layout, nothing else written) and of the origin
 * buffer (unchanged).  Each rank accumulates into its right neighbour.
 */
#include "common.h"

#include <stddef.h>

#define PER_LCM 6               /* every layout's elements per instance divides it */
#define N (PER_LCM * 6)         /* elements moved by one operation */
#define BASE 8                  /* data starts BASE extents into a slot (room for a negative lb) */
#define SLOT_UNITS (3 * N + 2 * BASE)  /* slot size in extents: widest layout is 3 per element */
#define NL 11

typedef struct {
    const char *name;
    MPI_Datatype type;
    int per;                    /* elements per instance */
    MPI_Aint ext, lb;           /* bytes */
    MPI_Aint offs[6];           /* byte offsets of an instance's elements, in type-map order */
} layout_t;

typedef struct {
    const char *name;
    MPI_Datatype dt;
    size_t E, S;                /* extent, size */
    int pair;                   /* MPI_DOUBLE_INT */
    MPI_Op ops_a[2], ops_b[3];
    const char *ops_a_names[2], *ops_b_names[3];
} basic_t;

typedef struct { double v; int k; } dint_t;

static int rank, size;
static layout_t layouts[NL];

static MPI_Aint offset_of(const layout_t *l, int k) { return (k / l->per) * l->ext + l->offs[k % l->per]; }

static void make_layouts(const basic_t *b)
{
    MPI_Datatype B = b->dt, t, tmp;
    const MPI_Aint E = (MPI_Aint) b->E;
    int n = 0;

    layouts[n++] = (layout_t) { "basic", B, 1, E, 0, { 0 } };

    MPI_Type_contiguous(3, B, &t);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "contiguous(3)", t, 3, 3 * E, 0, { 0, E, 2 * E } };

    MPI_Type_vector(3, 2, 4, B, &t);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "vector(3,2,4)", t, 6, 10 * E, 0, { 0, E, 4 * E, 5 * E, 8 * E, 9 * E } };

    {
        /* a byte stride of 2.5 elements (the pair type: 3, its elements stay whole) */
        MPI_Aint h = b->pair ? 3 * E : 2 * E + E / 2;
        MPI_Type_create_hvector(3, 1, h, B, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "hvector(3,1,2.5 elements)", t, 3, 2 * h + E, 0, { 0, h, 2 * h } };
        if (b->pair) layouts[n - 1].name = "hvector(3,1,3 elements)";
    }
    {
        int blens[3] = { 1, 3, 2 }, displs[3] = { 0, 3, 9 };
        MPI_Type_indexed(3, blens, displs, B, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "indexed", t, 6, 11 * E, 0, { 0, 3 * E, 4 * E, 5 * E, 9 * E, 10 * E } };
    }
    {
        int blens[2] = { 1, 1 }, displs[2] = { -2, 1 };
        MPI_Type_indexed(2, blens, displs, B, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "indexed (lb -2)", t, 2, 4 * E, -2 * E, { -2 * E, E } };
    }
    {
        int displs[3] = { 5, 0, 2 };
        MPI_Type_create_indexed_block(3, 2, displs, B, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "indexed_block (5,0,2)", t, 6, 7 * E, 0, { 5 * E, 6 * E, 0, E, 2 * E, 3 * E } };
    }
    {
        int blens[2] = { 2, 1 };
        MPI_Aint displs[2] = { E, 5 * E };
        MPI_Datatype types[2] = { B, B };
        MPI_Type_create_struct(2, blens, displs, types, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "struct (lb 1)", t, 3, 5 * E, E, { E, 2 * E, 5 * E } };
    }

    MPI_Type_create_resized(B, 0, 3 * E, &t);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "resized (extent 3)", t, 1, 3 * E, 0, { 0 } };

    MPI_Type_vector(2, 1, 3, B, &tmp);
    MPI_Type_create_resized(tmp, 0, 2 * E, &t);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "interleaved (extent 2)", t, 2, 2 * E, 0, { 0, 3 * E } };

    {
        int blens[2] = { 2, 1 }, displs[2] = { 0, 3 };
        MPI_Type_indexed(2, blens, displs, B, &tmp);
        MPI_Type_vector(2, 1, 2, tmp, &t);
        MPI_Type_free(&tmp);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "vector of indexed", t, 6, 12 * E, 0, { 0, E, 3 * E, 8 * E, 9 * E, 11 * E } };
    }

    /* the tables above are what MPI thinks too */
    for (int i = 0; i < NL; ++i) {
        MPI_Aint lb, extent;
        int tsize;
        MPI_Type_get_extent(layouts[i].type, &lb, &extent);
        MPI_Type_size(layouts[i].type, &tsize);
        CHECK(lb == layouts[i].lb && extent == layouts[i].ext && (size_t) tsize == layouts[i].per * b->S,
              "%s %s: lb %ld extent %ld size %d", b->name, layouts[i].name, (long) lb, (long) extent, tsize);
    }
}

static void free_layouts(void)
{
    for (int i = 1; i < NL; ++i) MPI_Type_free(&layouts[i].type);
}

/* ---- contents --------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

enum { FILL_WINDOW, FILL_ORIGIN, FILL_RESULT };

/* The initial bytes of one slot: a byte pattern everywhere; for the pair
 * type every extent-aligned cell also holds a small value and an index (its
 * padding keeps the pattern). */
static void fill(const basic_t *b, char *p, size_t bytes, int what, int owner, int slot)
{
    uint64_t s = mix(((uint64_t) what << 40) ^ ((uint64_t) owner << 24) ^ (uint64_t) slot);
    for (size_t i = 0; i < bytes; i += 8) {
        /* bytes below 0x40: a sum of two elements read at any offset never
         * overflows (Open MPI's op/avx saturates 8- and 16-bit sums instead
         * of wrapping, Open MPI issue #8045; overflow is undefined anyway) */
        uint64_t w = mix(s + i) & 0x3f3f3f3f3f3f3f3full;
        memcpy(p + i, &w, bytes - i < 8 ? bytes - i : 8);
    }
    if (b->pair) {
        for (size_t c = 0; c + b->E <= bytes; c += b->E) {
            uint64_t h = mix(s ^ (c * 31));
            dint_t d = { (double) (int) (h % 9) - 4 + (FILL_ORIGIN == what ? 0.5 * (h >> 60 & 1) : 0),
                         (int) ((h >> 8) % 1000) };
            memcpy(p + c, &d.v, sizeof(double));
            memcpy(p + c + offsetof(dint_t, k), &d.k, sizeof(int));
        }
    }
}

/* The data bytes of one element, for copies that must not touch padding. */
static void copy_element(const basic_t *b, char *dst, const char *src)
{
    if (b->pair) {
        memcpy(dst, src, sizeof(double));
        memcpy(dst + offsetof(dint_t, k), src + offsetof(dint_t, k), sizeof(int));
    } else {
        memcpy(dst, src, b->S);
    }
}

/* *inout = *in op *inout on one element at any alignment, as MPI defines it */
static void apply(const basic_t *b, MPI_Op op, const char *in, char *inout)
{
    if (MPI_NO_OP == op) return;
    if (MPI_REPLACE == op) {
        copy_element(b, inout, in);
        return;
    }
    if (b->pair) {
        dint_t x, y;
        memcpy(&x.v, in, sizeof(double));
        memcpy(&x.k, in + offsetof(dint_t, k), sizeof(int));
        memcpy(&y.v, inout, sizeof(double));
        memcpy(&y.k, inout + offsetof(dint_t, k), sizeof(int));
        if (MPI_MAXLOC == op ? x.v > y.v : x.v < y.v) y = x;
        else if (x.v == y.v && x.k < y.k) y.k = x.k;
        memcpy(inout, &y.v, sizeof(double));
        memcpy(inout + offsetof(dint_t, k), &y.k, sizeof(int));
        return;
    }
    /* MPI_SUM (the values are positive and small enough not to overflow) */
    uint64_t x = 0, y = 0;
    memcpy(&x, in, b->S);
    memcpy(&y, inout, b->S);
    y += x;
    memcpy(inout, &y, b->S);
}

/* ---- one operation ------------------------------------------------------------ */

typedef struct {
    int phase;                  /* 'A' accumulate, 'B' get_accumulate */
    int lo, lt, lr;             /* layouts; lr < 0: no result */
    int opi;
    int slot;
} op_t;

static size_t slot_bytes(const basic_t *b) { return (size_t) SLOT_UNITS * b->E; }
static MPI_Aint data_start(const basic_t *b) { return (MPI_Aint) (BASE * b->E); }

static const char *op_name(const basic_t *b, const op_t *o)
{
    return 'A' == o->phase ? b->ops_a_names[o->opi] : b->ops_b_names[o->opi];
}

static MPI_Op op_of(const basic_t *b, const op_t *o)
{
    return 'A' == o->phase ? b->ops_a[o->opi] : b->ops_b[o->opi];
}

/* which element of layout l covers byte `pos` of a slot (-1: none) */
static int element_at(const basic_t *b, const layout_t *l, MPI_Aint pos)
{
    for (int k = 0; k < N; ++k) {
        MPI_Aint at = data_start(b) + offset_of(l, k);
        if (pos >= at && pos < at + (MPI_Aint) b->E) return k;
    }
    return -1;
}

static void compare(const basic_t *b, const op_t *o, const char *fl, const char *what, const layout_t *l,
                    const char *got, const char *want, size_t bytes)
{
    int shown = 0;
    for (size_t i = 0; i < bytes; ++i) {
        if (got[i] == want[i]) continue;
        int k = l ? element_at(b, l, (MPI_Aint) i) : -1;
        char where[64];
        if (k >= 0) snprintf(where, sizeof(where), "element %d + byte %ld", k,
                             (long) ((MPI_Aint) i - data_start(b) - offset_of(l, k)));
        else snprintf(where, sizeof(where), "no element");
        char desc[160];
        if ('D' == o->phase)
            snprintf(desc, sizeof(desc), "origin contiguous, target vector(3000,1,2), result resized (extent 3)");
        else
            snprintf(desc, sizeof(desc), "origin %s, target %s%s%s", layouts[o->lo].name, layouts[o->lt].name,
                     o->lr >= 0 ? ", result " : "", o->lr >= 0 ? layouts[o->lr].name : "");
        CHECK(got[i] == want[i], "%s %s %c %s: %s: %s byte %zu (%s) is 0x%02x, expected 0x%02x", fl, b->name, o->phase,
              op_name(b, o), desc, what, i, where, (unsigned char) got[i], (unsigned char) want[i]);
        if (++shown == 2) break;
    }
}

static void run(int flavor, const basic_t *b)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const size_t SB = slot_bytes(b);
    const char *fl = flavor_names[flavor];
    op_t ops[2 * NL * NL];
    int nops = 0;

    for (int lo = 0; lo < NL; ++lo)
        for (int lt = 0; lt < NL; ++lt)
            ops[nops] = (op_t) { 'A', lo, lt, -1, (lo + lt) % 2, nops }, nops++;
    for (int lt = 0; lt < NL; ++lt)
        for (int lr = 0; lr < NL; ++lr)
            ops[nops] = (op_t) { 'B', (3 * lt + lr + 1) % NL, lt, lr, (lt + 2 * lr) % 3, nops }, nops++;
    const int zslot = nops;                 /* phase C's slot */
    const size_t total = (size_t) (nops + 1) * SB;

    test_win_t tw;
    test_win_create(&tw, flavor, total, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    char *win = tw.mem;
    char *obuf = malloc(total), *ocopy = malloc(total), *rbuf = malloc(total), *want = malloc(SB),
         *init = malloc(SB), *ini2 = malloc(SB);

    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
    for (int s = 0; s <= nops; ++s) fill(b, win + (size_t) s * SB, SB, FILL_WINDOW, rank, s);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    for (int s = 0; s <= nops; ++s) {
        fill(b, obuf + (size_t) s * SB, SB, FILL_ORIGIN, rank, s);
        fill(b, rbuf + (size_t) s * SB, SB, FILL_RESULT, rank, s);
    }
    memcpy(ocopy, obuf, total);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A: accumulate, under fence */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw.win));
    for (int i = 0; i < nops; ++i) {
        const op_t *o = &ops[i];
        if ('A' != o->phase) continue;
        const layout_t *lo = &layouts[o->lo], *lt = &layouts[o->lt];
        MPI_Aint at = (MPI_Aint) o->slot * (MPI_Aint) SB + data_start(b);
        MPI_OK(MPI_Accumulate(obuf + at, N / lo->per, lo->type, right, test_disp(&tw, right, at, 1), N / lt->per,
                              lt->type, op_of(b, o), tw.win));
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));

    /* B: get_accumulate, under lock_all */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int i = 0; i < nops; ++i) {
        const op_t *o = &ops[i];
        if ('B' != o->phase) continue;
        const layout_t *lo = &layouts[o->lo], *lt = &layouts[o->lt], *lr = &layouts[o->lr];
        MPI_Aint at = (MPI_Aint) o->slot * (MPI_Aint) SB + data_start(b);
        MPI_OK(MPI_Get_accumulate(obuf + at, N / lo->per, lo->type, rbuf + at, N / lr->per, lr->type, right,
                                  test_disp(&tw, right, at, 1), N / lt->per, lt->type, op_of(b, o), tw.win));
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));

    /* C: zero counts with every layout at every side; get_accumulate(NO_OP)
     * with a zero-count origin */
    MPI_Aint zat = (MPI_Aint) zslot * (MPI_Aint) SB + data_start(b);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    for (int l = 0; l < NL; ++l) {
        MPI_Datatype x = layouts[l].type, y = layouts[(l + 3) % NL].type, z = layouts[(l + 7) % NL].type;
        MPI_OK(MPI_Accumulate(obuf + zat, 0, x, right, test_disp(&tw, right, zat, 1), 0, y, MPI_SUM == b->ops_a[0]
                              ? MPI_SUM : MPI_MAXLOC, tw.win));
        MPI_OK(MPI_Accumulate(obuf + zat, 0, x, right, test_disp(&tw, right, zat, 1), 0, y, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Get_accumulate(obuf + zat, 0, x, rbuf + zat, 0, z, right, test_disp(&tw, right, zat, 1), 0, y,
                                  MPI_REPLACE, tw.win));
        MPI_OK(MPI_Get_accumulate(obuf + zat, 0, x, rbuf + zat, 0, z, right, test_disp(&tw, right, zat, 1), 0, y,
                                  MPI_NO_OP, tw.win));
    }
    /* the origin is ignored for MPI_NO_OP: a zero count is fine; result in
     * the "vector of indexed" layout, target in the "indexed_block" one */
    const layout_t *zr = &layouts[NL - 1], *zt = &layouts[6];
    MPI_Aint zres = zat;
    MPI_OK(MPI_Get_accumulate(NULL, 0, b->dt, rbuf + zres, N / zr->per, zr->type, right,
                              test_disp(&tw, right, zat, 1), N / zt->per, zt->type, MPI_NO_OP, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- checks ---- */
    int before = test_errors;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    for (int i = 0; i < nops && test_errors - before < 8; ++i) {
        const op_t *o = &ops[i];
        const layout_t *lo = &layouts[o->lo], *lt = &layouts[o->lt];
        /* my window slot, written by my left neighbour */
        fill(b, want, SB, FILL_WINDOW, rank, o->slot);
        fill(b, ini2, SB, FILL_ORIGIN, left, o->slot);
        for (int k = 0; k < N; ++k)
            apply(b, op_of(b, o), ini2 + data_start(b) + offset_of(lo, k), want + data_start(b) + offset_of(lt, k));
        compare(b, o, fl, "window", lt, win + (size_t) o->slot * SB, want, SB);
        /* my result slot, from my right neighbour's window */
        if ('B' == o->phase) {
            const layout_t *lr = &layouts[o->lr];
            fill(b, want, SB, FILL_RESULT, rank, o->slot);
            fill(b, init, SB, FILL_WINDOW, right, o->slot);
            for (int k = 0; k < N; ++k)
                copy_element(b, want + data_start(b) + offset_of(lr, k), init + data_start(b) + offset_of(lt, k));
            compare(b, o, fl, "result", lr, rbuf + (size_t) o->slot * SB, want, SB);
        }
    }
    {
        op_t zo = { 'C', 0, 6, NL - 1, 0, zslot };
        /* phase C: the window slot unchanged, the result only from the NO_OP */
        fill(b, want, SB, FILL_WINDOW, rank, zslot);
        compare(b, &zo, fl, "window (zero counts)", NULL, win + (size_t) zslot * SB, want, SB);
        fill(b, want, SB, FILL_RESULT, rank, zslot);
        fill(b, init, SB, FILL_WINDOW, right, zslot);
        for (int k = 0; k < N; ++k)
            copy_element(b, want + data_start(b) + offset_of(zr, k), init + data_start(b) + offset_of(zt, k));
        compare(b, &zo, fl, "result (zero counts, then NO_OP)", zr, rbuf + (size_t) zslot * SB, want, SB);
    }
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    CHECK(0 == memcmp(obuf, ocopy, total), "%s %s: the origin buffer changed", fl, b->name);

    free(obuf);
    free(ocopy);
    free(rbuf);
    free(want);
    free(init);
    free(ini2);
    test_win_free(&tw);
}

/* D. Many pieces: get_accumulate of NB elements, every other one at the
 * target (one vector: NB runs, more than process_vm_readv takes at once),
 * into a resized (extent 3) result, from a contiguous origin. */
#define NB 3000
static void many_pieces(int flavor, const basic_t *b)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const char *fl = flavor_names[flavor];
    const size_t E = b->E, wbytes = (2 * NB + 8) * E, rbytes = (3 * NB + 8) * E;
    const MPI_Aint at = (MPI_Aint) (4 * E);
    MPI_Datatype every_other, spread;
    MPI_Type_vector(NB, 1, 2, b->dt, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Type_create_resized(b->dt, 0, (MPI_Aint) (3 * E), &spread);
    MPI_Type_commit(&spread);
    test_win_t tw;
    test_win_create(&tw, flavor, wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    char *win = tw.mem, *obuf = malloc(NB * E), *rbuf = malloc(rbytes), *want = malloc(rbytes),
         *ini = malloc(rbytes);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
    fill(b, win, wbytes, FILL_WINDOW, rank, -1);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    fill(b, obuf, NB * E, FILL_ORIGIN, rank, -1);
    fill(b, rbuf, rbytes, FILL_RESULT, rank, -1);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_OK(MPI_Win_lock_all(0, tw.win));
    MPI_OK(MPI_Get_accumulate(obuf, NB, b->dt, rbuf + at, NB, spread, right, test_disp(&tw, right, at, 1), 1,
                              every_other, b->ops_b[0], tw.win));
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    op_t o = { 'D', 0, 0, 0, 0, -1 };   /* for messages */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    fill(b, want, wbytes, FILL_WINDOW, rank, -1);
    fill(b, ini, NB * E, FILL_ORIGIN, left, -1);
    for (int k = 0; k < NB; ++k) apply(b, b->ops_b[0], ini + k * E, want + at + 2 * k * E);
    compare(b, &o, fl, "window (3000 pieces)", NULL, win, want, wbytes);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    fill(b, want, rbytes, FILL_RESULT, rank, -1);
    fill(b, ini, wbytes, FILL_WINDOW, right, -1);
    for (int k = 0; k < NB; ++k) copy_element(b, want + at + 3 * k * E, ini + at + 2 * k * E);
    compare(b, &o, fl, "result (3000 pieces)", NULL, rbuf, want, rbytes);

    free(obuf);
    free(rbuf);
    free(want);
    free(ini);
    test_win_free(&tw);
    MPI_Type_free(&every_other);
    MPI_Type_free(&spread);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    basic_t basics[] = {
        { "MPI_INT", MPI_INT, sizeof(int), sizeof(int), 0, { MPI_SUM, MPI_REPLACE },
          { MPI_SUM, MPI_NO_OP, MPI_REPLACE }, { "SUM", "REPLACE" }, { "SUM", "NO_OP", "REPLACE" } },
        { "MPI_INT64_T", MPI_INT64_T, 8, 8, 0, { MPI_SUM, MPI_REPLACE },
          { MPI_SUM, MPI_NO_OP, MPI_REPLACE }, { "SUM", "REPLACE" }, { "SUM", "NO_OP", "REPLACE" } },
        { "MPI_SHORT", MPI_SHORT, sizeof(short), sizeof(short), 0, { MPI_SUM, MPI_REPLACE },
          { MPI_SUM, MPI_NO_OP, MPI_REPLACE }, { "SUM", "REPLACE" }, { "SUM", "NO_OP", "REPLACE" } },
        { "MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(dint_t), sizeof(double) + sizeof(int), 1,
          { MPI_MAXLOC, MPI_MINLOC }, { MPI_MAXLOC, MPI_NO_OP, MPI_REPLACE }, { "MAXLOC", "MINLOC" },
          { "MAXLOC", "NO_OP", "REPLACE" } },
    };
    const char *osc = getenv("OMPI_MCA_osc");
    /* Open MPI 4.1's osc/sm and osc/pt2pt abort on MAXLOC/MINLOC with
     * MPI_DOUBLE_INT (ompi_osc_base_process_op): left out for them only */
    int nb = (NULL != osc && NULL == strstr(osc, "newrma")) ? 3 : 4;

    for (int i = 0; i < nb; ++i) {
        make_layouts(&basics[i]);
        for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
            run(flavor, &basics[i]);
            /* Open MPI 4.1's osc/pt2pt (create and dynamic windows) corrupts
             * its heap on this get_accumulate ("malloc(): corrupted top size"
             * in MPI_Win_unlock_all; fine up to about 1000 pieces): left out
             * for it only */
            if (4 == nb || (FLAVOR_CREATE != flavor && FLAVOR_DYNAMIC != flavor))
                many_pieces(flavor, &basics[i]);
        }
        free_layouts();
    }
    return test_finalize("acc_derived");
}
