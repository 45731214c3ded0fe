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
 * Payloads copied in pieces (osc_newrma_copy_chunk_bytes): puts, gets,
 * MPI_REPLACE accumulates and MPI_NO_OP get_accumulates of lengths around
 * the piece size -- one short, exact, one over, several pieces and a
 * remainder -- at odd displacements.  Each must land whole and nothing
 * beside it may change: the target's window and the origin's result buffer
 * are filled with a guard byte first, and every byte is checked.
 *
 * Runs with small pieces (4 KiB, mca below) so that every length crosses
 * several; tests/copy_chunks_off.c runs it with pieces switched off (0).
 * With another component, or newrma's pieces off, the lengths are taken
 * around 4 KiB all the same.  Every flavor, every mode (tests/run.sh).
 *
 * newrma-test: np>=2 mca=osc_newrma_copy_chunk_bytes:4096
 */
#include "common.h"

#define GUARD 0xEE
#define OFFSET 12                 /* bytes: odd for the copies, whole ints for the accumulates */

static int rank, nprocs;

/* the byte at index i of what origin o sends in round r */
static unsigned char pattern(size_t i, int o, int r)
{
    unsigned char b = (unsigned char) (i * 7 + (size_t) o * 13 + (size_t) r * 29);
    return GUARD == b ? 0 : b;
}

static void fill_pattern(unsigned char *buf, size_t n, int o, int r)
{
    for (size_t i = 0 ; i < n ; ++i) {
        buf[i] = pattern(i, o, r);
    }
}

/* buf[0, off) and buf[off + n, total) hold the guard, buf[off, off + n)
 * origin o's pattern of round r; counts the bytes that do not */
static int check_region(const unsigned char *buf, size_t total, size_t off, size_t n, int o, int r)
{
    int bad = 0;
    for (size_t i = 0 ; i < total ; ++i) {
        unsigned char want = (i >= off && i < off + n) ? pattern(i - off, o, r) : GUARD;
        bad += buf[i] != want;
    }
    return bad;
}

enum kind { PUT, ACC_REPLACE, GET, GACC_NO_OP, KINDS };
static const char *const kind_names[KINDS] = { "put", "accumulate(REPLACE)", "get", "get_accumulate(NO_OP)" };

/* One transfer of n bytes (a multiple of sizeof(int) for the accumulate
 * family) between this rank and its right neighbour, in a fence epoch;
 * then the bytes that moved are checked where they landed. */
static void one_transfer(test_win_t *tw, size_t window, enum kind kind, size_t n, int r,
                         unsigned char *origin, unsigned char *result)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int reads = GET == kind || GACC_NO_OP == kind;
    int ints = (int) (n / sizeof(int));
    MPI_Aint disp = test_disp(tw, right, OFFSET, 1);
    int bad;

    /* targets of writes start all guard; targets of reads hold the pattern
     * of their owner, read into a result buffer that starts all guard */
    memset(tw->mem, GUARD, window);
    if (reads) {
        fill_pattern((unsigned char *) tw->mem + OFFSET, n, rank, r);
    }
    memset(result, GUARD, window);
    fill_pattern(origin, n, rank, r);
    MPI_OK(MPI_Win_fence(0, tw->win));
    switch (kind) {
    case PUT:
        MPI_OK(MPI_Put(origin, (int) n, MPI_BYTE, right, disp, (int) n, MPI_BYTE, tw->win));
        break;
    case ACC_REPLACE:
        MPI_OK(MPI_Accumulate(origin, ints, MPI_INT, right, disp, ints, MPI_INT, MPI_REPLACE, tw->win));
        break;
    case GET:
        MPI_OK(MPI_Get(result + OFFSET, (int) n, MPI_BYTE, right, disp, (int) n, MPI_BYTE, tw->win));
        break;
    default:
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, result + OFFSET, ints, MPI_INT, right, disp, ints, MPI_INT,
                                  MPI_NO_OP, tw->win));
        break;
    }
    MPI_OK(MPI_Win_fence(0, tw->win));
    bad = reads ? check_region(result, window, OFFSET, n, right, r)
                : check_region(tw->mem, window, OFFSET, n, left, r);
    CHECK(0 == bad, "%s window, %s of %zu bytes at %d: %d bytes wrong", flavor_names[tw->flavor],
          kind_names[kind], n, OFFSET, bad);
    MPI_OK(MPI_Win_fence(0, tw->win));     /* every check done before the next round's memset */
}

static void run_flavor(int flavor, size_t piece)
{
    /* one short, exact, one over, several pieces and a remainder; the
     * accumulates take the ints in the same lengths (rounded down) */
    const size_t lengths[] = { 1, piece - 1, piece, piece + 1, 3 * piece + 5, 5 * piece };
    const size_t window = OFFSET + 5 * piece + 64;
    unsigned char *origin = malloc(window), *result = malloc(window);
    test_win_t tw;
    int r = 0;

    test_win_create(&tw, flavor, window, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    for (int kind = 0 ; kind < KINDS ; ++kind) {
        for (size_t k = 0 ; k < sizeof(lengths) / sizeof(lengths[0]) ; ++k) {
            size_t n = (PUT == kind || GET == kind) ? lengths[k] : lengths[k] / sizeof(int) * sizeof(int);
            if (n > 0) {
                one_transfer(&tw, window, (enum kind) kind, n, ++r, origin, result);
            }
        }
    }
    test_win_free(&tw);
    free(origin);
    free(result);
}

int main(int argc, char **argv)
{
    int provided;
    size_t piece;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    piece = (size_t) test_cvar_u64("osc_newrma_copy_chunk_bytes");
    if (0 == piece || piece > 64 * 1024) {
        piece = 4096;                      /* another component, or pieces off: lengths as if 4 KiB */
    }
    for (int flavor = 0 ; flavor < FLAVOR_COUNT ; ++flavor) {
        run_flavor(flavor, piece);
    }
    MPI_T_finalize();
    return test_finalize("copy_chunks");
}
