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
 * MPI_THREAD_MULTIPLE: window creation and free from 4 threads at once,
 * each thread on its own communicator (a dup of MPI_COMM_WORLD made before
 * the threads start, as MPI requires of concurrent collectives).  Every
 * thread creates and frees windows of every flavor, many rounds, with a
 * size of its own; each window carries one fence epoch of puts to the right
 * neighbour and gets back from it, with exact values.  Segment names and
 * files must not be shared between threads (no segment cache here: every
 * window of more than one process creates a file), and the info values a
 * window reports must be its own (mpi_accumulate_granularity, set per
 * thread).
 * newrma-test: np>=1 mca=osc_newrma_segment_cache_bytes:0
 */
#include <pthread.h>
#include "common.h"

#define THREADS 4
#define ROUNDS 20
#define SLOTS 16

static int rank, size;
static MPI_Comm comms[THREADS];

/* what `origin` puts into slot i of its right neighbour in a round */
static int64_t value(int origin, int t, int round, int flavor, int i)
{
    return ((((int64_t) origin * THREADS + t) * ROUNDS + round) * FLAVOR_COUNT + flavor) * SLOTS + i + 1;
}

static void one_window(int t, int round, int flavor)
{
    MPI_Comm comm = comms[t];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* sizes differ per thread and round: layouts differ too */
    size_t slots = SLOTS + (size_t) t * 8 + (size_t) round % 3;
    int64_t mine[SLOTS], got[SLOTS];
    char granularity[32], reported[32];
    MPI_Info info;
    test_win_t tw;
    int flag = 0;

    snprintf(granularity, sizeof(granularity), "%d", 256 << t);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_accumulate_granularity", granularity);
    test_win_create(&tw, flavor, slots * sizeof(int64_t), sizeof(int64_t), info, comm);
    MPI_Info_free(&info);

    if (0 == t % 2) {
        MPI_Info used;
        MPI_OK(MPI_Win_get_info(tw.win, &used));
        MPI_Info_get(used, "mpi_accumulate_granularity", sizeof(reported) - 1, reported, &flag);
        MPI_Info_free(&used);
        /* the key is optional for another component: newrma reports it */
        CHECK(!flag || 0 == strcmp(reported, granularity), "thread %d, %s round %d: granularity %s, expected %s", t,
              flavor_names[flavor], round, reported, granularity);
    }

    for (int i = 0 ; i < SLOTS ; ++i) {
        mine[i] = value(rank, t, round, flavor, i);
        got[i] = -1;
    }
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(mine, SLOTS, MPI_INT64_T, right, test_disp(&tw, right, 0, sizeof(int64_t)), SLOTS,
                   MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Get(got, SLOTS, MPI_INT64_T, right, test_disp(&tw, right, 0, sizeof(int64_t)), SLOTS,
                   MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    for (int i = 0 ; i < SLOTS ; ++i) {
        int64_t here = ((int64_t *) tw.mem)[i];
        CHECK(got[i] == mine[i], "thread %d, %s round %d: got %lld from %d at %d, expected %lld", t, flavor_names[flavor],
              round, (long long) got[i], right, i, (long long) mine[i]);
        CHECK(here == value(left, t, round, flavor, i), "thread %d, %s round %d: slot %d holds %lld, expected %lld", t,
              flavor_names[flavor], round, i, (long long) here, (long long) value(left, t, round, flavor, i));
    }
    test_win_free(&tw);
}

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;

    for (int round = 0 ; round < ROUNDS ; ++round) {
        /* the threads start their flavors at different places: windows of
         * every flavor are created at once */
        for (int k = 0 ; k < FLAVOR_COUNT ; ++k) {
            int flavor = (k + t + round) % FLAVOR_COUNT;
            /* across nodes no allocate_shared window exists (main asked
             * before the threads started) */
            if (FLAVOR_SHARED != flavor || !test_world_spans_nodes()) one_window(t, round, flavor);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[THREADS];

    if (!test_init_multiple(&argc, &argv)) {
        return test_finalize("threads_create");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int t = 0 ; t < THREADS ; ++t) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    }
    test_world_spans_nodes();   /* its answer cached before the threads read it */
    for (int t = 0 ; t < THREADS ; ++t) {
        pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t);
    }
    for (int t = 0 ; t < THREADS ; ++t) {
        pthread_join(th[t], NULL);
    }
    for (int t = 0 ; t < THREADS ; ++t) {
        MPI_Comm_free(&comms[t]);
    }
    return test_finalize("threads_create");
}
