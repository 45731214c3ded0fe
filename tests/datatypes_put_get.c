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
 * MPI_Put and MPI_Get with derived datatypes, every window flavor, under
 * fences.  Seven layouts of N ints (contiguous, vector, indexed, struct with
 * a nonzero lower bound, resized, indexed with a negative lower bound,
 * resized to an extent smaller than the data so instances interleave) are
 * used at the origin and at the target independently: all 49 pairs, both
 * directions.  Every word of the origin buffer and of the target window is
 * checked afterwards: the right words moved, in order, and nothing else
 * changed.  N is large enough that a transfer is over a thousand separate
 * pieces.  Also: zero counts with any types, and a struct of mixed basic
 * types (int, double, char) in its natural C layout at one side and packed
 * (unaligned) at the other.
 */
#include "common.h"

#include <stddef.h>

#define PER_LCM 6               /* every layout's ints per instance divides it */
#define N (PER_LCM * 512)       /* ints moved by one operation */
#define B 8                     /* buffers and windows start the data at int B */
#define L (B + 3 * N + 8)       /* ints per buffer and window (widest layout: 3 per int) */

typedef struct {
    const char *name;
    MPI_Datatype type;
    int per;                    /* ints per instance */
    int ext;                    /* extent, in ints */
    int lb;                     /* lower bound, in ints */
    int offs[6];                /* int offsets of an instance's data, in type-map order */
} layout_t;

static layout_t layouts[7];
static const int NL = 7;

/* Offset (ints, from the buffer pointer) of data int k of layout l. */
static int offset_of(const layout_t *l, int k) { return (k / l->per) * l->ext + l->offs[k % l->per]; }

static void make_layouts(void)
{
    MPI_Datatype t, tmp;
    int n = 0;

    layouts[n++] = (layout_t) { "contiguous", MPI_INT, 1, 1, 0, { 0 } };

    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "vector", t, 6, 10, 0, { 0, 1, 4, 5, 8, 9 } };

    {
        int blens[3] = { 1, 3, 2 }, displs[3] = { 0, 3, 9 };
        MPI_Type_indexed(3, blens, displs, MPI_INT, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "indexed", t, 6, 11, 0, { 0, 3, 4, 5, 9, 10 } };
    }
    {
        int blens[2] = { 2, 1 };
        MPI_Aint displs[2] = { 1 * sizeof(int), 5 * sizeof(int) };
        MPI_Datatype types[2] = { MPI_INT, MPI_INT };
        MPI_Type_create_struct(2, blens, displs, types, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "struct (lb 1)", t, 3, 5, 1, { 1, 2, 5 } };
    }

    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &t);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "resized (extent 3)", t, 1, 3, 0, { 0 } };

    {
        int blens[2] = { 1, 1 }, displs[2] = { -2, 1 };
        MPI_Type_indexed(2, blens, displs, MPI_INT, &t);
        MPI_Type_commit(&t);
        layouts[n++] = (layout_t) { "indexed (lb -2)", t, 2, 4, -2, { -2, 1 } };
    }

    MPI_Type_vector(2, 1, 3, MPI_INT, &tmp);
    MPI_Type_create_resized(tmp, 0, 2 * sizeof(int), &t);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&t);
    layouts[n++] = (layout_t) { "interleaved (extent 2)", t, 2, 2, 0, { 0, 3 } };

    /* the tables above are what MPI thinks too */
    for (int i = 0; i < NL; ++i) {
        MPI_Aint lb, extent;
        int size;
        MPI_Type_get_extent(layouts[i].type, &lb, &extent);
        MPI_Type_size(layouts[i].type, &size);
        CHECK(lb == layouts[i].lb * (MPI_Aint) sizeof(int) && extent == layouts[i].ext * (MPI_Aint) sizeof(int)
                  && size == layouts[i].per * (int) sizeof(int),
              "layout %s: lb %ld extent %ld size %d", layouts[i].name, (long) lb, (long) extent, size);
    }
}

static void free_layouts(void)
{
    for (int i = 1; i < NL; ++i) MPI_Type_free(&layouts[i].type);
}

/* Contents: window word p of `owner`, origin buffer word p of `owner`. */
static int win_value(int owner, int pair, int p) { return (owner + 1) * 100000000 + pair * 100000 + p; }
static int org_value(int owner, int pair, int p) { return -((owner + 1) * 100000000 + pair * 100000 + p); }
#define UNTOUCHED 0x5eed

static int errors_before;

static void pairs(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const char *fn = flavor_names[flavor];
    test_win_t tw;
    int *obuf = malloc(sizeof(int) * L);
    int *expect = malloc(sizeof(int) * L);

    test_win_create(&tw, flavor, L * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    int *win = tw.mem;
    MPI_Aint disp_right = test_disp(&tw, right, B, sizeof(int));

    for (int o = 0; o < NL; ++o) {
        for (int t = 0; t < NL; ++t) {
            const layout_t *lo = &layouts[o], *lt = &layouts[t];
            int pair = o * NL + t;
            int co = N / lo->per, ct = N / lt->per;
            errors_before = test_errors;

            /* ---- get: origin layout lo, target layout lt ---- */
            for (int p = 0; p < L; ++p) win[p] = win_value(rank, pair, p);
            for (int p = 0; p < L; ++p) obuf[p] = UNTOUCHED;
            MPI_OK(MPI_Win_fence(0, tw.win));
            MPI_OK(MPI_Get(obuf + B, co, lo->type, right, disp_right, ct, lt->type, tw.win));
            MPI_OK(MPI_Win_fence(0, tw.win));
            for (int p = 0; p < L; ++p) expect[p] = UNTOUCHED;
            for (int k = 0; k < N; ++k) expect[B + offset_of(lo, k)] = win_value(right, pair, B + offset_of(lt, k));
            for (int p = 0; p < L; ++p)
                if (obuf[p] != expect[p]) {
                    CHECK(obuf[p] == expect[p], "%s: get %s <- %s: origin word %d is %d, expected %d", fn, lo->name,
                          lt->name, p, obuf[p], expect[p]);
                    if (test_errors - errors_before >= 3) break;
                }

            /* ---- put: origin layout lo, target layout lt ---- */
            for (int p = 0; p < L; ++p) obuf[p] = org_value(rank, pair, p);
            MPI_OK(MPI_Put(obuf + B, co, lo->type, right, disp_right, ct, lt->type, tw.win));
            MPI_OK(MPI_Win_fence(0, tw.win));
            for (int p = 0; p < L; ++p) expect[p] = win_value(rank, pair, p);
            for (int k = 0; k < N; ++k) expect[B + offset_of(lt, k)] = org_value(left, pair, B + offset_of(lo, k));
            for (int p = 0; p < L; ++p)
                if (win[p] != expect[p]) {
                    CHECK(win[p] == expect[p], "%s: put %s -> %s: window word %d is %d, expected %d", fn, lo->name,
                          lt->name, p, win[p], expect[p]);
                    if (test_errors - errors_before >= 6) break;
                }
        }
    }

    /* ---- zero counts, any types: nothing moves ---- */
    for (int p = 0; p < L; ++p) win[p] = win_value(rank, 99, p);
    for (int p = 0; p < L; ++p) obuf[p] = UNTOUCHED;
    MPI_OK(MPI_Win_fence(0, tw.win));
    for (int o = 0; o < NL; ++o) {
        const layout_t *lo = &layouts[o], *lt = &layouts[(o + 3) % NL];
        MPI_OK(MPI_Put(obuf + B, 0, lo->type, right, disp_right, 0, lt->type, tw.win));
        MPI_OK(MPI_Get(obuf + B, 0, lo->type, right, disp_right, 0, lt->type, tw.win));
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    int changed_win = 0, changed_org = 0;
    for (int p = 0; p < L; ++p) {
        changed_win += win[p] != win_value(rank, 99, p);
        changed_org += obuf[p] != UNTOUCHED;
    }
    CHECK(0 == changed_win && 0 == changed_org, "%s: zero-count puts/gets changed %d window and %d origin words", fn,
          changed_win, changed_org);

    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
    free(obuf);
    free(expect);
}

/* ---- mixed basic types: natural C layout <-> packed, unaligned ---- */
typedef struct {
    int32_t a;
    double b;
    char c;
} rec_t;

#define M 100           /* records */
#define PACKED 13       /* bytes of a packed record */
#define AT 3            /* byte displacement of the packed records in the window */

static void mixed(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const char *fn = flavor_names[flavor];
    MPI_Datatype natural, packed, tmp;
    int blens[3] = { 1, 1, 1 };
    MPI_Datatype types[3] = { MPI_INT32_T, MPI_DOUBLE, MPI_CHAR };
    MPI_Aint nd[3] = { offsetof(rec_t, a), offsetof(rec_t, b), offsetof(rec_t, c) }, pd[3] = { 0, 4, 12 };

    MPI_Type_create_struct(3, blens, nd, types, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(rec_t), &natural);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&natural);
    MPI_Type_create_struct(3, blens, pd, types, &tmp);
    MPI_Type_create_resized(tmp, 0, PACKED, &packed);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&packed);

    const size_t wbytes = AT + PACKED * M + 5;
    test_win_t tw;
    test_win_create(&tw, flavor, wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    unsigned char *win = tw.mem;
    memset(win, 0xa5, wbytes);
    rec_t src[M], back[M];
    memset(src, 0, sizeof(src));     /* padding too, for a clean comparison */
    for (int i = 0; i < M; ++i) {
        src[i].a = rank * 1000 + i;
        src[i].b = rank + i * 0.25;
        src[i].c = (char) ('A' + (i + rank) % 26);
    }
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(src, M, natural, right, test_disp(&tw, right, AT, 1), M, packed, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    int bad = 0;
    for (int i = 0; i < M && bad < 3; ++i) {
        int32_t a;
        double b;
        char c;
        memcpy(&a, win + AT + i * PACKED, 4);
        memcpy(&b, win + AT + i * PACKED + 4, 8);
        memcpy(&c, win + AT + i * PACKED + 12, 1);
        if (a != left * 1000 + i || b != left + i * 0.25 || c != (char) ('A' + (i + left) % 26)) {
            bad++;
            CHECK(0, "%s: packed record %d is {%d, %g, %c}, expected {%d, %g, %c}", fn, i, a, b, c, left * 1000 + i,
                  left + i * 0.25, 'A' + (i + left) % 26);
        }
    }
    for (size_t p = 0; p < AT; ++p) CHECK(0xa5 == win[p], "%s: byte %lu before the records changed", fn, (unsigned long) p);
    for (size_t p = AT + PACKED * M; p < wbytes; ++p)
        CHECK(0xa5 == win[p], "%s: byte %lu after the records changed", fn, (unsigned long) p);

    /* and back: get the right neighbour's packed records as natural ones */
    memset(back, 0, sizeof(back));
    MPI_OK(MPI_Get(back, M, natural, right, test_disp(&tw, right, AT, 1), M, packed, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    CHECK(0 == memcmp(back, src, sizeof(src)), "%s: records got back from %d differ from those put", fn, right);

    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
    MPI_Type_free(&natural);
    MPI_Type_free(&packed);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    make_layouts();
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        pairs(flavor);
        mixed(flavor);
    }
    free_layouts();
    return test_finalize("datatypes_put_get");
}
