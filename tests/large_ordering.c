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
 * Large payloads and the order MPI promises (on the active-message path a
 * large payload comes by UCX rendezvous, after its header):
 *
 * 1. Accumulate ordering (MPI's default rar,raw,war,waw): in one lock epoch
 *    rank r alternates large MPI_REPLACE accumulates over a whole block
 *    with small ones to its first element of the block; every value must
 *    land in call order, so the first element ends with the last value and
 *    the rest with the last large one.  A get_accumulate (MPI_NO_OP) at the
 *    end of the epoch must see the state left by everything before it.
 * 2. A large get answered straight from the target's window memory: the
 *    target changes that memory right after the epoch ends (after
 *    MPI_Win_wait, and after the origin's unlock is confirmed); the origin
 *    must have read the values from before the change.
 *
 * Every flavor but shared, every mode (tests/run.sh).
 *
 * newrma-test: np>=2
 */
#include "common.h"

#define BLOCK (64 * 1024)          /* int64 elements: 512 KiB per block */
#define ROUNDS 6

static int rank, nprocs;

static void fill(int64_t *buf, size_t n, int64_t value)
{
    for (size_t i = 0 ; i < n ; ++i) {
        buf[i] = value;
    }
}

/* value of round k, large (1) or small (0), from origin o */
static int64_t tag(int o, int k, int large)
{
    return ((int64_t) o << 32) | ((int64_t) k << 1) | large;
}

static void accumulate_order(int flavor)
{
    const char *fl = flavor_names[flavor];
    test_win_t tw;
    int target = (rank + 1) % nprocs, from = (rank - 1 + nprocs) % nprocs;
    int64_t *large = malloc(ROUNDS * BLOCK * sizeof(int64_t));
    int64_t small[ROUNDS], seen = -1, dummy = 0;

    test_win_create(&tw, flavor, BLOCK * sizeof(int64_t), (int) sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, tw.win));
    for (int k = 0 ; k < ROUNDS ; ++k) {
        /* every buffer stays untouched until the epoch ends */
        fill(large + (size_t) k * BLOCK, BLOCK, tag(rank, k, 1));
        small[k] = tag(rank, k, 0);
        MPI_OK(MPI_Accumulate(large + (size_t) k * BLOCK, BLOCK, MPI_INT64_T, target, test_disp(&tw, target, 0, 8),
                              BLOCK, MPI_INT64_T, MPI_REPLACE, tw.win));
        MPI_OK(MPI_Accumulate(&small[k], 1, MPI_INT64_T, target, test_disp(&tw, target, 0, 8), 1, MPI_INT64_T,
                              MPI_REPLACE, tw.win));
    }
    MPI_OK(MPI_Get_accumulate(&dummy, 1, MPI_INT64_T, &seen, 1, MPI_INT64_T, target,
                              test_disp(&tw, target, 0, 8), 1, MPI_INT64_T, MPI_NO_OP, tw.win));
    MPI_OK(MPI_Win_unlock(target, tw.win));
    CHECK(seen == tag(rank, ROUNDS - 1, 0), "%s: get_accumulate after the accumulates saw %llx, expected %llx", fl,
          (unsigned long long) seen, (unsigned long long) tag(rank, ROUNDS - 1, 0));
    MPI_Barrier(MPI_COMM_WORLD);

    /* what `from` left in my window */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    int64_t *mem = tw.mem;
    CHECK(mem[0] == tag(from, ROUNDS - 1, 0), "%s: element 0 is %llx, expected the last small value %llx", fl,
          (unsigned long long) mem[0], (unsigned long long) tag(from, ROUNDS - 1, 0));
    size_t wrong = 0, first_wrong = 0;
    for (size_t i = 1 ; i < BLOCK ; ++i) {
        if (mem[i] != tag(from, ROUNDS - 1, 1) && 0 == wrong++) {
            first_wrong = i;
        }
    }
    CHECK(0 == wrong, "%s: %zu elements not the last large value (first: [%zu] = %llx)", fl, wrong, first_wrong,
          (unsigned long long) mem[first_wrong]);
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    test_win_free(&tw);
    free(large);
}

/* The target's memory after a round: every element the round number. */
static void set_round(test_win_t *tw, int64_t value)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw->win));
    fill(tw->mem, BLOCK, value);
    MPI_OK(MPI_Win_unlock(rank, tw->win));
}

static size_t count_not(const int64_t *buf, size_t n, int64_t value)
{
    size_t wrong = 0;
    for (size_t i = 0 ; i < n ; ++i) {
        wrong += buf[i] != value;
    }
    return wrong;
}

static void get_before_change(int flavor)
{
    const char *fl = flavor_names[flavor];
    test_win_t tw;
    int target = (rank + 1) % nprocs, from = (rank - 1 + nprocs) % nprocs;
    int64_t *got = malloc(BLOCK * sizeof(int64_t));
    MPI_Group world, group_target, group_from;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &target, &group_target);
    MPI_Group_incl(world, 1, &from, &group_from);
    test_win_create(&tw, flavor, BLOCK * sizeof(int64_t), (int) sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    set_round(&tw, 1000 + rank);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int k = 0 ; k < 3 ; ++k) {
        int64_t before = 1000 * (k + 1) + target;
        /* PSCW: the target overwrites its memory as soon as wait returns */
        fill(got, BLOCK, -1);
        MPI_OK(MPI_Win_post(group_from, 0, tw.win));
        MPI_OK(MPI_Win_start(group_target, 0, tw.win));
        MPI_OK(MPI_Get(got, BLOCK, MPI_INT64_T, target, test_disp(&tw, target, 0, 8), BLOCK, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_complete(tw.win));
        MPI_OK(MPI_Win_wait(tw.win));
        set_round(&tw, 1000 * (k + 2) + rank);
        size_t wrong = count_not(got, BLOCK, before);
        CHECK(0 == wrong, "%s PSCW round %d: %zu elements of the get are not %lld", fl, k, wrong,
              (long long) before);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* passive target: the owner takes an exclusive lock right after the
     * origin's shared epoch, announced by a message after its unlock */
    int64_t before = 4000 + target, token = 0;
    MPI_Request req;
    fill(got, BLOCK, -1);
    MPI_Irecv(&token, 1, MPI_INT64_T, from, 7, MPI_COMM_WORLD, &req);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, tw.win));
    MPI_OK(MPI_Get(got, BLOCK, MPI_INT64_T, target, test_disp(&tw, target, 0, 8), BLOCK, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_unlock(target, tw.win));
    MPI_Send(&token, 1, MPI_INT64_T, target, 7, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    set_round(&tw, 5000 + rank);
    size_t wrong = count_not(got, BLOCK, before);
    CHECK(0 == wrong, "%s lock: %zu elements of the get are not %lld", fl, wrong, (long long) before);

    MPI_Group_free(&group_target);
    MPI_Group_free(&group_from);
    MPI_Group_free(&world);
    test_win_free(&tw);
    free(got);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int flavors[] = { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_DYNAMIC };
    for (int f = 0 ; f < 3 ; ++f) {
        accumulate_order(flavors[f]);
        get_before_change(flavors[f]);
    }
    return test_finalize("large_ordering");
}
