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
 * MPI_Win_shared_query on windows of every flavor (MPI 4.1 §12.2.3: it may
 * be called on create, allocate and allocate_shared windows; for a rank
 * whose memory the caller cannot load and store it returns size 0 and a
 * NULL base; dynamic windows stay MPI_ERR_RMA_FLAVOR: tests/dynamic_attach.c).  Ranks have
 * different sizes (rank 1 none) and disp_units.  For every rank the query
 * gives exactly its size and disp_unit and a usable pointer where the
 * memory is addressable here, and 0, 0 and NULL where it is not; the
 * caller's own memory is always addressable (the base the window was made
 * with).  What is addressable for newrma:
 *  - create: only the caller's own memory (a peer's user memory is reached
 *    by single copy or messages, never mapped);
 *  - allocate: the ranks of the caller's node (the node segment, or the
 *    node route's segment of a window spanning nodes, real or pretended
 *    with osc_newrma_fifo_node_ranks), only its own with
 *    osc_newrma_force_remote;
 *  - allocate_shared: every rank.
 * MPI_PROC_NULL gives the lowest addressable rank with memory.  Stores
 * through the returned pointers, made visible by MPI_Win_sync and a barrier
 * in a lock_all epoch, are seen by the owner and by the other ranks that
 * can address the memory.
 *
 * newrma-test: only-newrma np>=1
 * (Open MPI 4.1's own components answer MPI_ERR_RMA_FLAVOR on create and
 * allocate windows: MPI 3.1's rule)
 */
#include "common.h"

static int rank, size;
static int *same_node;          /* per world rank: on this rank's (pretend) node */

static int disp_unit_of(int r) { return 0 == r % 2 ? 8 : 4; }
/* int64 elements of rank r: room for one per writer, none at rank 1 */
static size_t elems_of(int r) { return 1 == r ? 0 : (size_t) (size + r); }
static int64_t stored(int writer, int owner) { return (int64_t) writer * 1000003 + owner * 1009 + 7; }

/* The ranks on this rank's node as the component sees them: the node of
 * MPI_COMM_TYPE_SHARED, cut into nodes of osc_newrma_fifo_node_ranks
 * consecutive ranks when that is set. */
static void find_node_ranks(void)
{
    MPI_Comm node, pretend;
    int node_rank, per_node = test_cvar_int("osc_newrma_fifo_node_ranks");

    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &node_rank);
    MPI_OK(MPI_Comm_split(node, per_node > 0 ? node_rank / per_node : 0, rank, &pretend));
    MPI_Group world_group, pretend_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(pretend, &pretend_group);
    same_node = calloc((size_t) size, sizeof(int));
    for (int r = 0; r < size; ++r) {
        int in_pretend;
        MPI_Group_translate_ranks(world_group, 1, &r, pretend_group, &in_pretend);
        same_node[r] = MPI_UNDEFINED != in_pretend;
    }
    MPI_Group_free(&world_group);
    MPI_Group_free(&pretend_group);
    MPI_Comm_free(&pretend);
    MPI_Comm_free(&node);
}

static int addressable(int flavor, int r)
{
    if (r == rank || FLAVOR_SHARED == flavor) return 1;
    if (FLAVOR_CREATE == flavor) return 0;
    return same_node[r] && !test_cvar_int("osc_newrma_force_remote");
}

static void check_rank(const test_win_t *tw, int r, int64_t **bases)
{
    MPI_Aint qsize = -1;
    int qdisp = -1;
    void *qbase = &qdisp;
    const char *what = flavor_names[tw->flavor];

    MPI_OK(MPI_Win_shared_query(tw->win, r, &qsize, &qdisp, &qbase));
    bases[r] = qbase;
    if (!addressable(tw->flavor, r)) {
        CHECK(0 == qsize && 0 == qdisp && NULL == qbase, "%s: query(%d) gave %ld %d %p, expected 0 0 NULL", what, r,
              (long) qsize, qdisp, qbase);
        return;
    }
    CHECK(qsize == (MPI_Aint) (elems_of(r) * sizeof(int64_t)) && qdisp == disp_unit_of(r),
          "%s: query(%d) gave size %ld disp_unit %d, expected %lu %d", what, r, (long) qsize, qdisp,
          (unsigned long) (elems_of(r) * sizeof(int64_t)), disp_unit_of(r));
    if (elems_of(r) > 0) CHECK(NULL != qbase, "%s: query(%d) base is NULL", what, r);
    if (r == rank && elems_of(r) > 0)
        CHECK(qbase == tw->mem, "%s: query(self) gave %p, the window's base is %p", what, qbase, tw->mem);
}

static void check_proc_null(const test_win_t *tw, int64_t *const *bases)
{
    MPI_Aint qsize = -1;
    int qdisp = -1;
    void *qbase = &qdisp;
    int first = 0;

    while (first < size && (0 == elems_of(first) || !addressable(tw->flavor, first))) ++first;
    MPI_OK(MPI_Win_shared_query(tw->win, MPI_PROC_NULL, &qsize, &qdisp, &qbase));
    if (first == size) {
        CHECK(0 == qsize && 0 == qdisp && NULL == qbase, "%s: query(MPI_PROC_NULL) gave %ld %d %p, expected 0 0 NULL",
              flavor_names[tw->flavor], (long) qsize, qdisp, qbase);
        return;
    }
    CHECK(qsize == (MPI_Aint) (elems_of(first) * sizeof(int64_t)) && qdisp == disp_unit_of(first)
              && qbase == bases[first],
          "%s: query(MPI_PROC_NULL) gave %ld %d %p, expected rank %d's %lu %d %p", flavor_names[tw->flavor],
          (long) qsize, qdisp, qbase, first, (unsigned long) (elems_of(first) * sizeof(int64_t)),
          disp_unit_of(first), (void *) bases[first]);
}

/* Every rank stores stored(rank, r) at index `rank` of every addressable r
 * with memory; then every rank loads every addressable block. */
static void loads_and_stores(const test_win_t *tw, int64_t *const *bases)
{
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, tw->win));
    for (int r = 0; r < size; ++r)
        if (elems_of(r) > 0 && addressable(tw->flavor, r)) bases[r][rank] = stored(rank, r);
    MPI_OK(MPI_Win_sync(tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_sync(tw->win));
    for (int r = 0; r < size; ++r) {
        if (0 == elems_of(r) || !addressable(tw->flavor, r)) continue;
        /* r's writers: the ranks that address its memory, which are the
         * ones we address (a node is the same for all its ranks) and r */
        for (int w = 0; w < size; ++w) {
            int wrote = addressable(tw->flavor, w) || w == r;
            int64_t expect = wrote ? stored(w, r) : 0;
            CHECK(bases[r][w] == expect, "%s: rank %d's element %d is %lld, expected %lld", flavor_names[tw->flavor],
                  r, w, (long long) bases[r][w], (long long) expect);
        }
    }
    MPI_OK(MPI_Win_unlock_all(tw->win));
}

static void one_flavor(int flavor)
{
    test_win_t tw;
    int64_t **bases = calloc((size_t) size, sizeof(int64_t *));

    test_win_create(&tw, flavor, elems_of(rank) * sizeof(int64_t), disp_unit_of(rank), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    for (int r = 0; r < size; ++r) check_rank(&tw, r, bases);
    check_proc_null(&tw, bases);
    loads_and_stores(&tw, bases);
    test_win_free(&tw);
    free(bases);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    (void) test_am_path(FLAVOR_CREATE);       /* MPI_T, for the variables read below */
    find_node_ranks();
    for (int flavor = FLAVOR_CREATE; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor))
        if (FLAVOR_DYNAMIC != flavor) one_flavor(flavor);
    free(same_node);
    return test_finalize("shared_query_flavors");
}
