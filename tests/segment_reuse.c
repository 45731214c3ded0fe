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
 * A freed window's node segment serves the next window of the same processes
 * (osc_newrma_segment_cache_bytes > 0), and a reused segment behaves like a
 * new one:
 *  - a sequence of windows of every flavor on MPI_COMM_WORLD, on a copy with
 *    the ranks in reverse order (same processes, new layout) and on halves of
 *    it (other processes): each window's memory in the node segment (allocate
 *    flavors) is zero at creation, as a new segment's is, and fence, PSCW, exclusive-lock
 *    accumulate, lock_all fetch_and_op and shared-lock get all give the
 *    expected values -- so no lock word, ring cell, counter or barrier count
 *    of the previous window leaks into the next;
 *  - whether a window reused the freed segment is read from /proc/self/maps
 *    (a new segment is a new tmpfs inode): it must, exactly when the
 *    processes are those of the segment kept, the layout fits and reuse is
 *    on; with reuse off (osc_newrma_segment_cache_bytes=0, the "minimum"
 *    mode) every window maps a new segment;
 *  - after the last window is freed a process maps at most the one segment it
 *    keeps (none with reuse off).
 * The windows on MPI_COMM_WORLD need it on one node: across nodes they have
 * no node segment (active messages) and allocate_shared ones do not exist.
 *
 * newrma-test: only-newrma np>=2 one-node
 */
#include "common.h"

#define MAX_INODES 64
#define BIG 65536               /* the first window: every later one fits in its segment */

static int rank, size;

/* inodes of this process's mappings of newrma segment files */
static int segment_inodes(unsigned long *inodes)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (NULL == f) return -1;
    while (fgets(line, sizeof(line), f) && n < MAX_INODES) {
        unsigned long inode;
        if (strstr(line, "/" TEST_SHM_PREFIX) && 1 == sscanf(line, "%*s %*s %*s %*s %lu", &inode))
            inodes[n++] = inode;
    }
    fclose(f);
    return n;
}

/* whether a mapping appeared that was not there before */
static int mapped_new_segment(const unsigned long *before, int nb)
{
    unsigned long after[MAX_INODES];
    int na = segment_inodes(after);
    for (int i = 0; i < na; ++i) {
        int seen = 0;
        for (int j = 0; j < nb && !seen; ++j) seen = after[i] == before[j];
        if (!seen) return 1;
    }
    return 0;
}

/* Every synchronization on window `tw` of `n` int64 per rank; `id` makes
 * each window's values its own. */
static void exercise(test_win_t *tw, MPI_Comm comm, int n, int id)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    int64_t *mem = tw->mem, v, got = -1, one = 1, old = -1;
    int right = (r + 1) % p, left = (r + p - 1) % p;
    MPI_Group group, all;

    /* fence: put to the right neighbour's element 0 */
    v = 1000 * id + r;
    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, 0, 8), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(0, tw->win));
    CHECK(mem[0] == 1000 * id + left, "window %d: fence put gave %lld, expected %lld", id, (long long) mem[0],
          (long long) (1000 * id + left));

    /* PSCW with everybody: add 1 to element 1 of every rank */
    MPI_Comm_group(comm, &all);
    MPI_Group_excl(all, 1, &r, &group);
    MPI_OK(MPI_Win_post(group, 0, tw->win));
    MPI_OK(MPI_Win_start(group, 0, tw->win));
    for (int t = 0; t < p; ++t)
        if (t != r)
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, test_disp(tw, t, 1, 8), 1, MPI_INT64_T, MPI_SUM, tw->win));
    MPI_OK(MPI_Win_complete(tw->win));
    MPI_OK(MPI_Win_wait(tw->win));
    CHECK(mem[1] == p - 1, "window %d: PSCW accumulates gave %lld, expected %d", id, (long long) mem[1], p - 1);
    MPI_Group_free(&group);
    MPI_Group_free(&all);

    /* exclusive locks: everybody adds to rank 0's element 2 */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, test_disp(tw, 0, 2, 8), 1, MPI_INT64_T, MPI_SUM, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));

    /* lock_all: fetch_and_op on the last element of the left neighbour */
    MPI_OK(MPI_Win_lock_all(0, tw->win));
    MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, left, test_disp(tw, left, n - 1, 8), MPI_SUM, tw->win));
    MPI_OK(MPI_Win_unlock_all(tw->win));
    CHECK(0 == old, "window %d: fetch_and_op found %lld, expected 0", id, (long long) old);
    MPI_Barrier(comm);

    /* shared lock: read rank 0's element 2 */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, 0, test_disp(tw, 0, 2, 8), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_unlock(0, tw->win));
    CHECK(got == p, "window %d: exclusive-lock accumulates gave %lld, expected %d", id, (long long) got, p);
}

/* One window: its memory zero at creation (allocate flavors), every
 * synchronization right, and a new segment mapped exactly when expected. */
static void one_window(int id, int flavor, int n, MPI_Comm comm, int expect_new)
{
    unsigned long before[MAX_INODES];
    int nb = segment_inodes(before);
    int csize;
    MPI_Comm_size(comm, &csize);

    test_win_t tw;
    memset(&tw, 0, sizeof(tw));
    tw.flavor = flavor;
    tw.comm = comm;
    if (FLAVOR_ALLOCATE == flavor || FLAVOR_SHARED == flavor) {
        /* test_win_create zeroes the memory; look before it does */
        MPI_OK(FLAVOR_ALLOCATE == flavor
                   ? MPI_Win_allocate(8 * n, 8, MPI_INFO_NULL, comm, &tw.mem, &tw.win)
                   : MPI_Win_allocate_shared(8 * n, 8, MPI_INFO_NULL, comm, &tw.mem, &tw.win));
        /* in the node segment (a window of one process has private memory,
         * one on the active-message path memory of its own: not zeroed) */
        if (csize > 1 && !test_am_path(flavor)) {
            int nonzero = 0;
            for (int i = 0; i < n; ++i) nonzero += 0 != ((int64_t *) tw.mem)[i];
            CHECK(0 == nonzero, "window %d (%s): %d of %d elements not zero at creation", id,
                  flavor_names[flavor], nonzero, n);
        }
        MPI_Barrier(comm);
        memset(tw.mem, 0, 8 * (size_t) n);
        MPI_Barrier(comm);
    } else {
        test_win_create(&tw, flavor, 8 * (size_t) n, 8, MPI_INFO_NULL, comm);
    }
    int got_new = mapped_new_segment(before, nb);
    /* (with every peer remote only allocate_shared windows have segments:
     * what is kept depends on more than this sequence, so only values are
     * checked) */
    if (!test_am_path(flavor) && !test_am_path(FLAVOR_ALLOCATE) && csize > 1)
        CHECK(got_new == expect_new, "window %d (%s, %d ranks): %s, expected %s", id, flavor_names[flavor], csize,
              got_new ? "a new segment was mapped" : "the freed window's segment was reused",
              expect_new ? "a new one" : "reuse");
    exercise(&tw, comm, n, id);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    MPI_Comm reversed, half;
    unsigned long inodes[MAX_INODES];

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    test_am_path(FLAVOR_ALLOCATE);   /* MPI_T up */
    const int reuse = test_cvar_u64("osc_newrma_segment_cache_bytes") >= 2 * (unsigned long long) BIG * (unsigned long long) size;
    const int fresh = !reuse;   /* what a reusable window gets: reuse, or a new segment */
    int id = 0;

    /* the first: a new segment, large enough for every later window */
    one_window(id++, FLAVOR_ALLOCATE, BIG / 8, MPI_COMM_WORLD, 1);
    for (int round = 0; round < 3; ++round) {
        /* the same processes, every flavor, either rank order */
        one_window(id++, FLAVOR_ALLOCATE, 512, MPI_COMM_WORLD, fresh);
        one_window(id++, FLAVOR_CREATE, 64, reversed, fresh);
        one_window(id++, FLAVOR_SHARED, 1024, MPI_COMM_WORLD, fresh);
        one_window(id++, FLAVOR_DYNAMIC, 64, MPI_COMM_WORLD, fresh);
        one_window(id++, FLAVOR_ALLOCATE, BIG / 8, reversed, fresh);
        /* other processes: a new segment, which becomes the one kept... */
        if (size > 2) {
            one_window(id++, FLAVOR_ALLOCATE, 256, half, 1);
            /* ...so the whole group maps a new one again, then reuses it */
            one_window(id++, FLAVOR_ALLOCATE, BIG / 8, MPI_COMM_WORLD, 1);
            one_window(id++, FLAVOR_CREATE, 128, MPI_COMM_WORLD, fresh);
        }
    }
    /* larger than the kept segment: a new one */
    one_window(id++, FLAVOR_ALLOCATE, 2 * BIG / 8, MPI_COMM_WORLD, 1);

    MPI_Barrier(MPI_COMM_WORLD);
    int maps = segment_inodes(inodes);
    CHECK(maps <= (reuse ? 1 : 0), "%d segment mappings remain after every window was freed (%s)", maps,
          reuse ? "at most the one kept for reuse" : "reuse is off: none");

    MPI_Comm_free(&half);
    MPI_Comm_free(&reversed);
    return test_finalize("segment_reuse");
}
