#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
/*
 * Accumulate-family latency on an MPI_Win_allocate window, the loop of
 * bench/op_latency.c (rank 0 -> the last rank, each call followed by
 * MPI_Win_flush, one lock_all epoch; acc/gacc MPI_SUM on MPI_DOUBLE, 8 B:
 * MPI_INT64_T; fop/cas on MPI_INT64_T) -- but printing the MINIMUM over many
 * short batches (300 x 2000 calls; 60 x 20 at 64 KiB, 60 x 2 at 1 MiB): a
 * batch that was not preempted, so numbers taken on a shared machine stay
 * comparable.  Rank 0 prints "op bytes microseconds" lines.
 */
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *base; MPI_Win win; int t = size - 1;
    MPI_Win_allocate(1 << 21, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, 1 << 21);
    double *o = calloc(1 << 17, 8), *r = calloc(1 << 17, 8);
    int64_t cmp = 0;
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        const char *ops[] = {"acc", "gacc", "fop", "cas"};
        int sizes[] = {8, 64, 1024, 65536, 1 << 20};
        for (int k = 0; k < 4; k++) for (int s = 0; s < 5; s++) {
            int bytes = sizes[s]; if (k >= 2 && s > 0) break;
            MPI_Datatype dt = bytes == 8 ? MPI_INT64_T : MPI_DOUBLE; int c = bytes / 8;
            int nb = bytes >= 65536 ? (bytes == 65536 ? 20 : 2) : 2000, batches = bytes >= 65536 ? 60 : 300;
            double best = 1e9;
            for (int b = 0; b < batches; b++) {
                double t0 = MPI_Wtime();
                for (int i = 0; i < nb; i++) {
                    if (k == 0) MPI_Accumulate(o, c, dt, t, 0, c, dt, MPI_SUM, win);
                    else if (k == 1) MPI_Get_accumulate(o, c, dt, r, c, dt, t, 0, c, dt, MPI_SUM, win);
                    else if (k == 2) MPI_Fetch_and_op(o, r, MPI_INT64_T, t, 0, MPI_SUM, win);
                    else MPI_Compare_and_swap(o, &cmp, r, MPI_INT64_T, t, 0, win);
                    MPI_Win_flush(t, win);
                }
                double x = (MPI_Wtime() - t0) / nb * 1e6; if (x < best) best = x;
            }
            printf("%s %d %.4f\n", ops[k], bytes, best);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
