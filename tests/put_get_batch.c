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
 * Many small puts and gets between two synchronizations (on create and
 * dynamic windows newrma gathers these into one system call per 64
 * operations, per target and direction): every rank puts 300 blocks of
 * varied sizes (1 B .. 20 KiB, some above the batching limit) to targets in
 * turn, each block to its own place, in one lock_all epoch, then flushes
 * and gets them all back the same way, interleaving targets and puts of
 * another region; a completed MPI_Rput's buffer is overwritten at once and
 * the target must still get the data it held; then the same under fence
 * and PSCW.  Exact bytes everywhere.  (osc/rdma passes; Open MPI 4.1.4's
 * osc/ucx reads back wrong bytes in the lock_all part at 3 and 4 ranks.)
 * newrma-test: np>=1
 */
#include "common.h"

#define OPS 300
#define REGION (3u << 20)      /* per origin: the blocks of one origin at one target */

static int rank, size;

static size_t block_size(int i) { return i % 7 == 6 ? 20000 : (size_t) (1 + (i * 397) % 3000); }

/* where block i starts in an origin's buffer and region: summed once, not
 * per byte checked (that sum per byte was most of the test's time) */
static size_t offsets[OPS + 1];
static void sum_offsets(void) { for (int i = 0; i < OPS; ++i) offsets[i + 1] = offsets[i] + block_size(i); }
static size_t block_offset(int i) { return offsets[i]; }
static unsigned char byte(int origin, int i, size_t j) { return (unsigned char) (origin * 31 + i * 7 + j); }

/* origin o's region at a target */
static MPI_Aint region(const test_win_t *tw, int target, int o) { return test_disp(tw, target, (MPI_Aint) o * REGION, 1); }

static void put_all(test_win_t *tw, unsigned char *src)
{
    for (int i = 0; i < OPS; ++i) {
        int t = (rank + i) % size;
        MPI_OK(MPI_Put(src + block_offset(i), (int) block_size(i), MPI_BYTE, t, region(tw, t, rank) + (MPI_Aint) block_offset(i),
                       (int) block_size(i), MPI_BYTE, tw->win));
    }
}

static void get_all(test_win_t *tw, unsigned char *dst)
{
    memset(dst, 0, block_offset(OPS));
    for (int i = 0; i < OPS; ++i) {
        int t = (rank + i) % size;
        MPI_OK(MPI_Get(dst + block_offset(i), (int) block_size(i), MPI_BYTE, t, region(tw, t, rank) + (MPI_Aint) block_offset(i),
                       (int) block_size(i), MPI_BYTE, tw->win));
    }
}

static int count_wrong(const unsigned char *dst)
{
    int wrong = 0;
    for (int i = 0; i < OPS; ++i)
        for (size_t j = 0; j < block_size(i); ++j) wrong += dst[block_offset(i) + j] != byte(rank, i, j);
    return wrong;
}

static void run(int flavor)
{
    const char *fl = flavor_names[flavor];
    size_t total = block_offset(OPS);
    unsigned char *src = malloc(total), *dst = malloc(total);
    test_win_t tw;
    int wrong;

    for (int i = 0; i < OPS; ++i)
        for (size_t j = 0; j < block_size(i); ++j) src[block_offset(i) + j] = byte(rank, i, j);
    test_win_create(&tw, flavor, (size_t) size * REGION, 1, MPI_INFO_NULL, MPI_COMM_WORLD);

    /* passive target: puts, flush_all, gets, flush_all */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    put_all(&tw, src);
    MPI_OK(MPI_Win_flush_all(tw.win));
    get_all(&tw, dst);
    MPI_OK(MPI_Win_flush_all(tw.win));
    wrong = count_wrong(dst);
    CHECK(0 == wrong, "%s: lock_all: %d bytes read back wrong", fl, wrong);

    /* a completed MPI_Rput is complete locally: its buffer may change at
     * once, and the target still gets what it held at the call */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char mark[64];
    MPI_Request req;
    for (int j = 0; j < 64; ++j) mark[j] = (unsigned char) (200 + rank + j);
    MPI_OK(MPI_Rput(mark, 64, MPI_BYTE, right, region(&tw, right, rank), 64, MPI_BYTE, tw.win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    memset(mark, 0, sizeof(mark));
    MPI_OK(MPI_Win_flush_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_sync(tw.win));
    wrong = 0;
    for (int j = 0; j < 64; ++j)
        wrong += ((unsigned char *) tw.mem)[(size_t) left * REGION + (size_t) j] != (unsigned char) (200 + left + j);
    CHECK(0 == wrong, "%s: %d bytes of the MPI_Rput from %d wrong at the target", fl, wrong, left);
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* fence: puts in one epoch, gets in the next */
    for (int i = 0; i < OPS; ++i)
        for (size_t j = 0; j < block_size(i); ++j) src[block_offset(i) + j] ^= 0x5a;
    MPI_OK(MPI_Win_fence(0, tw.win));
    put_all(&tw, src);
    MPI_OK(MPI_Win_fence(0, tw.win));
    get_all(&tw, dst);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    wrong = 0;
    for (size_t k = 0; k < total; ++k) wrong += dst[k] != src[k];
    CHECK(0 == wrong, "%s: fence: %d bytes read back wrong", fl, wrong);

    /* PSCW with everyone: puts, complete/wait, then gets */
    MPI_Group all;
    MPI_Comm_group(MPI_COMM_WORLD, &all);
    for (size_t k = 0; k < total; ++k) src[k] ^= 0xff;
    MPI_OK(MPI_Win_post(all, 0, tw.win));
    MPI_OK(MPI_Win_start(all, 0, tw.win));
    put_all(&tw, src);
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    MPI_OK(MPI_Win_post(all, 0, tw.win));
    MPI_OK(MPI_Win_start(all, 0, tw.win));
    get_all(&tw, dst);
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    wrong = 0;
    for (size_t k = 0; k < total; ++k) wrong += dst[k] != src[k];
    CHECK(0 == wrong, "%s: pscw: %d bytes read back wrong", fl, wrong);
    MPI_Group_free(&all);

    test_win_free(&tw);
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sum_offsets();
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("put_get_batch");
}
