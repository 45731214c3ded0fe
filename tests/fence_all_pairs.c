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
 * Every rank accesses every other rank in every fence epoch, with one rank
 * late at random: a fence that lets a process out before everyone's
 * operations are done at it (or before everyone's stores before it are
 * made) shows as a wrong value.  On a window spanning nodes (pretend
 * nodes, the node modes) the pairs are node-local and remote alike, so the
 * hierarchical fence's node barrier, leaders' barrier and release are all
 * on the path.  Every flavor.
 *
 * Epoch e (words of parity q = e mod 2, so neighbouring epochs never share
 * one): before the fence that opens it, each rank stores e's stamp in its
 * own stamp[q]; in it, each rank puts (e, origin) into slot[q][origin] of
 * every other rank, adds e + 1 to every other rank's counter, and gets
 * every other rank's stamp[q]; after the fence that closes it, each rank
 * checks its slots (every origin's put for e), its counter (the sum of
 * every origin's additions so far) and the stamps it got (every target's
 * for e).  One rank, a different one each epoch, waits a random time
 * (up to 2 ms, outside MPI) before its operations or before its closing
 * fence.  Odd epochs are opened by fence(NOPRECEDE) and closed by
 * fence(NOSUCCEED), even ones by fence(0).
 *
 * newrma-test: np>=2
 */
#include "common.h"

#define EPOCHS 120
#define MAX_DELAY_US 2000.0

static int64_t put_value(int epoch, int origin, int size) { return (int64_t) epoch * size + origin + 1; }
static int64_t stamp_value(int epoch, int owner) { return (int64_t) epoch * 1000003 + owner + 7; }

/* Word indices: stamp[2], counter, slot[2][size]. */
enum { STAMP = 0, COUNTER = 2, SLOTS = 3 };
static MPI_Aint slot_index(int parity, int origin, int size) { return SLOTS + (MPI_Aint) parity * size + origin; }

static void maybe_late(int epoch, int rank, int size, int where)
{
    if ((epoch * 7 + 3) % size == rank && epoch % 2 == where) {
        test_compute_us(MAX_DELAY_US * ((double) rand() / RAND_MAX));
    }
}

static void access_everyone(test_win_t *tw, int epoch, int rank, int size, int64_t *got, int64_t *put_src,
                            int64_t *add_src)
{
    int q = epoch % 2;

    *put_src = put_value(epoch, rank, size);
    *add_src = epoch + 1;
    for (int t = 0; t < size; ++t) {
        if (t == rank) continue;
        MPI_OK(MPI_Put(put_src, 1, MPI_INT64_T, t, test_disp(tw, t, slot_index(q, rank, size), sizeof(int64_t)),
                       1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Accumulate(add_src, 1, MPI_INT64_T, t, test_disp(tw, t, COUNTER, sizeof(int64_t)), 1,
                              MPI_INT64_T, MPI_SUM, tw->win));
        MPI_OK(MPI_Get(&got[t], 1, MPI_INT64_T, t, test_disp(tw, t, STAMP + q, sizeof(int64_t)), 1, MPI_INT64_T,
                       tw->win));
    }
}

static void check_epoch(const test_win_t *tw, int epoch, int rank, int size, const int64_t *got)
{
    const int64_t *mine = tw->mem;
    int q = epoch % 2;
    /* every other rank added 1 + 2 + ... + (epoch + 1) */
    int64_t sum = (int64_t) (size - 1) * (epoch + 1) * (epoch + 2) / 2;

    for (int o = 0; o < size; ++o) {
        if (o == rank) continue;
        CHECK(mine[slot_index(q, o, size)] == put_value(epoch, o, size),
              "%s: epoch %d: slot of origin %d is %lld, expected %lld", flavor_names[tw->flavor], epoch, o,
              (long long) mine[slot_index(q, o, size)], (long long) put_value(epoch, o, size));
        CHECK(got[o] == stamp_value(epoch, o), "%s: epoch %d: stamp got from %d is %lld, expected %lld",
              flavor_names[tw->flavor], epoch, o, (long long) got[o], (long long) stamp_value(epoch, o));
    }
    CHECK(mine[COUNTER] == sum, "%s: epoch %d: counter is %lld, expected %lld", flavor_names[tw->flavor], epoch,
          (long long) mine[COUNTER], (long long) sum);
}

static void run(int flavor, int rank, int size)
{
    size_t words = (size_t) SLOTS + 2 * (size_t) size;
    int64_t *got = calloc((size_t) size, sizeof(int64_t)), put_src = 0, add_src = 0;
    test_win_t tw;

    test_win_create(&tw, flavor, words * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    for (int e = 0; e < EPOCHS; ++e) {
        int odd = e % 2;
        ((int64_t *) tw.mem)[STAMP + odd] = stamp_value(e, rank);
        MPI_OK(MPI_Win_fence(odd ? MPI_MODE_NOPRECEDE : 0, tw.win));
        maybe_late(e, rank, size, 1);
        access_everyone(&tw, e, rank, size, got, &put_src, &add_src);
        maybe_late(e, rank, size, 0);
        MPI_OK(MPI_Win_fence(odd ? MPI_MODE_NOSUCCEED : 0, tw.win));
        check_epoch(&tw, e, rank, size, got);
    }
    test_win_free(&tw);
    free(got);
}

int main(int argc, char **argv)
{
    int rank, size;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    srand(12345u + (unsigned int) rank);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor, rank, size);
    return test_finalize("fence_all_pairs");
}
