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
 * Eager or rendezvous on the UCX transport (osc_newrma_ucx_eager_limit):
 * where UCX's rendezvous to a peer runs over TCP, payloads up to the limit
 * go in one eager message (UCX 1.13's TCP rendezvous is a handshake plus
 * the same socket: slower); elsewhere (shared memory: a zero-copy
 * rendezvous) UCX keeps its own threshold.
 *
 * Every rank puts, gets and accumulates blocks of several sizes around
 * UCX_RNDV_THRESH and the limit to its right neighbour, one exclusive lock
 * epoch each, and checks the data.  The test sets UCX's rendezvous
 * threshold itself (UCX_RNDV_THRESH=16 KiB, before MPI_Init): UCX's own
 * choice above it differs between versions (1.13 takes rendezvous over TCP
 * from about 20 KiB, 1.18 sends 128 KiB and 1 MiB eagerly), the explicit
 * threshold holds on all.  The MPI_T counter
 * osc_newrma_ucx_rendezvous_received tells how the payloads came: with
 * UCX_TLS=tcp,... a put or get reply up to the limit must come eagerly (0
 * rendezvous: newrma's forced eager send, although above the threshold)
 * and one above it by rendezvous (newrma leaves it to UCX); with other
 * transports a 64 KiB put must come by rendezvous (a forced eager send
 * would show).  The window is an MPI_Win_create one: these are payloads of
 * active messages, which an MPI_Win_allocate window over UCX shared memory
 * does not send for contiguous puts and gets (the native route,
 * osc_newrma_native_rma; tests/native_passive.c).
 * newrma-test: only-newrma np>=2 mca=osc_newrma_force_remote:1
 */
#include "common.h"

#define MAX_BYTES (1 << 20)
#define RNDV_THRESH 16384

static int rank, size, left, right, over_tcp;
static size_t limit;
static test_pvar_t rendezvous;

static int64_t value(int origin, int round, size_t i) { return (int64_t) origin * 1000003 + round * 7919 + (int64_t) i; }

static void fill(int64_t *buf, size_t n, int origin, int round)
{
    for (size_t i = 0; i < n; ++i) buf[i] = value(origin, round, i);
}

static size_t count_wrong(const int64_t *buf, size_t n, int origin, int round, int times)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) wrong += buf[i] != times * value(origin, round, i);
    return wrong;
}

/* How this process's rendezvous counter must have moved for one payload of
 * `bytes` it received (a put at the target, a get's reply at the origin). */
static void check_arrival(const char *what, size_t bytes, unsigned long long delta)
{
    if (over_tcp && bytes <= limit) {
        CHECK(0 == delta, "%s of %zu bytes over TCP (eager limit %zu): %llu rendezvous", what, bytes, limit, delta);
    } else if (bytes >= 2 * RNDV_THRESH) {
        /* well above UCX's threshold (its headers count too) */
        CHECK(delta >= 1, "%s of %zu bytes (%s, eager limit %zu): no rendezvous", what, bytes,
              over_tcp ? "over TCP" : "off TCP", limit);
    }
}

static void one_size(MPI_Win win, int64_t *base, int64_t *buf, size_t bytes, int round)
{
    size_t n = bytes / sizeof(int64_t);
    unsigned long long before;

    /* put: checked at the target */
    fill(buf, n, rank, round);
    MPI_Barrier(MPI_COMM_WORLD);
    before = test_pvar_read(&rendezvous);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(buf, (int) n, MPI_INT64_T, right, 0, (int) n, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
    check_arrival("put", bytes, test_pvar_read(&rendezvous) - before);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(0 == count_wrong(base, n, left, round, 1), "put of %zu bytes: %zu elements wrong", bytes,
          count_wrong(base, n, left, round, 1));
    MPI_OK(MPI_Win_unlock(rank, win));

    /* accumulate the same block once more: twice the values */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Accumulate(buf, (int) n, MPI_INT64_T, right, 0, (int) n, MPI_INT64_T, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(right, win));

    /* get it back: the reply is checked at the origin */
    memset(buf, 0, bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    before = test_pvar_read(&rendezvous);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_OK(MPI_Get(buf, (int) n, MPI_INT64_T, right, 0, (int) n, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(right, win));
    check_arrival("get reply", bytes, test_pvar_read(&rendezvous) - before);
    CHECK(0 == count_wrong(buf, n, rank, round, 2), "put + accumulate + get of %zu bytes: %zu elements wrong",
          bytes, count_wrong(buf, n, rank, round, 2));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    /* around UCX's rendezvous threshold, at and just above the limit, far above */
    size_t sizes[] = { 8, 16384, 24576, 65536, 0, 0, MAX_BYTES };
    const char *tls = getenv("UCX_TLS");
    int provided;
    int64_t *base, *buf;
    MPI_Win win;

    /* read by newrma's UCX context, made after MPI_Init */
    char thresh[24];
    snprintf(thresh, sizeof(thresh), "%d", RNDV_THRESH);
    setenv("UCX_RNDV_THRESH", thresh, 1);
    test_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    over_tcp = NULL != tls && 0 == strncmp(tls, "tcp", 3);
    limit = (size_t) test_cvar_u64("osc_newrma_ucx_eager_limit");
    sizes[4] = limit < MAX_BYTES ? limit / 8 * 8 : 8;
    sizes[5] = limit < MAX_BYTES ? limit / 8 * 8 + 8 : 8;
    test_pvar_open(&rendezvous, "osc_newrma_ucx_rendezvous_received");
    CHECK(rendezvous.ok, "no MPI_T counter osc_newrma_ucx_rendezvous_received");
    CHECK(test_cvar_int("osc_newrma_force_remote"), "test run without osc_newrma_force_remote");

    buf = malloc(MAX_BYTES);
    base = malloc(MAX_BYTES);
    MPI_OK(MPI_Win_create(base, MAX_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int k = 0; k < (int) (sizeof(sizes) / sizeof(sizes[0])); ++k) {
        one_size(win, base, buf, sizes[k], k);
    }
    MPI_OK(MPI_Win_free(&win));
    free(base);
    free(buf);
    test_pvar_close(&rendezvous);
    MPI_T_finalize();
    return test_finalize("ucx_eager");
}
