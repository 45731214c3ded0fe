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
 * How the target's waiting moves an origin's passive-target loop: rank 0
 * runs lock_all + one 8-byte get (or put, or nothing) + unlock_all N times
 * on an allocate window while rank 1 waits in one of four ways; prints the
 * fastest of REPS repetitions, us per iteration.  A microscope for the
 * run-to-run bimodality of the lock_all rows of bench/rma_bench.c, whose
 * idle ranks wait in a blocking collective.
 *
 *   mpirun -np 2 target_wait get|put|none sleep|spin|iprobe|recv [N [REPS]]
 *     sleep   rank 1 sleeps outside MPI for the whole loop
 *     spin    rank 1 computes outside MPI (no shared memory touched)
 *     iprobe  rank 1 polls MPI_Iprobe (opal_progress), reading the clock
 *     recv    rank 1 blocks in MPI_Recv, as in a barrier or a collective
 */
#include "bench_common.h"
#include <unistd.h>

enum { OP_GET, OP_PUT, OP_NONE };
enum { WAIT_SLEEP, WAIT_SPIN, WAIT_IPROBE, WAIT_RECV };

static int lookup(const char *word, const char *const *names, int n)
{
    for (int i = 0 ; i < n ; ++i) {
        if (0 == strcmp(word, names[i])) return i;
    }
    return -1;
}

/* rank 1's side of one repetition: wait until rank 0 is done (`seconds`
 * bounds the ways that cannot hear it) */
static void target_wait(int how, double seconds)
{
    double end = MPI_Wtime() + seconds;
    volatile long sink = 0;
    int flag = 0;

    switch (how) {
    case WAIT_SLEEP: usleep((useconds_t) (seconds * 1e6)); break;
    case WAIT_SPIN: while (MPI_Wtime() < end) for (int k = 0 ; k < 100 ; ++k) sink += k; break;
    case WAIT_IPROBE:
        while (!flag && MPI_Wtime() < end) MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        break;
    default: break;
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    static const char *const ops[] = { "get", "put", "none" };
    static const char *const waits[] = { "sleep", "spin", "iprobe", "recv" };
    int rank, rc = MPI_SUCCESS;
    int op = argc > 1 ? lookup(argv[1], ops, 3) : -1, how = argc > 2 ? lookup(argv[2], waits, 4) : -1;
    long n = argc > 3 ? atol(argv[3]) : 200000;
    int reps = argc > 4 ? atoi(argv[4]) : 7;
    double best = 1e30, value = 0;
    char *base;
    MPI_Win win;

    bench_loop_start(&argc, &argv, op >= 0 && how >= 0 && n >= 1 && reps >= 1,
                     "mpirun -np 2 target_wait get|put|none sleep|spin|iprobe|recv [N [REPS]]", 1, &rank, &base, &win);
    for (int r = 0 ; r < reps ; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == rank) {
            target_wait(how, 0.1);
        } else if (0 == rank) {
            double t0 = MPI_Wtime();
            for (long i = 0 ; i < n && MPI_SUCCESS == rc ; ++i) {
                rc = MPI_Win_lock_all(0, win);
                if (MPI_SUCCESS == rc && OP_GET == op) rc = MPI_Get(&value, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                if (MPI_SUCCESS == rc && OP_PUT == op) rc = MPI_Put(&value, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
                if (MPI_SUCCESS == rc) rc = MPI_Win_unlock_all(win);
            }
            double t = (MPI_Wtime() - t0) / (double) n;
            if (t < best) best = t;
            MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        }
    }
    return bench_loop_finish(rank, rc, best, &win);
}
