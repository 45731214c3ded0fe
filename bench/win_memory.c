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
 * Memory a window costs, measured from inside the processes: the shared
 * mappings that window creation adds (the node segment, whatever backs it),
 * the growth of the malloc heap (glibc mallinfo2: bytes in use, arena and
 * mmapped chunks) and the growth of resident memory, per process and per
 * window, for windows of 4 KiB per rank.  Run under any osc component;
 * bench/win_memory.sh runs it for several components and rank counts.
 *
 *   win_memory [options]
 *     --windows N   windows per flavor, all alive at once (default 8, max 64)
 *     --warmup      create and use one window of each flavor first, so
 *                   that one-time costs (a transport brought up by the first
 *                   window, endpoints, memory pools, code pages) are not
 *                   charged to the windows measured; it stays alive until
 *                   the end, so that a component that reuses a freed
 *                   window's resources gets nothing for free
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
 *     --time N      also time window creation: N times MPI_Win_create /
 *                   _allocate / _create_dynamic (nothing attached) + free,
 *                   one window at a time, each from a barrier to the
 *                   slowest rank's return from free (MPI_MAX); the median
 *
 * Output (rank 0): one line per flavor
 *   <flavor> ranks=N mapped_per_proc=B heap_per_proc=B rss_per_proc=B node_per_proc=B
 * (averages over the ranks of the per-window growth; node_per_proc: what a
 * window costs the node -- every process's heap growth plus each shared
 * file once, however many processes map it -- divided by the ranks), or
 *   <flavor> ranks=N declined
 * and with --time one line per flavor
 *   <flavor> ranks=N create_free_us=T      (or create_free_us=-: declined)
 */
#include "bench_common.h"

#include <malloc.h>
#include <stdint.h>

#define MAX_MAPS 4096
#define MAX_WINDOWS 64
#define WIN_BYTES 4096

static int rank, size, do_puts;

typedef struct { unsigned long start, end, dev, inode; } range_t;

/* Address ranges (and backing file) of the shared (MAP_SHARED: 's' in the
 * perms) mappings. */
static int shared_maps(range_t *out)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof(line), f) && n < MAX_MAPS) {
        unsigned long s, e, off, major, minor, inode;
        char perms[8];
        if (7 == sscanf(line, "%lx-%lx %7s %lx %lx:%lx %lu", &s, &e, perms, &off, &major, &minor, &inode)
            && 's' == perms[3]) {
            out[n].start = s; out[n].end = e; out[n].dev = major << 20 | minor; out[n].inode = inode; n++;
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

/* the mappings in `after` that are not in `before` (at most MAX_NEW) */
#define MAX_NEW 256
static int new_mappings(const range_t *before, int nb, const range_t *after, int na, range_t *out)
{
    int n = 0;
    for (int i = 0; i < na && n < MAX_NEW; ++i) {
        int seen = 0;
        for (int j = 0; j < nb && !seen; ++j)
            seen = before[j].start == after[i].start && before[j].end == after[i].end;
        if (!seen) out[n++] = after[i];
    }
    return n;
}

static long bytes_of(const range_t *r, int n)
{
    long total = 0;
    for (int i = 0; i < n; ++i) total += (long) (r[i].end - r[i].start);
    return total;
}

/* What the new windows cost the node: every process's heap growth, plus
 * each shared file counted once however many processes map it (the largest
 * mapping of it; anonymous shared mappings, inode 0, once per process).
 * Collective; the result on rank 0. */
static long node_bytes(const range_t *mine, int n, long heap)
{
    static range_t all[MAX_NEW * 1024];
    int counts[1024] = { 0 };
    range_t padded[MAX_NEW];
    long heaps = 0, shared = 0;

    memset(padded, 0, sizeof(padded));
    memcpy(padded, mine, sizeof(range_t) * (size_t) n);
    if (size > 1024) return -1;
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(padded, (int) sizeof(padded), MPI_BYTE, all, (int) sizeof(padded), MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Reduce(&heap, &heaps, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 != rank) return 0;
    for (int p = 0; p < size; ++p) {
        for (int i = 0; i < counts[p]; ++i) {
            const range_t *m = &all[p * MAX_NEW + i];
            long bytes = (long) (m->end - m->start);
            int first = 1;
            for (int q = 0; q <= p && first && 0 != m->inode; ++q)
                for (int j = 0; j < counts[q] && first; ++j) {
                    const range_t *o = &all[q * MAX_NEW + j];
                    if ((q < p || j < i) && o->inode == m->inode && o->dev == m->dev) first = 0;
                }
            if (!first) continue;
            /* the largest mapping of this file, by any process */
            for (int q = 0; q < size && 0 != m->inode; ++q)
                for (int j = 0; j < counts[q]; ++j) {
                    const range_t *o = &all[q * MAX_NEW + j];
                    if (o->inode == m->inode && o->dev == m->dev && (long) (o->end - o->start) > bytes)
                        bytes = (long) (o->end - o->start);
                }
            shared += bytes;
        }
    }
    return shared + heaps;
}

/* the window flavors of bench_common.h, then a communicator duplicate */
enum { COMM = BENCH_NFLAVORS };
static const char *flavor_name[] = { "allocate", "create", "dynamic", "comm_dup" };
static MPI_Comm comms[MAX_WINDOWS + 1];
static char create_mem[MAX_WINDOWS + 1][WIN_BYTES];
static char dynamic_mem[MAX_WINDOWS + 1][WIN_BYTES];

/* create window w of a flavor and touch it; MPI_SUCCESS or an error.
 * The memory of create/dynamic windows is static, so that the heap growth
 * is the component's alone. */
static int make(int f, int w, struct bench_win *win)
{
    int rc;
    uint64_t one = 1;

    if (COMM == f) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[w]);
        return MPI_SUCCESS == rc ? MPI_Barrier(comms[w]) : rc;
    }
    rc = bench_win_open(win, f, WIN_BYTES, BENCH_DYNAMIC == f ? dynamic_mem[w] : create_mem[w], MPI_COMM_WORLD);
    if (MPI_SUCCESS != rc) return rc;
    /* touch the lock/sync state the way a program would */
    rc = MPI_Win_lock_all(0, win->win);
    for (int p = 0; do_puts && MPI_SUCCESS == rc && p < size; ++p) {
        int t = (rank + 1 + p) % size;
        rc = MPI_Put(&one, 8, MPI_BYTE, t, bench_win_disp(win, t, 8 * rank % WIN_BYTES), 8, MPI_BYTE, win->win);
    }
    if (MPI_SUCCESS == rc) rc = MPI_Win_unlock_all(win->win);
    return rc;
}

/* free windows first..last-1 (a dynamic window's memory is detached only
 * once every rank's epochs, and so its puts to us, are over) */
static void release(int f, int first, int last, struct bench_win *win)
{
    for (int w = first; w < last; ++w) {
        if (COMM == f) MPI_Comm_free(&comms[w]);
        else bench_win_close(&win[w], MPI_COMM_WORLD);
    }
}

/* median microseconds of n window creations + frees of flavor f, each
 * from a barrier to the slowest rank's return; -1 if refused */
static double create_free_us(int f, int n)
{
    double t[64];
    struct bench_win win;
    if (n > 64) n = 64;
    for (int i = 0; i < n; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int ok = MPI_SUCCESS == bench_win_open(&win, f, BENCH_DYNAMIC == f ? 0 : WIN_BYTES,
                                               BENCH_ALLOCATE == f ? NULL : create_mem[0], MPI_COMM_WORLD);
        if (ok) bench_win_close(&win, MPI_COMM_WORLD);
        t[i] = ok ? (MPI_Wtime() - t0) * 1e6 : -1;
        MPI_Allreduce(MPI_IN_PLACE, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!ok) return -1;
    }
    return bench_median(t, n);
}

int main(int argc, char **argv)
{
    static range_t before[MAX_MAPS], after[MAX_MAPS];
    int windows = 8, warmup = 0, dynamic = 0, comm = 0, time_n = 0;
    /* every window stays alive until all are measured: a component that
     * keeps a freed window's resources for the next one (newrma's segment
     * reuse) must not have a measured window charged nothing */
    static struct bench_win wins[COMM + 1][MAX_WINDOWS + 1];
    int made[COMM + 1] = { 0 }, warm[COMM + 1] = { 0 };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        if (0 == strcmp(argv[i], "--windows") && i + 1 < argc) windows = atoi(argv[++i]);
        else if (0 == strcmp(argv[i], "--warmup")) warmup = 1;
        else if (0 == strcmp(argv[i], "--puts")) do_puts = 1;
        else if (0 == strcmp(argv[i], "--dynamic")) dynamic = 1;
        else if (0 == strcmp(argv[i], "--comm")) comm = 1;
        else if (0 == strcmp(argv[i], "--time") && i + 1 < argc) time_n = atoi(argv[++i]);
    }
    if (windows < 1 || windows > MAX_WINDOWS) windows = 8;
    /* a component that refuses a window is reported, not fatal */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int f = BENCH_ALLOCATE; f <= COMM; ++f) {
        if ((BENCH_DYNAMIC == f && !dynamic) || (COMM == f && !comm)) continue;
        struct bench_win *win = wins[f];
        int ok = 1, all_ok;
        if (warmup) {
            ok = MPI_SUCCESS == make(f, windows, &win[windows]);
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            warm[f] = ok;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int nb = shared_maps(before);
        long rss0 = rss_bytes(), heap0 = heap_bytes();
        for (int w = 0; ok && w < windows; ++w) {
            if (MPI_SUCCESS != make(f, w, &win[w])) { ok = 0; break; }
            made[f] = w + 1;
        }
        static range_t fresh[MAX_NEW];
        int nf = new_mappings(before, nb, after, shared_maps(after), fresh);
        long heap_all = heap_bytes() - heap0;
        long mapped = ok ? bytes_of(fresh, nf) / windows : -1;
        long heap = ok ? heap_all / windows : -1;
        long rss = ok ? (rss_bytes() - rss0) / windows : -1;
        long sums[3] = { mapped, heap, rss }, totals[3];
        MPI_Reduce(sums, totals, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        long node = node_bytes(fresh, nf, heap_all);
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (0 == rank) {
            if (all_ok)
                printf("%s ranks=%d mapped_per_proc=%ld heap_per_proc=%ld rss_per_proc=%ld node_per_proc=%ld\n",
                       flavor_name[f], size, totals[0] / size, totals[1] / size, totals[2] / size,
                       node / windows / size);
            else
                printf("%s ranks=%d declined\n", flavor_name[f], size);
            fflush(stdout);
        }
    }
    for (int f = COMM; f >= BENCH_ALLOCATE; --f) {
        release(f, 0, made[f], wins[f]);
        if (warm[f]) release(f, windows, windows + 1, wins[f]);
    }
    for (int f = BENCH_ALLOCATE; time_n > 0 && f < BENCH_NFLAVORS; ++f) {
        if (BENCH_DYNAMIC == f && !dynamic) continue;
        double us = create_free_us(f, time_n);
        if (0 != rank) continue;
        if (us < 0) printf("%s ranks=%d create_free_us=-\n", flavor_name[f], size);
        else printf("%s ranks=%d create_free_us=%.1f\n", flavor_name[f], size, us);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
