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
 * Windows on communicators other than MPI_COMM_WORLD, every flavor:
 *  - MPI_COMM_SELF;
 *  - MPI_Comm_split into even and odd world ranks;
 *  - a reversed communicator (MPI_Comm_split with key = -rank), where
 *    communicator rank r is world rank size-1-r.
 * Each rank's window has a different size (it depends on the world rank) and
 * starts filled with values that name its world rank, so an operation that
 * reaches the wrong process, or the wrong place, shows.  On each
 * communicator: puts at the first and last word of the right neighbour
 * (fence), a get of its whole window, a put under an exclusive lock, a
 * post/start/complete/wait epoch with groups of the window, and, for shared
 * windows, loads through MPI_Win_shared_query's pointers.  A window on
 * MPI_COMM_WORLD stays open the whole time and is checked at the end.
 */
#include "common.h"

enum { COMM_SELF_, COMM_EVEN_ODD, COMM_REVERSED, COMM_KINDS };
static const char *const comm_names[COMM_KINDS] = { "self", "even/odd split", "reversed" };

static int world_rank, world_size;

/* World rank of communicator rank r, computed independently of MPI. */
static int world_of(int kind, int r)
{
    switch (kind) {
    case COMM_SELF_: return world_rank;
    case COMM_EVEN_ODD: return world_rank % 2 + 2 * r;
    default: return world_size - 1 - r;
    }
}

static int words_of(int w) { return 5 + 3 * w; }     /* window words of world rank w */

static int64_t init_value(int w, int i) { return (int64_t) w * 1000003 + i + 1; }
static int64_t put_value(int writer, int target, int i, int round)
{
    return -((int64_t) round * 100000007 + (int64_t) writer * 1009 + target * 17 + i + 1);
}

static void run(int flavor, int kind)
{
    char what[64];
    snprintf(what, sizeof(what), "%s on %s", flavor_names[flavor], comm_names[kind]);
    MPI_Comm comm;
    if (COMM_SELF_ == kind) MPI_Comm_dup(MPI_COMM_SELF, &comm);
    else if (COMM_EVEN_ODD == kind) MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &comm);
    else MPI_Comm_split(MPI_COMM_WORLD, 0, -world_rank, &comm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CHECK(world_of(kind, rank) == world_rank, "%s: communicator rank %d is world rank %d, expected %d", what, rank,
          world_rank, world_of(kind, rank));
    const MPI_Aint u = sizeof(int64_t);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int wr = world_of(kind, right), wl = world_of(kind, left);
    int nmine = words_of(world_rank), nright = words_of(wr);

    test_win_t tw;
    test_win_create(&tw, flavor, (size_t) nmine * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, comm);
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
    int64_t *mine = tw.mem;
    for (int i = 0; i < nmine; ++i) mine[i] = init_value(world_rank, i);

    /* ---- fence: puts at the first and last word of the right neighbour ---- */
    MPI_OK(MPI_Win_fence(0, tw.win));
    int64_t first = put_value(world_rank, wr, 0, 1), last = put_value(world_rank, wr, nright - 1, 1);
    MPI_OK(MPI_Put(&first, 1, MPI_INT64_T, right, test_disp(&tw, right, 0, u), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Put(&last, 1, MPI_INT64_T, right, test_disp(&tw, right, nright - 1, u), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    for (int i = 0; i < nmine; ++i) {
        int64_t expect = (0 == i || nmine - 1 == i) ? put_value(wl, world_rank, i, 1) : init_value(world_rank, i);
        CHECK(mine[i] == expect, "%s: after the left neighbour's puts my word %d is %lld, expected %lld", what, i,
              (long long) mine[i], (long long) expect);
    }
    /* the whole right neighbour's window */
    int64_t *got = calloc((size_t) nright, sizeof(int64_t));
    MPI_OK(MPI_Get(got, nright, MPI_INT64_T, right, test_disp(&tw, right, 0, u), nright, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    for (int i = 0; i < nright; ++i) {
        int64_t expect = (0 == i || nright - 1 == i) ? put_value(world_rank, wr, i, 1) : init_value(wr, i);
        CHECK(got[i] == expect, "%s: get of rank %d (world %d): word %d is %lld, expected %lld", what, right, wr, i,
              (long long) got[i], (long long) expect);
    }

    /* ---- an exclusive lock on the left neighbour ---- */
    int nleft = words_of(wl);
    int64_t v = put_value(world_rank, wl, 1, 2);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, left, 0, tw.win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, left, test_disp(&tw, left, nleft - 2, u), 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(left, tw.win));
    MPI_Barrier(comm);
    CHECK(mine[nmine - 2] == put_value(wr, world_rank, 1, 2),
          "%s: word %d after the right neighbour's locked put is %lld, expected %lld", what, nmine - 2,
          (long long) mine[nmine - 2], (long long) put_value(wr, world_rank, 1, 2));
    MPI_Barrier(comm);

    /* ---- post/start/complete/wait with groups of the window ---- */
    {
        MPI_Group wgroup, post_group, start_group;
        MPI_Win_get_group(tw.win, &wgroup);
        MPI_Group_incl(wgroup, 1, &left, &post_group);     /* the left neighbour writes to me */
        MPI_Group_incl(wgroup, 1, &right, &start_group);   /* I write to my right neighbour */
        int64_t pv = put_value(world_rank, wr, 2, 3);
        MPI_OK(MPI_Win_post(post_group, 0, tw.win));
        MPI_OK(MPI_Win_start(start_group, 0, tw.win));
        MPI_OK(MPI_Put(&pv, 1, MPI_INT64_T, right, test_disp(&tw, right, 1, u), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_complete(tw.win));
        MPI_OK(MPI_Win_wait(tw.win));
        CHECK(mine[1] == put_value(wl, world_rank, 2, 3), "%s: word 1 after the PSCW put is %lld, expected %lld", what,
              (long long) mine[1], (long long) put_value(wl, world_rank, 2, 3));
        MPI_Group_free(&post_group);
        MPI_Group_free(&start_group);
        MPI_Group_free(&wgroup);
    }

    /* ---- shared windows: every rank's memory through the queried pointer ---- */
    if (FLAVOR_SHARED == flavor) {
        MPI_Barrier(comm);
        MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, tw.win));
        MPI_OK(MPI_Win_sync(tw.win));
        for (int r = 0; r < size; ++r) {
            MPI_Aint qsize = 0;
            int qdisp = 0;
            int64_t *qbase = NULL;
            int w = world_of(kind, r);
            MPI_OK(MPI_Win_shared_query(tw.win, r, &qsize, &qdisp, &qbase));
            CHECK(qsize == (MPI_Aint) (words_of(w) * sizeof(int64_t)) && qdisp == (int) sizeof(int64_t),
                  "%s: query(%d) gave size %ld disp_unit %d, expected %lu %d", what, r, (long) qsize, qdisp,
                  (unsigned long) (words_of(w) * sizeof(int64_t)), (int) sizeof(int64_t));
            if (NULL != qbase && qsize >= 3 * (MPI_Aint) sizeof(int64_t))
                CHECK(qbase[2] == init_value(w, 2), "%s: word 2 through query(%d) is %lld, expected %lld (world rank %d)",
                      what, r, (long long) qbase[2], (long long) init_value(w, 2), w);
        }
        MPI_OK(MPI_Win_unlock_all(tw.win));
    }

    MPI_Barrier(comm);
    test_win_free(&tw);
    free(got);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    /* a world window that stays open while the others come and go */
    test_win_t world;
    test_win_create(&world, FLAVOR_ALLOCATE, sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(world.win, MPI_ERRORS_RETURN);
    *(int64_t *) world.mem = init_value(world_rank, 0);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor))
        for (int kind = 0; kind < COMM_KINDS; ++kind) run(flavor, kind);

    int wright = (world_rank + 1) % world_size;
    int64_t got = 0;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, wright, 0, world.win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, wright, 0, 1, MPI_INT64_T, world.win));
    MPI_OK(MPI_Win_unlock(wright, world.win));
    CHECK(got == init_value(wright, 0), "world window: get of rank %d is %lld, expected %lld", wright,
          (long long) got, (long long) init_value(wright, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&world);
    return test_finalize("comms");
}
