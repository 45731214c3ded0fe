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
 * The native route mixed with active messages on the same words
 * (osc_newrma_native_rma.h): every rank works on every rank's
 * MPI_Win_allocate window, itself included, with operations the native
 * route takes (contiguous puts and gets, single-element 4/8-byte integer
 * fetch_and_op, compare_and_swap, accumulate) and operations it leaves to
 * active messages (two-element and derived-type accumulates, strided puts),
 * on the same elements:
 *  - lock_all: K rounds of, per target: fetch_and_op(SUM 1) on A (int64),
 *    a two-element accumulate (SUM 1, 1) on A and B, an accumulate of one
 *    element through a derived type on A, fetch_and_op(SUM 1) on an int32
 *    I, and a compare-and-swap increment of C (read by
 *    fetch_and_op(NO_OP), swapped until it takes); then flush_all;
 *  - exclusive locks: K increments of D per target by get, flush, put
 *    (every other put strided: an active message);
 *  - fence: every rank puts its tag into its slot of every target, and a
 *    strided put of it into its second slot; checked by loads after the
 *    closing fence;
 *  - PSCW over everybody: the same with tags of a second round, read back
 *    by gets;
 *  - a region of R words under lock_all: per target, R_ROUNDS times an
 *    accumulate of 1 into all R words (one active message, whose handler
 *    takes a while over them) and R_FOPS fetch_and_ops of 1 into words
 *    spread over the region (native): lost updates show when the handler's
 *    combine is not atomic with the origins' atomics.
 * Exact results: A = 3 K size, B = I = C = D = K size, every slot its
 * tag, the region's sum size x R_ROUNDS x (R + R_FOPS).  A handler that applied the two-element or derived accumulate
 * without the CPU's atomics, or a lock word that did not exclude, loses
 * increments.  MPI_T: osc_newrma_route_native_ops plus
 * osc_newrma_route_am_ops count every operation; with
 * osc_newrma_force_remote over UCX shared memory both routes are taken,
 * over TCP no operation is native.
 *
 * newrma-test: np>=2
 */
#include "common.h"
#include "native_routes.h"

#include <string.h>

#define K 25
#define W_A 0
#define W_B 1
#define W_C 2
#define W_D 3
#define W_I 4                 /* an int32 in the word's first half */
#define W_SLOT 5              /* [size] fence and PSCW tags */
#define W_SLOT2(size) (W_SLOT + (size))          /* [size] strided copies */
#define W_R(size) (W_SLOT2(size) + (size))       /* [R] the contended region */
#define W_WORDS(size) (W_R(size) + R)
#define R 512                 /* words of the region */
#define R_ROUNDS 120          /* region accumulates per rank and target */
#define R_FOPS 32             /* native increments into the region per accumulate */

static int rank, size;
static unsigned long long ops;          /* operations this rank issued */
static MPI_Datatype one_of_two;         /* the first int64 of two: a strided target */
static MPI_Datatype wrapped;            /* one int64 in a derived type */

static int64_t tag(int origin, int round) { return 100000 * (int64_t) (round + 1) + origin; }

static void cas_increment(MPI_Win win, int target)
{
    int64_t seen, swapped, next, zero = 0;

    MPI_OK(MPI_Fetch_and_op(&zero, &seen, MPI_INT64_T, target, W_C, MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(target, win));
    ops++;
    for (;;) {
        next = seen + 1;
        MPI_OK(MPI_Compare_and_swap(&next, &seen, &swapped, MPI_INT64_T, target, W_C, win));
        MPI_OK(MPI_Win_flush(target, win));
        ops++;
        if (swapped == seen) {
            return;
        }
        seen = swapped;
    }
}

static void lock_all_phase(MPI_Win win)
{
    int64_t one = 1, pair[2] = { 1, 1 }, old;
    int32_t one32 = 1, old32;

    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; ++k) {
        for (int t = 0; t < size; ++t) {
            MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, W_A, MPI_SUM, win));
            MPI_OK(MPI_Accumulate(pair, 2, MPI_INT64_T, t, W_A, 2, MPI_INT64_T, MPI_SUM, win));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, W_A, 1, wrapped, MPI_SUM, win));
            MPI_OK(MPI_Fetch_and_op(&one32, &old32, MPI_INT32_T, t, W_I, MPI_SUM, win));
            ops += 4;
            cas_increment(win, t);
        }
        MPI_OK(MPI_Win_flush_all(win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
}

static void exclusive_phase(MPI_Win win)
{
    for (int k = 0; k < K; ++k) {
        for (int t = 0; t < size; ++t) {
            int64_t d[2] = { 0, 0 };
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Get(&d[0], 1, MPI_INT64_T, t, W_D, 1, MPI_INT64_T, win));
            MPI_OK(MPI_Win_flush(t, win));
            d[0]++;
            if (k % 2) {
                MPI_OK(MPI_Put(&d[0], 1, MPI_INT64_T, t, W_D, 1, MPI_INT64_T, win));
            } else {
                MPI_OK(MPI_Put(d, 1, one_of_two, t, W_D, 1, one_of_two, win));
            }
            MPI_OK(MPI_Win_unlock(t, win));
            ops += 2;
        }
    }
}

/* Our tag of `round` into our slot of every target, plain and strided. */
static void put_tags(MPI_Win win, int round)
{
    int64_t pair[2] = { tag(rank, round), -1 };
    for (int t = 0; t < size; ++t) {
        MPI_OK(MPI_Put(pair, 1, MPI_INT64_T, t, W_SLOT + rank, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Put(pair, 1, one_of_two, t, W_SLOT2(size) + rank, 1, one_of_two, win));
        ops += 2;
    }
}

static void check_tags(const int64_t *base, int round, const char *phase)
{
    for (int o = 0; o < size; ++o) {
        CHECK(tag(o, round) == base[W_SLOT + o] && tag(o, round) == base[W_SLOT2(size) + o],
              "%s: tags of %d: %lld, %lld, expected %lld", phase, o, (long long) base[W_SLOT + o],
              (long long) base[W_SLOT2(size) + o], (long long) tag(o, round));
    }
}

static void fence_phase(MPI_Win win, const int64_t *base)
{
    MPI_OK(MPI_Win_fence(0, win));
    put_tags(win, 0);
    MPI_OK(MPI_Win_fence(0, win));
    check_tags(base, 0, "fence");
    MPI_OK(MPI_Win_fence(0, win));
}

static void pscw_phase(MPI_Win win, const int64_t *base)
{
    MPI_Group world;
    int64_t *got = malloc(sizeof(int64_t) * (size_t) size);

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    put_tags(win, 1);
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    check_tags(base, 1, "PSCW");
    MPI_OK(MPI_Win_post(world, 0, win));
    MPI_OK(MPI_Win_start(world, 0, win));
    for (int t = 0; t < size; ++t) {
        MPI_OK(MPI_Get(&got[t], 1, MPI_INT64_T, t, W_SLOT + rank, 1, MPI_INT64_T, win));
        ops++;
    }
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    for (int t = 0; t < size; ++t) {
        CHECK(tag(rank, 1) == got[t], "PSCW get from %d: %lld", t, (long long) got[t]);
    }
    free(got);
    MPI_Group_free(&world);
}

static void region_phase(MPI_Win win)
{
    int64_t *ones = malloc(sizeof(int64_t) * R), one = 1, old;

    for (int i = 0; i < R; ++i) {
        ones[i] = 1;
    }
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < R_ROUNDS; ++k) {
        for (int t = 0; t < size; ++t) {
            MPI_OK(MPI_Accumulate(ones, R, MPI_INT64_T, t, W_R(size), R, MPI_INT64_T, MPI_SUM, win));
            MPI_OK(MPI_Win_flush_local(t, win));
            for (int j = 0; j < R_FOPS; ++j) {
                MPI_Aint w = (MPI_Aint) ((k * 7 + j * (R / R_FOPS) + rank) % R);
                MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, W_R(size) + w, MPI_SUM, win));
            }
            ops += 1 + R_FOPS;
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    free(ones);
}

static void check_region(MPI_Win win, const int64_t *base)
{
    int64_t sum = 0, want = (int64_t) size * R_ROUNDS * (R + R_FOPS);

    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < R; ++i) {
        sum += base[W_R(size) + i];
    }
    MPI_OK(MPI_Win_unlock(rank, win));
    CHECK(want == sum, "region sum %lld, expected %lld", (long long) sum, (long long) want);
}

static void check_counters(MPI_Win win, const int64_t *base)
{
    int64_t k = K * (int64_t) size;
    int32_t i32;

    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    memcpy(&i32, &base[W_I], sizeof(i32));
    CHECK(3 * k == base[W_A], "A %lld, expected %lld", (long long) base[W_A], (long long) (3 * k));
    CHECK(k == base[W_B], "B %lld, expected %lld", (long long) base[W_B], (long long) k);
    CHECK(k == base[W_C], "C %lld, expected %lld", (long long) base[W_C], (long long) k);
    CHECK(k == base[W_D], "D %lld, expected %lld", (long long) base[W_D], (long long) k);
    CHECK(k == i32, "I %d, expected %lld", i32, (long long) k);
    MPI_OK(MPI_Win_unlock(rank, win));
}

/* Every operation counted on one route; with force_remote, native ones
 * exactly when UCX reaches the peers by shared memory. */
static void check_routes(route_counters_t *rc)
{
    const char *tls = getenv("UCX_TLS");
    int remote = test_cvar_int("osc_newrma_force_remote") && !test_world_spans_nodes()
                 && 0 == test_cvar_int("osc_newrma_fifo_node_ranks");
    unsigned long long all_ops = 0, native_ops, am_ops, node_ops;

    route_counters_total(rc, &native_ops, &am_ops, &node_ops);

    MPI_Allreduce(&ops, &all_ops, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (!remote) {
        return;     /* node paths: neither counter says anything */
    }
    CHECK(all_ops == native_ops + am_ops && 0 == node_ops,
          "%llu native + %llu active messages (%llu by the node route), expected %llu operations",
          native_ops, am_ops, node_ops, all_ops);
    if (NULL != tls && NULL == strstr(tls, "tcp")) {
        CHECK(native_ops > 0 && am_ops > 0, "shared memory: %llu native, %llu active messages", native_ops, am_ops);
    } else if (NULL != tls) {
        CHECK(0 == native_ops, "TCP: %llu native operations", native_ops);
    }
}

int main(int argc, char **argv)
{
    int64_t *base;
    route_counters_t rc;
    MPI_Win win;
    int provided;

    test_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(1, 1, 2, MPI_INT64_T, &one_of_two);
    MPI_Type_create_resized(one_of_two, 0, 2 * sizeof(int64_t), &one_of_two);
    MPI_Type_commit(&one_of_two);
    MPI_Type_contiguous(1, MPI_INT64_T, &wrapped);
    MPI_Type_commit(&wrapped);
    base = native_window(W_WORDS(size), &win, &rc);

    lock_all_phase(win);
    exclusive_phase(win);
    MPI_Barrier(MPI_COMM_WORLD);
    check_counters(win, base);
    fence_phase(win, base);
    pscw_phase(win, base);
    region_phase(win);
    MPI_Barrier(MPI_COMM_WORLD);
    check_region(win, base);

    check_routes(&rc);
    MPI_OK(MPI_Win_free(&win));
    MPI_Type_free(&one_of_two);
    MPI_Type_free(&wrapped);
    return test_finalize("native_mixed");
}
