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
 * Passive target while the target is blocked in a communication call: rank 0
 * is the target and, in each phase, blocks in one MPI call that can only
 * return after every other rank's passive-target epochs on rank 0 completed:
 *  (a) MPI_Recv of a message each origin sends only after its epochs,
 *  (b) MPI_Barrier the origins enter only after their epochs,
 *  (c) MPI_Wait on an MPI_Irecv (posted at the start of the phase) of such a
 *      message.
 * Every origin does, per phase, ITERS epochs lock(EXCLUSIVE) / get / put /
 * accumulate / fetch_and_op / unlock on rank 0:
 *  - get the shared counter C, the accumulate counter A and its own record
 *    (flush), then put C + 1, accumulate +1 to A, fetch_and_op +1 on F and
 *    put its new record;
 *  - the exclusive lock makes the epochs atomic: the values read (C, A) and
 *    fetched (F) must be equal, and the record read back must be the one the
 *    origin wrote in its previous epoch.
 * After each phase rank 0 checks exact values: C == A == F == the number of
 * epochs so far, every record holds the origin's last value.  Window flavors:
 * MPI_Win_create (malloc'ed memory) and MPI_Win_allocate.
 *
 * With newrma's active-message path (forced here with
 * osc_newrma_force_remote) the target's side of these epochs runs in its
 * opal_progress callback, i.e. whenever rank 0 is inside any MPI call; no
 * progress thread is needed (am_progress_thread.c covers a target outside
 * MPI).  Any component whose target progresses inside MPI calls passes it.
 * A component that does not progress passive-target epochs there leaves the
 * origins stuck: a watchdog then ends the process with a message naming the
 * phase instead of hanging until the harness's timeout.
 *
 * newrma-test: np>=2 mca=osc_newrma_force_remote:1
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

#define ITERS 50           /* exclusive epochs per origin per phase */
#define REC 3              /* words of an origin's record */
#define WATCHDOG_S 60      /* per phase */
#define TAG 4242

enum { PHASE_RECV, PHASE_BARRIER, PHASE_WAIT_IRECV, PHASE_COUNT };
static const char *const phase_names[PHASE_COUNT] = { "MPI_Recv", "MPI_Barrier", "MPI_Wait(MPI_Irecv)" };

/* window layout (int64 words) */
#define W_COUNTER 0        /* get / put read-modify-write */
#define W_ACC 1            /* MPI_Accumulate(MPI_SUM) */
#define W_FAO 2            /* MPI_Fetch_and_op(MPI_SUM) */
#define W_REC 3            /* [size][REC] */
#define W_WORDS(size) (W_REC + (size) * REC)

static int64_t value(int origin, int phase, int iter, int word)
{
    return (int64_t) origin * 1000003 + (int64_t) phase * 100003 + (int64_t) iter * 1009 + word + 1;
}

/* what an origin's record holds before epoch `iter` of `phase` */
static int64_t previous(int origin, int phase, int iter, int word)
{
    if (iter > 0) return value(origin, phase, iter - 1, word);
    if (phase > 0) return value(origin, phase - 1, ITERS - 1, word);
    return 0;
}

/* ---- watchdog: fail with a message instead of hanging ------------------ */

static char watchdog_msg[256];
static size_t watchdog_len;

static void watchdog_fired(int sig)
{
    (void) sig;
    ssize_t w = write(2, watchdog_msg, watchdog_len);
    (void) w;
    _exit(3);
}

static void watchdog_arm(const char *flavor, int phase)
{
    int len = snprintf(watchdog_msg, sizeof(watchdog_msg),
                       "[rank %d] am_progress: %s window, phase %s: no progress after %d s "
                       "(passive-target epochs to a target blocked in an MPI call did not complete)\n",
                       test_rank, flavor, phase_names[phase], WATCHDOG_S);
    watchdog_len = len < 0 ? 0 : (size_t) len < sizeof(watchdog_msg) ? (size_t) len : sizeof(watchdog_msg) - 1;
    signal(SIGALRM, watchdog_fired);
    alarm(WATCHDOG_S);
}

static void watchdog_disarm(void) { alarm(0); }

/* ---- the origin's epochs ----------------------------------------------- */

static void origin_epochs(test_win_t *tw, const char *fn, int phase)
{
    const int u = sizeof(int64_t);
    int rank = test_rank, bad = 0;
    int64_t got[2], back[REC], rec[REC], fetched, one = 1;

    for (int i = 0; i < ITERS; ++i) {
        got[0] = got[1] = fetched = -1;
        for (int w = 0; w < REC; ++w) back[w] = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        /* read C and A (adjacent) and my record */
        MPI_OK(MPI_Get(got, 2, MPI_INT64_T, 0, test_disp(tw, 0, W_COUNTER, u), 2, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Get(back, REC, MPI_INT64_T, 0, test_disp(tw, 0, W_REC + rank * REC, u), REC, MPI_INT64_T,
                       tw->win));
        MPI_OK(MPI_Win_flush(0, tw->win));
        int64_t counter = got[0] + 1;
        for (int w = 0; w < REC; ++w) rec[w] = value(rank, phase, i, w);
        MPI_OK(MPI_Put(&counter, 1, MPI_INT64_T, 0, test_disp(tw, 0, W_COUNTER, u), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, test_disp(tw, 0, W_ACC, u), 1, MPI_INT64_T, MPI_SUM,
                              tw->win));
        MPI_OK(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 0, test_disp(tw, 0, W_FAO, u), MPI_SUM, tw->win));
        MPI_OK(MPI_Put(rec, REC, MPI_INT64_T, 0, test_disp(tw, 0, W_REC + rank * REC, u), REC, MPI_INT64_T,
                       tw->win));
        MPI_OK(MPI_Win_unlock(0, tw->win));

        /* the epoch was atomic: all three counters counted the same epochs */
        if ((got[0] != got[1] || got[0] != fetched || got[0] < 0) && bad++ < 3)
            CHECK(got[0] == got[1] && got[0] == fetched && got[0] >= 0,
                  "%s, phase %s, epoch %d: read counter %lld, accumulate counter %lld, fetched %lld "
                  "under an exclusive lock", fn, phase_names[phase], i, (long long) got[0], (long long) got[1],
                  (long long) fetched);
        for (int w = 0; w < REC; ++w)
            if (back[w] != previous(rank, phase, i, w) && bad++ < 3)
                CHECK(back[w] == previous(rank, phase, i, w),
                      "%s, phase %s, epoch %d: my record word %d read back %lld, expected %lld", fn,
                      phase_names[phase], i, w, (long long) back[w], (long long) previous(rank, phase, i, w));
    }
}

/* ---- rank 0's checks ---------------------------------------------------- */

static void target_check(test_win_t *tw, const char *fn, int phase, int size)
{
    volatile int64_t *mine = tw->mem;
    int64_t expected = (int64_t) (phase + 1) * ITERS * (size - 1);

    /* look at the own memory the standard way: a shared lock of the own window */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    MPI_OK(MPI_Win_sync(tw->win));
    CHECK(mine[W_COUNTER] == expected, "%s, after phase %s: get/put counter is %lld, expected %lld", fn,
          phase_names[phase], (long long) mine[W_COUNTER], (long long) expected);
    CHECK(mine[W_ACC] == expected, "%s, after phase %s: accumulate counter is %lld, expected %lld", fn,
          phase_names[phase], (long long) mine[W_ACC], (long long) expected);
    CHECK(mine[W_FAO] == expected, "%s, after phase %s: fetch_and_op counter is %lld, expected %lld", fn,
          phase_names[phase], (long long) mine[W_FAO], (long long) expected);
    for (int o = 0; o < size; ++o)
        for (int w = 0; w < REC; ++w) {
            /* rank 0 is no origin: its record stays 0 */
            int64_t want = 0 == o ? 0 : value(o, phase, ITERS - 1, w);
            CHECK(mine[W_REC + o * REC + w] == want, "%s, after phase %s: record of rank %d word %d is %lld, "
                  "expected %lld", fn, phase_names[phase], o, w, (long long) mine[W_REC + o * REC + w],
                  (long long) want);
        }
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

    for (int phase = 0; phase < PHASE_COUNT; ++phase) {
        /* rank 0 has checked the previous phase before anyone starts this one */
        MPI_Barrier(MPI_COMM_WORLD);
        watchdog_arm(fn, phase);
        if (0 == rank) {
            int64_t msg[2];
            MPI_Status st;
            MPI_Request *reqs = NULL;
            int64_t (*msgs)[2] = NULL;
            switch (phase) {
            case PHASE_RECV:
                for (int k = 1; k < size; ++k) {
                    msg[0] = msg[1] = -1;
                    MPI_OK(MPI_Recv(msg, 2, MPI_INT64_T, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st));
                    CHECK(msg[0] == st.MPI_SOURCE && msg[1] == ITERS, "%s, phase %s: message from %d says "
                          "{%lld, %lld}", fn, phase_names[phase], st.MPI_SOURCE, (long long) msg[0],
                          (long long) msg[1]);
                }
                break;
            case PHASE_BARRIER:
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                break;
            case PHASE_WAIT_IRECV:
                reqs = malloc(sizeof(*reqs) * (size_t) size);
                msgs = malloc(sizeof(*msgs) * (size_t) size);
                for (int o = 1; o < size; ++o) {
                    msgs[o][0] = msgs[o][1] = -1;
                    MPI_OK(MPI_Irecv(msgs[o], 2, MPI_INT64_T, o, TAG, MPI_COMM_WORLD, &reqs[o]));
                }
                for (int o = 1; o < size; ++o) {
                    MPI_OK(MPI_Wait(&reqs[o], MPI_STATUS_IGNORE));
                    CHECK(msgs[o][0] == o && msgs[o][1] == ITERS, "%s, phase %s: message from %d says "
                          "{%lld, %lld}", fn, phase_names[phase], o, (long long) msgs[o][0],
                          (long long) msgs[o][1]);
                }
                free(reqs);
                free(msgs);
                break;
            }
            target_check(&tw, fn, phase, size);
        } else {
            origin_epochs(&tw, fn, phase);
            int64_t msg[2] = { rank, ITERS };
            if (PHASE_BARRIER == phase) {
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Send(msg, 2, MPI_INT64_T, 0, TAG, MPI_COMM_WORLD));
            }
        }
        watchdog_disarm();
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    run(FLAVOR_CREATE);
    run(FLAVOR_ALLOCATE);
    return test_finalize("am_progress");
}
