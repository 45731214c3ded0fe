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
 * Latency of one 8-byte notification until the target sees it (issue #36,
 * docs/notified-rma.md), ping-pong style between ranks 0 and 1: rank 0
 * sends, rank 1 sees it and sends back, and so on; a row's value is the
 * one-way time, half a round trip.  Rows:
 *   notify    MPIX_Put_notify of 8 B into the peer's window; the peer polls
 *             MPIX_Win_notify_get_value until the count moves
 *   flag      MPI_Put of 8 B, MPI_Win_flush, MPI_Fetch_and_op(+1) on a flag
 *             word of the peer's window, MPI_Win_flush; the peer polls its
 *             flag with MPI_Fetch_and_op(MPI_NO_OP) + MPI_Win_flush
 *   sendrecv  MPI_Send / MPI_Recv of 8 B
 *   line      (memory path only) the floor: one cache line each way, a
 *             release store of the arrival's number into a word of a
 *             shared window the peer polls with acquire loads
 * Both RMA rows run in one lock_all epoch on one window; every arrival's
 * 8 bytes are checked (a wrong value is reported, not timed).  Medians over
 * BATCHES batches.  Output:
 *   path memory|message|fallback  (MPIX_Win_notify_path of the window)
 *   row NAME 8 MICROSECONDS       or   row NAME 8 error TEXT
 *
 *   notify_latency allocate|create|dynamic [round-trips-per-batch]
 * Exactly 2 ranks.  A benchmark, not a test: bench/notify_latency.sh.
 */
#include "bench_common.h"
#include "mpix_newrma.h"

#include <stdint.h>

#define BATCHES 21
#define DATA_WORD 0
#define FLAG_WORD 1
#define WIN_BYTES (2 * sizeof(int64_t))

typedef struct {
    struct bench_win w;
    int rank, peer;
    int wrong;                     /* arrivals whose 8 bytes were not the ones sent */
    int64_t *line;                 /* the line row's words, LINE_STRIDE apart, one a rank */
} ctx_t;

/* int64 words between the line row's two words: 128 B, so that neither
 * the line nor its prefetched neighbour is shared */
#define LINE_STRIDE 16

typedef void (*send_fn)(ctx_t *c, int64_t seq);
typedef void (*await_fn)(ctx_t *c, int64_t seq);

static MPI_Aint word_at(const ctx_t *c, int word) { return bench_win_disp(&c->w, c->peer, word * sizeof(int64_t)); }

static void check_arrival(ctx_t *c, int64_t seq)
{
    c->wrong += __atomic_load_n(&((int64_t *) c->w.base)[DATA_WORD], __ATOMIC_RELAXED) != seq;
}

/* ---- notify ---- */

static void notify_send(ctx_t *c, int64_t seq)
{
    MPIX_Put_notify(&seq, 1, MPI_INT64_T, c->peer, word_at(c, DATA_WORD), 1, MPI_INT64_T, c->w.win, 0);
}

static void notify_await(ctx_t *c, int64_t seq)
{
    MPI_Count seen = 0;
    while (MPIX_Win_notify_get_value(c->w.win, 0, &seen), seen < seq) {
    }
    MPI_Win_sync(c->w.win);      /* the fallback's data: the window's memory as MPI wrote it */
    check_arrival(c, seq);
}

/* ---- put + flush + flag ---- */

static void flag_send(ctx_t *c, int64_t seq)
{
    const int64_t one = 1;
    int64_t old;

    MPI_Put(&seq, 1, MPI_INT64_T, c->peer, word_at(c, DATA_WORD), 1, MPI_INT64_T, c->w.win);
    MPI_Win_flush(c->peer, c->w.win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, c->peer, word_at(c, FLAG_WORD), MPI_SUM, c->w.win);
    MPI_Win_flush(c->peer, c->w.win);
}

static void flag_await(ctx_t *c, int64_t seq)
{
    MPI_Aint own = bench_win_disp(&c->w, c->rank, FLAG_WORD * sizeof(int64_t));
    int64_t flag = 0;

    do {
        MPI_Fetch_and_op(NULL, &flag, MPI_INT64_T, c->rank, own, MPI_NO_OP, c->w.win);
        MPI_Win_flush(c->rank, c->w.win);
    } while (flag < seq);
    MPI_Win_sync(c->w.win);
    check_arrival(c, seq);
}

/* ---- MPI_Send / MPI_Recv ---- */

static void message_send(ctx_t *c, int64_t seq) { MPI_Send(&seq, 1, MPI_INT64_T, c->peer, 0, MPI_COMM_WORLD); }

static void message_await(ctx_t *c, int64_t seq)
{
    int64_t got = -1;
    MPI_Recv(&got, 1, MPI_INT64_T, c->peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    c->wrong += got != seq;
}

/* One row: a warm-up batch, then BATCHES timed ones; arrivals numbered
 * from 1 on (the counters and the flag start at 0).  Returns the median
 * one-way time in seconds. */
static double row(ctx_t *c, send_fn send, await_fn await, int round_trips)
{
    double one_way[BATCHES];
    int64_t seq = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int b = -1; b < BATCHES; ++b) {
        double start = bench_now();
        for (int i = 0; i < round_trips; ++i) {
            ++seq;
            if (0 == c->rank) {
                send(c, seq);
                await(c, seq);
            } else {
                await(c, seq);
                send(c, seq);
            }
        }
        if (b >= 0) one_way[b] = (bench_now() - start) / (2.0 * round_trips);
    }
    return bench_median(one_way, BATCHES);
}

/* ---- one cache line each way ---- */

static void line_send(ctx_t *c, int64_t seq) { __atomic_store_n(&c->line[c->rank * LINE_STRIDE], seq, __ATOMIC_RELEASE); }

static void line_await(ctx_t *c, int64_t seq)
{
    while (__atomic_load_n(&c->line[c->peer * LINE_STRIDE], __ATOMIC_ACQUIRE) < seq) {
    }
}

/* The line row, measured by the same processes in the same minute as the
 * notify row: the load the other users put on the machine moves both */
static double line_row(ctx_t *c, int round_trips)
{
    MPI_Win shared;
    MPI_Aint bytes = 0 == c->rank ? 2 * LINE_STRIDE * sizeof(int64_t) : 0;
    int64_t *mine;
    int disp_unit;
    double seconds;

    MPI_Win_allocate_shared(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &shared);
    MPI_Win_shared_query(shared, 0, &bytes, &disp_unit, &c->line);
    if (0 == c->rank) memset(c->line, 0, (size_t) bytes);
    MPI_Win_lock_all(0, shared);
    MPI_Win_sync(shared);
    seconds = row(c, line_send, line_await, round_trips);
    MPI_Win_unlock_all(shared);
    MPI_Win_free(&shared);
    return seconds;
}

static void report(ctx_t *c, const char *name, double seconds)
{
    int wrong = 0;

    MPI_Reduce(&c->wrong, &wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == c->rank) {
        if (wrong) printf("row %s 8 error %d arrivals with the wrong 8 bytes\n", name, wrong);
        else printf("row %s 8 %.4f\n", name, seconds * 1e6);
        fflush(stdout);
    }
    c->wrong = 0;
}

static const char *path_name(int path)
{
    switch (path) {
    case MPIX_NOTIFY_PATH_MEMORY: return "memory";
    case MPIX_NOTIFY_PATH_MESSAGE: return "message";
    default: return "fallback";
    }
}

int main(int argc, char **argv)
{
    ctx_t c = { .wrong = 0 };
    int size, flavor = argc > 1 ? bench_flavor_parse(argv[1]) : -1, path = -1;
    int round_trips = argc > 2 ? atoi(argv[2]) : 200;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 != size || flavor < 0 || round_trips < 1) {
        if (0 == c.rank) fprintf(stderr, "usage: notify_latency allocate|create|dynamic [round-trips] (2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    c.peer = 1 - c.rank;
    if (MPI_SUCCESS != bench_win_open(&c.w, (enum bench_flavor) flavor, WIN_BYTES, NULL, MPI_COMM_WORLD)) {
        if (0 == c.rank) printf("window_failed %s\n", argv[1]);
        MPI_Finalize();
        return 1;
    }
    if (BENCH_ALLOCATE == flavor) memset(c.w.base, 0, WIN_BYTES);
    MPIX_Win_notify_attach(c.w.win, 1, MPI_INFO_NULL);
    MPIX_Win_notify_path(c.w.win, &path);
    if (0 == c.rank) printf("path %s\n", path_name(path));
    /* sendrecv first: a component whose flag row hangs still has it */
    report(&c, "sendrecv", row(&c, message_send, message_await, round_trips));
    MPI_Win_lock_all(0, c.w.win);
    report(&c, "notify", row(&c, notify_send, notify_await, round_trips));
    report(&c, "flag", row(&c, flag_send, flag_await, round_trips));
    MPI_Win_unlock_all(c.w.win);
    if (MPIX_NOTIFY_PATH_MEMORY == path) report(&c, "line", line_row(&c, round_trips));
    bench_win_close(&c.w, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
