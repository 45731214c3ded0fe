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
 * Passive target with a busy target, every window flavor: rank 0 computes in
 * a loop without calling MPI (it polls "done" flags in its own window memory
 * with plain volatile loads), while every other rank does many
 * lock / put / unlock epochs on rank 0:
 *  - exclusive epochs: a read-modify-write of a counter shared by all origins
 *    (get, flush, put counter + 1) plus a put into the origin's history;
 *  - shared epochs: a put into the origin's own history and record slots;
 *  - finally the origin puts DONE into its own flag word under an exclusive
 *    lock.
 * Rank 0 leaves its loop when every origin's flag is DONE (or when a generous
 * wall-clock bound expires: then the test fails instead of hanging), and
 * checks every value: the counter equals the number of exclusive epochs, the
 * history holds every value each origin wrote, the records the last ones.
 * A component whose locks need the target to make MPI progress never grants
 * a lock here, so the flags never arrive.
 *
 * Against Open MPI 4.1's osc/pt2pt (the reference for create and dynamic
 * windows), which needs the target to progress, rank 0 calls MPI_Iprobe in
 * its loop; newrma (and osc/sm) are held to a loop without MPI.
 *
 * Between nodes (and with osc_newrma_force_remote) newrma's packets are
 * served by its progress thread, which this test turns on.
 *
 * newrma-test: np>=2 mca=osc_newrma_progress_thread:1
 */
#include "common.h"

#include <time.h>

#define ITERS 120          /* lock epochs per origin */
#define REC 4              /* words of an origin's record */
#define DONE ((int64_t) 0x5eed0000d0e)
#define BOUND_S 30.0       /* wall-clock bound of rank 0's loop */

/* window layout (int64 words) */
#define W_COUNTER 0
#define W_FLAGS 1                                       /* [size] */
#define W_REC(size) (W_FLAGS + (size))                  /* [size][REC] */
#define W_HIST(size) (W_REC(size) + (size) * REC)       /* [size][ITERS] */
#define W_WORDS(size) (W_HIST(size) + (size) * ITERS)

static int64_t value(int origin, int iter, int word)
{
    return (int64_t) origin * 1000003 + (int64_t) iter * 1009 + word + 1;
}

static int exclusive_iter(int origin, int iter) { return (iter + origin) % 3 != 0; }

static int target_needs_progress(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL == strstr(osc, "newrma") && NULL != strstr(osc, "pt2pt")
           && (FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor);
}

static void run(int flavor)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fn = flavor_names[flavor];
    const int u = sizeof(int64_t);
    test_win_t tw;

    /* for dynamic windows test_win_create attaches rank 0's memory (and
     * everyone else's) before its closing barrier */
    test_win_create(&tw, flavor, (size_t) W_WORDS(size) * sizeof(int64_t), u, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    volatile int64_t *mine = tw.mem;

    if (0 == rank) {
        int progress = target_needs_progress(flavor);
        double start = test_now_s(), elapsed = 0;
        long polls = 0;
        int done = 0;
        /* the busy loop: plain loads of the own window memory, no MPI call
         * (unless the reference component needs progress) */
        for (;;) {
            done = 0;
            for (int o = 1; o < size; ++o) done += (DONE == mine[W_FLAGS + o]);
            if (done == size - 1) break;
            if (progress) {
                int f;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
            }
            if ((++polls & 1023) == 0 && (elapsed = test_now_s() - start) > BOUND_S) break;
        }
        CHECK(done == size - 1, "%s: only %d of %d origins finished while rank 0 was busy for %.1f s "
              "(counter %lld): the target's help was needed", fn, done, size - 1, elapsed,
              (long long) mine[W_COUNTER]);
        /* look at the data the standard way: a shared lock of the own window */
        __sync_synchronize();
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        MPI_OK(MPI_Win_sync(tw.win));
        int64_t expected_counter = 0;
        for (int o = 1; o < size; ++o)
            for (int i = 0; i < ITERS; ++i) expected_counter += exclusive_iter(o, i);
        CHECK(mine[W_COUNTER] == expected_counter, "%s: counter is %lld, expected %lld exclusive increments", fn,
              (long long) mine[W_COUNTER], (long long) expected_counter);
        for (int o = 1; o < size; ++o) {
            CHECK(DONE == mine[W_FLAGS + o], "%s: flag of origin %d is %lld", fn, o, (long long) mine[W_FLAGS + o]);
            for (int w = 0; w < REC; ++w)
                CHECK(mine[W_REC(size) + o * REC + w] == value(o, ITERS - 1, w),
                      "%s: record of origin %d word %d is %lld, expected %lld", fn, o, w,
                      (long long) mine[W_REC(size) + o * REC + w], (long long) value(o, ITERS - 1, w));
            int bad = 0;
            for (int i = 0; i < ITERS; ++i) {
                int64_t h = mine[W_HIST(size) + o * ITERS + i];
                if (h != value(o, i, 100) && bad++ < 3)
                    CHECK(h == value(o, i, 100), "%s: history of origin %d iteration %d is %lld, expected %lld", fn,
                          o, i, (long long) h, (long long) value(o, i, 100));
            }
        }
        /* slot 0 is rank 0's own and nobody wrote it */
        CHECK(0 == mine[W_FLAGS], "%s: rank 0's own flag is %lld", fn, (long long) mine[W_FLAGS]);
        MPI_OK(MPI_Win_unlock(0, tw.win));
    } else {
        int64_t rec[REC], h, counter;
        for (int i = 0; i < ITERS; ++i) {
            int excl = exclusive_iter(rank, i);
            for (int w = 0; w < REC; ++w) rec[w] = value(rank, i, w);
            h = value(rank, i, 100);
            MPI_OK(MPI_Win_lock(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, tw.win));
            if (excl) {
                counter = -1;
                MPI_OK(MPI_Get(&counter, 1, MPI_INT64_T, 0, test_disp(&tw, 0, W_COUNTER, u), 1, MPI_INT64_T,
                               tw.win));
                MPI_OK(MPI_Win_flush(0, tw.win));
                counter++;
                MPI_OK(MPI_Put(&counter, 1, MPI_INT64_T, 0, test_disp(&tw, 0, W_COUNTER, u), 1, MPI_INT64_T,
                               tw.win));
            }
            MPI_OK(MPI_Put(rec, REC, MPI_INT64_T, 0, test_disp(&tw, 0, W_REC(size) + rank * REC, u), REC,
                           MPI_INT64_T, tw.win));
            MPI_OK(MPI_Put(&h, 1, MPI_INT64_T, 0, test_disp(&tw, 0, W_HIST(size) + rank * ITERS + i, u), 1,
                           MPI_INT64_T, tw.win));
            MPI_OK(MPI_Win_unlock(0, tw.win));
        }
        /* read back my record while rank 0 is still busy */
        int64_t back[REC];
        memset(back, 0, sizeof(back));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw.win));
        MPI_OK(MPI_Get(back, REC, MPI_INT64_T, 0, test_disp(&tw, 0, W_REC(size) + rank * REC, u), REC,
                       MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(0, tw.win));
        for (int w = 0; w < REC; ++w)
            CHECK(back[w] == value(rank, ITERS - 1, w), "%s: record read back from busy rank 0: word %d is %lld, "
                  "expected %lld", fn, w, (long long) back[w], (long long) value(rank, ITERS - 1, w));
        int64_t done = DONE;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
        MPI_OK(MPI_Put(&done, 1, MPI_INT64_T, 0, test_disp(&tw, 0, W_FLAGS + rank, u), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("passive_busy_target");
}
