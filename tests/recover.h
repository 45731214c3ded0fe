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
 * Exact recovery from a single copy that fails part-way (docs/errors.md,
 * "Failure points"): the body of the tests recover_*.c, each of which arms
 * one failure point with osc_newrma_fail_at and says which operation comes
 * first (RECOVER_FIRST: the one the failure lands in).
 *
 * Rank 0 is the target; every other rank in turn is the origin while the
 * others, rank 0 included, wait in MPI_Barrier (so rank 0 joins its shared
 * copies and accumulates from progress).  Each origin repeats its
 * operation -- a large MPI_Put then MPI_Get back (RECOVER_MOVES), or
 * MPI_Accumulate and MPI_Get_accumulate of int64 sums -- until the target
 * has taken part twice (or 16 tries, and 2 s where assistance is
 * expected; origins past the third try once: the failure lands in the
 * first ones, and many ranks on few cores would take long).  Accumulates
 * span several chunks of several 256 KiB pieces each, so that a failure
 * can land after a piece already reduced.  Checked exactly: every put's
 * bytes, every get's, every element's sum at the end (no element reduced twice or
 * lost), every old value a get_accumulate returns.  Where target
 * assistance is expected (a core per rank), rank 0 must have had its
 * failure injected, else the test did not test the point.
 */
#include "common.h"

#include <time.h>

#define ACC_BYTES (10 * 1024 * 1024 + 3 * 4096)   /* 4 chunks of 10 pieces and a short one */
#define ACC_N (ACC_BYTES / 8)
#define MOVE_BYTES (3 * 1024 * 1024 + 1000)
#define SKEW 8                                     /* element-aligned, not page-aligned */
#define SPAN (ACC_BYTES + 64)
#define TRIES 16
#define RETRY_S 2.0

enum { RECOVER_ACC, RECOVER_GET_ACC, RECOVER_MOVES };

static int64_t acc_value(int origin, size_t i)
{
    return (int64_t) origin * 1000 + (int64_t) (i % 1013) - 500;
}

/* rank 0's element i after origin o added its values times[o] times */
static int64_t acc_expected(const int *times, int size, size_t i)
{
    int64_t want = 0;
    for (int o = 1 ; o < size ; ++o) want += times[o] * acc_value(o, i);
    return want;
}

static void check_elements(const int64_t *got, const int *times, int size, const char *what, const char *flavor)
{
    for (size_t i = 0 ; i < ACC_N ; ++i) {
        if (got[i] != acc_expected(times, size, i)) {
            CHECK(0, "%s: %s: element %zu is %lld, expected %lld", flavor, what, i, (long long) got[i],
                  (long long) acc_expected(times, size, i));
            return;
        }
    }
}

/* Whether the window can share copies at all (the single-copy path, not
 * active messages): if not, each origin does each operation once.  And
 * whether target assistance is expected (test_assist_expected): only then
 * does the run fail without an injected failure, so only then do origins
 * go on past TRIES for RETRY_S (with more ranks than cores a target off its
 * core for whole time slices may join none, and the time buys nothing
 * checked). */
static int recover_sharing, recover_expected;

/* Go on while the target has taken part fewer than twice, at least once
 * more within TRIES, then while RETRY_S lasts where assistance is expected;
 * origins past the third once. */
static int keep_trying(int o, int tries, int shared, double start)
{
    if (!recover_sharing || o > 3) return 0 == tries;
    return shared < 2 && (tries < TRIES || (recover_expected && test_now_s() - start < RETRY_S));
}

/* Origin `o`'s turn at accumulating (get_accumulate: checking each old
 * value); every rank's times[o] updated after it. */
static void acc_turn(test_win_t *tw, int o, int get, int *times, int size, test_pvar_t *shared_pv,
                     const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, SKEW, 1);

    if (o == test_rank) {
        int64_t *mine = malloc(ACC_BYTES), *old = get ? malloc(ACC_BYTES) : NULL;
        unsigned long long last = test_pvar_read(shared_pv);
        int shared = 0, tries = 0;
        double start = test_now_s();

        for (size_t i = 0 ; i < ACC_N ; ++i) mine[i] = acc_value(o, i);
        for (tries = 0 ; keep_trying(o, tries, shared, start) ; ++tries) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            if (get) {
                memset(old, 0x5a, ACC_BYTES);
                MPI_OK(MPI_Get_accumulate(mine, ACC_N, MPI_INT64_T, old, ACC_N, MPI_INT64_T, 0, disp, ACC_N,
                                          MPI_INT64_T, MPI_SUM, tw->win));
            } else {
                MPI_OK(MPI_Accumulate(mine, ACC_N, MPI_INT64_T, 0, disp, ACC_N, MPI_INT64_T, MPI_SUM, tw->win));
            }
            MPI_OK(MPI_Win_unlock(0, tw->win));
            if (get) check_elements(old, times, size, "get_accumulate's old values", flavor);
            times[o]++;
            shared += test_pvar_read(shared_pv) > last;
            last = test_pvar_read(shared_pv);
        }
        free(mine);
        free(old);
    }
    MPI_Bcast(&times[o], 1, MPI_INT, o, MPI_COMM_WORLD);
}

static unsigned char pattern(int who, int round, size_t i)
{
    return (unsigned char) (who * 31 + round * 7 + i * 13 + (i >> 12));
}

static void check_bytes(const unsigned char *got, int who, int round, const char *what, const char *flavor)
{
    for (size_t i = 0 ; i < MOVE_BYTES ; ++i) {
        if (got[i] != pattern(who, round, i)) {
            CHECK(0, "%s: %s round %d: byte %zu is %d, expected %d", flavor, what, round, i, got[i],
                  pattern(who, round, i));
            return;
        }
    }
}

/* Origin `o`'s turn at moving: a put checked by rank 0, then a get of what
 * rank 0 wrote meanwhile, checked by the origin, until shared twice. */
static void move_turn(test_win_t *tw, int o, test_pvar_t *shared_pv, const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, SKEW, 1);
    unsigned char *landing = (unsigned char *) tw->mem + SKEW, *buf = malloc(MOVE_BYTES);
    unsigned long long last = test_pvar_read(shared_pv);
    int go = 1, shared = 0;
    double start = test_now_s();

    for (int round = 0 ; go ; ++round) {
        if (o == test_rank) {
            for (size_t i = 0 ; i < MOVE_BYTES ; ++i) buf[i] = pattern(o, round, i);
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
            MPI_OK(MPI_Put(buf, MOVE_BYTES, MPI_BYTE, 0, disp, MOVE_BYTES, MPI_BYTE, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (0 == test_rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
            check_bytes(landing, o, round, "put", flavor);
            for (size_t i = 0 ; i < MOVE_BYTES ; ++i) landing[i] = pattern(0, round, i);
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (o == test_rank) {
            memset(buf, 0, MOVE_BYTES);
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            MPI_OK(MPI_Get(buf, MOVE_BYTES, MPI_BYTE, 0, disp, MOVE_BYTES, MPI_BYTE, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            check_bytes(buf, 0, round, "get", flavor);
            shared += test_pvar_read(shared_pv) > last;
            last = test_pvar_read(shared_pv);
            go = keep_trying(o, round + 1, shared, start);
        }
        MPI_Bcast(&go, 1, MPI_INT, o, MPI_COMM_WORLD);
    }
    free(buf);
}

/* Every origin's turn at `kind`; accumulates checked at rank 0 at the end. */
static void phase(test_win_t *tw, int kind, int *times, int size, test_pvar_t *shared_pv, const char *flavor)
{
    for (int o = 1 ; o < size ; ++o) {
        if (RECOVER_MOVES == kind) {
            move_turn(tw, o, shared_pv, flavor);
        } else {
            acc_turn(tw, o, RECOVER_GET_ACC == kind, times, size, shared_pv, flavor);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (RECOVER_MOVES != kind && 0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        check_elements((const int64_t *) ((char *) tw->mem + SKEW), times, size, "sums", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run(int flavor, int size, int expected)
{
    const char *name = flavor_names[flavor];
    int *times = calloc((size_t) size, sizeof(int));
    unsigned long long injected;
    test_pvar_t shared_pv, injected_pv;
    test_win_t tw;

    recover_sharing = !test_am_path(flavor);
    recover_expected = expected;
    test_win_create(&tw, flavor, SPAN, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    test_pvar_open(&shared_pv, "osc_newrma_shared_copy_bytes");
    test_pvar_open(&injected_pv, "osc_newrma_fail_injected");
    injected = test_pvar_read(&injected_pv);
    /* the operation the failure lands in first, then the others unfailed */
    phase(&tw, RECOVER_FIRST, times, size, &shared_pv, name);
    if (RECOVER_MOVES != RECOVER_FIRST) {
        phase(&tw, RECOVER_ACC == RECOVER_FIRST ? RECOVER_GET_ACC : RECOVER_ACC, times, size, &shared_pv, name);
    }
    /* only rank 0 serves requests: the failures at the target */
    injected = test_pvar_close_total(&injected_pv, injected);
    if (0 == test_rank) printf("%s: %s: failures injected at the target: %llu\n", name, RECOVER_NAME, injected);
    /* one window of the two flavors gets the failure (a count per process) */
    CHECK(!expected || FLAVOR_DYNAMIC == flavor || injected > 0,
          "%s: no failure was injected at the target: the point was not tested", name);
    test_pvar_close(&shared_pv);
    test_win_free(&tw);
    free(times);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, RECOVER_NAME, run);
}
