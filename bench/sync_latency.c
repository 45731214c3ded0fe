/*
 * Cost of each synchronization on a window of MPI_Win_allocate (or create:
 * argv[1] = "create"), 2+ ranks, no data moved: fence, a PSCW round (rank 0
 * accesses rank 1), lock/unlock (shared, exclusive) of rank 1 by rank 0,
 * lock_all/unlock_all, flush; beside MPI_Barrier and a raw shared-memory
 * ping-pong of one cache line (the floor).  Medians of repeated batches, in
 * microseconds, printed by rank 0 as "name value" lines.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 21
#define ITERS 2000

static int cmp(const void *a, const void *b) { double x = *(const double *) a, y = *(const double *) b; return (x > y) - (x < y); }

static double median(double *v, int n) { qsort(v, (size_t) n, sizeof(double), cmp); return v[n / 2]; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Win win;
    void *base;
    static char create_mem[4096];
    double t[BATCHES];
    MPI_Group world, peer;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && 0 == strcmp(argv[1], "create"))
        MPI_Win_create(create_mem, sizeof(create_mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    else
        MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 0 == rank ? 1 : 0;
    MPI_Group_incl(world, 1, &other, &peer);

#define MEASURE(name, body)                                                     \
    do {                                                                        \
        for (int b = 0; b < BATCHES; ++b) {                                     \
            MPI_Barrier(MPI_COMM_WORLD);                                        \
            double t0 = MPI_Wtime();                                            \
            for (int i = 0; i < ITERS; ++i) { body; }                           \
            t[b] = (MPI_Wtime() - t0) / ITERS * 1e6;                            \
        }                                                                       \
        double m = median(t, BATCHES), mx;                                      \
        MPI_Reduce(&m, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);         \
        if (0 == rank) printf("%-22s %8.3f\n", name, mx);                       \
    } while (0)

    MEASURE("barrier", MPI_Barrier(MPI_COMM_WORLD));
    MEASURE("fence", MPI_Win_fence(0, win));
    if (rank < 2) {
        /* rank 0 accesses rank 1's window, rank 1 exposes to rank 0 */
    }
    MEASURE("pscw_round", if (0 == rank) { MPI_Win_start(peer, 0, win); MPI_Win_complete(win); }
                          else if (1 == rank) { MPI_Win_post(peer, 0, win); MPI_Win_wait(win); });
    MEASURE("lock_unlock_shared", if (0 == rank) { MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win); MPI_Win_unlock(1, win); });
    MEASURE("lock_unlock_exclusive", if (0 == rank) { MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); MPI_Win_unlock(1, win); });
    MEASURE("lock_all_unlock_all", MPI_Win_lock_all(0, win); MPI_Win_unlock_all(win));
    MPI_Win_lock_all(0, win);
    MEASURE("flush", MPI_Win_flush(other, win));
    MPI_Win_unlock_all(win);

    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
