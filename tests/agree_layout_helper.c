/*
 * Windows whose processes were given different values of what shapes a
 * window (tests/agree_layout.sh starts rank 0 with one value of an
 * osc_newrma MCA variable and the other ranks with another; or, with the
 * argument "no_locks", passes the info key no_locks=true on rank 0 only).
 * Every flavor: fence epochs, PSCW rounds, exclusive lock and lock_all
 * rounds, each of MPI_Accumulate(MPI_SUM) of a many-stripe array to every
 * rank; the totals must be exact.  The windows agree on one layout at
 * creation (docs/shared-segment.md): before they did, these runs lost
 * updates or crashed.  Rank 0 also prints every rank's values of the
 * varied variables ("values: ..."), so the script can check that the
 * MPMD contexts got what it meant them to.
 * With the argument "path_inputs" the script has given the processes
 * different values of what chooses creation's collectives
 * (osc_newrma_force_remote, osc_newrma_fifo_node_ranks): creating an
 * allocate, create or dynamic window must then fail on every rank, with an
 * error and without a hang; an allocate_shared window (one path whatever
 * those say) still works, and so does the job.
 *   agree_layout_helper [no_locks|path_inputs]
 * newrma-test: helper
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "common.h"

#define ROUNDS 12
#define ELEMENTS 2048     /* 16 KiB of int64: several stripes at a small granularity */

static const char *const varied[] = {
    "osc_newrma_lock_qnodes", "osc_newrma_accumulate_stripes", "osc_newrma_post_ring_slots",
    "osc_newrma_fence_flat_ranks", "osc_newrma_fifo_depth", "osc_newrma_fifo_fragment_size",
    "osc_newrma_force_am", "osc_newrma_force_remote", "osc_newrma_fifo_node_ranks",
};
#define NVARIED (sizeof(varied) / sizeof(varied[0]))

static void report_values(int rank, int size)
{
    long long mine[NVARIED], *all = malloc(sizeof(mine) * (size_t) size);
    int provided;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    for (size_t k = 0 ; k < NVARIED ; ++k) {
        mine[k] = (long long) test_cvar_u64(varied[k]);
    }
    MPI_Gather(mine, NVARIED, MPI_LONG_LONG, all, NVARIED, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        for (int r = 0 ; r < size ; ++r) {
            printf("values: rank %d", r);
            for (size_t k = 0 ; k < NVARIED ; ++k) {
                printf(" %s=%lld", varied[k] + strlen("osc_newrma_"), all[(size_t) r * NVARIED + k]);
            }
            printf("\n");
        }
        fflush(stdout);
    }
    free(all);
}

static void accumulate_to(test_win_t *tw, int target, const int64_t *ones)
{
    MPI_OK(MPI_Accumulate(ones, ELEMENTS, MPI_INT64_T, target, test_disp(tw, target, 0, 8), ELEMENTS, MPI_INT64_T,
                          MPI_SUM, tw->win));
}

static void run_flavor(int flavor, int no_locks, int rank, int size, const int64_t *ones)
{
    test_win_t tw;
    MPI_Info info;
    MPI_Group world, all;
    int64_t expected, *mem;
    int kinds = 0;

    MPI_Info_create(&info);
    /* small stripes: the array covers many of them */
    MPI_Info_set(info, "mpi_accumulate_granularity", "64");
    if (no_locks && 0 == rank) {
        MPI_Info_set(info, "no_locks", "true");
    }
    test_win_create(&tw, flavor, ELEMENTS * sizeof(int64_t), 8, info, MPI_COMM_WORLD);
    MPI_Info_free(&info);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    all = world;

    for (int round = 0 ; round < ROUNDS ; ++round) {
        MPI_OK(MPI_Win_fence(0, tw.win));
        for (int t = 0 ; t < size ; ++t) {
            accumulate_to(&tw, (rank + t) % size, ones);
        }
        MPI_OK(MPI_Win_fence(0, tw.win));
    }
    kinds++;
    for (int round = 0 ; round < ROUNDS ; ++round) {
        MPI_OK(MPI_Win_post(all, 0, tw.win));
        MPI_OK(MPI_Win_start(all, 0, tw.win));
        for (int t = 0 ; t < size ; ++t) {
            accumulate_to(&tw, (rank + t) % size, ones);
        }
        MPI_OK(MPI_Win_complete(tw.win));
        MPI_OK(MPI_Win_wait(tw.win));
    }
    kinds++;
    /* rank 0 promised no passive-target synchronization on this window */
    if (!no_locks) {
        for (int round = 0 ; round < ROUNDS ; ++round) {
            for (int t = 0 ; t < size ; ++t) {
                int target = (rank + t) % size;
                MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, tw.win));
                accumulate_to(&tw, target, ones);
                MPI_OK(MPI_Win_unlock(target, tw.win));
            }
        }
        kinds++;
        for (int round = 0 ; round < ROUNDS ; ++round) {
            MPI_OK(MPI_Win_lock_all(0, tw.win));
            for (int t = 0 ; t < size ; ++t) {
                accumulate_to(&tw, (rank + t) % size, ones);
            }
            MPI_OK(MPI_Win_unlock_all(tw.win));
        }
        kinds++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));

    mem = tw.mem;
    expected = (int64_t) kinds * ROUNDS * size;
    for (int i = 0, bad = 0 ; i < ELEMENTS && bad < 3 ; ++i) {
        if (mem[i] != expected) {
            CHECK(0, "%s window: element %d is %lld, expected %lld", flavor_names[flavor], i,
                  (long long) mem[i], (long long) expected);
            bad++;
        }
    }
    MPI_Group_free(&world);
    test_win_free(&tw);
}

/* Creating a `flavor` window fails on every rank (the processes disagree
 * on what chooses creation's collectives). */
static void creation_fails(int flavor, int size)
{
    MPI_Win win = MPI_WIN_NULL;
    void *mem = NULL;
    static int64_t user[ELEMENTS];
    int rc, failed, all_failed = 0;

    if (FLAVOR_ALLOCATE == flavor) {
        rc = MPI_Win_allocate(sizeof(user), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    } else if (FLAVOR_DYNAMIC == flavor) {
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        rc = MPI_Win_create(user, sizeof(user), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    failed = MPI_SUCCESS != rc;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(size == all_failed, "%s: created on %d of %d ranks although they disagree on the path inputs",
          flavor_names[flavor], size - all_failed, size);
    if (!failed) {
        MPI_Win_free(&win);
    }
}

static int path_inputs_main(int rank, int size, const int64_t *ones)
{
    /* window creation reports through the communicator's handler */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    creation_fails(FLAVOR_ALLOCATE, size);
    creation_fails(FLAVOR_CREATE, size);
    creation_fails(FLAVOR_DYNAMIC, size);
    /* allocate_shared takes the node path whatever they say -- on one
     * node: across nodes no such window exists */
    if (!test_world_spans_nodes()) run_flavor(FLAVOR_SHARED, 0, rank, size, ones);
    return test_finalize("agree_layout_helper path_inputs");
}

int main(int argc, char **argv)
{
    int rank, size, no_locks = argc > 1 && 0 == strcmp(argv[1], "no_locks");
    int path_inputs = argc > 1 && 0 == strcmp(argv[1], "path_inputs");
    int64_t *ones = malloc(ELEMENTS * sizeof(int64_t));

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    report_values(rank, size);
    for (int i = 0 ; i < ELEMENTS ; ++i) {
        ones[i] = 1;
    }
    if (path_inputs) {
        int ret = path_inputs_main(rank, size, ones);
        free(ones);
        return ret;
    }
    for (int flavor = 0 ; flavor < FLAVOR_COUNT ; flavor = test_next_flavor(flavor)) {
        run_flavor(flavor, no_locks, rank, size, ones);
    }
    free(ones);
    return test_finalize(no_locks ? "agree_layout_helper no_locks" : "agree_layout_helper");
}
