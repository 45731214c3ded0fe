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
 * Window creation and MPI_Win_free leak nothing.  300 windows of each flavor
 * (small, varying sizes) are created and freed in a loop, on MPI_COMM_WORLD
 * and on a sub-communicator (even / odd ranks), all eight alive at once:
 *  - while they exist and after they are freed, /dev/shm holds no file whose
 *    name starts with "osc_newrma" (checked on rank 0 with opendir/readdir;
 *    the backing file is unlinked during creation);
 *  - after the loop no process maps an osc_newrma file any more
 *    (/proc/self/maps) but the one segment it keeps for the next window
 *    (none with osc_newrma_segment_cache_bytes=0, tests/segment_reuse.c), and
 *    has no more open descriptors than after the first 50 iterations;
 *  - resident memory (VmRSS) after the loop is within RSS_SLACK_KB of what it
 *    was after the first 50 windows of each kind.
 * Every window is used once (a put to the next rank) so it is really set up.
 *
 * Files of other jobs running at the same time (their creator's pid, which
 * is in the name, is a live process outside this job) are not counted.
 */
#include "common.h"


#define ITERATIONS 300        /* NEWRMA_WIN_ITERATIONS=N for a longer soak */
#define BASELINE_AT 50         /* iterations before the resident-memory baseline */
#define SCAN_EVERY 10          /* iterations between /dev/shm scans */
#define RSS_SLACK_KB 2048
#define PREFIX TEST_SHM_PREFIX

static int rank, size;
static int *job_pids;          /* pid of every process of the job */

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (NULL == d) return -1;
    while (NULL != (e = readdir(d)))
        if ('.' != e->d_name[0]) ++n;
    closedir(d);
    return n - 1;   /* the descriptor of the directory stream itself */
}

static int count_newrma_mappings(void)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (NULL == f) return -1;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, "/" PREFIX)) ++n;
    fclose(f);
    return n;
}

/* Rank 0: files in /dev/shm that this job left or that belong to no live
 * process. */
static int scan_dev_shm(const char *when)
{
    return 0 == rank ? test_scan_dev_shm(when, job_pids, size) : 0;
}

typedef struct {
    test_win_t tw;
    MPI_Comm comm;
    int crank, csize;
} live_t;

static void open_and_use(live_t *w, int flavor, MPI_Comm comm, int iter)
{
    size_t bytes = sizeof(int64_t) * (size_t) (1 + (iter + rank) % 7);
    int64_t v = (int64_t) iter * 1000 + rank;
    w->comm = comm;
    MPI_Comm_rank(comm, &w->crank);
    MPI_Comm_size(comm, &w->csize);
    test_win_create(&w->tw, flavor, bytes, sizeof(int64_t), MPI_INFO_NULL, comm);
    int target = (w->crank + 1) % w->csize;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w->tw.win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, target, test_disp(&w->tw, target, 0, sizeof(int64_t)), 1, MPI_INT64_T,
                   w->tw.win));
    MPI_OK(MPI_Win_unlock(target, w->tw.win));
}

static void check_and_close(live_t *w, int iter)
{
    if (MPI_COMM_NULL == w->comm) return;   /* not made: see main */
    /* the put from the previous rank of this communicator arrived */
    int prev = (w->crank + w->csize - 1) % w->csize, wprev;
    MPI_Group g, world;
    MPI_Comm_group(w->comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(g, 1, &prev, world, &wprev);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Barrier(w->comm);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, w->crank, 0, w->tw.win));
    int64_t got = ((volatile int64_t *) w->tw.mem)[0];
    MPI_OK(MPI_Win_unlock(w->crank, w->tw.win));
    CHECK(got == (int64_t) iter * 1000 + wprev, "iteration %d, %s window: element 0 is %lld, expected %lld", iter,
          flavor_names[w->tw.flavor], (long long) got, (long long) ((int64_t) iter * 1000 + wprev));
    test_win_free(&w->tw);
}

int main(int argc, char **argv)
{
    MPI_Comm sub;
    live_t live[2 * FLAVOR_COUNT];
    long rss_base = -1, rss_end;
    int fds_base = -1, fds_end;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
    job_pids = test_job_pids();

    scan_dev_shm("before any window");
    const char *env = getenv("NEWRMA_WIN_ITERATIONS");
    const int iterations = NULL != env && atoi(env) > BASELINE_AT ? atoi(env) : ITERATIONS;
    for (int iter = 0; iter < iterations; ++iter) {
        for (int f = 0; f < FLAVOR_COUNT; ++f) {
            /* across nodes no allocate_shared window exists on MPI_COMM_WORLD
             * (the even and odd ranks of tests/run.sh's node modes are on one node each) */
            live[2 * f].comm = MPI_COMM_NULL;
            if (FLAVOR_SHARED != f || !test_world_spans_nodes()) open_and_use(&live[2 * f], f, MPI_COMM_WORLD, iter);
            open_and_use(&live[2 * f + 1], f, sub, iter);
        }
        if (0 == iter % SCAN_EVERY || iterations - 1 == iter) {
            char when[64];
            /* every communicator has finished creating its windows */
            MPI_Barrier(MPI_COMM_WORLD);
            snprintf(when, sizeof(when), "iteration %d, 8 windows alive", iter);
            scan_dev_shm(when);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int k = 0; k < 2 * FLAVOR_COUNT; ++k) check_and_close(&live[k], iter);
        if (BASELINE_AT - 1 == iter) {
            MPI_Barrier(MPI_COMM_WORLD);
            rss_base = test_status_kb("VmRSS");
            fds_base = count_fds();
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    scan_dev_shm("after every window was freed");
    rss_end = test_status_kb("VmRSS");
    fds_end = count_fds();

    CHECK(rss_base > 0 && rss_end > 0, "cannot read VmRSS from /proc/self/status");
    CHECK(!test_rss_meaningful() || rss_end - rss_base <= RSS_SLACK_KB,
          "resident memory grew by %ld kB (from %ld kB after %d iterations to %ld kB after %d; %d windows): a leak",
          rss_end - rss_base, rss_base, BASELINE_AT, rss_end, iterations,
          (iterations - BASELINE_AT) * 2 * FLAVOR_COUNT);
    CHECK(fds_end <= fds_base, "open descriptors grew from %d to %d", fds_base, fds_end);
    int maps = count_newrma_mappings();
    test_am_path(FLAVOR_ALLOCATE);   /* MPI_T up */
    int kept = test_cvar_u64("osc_newrma_segment_cache_bytes") > 0;
    CHECK(maps <= kept, "%d mappings of " PREFIX " files remain after every window was freed (at most %d kept "
          "for reuse)", maps, kept);
    if (getenv("NEWRMA_TEST_VERBOSE"))
        fprintf(stderr, "[rank %d] VmRSS %ld -> %ld kB, fds %d -> %d\n", rank, rss_base, rss_end, fds_base, fds_end);

    MPI_Comm_free(&sub);
    free(job_pids);
    return test_finalize("win_free_leaks");
}
