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
 * Relayed accumulates (osc_newrma_relay.c osc_newrma_relay_accumulate):
 * on create and dynamic windows an accumulate or get_accumulate of
 * osc_newrma_relay_bytes or more, of a predefined type whose size divides
 * the 8 KiB chunk, to a target inside MPI streams the origin's elements
 * through its relay slots; the target reduces each chunk into its memory
 * as it arrives, a get_accumulate's old values left in the slot's second
 * half for the origin.  The origin holds the accumulate stripes of the
 * whole span meanwhile.  Checked element by element:
 *   1. rank 1 to rank 0 (waiting in MPI), case by case -- types of 2, 4
 *      and 8 bytes, SUM, BXOR, MAX, MIN, REPLACE and NO_OP, with and
 *      without old values, at the threshold and at lengths that end inside
 *      a chunk -- each tried until one was relayed (MPI_T
 *      osc_newrma_relayed_bytes; required with a core per rank), the old
 *      values and rank 0's memory checked after every try;
 *   2. every rank adds into every other rank's window at once, three times
 *      (relays crossing, contending for mailboxes and stripes): exact sums.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_bytes:20000,osc_newrma_assist_share_bytes:0
 */
#include "common.h"

#include <stdint.h>
#include <time.h>

#define MAX_BYTES (600 * 1000)
#define SKEW 24                       /* target displacement: not chunk-aligned */
#define RETRY_S 2.0

typedef struct {
    const char *name;
    MPI_Datatype dt;
    size_t esize;
    MPI_Op op;
    int with_old;
    int count;
} acc_case_t;

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

/* what element i holds after the operation, in the case's type */
static void expect_elem(const acc_case_t *c, void *buf, size_t i)
{
    int64_t t = before_value(i), o = operand_value(i);
    if (MPI_SUM == c->op) {
        if (MPI_DOUBLE == c->dt) { ((double *) buf)[i] = (double) t + (double) o; return; }
        put_elem(c, buf, i, 2 == c->esize ? (int16_t) ((int16_t) t + (int16_t) o) : t + o);
    } else if (MPI_BXOR == c->op) {
        ((uint32_t *) buf)[i] = (uint32_t) t ^ (uint32_t) o;
    } else if (MPI_MAX == c->op) {
        put_elem(c, buf, i, t > o ? t : o);
    } else if (MPI_MIN == c->op) {
        int16_t a = (int16_t) t, b = (int16_t) o;
        put_elem(c, buf, i, a < b ? a : b);
    } else if (MPI_REPLACE == c->op) {
        put_elem(c, buf, i, o);
    } else {
        put_elem(c, buf, i, t);   /* MPI_NO_OP */
    }
}

/* first element of `got` (count elements) unlike `want`, or -1 */
static long first_diff(const acc_case_t *c, const void *got, const void *want)
{
    for (size_t i = 0 ; i < (size_t) c->count ; ++i)
        if (0 != memcmp((const char *) got + i * c->esize, (const char *) want + i * c->esize, c->esize))
            return (long) i;
    return -1;
}

/* Phase 1, one case: tries until relayed; rank 0 resets and checks its
 * memory around each. */
static void one_case(test_win_t *tw, const acc_case_t *c, char *operand, char *old, char *want, test_pvar_t *pv,
                     int expected, const char *flavor)
{
    MPI_Aint disp = test_disp(tw, 0, SKEW, 1);
    int relayed = 0, tries = 0;
    double start = test_now_s();

    for (;;) {
        if (0 == test_rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
            fill_case(c, (char *) tw->mem + SKEW, before_value);
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == test_rank) {
            unsigned long long last = test_pvar_read(pv);
            fill_case(c, operand, operand_value);
            memset(old, 0, (size_t) c->count * c->esize);
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            if (c->with_old)
                MPI_OK(MPI_Get_accumulate(operand, c->count, c->dt, old, c->count, c->dt, 0, disp, c->count, c->dt,
                                          c->op, tw->win));
            else
                MPI_OK(MPI_Accumulate(operand, c->count, c->dt, 0, disp, c->count, c->dt, c->op, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            relayed = test_pvar_read(pv) > last;
            if (c->with_old) {
                fill_case(c, want, before_value);
                long bad = first_diff(c, old, want);
                CHECK(bad < 0, "%s: %s: old value %ld wrong (try %d, %s)", flavor, c->name, bad, tries,
                      relayed ? "relayed" : "not relayed");
            }
        }
        MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
        if (0 == test_rank) {
            for (size_t i = 0 ; i < (size_t) c->count ; ++i) expect_elem(c, want, i);
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            long bad = first_diff(c, (char *) tw->mem + SKEW, want);
            MPI_OK(MPI_Win_unlock(0, tw->win));
            CHECK(bad < 0, "%s: %s: target element %ld wrong (try %d, %s)", flavor, c->name, bad, tries,
                  relayed ? "relayed" : "not relayed");
        }
        ++tries;
        int again = !relayed && expected && (tries < 16 || test_now_s() - start < RETRY_S);
        MPI_Bcast(&again, 1, MPI_INT, 1, MPI_COMM_WORLD);
        if (!again) break;
    }
    if (1 == test_rank) {
        CHECK(!expected || relayed, "%s: %s: not relayed in %d tries", flavor, c->name, tries);
    }
}

/* Phase 2: everyone adds its int64 values into everyone else's window three
 * times at once; each window must hold the exact sum. */
#define ALL_N 40000
static void all_at_once(test_win_t *tw, int size, const char *flavor)
{
    int64_t *mine = malloc(ALL_N * sizeof(int64_t)), *window = (int64_t *) ((char *) tw->mem + SKEW);

    for (size_t i = 0 ; i < ALL_N ; ++i) mine[i] = (int64_t) test_rank * 100000 + (int64_t) (i % 977);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, test_rank, 0, tw->win));
    memset(window, 0, ALL_N * sizeof(int64_t));
    MPI_OK(MPI_Win_unlock(test_rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, tw->win));
    for (int r = 0 ; r < 3 ; ++r) {
        for (int k = 1 ; k < size ; ++k) {
            int t = (test_rank + k) % size;
            MPI_OK(MPI_Accumulate(mine, ALL_N, MPI_INT64_T, t, test_disp(tw, t, SKEW, 1), ALL_N, MPI_INT64_T,
                                  MPI_SUM, tw->win));
        }
        MPI_OK(MPI_Win_flush_all(tw->win));
    }
    MPI_OK(MPI_Win_unlock_all(tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, test_rank, 0, tw->win));
    for (size_t i = 0 ; i < ALL_N ; ++i) {
        int64_t want = 0;
        for (int o = 0 ; o < size ; ++o)
            if (o != test_rank) want += 3 * ((int64_t) o * 100000 + (int64_t) (i % 977));
        if (window[i] != want) {
            CHECK(0, "%s: all at once: element %zu is %lld, expected %lld", flavor, i, (long long) window[i],
                  (long long) want);
            break;
        }
    }
    MPI_OK(MPI_Win_unlock(test_rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    free(mine);
}

static void run(int flavor, int size, int expected)
{
    static const acc_case_t cases[] = {
        { "int64 sum at the threshold", MPI_INT64_T, 8, MPI_SUM, 0, 2500 },
        { "int64 sum, old values", MPI_INT64_T, 8, MPI_SUM, 1, 9999 },
        { "uint32 bxor", MPI_UINT32_T, 4, MPI_BXOR, 0, 70001 },
        { "double max, old values", MPI_DOUBLE, 8, MPI_MAX, 1, 70001 },
        { "int16 min", MPI_INT16_T, 2, MPI_MIN, 0, 20001 },
        { "int64 replace, old values", MPI_INT64_T, 8, MPI_REPLACE, 1, 30000 },
        { "int64 no_op, old values", MPI_INT64_T, 8, MPI_NO_OP, 1, 30000 },
    };
    const char *name = flavor_names[flavor];
    char *operand = malloc(MAX_BYTES), *old = malloc(MAX_BYTES), *want = malloc(MAX_BYTES);
    test_pvar_t pv;
    test_win_t tw;

    test_win_create(&tw, flavor, MAX_BYTES + SKEW, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    expected = expected && test_cvar_u64("osc_newrma_relay_bytes") > 0;
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
