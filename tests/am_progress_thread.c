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
 * Passive target on newrma's active-message path (forced with
 * osc_newrma_force_remote) while the target computes outside MPI: the
 * asynchronous progress thread (osc_newrma_progress_thread) must serve the
 * epochs.  Rank 0 is the target and, after the window's creation, makes no
 * MPI call: it spins on volatile loads of its own window memory until every
 * origin's DONE flag is there.  Every other rank does ITERS epochs
 * lock(EXCLUSIVE) / get / put / accumulate / fetch_and_op / unlock on rank 0
 * (as in am_progress.c):
 *  - get the shared counter C, the accumulate counter A and its own record
 *    (flush), then put C + 1, accumulate +1 to A, fetch_and_op +1 on F and
 *    put its new record; the values read and fetched must be equal and the
 *    record read back the one written in the previous epoch;
 * then puts DONE into its own flag word under an exclusive lock.  Window
 * flavors: MPI_Win_create (malloc'ed memory) and MPI_Win_allocate.
 *
 * Rank 0's loop has a wall-clock bound: if the flags are not all there after
 * BOUND_S seconds the test FAILS (it does not hang): rank 0 then enters
 * MPI_Barrier, whose progress lets the origins finish, and reports.  Without
 * the progress thread (--mca osc_newrma_progress_thread 0) that is what
 * happens.  After the loop rank 0 checks exact values: C == A == F == the
 * number of epochs, every record the origin's last value, every flag DONE.
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_force_remote:1,osc_newrma_progress_thread:1
 */
#include "common.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#define ITERS 50           /* exclusive epochs per origin */
#define REC 3              /* words of an origin's record */
#define DONE ((int64_t) 0x5eed0000d0e)
#define BOUND_S 30.0       /* wall-clock bound of rank 0's loop */
#define WATCHDOG_S 120     /* last resort if even the MPI calls after it hang */

/* window layout (int64 words) */
#define W_COUNTER 0        /* get / put read-modify-write */
#define W_ACC 1            /* MPI_Accumulate(MPI_SUM) */
#define W_FAO 2            /* MPI_Fetch_and_op(MPI_SUM) */
#define W_FLAGS 3                           /* [size] */
#define W_REC(size) (W_FLAGS + (size))      /* [size][REC] */
#define W_WORDS(size) (W_REC(size) + (size) * REC)

static int64_t value(int origin, int iter, int word)
{
    return (int64_t) origin * 1000003 + (int64_t) iter * 1009 + word + 1;
}

static int64_t previous(int origin, int iter, int word) { return iter > 0 ? value(origin, iter - 1, word) : 0; }

static char watchdog_msg[256];
static size_t watchdog_len;

static void watchdog_fired(int sig)
{
    (void) sig;
    ssize_t w = write(2, watchdog_msg, watchdog_len);
    (void) w;
    _exit(3);
}

static void watchdog_arm(const char *flavor)
{
    int len = snprintf(watchdog_msg, sizeof(watchdog_msg),
                       "[rank %d] am_progress_thread: %s window: still not done after %d s\n", test_rank, flavor,
                       WATCHDOG_S);
    watchdog_len = len < 0 ? 0 : (size_t) len < sizeof(watchdog_msg) ? (size_t) len : sizeof(watchdog_msg) - 1;
    signal(SIGALRM, watchdog_fired);
    alarm(WATCHDOG_S);
}

static void origin_epochs(test_win_t *tw, const char *fn, int size)
{
    const int u = sizeof(int64_t);
    int rank = test_rank, bad = 0;
    int64_t got[2], back[REC], rec[REC], fetched, one = 1;

    for (int i = 0; i < ITERS; ++i) {
        got[0] = got[1] = fetched = -1;
        for (int w = 0; w < REC; ++w) back[w] = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        MPI_OK(MPI_Get(got, 2, MPI_INT64_T, 0, test_disp(tw, 0, W_COUNTER, u), 2, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Get(back, REC, MPI_INT64_T, 0, test_disp(tw, 0, W_REC(size) + rank * REC, u), REC,
                       MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_flush(0, tw->win));
        int64_t counter = got[0] + 1;
        for (int w = 0; w < REC; ++w) rec[w] = value(rank, i, w);
        MPI_OK(MPI_Put(&counter, 1, MPI_INT64_T, 0, test_disp(tw, 0, W_COUNTER, u), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, test_disp(tw, 0, W_ACC, u), 1, MPI_INT64_T, MPI_SUM,
                              tw->win));
        MPI_OK(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 0, test_disp(tw, 0, W_FAO, u), MPI_SUM, tw->win));
        MPI_OK(MPI_Put(rec, REC, MPI_INT64_T, 0, test_disp(tw, 0, W_REC(size) + rank * REC, u), REC,
                       MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_unlock(0, tw->win));

        if ((got[0] != got[1] || got[0] != fetched || got[0] < 0) && bad++ < 3)
            CHECK(got[0] == got[1] && got[0] == fetched && got[0] >= 0,
                  "%s, epoch %d: read counter %lld, accumulate counter %lld, fetched %lld under an exclusive "
                  "lock", fn, i, (long long) got[0], (long long) got[1], (long long) fetched);
        for (int w = 0; w < REC; ++w)
            if (back[w] != previous(rank, i, w) && bad++ < 3)
                CHECK(back[w] == previous(rank, i, w), "%s, epoch %d: my record word %d read back %lld, "
                      "expected %lld", fn, i, w, (long long) back[w], (long long) previous(rank, i, w));
    }
    int64_t done = DONE;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    MPI_OK(MPI_Put(&done, 1, MPI_INT64_T, 0, test_disp(tw, 0, W_FLAGS + rank, u), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
}

static void run(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    test_win_t tw;

    test_win_create(&tw, flavor, (size_t) W_WORDS(size) * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    watchdog_arm(fn);

    if (0 == rank) {
        volatile int64_t *mine = tw.mem;
        double start = test_now_s(), elapsed = 0;
        long polls = 0;
        int done = 0;
        /* compute without MPI: plain loads of the own window memory */
        for (;;) {
            done = 0;
            for (int o = 1; o < size; ++o) done += (DONE == mine[W_FLAGS + o]);
            if (done == size - 1) break;
            if ((++polls & 1023) == 0 && (elapsed = test_now_s() - start) > BOUND_S) break;
        }
        elapsed = test_now_s() - start;
        CHECK(done == size - 1, "%s: only %d of %d origins finished while rank 0 computed outside MPI for "
              "%.1f s (counter %lld): their epochs were not served without the target's help (progress thread "
              "off or stuck?)", fn, done, size - 1, elapsed, (long long) mine[W_FAO]);
        /* the origins enter the barrier after their DONE epoch; if they were
         * stuck, the barrier's progress lets them finish */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        MPI_OK(MPI_Win_sync(tw.win));
        int64_t expected = (int64_t) ITERS * (size - 1);
        CHECK(mine[W_COUNTER] == expected, "%s: get/put counter is %lld, expected %lld", fn,
              (long long) mine[W_COUNTER], (long long) expected);
        CHECK(mine[W_ACC] == expected, "%s: accumulate counter is %lld, expected %lld", fn,
              (long long) mine[W_ACC], (long long) expected);
        CHECK(mine[W_FAO] == expected, "%s: fetch_and_op counter is %lld, expected %lld", fn,
              (long long) mine[W_FAO], (long long) expected);
        CHECK(0 == mine[W_FLAGS], "%s: rank 0's own flag is %lld", fn, (long long) mine[W_FLAGS]);
        for (int o = 1; o < size; ++o) {
            CHECK(DONE == mine[W_FLAGS + o], "%s: flag of origin %d is %lld", fn, o, (long long) mine[W_FLAGS + o]);
            for (int w = 0; w < REC; ++w)
                CHECK(mine[W_REC(size) + o * REC + w] == value(o, ITERS - 1, w),
                      "%s: record of origin %d word %d is %lld, expected %lld", fn, o, w,
                      (long long) mine[W_REC(size) + o * REC + w], (long long) value(o, ITERS - 1, w));
        }
        for (int w = 0; w < REC; ++w)
            CHECK(0 == mine[W_REC(size) + w], "%s: rank 0's own record word %d is %lld", fn, w,
                  (long long) mine[W_REC(size) + w]);
        MPI_OK(MPI_Win_unlock(0, tw.win));
    } else {
        origin_epochs(&tw, fn, size);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    alarm(0);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    run(FLAVOR_CREATE);
    run(FLAVOR_ALLOCATE);
    return test_finalize("am_progress_thread");
}
