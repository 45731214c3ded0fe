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
 * Notified RMA (docs/notified-rma.md) in active-target epochs, every window
 * flavor: fence epochs, then PSCW epochs (each rank exposes to its left
 * neighbour and accesses its right one) with the same checks.
 * On the memory path (newrma, every process on this node) and the message
 * path (newrma's active-message windows: across nodes, remote and fifo
 * modes, pretend nodes): inside one
 * epoch every rank puts ROUNDS blocks to its right neighbour with
 * MPIX_Put_notify and gets ROUNDS blocks from it with MPIX_Get_notify; the target waits for its counters *before* the closing
 * fence (or MPI_Win_wait) and checks every block counted is there: the notification is what
 * synchronizes, not the epoch.  After the epoch both counters are exactly
 * ROUNDS.  On the fallback (other components), which flushes the window:
 * where the component refuses that flush in an active epoch, the notified
 * call does nothing (after the closing call the target's memory and
 * counters are still 0), its error class is MPI_ERR_RMA_SYNC and the
 * window's error handler is called exactly once per refused call; a
 * component that accepts the flush (osc/sm) must have done and notified
 * the operation exactly once.
 * newrma-test: np>=1 links-mpix
 */
#include "notify_common.h"

#define ROUNDS 30
#define BLOCK 4

static int64_t pattern(int origin, int round, int i)
{
    return (int64_t) origin * 100003 + round * 17 + i + 1;
}

/* An active-target epoch of one kind: fence, or PSCW between neighbours
 * (I expose to my left neighbour, who puts to me and gets from me, and
 * access my right one) */
typedef enum { EPOCH_FENCE, EPOCH_PSCW } epoch_kind_t;

static void epoch_open(epoch_kind_t kind, MPI_Win win, int rank, int size)
{
    MPI_Group world, left_g, right_g;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    if (EPOCH_FENCE == kind) {
        MPI_OK(MPI_Win_fence(0, win));
        return;
    }
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &left_g);
    MPI_Group_incl(world, 1, &right, &right_g);
    MPI_OK(MPI_Win_post(left_g, 0, win));
    MPI_OK(MPI_Win_start(right_g, 0, win));
    MPI_Group_free(&left_g);
    MPI_Group_free(&right_g);
    MPI_Group_free(&world);
}

static void epoch_close(epoch_kind_t kind, MPI_Win win)
{
    if (EPOCH_FENCE == kind) {
        MPI_OK(MPI_Win_fence(0, win));
        return;
    }
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
}

static void notified_in_epoch(test_win_t *tw, epoch_kind_t kind, int rank, int size, const char *fl)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* words [0, ROUNDS * BLOCK): my left neighbour's puts; above: my own
     * blocks, which it gets */
    int64_t *mem = tw->mem, block[BLOCK], got[ROUNDS][BLOCK];

    for (int k = 0; k < ROUNDS; ++k)
        for (int i = 0; i < BLOCK; ++i) mem[(ROUNDS + k) * BLOCK + i] = pattern(rank, k, i) + 7;
    MPI_OK(MPIX_Win_notify_set_value(tw->win, 0, 0));
    MPI_OK(MPIX_Win_notify_set_value(tw->win, 1, 0));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    epoch_open(kind, tw->win, rank, size);
    for (int k = 0; k < ROUNDS; ++k) {
        for (int i = 0; i < BLOCK; ++i) block[i] = pattern(rank, k, i);
        MPI_OK(MPIX_Put_notify(block, BLOCK, MPI_INT64_T, right, test_disp(tw, right, k * BLOCK, 8), BLOCK,
                               MPI_INT64_T, tw->win, 0));
        MPI_OK(MPIX_Get_notify(got[k], BLOCK, MPI_INT64_T, right, test_disp(tw, right, (ROUNDS + k) * BLOCK, 8),
                               BLOCK, MPI_INT64_T, tw->win, 1));
    }
    for (MPI_Count seen = 0; seen < ROUNDS && !test_errors;) {
        seen = notify_counter(tw->win, 0);
        for (int k = 0; k < seen && k < ROUNDS; ++k)
            for (int i = 0; i < BLOCK; ++i)
                CHECK(__atomic_load_n(&mem[k * BLOCK + i], __ATOMIC_RELAXED) == pattern(left, k, i),
                      "%s: round %d word %d before the fence, %lld notified", fl, k, i, (long long) seen);
    }
    while (notify_counter(tw->win, 1) < ROUNDS && !test_errors) {
    }
    epoch_close(kind, tw->win);
    for (int k = 0; k < ROUNDS; ++k)
        for (int i = 0; i < BLOCK; ++i)
            CHECK(got[k][i] == pattern(right, k, i) + 7, "%s: got round %d word %d: %lld", fl, k, i,
                  (long long) got[k][i]);
    CHECK(notify_counter(tw->win, 0) == ROUNDS && notify_counter(tw->win, 1) == ROUNDS, "%s: counters %lld %lld", fl,
          (long long) notify_counter(tw->win, 0), (long long) notify_counter(tw->win, 1));
}

static int refusals_reported;

static void count_refusal(MPI_Win *win, int *code, ...)
{
    (void) win;
    (void) code;
    ++refusals_reported;
}

/* A notified call on the fallback: done (1) or refused (0); a refusal has
 * class MPI_ERR_RMA_SYNC */
static int fallback_call(int rc, const char *what, const char *fl)
{
    int cls = MPI_SUCCESS;

    MPI_Error_class(rc, &cls);
    CHECK(MPI_SUCCESS == rc || MPI_ERR_RMA_SYNC == cls, "%s: %s refused with class %d", fl, what, cls);
    return MPI_SUCCESS == rc;
}

/* The fallback flushes the window, which a fence epoch forbids: where the
 * component refuses that flush, the call is refused with MPI_ERR_RMA_SYNC
 * and does nothing.  A component that accepts it (osc/sm) completes the operation
 * by it, and the call must then have notified. */
static void fallback_in_epoch(test_win_t *tw, epoch_kind_t kind, int rank, int size, const char *fl)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int64_t block[BLOCK] = { 1, 2, 3, 4 }, got[BLOCK] = { 0 }, *mem = tw->mem;
    int done[2], left_done[2] = { -1, -1 };

    for (int i = 0; i < BLOCK; ++i) {
        mem[i] = 0;
        mem[BLOCK + i] = 10 + i;
    }
    MPI_OK(MPIX_Win_notify_set_value(tw->win, 0, 0));
    MPI_OK(MPIX_Win_notify_set_value(tw->win, 1, 0));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    MPI_Errhandler counting;

    MPI_Win_create_errhandler(count_refusal, &counting);
    MPI_OK(MPI_Win_set_errhandler(tw->win, counting));
    refusals_reported = 0;
    epoch_open(kind, tw->win, rank, size);
    done[0] = fallback_call(MPIX_Put_notify(block, BLOCK, MPI_INT64_T, right, test_disp(tw, right, 0, 8), BLOCK,
                                            MPI_INT64_T, tw->win, 0), "put", fl);
    done[1] = fallback_call(MPIX_Get_notify(got, BLOCK, MPI_INT64_T, right, test_disp(tw, right, BLOCK, 8), BLOCK,
                                            MPI_INT64_T, tw->win, 1), "get", fl);
    if (test_served_by_newrma(tw->win)) {
        CHECK(!done[0] && !done[1], "%s: newrma's fallback accepted a notified call in an active epoch", fl);
    }
    CHECK(refusals_reported == !done[0] + !done[1], "%s: error handler called %d times for %d refused calls", fl,
          refusals_reported, !done[0] + !done[1]);
    epoch_close(kind, tw->win);
    MPI_OK(MPI_Win_set_errhandler(tw->win, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&counting);
    /* my counters count my left neighbour's put and get */
    MPI_Sendrecv(done, 2, MPI_INT, right, 0, left_done, 2, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < BLOCK; ++i) {
        CHECK(mem[i] == (left_done[0] ? i + 1 : 0), "%s: word %d is %lld (put %s)", fl, i, (long long) mem[i],
              left_done[0] ? "done" : "refused");
        CHECK(got[i] == (done[1] ? 10 + i : 0), "%s: got word %d: %lld (get %s)", fl, i, (long long) got[i],
              done[1] ? "done" : "refused");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(notify_counter(tw->win, 0) == left_done[0] && notify_counter(tw->win, 1) == left_done[1],
          "%s: counters %lld %lld, expected %d %d", fl, (long long) notify_counter(tw->win, 0),
          (long long) notify_counter(tw->win, 1), left_done[0], left_done[1]);
}

int main(int argc, char **argv)
{
    int rank, size;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        const char *fl = flavor_names[flavor];
        test_win_t tw;
        int path = notify_win_open(&tw, flavor, 2 * ROUNDS * BLOCK * sizeof(int64_t), 2);

        for (epoch_kind_t kind = EPOCH_FENCE; kind <= EPOCH_PSCW; ++kind) {
            if (MPIX_NOTIFY_PATH_FALLBACK != path) {
                notified_in_epoch(&tw, kind, rank, size, fl);
            } else {
                fallback_in_epoch(&tw, kind, rank, size, fl);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        test_win_free(&tw);      /* MPI_Win_free drops the counters */
    }
    return test_finalize("notify_active");
}
