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
 * MPI_REPLACE and MPI_NO_OP, the two ops Open MPI gives no reduction
 * function (MPICH's fetch_and_op_*, mutex_bench*, linked_list*, flush,
 * reqops, acc_ordering, mixedsync, win_dynamic_rma_flush_get ... use them):
 *  - MPI_Fetch_and_op with MPI_REPLACE and with MPI_NO_OP, on int, short and
 *    double, succeeds, returns the previous value and (REPLACE) stores the
 *    new one;
 *  - MPI_Accumulate with MPI_REPLACE, and MPI_Get_accumulate with MPI_REPLACE
 *    and MPI_NO_OP, of several elements of int, short and double;
 * on every flavor (allocate windows combine in place, create and dynamic
 * windows read, combine and write back by single copy), to every target including self, under
 * lock_all and under fence.  Each origin owns its region of every target's
 * window, so every value is exact.
 */
#include "common.h"

#define N 4
/* one origin's region of a target's window, in bytes (disp_unit 1) */
#define FOP_INT    0    /* int     */
#define FOP_SHORT  4    /* short   */
#define FOP_DOUBLE 8    /* double  */
#define ACC_INT    16   /* int[N]  */
#define ACC_SHORT  32   /* short[N] */
#define ACC_DOUBLE 40   /* double[N] */
#define REGION     72

static int ival(int origin, int target, int i, int round) { return 1000000 * round + 1000 * origin + 10 * target + i + 1; }
static short sval(int origin, int target, int i, int round) { return (short) (1000 * round + 100 * origin + 10 * target + i + 1); }
static double dval(int origin, int target, int i, int round) { return 0.5 + ival(origin, target, i, round); }

static int sync_begin(int use_fence, MPI_Win win) { return use_fence ? MPI_Win_fence(0, win) : MPI_Win_lock_all(0, win); }
static int sync_end(int use_fence, MPI_Win win) { return use_fence ? MPI_Win_fence(0, win) : MPI_Win_unlock_all(win); }

static void run(int flavor, int use_fence)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fl = flavor_names[flavor];
    const char *sy = use_fence ? "fence" : "lock_all";
    test_win_t tw;
    test_win_create(&tw, flavor, (size_t) size * REGION, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    char *mine = tw.mem;

    /* round 1: fetch_and_op REPLACE (old: zeros), accumulate REPLACE */
    MPI_OK(sync_begin(use_fence, tw.win));
    int iold[N], inew[N];
    short sold[N], snew[N];
    double dold[N], dnew[N];
    int ifop_old[64];
    short sfop_old[64];
    double dfop_old[64];
    for (int t = 0; t < size; ++t) {
        MPI_Aint base = test_disp(&tw, t, (MPI_Aint) rank * REGION, 1);
        int iv = ival(rank, t, 0, 1);
        short sv = sval(rank, t, 0, 1);
        double dv = dval(rank, t, 0, 1);
        ifop_old[t] = -1; sfop_old[t] = -1; dfop_old[t] = -1;
        MPI_OK(MPI_Fetch_and_op(&iv, &ifop_old[t], MPI_INT, t, base + FOP_INT, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Fetch_and_op(&sv, &sfop_old[t], MPI_SHORT, t, base + FOP_SHORT, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Fetch_and_op(&dv, &dfop_old[t], MPI_DOUBLE, t, base + FOP_DOUBLE, MPI_REPLACE, tw.win));
        for (int i = 0; i < N; ++i) {
            inew[i] = ival(rank, t, i, 1); snew[i] = sval(rank, t, i, 1); dnew[i] = dval(rank, t, i, 1);
        }
        /* the origin buffers are reused: the operations must be complete */
        MPI_OK(MPI_Accumulate(inew, N, MPI_INT, t, base + ACC_INT, N, MPI_INT, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Accumulate(snew, N, MPI_SHORT, t, base + ACC_SHORT, N, MPI_SHORT, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Accumulate(dnew, N, MPI_DOUBLE, t, base + ACC_DOUBLE, N, MPI_DOUBLE, MPI_REPLACE, tw.win));
        if (!use_fence) MPI_OK(MPI_Win_flush(t, tw.win));
    }
    MPI_OK(sync_end(use_fence, tw.win));
    for (int t = 0; t < size; ++t) {
        CHECK(0 == ifop_old[t], "%s/%s: fetch_and_op(REPLACE, MPI_INT) to %d returned %d, expected 0", fl, sy, t, ifop_old[t]);
        CHECK(0 == sfop_old[t], "%s/%s: fetch_and_op(REPLACE, MPI_SHORT) to %d returned %d, expected 0", fl, sy, t, sfop_old[t]);
        CHECK(0 == dfop_old[t], "%s/%s: fetch_and_op(REPLACE, MPI_DOUBLE) to %d returned %g, expected 0", fl, sy, t, dfop_old[t]);
    }

    /* round 2: fetch_and_op NO_OP reads round 1; get_accumulate REPLACE
     * returns round 1 and stores round 2; get_accumulate NO_OP reads round 2 */
    MPI_OK(sync_begin(use_fence, tw.win));
    for (int t = 0; t < size; ++t) {
        MPI_Aint base = test_disp(&tw, t, (MPI_Aint) rank * REGION, 1);
        int iv = -1; short sv = -1; double dv = -1;
        MPI_OK(MPI_Fetch_and_op(NULL, &iv, MPI_INT, t, base + FOP_INT, MPI_NO_OP, tw.win));
        MPI_OK(MPI_Fetch_and_op(NULL, &sv, MPI_SHORT, t, base + FOP_SHORT, MPI_NO_OP, tw.win));
        MPI_OK(MPI_Fetch_and_op(NULL, &dv, MPI_DOUBLE, t, base + FOP_DOUBLE, MPI_NO_OP, tw.win));
        for (int i = 0; i < N; ++i) {
            inew[i] = ival(rank, t, i, 2); snew[i] = sval(rank, t, i, 2); dnew[i] = dval(rank, t, i, 2);
            iold[i] = -1; sold[i] = -1; dold[i] = -1;
        }
        MPI_OK(MPI_Get_accumulate(inew, N, MPI_INT, iold, N, MPI_INT, t, base + ACC_INT, N, MPI_INT, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Get_accumulate(snew, N, MPI_SHORT, sold, N, MPI_SHORT, t, base + ACC_SHORT, N, MPI_SHORT, MPI_REPLACE,
                                  tw.win));
        MPI_OK(MPI_Get_accumulate(dnew, N, MPI_DOUBLE, dold, N, MPI_DOUBLE, t, base + ACC_DOUBLE, N, MPI_DOUBLE,
                                  MPI_REPLACE, tw.win));
        if (!use_fence) MPI_OK(MPI_Win_flush(t, tw.win));
        /* the values are checked after the epoch: under fence a result buffer is defined only then */
        if (use_fence) { MPI_OK(MPI_Win_fence(0, tw.win)); }
        CHECK(iv == ival(rank, t, 0, 1), "%s/%s: fetch_and_op(NO_OP, MPI_INT) from %d returned %d, expected %d", fl, sy, t,
              iv, ival(rank, t, 0, 1));
        CHECK(sv == sval(rank, t, 0, 1), "%s/%s: fetch_and_op(NO_OP, MPI_SHORT) from %d returned %d, expected %d", fl, sy,
              t, sv, sval(rank, t, 0, 1));
        CHECK(dv == dval(rank, t, 0, 1), "%s/%s: fetch_and_op(NO_OP, MPI_DOUBLE) from %d returned %g, expected %g", fl, sy,
              t, dv, dval(rank, t, 0, 1));
        for (int i = 0; i < N; ++i) {
            CHECK(iold[i] == ival(rank, t, i, 1), "%s/%s: get_accumulate(REPLACE, MPI_INT) from %d: old[%d] = %d, expected %d",
                  fl, sy, t, i, iold[i], ival(rank, t, i, 1));
            CHECK(sold[i] == sval(rank, t, i, 1), "%s/%s: get_accumulate(REPLACE, MPI_SHORT) from %d: old[%d] = %d, expected %d",
                  fl, sy, t, i, sold[i], sval(rank, t, i, 1));
            CHECK(dold[i] == dval(rank, t, i, 1), "%s/%s: get_accumulate(REPLACE, MPI_DOUBLE) from %d: old[%d] = %g, expected %g",
                  fl, sy, t, i, dold[i], dval(rank, t, i, 1));
            iold[i] = -1; sold[i] = -1; dold[i] = -1;
        }
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, iold, N, MPI_INT, t, base + ACC_INT, N, MPI_INT, MPI_NO_OP, tw.win));
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_SHORT, sold, N, MPI_SHORT, t, base + ACC_SHORT, N, MPI_SHORT, MPI_NO_OP,
                                  tw.win));
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, dold, N, MPI_DOUBLE, t, base + ACC_DOUBLE, N, MPI_DOUBLE,
                                  MPI_NO_OP, tw.win));
        if (use_fence) { MPI_OK(MPI_Win_fence(0, tw.win)); } else { MPI_OK(MPI_Win_flush(t, tw.win)); }
        for (int i = 0; i < N; ++i) {
            CHECK(iold[i] == ival(rank, t, i, 2), "%s/%s: get_accumulate(NO_OP, MPI_INT) from %d: [%d] = %d, expected %d",
                  fl, sy, t, i, iold[i], ival(rank, t, i, 2));
            CHECK(sold[i] == sval(rank, t, i, 2), "%s/%s: get_accumulate(NO_OP, MPI_SHORT) from %d: [%d] = %d, expected %d",
                  fl, sy, t, i, sold[i], sval(rank, t, i, 2));
            CHECK(dold[i] == dval(rank, t, i, 2), "%s/%s: get_accumulate(NO_OP, MPI_DOUBLE) from %d: [%d] = %g, expected %g",
                  fl, sy, t, i, dold[i], dval(rank, t, i, 2));
        }
    }
    MPI_OK(sync_end(use_fence, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* my window: every origin's region holds what it stored */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    for (int o = 0; o < size; ++o) {
        char *r = mine + (size_t) o * REGION;
        int iv; short sv; double dv;
        memcpy(&iv, r + FOP_INT, sizeof(iv));
        memcpy(&sv, r + FOP_SHORT, sizeof(sv));
        memcpy(&dv, r + FOP_DOUBLE, sizeof(dv));
        CHECK(iv == ival(o, rank, 0, 1), "%s/%s: my int from %d is %d, expected %d", fl, sy, o, iv, ival(o, rank, 0, 1));
        CHECK(sv == sval(o, rank, 0, 1), "%s/%s: my short from %d is %d, expected %d", fl, sy, o, sv, sval(o, rank, 0, 1));
        CHECK(dv == dval(o, rank, 0, 1), "%s/%s: my double from %d is %g, expected %g", fl, sy, o, dv, dval(o, rank, 0, 1));
        for (int i = 0; i < N; ++i) {
            memcpy(&iv, r + ACC_INT + i * sizeof(int), sizeof(iv));
            memcpy(&sv, r + ACC_SHORT + i * sizeof(short), sizeof(sv));
            memcpy(&dv, r + ACC_DOUBLE + i * sizeof(double), sizeof(dv));
            CHECK(iv == ival(o, rank, i, 2), "%s/%s: my int[%d] from %d is %d, expected %d", fl, sy, i, o, iv, ival(o, rank, i, 2));
            CHECK(sv == sval(o, rank, i, 2), "%s/%s: my short[%d] from %d is %d, expected %d", fl, sy, i, o, sv,
                  sval(o, rank, i, 2));
            CHECK(dv == dval(o, rank, i, 2), "%s/%s: my double[%d] from %d is %g, expected %g", fl, sy, i, o, dv,
                  dval(o, rank, i, 2));
        }
    }
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64) {
        if (0 == test_rank) printf("acc_replace_noop: at most 64 ranks\n");
        MPI_Finalize();
        return 1;
    }
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        run(flavor, 0);
        run(flavor, 1);
    }
    return test_finalize("acc_replace_noop");
}
