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
 * Non-contiguous puts, gets and accumulates relayed (osc_newrma_usermem.c
 * usermem_move_pieces, osc_newrma_acc.c acc_usermem_runs): on create and dynamic
 * windows, where relays are on, a put or get of derived datatypes is cut
 * into pieces contiguous on both sides (the two datatypes' blocks cut
 * where either ends), and each group of up to 1024 pieces is relayed if
 * its pieces average at most osc_newrma_relay_piece_bytes (256 here, the
 * default); an accumulate whose target is several runs of whole elements
 * is relayed up to 1024 runs at a time, the target reducing each chunk
 * into its runs.  Checked byte by byte (every byte
 * the types touch, and none they do not), at 2-4 ranks:
 *   1. rank 1 to rank 0, which waits in MPI: a put and a get between two
 *      indexed byte types of different block lengths (hundreds of pieces,
 *      cut on both sides), an accumulate into a vector of int64 (150 runs
 *      of 3) and a get_accumulate with a vector result type -- each tried
 *      until it was relayed (MPI_T osc_newrma_relayed_bytes; required with
 *      a core per rank);
 *   2. every rank to its right neighbour at once, in fence epochs (relays
 *      crossing);
 *   3. rank 0 computing outside MPI while the others put and accumulate
 *      (nothing relayed: system calls, an accumulate run by run);
 *   4. the piece limit: rank 1 puts 16 blocks of exactly 256 bytes until
 *      they were relayed, then 16 blocks of 257 bytes (never relayed);
 *      rank 0 checks the blocks and the bytes between them.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1
 */
#include "common.h"

#include <stdint.h>
#include <time.h>

#define WIN_BYTES (64 * 1024)
#define NBLOCKS 300           /* blocks of the byte types */
#define ACC_RUNS 150          /* runs of the int64 vector: 3 elements every 5 */
#define ACC_N (ACC_RUNS * 3)
#define RETRY_S 2.0
#define SENTINEL 0xEE

/* the two byte types: target blocks of 1..13 bytes 2 apart; origin blocks
 * of 5 bytes (the last shorter) 7 apart, as many bytes in all */
static MPI_Datatype target_bytes, origin_bytes, acc_target, acc_result;
static int nbytes;                              /* bytes each byte type holds */
static int target_off[WIN_BYTES], origin_off[WIN_BYTES];   /* byte i of each typemap */

static void make_types(void)
{
    int lens[NBLOCKS], displs[NBLOCKS], at = 0, n = 0;

    for (int k = 0 ; k < NBLOCKS ; ++k) {
        lens[k] = 1 + (k * 7) % 13;
        displs[k] = at;
        for (int b = 0 ; b < lens[k] ; ++b) target_off[n++] = at + b;
        at += lens[k] + 2;
    }
    nbytes = n;
    MPI_OK(MPI_Type_indexed(NBLOCKS, lens, displs, MPI_BYTE, &target_bytes));
    int oblocks = (nbytes + 4) / 5, *olens = malloc(sizeof(int) * (size_t) oblocks);
    int *odispls = malloc(sizeof(int) * (size_t) oblocks);
    n = 0;
    for (int k = 0 ; k < oblocks ; ++k) {
        olens[k] = nbytes - 5 * k < 5 ? nbytes - 5 * k : 5;
        odispls[k] = 7 * k;
        for (int b = 0 ; b < olens[k] ; ++b) origin_off[n++] = 7 * k + b;
    }
    MPI_OK(MPI_Type_indexed(oblocks, olens, odispls, MPI_BYTE, &origin_bytes));
    MPI_OK(MPI_Type_vector(ACC_RUNS, 3, 5, MPI_INT64_T, &acc_target));
    MPI_OK(MPI_Type_vector(ACC_N / 2, 2, 3, MPI_INT64_T, &acc_result));
    MPI_Type_commit(&target_bytes);
    MPI_Type_commit(&origin_bytes);
    MPI_Type_commit(&acc_target);
    MPI_Type_commit(&acc_result);
    free(olens);
    free(odispls);
}

static void free_types(void)
{
    MPI_Type_free(&target_bytes);
    MPI_Type_free(&origin_bytes);
    MPI_Type_free(&acc_target);
    MPI_Type_free(&acc_result);
}

static unsigned char byte_at(int who, int round, int a) { return (unsigned char) (1 + (who * 37 + round * 11 + a * 7) % 250); }
static int64_t elem_at(int who, int round, size_t e) { return (int64_t) who * 100000 + round * 1000 + (int64_t) (e % 997); }

/* element i of the int64 vector types */
static size_t acc_target_elem(size_t i) { return (i / 3) * 5 + i % 3; }
static size_t acc_result_elem(size_t i) { return (i / 2) * 3 + i % 2; }

/* the window bytes after origin `who` put its round-`round` pattern */
static void expect_put(const unsigned char *win, int who, int round, const char *what, const char *flavor)
{
    static unsigned char want[WIN_BYTES];
    memset(want, 0, sizeof(want));
    for (int i = 0 ; i < nbytes ; ++i) want[target_off[i]] = byte_at(who, round, origin_off[i]);
    for (int a = 0 ; a < WIN_BYTES ; ++a) {
        if (win[a] != want[a]) {
            CHECK(0, "%s: %s: window byte %d is %d, expected %d", flavor, what, a, win[a], want[a]);
            return;
        }
    }
}

/* a get's local bytes from a window filled with byte_at(owner, round, .) */
static void expect_get(const unsigned char *local, int owner, int round, const char *what, const char *flavor)
{
    static unsigned char want[WIN_BYTES];
    memset(want, SENTINEL, sizeof(want));
    for (int i = 0 ; i < nbytes ; ++i) want[origin_off[i]] = byte_at(owner, round, target_off[i]);
    for (int a = 0 ; a < WIN_BYTES ; ++a) {
        if (local[a] != want[a]) {
            CHECK(0, "%s: %s: local byte %d is %d, expected %d", flavor, what, a, local[a], want[a]);
            return;
        }
    }
}

static void fill_window(test_win_t *tw, int round)
{
    unsigned char *win = tw->mem;
    for (int a = 0 ; a < WIN_BYTES ; ++a) win[a] = byte_at(test_rank, round, a);
}

/* the accumulate phase's window: elem_at(0 or owner, round) everywhere */
static void fill_elems(int64_t *win, int who, int round)
{
    for (size_t e = 0 ; e < WIN_BYTES / 8 ; ++e) win[e] = elem_at(who, round, e);
}

/* after `times` accumulates of origin `o`'s elements (and get_accumulates:
 * the same) into a window filled with elem_at(owner, round) */
static void expect_acc(const int64_t *win, int owner, int round, int o, int times, const char *what,
                       const char *flavor)
{
    static int64_t want[WIN_BYTES / 8];
    fill_elems(want, owner, round);
    for (size_t i = 0 ; i < ACC_N ; ++i) want[acc_target_elem(i)] += times * elem_at(o, round, i);
    for (size_t e = 0 ; e < WIN_BYTES / 8 ; ++e) {
        if (win[e] != want[e]) {
            CHECK(0, "%s: %s: element %zu is %lld, expected %lld", flavor, what, e, (long long) win[e],
                  (long long) want[e]);
            return;
        }
    }
}

/* One case of phase 1: rank 0 prepares, rank 1 runs `op` under a lock
 * until it was relayed (when expected), rank 0 checks after every try. */
enum { CASE_PUT, CASE_GET, CASE_ACC, CASE_GACC };

static int origin_try(test_win_t *tw, int c, unsigned char *buf, int round, test_pvar_t *pv, const char *flavor)
{
    unsigned long long before = test_pvar_read(pv);
    int64_t *elems = (int64_t *) buf, *old = (int64_t *) (buf + WIN_BYTES);

    if (CASE_PUT == c) {
        for (int a = 0 ; a < WIN_BYTES ; ++a) buf[a] = byte_at(1, round, a);
    } else if (CASE_GET == c) {
        memset(buf, SENTINEL, WIN_BYTES);
    } else {
        for (size_t i = 0 ; i < ACC_N ; ++i) elems[i] = elem_at(1, round, i);
        for (size_t e = 0 ; e < WIN_BYTES / 8 ; ++e) old[e] = -1;
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    MPI_Aint d = test_disp(tw, 0, 0, 1);
    switch (c) {
    case CASE_PUT: MPI_OK(MPI_Put(buf, 1, origin_bytes, 0, d, 1, target_bytes, tw->win)); break;
    case CASE_GET: MPI_OK(MPI_Get(buf, 1, origin_bytes, 0, d, 1, target_bytes, tw->win)); break;
    case CASE_ACC:
        MPI_OK(MPI_Accumulate(elems, ACC_N, MPI_INT64_T, 0, d, 1, acc_target, MPI_SUM, tw->win));
        break;
    default:
        MPI_OK(MPI_Get_accumulate(elems, ACC_N, MPI_INT64_T, old, 1, acc_result, 0, d, 1, acc_target, MPI_SUM,
                                  tw->win));
    }
    MPI_OK(MPI_Win_unlock(0, tw->win));
    if (CASE_GET == c) expect_get(buf, 0, round, "get", flavor);
    if (CASE_GACC == c) {
        for (size_t i = 0 ; i < ACC_N ; ++i) {
            int64_t want = elem_at(0, round, acc_target_elem(i));
            if (old[acc_result_elem(i)] != want) {
                CHECK(0, "%s: get_accumulate: old value %zu is %lld, expected %lld", flavor, i,
                      (long long) old[acc_result_elem(i)], (long long) want);
                break;
            }
        }
    }
    return test_pvar_read(pv) > before;
}

static void one_case(test_win_t *tw, int c, unsigned char *buf, int round, test_pvar_t *pv, int expected,
                     const char *flavor)
{
    static const char *const names[] = { "put", "get", "accumulate", "get_accumulate" };
    int relayed = 0, tries = 0, again;
    double start = test_now_s();

    do {
        if (0 == test_rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
            if (CASE_PUT == c) memset(tw->mem, 0, WIN_BYTES);
            else if (CASE_GET == c) fill_window(tw, round);
            else fill_elems(tw->mem, 0, round);
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == test_rank) relayed = origin_try(tw, c, buf, round, pv, flavor);
        MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
        if (0 == test_rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            if (CASE_PUT == c) expect_put(tw->mem, 1, round, "put", flavor);
            if (CASE_ACC == c || CASE_GACC == c) expect_acc(tw->mem, 0, round, 1, 1, names[c], flavor);
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        ++tries;
        again = expected && !relayed && (tries < 16 || test_now_s() - start < RETRY_S);
        MPI_Bcast(&again, 1, MPI_INT, 1, MPI_COMM_WORLD);
    } while (again);
    if (1 == test_rank) CHECK(!expected || relayed, "%s: no %s was relayed in %d tries", flavor, names[c], tries);
}

/* Phase 2: every rank puts to its right neighbour and gets from its left
 * one, then accumulates into its right neighbour, in fence epochs. */
static void all_at_once(test_win_t *tw, unsigned char *buf, unsigned char *got, int size, int round,
                        const char *flavor)
{
    int right = (test_rank + 1) % size, left = (test_rank + size - 1) % size;

    for (int a = 0 ; a < WIN_BYTES ; ++a) buf[a] = byte_at(test_rank, round, a);
    memset(tw->mem, 0, WIN_BYTES);
    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Put(buf, 1, origin_bytes, right, test_disp(tw, right, 0, 1), 1, target_bytes, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    expect_put(tw->mem, left, round, "fence put", flavor);
    fill_window(tw, round);
    MPI_OK(MPI_Win_fence(0, tw->win));
    memset(got, SENTINEL, WIN_BYTES);
    MPI_OK(MPI_Get(got, 1, origin_bytes, left, test_disp(tw, left, 0, 1), 1, target_bytes, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    expect_get(got, left, round, "fence get", flavor);
    fill_elems(tw->mem, test_rank, round);
    int64_t *elems = (int64_t *) buf;
    for (size_t i = 0 ; i < ACC_N ; ++i) elems[i] = elem_at(test_rank, round, i);
    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Accumulate(elems, ACC_N, MPI_INT64_T, right, test_disp(tw, right, 0, 1), 1, acc_target, MPI_SUM,
                          tw->win));
    MPI_OK(MPI_Accumulate(elems, ACC_N, MPI_INT64_T, right, test_disp(tw, right, 0, 1), 1, acc_target, MPI_SUM,
                          tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    expect_acc(tw->mem, test_rank, round, left, 2, "fence accumulates", flavor);
}

/* Phase 3: origins put, then accumulate, while rank 0 computes. */
static unsigned char *computing_buf;

static void strided_to_computing(test_win_t *tw, int origin, int round)
{
    int64_t *elems = (int64_t *) computing_buf;
    (void) origin;
    /* every origin puts the same bytes and adds the same elements */
    for (int a = 0 ; a < WIN_BYTES ; ++a) computing_buf[a] = byte_at(1, round, a);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    MPI_OK(MPI_Put(computing_buf, 1, origin_bytes, 0, test_disp(tw, 0, 0, 1), 1, target_bytes, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
    for (size_t i = 0 ; i < ACC_N ; ++i) elems[i] = elem_at(1, round, i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    MPI_OK(MPI_Accumulate(elems, ACC_N, MPI_INT64_T, 0, test_disp(tw, 0, WIN_BYTES, 1), 1, acc_target, MPI_SUM,
                          tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
}

static void target_computing(test_win_t *tw, unsigned char *buf, int size, int round, MPI_Comm origins,
                             const char *flavor)
{
    int64_t *acc_part = (int64_t *) ((unsigned char *) tw->mem + WIN_BYTES);

    if (0 == test_rank) {
        memset(tw->mem, 0, WIN_BYTES);
        fill_elems(acc_part, 0, round);
    }
    computing_buf = buf;
    test_target0_computing(tw, 2 * WIN_BYTES, origins, strided_to_computing, round, flavor);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        expect_put(tw->mem, 1, round, "put to a computing target", flavor);
        expect_acc(acc_part, 0, round, 1, size - 1, "accumulates to a computing target", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
}

/* Phase 4, one size: rank 1 puts LIMIT_BLOCKS blocks of `len` bytes (3
 * apart) into rank 0's window, until relayed if `relay`, else once (and
 * never relayed if `forbidden`); rank 0 checks every byte of the span
 * after each try. */
#define LIMIT_BLOCKS 16
static void piece_limit(test_win_t *tw, unsigned char *buf, int len, int relay, int forbidden, int round,
                        test_pvar_t *pv, const char *flavor)
{
    MPI_Datatype blocks;
    int relayed = 0, tries = 0, again, stride = len + 3, span = LIMIT_BLOCKS * stride;
    double start = test_now_s();

    MPI_OK(MPI_Type_vector(LIMIT_BLOCKS, len, stride, MPI_BYTE, &blocks));
    MPI_Type_commit(&blocks);
    do {
        if (0 == test_rank) memset(tw->mem, 0, (size_t) span);
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == test_rank) {
            unsigned long long before = test_pvar_read(pv);
            for (int a = 0 ; a < LIMIT_BLOCKS * len ; ++a) buf[a] = byte_at(1, round, a);
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
            MPI_OK(MPI_Put(buf, LIMIT_BLOCKS * len, MPI_BYTE, 0, test_disp(tw, 0, 0, 1), 1, blocks, tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
            relayed = test_pvar_read(pv) > before;
            CHECK(!forbidden || !relayed, "%s: %d blocks of %d bytes were relayed", flavor, LIMIT_BLOCKS, len);
        }
        MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
        if (0 == test_rank) {
            const unsigned char *win = tw->mem;
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            for (int a = 0 ; a < span ; ++a) {
                int in_block = a % stride < len;
                unsigned char want = in_block ? byte_at(1, round, a / stride * len + a % stride) : 0;
                if (win[a] != want) {
                    CHECK(0, "%s: %d blocks of %d bytes: window byte %d is %d, expected %d", flavor, LIMIT_BLOCKS,
                          len, a, win[a], want);
                    break;
                }
            }
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        ++tries;
        again = relay && !relayed && (tries < 16 || test_now_s() - start < RETRY_S);
        MPI_Bcast(&again, 1, MPI_INT, 1, MPI_COMM_WORLD);
    } while (again);
    if (1 == test_rank) {
        CHECK(!relay || relayed, "%s: %d blocks of %d bytes not relayed in %d tries", flavor, LIMIT_BLOCKS, len,
              tries);
    }
    MPI_Type_free(&blocks);
}

static void run(int flavor, int size, int expected)
{
    const char *name = flavor_names[flavor];
    unsigned char *buf = malloc(2 * WIN_BYTES), *got = malloc(WIN_BYTES);
    test_pvar_t pv;
    test_win_t tw;
    MPI_Comm others;

    make_types();
    MPI_Comm_split(MPI_COMM_WORLD, 0 == test_rank, test_rank, &others);
    test_win_create(&tw, flavor, 2 * WIN_BYTES + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    int limit = (int) test_cvar_u64("osc_newrma_relay_piece_bytes");
    CHECK(256 == limit, "%s: relays of pieces up to %d bytes, not the default 256", name, limit);
    test_pvar_open(&pv, "osc_newrma_relayed_bytes");
    for (int c = CASE_PUT ; c <= CASE_GACC ; ++c) one_case(&tw, c, buf, 10 + c, &pv, expected, name);
    test_fence_rounds(&tw, all_at_once, buf, got, size, 50, 3, name);
    if (!test_am_path(flavor)) target_computing(&tw, buf, size, 90, others, name);
    piece_limit(&tw, buf, limit, expected, 0, 95, &pv, name);
    piece_limit(&tw, buf, limit + 1, 0, 1, 96, &pv, name);
    test_assist_cleanup(&tw, &others, &pv, buf, got);
    free_types();
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, "relay_strided", run);
}
