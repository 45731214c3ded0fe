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
 * Signals and batches (libmpix_newrma, experimental; docs/notified-rma.md),
 * one thread per process, no epoch opened by the test:
 *  - batches spanning every target: each round every rank opens one batch,
 *    puts a block to every rank (itself too), accumulates +1 into one word
 *    of each, puts to MPI_PROC_NULL, and closes it with its own signal
 *    (signal o for origin o); every target waits for signal o at each value
 *    k+1 and then finds origin o's first k+1 blocks (waiting acquires: no
 *    MPI_Win_sync by the test); in the end every signal is exactly ROUNDS,
 *    the accumulated word exactly size * ROUNDS, MPIX_Signal_test agrees;
 *  - a batch of gets from every target closed with a signal: the data is
 *    there when the close returns, and each target's signal counts one
 *    batch per origin;
 *  - a batch without a signal: complete at the targets when the close
 *    returns (checked after a barrier);
 *  - MPIX_Signal_reset, and bad input: a bad signal index (the batch stays
 *    open), closing twice, a bad rank, a window without signals, a negative
 *    signal count;
 *  - a batch of large puts (LARGE words to every target, more than travels
 *    eagerly) closed with a signal: a target that sees one count per origin
 *    finds every word.
 * newrma-test: np>=1 links-mpix
 */
#include "signal_common.h"

#define ROUNDS 20

static int rank, size;

/* window layout (int64 words): origin o's blocks [o][round][BLOCK], then
 * the accumulated word, then one word per origin for the batch without a
 * signal */
static MPI_Aint block_at(int origin, int round) { return ((MPI_Aint) origin * ROUNDS + round) * BLOCK; }
static MPI_Aint acc_word(void) { return block_at(size, 0); }
static MPI_Aint nosignal_word(int origin) { return acc_word() + 1 + origin; }
#define LARGE 32768             /* int64 words: 256 KiB, past every eager limit */
static MPI_Aint large_at(int origin) { return nosignal_word(size) + (MPI_Aint) origin * LARGE; }
static int64_t large_pattern(int origin, int target, MPI_Aint i) { return ((int64_t) origin * 64 + target) * LARGE + i + 7; }

static void put_batches(MPI_Win win)
{
    const int64_t one = 1;
    /* one block per target: the library's until the close */
    int64_t *block = malloc((size_t) size * BLOCK * sizeof(*block));

    for (int k = 0; k < ROUNDS; ++k) {
        MPIX_Batch batch = MPIX_BATCH_NULL;
        MPI_OK(MPIX_Batch_open(win, &batch));
        for (int t = 0; t < size; ++t) {
            for (int i = 0; i < BLOCK; ++i) block[t * BLOCK + i] = signal_pattern(rank, t, k, i);
            MPI_OK(MPIX_Batch_put(&block[t * BLOCK], BLOCK, MPI_INT64_T, t, block_at(rank, k), BLOCK, MPI_INT64_T,
                                  batch));
            MPI_OK(MPIX_Batch_accumulate(&one, 1, MPI_INT64_T, t, acc_word(), 1, MPI_INT64_T, MPI_SUM, batch));
        }
        MPI_OK(MPIX_Batch_put(block, BLOCK, MPI_INT64_T, MPI_PROC_NULL, 0, BLOCK, MPI_INT64_T, batch));
        MPI_OK(MPIX_Batch_close(&batch, rank));
        CHECK(MPIX_BATCH_NULL == batch, "close leaves the handle set");
    }
    free(block);
}

static void wait_and_check(MPI_Win win, const int64_t *mem)
{
    int flag = -1;

    for (int o = 0; o < size; ++o)
        for (int k = 0; k < ROUNDS; ++k) {
            MPI_OK(MPIX_Signal_wait(win, o, k + 1));
            signal_check_blocks(mem, block_at(o, 0), o, rank, 0, k + 1, "batch put");
        }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[acc_word()] == (int64_t) size * ROUNDS, "accumulated word %lld, expected %lld",
          (long long) mem[acc_word()], (long long) size * ROUNDS);
    for (int o = 0; o < size; ++o) {
        MPI_Count v = -1;
        MPI_OK(MPIX_Win_notify_get_value(win, o, &v));
        CHECK(v == ROUNDS, "signal %d ends at %lld", o, (long long) v);
        MPI_OK(MPIX_Signal_test(win, o, v, &flag));
        CHECK(1 == flag, "MPIX_Signal_test at the count: %d", flag);
        MPI_OK(MPIX_Signal_test(win, o, v + 1, &flag));
        CHECK(0 == flag, "MPIX_Signal_test past the count: %d", flag);
    }
}

/* every rank reads its own blocks back from every target in one batch */
static void get_batch(MPI_Win win)
{
    const int sig = size;
    int64_t *got = malloc((size_t) size * ROUNDS * BLOCK * sizeof(*got));
    MPIX_Batch batch = MPIX_BATCH_NULL;

    MPI_OK(MPIX_Batch_open(win, &batch));
    for (int t = 0; t < size; ++t)
        MPI_OK(MPIX_Batch_get(&got[block_at(t, 0)], ROUNDS * BLOCK, MPI_INT64_T, t, block_at(rank, 0),
                              ROUNDS * BLOCK, MPI_INT64_T, batch));
    MPI_OK(MPIX_Batch_close(&batch, sig));
    for (int t = 0; t < size; ++t)
        signal_check_blocks(got, block_at(t, 0), rank, t, 0, ROUNDS, "batch get");
    MPI_OK(MPIX_Signal_wait(win, sig, size));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Count v = -1;
    MPI_OK(MPIX_Win_notify_get_value(win, sig, &v));
    CHECK(v == size, "get signal %lld, expected %d", (long long) v, size);
    free(got);
}

static void batch_without_signal(MPI_Win win, const int64_t *mem)
{
    const int64_t value = (int64_t) rank * 7 + 3;
    MPIX_Batch batch = MPIX_BATCH_NULL;

    MPI_OK(MPIX_Batch_open(win, &batch));
    for (int t = 0; t < size; ++t)
        MPI_OK(MPIX_Batch_put(&value, 1, MPI_INT64_T, t, nosignal_word(rank), 1, MPI_INT64_T, batch));
    MPI_OK(MPIX_Batch_close(&batch, MPIX_SIGNAL_NONE));
    MPI_Barrier(MPI_COMM_WORLD);
    /* passive target's rule: the window's memory agrees with this process's loads after MPI_Win_sync */
    MPI_OK(MPI_Win_sync(win));
    for (int o = 0; o < size; ++o)
        CHECK(mem[nosignal_word(o)] == (int64_t) o * 7 + 3, "batch without signal from %d: %lld", o,
              (long long) mem[nosignal_word(o)]);
}

static void reset_and_errors(MPI_Win win, int nsignals)
{
    MPIX_Batch batch = MPIX_BATCH_NULL;
    MPI_Win plain = MPI_WIN_NULL, none = MPI_WIN_NULL;
    MPI_Count v = -1;
    int64_t word = 0, *base = NULL;

    MPI_OK(MPIX_Signal_reset(win, size));
    MPI_OK(MPIX_Win_notify_get_value(win, size, &v));
    CHECK(0 == v, "signal after reset: %lld", (long long) v);
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Signal_reset(win, nsignals));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Signal_wait(win, -1, 1));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Signal_test(win, nsignals, 1, &(int) { 0 }));

    MPI_OK(MPIX_Batch_open(win, &batch));
    MPI_FAILS_WITH(MPI_ERR_RANK, MPIX_Batch_put(&word, 1, MPI_INT64_T, size, 0, 1, MPI_INT64_T, batch));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Batch_close(&batch, nsignals));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Batch_close(&batch, -2));
    CHECK(MPIX_BATCH_NULL != batch, "a refused close closed the batch");
    MPI_OK(MPIX_Batch_get(&word, 1, MPI_INT64_T, rank, nosignal_word(rank), 1, MPI_INT64_T, batch));
    MPI_OK(MPIX_Batch_close(&batch, MPIX_SIGNAL_NONE));
    CHECK(word == (int64_t) rank * 7 + 3, "get after a refused close: %lld", (long long) word);
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Batch_close(&batch, 0));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Batch_put(&word, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, batch));

    /* a window without signals takes no batch; a negative count makes no window */
    MPI_OK(MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &plain));
    MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN);
    MPI_FAILS_WITH(MPI_ERR_WIN, MPIX_Batch_open(plain, &batch));
    MPI_FAILS_WITH(MPI_ERR_WIN, MPIX_Signal_wait(plain, 0, 1));
    MPI_FAILS_WITH(MPI_ERR_WIN, MPIX_Win_free_signals(&plain));
    MPI_OK(MPI_Win_free(&plain));
    MPI_FAILS_WITH(MPI_ERR_ARG, MPIX_Win_allocate_signals(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, -1, &base, &none));
    CHECK(MPI_WIN_NULL == none, "a refused allocation made a window");
}

/* after reset_and_errors: signal `size` is 0 again */
static void large_batch(MPI_Win win, const int64_t *mem)
{
    int64_t *block = malloc((size_t) size * LARGE * sizeof(*block));
    MPIX_Batch batch = MPIX_BATCH_NULL;
    int wrong = 0;

    MPI_OK(MPIX_Batch_open(win, &batch));
    for (int t = 0; t < size; ++t) {
        for (MPI_Aint i = 0; i < LARGE; ++i) block[(MPI_Aint) t * LARGE + i] = large_pattern(rank, t, i);
        MPI_OK(MPIX_Batch_put(&block[(MPI_Aint) t * LARGE], LARGE, MPI_INT64_T, t, large_at(rank), LARGE, MPI_INT64_T,
                              batch));
    }
    MPI_OK(MPIX_Batch_close(&batch, size));
    MPI_OK(MPIX_Signal_wait(win, size, size));
    for (int o = 0; o < size; ++o)
        for (MPI_Aint i = 0; i < LARGE; ++i)
            wrong += __atomic_load_n(&mem[large_at(o) + i], __ATOMIC_RELAXED) != large_pattern(o, rank, i);
    CHECK(0 == wrong, "large batches: %d words wrong when the signal counted every origin", wrong);
    MPI_Barrier(MPI_COMM_WORLD);
    free(block);
}

int main(int argc, char **argv)
{
    int64_t *mem = NULL;
    MPI_Win win;
    int nsignals;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    nsignals = size + 1;
    win = signal_win_open(large_at(size), nsignals, &mem);

    put_batches(win);
    wait_and_check(win, mem);
    get_batch(win);
    batch_without_signal(win, mem);
    reset_and_errors(win, nsignals);
    MPI_Barrier(MPI_COMM_WORLD);
    large_batch(win, mem);
    MPI_OK(MPIX_Win_free_signals(&win));
    CHECK(MPI_WIN_NULL == win, "MPIX_Win_free_signals leaves the handle set");
    return test_finalize("signal_batches");
}
