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
 * Readers and writers contending on the same targets, every window flavor.
 * Every rank's window holds a counter and a 32-word record.  For ROUNDS
 * rounds each rank picks (a PRNG seeded with its rank: the same choices in
 * every run) one of:
 *  - an exclusive lock of a random target (itself included): get the
 *    counter, flush, put counter + 1, and rewrite the record so that all 32
 *    words equal the new counter (one flushed put per word: a reader that
 *    got in between would see a torn record);
 *  - a shared lock of a random target: get half the record, the counter,
 *    then the other half word by word, all of it twice (nothing may change
 *    in between); all 33 words must be equal (no torn read, counter and record
 *    from the same writer) and never smaller than what this rank saw or
 *    wrote on that target before;
 *  - a lock_all epoch reading the records of every target, checked the same
 *    way;
 *  - exclusive locks on several distinct targets held at once, taken in
 *    increasing rank order (no user-level deadlock), each incremented as
 *    above, released in another order.  With osc_newrma_lock_qnodes=1 every
 *    lock after the first held one takes the path without a queue node.
 * At the end the ranks add up (MPI_Allreduce) how many exclusive sections
 * each did on each target, and every rank gets every target's counter and
 * record: the counter is that total, the record words equal it.
 */
#include "common.h"

#define REC 32
#define ROUNDS 600
#define MAX_MULTI 3        /* targets locked at once in a multi-lock round */

/* window layout: word 0 the counter, words 1..REC the record */
#define W_CNT 0
#define W_REC 1
#define W_WORDS (1 + REC)

static uint64_t rng_state;

static uint32_t rnd(void)
{
    /* xorshift64*: deterministic per rank */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t) ((rng_state * 2685821657736338717ULL) >> 32);
}

/* Open MPI 4.1's osc/pt2pt (the reference for create and dynamic windows)
 * hangs once an origin holds locks on three targets, and its lock_all takes
 * shared locks target by target, so it deadlocks against an origin that
 * holds an exclusive lock and waits for another (seen here: rank 0 holding
 * 0 and waiting for 1, rank 1 in lock_all).  Against it a multi-lock round
 * holds two locks and a lock_all round reads every target under its own
 * shared lock.  newrma is held to MAX_MULTI locks and a real lock_all (its
 * lock_all never holds some targets while waiting for others). */
static int reference_pt2pt(int flavor)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL == strstr(osc, "newrma") && NULL != strstr(osc, "pt2pt")
           && (FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor);
}

static int rank, size;
static const char *fn;
static int64_t *last_seen;      /* [size]: highest counter seen/written per target */
static int64_t *my_excl;        /* [size]: exclusive sections done per target */
static int torn_reports, order_reports;

/* Check a counter + record read from target t (under some lock). */
static void check_read(int t, const int64_t *cnt_and_rec, const char *how, int round)
{
    int64_t c = cnt_and_rec[0];
    for (int i = 1; i <= REC; ++i) {
        if (cnt_and_rec[i] != c) {
            if (torn_reports++ < 5)
                CHECK(cnt_and_rec[i] == c, "%s: torn read of target %d under %s in round %d: counter %lld, "
                      "record word %d is %lld", fn, t, how, round, (long long) c, i - 1, (long long) cnt_and_rec[i]);
            else
                test_errors++;
            break;
        }
    }
    if (c < last_seen[t]) {
        if (order_reports++ < 5)
            CHECK(c >= last_seen[t], "%s: counter of target %d went back from %lld to %lld (read under %s in "
                  "round %d)", fn, t, (long long) last_seen[t], (long long) c, how, round);
        else
            test_errors++;
    } else {
        last_seen[t] = c;
    }
}

/* Under an exclusive lock of t: increment the counter, rewrite the record. */
static void exclusive_section(test_win_t *tw, int t, int round)
{
    const int u = sizeof(int64_t);
    int64_t c = -1, rec[REC];
    MPI_OK(MPI_Get(&c, 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT, u), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_flush(t, tw->win));
    if (c < last_seen[t]) {
        if (order_reports++ < 5)
            CHECK(c >= last_seen[t], "%s: counter of target %d under an exclusive lock went back from %lld to "
                  "%lld in round %d", fn, t, (long long) last_seen[t], (long long) c, round);
        else
            test_errors++;
    }
    c++;
    for (int i = 0; i < REC; ++i) rec[i] = c;
    MPI_OK(MPI_Put(&c, 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT, u), 1, MPI_INT64_T, tw->win));
    /* word by word, flushed: a long window for a reader that got in */
    for (int i = 0; i < REC; ++i) {
        MPI_OK(MPI_Put(rec + i, 1, MPI_INT64_T, t, test_disp(tw, t, W_REC + i, u), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_flush(t, tw->win));
    }
    last_seen[t] = c;
    my_excl[t]++;
}

static void read_section(test_win_t *tw, int t, int64_t *buf)
{
    const int u = sizeof(int64_t);
    for (int i = 0; i < W_WORDS; ++i) buf[i] = -1;
    /* the first half of the record, the counter, the second half word by word */
    MPI_OK(MPI_Get(buf + W_REC, REC / 2, MPI_INT64_T, t, test_disp(tw, t, W_REC, u), REC / 2, MPI_INT64_T,
                   tw->win));
    MPI_OK(MPI_Get(buf + W_CNT, 1, MPI_INT64_T, t, test_disp(tw, t, W_CNT, u), 1, MPI_INT64_T, tw->win));
    for (int i = REC / 2; i < REC; ++i)
        MPI_OK(MPI_Get(buf + W_REC + i, 1, MPI_INT64_T, t, test_disp(tw, t, W_REC + i, u), 1, MPI_INT64_T,
                       tw->win));
}

static void run(int flavor)
{
    test_win_t tw;
    int64_t buf[W_WORDS];
    int kinds[4] = { 0, 0, 0, 0 };
    fn = flavor_names[flavor];
    last_seen = calloc((size_t) size, sizeof(int64_t));
    my_excl = calloc((size_t) size, sizeof(int64_t));
    torn_reports = order_reports = 0;
    rng_state = 0x9e3779b97f4a7c15ULL * (uint64_t) (rank + 1) + (uint64_t) flavor;

    test_win_create(&tw, flavor, W_WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    int pt2pt = reference_pt2pt(flavor);
    int maxl = pt2pt ? 2 : MAX_MULTI;
    if (maxl > size) maxl = size;

    for (int r = 0; r < ROUNDS; ++r) {
        uint32_t pick = rnd() % 100;
        int t = (int) (rnd() % (uint32_t) size);
        if (pick < 40) {                     /* writer */
            kinds[0]++;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw.win));
            exclusive_section(&tw, t, r);
            MPI_OK(MPI_Win_unlock(t, tw.win));
        } else if (pick < 80) {              /* reader */
            kinds[1]++;
            int64_t again[W_WORDS];
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
            read_section(&tw, t, buf);
            read_section(&tw, t, again);      /* nobody writes while we hold it */
            MPI_OK(MPI_Win_unlock(t, tw.win));
            check_read(t, buf, "a shared lock", r);
            if (memcmp(buf, again, sizeof(buf))) {
                if (torn_reports++ < 5)
                    CHECK(0 == memcmp(buf, again, sizeof(buf)), "%s: target %d changed during one shared-lock epoch "
                          "in round %d: counter %lld, then %lld", fn, t, r, (long long) buf[W_CNT],
                          (long long) again[W_CNT]);
                else
                    test_errors++;
            }
        } else if (pick < 90) {              /* lock_all reader of every target */
            kinds[2]++;
            int64_t *all = malloc(sizeof(int64_t) * W_WORDS * (size_t) size);
            if (!pt2pt) MPI_OK(MPI_Win_lock_all(0, tw.win));
            for (int k = 0; k < size; ++k) {
                int tk = (t + k) % size;
                if (pt2pt) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, tk, 0, tw.win));
                read_section(&tw, tk, all + tk * W_WORDS);
                if (pt2pt) MPI_OK(MPI_Win_unlock(tk, tw.win));
            }
            if (!pt2pt) MPI_OK(MPI_Win_unlock_all(tw.win));
            for (int k = 0; k < size; ++k) check_read(k, all + k * W_WORDS, "lock_all", r);
            free(all);
        } else {                             /* several exclusive locks at once */
            kinds[3]++;
            int n = maxl >= 2 ? 2 + (int) (rnd() % (uint32_t) (maxl - 1)) : 1;
            int chosen[MAX_MULTI], cnt = 0;
            /* n distinct targets starting at t, sorted increasing */
            for (int k = 0; k < size && cnt < n; ++k) {
                int c = (t + k * (1 + (int) (rnd() % 2))) % size;
                int dup = 0;
                for (int j = 0; j < cnt; ++j) dup |= chosen[j] == c;
                if (!dup) chosen[cnt++] = c;
            }
            for (int k = 0; cnt < n && k < size; ++k) {
                int dup = 0;
                for (int j = 0; j < cnt; ++j) dup |= chosen[j] == k;
                if (!dup) chosen[cnt++] = k;
            }
            for (int i = 1; i < cnt; ++i)
                for (int j = i; j > 0 && chosen[j - 1] > chosen[j]; --j) {
                    int x = chosen[j]; chosen[j] = chosen[j - 1]; chosen[j - 1] = x;
                }
            for (int i = 0; i < cnt; ++i) MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, chosen[i], 0, tw.win));
            for (int i = cnt - 1; i >= 0; --i) exclusive_section(&tw, chosen[i], r);
            /* release the middle one first, then the rest in increasing order */
            MPI_OK(MPI_Win_unlock(chosen[cnt / 2], tw.win));
            for (int i = 0; i < cnt; ++i)
                if (i != cnt / 2) MPI_OK(MPI_Win_unlock(chosen[i], tw.win));
        }
    }
    /* every kind of round happened somewhere */
    int all_kinds[4];
    MPI_Allreduce(kinds, all_kinds, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 4; ++k) CHECK(all_kinds[k] > 0, "%s: no round of kind %d ran", fn, k);

    /* the counters count every exclusive section */
    int64_t *total = calloc((size_t) size, sizeof(int64_t));
    MPI_Allreduce(my_excl, total, size, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    for (int t = 0; t < size; ++t) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
        read_section(&tw, t, buf);
        MPI_OK(MPI_Win_unlock(t, tw.win));
        CHECK(buf[W_CNT] == total[t], "%s: counter of target %d is %lld after %lld exclusive sections", fn, t,
              (long long) buf[W_CNT], (long long) total[t]);
        for (int i = 0; i < REC; ++i)
            CHECK(buf[W_REC + i] == total[t], "%s: final record of target %d word %d is %lld, expected %lld", fn, t,
                  i, (long long) buf[W_REC + i], (long long) total[t]);
    }
    free(total);
    free(last_seen);
    free(my_excl);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("rw_lock_stress");
}
