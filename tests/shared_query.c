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
 * MPI_Win_allocate_shared and MPI_Win_shared_query:
 *  - contiguous windows (no info): every rank's size and disp_unit (which
 *    differ per rank) come back exactly, rank i+1's memory starts where rank
 *    i's ends, the base MPI_Win_allocate_shared returned is the queried one,
 *    and the whole window is one array through the lowest rank's pointer;
 *  - alloc_shared_noncontig = "true": sizes and disp_units, segments that do
 *    not overlap;
 *  - some ranks of size 0 (contiguous and noncontig), and all of size 0;
 *  - MPI_PROC_NULL returns the lowest rank with a nonzero size;
 *  - direct loads and stores through the queried pointers, made visible by
 *    MPI_Win_sync + barrier inside a lock_all epoch, or by fences, and mixed
 *    with MPI_Put (which uses the target's own disp_unit).
 * Every window is on MPI_COMM_WORLD, so every rank must be on one node
 * (across nodes such a window is declined: tests/shared_spans_nodes.sh).
 *
 * newrma-test: one-node
 */
#include "common.h"

#include <unistd.h>

static int64_t value(int writer, int owner, int i, int round)
{
    return (int64_t) round * 100000007 + (int64_t) writer * 1000003 + owner * 1009 + i + 1;
}

static const int disp_units[4] = { 8, 1, 4, 2 };

/* Bytes of rank r's window: a multiple of 8, zero for even ranks if asked. */
static size_t bytes_of(int r, int zero_even)
{
    if (zero_even && r % 2 == 0) return 0;
    return (size_t) (r + 1) * 3 * sizeof(int64_t);
}

/* Open MPI 4.1's osc/sm (the reference this test is checked against)
 * reports page-rounded sizes for alloc_shared_noncontig windows
 * (ompi/mca/osc/sm/osc_sm_component.c gathers the rounded sizes); the
 * standard's size is the one the rank asked for, and newrma is held to it. */
static int sm_rounds_noncontig(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL == strstr(osc, "newrma");
}

static MPI_Aint page_rounded(size_t bytes)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    return (MPI_Aint) ((bytes + page - 1) / page * page);
}

/* The first rank after r (cyclically, r itself last) with memory, at
 * distance *k in 1..size; -1 if nobody has memory. */
static int next_with_memory(int r, int size, int zero_even, int *k)
{
    for (*k = 1; *k <= size; ++*k)
        if (bytes_of((r + *k) % size, zero_even) > 0) return (r + *k) % size;
    *k = 0;
    return -1;
}

/* Everyone's stores before, everyone's loads after; inside lock_all. */
static void sync_all(MPI_Win win)
{
    MPI_OK(MPI_Win_sync(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_sync(win));
}

/* mode: 0 contiguous, 1 noncontig.  zero_even: even ranks have size 0. */
static void run(int noncontig, int zero_even)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char what[64];
    snprintf(what, sizeof(what), "%s%s", noncontig ? "noncontig" : "contig", zero_even ? ", even ranks empty" : "");
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }

    size_t mybytes = bytes_of(rank, zero_even);
    int64_t *mybase = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared((MPI_Aint) mybytes, disp_units[rank % 4], info, MPI_COMM_WORLD, &mybase, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    if (MPI_INFO_NULL != info) MPI_Info_free(&info);

    int64_t **bases = calloc((size_t) size, sizeof(int64_t *));
    int first_nonzero = -1;
    for (int r = 0; r < size; ++r) {
        MPI_Aint qsize = -1;
        int qdisp = -1;
        MPI_OK(MPI_Win_shared_query(win, r, &qsize, &qdisp, &bases[r]));
        CHECK(qsize == (MPI_Aint) bytes_of(r, zero_even) || (noncontig && sm_rounds_noncontig()
                                                             && qsize == page_rounded(bytes_of(r, zero_even))),
              "%s: query(%d) size is %ld, expected %lu", what, r, (long) qsize, (unsigned long) bytes_of(r, zero_even));
        CHECK(qdisp == disp_units[r % 4], "%s: query(%d) disp_unit is %d, expected %d", what, r, qdisp,
              disp_units[r % 4]);
        if (bytes_of(r, zero_even) > 0) {
            CHECK(NULL != bases[r], "%s: query(%d) base is NULL", what, r);
            if (first_nonzero < 0) first_nonzero = r;
        }
    }
    if (mybytes > 0)
        CHECK(bases[rank] == mybase, "%s: allocate_shared returned %p, query(self) %p", what, (void *) mybase,
              (void *) bases[rank]);

    /* MPI_PROC_NULL: the lowest rank with memory */
    {
        MPI_Aint qsize = -1;
        int qdisp = -1;
        int64_t *qbase = NULL;
        MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qdisp, &qbase));
        if (first_nonzero >= 0) {
            MPI_Aint expect = (MPI_Aint) bytes_of(first_nonzero, zero_even);
            if (noncontig && sm_rounds_noncontig() && qsize == page_rounded(bytes_of(first_nonzero, zero_even)))
                expect = qsize;
            CHECK(qsize == expect && qdisp == disp_units[first_nonzero % 4]
                      && qbase == bases[first_nonzero],
                  "%s: query(MPI_PROC_NULL) gave size %ld disp_unit %d base %p, expected rank %d's: %lu %d %p", what,
                  (long) qsize, qdisp, (void *) qbase, first_nonzero, (unsigned long) bytes_of(first_nonzero, zero_even),
                  disp_units[first_nonzero % 4], (void *) bases[first_nonzero]);
        } else {
            CHECK(0 == qsize, "%s: query(MPI_PROC_NULL) of an empty window gave size %ld", what, (long) qsize);
        }
    }

    /* layout: contiguous in rank order, or at least disjoint */
    int prev = -1;
    for (int r = 0; r < size; ++r) {
        if (0 == bytes_of(r, zero_even)) continue;
        if (prev >= 0 && !noncontig)
            CHECK((char *) bases[r] == (char *) bases[prev] + bytes_of(prev, zero_even),
                  "%s: rank %d's base %p is not rank %d's base %p + %lu", what, r, (void *) bases[r], prev,
                  (void *) bases[prev], (unsigned long) bytes_of(prev, zero_even));
        for (int q = 0; q < r; ++q) {
            if (0 == bytes_of(q, zero_even)) continue;
            char *a = (char *) bases[q], *b = (char *) bases[r];
            CHECK(a + bytes_of(q, zero_even) <= b || b + bytes_of(r, zero_even) <= a,
                  "%s: the memory of ranks %d and %d overlaps", what, q, r);
        }
        prev = r;
    }

    /* ---- load/store inside lock_all + MPI_Win_sync ---- */
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    size_t mywords = mybytes / sizeof(int64_t);
    for (size_t i = 0; i < mywords; ++i) mybase[i] = value(rank, rank, (int) i, 1);
    sync_all(win);
    for (int r = 0; r < size; ++r) {
        size_t n = bytes_of(r, zero_even) / sizeof(int64_t);
        for (size_t i = 0; i < n; ++i)
            CHECK(bases[r][i] == value(r, r, (int) i, 1), "%s: load of rank %d's word %lu is %lld, expected %lld",
                  what, r, (unsigned long) i, (long long) bases[r][i], (long long) value(r, r, (int) i, 1));
    }
    if (!noncontig && first_nonzero >= 0) {
        /* one array through the first pointer */
        int64_t *all = bases[first_nonzero];
        size_t at = 0;
        for (int r = 0; r < size; ++r)
            for (size_t i = 0; i < bytes_of(r, zero_even) / sizeof(int64_t); ++i, ++at)
                CHECK(all[at] == value(r, r, (int) i, 1), "%s: word %lu of the whole window is %lld, expected %lld",
                      what, (unsigned long) at, (long long) all[at], (long long) value(r, r, (int) i, 1));
    }
    sync_all(win);     /* everyone read before anyone writes again */

    /* stores into the next rank with memory (after me, cyclically), seen
     * through that rank's own base: a writer at distance k behind the owner
     * writes the owner's word n-k, so no two writers share a word */
    int k_next = 0;
    int next = next_with_memory(rank, size, zero_even, &k_next);
    if (next >= 0) {
        size_t n = bytes_of(next, zero_even) / sizeof(int64_t);
        if ((size_t) k_next <= n) bases[next][n - (size_t) k_next] = value(rank, next, k_next, 2);
    }
    sync_all(win);
    for (int k = 1; k <= size && mywords > 0; ++k) {
        int w = (rank + size - k) % size, kw = 0;
        if (next_with_memory(w, size, zero_even, &kw) != rank || kw != k || (size_t) k > mywords) continue;
        CHECK(mybase[mywords - (size_t) k] == value(w, rank, k, 2),
              "%s: word %lu stored by rank %d is %lld, expected %lld", what, (unsigned long) (mywords - (size_t) k), w,
              (long long) mybase[mywords - (size_t) k], (long long) value(w, rank, k, 2));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- fences around stores; puts that use the target's disp_unit ---- */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (size_t i = 0; i < mywords; ++i) mybase[i] = value(rank, rank, (int) i, 3);
    MPI_OK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; ++r) {
        size_t n = bytes_of(r, zero_even) / sizeof(int64_t);
        for (size_t i = 0; i < n; ++i)
            CHECK(bases[r][i] == value(r, r, (int) i, 3), "%s: after fence, rank %d's word %lu is %lld, expected %lld",
                  what, r, (unsigned long) i, (long long) bases[r][i], (long long) value(r, r, (int) i, 3));
    }
    MPI_OK(MPI_Win_fence(0, win));
    /* the same words as above, now by MPI_Put at disp (n-k)*8/disp_unit */
    if (next >= 0) {
        size_t n = bytes_of(next, zero_even) / sizeof(int64_t);
        int64_t v = value(rank, next, k_next, 4);
        int du = disp_units[next % 4];
        if ((size_t) k_next <= n)
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, next, (MPI_Aint) ((n - (size_t) k_next) * 8 / (size_t) du), 1,
                           MPI_INT64_T, win));
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (size_t i = 0; i < mywords; ++i) {
        int64_t expect = value(rank, rank, (int) i, 3);
        int k = (int) (mywords - i), w = (rank + size - k) % size, kw = 0;
        if (k <= size && next_with_memory(w, size, zero_even, &kw) == rank && kw == k) expect = value(w, rank, k, 4);
        CHECK(mybase[i] == expect, "%s: after puts (my disp_unit %d), word %lu is %lld, expected %lld", what,
              disp_units[rank % 4], (unsigned long) i, (long long) mybase[i], (long long) expect);
    }

    MPI_OK(MPI_Win_free(&win));
    free(bases);
}

/* All ranks of size 0. */
static void all_empty(void)
{
    MPI_Win win;
    int64_t *base = NULL, *qbase = NULL;
    MPI_Aint qsize = -1;
    int qdisp = -1;
    MPI_OK(MPI_Win_allocate_shared(0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qdisp, &qbase));
    CHECK(0 == qsize, "all empty: query(MPI_PROC_NULL) size is %ld", (long) qsize);
    MPI_OK(MPI_Win_shared_query(win, 0, &qsize, &qdisp, &qbase));
    CHECK(0 == qsize && 8 == qdisp, "all empty: query(0) gave size %ld disp_unit %d", (long) qsize, qdisp);
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int noncontig = 0; noncontig < 2; ++noncontig)
        for (int zero_even = 0; zero_even < 2; ++zero_even) run(noncontig, zero_even);
    all_empty();
    return test_finalize("shared_query");
}
