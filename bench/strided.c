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
 * Non-contiguous RMA: rank 0 puts, gets or accumulates (MPI_SUM) one
 * vector of BLOCKS blocks of BLOCKLEN doubles (default 1), every other
 * block, into the same vector at rank 1 and flushes, N times inside one lock_all epoch (rank 1 waits in a
 * barrier); prints the fastest of REPS repetitions, us per operation +
 * flush.  On create and dynamic windows newrma moves such a transfer in
 * pieces through a relay (docs/rationale.md, "Relays"), where one
 * process_vm_writev would pay the kernel's work for every block.
 *
 *   mpirun -np 2 strided create|dynamic|allocate put|get|acc BLOCKS [N [REPS [BLOCKLEN]]]
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
    int flavor = argc > 1 ? bench_flavor_parse(argv[1]) : -1;
    const char *op = argc > 2 ? argv[2] : "";
    int blocks = argc > 3 ? atoi(argv[3]) : 0, rank, size, rc;
    long n = argc > 4 ? atol(argv[4]) : 2000;
    int reps = argc > 5 ? atoi(argv[5]) : 7, blocklen = argc > 6 ? atoi(argv[6]) : 1;
    size_t bytes = 2 * sizeof(double) * (size_t) (blocks > 0 ? blocks : 1) * (size_t) (blocklen > 0 ? blocklen : 1);
    double best = 1e30, *src;
    MPI_Datatype vec;
    struct bench_win w;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || flavor < 0 || blocks < 1 || n < 1 || reps < 1 || blocklen < 1
        || (strcmp(op, "put") && strcmp(op, "get") && strcmp(op, "acc"))) {
        if (0 == rank) fprintf(stderr, "usage: mpirun -np 2 strided create|dynamic|allocate put|get|acc BLOCKS [N [REPS [BLOCKLEN]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    src = bench_filled(bytes);
    if (NULL == src) {
        fprintf(stderr, "strided: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Type_vector(blocks, blocklen, 2 * blocklen, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    rc = bench_win_open(&w, flavor, bytes, NULL, MPI_COMM_WORLD);
    for (int r = 0; r < reps && MPI_SUCCESS == rc; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (0 == rank) {
            MPI_Aint disp = bench_win_disp(&w, 1, 0);
            rc = MPI_Win_lock_all(0, w.win);
            for (long i = 0; i < n && MPI_SUCCESS == rc; ++i) {
                if ('p' == op[0]) rc = MPI_Put(src, 1, vec, 1, disp, 1, vec, w.win);
                else if ('g' == op[0]) rc = MPI_Get(src, 1, vec, 1, disp, 1, vec, w.win);
                else rc = MPI_Accumulate(src, 1, vec, 1, disp, 1, vec, MPI_SUM, w.win);
                if (MPI_SUCCESS == rc) rc = MPI_Win_flush(1, w.win);
            }
            if (MPI_SUCCESS == rc) rc = MPI_Win_unlock_all(w.win);
        }
        double t = (MPI_Wtime() - t0) / (double) n;
        if (t < best) best = t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        if (MPI_SUCCESS != rc) printf("- %s\n", bench_errstr(rc));
        else printf("%.3f\n", best * 1e6);
    }
    if (MPI_SUCCESS == rc || 0 != w.win) bench_win_close(&w, MPI_COMM_WORLD);
    MPI_Type_free(&vec);
    free(src);
    MPI_Finalize();
    return 0;
}
