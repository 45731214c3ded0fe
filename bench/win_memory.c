/*
 * Memory a window costs, measured from inside the processes: the shared
 * mappings that window creation adds (the node segment, whatever backs it)
 * and the growth of resident memory, per process, for MPI_Win_allocate and
 * MPI_Win_create windows of 4 KiB per rank.  Run under any osc component;
 * bench/win_memory.sh runs it for several components and rank counts.
 *
 * Output (rank 0): one line per flavor
 *   <flavor> ranks=N mapped_per_proc=B rss_per_proc=B
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MAPS 4096

typedef struct { unsigned long start, end; } range_t;

/* Address ranges of the shared (MAP_SHARED: 's' in the perms) mappings. */
static int shared_maps(range_t *out)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof(line), f) && n < MAX_MAPS) {
        unsigned long s, e;
        char perms[8];
        if (3 == sscanf(line, "%lx-%lx %7s", &s, &e, perms) && 's' == perms[3]) {
            out[n].start = s; out[n].end = e; n++;
        }
    }
    if (f) fclose(f);
    return n;
}

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof(line), f))
        if (1 == sscanf(line, "VmRSS: %ld kB", &kb)) break;
    if (f) fclose(f);
    return kb * 1024;
}

static long new_shared_bytes(const range_t *before, int nb, const range_t *after, int na)
{
    long total = 0;
    for (int i = 0; i < na; ++i) {
        int seen = 0;
        for (int j = 0; j < nb && !seen; ++j)
            seen = before[j].start == after[i].start && before[j].end == after[i].end;
        if (!seen) total += (long) (after[i].end - after[i].start);
    }
    return total;
}

int main(int argc, char **argv)
{
    static range_t before[MAX_MAPS], after[MAX_MAPS];
    int rank, size;
    const int windows = 8;               /* average over several windows */
    MPI_Win win[8];
    static char create_mem[8][4096];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* a component that refuses a window is reported, not fatal */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int flavor = 0; flavor < 2; ++flavor) {
        int nb = shared_maps(before);
        long rss0 = rss_bytes();
        int ok = 1;
        for (int w = 0; w < windows; ++w) {
            void *base;
            int rc = flavor ? MPI_Win_create(create_mem[w], 4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win[w])
                            : MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win[w]);
            if (MPI_SUCCESS != rc) { ok = 0; break; }
            /* touch the lock/sync state the way a program would */
            MPI_Win_lock_all(0, win[w]);
            MPI_Win_unlock_all(win[w]);
        }
        long mapped = ok ? new_shared_bytes(before, nb, after, shared_maps(after)) / windows : -1;
        long rss = ok ? (rss_bytes() - rss0) / windows : -1;
        long sums[2] = { mapped, rss }, totals[2];
        MPI_Reduce(sums, totals, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        int all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (0 == rank) {
            if (all_ok)
                printf("%s ranks=%d mapped_per_proc=%ld rss_per_proc=%ld\n",
                       flavor ? "create" : "allocate", size, totals[0] / size, totals[1] / size);
            else
                printf("%s ranks=%d declined\n", flavor ? "create" : "allocate", size);
        }
        if (ok) for (int w = 0; w < windows; ++w) MPI_Win_free(&win[w]);
    }
    MPI_Finalize();
    return 0;
}
