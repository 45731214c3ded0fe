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
 * MPI_Win_fence assertions, every window flavor:
 *  - every combination of MPI_MODE_NOPRECEDE, NOSUCCEED, NOSTORE and NOPUT
 *    on a fence, in a legal sequence around it: RMA before it only without
 *    NOPRECEDE, RMA after it only without NOSUCCEED, a local store to the own
 *    window before it only without NOSTORE, puts to a rank after it only if
 *    that rank did not assert NOPUT (NOSTORE and NOPUT are local: odd ranks
 *    assert the complement of even ranks).  Every fence that opens an epoch
 *    has NOPRECEDE; one rank arrives late at the fence under test, so an
 *    implementation that let an RMA call run ahead of a late target would
 *    read or overwrite the wrong values.  Values are checked after each
 *    fence that completes them;
 *  - an epoch opened with NOPRECEDE followed directly by an RMA call: the
 *    target stores values in its window just before the fence, after a delay;
 *    a get right after fence(NOPRECEDE) sees them, and a put right after it
 *    is not overwritten by them;
 *  - an epoch opened with NOPRECEDE in which only one rank does RMA, the
 *    others go straight to the closing fence and one target arrives late
 *    (having stored into the word the put writes just before its fence);
 *  - fence(NOPRECEDE) then fence(NOSUCCEED) with nothing in between, and
 *    fence(NOPRECEDE | NOSUCCEED) alone, several times; the window still
 *    moves data afterwards;
 *  - after a fence with NOSUCCEED: a lock epoch, a lock_all epoch and a PSCW
 *    epoch work;
 *  - fence(NOPRECEDE | NOSUCCEED) as the barrier before lock epochs: a late
 *    rank's stores just before it do not overwrite the puts made right after;
 *  - (newrma only) RMA after fence(NOSUCCEED) and after
 *    fence(NOPRECEDE | NOSUCCEED) returns MPI_ERR_RMA_SYNC and writes
 *    nothing.
 */
#include "common.h"

#include <unistd.h>

#define U ((int) sizeof(int64_t))
/* window words */
#define S_P1 0          /* put before the fence under test (from the left) */
#define S_STORE 1       /* a local store before the fence under test */
#define S_P2 2          /* put after the fence under test (from the left) */
#define S_LATE 3        /* a late target's local store */
#define S_ERR 4         /* never legally written */
#define S_LOCK 5        /* written in passive/PSCW epochs after NOSUCCEED */
#define S_IN 8          /* [size]: one word per origin */
#define WORDS(size) (S_IN + (size))

static int rank, size, right, left;
static const char *fn;

static int64_t val(int a, int origin, int slot)
{
    return (int64_t) (a + 1) * 1000003 + (int64_t) origin * 1009 + slot * 7 + 1;
}

static int is_newrma(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL != strstr(osc, "newrma");
}

/* NOSTORE / NOPUT are local: rank r asserts what A says if r is even, the
 * complement if odd. */
static int local_bits(int a, int r)
{
    int bits = a & (MPI_MODE_NOSTORE | MPI_MODE_NOPUT);
    return (r % 2) ? bits ^ (MPI_MODE_NOSTORE | MPI_MODE_NOPUT) : bits;
}

static int asserts_of(int combo, int r)
{
    int a = 0;
    if (combo & 1) a |= MPI_MODE_NOPRECEDE;
    if (combo & 2) a |= MPI_MODE_NOSUCCEED;
    if (combo & 4) a |= MPI_MODE_NOSTORE;
    if (combo & 8) a |= MPI_MODE_NOPUT;
    return (a & (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) | local_bits(a, r);
}

static int64_t read_own(test_win_t *tw, int slot)
{
    /* plain load after a fence that completed every access to it */
    return ((volatile int64_t *) tw->mem)[slot];
}

static void combinations(test_win_t *tw)
{
    volatile int64_t *mine = tw->mem;
    for (int combo = 0; combo < 16; ++combo) {
        int a = asserts_of(combo, rank);
        int a_right = asserts_of(combo, right);
        int late = combo % size;
        int64_t v, got = -1, got2 = -1;

        /* opening fence: nothing to complete (the previous fence closed
         * everything), and no local store since it (except the memset
         * after window creation before the first one) */
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | (combo ? MPI_MODE_NOSTORE : 0), tw->win));
        if (!(a & MPI_MODE_NOPRECEDE)) {
            v = val(combo, rank, S_P1);
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_P1, U), 1, MPI_INT64_T, tw->win));
        }
        if (rank == late) usleep(3000);
        if (!(a & MPI_MODE_NOSTORE)) mine[S_STORE] = val(combo, rank, S_STORE);

        MPI_OK(MPI_Win_fence(a, tw->win));      /* the fence under test */

        if (!(a & MPI_MODE_NOPRECEDE))
            CHECK(read_own(tw, S_P1) == val(combo, left, S_P1), "%s: asserts %#x: put before the fence: %lld, "
                  "expected %lld", fn, a, (long long) read_own(tw, S_P1), (long long) val(combo, left, S_P1));
        if (!(a & MPI_MODE_NOSUCCEED)) {
            /* the first RMA call after the fence (after fence(NOPRECEDE) it
             * must wait for the late rank) */
            MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_STORE, U), 1, MPI_INT64_T, tw->win));
            if (!(a & MPI_MODE_NOPRECEDE))
                MPI_OK(MPI_Get(&got2, 1, MPI_INT64_T, right, test_disp(tw, right, S_P1, U), 1, MPI_INT64_T,
                               tw->win));
            if (!(a_right & MPI_MODE_NOPUT)) {
                v = val(combo, rank, S_P2);
                MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_P2, U), 1, MPI_INT64_T, tw->win));
            }
            /* closing fence: RMA happened (no NOPRECEDE); no local store
             * since the fence under test; nothing follows */
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, tw->win));
            if (!(a_right & MPI_MODE_NOSTORE))
                CHECK(got == val(combo, right, S_STORE), "%s: asserts %#x: get of %d's local store: %lld, "
                      "expected %lld", fn, a, right, (long long) got, (long long) val(combo, right, S_STORE));
            if (!(a & MPI_MODE_NOPRECEDE))
                CHECK(got2 == val(combo, rank, S_P1), "%s: asserts %#x: get of my put: %lld, expected %lld", fn, a,
                      (long long) got2, (long long) val(combo, rank, S_P1));
            if (!(a & MPI_MODE_NOPUT))
                CHECK(read_own(tw, S_P2) == val(combo, left, S_P2), "%s: asserts %#x: put after the fence: %lld, "
                      "expected %lld", fn, a, (long long) read_own(tw, S_P2), (long long) val(combo, left, S_P2));
        } else if (!(a_right & MPI_MODE_NOSTORE)) {
            /* nothing after a NOSUCCEED fence: look at the store in an epoch
             * of its own */
            MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, tw->win));
            MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_STORE, U), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, tw->win));
            CHECK(got == val(combo, right, S_STORE), "%s: asserts %#x: get of %d's local store after NOSUCCEED: "
                  "%lld, expected %lld", fn, a, right, (long long) got, (long long) val(combo, right, S_STORE));
        } else {
            /* the matching collective call of the ranks above */
            MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, tw->win));
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, tw->win));
        }
    }
}

/* fence(NOPRECEDE) followed directly by RMA, with a late target. */
static void noprecede_first_rma(test_win_t *tw)
{
    volatile int64_t *mine = tw->mem;
    for (int late = 0; late < size; ++late) {
        int64_t got = -1, v = val(100 + late, rank, S_IN);
        if (rank == late) {
            usleep(20000);
            /* local stores just before the fence; the origins' puts to
             * S_IN must land after them */
            mine[S_LATE] = val(100 + late, rank, S_LATE);
            for (int o = 0; o < size; ++o) mine[S_IN + o] = -1;
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
        if (rank != late) {
            MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, late, test_disp(tw, late, S_LATE, U), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, late, test_disp(tw, late, S_IN + rank, U), 1, MPI_INT64_T, tw->win));
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
        if (rank != late) {
            CHECK(got == val(100 + late, late, S_LATE), "%s: get right after fence(NOPRECEDE) of late rank %d's "
                  "store: %lld, expected %lld", fn, late, (long long) got, (long long) val(100 + late, late, S_LATE));
        } else {
            for (int o = 0; o < size; ++o) {
                int64_t want = o == late ? -1 : val(100 + late, o, S_IN);
                CHECK(read_own(tw, S_IN + o) == want, "%s: late rank: put of %d right after fence(NOPRECEDE): "
                      "%lld, expected %lld", fn, o, (long long) read_own(tw, S_IN + o), (long long) want);
            }
        }
    }
    /* only one rank does RMA in an epoch opened with NOPRECEDE; the others
     * go straight to the closing fence, except the next rank, which arrives
     * late and stores into the word the put will write just before its
     * fence(NOPRECEDE) (the idle ranks' arrivals at the closing fence must
     * not count as the late rank's) */
    for (int who = 0; who < size; ++who) {
        int64_t v = val(200 + who, who, S_IN);
        if (rank == (who + 1) % size && rank != who) {
            usleep(20000);
            mine[S_IN + who] = -1;
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
        if (rank == who)
            for (int t = 0; t < size; ++t)
                MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, test_disp(tw, t, S_IN + who, U), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_fence(0, tw->win));
        CHECK(read_own(tw, S_IN + who) == v, "%s: put by %d alone in a NOPRECEDE epoch: %lld, expected %lld", fn,
              who, (long long) read_own(tw, S_IN + who), (long long) v);
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));   /* an empty epoch */
    }
}

/* Fences that open nothing, then the window still works. */
static void empty_pairs(test_win_t *tw)
{
    for (int i = 0; i < 3; ++i) {
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, tw->win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    }
    int64_t v = val(300, rank, S_P1), got = -1;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_P1, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, left, test_disp(tw, left, S_P1, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    CHECK(read_own(tw, S_P1) == val(300, left, S_P1), "%s: put after empty fences: %lld, expected %lld", fn,
          (long long) read_own(tw, S_P1), (long long) val(300, left, S_P1));
    CHECK(got == val(300, (left + size - 1) % size, S_P1), "%s: get after empty fences: %lld, expected %lld", fn,
          (long long) got, (long long) val(300, (left + size - 1) % size, S_P1));
}

/* After fence(NOSUCCEED): lock, lock_all and PSCW epochs. */
static void after_nosucceed(test_win_t *tw)
{
    int64_t v, got;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    v = val(400, rank, S_P1);
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_P1, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    /* a lock epoch right after: reads what the fence epoch wrote, writes */
    got = -1;
    v = val(401, rank, S_LOCK);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_P1, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_LOCK, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock(right, tw->win));
    CHECK(got == val(400, rank, S_P1), "%s: lock epoch after fence(NOSUCCEED): get %lld, expected %lld", fn,
          (long long) got, (long long) val(400, rank, S_P1));
    MPI_Barrier(MPI_COMM_WORLD);
    /* lock_all: read what the left neighbour's lock epoch wrote at my right */
    got = -1;
    MPI_OK(MPI_Win_lock_all(0, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_LOCK, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock_all(tw->win));
    CHECK(got == val(401, rank, S_LOCK), "%s: lock_all after fence(NOSUCCEED): get %lld, expected %lld", fn,
          (long long) got, (long long) val(401, rank, S_LOCK));
    MPI_Barrier(MPI_COMM_WORLD);
    /* a fence epoch closed with NOSUCCEED, then PSCW (ring) */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    MPI_Group wg, gl, gr;
    MPI_Win_get_group(tw->win, &wg);
    MPI_Group_incl(wg, 1, &left, &gl);
    MPI_Group_incl(wg, 1, &right, &gr);
    v = val(402, rank, S_LOCK);
    MPI_OK(MPI_Win_post(gl, 0, tw->win));
    MPI_OK(MPI_Win_start(gr, 0, tw->win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_LOCK, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_complete(tw->win));
    MPI_OK(MPI_Win_wait(tw->win));
    CHECK(read_own(tw, S_LOCK) == val(402, left, S_LOCK), "%s: PSCW after fence(NOSUCCEED): %lld, expected %lld",
          fn, (long long) read_own(tw, S_LOCK), (long long) val(402, left, S_LOCK));
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&wg);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* fence(NOPRECEDE | NOSUCCEED) as the barrier before a lock epoch (the
 * usual way to publish initial window contents): a late rank stores into
 * its window just before the fence, and the others' puts under a lock right
 * after it must land after that store, not be overwritten by it. */
static void nosucceed_then_lock(test_win_t *tw)
{
    volatile int64_t *mine = tw->mem;
    for (int late = 0; late < size; ++late) {
        int64_t v = val(500 + late, rank, S_IN);
        if (rank == late) {
            usleep(20000);
            for (int o = 0; o < size; ++o) mine[S_IN + o] = -1;
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
        if (rank != late) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, late, 0, tw->win));
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, late, test_disp(tw, late, S_IN + rank, U), 1, MPI_INT64_T, tw->win));
            MPI_OK(MPI_Win_unlock(late, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == late) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw->win));
            for (int o = 0; o < size; ++o) {
                int64_t want = o == late ? -1 : val(500 + late, o, S_IN);
                CHECK(mine[S_IN + o] == want, "%s: late rank: put of %d under a lock right after "
                      "fence(NOPRECEDE | NOSUCCEED): %lld, expected %lld", fn, o, (long long) mine[S_IN + o],
                      (long long) want);
            }
            MPI_OK(MPI_Win_unlock(rank, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* newrma: RMA outside any epoch after a NOSUCCEED fence is an error. */
static void rma_after_nosucceed(test_win_t *tw)
{
    int64_t v = 12345, got = -1;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_ERR, U), 1,
                                             MPI_INT64_T, tw->win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_ERR, U), 1,
                                             MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_ERR, U), 1,
                                             MPI_INT64_T, tw->win));
    /* a fence epoch with RMA, closed by NOSUCCEED, then RMA */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_ERR, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    MPI_FAILS_WITH(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, S_ERR, U), 1,
                                             MPI_INT64_T, tw->win));
    CHECK(0 == got, "%s: S_ERR of %d is %lld", fn, right, (long long) got);
    /* nothing was written, and the window is usable */
    got = -1;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, test_disp(tw, right, S_ERR, U), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    CHECK(0 == got, "%s: a failed put after fence(NOSUCCEED) wrote %lld", fn, (long long) got);
    CHECK(0 == read_own(tw, S_ERR), "%s: my S_ERR is %lld", fn, (long long) read_own(tw, S_ERR));
}

static void run(int flavor)
{
    test_win_t tw;
    fn = flavor_names[flavor];
    test_win_create(&tw, flavor, (size_t) WORDS(size) * sizeof(int64_t), U, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    combinations(&tw);
    noprecede_first_rma(&tw);
    empty_pairs(&tw);
    after_nosucceed(&tw);
    nosucceed_then_lock(&tw);
    if (is_newrma()) rma_after_nosucceed(&tw);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("fence_asserts");
}
