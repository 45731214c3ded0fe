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
 * Back-pressure on the node-local FIFO transport: every rank floods every
 * rank (itself included) with puts, accumulates, gets and fetch_and_ops
 * while the FIFOs hold 2 cells each, so nearly every packet finds its
 * receiver's queue full, goes to the sender's backlog and is pushed from
 * progress -- while the receiver is itself flooding, i.e. queues full in
 * both directions at once.  Payloads from 8 bytes to more than 64 KiB, so
 * large packets are split into many fragments whose receiver puts them back
 * together while fragments of other senders interleave.
 *
 * Per flavor (MPI_Win_create, MPI_Win_create_dynamic) and epoch kind
 * (lock_all / unlock_all, fence / fence), ROUNDS rounds; in each round every
 * origin o, to every target t:
 *   - puts a pattern of each size in SIZES into its own region at t;
 *   - accumulates +1 (MPI_SUM, int64) ACCS times into its own counter at t,
 *     and adds a pattern of BIG_ACC int64 into its own array at t (one
 *     accumulate of 64 KiB);
 *   - fetch_and_op +1 FAOS times on t's shared counter;
 *   - gets every size of t's read-only pattern into a local buffer.
 * After the epoch every rank checks what it got, and every target checks
 * every byte of its window.  Nothing may be lost, duplicated, reordered
 * within a region, or corrupted, and nothing may hang.
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_force_am:1,osc_newrma_fifo_depth:2
 */
#include "common.h"

#define ROUNDS 3
#define ACCS 40
#define FAOS 16
#define BIG_ACC 8192                          /* int64: 64 KiB */
static const size_t sizes[] = { 8, 24, 64, 136, 200, 256, 1000, 4096, 65536, 70008 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int rank, nprocs;
static size_t region_bytes;                   /* one origin's put region */

/* window layout (bytes), all 8-byte aligned */
static size_t off_static;                     /* read-only pattern, max size */
static size_t off_fao;                        /* shared fetch_and_op counter */
static size_t off_acc;                        /* [nprocs] accumulate counters */
static size_t off_big;                        /* [nprocs][BIG_ACC] int64 */
static size_t off_puts;                       /* [nprocs] put regions */
static size_t win_bytes;

static size_t max_size(void)
{
    return sizes[NSIZES - 1];
}

static unsigned char put_byte(int origin, int target, int round, size_t size, size_t i)
{
    return (unsigned char) (origin * 31 + target * 17 + round * 7 + size * 3 + i * 13 + (i >> 8));
}

static unsigned char static_byte(int target, size_t i)
{
    return (unsigned char) (target * 101 + i * 7 + (i >> 9) + 1);
}

static int64_t big_value(int origin, int target, int round, size_t i)
{
    return (int64_t) origin * 1000003 + (int64_t) target * 10007 + (int64_t) round * 101 + (int64_t) i;
}

static void layout(void)
{
    region_bytes = 0;
    for (size_t s = 0 ; s < NSIZES ; ++s) {
        region_bytes += (sizes[s] + 7) / 8 * 8;
    }
    off_static = 0;
    off_fao = off_static + (max_size() + 7) / 8 * 8;
    off_acc = off_fao + 8;
    off_big = off_acc + 8 * (size_t) nprocs;
    off_puts = off_big + 8 * (size_t) BIG_ACC * (size_t) nprocs;
    win_bytes = off_puts + region_bytes * (size_t) nprocs;
}

static size_t size_offset(size_t s)
{
    size_t offset = 0;
    for (size_t k = 0 ; k < s ; ++k) {
        offset += (sizes[k] + 7) / 8 * 8;
    }
    return offset;
}

typedef struct {
    unsigned char *got[NSIZES];               /* gets, per target */
    int64_t fetched[FAOS];
    int64_t *big;                             /* origin buffer of the big accumulate */
    unsigned char *put_src;                   /* origin buffers of the puts */
} origin_bufs_t;

/* All operations of one round from us to `t`. */
static void flood_target(test_win_t *tw, origin_bufs_t *b, int t, int round)
{
    MPI_Win win = tw->win;
    static const int64_t one = 1;

    for (size_t s = 0 ; s < NSIZES ; ++s) {
        unsigned char *src = b[t].put_src + size_offset(s);
        for (size_t i = 0 ; i < sizes[s] ; ++i) {
            src[i] = put_byte(rank, t, round, sizes[s], i);
        }
        MPI_OK(MPI_Put(src, (int) sizes[s], MPI_BYTE, t,
                       test_disp(tw, t, (MPI_Aint) (off_puts + region_bytes * (size_t) rank + size_offset(s)), 1),
                       (int) sizes[s], MPI_BYTE, win));
        MPI_OK(MPI_Get(b[t].got[s], (int) sizes[s], MPI_BYTE, t, test_disp(tw, t, (MPI_Aint) off_static, 1),
                       (int) sizes[s], MPI_BYTE, win));
        for (int k = 0 ; k < ACCS / (int) NSIZES ; ++k) {
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, test_disp(tw, t, (MPI_Aint) (off_acc + 8 * (size_t) rank), 1),
                                  1, MPI_INT64_T, MPI_SUM, win));
        }
    }
    for (int i = 0 ; i < BIG_ACC ; ++i) {
        b[t].big[i] = big_value(rank, t, round, (size_t) i);
    }
    MPI_OK(MPI_Accumulate(b[t].big, BIG_ACC, MPI_INT64_T, t,
                          test_disp(tw, t, (MPI_Aint) (off_big + 8 * (size_t) BIG_ACC * (size_t) rank), 1),
                          BIG_ACC, MPI_INT64_T, MPI_SUM, win));
    for (int k = 0 ; k < FAOS ; ++k) {
        MPI_OK(MPI_Fetch_and_op(&one, &b[t].fetched[k], MPI_INT64_T, t, test_disp(tw, t, (MPI_Aint) off_fao, 1),
                                MPI_SUM, win));
    }
}

/* What we fetched from every target in this round. */
static void check_origin(origin_bufs_t *b, int round, const char *what)
{
    for (int t = 0 ; t < nprocs ; ++t) {
        for (size_t s = 0 ; s < NSIZES ; ++s) {
            for (size_t i = 0 ; i < sizes[s] ; ++i) {
                if (b[t].got[s][i] != static_byte(t, i)) {
                    CHECK(0, "%s round %d: get of %zu bytes from %d: byte %zu is %d, expected %d", what, round,
                          sizes[s], t, i, b[t].got[s][i], static_byte(t, i));
                    break;
                }
            }
        }
        /* fetch_and_op: values below the round's final count, increasing */
        int64_t limit = (int64_t) (round + 1) * FAOS * nprocs;
        for (int k = 0 ; k < FAOS ; ++k) {
            CHECK(b[t].fetched[k] >= (int64_t) round * FAOS * nprocs && b[t].fetched[k] < limit,
                  "%s round %d: fetch_and_op %d on %d fetched %lld", what, round, k, t, (long long) b[t].fetched[k]);
            if (k > 0) {
                CHECK(b[t].fetched[k] > b[t].fetched[k - 1], "%s round %d: fetch_and_op on %d not increasing",
                      what, round, t);
            }
        }
    }
}

/* Every byte of our window after the round. */
static void check_target(test_win_t *tw, int round, const char *what)
{
    unsigned char *mem = tw->mem;
    int64_t fao, acc, big;

    memcpy(&fao, mem + off_fao, 8);
    CHECK(fao == (int64_t) (round + 1) * FAOS * nprocs, "%s round %d: fetch_and_op counter %lld, expected %lld",
          what, round, (long long) fao, (long long) (round + 1) * FAOS * nprocs);
    for (int o = 0 ; o < nprocs ; ++o) {
        int64_t expected = (int64_t) (round + 1) * (ACCS / (int) NSIZES) * (int) NSIZES;
        memcpy(&acc, mem + off_acc + 8 * (size_t) o, 8);
        CHECK(acc == expected, "%s round %d: accumulate counter of %d is %lld, expected %lld", what, round, o,
              (long long) acc, (long long) expected);
        for (size_t i = 0 ; i < BIG_ACC ; ++i) {
            int64_t want = 0;
            for (int r = 0 ; r <= round ; ++r) want += big_value(o, rank, r, i);
            memcpy(&big, mem + off_big + 8 * ((size_t) BIG_ACC * (size_t) o + i), 8);
            if (big != want) {
                CHECK(0, "%s round %d: big accumulate from %d: element %zu is %lld, expected %lld", what, round,
                      o, i, (long long) big, (long long) want);
                break;
            }
        }
        for (size_t s = 0 ; s < NSIZES ; ++s) {
            const unsigned char *region = mem + off_puts + region_bytes * (size_t) o + size_offset(s);
            for (size_t i = 0 ; i < sizes[s] ; ++i) {
                if (region[i] != put_byte(o, rank, round, sizes[s], i)) {
                    CHECK(0, "%s round %d: put of %zu bytes from %d: byte %zu is %d, expected %d", what, round,
                          sizes[s], o, i, region[i], put_byte(o, rank, round, sizes[s], i));
                    break;
                }
            }
        }
    }
}

static void run(int flavor, int use_fence)
{
    char what[64];
    test_win_t tw;
    origin_bufs_t *b = calloc((size_t) nprocs, sizeof(*b));

    snprintf(what, sizeof(what), "%s/%s", flavor_names[flavor], use_fence ? "fence" : "lock_all");
    for (int t = 0 ; t < nprocs ; ++t) {
        for (size_t s = 0 ; s < NSIZES ; ++s) {
            b[t].got[s] = malloc(sizes[s]);
        }
        b[t].big = malloc(sizeof(int64_t) * BIG_ACC);
        b[t].put_src = malloc(region_bytes);
    }
    test_win_create(&tw, flavor, win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    for (size_t i = 0 ; i < max_size() ; ++i) {
        ((unsigned char *) tw.mem)[off_static + i] = static_byte(rank, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    for (int round = 0 ; round < ROUNDS ; ++round) {
        for (int t = 0 ; t < nprocs ; ++t) {
            memset(b[t].fetched, 0xff, sizeof(b[t].fetched));
            for (size_t s = 0 ; s < NSIZES ; ++s) memset(b[t].got[s], 0, sizes[s]);
        }
        if (use_fence) {
            MPI_OK(MPI_Win_fence(0, tw.win));
        } else {
            MPI_OK(MPI_Win_lock_all(0, tw.win));
        }
        /* start with a different target on every rank: everyone floods
         * everyone at once */
        for (int k = 0 ; k < nprocs ; ++k) {
            flood_target(&tw, b, (rank + k) % nprocs, round);
        }
        if (use_fence) {
            MPI_OK(MPI_Win_fence(0, tw.win));
        } else {
            MPI_OK(MPI_Win_unlock_all(tw.win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        check_origin(b, round, what);
        check_target(&tw, round, what);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    test_win_free(&tw);
    for (int t = 0 ; t < nprocs ; ++t) {
        for (size_t s = 0 ; s < NSIZES ; ++s) free(b[t].got[s]);
        free(b[t].big);
        free(b[t].put_src);
    }
    free(b);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    layout();
    run(FLAVOR_CREATE, 0);
    run(FLAVOR_CREATE, 1);
    run(FLAVOR_DYNAMIC, 0);
    run(FLAVOR_DYNAMIC, 1);
    return test_finalize("fifo_backpressure");
}
