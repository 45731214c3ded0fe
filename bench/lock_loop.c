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
 * An uncontended passive-target lock, nothing else: rank 0 locks and
 * unlocks rank 1 of an allocate window N times (rank 1 waits in a barrier),
 * REPS times; prints the fastest repetition's microseconds per lock+unlock.
 * A microscope for the lock path (bench/lock_loop.sh runs it for several
 * components); bench/rma_bench.c's sync rows measure the same inside the
 * full benchmark.
 *
 *   mpirun -np 2 lock_loop [N [exclusive|shared|nocheck [REPS]]]
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 500000;
    const char *kind = argc > 2 ? argv[2] : "exclusive";
    int reps = argc > 3 ? atoi(argv[3]) : 7, rank, rc = MPI_SUCCESS;
    int type = 0 == strcmp(kind, "shared") ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
    int assert = 0 == strcmp(kind, "nocheck") ? MPI_MODE_NOCHECK : 0;
    double best = 1e30, *base;
    MPI_Win win;

    bench_loop_start(&argc, &argv, n >= 1 && reps >= 1, "mpirun -np 2 lock_loop [N [exclusive|shared|nocheck [REPS]]]",
                     (int) sizeof(double), &rank, &base, &win);
    for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (0 == rank) {
            for (long i = 0; i < n && MPI_SUCCESS == rc; ++i) {
                rc = MPI_Win_lock(type, 1, assert, win);
                if (MPI_SUCCESS == rc) rc = MPI_Win_unlock(1, win);
            }
        }
        double t = (MPI_Wtime() - t0) / (double) n;
        if (t < best) best = t;
    }
    return bench_loop_finish(rank, rc, best, &win);
}
