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
 * Where MPI_Win_allocate puts each rank's window memory in the node segment
 * (osc_newrma_shm.c, rank_data_start), and that the placement loses
 * nothing:
 *  - every window starts on a cache line, whatever its size (no false
 *    sharing between neighbours); a zero-byte window has no placement to
 *    check;
 *  - rank sizes below, at and above the threshold, all small, all large, and
 *    mixed in one window, so that a small rank's neighbour is large;
 *  - every rank fills its own memory with its pattern, then every rank gets
 *    every other rank's whole window and checks it, so a rank block that
 *    overlapped its neighbour's, or a base that did not match the memory the
 *    origins address, gives wrong bytes; then each rank puts a pattern over
 *    the whole of the next rank's window and the owner checks it;
 *  - windows are allocated and freed in turn (large, small, large, ...), so
 *    that a segment kept from a freed window is reused where it fits, and
 *    the reused one must place every rank as a new one would.
 * On the active-message path (osc_newrma_force_remote, force_am) window
 * memory is not in a node segment: the placement is not checked there (a
 * note says so), the values are.
 *
 * newrma-test: only-newrma np>=1
 */
#include "common.h"


#define LARGE 65536

static int rank, size;

static unsigned char pattern(int owner, size_t i, int salt)
{
    return (unsigned char) (owner * 37 + (int) (i % 251) + salt * 11 + 1);
}

/* this rank's window size in layout `kind` */
static MPI_Aint rank_bytes(int kind, int r)
{
    switch (kind) {
    case 0: return 100 + 8 * r;                               /* all small */
    case 1: return (MPI_Aint) (1 << 20) + 24 * r;              /* all large */
    case 2: return 0 == r % 2 ? LARGE : LARGE - 8;             /* at and just below */
    case 3: return 0 == r % 3 ? 4096 + r : 1 == r % 3 ? 0 : 3 * LARGE + 40;  /* mixed, with an empty rank */
    case 4: return LARGE - 64;                                 /* all just below: a big line-aligned segment */
    case 5: return 0 == r ? LARGE : 8;                         /* one large rank: fits in the one before */
    default: return 8;
    }
}

static void check_placement(int kind, const void *base, MPI_Aint bytes)
{
    uintptr_t addr = (uintptr_t) base;

    if (0 == bytes) return;
    CHECK(addr % 64 == 0, "layout %d: a window of %ld bytes at %p, not on a cache line", kind, (long) bytes, base);
}

/* every rank's memory, got by every rank, is its owner's pattern */
static void check_gets(MPI_Win win, int kind, int salt)
{
    for (int t = 0; t < size; ++t) {
        MPI_Aint bytes = rank_bytes(kind, t);
        unsigned char *got;
        int bad = 0;
        if (0 == bytes || t == rank) continue;
        got = malloc((size_t) bytes);
        memset(got, 0, (size_t) bytes);
        MPI_OK(MPI_Get(got, (int) bytes, MPI_BYTE, t, 0, (int) bytes, MPI_BYTE, win));
        MPI_OK(MPI_Win_flush(t, win));
        for (MPI_Aint i = 0; i < bytes && !bad; ++i) bad = got[i] != pattern(t, (size_t) i, salt);
        CHECK(!bad, "layout %d: rank %d's window of %ld bytes read back wrong", kind, t, (long) bytes);
        free(got);
    }
}

static void run(int kind, int salt)
{
    MPI_Aint bytes = rank_bytes(kind, rank);
    unsigned char *base = NULL, *mine;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Aint next_bytes = rank_bytes(kind, next);
    MPI_Win win;

    MPI_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    if (!test_am_path(FLAVOR_ALLOCATE)) check_placement(kind, base, bytes);

    /* own memory filled by its owner inside an exclusive self-lock */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (MPI_Aint i = 0; i < bytes; ++i) base[i] = pattern(rank, (size_t) i, salt);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_OK(MPI_Win_lock_all(0, win));
    check_gets(win, kind, salt);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* the whole of the next rank's window overwritten with ours */
    if (next != rank && next_bytes > 0) {
        mine = malloc((size_t) next_bytes);
        for (MPI_Aint i = 0; i < next_bytes; ++i) mine[i] = pattern(rank + 100, (size_t) i, salt);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
        MPI_OK(MPI_Put(mine, (int) next_bytes, MPI_BYTE, next, 0, (int) next_bytes, MPI_BYTE, win));
        MPI_OK(MPI_Win_unlock(next, win));
        free(mine);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (prev != rank && bytes > 0) {
        int bad = 0;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        for (MPI_Aint i = 0; i < bytes && !bad; ++i) bad = base[i] != pattern(prev + 100, (size_t) i, salt);
        MPI_OK(MPI_Win_unlock(rank, win));
        CHECK(!bad, "layout %d: the put of rank %d over this window of %ld bytes reads back wrong", kind, prev,
              (long) bytes);
    }
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (0 == rank && test_am_path(FLAVOR_ALLOCATE))
        printf("note: active-message path, window memory not in a node segment: placement not checked\n");
    /* windows of every size in turn: each may reuse the segment the one
     * before left */
    int order[] = { 4, 5, 1, 0, 1, 3, 2, 0, 3 };
    for (int k = 0; k < (int) (sizeof(order) / sizeof(order[0])); ++k) run(order[k], k);
    return test_finalize("allocate_placement");
}
