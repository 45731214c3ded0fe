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
 * Accumulate family, first look: every rank accumulates into every target
 * (MPI_SUM on int64 and double, MPI_MAX, MPI_REPLACE), fetch_and_op counters,
 * compare_and_swap election, get_accumulate of a vector into a contiguous
 * result, on every flavor under lock_all and fence.  Exact values.
 */
#include "common.h"

#define N 16

static void run(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_win_t tw;
    test_win_create(&tw, flavor, 4 * N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    int64_t *m = tw.mem;            /* [0,N): int64 sums  [N,2N): double sums  [2N,3N): max  [3N]: fao  [3N+1]: cas */
    const char *fl = flavor_names[flavor];
    int64_t ones[N]; double halves[N]; int64_t ranks[N];
    for (int i = 0; i < N; ++i) { ones[i] = i + 1; halves[i] = 0.5 * (i + 1); ranks[i] = rank * 100 + i; }

    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int t = 0; t < size; ++t) {
        MPI_OK(MPI_Accumulate(ones, N, MPI_INT64_T, t, test_disp(&tw, t, 0, 8), N, MPI_INT64_T, MPI_SUM, tw.win));
        MPI_OK(MPI_Accumulate(halves, N, MPI_DOUBLE, t, test_disp(&tw, t, N, 8), N, MPI_DOUBLE, MPI_SUM, tw.win));
        MPI_OK(MPI_Accumulate(ranks, N, MPI_INT64_T, t, test_disp(&tw, t, 2 * N, 8), N, MPI_INT64_T, MPI_MAX, tw.win));
        int64_t one = 1, prev = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &prev, MPI_INT64_T, t, test_disp(&tw, t, 3 * N, 8), MPI_SUM, tw.win));
        MPI_OK(MPI_Win_flush(t, tw.win));
        CHECK(prev >= 0 && prev < size, "%s: fetch_and_op returned %lld", fl, (long long) prev);
        int64_t me = rank + 1, zero = 0, old = -1;
        MPI_OK(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT64_T, t, test_disp(&tw, t, 3 * N + 1, 8), tw.win));
        MPI_OK(MPI_Win_flush(t, tw.win));
        CHECK(old >= 0 && old <= size, "%s: compare_and_swap returned %lld", fl, (long long) old);
    }
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    for (int i = 0; i < N; ++i) {
        CHECK(m[i] == (int64_t) size * (i + 1), "%s: int sum %d = %lld", fl, i, (long long) m[i]);
        double d; memcpy(&d, &m[N + i], 8);
        CHECK(d == 0.5 * (i + 1) * size, "%s: double sum %d = %g", fl, i, d);
        CHECK(m[2 * N + i] == (size - 1) * 100 + i, "%s: max %d = %lld", fl, i, (long long) m[2 * N + i]);
    }
    CHECK(m[3 * N] == size, "%s: fetch_and_op total %lld", fl, (long long) m[3 * N]);
    CHECK(m[3 * N + 1] >= 1 && m[3 * N + 1] <= size, "%s: cas winner %lld", fl, (long long) m[3 * N + 1]);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* get_accumulate: vector of every other int64 at the target into a contiguous result, under fence */
    MPI_Datatype every_other;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT64_T, &every_other);
    MPI_Type_commit(&every_other);
    int64_t add[N / 2], result[N / 2];
    for (int i = 0; i < N / 2; ++i) add[i] = 1000;
    int right = (rank + 1) % size;
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Get_accumulate(add, N / 2, MPI_INT64_T, result, N / 2, MPI_INT64_T, right,
                              test_disp(&tw, right, 0, 8), 1, every_other, MPI_SUM, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    for (int i = 0; i < N / 2; ++i) {
        CHECK(result[i] == (int64_t) size * (2 * i + 1), "%s: get_accumulate old %d = %lld", fl, i, (long long) result[i]);
        CHECK(m[2 * i] == (int64_t) size * (2 * i + 1) + 1000, "%s: after get_accumulate %d = %lld", fl, 2 * i,
              (long long) m[2 * i]);
        CHECK(m[2 * i + 1] == (int64_t) size * (2 * i + 2), "%s: untouched %d = %lld", fl, 2 * i + 1,
              (long long) m[2 * i + 1]);
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    MPI_Type_free(&every_other);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("acc_smoke");
}
