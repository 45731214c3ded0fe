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
 * MPI_SUM accumulates of 1 to 12 elements (newrma adds up to 8 elements of
 * int64, uint32 and double in line, longer runs go to Open MPI's loops) on
 * every flavor, at an aligned and at an odd byte offset (disp_unit 1), with
 * MPI_Accumulate and MPI_Get_accumulate: every rank adds to every target,
 * element k of count n gets a value of its own, so a skipped, repeated or
 * shifted element shows in the exact sums; get_accumulate's old values are
 * checked against what the target held before (one origin at a time, in
 * rank order, so the old values are known).  uint32 sums wrap.
 */
#include "common.h"

#define MAXN 12
#define REGION 128                   /* bytes per (type, count, alignment) region */
#define NTYPES 3
#define WIN_BYTES (NTYPES * MAXN * 2 * REGION)

static int rank, size;

static const char *const type_names[NTYPES] = { "int64", "uint32", "double" };

static MPI_Datatype mpi_type(int t) { return 0 == t ? MPI_INT64_T : 1 == t ? MPI_UINT32_T : MPI_DOUBLE; }
static size_t type_bytes(int t) { return 1 == t ? 4 : 8; }

/* byte offset of the region for (type t, count n, misaligned m) */
static MPI_Aint region(int t, int n, int m) { return (((MPI_Aint) t * MAXN + (n - 1)) * 2 + m) * REGION + m; }

/* what origin o adds to element k (uint32: large, so that sums wrap) */
static void contribution(int t, int o, int k, void *out)
{
    if (0 == t) { int64_t v = ((int64_t) o + 1) * 1000003 + k * 7 - ((int64_t) 1 << 40); memcpy(out, &v, 8); }
    else if (1 == t) { uint32_t v = 0xF0000000u + (uint32_t) o * 77 + (uint32_t) k; memcpy(out, &v, 4); }
    else { double v = (o + 1) * 0.25 + k * 0.5; memcpy(out, &v, 8); }
}

/* the sum of contributions of origins 0 .. upto-1 to element k */
static void expected_sum(int t, int upto, int k, void *out)
{
    int64_t si = 0; uint32_t su = 0; double sd = 0.0;
    for (int o = 0; o < upto; ++o) {
        char c[8];
        contribution(t, o, k, c);
        if (0 == t) { int64_t v; memcpy(&v, c, 8); si += v; }
        else if (1 == t) { uint32_t v; memcpy(&v, c, 4); su += v; }
        else { double v; memcpy(&v, c, 8); sd += v; }
    }
    if (0 == t) memcpy(out, &si, 8);
    else if (1 == t) memcpy(out, &su, 4);
    else memcpy(out, &sd, 8);
}

static void run(int flavor, int use_gacc)
{
    const char *fl = flavor_names[flavor], *call = use_gacc ? "get_accumulate" : "accumulate";
    test_win_t tw;
    char origin[MAXN * 8], result[MAXN * 8], want[8];

    test_win_create(&tw, flavor, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    /* one origin at a time, in rank order: the old values are the sums of the ranks before */
    for (int o = 0; o < size; ++o) {
        if (o == rank) {
            MPI_OK(MPI_Win_lock_all(0, tw.win));
            for (int target = 0; target < size; ++target)
                for (int t = 0; t < NTYPES; ++t)
                    for (int n = 1; n <= MAXN; ++n)
                        for (int m = 0; m < 2; ++m) {
                            MPI_Aint disp = test_disp(&tw, target, region(t, n, m), 1);
                            for (int k = 0; k < n; ++k) contribution(t, rank, k, origin + k * type_bytes(t));
                            memset(result, 0x5a, sizeof(result));
                            if (use_gacc) {
                                MPI_OK(MPI_Get_accumulate(origin, n, mpi_type(t), result, n, mpi_type(t), target,
                                                          disp, n, mpi_type(t), MPI_SUM, tw.win));
                                MPI_OK(MPI_Win_flush(target, tw.win));
                                for (int k = 0; k < n; ++k) {
                                    expected_sum(t, rank, k, want);
                                    CHECK(0 == memcmp(result + k * type_bytes(t), want, type_bytes(t)),
                                          "%s %s: %s n=%d %s element %d at rank %d: wrong old value", fl, call,
                                          type_names[t], n, m ? "misaligned" : "aligned", k, target);
                                }
                            } else {
                                MPI_OK(MPI_Accumulate(origin, n, mpi_type(t), target, disp, n, mpi_type(t), MPI_SUM,
                                                      tw.win));
                            }
                        }
            MPI_OK(MPI_Win_unlock_all(tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    for (int t = 0; t < NTYPES; ++t)
        for (int n = 1; n <= MAXN; ++n)
            for (int m = 0; m < 2; ++m) {
                const char *mem = (const char *) tw.mem + region(t, n, m);
                for (int k = 0; k < n; ++k) {
                    expected_sum(t, size, k, want);
                    CHECK(0 == memcmp(mem + k * type_bytes(t), want, type_bytes(t)),
                          "%s %s: %s n=%d %s element %d: wrong sum", fl, call, type_names[t], n,
                          m ? "misaligned" : "aligned", k);
                }
                /* the byte after the last element is never written */
                CHECK(0 == mem[n * type_bytes(t)], "%s %s: %s n=%d %s: byte after the elements written", fl, call,
                      type_names[t], n, m ? "misaligned" : "aligned");
            }
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        run(flavor, 0);
        run(flavor, 1);
    }
    return test_finalize("acc_small_sums");
}
