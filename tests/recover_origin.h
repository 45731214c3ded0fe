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
 * An origin's own single copy failing part-way (docs/errors.md, "Failure
 * points"): the body of the tests recover_<point>.c for the origin's
 * points, each of which arms its point at the first copy
 * (osc_newrma_fail_at = POINT:1) and says what it does (RECOVER_KIND).
 * Nobody can finish such an operation for the origin, so it must fail
 * with an error class (the window's handler: MPI_ERRORS_RETURN) having
 * applied nothing twice, and the window must go on: the next operations
 * (and the mailbox, for shared copies) work and are exact.
 *
 * Rank 0 is the target, waiting in MPI_Barrier (on the single-copy path
 * computing outside MPI, but for RECOVER_MOVE); every other rank in turn
 * works on its own region of rank 0's window (no two ranks' data overlap):
 *   RECOVER_MOVE: a put until it fails (a target in MPI may take every
 *     chunk of a shared one), a put of another pattern, a get back;
 *   RECOVER_ACC: an accumulate of int64 v1 (it fails), one of v2, a
 *     get_accumulate of v3 and a fetch_and_op of v4 on the first element:
 *     each element must hold v1 + v2 or v2 after the second (never 2 v1),
 *     the old values the get_accumulate returns must say which, and the
 *     fetch_and_op's old value must follow from them;
 *   RECOVER_CAS: compare_and_swap increments by 5 until one fails (the
 *     first, unless the target served it from its mailbox), the element
 *     then holds the old or the new value (never a torn mix), and the next
 *     compare_and_swap is exact.
 * On the single-copy path the failure must have been injected (MPI_T
 * osc_newrma_fail_injected) and returned; a count per process, so it
 * lands in the first window (create); the dynamic one runs unfailed.
 */
#include "common.h"

enum { RECOVER_MOVE, RECOVER_ACC, RECOVER_CAS };

#ifndef RECOVER_BYTES
#define RECOVER_BYTES (1024 * 1024 + 4096)   /* an origin's region at rank 0 */
#endif
#define RECOVER_N (RECOVER_BYTES / 8)

static int64_t value(int origin, int which, size_t i)
{
    return (int64_t) origin * 100000 + which * 1000 + (int64_t) (i % 997);
}

/* Did the first operation fail as it had to (injected) or succeed (not)? */
static void check_first(int rc, unsigned long long injected, const char *what, const char *flavor)
{
    int cls = MPI_SUCCESS;

    MPI_Error_class(rc, &cls);
    CHECK(injected ? MPI_SUCCESS != cls : MPI_SUCCESS == cls, "%s: %s with %llu failures injected returned class %d",
          flavor, what, injected, cls);
}

static void move_once(test_win_t *tw, MPI_Aint disp, int64_t *buf, int which, int *rc)
{
    for (size_t i = 0 ; i < RECOVER_N ; ++i) buf[i] = value(test_rank, which, i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    *rc = MPI_Put(buf, RECOVER_N, MPI_INT64_T, 0, disp, RECOVER_N, MPI_INT64_T, tw->win);
    MPI_OK(MPI_Win_unlock(0, tw->win));
}

/* The first put again until it fails (up to 16 times; the same bytes
 * each time): a target in MPI may take every chunk of a shared one. */
static void origin_move(test_win_t *tw, MPI_Aint disp, int64_t *buf, test_pvar_t *pv, const char *flavor)
{
    unsigned long long injected = 0;
    int rc;

    for (int k = 0 ; k < 16 && 0 == injected ; ++k) {
        unsigned long long before = test_pvar_read(pv);
        move_once(tw, disp, buf, 1, &rc);
        injected = test_pvar_read(pv) - before;
        check_first(rc, injected, "the first put", flavor);
    }
    move_once(tw, disp, buf, 2, &rc);
    MPI_OK(rc);
    memset(buf, 0, RECOVER_BYTES);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    MPI_OK(MPI_Get(buf, RECOVER_N, MPI_INT64_T, 0, disp, RECOVER_N, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
    for (size_t i = 0 ; i < RECOVER_N ; ++i) {
        if (buf[i] != value(test_rank, 2, i)) {
            CHECK(0, "%s: after the failed put: element %zu is %lld, expected %lld", flavor, i, (long long) buf[i],
                  (long long) value(test_rank, 2, i));
            break;
        }
    }
}

static void acc_once(test_win_t *tw, MPI_Aint disp, int64_t *buf, int which, int *rc)
{
    for (size_t i = 0 ; i < RECOVER_N ; ++i) buf[i] = value(test_rank, which, i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    *rc = MPI_Accumulate(buf, RECOVER_N, MPI_INT64_T, 0, disp, RECOVER_N, MPI_INT64_T, MPI_SUM, tw->win);
    MPI_OK(MPI_Win_unlock(0, tw->win));
}

static void origin_acc(test_win_t *tw, MPI_Aint disp, int64_t *buf, test_pvar_t *pv, const char *flavor)
{
    int64_t *old = malloc(RECOVER_BYTES), v4 = value(test_rank, 4, 0), fop_old = -1;
    unsigned long long before = test_pvar_read(pv), injected;
    int rc;

    acc_once(tw, disp, buf, 1, &rc);
    injected = test_pvar_read(pv) - before;
    check_first(rc, injected, "the first accumulate", flavor);
    acc_once(tw, disp, buf, 2, &rc);
    MPI_OK(rc);
    for (size_t i = 0 ; i < RECOVER_N ; ++i) buf[i] = value(test_rank, 3, i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    MPI_OK(MPI_Get_accumulate(buf, RECOVER_N, MPI_INT64_T, old, RECOVER_N, MPI_INT64_T, 0, disp, RECOVER_N,
                              MPI_INT64_T, MPI_SUM, tw->win));
    MPI_OK(MPI_Win_flush(0, tw->win));
    MPI_OK(MPI_Fetch_and_op(&v4, &fop_old, MPI_INT64_T, 0, disp, MPI_SUM, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
    for (size_t i = 0 ; i < RECOVER_N ; ++i) {
        int64_t twice = value(test_rank, 1, i) + value(test_rank, 2, i), once = value(test_rank, 2, i);
        /* without a failure the first must be there, with one at most once */
        if (!(old[i] == twice || (injected && old[i] == once))) {
            CHECK(0, "%s: after the failed accumulate: element %zu is %lld, expected %lld%s", flavor, i,
                  (long long) old[i], (long long) twice, injected ? " or without the failed one" : "");
            break;
        }
    }
    CHECK(fop_old == old[0] + value(test_rank, 3, 0), "%s: fetch_and_op's old value %lld, expected %lld", flavor,
          (long long) fop_old, (long long) (old[0] + value(test_rank, 3, 0)));
    free(old);
}

/* Compare-and-swap increments by 5 until one meets the failure point (the
 * first may not: a target still inside MPI as it leaves the barrier serves
 * it from its mailbox, and the point is met by a single copy), then one
 * exact compare_and_swap.  A failed one changed the element or not. */
static void origin_cas(test_win_t *tw, MPI_Aint disp, test_pvar_t *pv, const char *flavor)
{
    int64_t cur = 0, next, got = -1, now = -1;
    unsigned long long before = test_pvar_read(pv), injected = 0;
    int rc;

    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    for (int attempt = 0 ; attempt < 3 && 0 == injected ; ++attempt) {
        next = cur + 5;
        rc = MPI_Compare_and_swap(&next, &cur, &got, MPI_INT64_T, 0, disp, tw->win);
        MPI_OK(MPI_Win_flush(0, tw->win));
        injected = test_pvar_read(pv) - before;
        check_first(rc, injected, "a compare_and_swap", flavor);
        if (0 == injected) {
            CHECK(got == cur, "%s: compare_and_swap found %lld, expected %lld", flavor, (long long) got,
                  (long long) cur);
            cur = next;
        }
    }
    if (injected) {
        MPI_OK(MPI_Get(&now, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_flush(0, tw->win));
        CHECK(now == cur || now == cur + 5, "%s: the element is %lld after the failed compare_and_swap from %lld",
              flavor, (long long) now, (long long) cur);
        cur = now;
    }
    next = cur + 2;
    MPI_OK(MPI_Compare_and_swap(&next, &cur, &got, MPI_INT64_T, 0, disp, tw->win));
    MPI_OK(MPI_Win_flush(0, tw->win));
    MPI_OK(MPI_Get(&now, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
    CHECK(got == cur, "%s: compare_and_swap after the failed one found %lld, expected %lld", flavor,
          (long long) got, (long long) cur);
    CHECK(now == next, "%s: the element is %lld after compare_and_swap found %lld", flavor, (long long) now,
          (long long) got);
}

/* what test_target0_computing has each origin do: accumulates or
 * compare_and_swaps, which a target computing outside MPI neither takes
 * from its mailbox nor shares (the origin does them by single copy) */
static test_pvar_t *work_pv;
static int64_t *work_buf;

static void alone_work(test_win_t *tw, int origin, int round)
{
    MPI_Aint disp = test_disp(tw, 0, (MPI_Aint) (origin - 1) * RECOVER_BYTES, 1);

    (void) round;
    if (RECOVER_ACC == RECOVER_KIND) origin_acc(tw, disp, work_buf, work_pv, flavor_names[tw->flavor]);
    if (RECOVER_CAS == RECOVER_KIND) origin_cas(tw, disp, work_pv, flavor_names[tw->flavor]);
}

static void run(int flavor, int size, int expected)
{
    const char *name = flavor_names[flavor];
    MPI_Aint counter_at = (MPI_Aint) (size - 1) * RECOVER_BYTES;
    int64_t *buf = malloc(RECOVER_BYTES);
    unsigned long long injected;
    test_pvar_t pv;
    test_win_t tw;
    MPI_Comm origins;

    (void) expected;
    MPI_Comm_split(MPI_COMM_WORLD, 0 == test_rank, test_rank, &origins);
    test_win_create(&tw, flavor, (size_t) counter_at + 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    test_pvar_open(&pv, "osc_newrma_fail_injected");
    injected = test_pvar_read(&pv);
    work_pv = &pv;
    work_buf = buf;
    /* single copy for certain: a target in MPI would apply a
     * compare_and_swap from its mailbox, and could take every chunk of a
     * shared accumulate (active messages need the target's progress) */
    int computing = RECOVER_MOVE != RECOVER_KIND && !test_am_path(flavor);
    if (computing) {
        test_target0_computing(&tw, counter_at, origins, alone_work, 0, name);
    }
    /* one origin at a time: another's shared copy would keep the mailbox
     * busy, and the operation would go by single copy, untested */
    for (int o = 1 ; o < size && !computing ; ++o) {
        if (o == test_rank) {
            MPI_Aint disp = test_disp(&tw, 0, (MPI_Aint) (o - 1) * RECOVER_BYTES, 1);
            if (RECOVER_MOVE == RECOVER_KIND) origin_move(&tw, disp, buf, &pv, name);
            if (RECOVER_ACC == RECOVER_KIND) origin_acc(&tw, disp, buf, &pv, name);
            if (RECOVER_CAS == RECOVER_KIND) origin_cas(&tw, disp, &pv, name);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    injected = test_pvar_close_total(&pv, injected);
    if (0 == test_rank) printf("%s: %s: failures injected at origins: %llu\n", name, RECOVER_NAME, injected);
    CHECK(test_am_path(flavor) || FLAVOR_DYNAMIC == flavor || injected == (unsigned long long) size - 1,
          "%s: %llu failures injected at %d origins: the point was not tested", name, injected, size - 1);
    test_win_free(&tw);
    MPI_Comm_free(&origins);
    free(buf);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, RECOVER_NAME, run);
}
