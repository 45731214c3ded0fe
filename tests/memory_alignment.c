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
 * The info key mpi_minimum_memory_alignment on MPI_Win_allocate and
 * MPI_Win_allocate_shared (with and without alloc_shared_noncontig):
 *  - 8, 256, 4096 (a page here) and 65536 (more than a page: the segment's
 *    mapping itself must be moved onto it): the base every rank gets is a
 *    multiple of the value, or of newrma's own alignment (a cache line, 64
 *    or more: what MPI_Win_get_info reports for a window without the key)
 *    when that is more; in a contiguous
 *    allocate_shared window the array's start is (rank 0's base: the ranks
 *    after it start where the previous one ends, sizes here are 8-byte
 *    multiples, so the query must show them packed);
 *  - a different value on each rank: every rank's base has its own;
 *  - values newrma ignores ("abc", "0", "100", "-4096", "4096x"): the
 *    component's own alignment;
 *  - MPI_Win_get_info reports the alignment in effect;
 *  - every window works (a put and a get to the right neighbour).
 * Runs on every path: the node segment, the active-message path's node
 * route (spanning nodes, real or pretended) and its own memory (forced
 * remote), one process's private memory.
 *
 * newrma-test: only-newrma np>=1
 * (other components ignore the key on 4.1, or honor it on one process only)
 */
#include "common.h"

static int rank, size;
static size_t line;

enum { ALLOCATE, SHARED, SHARED_NONCONTIG, KINDS };
static const char *const kind_names[KINDS] = { "allocate", "shared", "shared noncontig" };

static MPI_Aint bytes_of(int r) { return 8 * (6 + r); }

/* What newrma must honor of `value`: a power of two above its own
 * alignment, else its own. */
static size_t expected_alignment(const char *value)
{
    char *end = NULL;
    long long v = NULL == value ? 0 : strtoll(value, &end, 10);
    if (NULL == value || end == value || '\0' != *end || v <= 0 || 0 != (v & (v - 1)) || (size_t) v <= line)
        return line;
    return (size_t) v;
}

static void check_reported(MPI_Win win, size_t expect, const char *what)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Win_get_info(win, &info));
    MPI_OK(MPI_Info_get(info, "mpi_minimum_memory_alignment", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strtoull(value, NULL, 10) == expect, "%s: get_info reports %s, expected %zu", what,
          flag ? value : "nothing", expect);
    MPI_Info_free(&info);
}

/* The alignment newrma reports for a window without the key. */
static size_t own_alignment(void)
{
    MPI_Win win;
    MPI_Info info;
    char *base, value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_get_info(win, &info));
    MPI_OK(MPI_Info_get(info, "mpi_minimum_memory_alignment", MPI_MAX_INFO_VAL, value, &flag));
    MPI_Info_free(&info);
    MPI_OK(MPI_Win_free(&win));
    return flag ? (size_t) strtoull(value, NULL, 10) : 0;
}

/* A window of `kind` with `value` (NULL: no key) on this rank. */
static void one_window(int kind, const char *value)
{
    MPI_Info info;
    MPI_Win win;
    char *base = NULL, what[96];
    size_t expect = expected_alignment(value);

    snprintf(what, sizeof(what), "%s, rank %d asked %s", kind_names[kind], rank, NULL == value ? "nothing" : value);
    MPI_Info_create(&info);
    if (NULL != value) MPI_Info_set(info, "mpi_minimum_memory_alignment", value);
    if (SHARED_NONCONTIG == kind) MPI_Info_set(info, "alloc_shared_noncontig", "true");
    if (ALLOCATE == kind)
        MPI_OK(MPI_Win_allocate(bytes_of(rank), 8, info, MPI_COMM_WORLD, &base, &win));
    else
        MPI_OK(MPI_Win_allocate_shared(bytes_of(rank), 8, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    if (SHARED == kind) {
        /* the array's start, and packed ranks after it */
        MPI_Aint qsize;
        int qdisp;
        char *first = NULL;
        MPI_OK(MPI_Win_shared_query(win, 0, &qsize, &qdisp, &first));
        CHECK(0 == (uintptr_t) first % expect, "%s: the array starts at %p", what, (void *) first);
        char *expected_base = first;
        for (int r = 0; r < rank; ++r) expected_base += bytes_of(r);
        CHECK(base == expected_base, "%s: base %p, expected %p (packed after rank 0's %p)", what, (void *) base,
              (void *) expected_base, (void *) first);
    } else {
        CHECK(0 == (uintptr_t) base % expect, "%s: base %p is not aligned to %zu", what, (void *) base, expect);
    }
    check_reported(win, expect, what);
    test_window_goes_on(win, rank, size);
}

int main(int argc, char **argv)
{
    static const char *const values[] = { NULL, "8", "256", "4096", "65536", "abc", "0", "100", "-4096", "4096x" };
    char mine[24];

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    line = own_alignment();
    CHECK(line >= 64 && 0 == (line & (line - 1)), "newrma's own alignment is %zu", line);
    if (line < 64 || 0 != (line & (line - 1))) line = 64;   /* the checks below still run */
    /* a different value on each rank: 512, 1024, 2048, ... (65536 at most) */
    snprintf(mine, sizeof(mine), "%d", 512 << (rank % 8));
    for (int kind = 0; kind < KINDS; ++kind) {
        /* allocate_shared cannot span nodes (tests/shared_spans_nodes.sh) */
        if (ALLOCATE != kind && test_world_spans_nodes()) continue;
        for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); ++v) one_window(kind, values[v]);
        one_window(kind, mine);
    }
    return test_finalize("memory_alignment");
}
