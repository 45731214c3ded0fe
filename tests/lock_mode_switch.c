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
 * The first MPI_Win_lock_all of a window while exclusive locks are held.
 * newrma's exclusive lockers announce themselves to lock_all callers only
 * from a window's first lock_all on; that first call waits out the writers
 * that did not announce.  On a new window of every flavor:
 *  - rank 0 takes an exclusive lock on one of ranks 0 and 1, then tells rank
 *    1 (a message), which calls MPI_Win_lock_all: it must wait;
 *  - meanwhile (after a pause, so rank 1 is inside lock_all) rank 0 takes a
 *    second exclusive lock, on the other one, while holding the first -- it
 *    must not wait for rank 1's lock_all (which waits for it: a deadlock) --
 *    writes a value to both targets, and releases the first, then the
 *    second.  Both orders: lock_all must not deadlock with a program
 *    holding several locks whatever their order (the active-message path's
 *    window protocol once waited for its locks in rank order while holding
 *    the ones it had, and deadlocked with the decreasing order);
 *  - rank 1's lock_all epoch must see, at each target, the value or nothing
 *    (it may only begin after the exclusive lock there ended -- or before it
 *    was really taken, where locks are lazy), and lock_all and exclusive locks still
 *    exclude each other afterwards: rank 1 holds lock_all and reads a word
 *    twice, 20 ms apart, while rank 0 tries to lock and write it.
 * The other ranks take part in the collectives only.  A watchdog turns a
 * deadlock into a failure.
 *
 * newrma-test: np>=2
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

static void watchdog(int sig)
{
    (void) sig;
    static const char msg[] = "lock_mode_switch: deadlock (watchdog)\n";
    if (write(2, msg, sizeof(msg) - 1)) {}
    _exit(1);
}

static void one_flavor(int flavor, int rank, int first_lock)
{
    test_win_t tw;
    const int64_t value = 1000 + flavor;
    int64_t got[2] = { -1, -1 }, again = -1;
    int go = 0;

    test_win_create(&tw, flavor, 64, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    if (0 == rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, first_lock, 0, tw.win));
        MPI_Send(&go, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        usleep(50000);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1 - first_lock, 0, tw.win));
        MPI_OK(MPI_Put(&value, 1, MPI_INT64_T, 1, test_disp(&tw, 1, 0, 8), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Put(&value, 1, MPI_INT64_T, 0, test_disp(&tw, 0, 0, 8), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(first_lock, tw.win));
        MPI_OK(MPI_Win_unlock(1 - first_lock, tw.win));
    } else if (1 == rank) {
        MPI_Recv(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        for (int t = 0; t < 2; ++t)
            MPI_OK(MPI_Get(&got[t], 1, MPI_INT64_T, t, test_disp(&tw, t, 0, 8), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock_all(tw.win));
        /* at each target, before or after rank 0's epoch there, never in
         * between: a lock may be taken lazily (at the first operation or
         * the unlock, as on the active-message path), so "before" is legal
         * too, and MPI's locks order accesses per target, not across them
         * (the active-message path's lock_all may hold its shared locks in
         * turn rather than all at once) */
        for (int t = 0; t < 2; ++t)
            CHECK(0 == got[t] || value == got[t], "%s window: lock_all read %lld at rank %d, expected 0 or %lld",
                  flavor_names[flavor], (long long) got[t], t, (long long) value);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* afterwards: lock_all (rank 1) and an exclusive lock (rank 0) still exclude each other */
    if (1 == rank) {
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        MPI_Send(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_OK(MPI_Get(&got[0], 1, MPI_INT64_T, 0, test_disp(&tw, 0, 0, 8), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
        usleep(20000);
        MPI_OK(MPI_Get(&again, 1, MPI_INT64_T, 0, test_disp(&tw, 0, 0, 8), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock_all(tw.win));
        CHECK(got[0] == again, "%s window: a word changed inside a lock_all epoch (%lld, then %lld)",
              flavor_names[flavor], (long long) got[0], (long long) again);
    } else if (0 == rank) {
        const int64_t later = value + 1;
        MPI_Recv(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw.win));
        MPI_OK(MPI_Put(&later, 1, MPI_INT64_T, 0, test_disp(&tw, 0, 0, 8), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock(0, tw.win));
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    int rank;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    signal(SIGALRM, watchdog);
    alarm(90);
    /* either lock order: rank 0 holds its own lock first, or rank 1's */
    for (int first_lock = 0; first_lock < 2; ++first_lock)
        for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) one_flavor(flavor, rank, first_lock);
    alarm(0);
    return test_finalize("lock_mode_switch");
}
