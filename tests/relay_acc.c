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
 * Relayed accumulates (osc_newrma_relay.c osc_newrma_relay_accumulate,
 * osc_newrma_node_policy_relay_acc_fits): on create and dynamic windows an
 * accumulate or get_accumulate whose target is two runs or more, of a
 * predefined type whose size divides the 8 KiB chunk, to a target inside
 * MPI streams the origin's elements through its relay slots; the target
 * reduces each chunk into its runs as it arrives, a get_accumulate's old
 * values left in the slot's second half for the origin.  The origin holds
 * the accumulate stripes of the whole span meanwhile.  A target of one run
 * is never relayed (single copy in chunks).  Checked element by element,
 * the elements between runs unchanged:
 *   1. rank 1 to rank 0 (waiting in MPI), case by case -- types of 2, 4
 *      and 8 bytes, SUM, BXOR, MAX, MIN, REPLACE and NO_OP, with and
 *      without old values, targets of 2 and 64 runs of lengths that end
 *      inside a chunk -- each tried until one was relayed (MPI_T
 *      osc_newrma_relayed_bytes; required with a core per rank); targets
 *      of one run, of 2 and of 70001 elements, never relayed; the old
 *      values and rank 0's memory checked after every try;
 *   2. every rank adds into every other rank's window at once, three times,
 *      into two runs (relays crossing, contending for mailboxes and
 *      stripes): exact sums, the element between the runs untouched.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_assist_share_bytes:0
 */
#include "common.h"

#include <stdint.h>
#include <time.h>

#define MAX_BYTES (600 * 1000)
#define MAX_RUNS 64
#define SKEW 24                       /* target displacement: not chunk-aligned */
#define RETRY_S 2.0

typedef struct {
    const char *name;
    MPI_Datatype dt;
    size_t esize;
    MPI_Op op;
    int with_old;
    int count;
    int runs;                         /* of the target: one element between two */
} acc_case_t;

/* The target's layout: run k holds count / runs elements (the first
 * count % runs one more), one element apart; at[i] is element i's index in
 * the window, gap[j] says window element j lies between runs. */
static size_t at[MAX_BYTES / 2];
static char gap[MAX_BYTES / 2 + MAX_RUNS];

static size_t case_span(const acc_case_t *c)
{
    return (size_t) c->count + (size_t) c->runs - 1;
}

/* the target datatype of `c` (committed; MPI_DATATYPE_NULL for one run), and at[], gap[] */
static MPI_Datatype case_layout(const acc_case_t *c)
{
    int lens[MAX_RUNS], displs[MAX_RUNS], j = 0, i = 0;
    MPI_Datatype dt = MPI_DATATYPE_NULL;

    memset(gap, 0, case_span(c));
    for (int k = 0 ; k < c->runs ; ++k) {
        lens[k] = c->count / c->runs + (k < c->count % c->runs);
        displs[k] = j;
        for (int e = 0 ; e < lens[k] ; ++e) at[i++] = (size_t) j++;
        if (k + 1 < c->runs) gap[j++] = 1;
    }
    if (c->runs > 1) {
        MPI_Type_indexed(c->runs, lens, displs, c->dt, &dt);
        MPI_Type_commit(&dt);
    }
    return dt;
}

/* element i of the target's memory before, and of the origin's operand */
static int64_t before_value(size_t i) { return (int64_t) ((i * 2654435761u) % 100003) - 50000; }
static int64_t operand_value(size_t i) { return (int64_t) ((i * 40503u) % 65521) - 30000; }

/* element i as stored in the case's type (wrapping like the C type) */
static void put_elem(const acc_case_t *c, void *buf, size_t i, int64_t v)
{
    if (2 == c->esize) ((int16_t *) buf)[i] = (int16_t) v;
    else if (4 == c->esize) ((uint32_t *) buf)[i] = (uint32_t) v;
    else if (MPI_DOUBLE == c->dt) ((double *) buf)[i] = (double) v;
    else ((int64_t *) buf)[i] = v;
}

static void fill_case(const acc_case_t *c, void *buf, int64_t (*value)(size_t))
{
    for (size_t i = 0 ; i < (size_t) c->count ; ++i) put_elem(c, buf, i, value(i));
}

/* what window element j holds after the operation, in the case's type:
 * target element i = the operand's element i, elements between runs as
 * before */
static void expect_elem(const acc_case_t *c, void *buf, size_t j, size_t i)
{
    int64_t t = before_value(j), o = operand_value(i);
    if (gap[j]) {
        put_elem(c, buf, j, t);
    } else if (MPI_SUM == c->op) {
        if (MPI_DOUBLE == c->dt) { ((double *) buf)[j] = (double) t + (double) o; return; }
        put_elem(c, buf, j, 2 == c->esize ? (int16_t) ((int16_t) t + (int16_t) o) : t + o);
    } else if (MPI_BXOR == c->op) {
        ((uint32_t *) buf)[j] = (uint32_t) t ^ (uint32_t) o;
    } else if (MPI_MAX == c->op) {
        put_elem(c, buf, j, t > o ? t : o);
    } else if (MPI_MIN == c->op) {
        int16_t a = (int16_t) t, b = (int16_t) o;
        put_elem(c, buf, j, a < b ? a : b);
    } else if (MPI_REPLACE == c->op) {
        put_elem(c, buf, j, o);
    } else {
        put_elem(c, buf, j, t);   /* MPI_NO_OP */
    }
}

/* first element of `got` (n elements) unlike `want`, or -1 */
static long first_diff(const acc_case_t *c, const void *got, const void *want, size_t n)
{
    for (size_t i = 0 ; i < n ; ++i)
        if (0 != memcmp((const char *) got + i * c->esize, (const char *) want + i * c->esize, c->esize))
            return (long) i;
    return -1;
}

/* Phase 1, one case: tries until relayed (a target of several runs), or
 * once (one run: never relayed); rank 0 resets and checks its memory
 * around each. */
static void one_case(test_win_t *tw, const acc_case_t *c, char *operand, char *old, char *want, test_pvar_t *pv,
                     int expected, const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, SKEW, 1);
    MPI_Datatype tdt = case_layout(c);
    int relayed = 0, tries = 0, count = 1 == c->runs ? c->count : 1;
    int want_relay = expected && c->runs > 1;
    double start = test_now_s();

    if (1 == c->runs) tdt = c->dt;
    for (;;) {
        if (0 == test_rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
            for (size_t j = 0 ; j < case_span(c) ; ++j) put_elem(c, (char *) tw->mem + SKEW, j, before_value(j));
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == test_rank) {
            unsigned long long last = test_pvar_read(pv);
            fill_case(c, operand, operand_value);
            memset(old, 0, (size_t) c->count * c->esize);
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            if (c->with_old)
                MPI_OK(MPI_Get_accumulate(operand, c->count, c->dt, old, c->count, c->dt, 0, disp, count, tdt,
                                          c->op, tw->win));
            else
                MPI_OK(MPI_Accumulate(operand, c->count, c->dt, 0, disp, count, tdt, c->op, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            relayed = test_pvar_read(pv) > last;
            if (c->with_old) {
                for (size_t i = 0 ; i < (size_t) c->count ; ++i) put_elem(c, want, i, before_value(at[i]));
                long bad = first_diff(c, old, want, (size_t) c->count);
                CHECK(bad < 0, "%s: %s: old value %ld wrong (try %d, %s)", flavor, c->name, bad, tries,
                      relayed ? "relayed" : "not relayed");
            }
            CHECK(c->runs > 1 || !relayed, "%s: %s: a target of one run was relayed", flavor, c->name);
        }
        MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
        if (0 == test_rank) {
            for (size_t j = 0, i = 0 ; j < case_span(c) ; ++j) {
                expect_elem(c, want, j, i);
                i += !gap[j];
            }
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            long bad = first_diff(c, (char *) tw->mem + SKEW, want, case_span(c));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            CHECK(bad < 0, "%s: %s: target element %ld wrong (try %d, %s)", flavor, c->name, bad, tries,
                  relayed ? "relayed" : "not relayed");
        }
        ++tries;
        int again = !relayed && want_relay && (tries < 16 || test_now_s() - start < RETRY_S);
        MPI_Bcast(&again, 1, MPI_INT, 1, MPI_COMM_WORLD);
        if (!again) break;
    }
    if (1 == test_rank) {
        CHECK(!want_relay || relayed, "%s: %s: not relayed in %d tries", flavor, c->name, tries);
    }
    if (c->runs > 1) MPI_Type_free(&tdt);
}

/* Phase 2: everyone adds its int64 values into two runs of everyone else's
 * window (ALL_N / 2 elements, one apart) three times at once; each window
 * must hold the exact sum, and the element between the runs 0. */
#define ALL_N 40000
static void all_at_once(test_win_t *tw, int size, const char *flavor)
{
    int64_t *mine = malloc(ALL_N * sizeof(int64_t)), *window = (int64_t *) ((char *) tw->mem + SKEW);
    MPI_Datatype two_runs;

    MPI_Type_vector(2, ALL_N / 2, ALL_N / 2 + 1, MPI_INT64_T, &two_runs);
    MPI_Type_commit(&two_runs);
    for (size_t i = 0 ; i < ALL_N ; ++i) mine[i] = (int64_t) test_rank * 100000 + (int64_t) (i % 977);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, test_rank, 0, tw->win));
    memset(window, 0, (ALL_N + 1) * sizeof(int64_t));
    MPI_OK(MPI_Win_unlock(test_rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, tw->win));
    for (int r = 0 ; r < 3 ; ++r) {
        for (int k = 1 ; k < size ; ++k) {
            int t = (test_rank + k) % size;
            MPI_OK(MPI_Accumulate(mine, ALL_N, MPI_INT64_T, t, test_disp(tw, t, SKEW, 1), 1, two_runs,
                                  MPI_SUM, tw->win));
        }
        MPI_OK(MPI_Win_flush_all(tw->win));
    }
    MPI_OK(MPI_Win_unlock_all(tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, test_rank, 0, tw->win));
    for (size_t j = 0 ; j <= ALL_N ; ++j) {
        size_t i = j < ALL_N / 2 ? j : j - 1;   /* j == ALL_N / 2: between the runs */
        int64_t want = 0;
        for (int o = 0 ; o < size && j != ALL_N / 2 ; ++o)
            if (o != test_rank) want += 3 * ((int64_t) o * 100000 + (int64_t) (i % 977));
        if (window[j] != want) {
            CHECK(0, "%s: all at once: window element %zu is %lld, expected %lld", flavor, j, (long long) window[j],
                  (long long) want);
            break;
        }
    }
    MPI_OK(MPI_Win_unlock(test_rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&two_runs);
    free(mine);
}

static void run(int flavor, int size, int expected)
{
    static const acc_case_t cases[] = {
        { "int64 sum, 2 runs of 8 B", MPI_INT64_T, 8, MPI_SUM, 0, 2, 2 },
        { "int64 sum, one run", MPI_INT64_T, 8, MPI_SUM, 0, 2500, 1 },
        { "int64 sum, old values, 2 runs", MPI_INT64_T, 8, MPI_SUM, 1, 9999, 2 },
        { "uint32 bxor, 64 runs", MPI_UINT32_T, 4, MPI_BXOR, 0, 70001, 64 },
        { "double max, old values, 2 runs", MPI_DOUBLE, 8, MPI_MAX, 1, 70001, 2 },
        { "double max, old values, one run", MPI_DOUBLE, 8, MPI_MAX, 1, 70001, 1 },
        { "int16 min, 3 runs", MPI_INT16_T, 2, MPI_MIN, 0, 20001, 3 },
        { "int64 replace, old values, 64 runs", MPI_INT64_T, 8, MPI_REPLACE, 1, 30000, 64 },
        { "int64 no_op, old values, 2 runs", MPI_INT64_T, 8, MPI_NO_OP, 1, 30000, 2 },
    };
    const char *name = flavor_names[flavor];
    char *operand = malloc(MAX_BYTES), *old = malloc(MAX_BYTES), *want = malloc(MAX_BYTES);
    test_pvar_t pv;
    test_win_t tw;

    test_win_create(&tw, flavor, MAX_BYTES + MAX_RUNS * 8 + SKEW, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    CHECK(256 == test_cvar_u64("osc_newrma_relay_piece_bytes"), "%s: relays of small pieces at %llu bytes, not at "
          "the default 256", name, test_cvar_u64("osc_newrma_relay_piece_bytes"));
    test_pvar_open(&pv, "osc_newrma_relayed_bytes");
    for (size_t k = 0 ; k < sizeof(cases) / sizeof(cases[0]) ; ++k)
        one_case(&tw, &cases[k], operand, old, want, &pv, expected, name);
    all_at_once(&tw, size, name);
    test_win_free(&tw);
    test_pvar_close(&pv);
    free(operand);
    free(old);
    free(want);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, "relay_acc", run);
}
