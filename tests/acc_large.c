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
 * Large accumulates, in pieces: every rank get_accumulates MPI_SUM over a
 * block of int64 elements that is not a whole number of the single-copy
 * path's 256 KiB chunks (3 chunks and 5 elements), to its right neighbour,
 * twice per epoch kind, into a contiguous result and into a strided one
 * (every other element of a bigger buffer); then MPI_NO_OP reads the block
 * back.  Every fetched old value and the final block are exact, so an
 * element combined twice, skipped, or fetched from the wrong chunk shows.
 * Every flavor (create and dynamic windows take the chunked single-copy
 * path on one node).  osc/sm with osc/ucx or osc/pt2pt passes; Open MPI
 * 4.1.4's osc/rdma returns wrong old values for the strided result.
 * newrma-test: np>=1
 */
#include "common.h"

#define BLOCK (3 * 262144 / 8 + 5)

static int rank, size;

/* the value rank o adds to element i in round k */
static int64_t addend(int o, int k, size_t i) { return (int64_t) (o + 1) * 1000003 * (k + 1) + (int64_t) i; }

/* element i of a block after rounds 0 .. k - 1 of its left neighbour o */
static int64_t after(int o, int k, size_t i)
{
    int64_t v = 0;
    for (int r = 0; r < k; ++r) v += addend(o, r, i);
    return v;
}

static void run(int flavor)
{
    const char *fl = flavor_names[flavor];
    int right = (rank + 1) % size;
    int64_t *add = malloc(BLOCK * sizeof(int64_t)), *old = malloc(2 * BLOCK * sizeof(int64_t));
    test_win_t tw;
    MPI_Datatype every_other;

    MPI_Type_vector(BLOCK, 1, 2, MPI_INT64_T, &every_other);
    MPI_Type_commit(&every_other);
    test_win_create(&tw, flavor, BLOCK * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    memset(tw.mem, 0, BLOCK * sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 4; ++k) {
        int strided = k % 2;
        for (size_t i = 0; i < BLOCK; ++i) add[i] = addend(rank, k, i);
        for (size_t i = 0; i < 2 * BLOCK; ++i) old[i] = -1;
        if (k < 2) MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw.win));
        else MPI_OK(MPI_Win_fence(0, tw.win));
        MPI_OK(MPI_Get_accumulate(add, BLOCK, MPI_INT64_T, old, strided ? 1 : BLOCK, strided ? every_other : MPI_INT64_T,
                                  right, test_disp(&tw, right, 0, 8), BLOCK, MPI_INT64_T, MPI_SUM, tw.win));
        if (k < 2) MPI_OK(MPI_Win_unlock(right, tw.win));
        else MPI_OK(MPI_Win_fence(0, tw.win));
        size_t wrong = 0, first = 0;
        for (size_t i = 0; i < BLOCK; ++i) {
            int64_t got = old[strided ? 2 * i : i];
            if (got != after(rank, k, i) && 0 == wrong++) first = i;
            if (strided) CHECK(-1 == old[2 * i + 1], "%s: round %d wrote the gap after element %zu", fl, k, i);
        }
        CHECK(0 == wrong, "%s: round %d: %zu old values wrong, first at %zu: %lld, expected %lld", fl, k, wrong, first,
              (long long) old[strided ? 2 * first : first], (long long) after(rank, k, first));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw.win));
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, old, BLOCK, MPI_INT64_T, right, test_disp(&tw, right, 0, 8), BLOCK,
                              MPI_INT64_T, MPI_NO_OP, tw.win));
    MPI_OK(MPI_Win_unlock(right, tw.win));
    size_t wrong = 0;
    for (size_t i = 0; i < BLOCK; ++i) wrong += old[i] != after(rank, 4, i);
    CHECK(0 == wrong, "%s: %zu elements of the final block wrong (read with MPI_NO_OP)", fl, wrong);
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
    MPI_Type_free(&every_other);
    free(add);
    free(old);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("acc_large");
}
