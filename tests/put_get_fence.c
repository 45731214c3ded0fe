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
 * MPI_Put and MPI_Get of contiguous data under MPI_Win_fence, every window
 * flavor, on MPI_COMM_WORLD.  Each rank puts a pattern into its right
 * neighbour's window, then gets its left neighbour's window back.
 */
#include "common.h"

#define N 1000

static int64_t pattern(int writer, int i) { return (int64_t) writer * 1000003 + i * 7 + 1; }

static void run(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    test_win_t tw;
    int64_t src[N], dst[N];

    test_win_create(&tw, flavor, N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    int64_t *mine = tw.mem;
    for (int i = 0; i < N; ++i) src[i] = pattern(rank, i);

    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw.win));
    MPI_OK(MPI_Put(src, N, MPI_INT64_T, right, test_disp(&tw, right, 0, sizeof(int64_t)), N, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    for (int i = 0; i < N; ++i)
        CHECK(mine[i] == pattern(left, i), "%s: put: element %d is %lld, expected %lld", flavor_names[flavor],
              i, (long long) mine[i], (long long) pattern(left, i));

    /* a get of the left neighbour's window sees what its left neighbour put */
    memset(dst, 0, sizeof(dst));
    MPI_OK(MPI_Get(dst, N, MPI_INT64_T, left, test_disp(&tw, left, 0, sizeof(int64_t)), N, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    int leftleft = (left + size - 1) % size;
    for (int i = 0; i < N; ++i)
        CHECK(dst[i] == pattern(leftleft, i), "%s: get: element %d is %lld, expected %lld", flavor_names[flavor],
              i, (long long) dst[i], (long long) pattern(leftleft, i));

    /* partial put at an offset, and a zero-count put, in one epoch */
    int64_t one = -42;
    MPI_OK(MPI_Put(&one, 1, MPI_INT64_T, right, test_disp(&tw, right, N - 1, sizeof(int64_t)), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Put(&one, 0, MPI_INT64_T, right, test_disp(&tw, right, 0, sizeof(int64_t)), 0, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    CHECK(mine[N - 1] == -42, "%s: last element is %lld", flavor_names[flavor], (long long) mine[N - 1]);
    CHECK(mine[0] == pattern(left, 0), "%s: zero-count put changed element 0", flavor_names[flavor]);

    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("put_get_fence");
}
