/*
 * Memory a window costs, measured from inside the processes: the shared
 * mappings that window creation adds (the node segment, whatever backs it),
 * the growth of the malloc heap (glibc mallinfo2: bytes in use, arena and
 * mmapped chunks) and the growth of resident memory, per process and per
 * window, for windows of 4 KiB per rank.  Run under any osc component;
 * bench/win_memory.sh runs it for several components and rank counts.
 *
 *   win_memory [options]
 *     --windows N   windows per flavor, all alive at once (default 8, max 64)
 *     --warmup      create, use and free one window of each flavor first, so
 *                   that one-time costs (a transport brought up by the first
 *                   window, endpoints, memory pools) are not charged to the
 *                   windows measured
 *     --puts        in the lock_all epoch that touches each window, put 8
 *                   bytes to every rank (so that a component that keeps
 *                   state for the peers it talked to shows it); without it
 *                   the epoch is empty
 *     --dynamic     also measure MPI_Win_create_dynamic windows (4 KiB
 *                   attached per rank, its address exchanged for the puts)
 *     --comm        also measure MPI_Comm_dup (+ one MPI_Barrier on the
 *                   copy): the part of a window that is Open MPI's own
 *                   communicator, whatever the osc component (every one
 *                   here duplicates the window's communicator)
 *
 * Output (rank 0): one line per flavor
 *   <flavor> ranks=N mapped_per_proc=B heap_per_proc=B rss_per_proc=B
 * (averages over the ranks of the per-window growth), or
 *   <flavor> ranks=N declined
 */
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MAPS 4096
#define MAX_WINDOWS 64
#define WIN_BYTES 4096

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

static long heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long) (mi.uordblks + mi.hblkhd);
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

enum flavor { ALLOCATE, CREATE, DYNAMIC, COMM };
static const char *flavor_name[] = { "allocate", "create", "dynamic", "comm_dup" };
static MPI_Comm comms[MAX_WINDOWS + 1];
static char create_mem[MAX_WINDOWS + 1][WIN_BYTES];
static char dynamic_mem[MAX_WINDOWS + 1][WIN_BYTES];
static int rank, size, do_puts;

/* create window w of a flavor and touch it; MPI_SUCCESS or an error */
static int make(enum flavor f, int w, MPI_Win *win)
{
    static MPI_Aint *addrs;
    void *base;
    int rc;
    uint64_t one = 1;

    if (COMM == f) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[w]);
        return MPI_SUCCESS == rc ? MPI_Barrier(comms[w]) : rc;
    }
    if (ALLOCATE == f)
        rc = MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, win);
    else if (CREATE == f)
        rc = MPI_Win_create(create_mem[w], WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    else
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
    if (MPI_SUCCESS != rc) return rc;
    if (DYNAMIC == f) {
        MPI_Aint mine;
        rc = MPI_Win_attach(*win, dynamic_mem[w], WIN_BYTES);
        if (MPI_SUCCESS != rc) return rc;
        if (NULL == addrs) addrs = malloc(sizeof(MPI_Aint) * (size_t) size);  /* once: not a window's cost */
        MPI_Get_address(dynamic_mem[w], &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    }
    /* touch the lock/sync state the way a program would */
    rc = MPI_Win_lock_all(0, *win);
    for (int p = 0; do_puts && MPI_SUCCESS == rc && p < size; ++p) {
        int t = (rank + 1 + p) % size;
        rc = MPI_Put(&one, 8, MPI_BYTE, t, DYNAMIC == f ? addrs[t] : 8 * rank % WIN_BYTES, 8, MPI_BYTE, *win);
    }
    if (MPI_SUCCESS == rc) rc = MPI_Win_unlock_all(*win);
    return rc;
}

/* free windows first..last-1; memory is detached only once every rank's
 * epochs (and so its puts to us) are over */
static void release(enum flavor f, int first, int last, MPI_Win *win)
{
    if (DYNAMIC == f) MPI_Barrier(MPI_COMM_WORLD);
    for (int w = first; w < last; ++w) {
        if (COMM == f) { MPI_Comm_free(&comms[w]); continue; }
        if (DYNAMIC == f) MPI_Win_detach(win[w], dynamic_mem[w]);
        MPI_Win_free(&win[w]);
    }
}

int main(int argc, char **argv)
{
    static range_t before[MAX_MAPS], after[MAX_MAPS];
    int windows = 8, warmup = 0, dynamic = 0, comm = 0;
    MPI_Win win[MAX_WINDOWS + 1];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--windows") && i + 1 < argc) windows = atoi(argv[++i]);
        else if (0 == strcmp(argv[i], "--warmup")) warmup = 1;
        else if (0 == strcmp(argv[i], "--puts")) do_puts = 1;
        else if (0 == strcmp(argv[i], "--dynamic")) dynamic = 1;
        else if (0 == strcmp(argv[i], "--comm")) comm = 1;
    }
    if (windows < 1 || windows > MAX_WINDOWS) windows = 8;
    /* a component that refuses a window is reported, not fatal */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (enum flavor f = ALLOCATE; f <= COMM; ++f) {
        if ((DYNAMIC == f && !dynamic) || (COMM == f && !comm)) continue;
        int ok = 1, all_ok;
        if (warmup) {
            ok = MPI_SUCCESS == make(f, windows, &win[windows]);
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (ok) release(f, windows, windows + 1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int nb = shared_maps(before);
        long rss0 = rss_bytes(), heap0 = heap_bytes();
        int made = 0;
        for (int w = 0; ok && w < windows; ++w) {
            if (MPI_SUCCESS != make(f, w, &win[w])) { ok = 0; break; }
            made = w + 1;
        }
        long mapped = ok ? new_shared_bytes(before, nb, after, shared_maps(after)) / windows : -1;
        long heap = ok ? (heap_bytes() - heap0) / windows : -1;
        long rss = ok ? (rss_bytes() - rss0) / windows : -1;
        long sums[3] = { mapped, heap, rss }, totals[3];
        MPI_Reduce(sums, totals, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (0 == rank) {
            if (all_ok)
                printf("%s ranks=%d mapped_per_proc=%ld heap_per_proc=%ld rss_per_proc=%ld\n", flavor_name[f], size,
                       totals[0] / size, totals[1] / size, totals[2] / size);
            else
                printf("%s ranks=%d declined\n", flavor_name[f], size);
            fflush(stdout);
        }
        release(f, 0, made, win);
    }
    MPI_Finalize();
    return 0;
}
