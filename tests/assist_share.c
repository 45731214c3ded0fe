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
 * Shared copies (osc_newrma_shared_copy.c): on create
 * and dynamic windows a large contiguous put or get to a target that is
 * inside MPI is copied by both processes, chunk by chunk, each taking the
 * next chunk in turn.  Every byte must land exactly once and in its place,
 * whoever copied it, whatever the length (not a multiple of the chunk or
 * of a page) and the displacement (unaligned), in every sync mode:
 *   1. one origin at a time while everyone else, the target included,
 *      waits in MPI_Barrier (the target joins): lock/unlock puts, gets
 *      with flush, flush_local, and request-based puts/gets;
 *   2. fence epochs where every rank puts to and gets from its neighbours
 *      at once (targets busy with their own copies: mixed);
 *   3. the target computing outside MPI (it does not join: the origin
 *      copies alone and withdraws its request), then checking.  Only on
 *      the single-copy path, where shared copies live: the active-message
 *      path (remote and fifo modes) needs the target's progress for any
 *      passive-target operation; phases 1 and 2 run there too.
 * With the default osc_newrma_assist_share_bytes and a core per rank, phase
 * 1 must have had bytes copied by the target (MPI_T
 * osc_newrma_shared_copy_bytes) in an operation after the first shared one,
 * else the test is not testing the path (or a shared copy left the mailbox
 * unusable).
 * Phase 4 does the same for large accumulates and get_accumulates, whose
 * chunks a target inside MPI reduces in place (sums from every origin at
 * once, and old values, checked exactly).
 * Phase 5: every rank puts to and gets from its right neighbour at once,
 * under lock/unlock (transfers crossing; a hang if their waits nest).
 * Phase 0 checks the threshold in use (osc_newrma_assist_share_bytes, 1 MiB
 * by default): a put one byte short of it is never shared, puts of exactly
 * it are (one of up to 16 tries).
 *
 * Relays (osc_newrma_relay_piece_bytes) are off here, so that the counter
 * counts shared copies only.  tests/assist_relay.c runs this file to check
 * that none of these transfers is ever relayed (ASSIST_* below).
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_piece_bytes:0
 */
#include "common.h"

#ifndef ASSIST_COUNTER
#define ASSIST_NAME "assist_share"
#define ASSIST_COUNTER "osc_newrma_shared_copy_bytes"   /* bytes the target took part in */
#define ASSIST_THRESHOLD "osc_newrma_assist_share_bytes"
#define ASSIST_THRESHOLD_VALUE (1024 * 1024)           /* its default */
#define ASSIST_ACC_SHARED 1                             /* large accumulates are shared too */
#endif
#ifndef ASSIST_NEVER
#define ASSIST_NEVER 0   /* 1: ASSIST_COUNTER must stay at 0 (a mechanism these transfers never take) */
#endif

#include <time.h>

#define BIG (3 * 1024 * 1024 + 1000)  /* bytes a transfer moves: no multiple of a chunk or a page */
#define SKEW 17                       /* unaligned target displacement */
#define SPAN (BIG + 64)               /* window bytes per rank */
#define RETRY_S 2.0                   /* tries at a shared copy go on this long after 16 */

static unsigned char pattern(int who, int round, size_t i)
{
    return (unsigned char) (who * 31 + round * 7 + i * 13 + (i >> 12));
}

static void fill(unsigned char *buf, int who, int round)
{
    for (size_t i = 0 ; i < BIG ; ++i) buf[i] = pattern(who, round, i);
}

/* last wrong byte, or -1.  From the end: chunks are taken in order, so a
 * get's last chunk -- the one a target may still be writing if the origin
 * did not wait for it -- is read first, microseconds after the call. */
static long mismatch(const unsigned char *buf, int who, int round)
{
    for (size_t i = BIG ; i-- > 0 ;)
        if (buf[i] != pattern(who, round, i)) return (long) i;
    return -1;
}

static void expect(const unsigned char *buf, int who, int round, const char *what, const char *flavor)
{
    long bad = mismatch(buf, who, round);
    CHECK(bad < 0, "%s: %s round %d: byte %ld is %d, expected %d", flavor, what, round, bad,
          bad < 0 ? 0 : buf[bad], bad < 0 ? 0 : pattern(who, round, (size_t) bad));
}

/* the target's window bytes written by round `round` */
static unsigned char *landing(const test_win_t *tw)
{
    return (unsigned char *) tw->mem + SKEW;
}

/* Shared operations, and those shared after the first one: a mailbox left
 * busy by a shared copy would allow a first and no later one. */
typedef struct {
    int ops, shared, after_first;
} share_count_t;

/* Did the target copy part of the last operation? */
static void count_shared(test_pvar_t *pv, unsigned long long *last, share_count_t *c)
{
    unsigned long long now = test_pvar_read(pv);
    c->after_first += now > *last && c->shared > 0;
    c->shared += now > *last;
    c->ops++;
    *last = now;
}

/* Phase 1: origin `o` moves BIG bytes to / from rank 0 while the others wait
 * in MPI.  Four operations: lock put, flush get, flush_local rput, rget;
 * then up to 16 more puts until one is shared after the first shared one
 * (a target in a barrier joins most copies, not all: its progress loop may
 * be elsewhere for a whole copy's duration), and more within RETRY_S only
 * if `share_expected` (the run then fails without one; where it does not,
 * the time would buy nothing checked).  Counts into *c (origin `o`). */
static void one_origin(test_win_t *tw, unsigned char *buf, int o, int round, test_pvar_t *pv, share_count_t *c,
                       int share_expected, const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, SKEW, 1);
    MPI_Request req;
    unsigned long long last = test_pvar_read(pv);

    /* put under lock/unlock: rank 0 checks */
    if (o == test_rank) {
        fill(buf, o, round);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        MPI_OK(MPI_Put(buf, BIG, MPI_BYTE, 0, disp, BIG, MPI_BYTE, tw->win));
        MPI_OK(MPI_Win_unlock(0, tw->win));
        count_shared(pv, &last, c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        expect(landing(tw), o, round, "put", flavor);
        /* the next get reads what rank 0 writes now */
        fill(landing(tw), 0, round + 1);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* get with flush, then a request-based put with flush_local */
    if (o == test_rank) {
        memset(buf, 0, BIG);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        MPI_OK(MPI_Get(buf, BIG, MPI_BYTE, 0, disp, BIG, MPI_BYTE, tw->win));
        MPI_OK(MPI_Win_flush(0, tw->win));
        count_shared(pv, &last, c);
        expect(buf, 0, round + 1, "get", flavor);
        fill(buf, o, round + 2);
        last = test_pvar_read(pv);
        MPI_OK(MPI_Rput(buf, BIG, MPI_BYTE, 0, disp, BIG, MPI_BYTE, tw->win, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Win_flush_local(0, tw->win));
        count_shared(pv, &last, c);
        memset(buf, 0, BIG);
        MPI_OK(MPI_Win_flush(0, tw->win));
        MPI_OK(MPI_Rget(buf, BIG, MPI_BYTE, 0, disp, BIG, MPI_BYTE, tw->win, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        count_shared(pv, &last, c);
        expect(buf, o, round + 2, "rput then rget", flavor);
        /* 16 tries, or more within RETRY_S: a target whose core was taken
         * for a while (other jobs on the machine) stamps no presence then */
        double start = test_now_s();
        for (int k = 0 ; 0 == c->after_first && (k < 16 || (share_expected && test_now_s() - start < RETRY_S)) ;
             ++k) {
            MPI_OK(MPI_Put(buf, BIG, MPI_BYTE, 0, disp, BIG, MPI_BYTE, tw->win));
            MPI_OK(MPI_Win_flush(0, tw->win));
            count_shared(pv, &last, c);
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        expect(landing(tw), o, round + 2, "rput", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Phase 0: origin 1 puts `from` - 1 bytes (never shared), then `from` bytes
 * until one is shared, while rank 0 waits in MPI; rank 0 checks the last. */
static void threshold_live(test_win_t *tw, unsigned char *buf, size_t from, test_pvar_t *pv, const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, SKEW, 1);
    unsigned long long last;
    share_count_t below = { 0, 0, 0 }, at = { 0, 0, 0 };

    if (1 == test_rank) {
        fill(buf, 1, 5);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        last = test_pvar_read(pv);
        MPI_OK(MPI_Put(buf, (int) from - 1, MPI_BYTE, 0, disp, (int) from - 1, MPI_BYTE, tw->win));
        MPI_OK(MPI_Win_flush(0, tw->win));
        count_shared(pv, &last, &below);
        double start = test_now_s();
        for (int k = 0 ; 0 == at.shared && (k < 16 || test_now_s() - start < RETRY_S) ; ++k) {
            MPI_OK(MPI_Put(buf, (int) from, MPI_BYTE, 0, disp, (int) from, MPI_BYTE, tw->win));
            MPI_OK(MPI_Win_flush(0, tw->win));
            count_shared(pv, &last, &at);
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
        CHECK(0 == below.shared, "%s: a put of %zu bytes (threshold %zu) was shared", flavor, from - 1, from);
        CHECK(at.shared > 0, "%s: none of %d puts of %zu bytes (the threshold) was shared", flavor, at.ops, from);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        for (size_t i = 0 ; i < from ; ++i) {
            if (landing(tw)[i] != pattern(1, 5, i)) {
                CHECK(0, "%s: threshold put: byte %zu is %d, expected %d", flavor, i, landing(tw)[i],
                      pattern(1, 5, i));
                break;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Phase 2: everyone puts to its right neighbour and gets from its left one
 * in the same fence epochs. */
static void all_at_once(test_win_t *tw, unsigned char *buf, unsigned char *got, int size, int round,
                        const char *flavor)
{
    int right = (test_rank + 1) % size, left = (test_rank + size - 1) % size;

    fill(buf, test_rank, round);
    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Put(buf, BIG, MPI_BYTE, right, test_disp(tw, right, SKEW, 1), BIG, MPI_BYTE, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    expect(landing(tw), left, round, "fence put", flavor);
    memset(got, 0, BIG);
    MPI_OK(MPI_Get(got, BIG, MPI_BYTE, left, test_disp(tw, left, SKEW, 1), BIG, MPI_BYTE, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    /* left's window holds what left-of-left put there */
    expect(got, (left + size - 1) % size, round, "fence get", flavor);
    MPI_OK(MPI_Win_fence(0, tw->win));
}

/* Phase 3: rank 0 computes outside MPI until every origin has put and said
 * so; origins copy alone, one after another (they write the same bytes). */
static unsigned char *computing_buf;

static void put_to_computing(test_win_t *tw, int origin, int round)
{
    fill(computing_buf, origin, round);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    MPI_OK(MPI_Put(computing_buf, BIG, MPI_BYTE, 0, test_disp(tw, 0, SKEW, 1), BIG, MPI_BYTE, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
}

static void target_computing(test_win_t *tw, unsigned char *buf, int size, int round, MPI_Comm origins,
                             const char *flavor)
{
    computing_buf = buf;
    test_target0_computing(tw, SPAN - 8, origins, put_to_computing, round, flavor);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        expect(landing(tw), size - 1, round, "put to a computing target", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
}

/* Phase 4: large accumulates (int64 sums into rank 0's window at ACC_AT):
 * shared with a target inside MPI, which reduces its chunks in place while
 * the origin holds the span's stripes.  First origin 1 alone, until one was
 * shared (up to 16; needed when sharing is expected), then every origin at
 * once, 3 each (their spans overlap: each must apply whole, none lost,
 * none twice).  Sums are exact, so any chunk lost, doubled or reduced
 * twice shows in rank 0's check. */
#define ACC_AT 64
#define ACC_N ((BIG - ACC_AT) / 8)

static int64_t acc_value(int origin, size_t i)
{
    return (int64_t) origin * 1000 + (int64_t) (i % 1013) - 500;
}

/* rank 0's window after origin 1 added its values `ones` times and every
 * origin 3 times, then origin 1 `more` times */
static int64_t acc_sum(size_t i, int ones, int more, int size)
{
    int64_t want = (ones + more) * acc_value(1, i);
    for (int o = 1 ; o < size ; ++o) want += 3 * acc_value(o, i);
    return want;
}

static void check_sums(const int64_t *window, int ones, int more, int size, const char *what, const char *flavor)
{
    for (size_t i = 0 ; i < ACC_N ; ++i) {
        if (window[i] != acc_sum(i, ones, more, size)) {
            CHECK(0, "%s: %s: element %zu is %lld, expected %lld", flavor, what, i, (long long) window[i],
                  (long long) acc_sum(i, ones, more, size));
            return;
        }
    }
}

/* Then origin 1 get_accumulates its values until one was shared (up to
 * 16), each time checking the old values it got (the target writes those
 * of its chunks into our result buffer); rank 0 checks the sums. */
static void get_accumulate_large(test_win_t *tw, const int64_t *mine, int ones, int size, test_pvar_t *pv,
                                 int share_expected, const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, ACC_AT, 1);
    int more = 0, shared = 0;

    if (1 == test_rank) {
        int64_t *old = malloc(ACC_N * sizeof(int64_t));
        unsigned long long last = test_pvar_read(pv);
        for (more = 0 ; more < 16 && (0 == more || !shared) ; ++more) {
            memset(old, 0, ACC_N * sizeof(int64_t));
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            MPI_OK(MPI_Get_accumulate(mine, ACC_N, MPI_INT64_T, old, ACC_N, MPI_INT64_T, 0, disp, ACC_N,
                                      MPI_INT64_T, MPI_SUM, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            shared = test_pvar_read(pv) > last;
            check_sums(old, ones, more, size, "get_accumulate's old values", flavor);
        }
        CHECK(!share_expected || shared, "%s: none of %d large get_accumulates was shared with the target", flavor,
              more);
        free(old);
    }
    MPI_Bcast(&more, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        check_sums((const int64_t *) ((char *) tw->mem + ACC_AT), ones, more, size, "get_accumulate", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void accumulate_large(test_win_t *tw, int size, test_pvar_t *pv, int share_expected, const char *flavor)
{
    int64_t *mine = malloc(ACC_N * sizeof(int64_t)), *window = (int64_t *) ((char *) tw->mem + ACC_AT);
    MPI_Aint disp = test_disp(tw, 0, ACC_AT, 1);
    int alone = 0, shared_alone = 0;

    for (size_t i = 0 ; i < ACC_N ; ++i) mine[i] = acc_value(test_rank, i);
    if (0 == test_rank) memset(window, 0, ACC_N * sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == test_rank) {
        unsigned long long last = test_pvar_read(pv);
        for (alone = 0 ; alone < 16 && (0 == alone || !shared_alone) ; ++alone) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            MPI_OK(MPI_Accumulate(mine, ACC_N, MPI_INT64_T, 0, disp, ACC_N, MPI_INT64_T, MPI_SUM, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            shared_alone = test_pvar_read(pv) > last;
        }
        CHECK(!share_expected || shared_alone, "%s: none of %d large accumulates was shared with the target", flavor,
              alone);
    }
    MPI_Bcast(&alone, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (0 != test_rank) {
        for (int r = 0 ; r < 3 ; ++r) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            MPI_OK(MPI_Accumulate(mine, ACC_N, MPI_INT64_T, 0, disp, ACC_N, MPI_INT64_T, MPI_SUM, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        check_sums(window, alone, 0, size, "accumulate", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    get_accumulate_large(tw, mine, alone, size, pv, share_expected, flavor);
    free(mine);
}

/* Phase 5: every rank moves BIG bytes to its right neighbour and back at
 * the same moment, under lock/unlock: each process is the origin of one
 * large transfer and the target of another at once -- two relays (or
 * shared copies) crossing, whose waits must not take each other's requests
 * from inside their own (each would then wait on the other: a hang, which
 * mpich's put_bottom once showed). */
static void crossing(test_win_t *tw, unsigned char *buf, int size, int round0, const char *flavor)
{
    int right = (test_rank + 1) % size, left = (test_rank + size - 1) % size;
    MPI_Aint disp = test_disp(tw, right, SKEW, 1);

    for (int r = round0 ; r < round0 + 6 ; ++r) {
        fill(buf, test_rank, r);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw->win));
        MPI_OK(MPI_Put(buf, BIG, MPI_BYTE, right, disp, BIG, MPI_BYTE, tw->win));
        MPI_OK(MPI_Win_unlock(right, tw->win));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, test_rank, 0, tw->win));
        expect(landing(tw), left, r, "crossing put", flavor);
        MPI_OK(MPI_Win_unlock(test_rank, tw->win));
        MPI_Barrier(MPI_COMM_WORLD);
        /* the right neighbour's window now holds our pattern of round r */
        memset(buf, 0, BIG);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw->win));
        MPI_OK(MPI_Get(buf, BIG, MPI_BYTE, right, disp, BIG, MPI_BYTE, tw->win));
        MPI_OK(MPI_Win_unlock(right, tw->win));
        expect(buf, test_rank, r, "crossing get", flavor);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void run(int flavor, int size, int share_expected)
{
    unsigned long long from;
    const char *name = flavor_names[flavor];
    unsigned char *buf = malloc(BIG), *got = malloc(BIG);
    unsigned long long shared;
    share_count_t count = { 0, 0, 0 };
    test_pvar_t pv;
    test_win_t tw;
    MPI_Comm others;

    /* the origins of phase 3 synchronize among themselves */
    MPI_Comm_split(MPI_COMM_WORLD, 0 == test_rank, test_rank, &others);
    test_win_create(&tw, flavor, SPAN, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    from = test_cvar_u64(ASSIST_THRESHOLD);
    CHECK(ASSIST_THRESHOLD_VALUE == from, "%s: %s is %llu, not %llu", name, ASSIST_THRESHOLD, from,
          (unsigned long long) ASSIST_THRESHOLD_VALUE);
    share_expected = share_expected && !ASSIST_NEVER;
    test_pvar_open(&pv, ASSIST_COUNTER);
    unsigned long long never = test_pvar_read(&pv);
    if (share_expected) threshold_live(&tw, buf, (size_t) from, &pv, name);
    shared = test_pvar_read(&pv);
    for (int o = 1 ; o < size ; ++o) one_origin(&tw, buf, o, 10 * o, &pv, &count, share_expected, name);
    shared = test_pvar_read(&pv) - shared;
    MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &count, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(!share_expected || count.after_first > 0, "%s: targets inside MPI helped with %d of %d large operations, "
          "none after the first", name, count.shared, count.ops);
    if (0 == test_rank) printf("%s: %llu bytes copied by targets inside MPI, %d of %d operations shared\n", name,
                               shared, count.shared, count.ops);

    accumulate_large(&tw, size, &pv, share_expected && ASSIST_ACC_SHARED, name);

    test_fence_rounds(&tw, all_at_once, buf, got, size, 50, 3, name);
    crossing(&tw, buf, size, 70, name);
    if (!test_am_path(flavor)) target_computing(&tw, buf, size, 90, others, name);
    never = test_pvar_read(&pv) - never;
    CHECK(!ASSIST_NEVER || 0 == never, "%s: %llu bytes counted in %s, which these transfers never take", name,
          never, ASSIST_COUNTER);
    test_assist_cleanup(&tw, &others, &pv, buf, got);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, ASSIST_NAME, run);
}
