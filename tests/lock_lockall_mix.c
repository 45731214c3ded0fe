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
 * MPI_Win_lock and MPI_Win_lock_all on the same targets at the same time,
 * every window flavor.  Every rank's window holds a counter, a 16-word record
 * and one word per origin.
 *  - readers in lock_all, writers in exclusive locks: for each target T in
 *    turn, half of the ranks take exclusive locks on T and increment the
 *    counter and rewrite the record so that its words equal the counter (one
 *    flushed put per word); the other half take lock_all and read every
 *    target's counter and record word by word, and T's once more in the same
 *    epoch (every third reader epoch is a shared lock of T instead, among
 *    the lock_all readers, also reading T twice).  A reader never sees a torn record, a record that differs
 *    from the counter, a counter that goes back, or a change between its two
 *    reads of one epoch.  At the end T's counter is the number of exclusive
 *    sections on it (MPI_Allreduce of the per-rank counts);
 *  - shared locks and lock_all at the same time, made certain with
 *    messages: rank A holds lock_all while rank B takes a shared lock on a
 *    target and puts into its own word there (and the reverse: B holds the
 *    shared lock while A enters lock_all); neither may wait for the other;
 *  - MPI_MODE_NOCHECK lock_all after a barrier in a phase without exclusive
 *    locks (no conflict): puts into the own word of every target, then gets
 *    of all of them; normal shared locks at the same time; afterwards
 *    exclusive locks and lock_all still exclude each other as before.
 * A watchdog turns a deadlock into a failure.
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

#define REC 16
#define N 40                 /* epochs per rank and target in the mixed phase */
#define W_CNT 0
#define W_REC 1
#define W_OWN(o) (1 + REC + (o))
#define WORDS(size) (1 + REC + (size))
#define WATCHDOG_S 30
#define U ((int) sizeof(int64_t))

static int rank, size;
static const char *fn;
static const char *volatile phase = "start";
static int reports;

static void watchdog(int sig)
{
    char msg[256];
    (void) sig;
    int n = snprintf(msg, sizeof(msg), "[rank %d] lock_lockall_mix: check failed: watchdog: no progress in %d s, "
                     "stuck in %s (%s)\n", rank, WATCHDOG_S, phase, fn ? fn : "-");
    if (n > 0) (void) !write(2, msg, (size_t) n);
    _exit(3);
}

#define REPORT(cond, ...)                                    \
    do {                                                     \
        if (!(cond)) {                                       \
            if (reports++ < 8) CHECK(cond, __VA_ARGS__);     \
            else test_errors++;                              \
        }                                                    \
    } while (0)

/* counter then record, word by word */
static void read_all_words(test_win_t *tw, int t, int64_t *buf)
{
    for (int i = 0; i < 1 + REC; ++i) {
        buf[i] = -1;
        MPI_OK(MPI_Get(&buf[i], 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT + i, U), 1, MPI_INT64_T, tw->win));
    }
}

static void check_record(int t, const int64_t *buf, int64_t *last, const char *how)
{
    for (int i = 1; i <= REC; ++i)
        if (buf[i] != buf[0]) {
            REPORT(buf[i] == buf[0], "%s: %s: torn read of target %d: counter %lld, record word %d is %lld", fn, how,
                   t, (long long) buf[0], i - 1, (long long) buf[i]);
            break;
        }
    REPORT(buf[0] >= *last, "%s: %s: counter of target %d went back from %lld to %lld", fn, how, t,
           (long long) *last, (long long) buf[0]);
    if (buf[0] > *last) *last = buf[0];
}

static void write_section(test_win_t *tw, int t, int64_t *last)
{
    int64_t c = -1;
    MPI_OK(MPI_Get(&c, 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_flush(t, tw->win));
    REPORT(c >= *last, "%s: exclusive: counter of target %d went back from %lld to %lld", fn, t, (long long) *last,
           (long long) c);
    c++;
    *last = c;
    MPI_OK(MPI_Put(&c, 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT, U), 1, MPI_INT64_T, tw->win));
    for (int i = 0; i < REC; ++i) {
        MPI_OK(MPI_Put(&c, 1, MPI_INT64_T, t, test_disp(tw, t, W_REC + i, U), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_flush(t, tw->win));
    }
}

static void mixed(test_win_t *tw)
{
    int64_t *last = calloc((size_t) size, sizeof(int64_t));
    int64_t *mine_excl = calloc((size_t) size, sizeof(int64_t));
    int64_t *buf = malloc(sizeof(int64_t) * (1 + REC) * (size_t) size), *again = malloc(sizeof(int64_t) * (1 + REC));
    int64_t *base = calloc((size_t) size, sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < size; ++t) {          /* counters left by an earlier call */
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw->win));
        MPI_OK(MPI_Get(&base[t], 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT, U), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_unlock(t, tw->win));
        last[t] = base[t];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    phase = "lock_all readers, exclusive writers";
    for (int T = 0; T < size; ++T) {
        int writer = size > 1 ? (rank + T) % 2 : (T % 2);
        for (int k = 0; k < N; ++k) {
            if (writer) {
                MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, tw->win));
                write_section(tw, T, &last[T]);
                MPI_OK(MPI_Win_unlock(T, tw->win));
                mine_excl[T]++;
            } else if (k % 3 != 2) {
                MPI_OK(MPI_Win_lock_all(0, tw->win));
                for (int t = 0; t < size; ++t) read_all_words(tw, t, buf + t * (1 + REC));
                read_all_words(tw, T, again);      /* nobody writes while we hold lock_all */
                MPI_OK(MPI_Win_unlock_all(tw->win));
                for (int t = 0; t < size; ++t) check_record(t, buf + t * (1 + REC), &last[t], "lock_all");
                for (int i = 0; i <= REC; ++i)
                    if (again[i] != buf[T * (1 + REC) + i]) {
                        REPORT(again[i] == buf[T * (1 + REC) + i], "%s: target %d changed during one lock_all epoch: "
                               "word %d was %lld, then %lld", fn, T, i, (long long) buf[T * (1 + REC) + i],
                               (long long) again[i]);
                        break;
                    }
            } else {
                /* every third reader epoch: a shared lock of T among the lock_all readers */
                MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, T, 0, tw->win));
                read_all_words(tw, T, buf);
                read_all_words(tw, T, again);
                MPI_OK(MPI_Win_unlock(T, tw->win));
                check_record(T, buf, &last[T], "shared lock");
                for (int i = 0; i <= REC; ++i)
                    if (again[i] != buf[i]) {
                        REPORT(again[i] == buf[i], "%s: target %d changed during one shared-lock epoch: word %d was "
                               "%lld, then %lld", fn, T, i, (long long) buf[i], (long long) again[i]);
                        break;
                    }
            }
        }
    }
    int64_t *total = calloc((size_t) size, sizeof(int64_t));
    MPI_Allreduce(mine_excl, total, size, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (int t = 0; t < size; ++t) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw->win));
        read_all_words(tw, t, buf);
        MPI_OK(MPI_Win_unlock(t, tw->win));
        for (int i = 0; i <= REC; ++i)
            CHECK(buf[i] == base[t] + total[t], "%s: final word %d of target %d is %lld after %lld + %lld exclusive "
                  "sections", fn, i, t, (long long) buf[i], (long long) base[t], (long long) total[t]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(total);
    free(base);
    free(last);
    free(mine_excl);
    free(buf);
    free(again);
}

/* A holds lock_all while B takes a shared lock (and the reverse). */
static void shared_with_lockall(test_win_t *tw)
{
    phase = "shared lock and lock_all at the same time";
    int64_t got[2];
    for (int pair = 0; pair + 1 < size; pair += 2) {
        int A = pair, B = pair + 1;
        for (int T = 0; T < size; ++T) {
            int token = 0;
            int64_t va = 1000 + 10 * T + A, vb = 1000 + 10 * T + B;
            /* round 0: A first (lock_all), B inside; round 1: B first (shared), A inside */
            for (int round = 0; round < 2; ++round) {
                int first = round ? B : A, second = round ? A : B;
                if (rank != A && rank != B) continue;
                int i_am_first = rank == first;
                int64_t v = rank == A ? va + 100 * round : vb + 100 * round;
                if (i_am_first) {
                    if (rank == A) MPI_OK(MPI_Win_lock_all(0, tw->win));
                    else MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, T, 0, tw->win));
                    MPI_Send(&token, 1, MPI_INT, second, 1, MPI_COMM_WORLD);
                    /* the second enters while we hold; wait until it says so */
                    MPI_Recv(&token, 1, MPI_INT, second, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(&token, 1, MPI_INT, first, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    if (rank == A) MPI_OK(MPI_Win_lock_all(0, tw->win));
                    else MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, T, 0, tw->win));
                }
                MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, T, test_disp(tw, T, W_OWN(rank), U), 1, MPI_INT64_T, tw->win));
                MPI_OK(MPI_Win_flush(T, tw->win));
                got[0] = got[1] = -1;
                MPI_OK(MPI_Get(&got[0], 1, MPI_INT64_T, T, test_disp(tw, T, W_OWN(rank), U), 1, MPI_INT64_T,
                               tw->win));
                if (!i_am_first) MPI_Send(&token, 1, MPI_INT, first, 2, MPI_COMM_WORLD);
                if (rank == A) MPI_OK(MPI_Win_unlock_all(tw->win));
                else MPI_OK(MPI_Win_unlock(T, tw->win));
                CHECK(got[0] == v, "%s: %s: get of my word at %d is %lld, expected %lld", fn,
                      rank == A ? "lock_all" : "shared lock", T, (long long) got[0], (long long) v);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Open MPI 4.1's osc/pt2pt (the reference for create and dynamic windows)
 * hangs later in this test, in MPI_Win_flush of the exclusive epochs of the
 * mixed phase on both ranks (np=2), once a lock_all epoch with
 * MPI_MODE_NOCHECK happened here; without NOCHECK it passes.  Against it the
 * lock_all epochs of this phase go without NOCHECK; newrma is held to it. */
static int reference_pt2pt(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL == strstr(osc, "newrma") && NULL != strstr(osc, "pt2pt")
           && (FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor);
}

/* lock_all with MPI_MODE_NOCHECK where nothing conflicts. */
static void nocheck_lockall(test_win_t *tw, int flavor)
{
    const int nocheck = reference_pt2pt(flavor) ? 0 : MPI_MODE_NOCHECK;
    phase = "lock_all with NOCHECK";
    int64_t *got = malloc(sizeof(int64_t) * (size_t) size * (size_t) size);
    for (int round = 0; round < 3; ++round) {
        MPI_Barrier(MPI_COMM_WORLD);       /* no exclusive lock from here on, until the next barrier */
        int64_t v = 5000 + 100 * round + rank;
        if (rank % 2 == 0 || round == 0) {
            MPI_OK(MPI_Win_lock_all(nocheck, tw->win));
            for (int t = 0; t < size; ++t)
                MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, test_disp(tw, t, W_OWN(rank), U), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_unlock_all(tw->win));
        } else {
            /* ordinary shared locks at the same time */
            for (int t = 0; t < size; ++t) {
                MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw->win));
                MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, test_disp(tw, t, W_OWN(rank), U), 1, MPI_INT64_T, tw->win));
                MPI_OK(MPI_Win_unlock(t, tw->win));
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < size * size; ++i) got[i] = -1;
        MPI_OK(MPI_Win_lock_all(nocheck, tw->win));
        for (int t = 0; t < size; ++t)
            for (int o = 0; o < size; ++o)
                MPI_OK(MPI_Get(&got[t * size + o], 1, MPI_INT64_T, t, test_disp(tw, t, W_OWN(o), U), 1, MPI_INT64_T,
                               tw->win));
        MPI_OK(MPI_Win_unlock_all(tw->win));
        for (int t = 0; t < size; ++t)
            for (int o = 0; o < size; ++o)
                CHECK(got[t * size + o] == 5000 + 100 * round + o, "%s: NOCHECK round %d: word of %d at %d is %lld, "
                      "expected %d", fn, round, o, t, (long long) got[t * size + o], 5000 + 100 * round + o);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(got);
    /* the counters of the window are as before: exclusive locks and
     * lock_all still exclude each other */
    phase = "after NOCHECK lock_all";
    mixed(tw);
}

static void run(int flavor)
{
    test_win_t tw;
    fn = flavor_names[flavor];
    reports = 0;
    test_win_create(&tw, flavor, (size_t) WORDS(size) * sizeof(int64_t), U, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    mixed(&tw);
    shared_with_lockall(&tw);
    nocheck_lockall(&tw, flavor);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    alarm(0);
    return test_finalize("lock_lockall_mix");
}
