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
 * A soak of RMA operations: windows of every flavor (create, allocate,
 * allocate_shared, dynamic) are created and freed in rounds, and on each
 * window every synchronization runs in turn -- fence, PSCW, lock/unlock
 * (exclusive and shared), lock_all + flush / flush_all, lock_all +
 * flush_local / flush_local_all -- each for a few epochs in which every rank
 * sends every rank (itself included) puts, gets, accumulates,
 * get_accumulates, fetch_and_ops and compare_and_swaps, and in the passive
 * modes the request-based rput / rget / raccumulate / rget_accumulate on
 * every other epoch.
 *
 * Values are checked, not just counted:
 *  - every origin owns two halves of slots at every target; epoch g puts
 *    into half g%2 and gets half (g-1)%2, which must hold what it put in
 *    epoch g-1 (0 on a fresh window);
 *  - fetch_and_op / get_accumulate (SUM) on shared counters return, per
 *    origin and counter, at least the counter's lower bound from this
 *    origin's own earlier adds (accumulate ordering is the default), and at
 *    the end each counter is exactly the sum of everyone's adds;
 *  - compare_and_swap on the origin's own slot at each target is a chain:
 *    each returns exactly the value the previous one stored;
 *  - before a window is freed every rank checks its own memory.
 *
 * Resources: resident memory (VmRSS) is sampled after a warm-up (the first
 * quarter of the rounds, at least one) and at the end; growth beyond
 * RSS_SLACK_KB fails.  2 MiB is the allocator's and UCX's noise (lazy
 * endpoints, pools reaching their high-water mark, malloc arenas); it
 * catches a leak of 1 byte per operation over a million operations, or 512
 * bytes per window over 4000 windows.  /dev/shm must hold no osc_newrma file
 * of this job after the last window is freed.
 *
 * Size: NEWRMA_SOAK_WINDOWS (default 16, rounded up to a multiple of 4) and
 * NEWRMA_SOAK_OPS (default 40000: operations per rank, spread over the
 * windows; at least one epoch per synchronization per window).  contrib/soak.sh
 * runs millions of operations over thousands of windows.  Each rank prints its
 * numbers with NEWRMA_TEST_VERBOSE set.
 */
#include "common.h"

#define H 8                 /* slots per half: puts per epoch per target */
#define C 4                 /* shared counters per target */
#define RSS_SLACK_KB 2048
#define DEFAULT_WINDOWS 16
#define DEFAULT_OPS 40000

enum { SYNC_FENCE, SYNC_PSCW, SYNC_LOCK, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_COUNT };
static const char *const sync_names[SYNC_COUNT] = { "fence", "pscw", "lock", "lock_all+flush",
                                                    "lock_all+flush_local" };

/* operations one epoch issues to one target: H each of put, accumulate,
 * fetch_and_op, get_accumulate, compare_and_swap, and one get */
#define OPS_PER_TARGET (5 * H + 1)

static int rank, size;
static long ops_done;

/* Origin-side state of one window: what was sent, where results land,
 * what the target must hold. */
typedef struct {
    test_win_t tw;
    int64_t g;              /* epochs so far on this window */
    int64_t *put_src;       /* [size][H] origin buffers of puts */
    int64_t *get_buf;       /* [size][H] */
    int64_t *fop_res;       /* [size][H] */
    int64_t *gacc_res;      /* [size][H] */
    int64_t *cas_res;       /* [size][H] */
    int64_t *cas_cmp;       /* [size][H] compare and origin buffers of the */
    int64_t *cas_new;       /* [size][H] CASes, untouched until they complete */
    int64_t *cas_next;      /* [size] value this rank's CAS slot at each target holds */
    int64_t *lower;         /* [size][C] lower bound of each counter from our own adds */
    int64_t adds[C];        /* our adds per counter at any one target */
    MPI_Request *reqs;      /* [size * 4 * H + size] */
    int nreq;
    const char *what;       /* "<flavor>/<sync>" for messages */
} soak_t;

static const int64_t acc_add = 1, fop_add = 2, gacc_add = 3;

/* window layout in int64 elements: [origin][2 halves][H] put slots, then C
 * counters, then one CAS slot per origin */
static MPI_Aint put_slot(int origin, int half, int k) { return (MPI_Aint) origin * 2 * H + half * H + k; }
static MPI_Aint counter_slot(int c) { return (MPI_Aint) size * 2 * H + c; }
static MPI_Aint cas_slot(int origin) { return (MPI_Aint) size * 2 * H + C + origin; }
static size_t window_elems(void) { return (size_t) size * (2 * H + 1) + C; }

static int64_t pattern(int origin, int target, int64_t g, int k)
{
    if (g < 0) return 0;    /* a fresh window is zero */
    return (g + 1) * 1000003 + (int64_t) origin * 10007 + target * 101 + k + 1;
}

static MPI_Aint disp(const soak_t *s, int target, MPI_Aint elem)
{
    return test_disp(&s->tw, target, elem, sizeof(int64_t));
}

static void *xcalloc(size_t n) { return calloc(n, sizeof(int64_t)); }

static void soak_open(soak_t *s, int flavor)
{
    memset(s, 0, sizeof(*s));
    test_win_create(&s->tw, flavor, window_elems() * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                    MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(s->tw.win, MPI_ERRORS_RETURN));
    s->put_src = xcalloc((size_t) size * H);
    s->get_buf = xcalloc((size_t) size * H);
    s->fop_res = xcalloc((size_t) size * H);
    s->gacc_res = xcalloc((size_t) size * H);
    s->cas_res = xcalloc((size_t) size * H);
    s->cas_cmp = xcalloc((size_t) size * H);
    s->cas_new = xcalloc((size_t) size * H);
    s->cas_next = xcalloc((size_t) size);
    s->lower = xcalloc((size_t) size * C);
    s->reqs = malloc(sizeof(MPI_Request) * (size_t) size * (4 * H + 1));
}

/* Issue one epoch's operations to `t`; request-based ones if `requests`. */
static void issue(soak_t *s, int t, int requests)
{
    const int h = (int) (s->g % 2);
    MPI_Win win = s->tw.win;
    int64_t *src = s->put_src + t * H;

    /* the other half was written in the previous epoch, which is complete */
    if (requests) {
        MPI_OK(MPI_Rget(s->get_buf + t * H, H, MPI_INT64_T, t, disp(s, t, put_slot(rank, 1 - h, 0)), H,
                        MPI_INT64_T, win, &s->reqs[s->nreq++]));
    } else {
        MPI_OK(MPI_Get(s->get_buf + t * H, H, MPI_INT64_T, t, disp(s, t, put_slot(rank, 1 - h, 0)), H,
                       MPI_INT64_T, win));
    }
    for (int k = 0; k < H; ++k) {
        const int c = k % C;
        int64_t *cmp = &s->cas_cmp[t * H + k], *next = &s->cas_new[t * H + k];
        *cmp = s->cas_next[t];
        *next = *cmp + 1;
        src[k] = pattern(rank, t, s->g, k);
        if (requests) {
            MPI_OK(MPI_Rput(&src[k], 1, MPI_INT64_T, t, disp(s, t, put_slot(rank, h, k)), 1, MPI_INT64_T, win,
                            &s->reqs[s->nreq++]));
            MPI_OK(MPI_Raccumulate(&acc_add, 1, MPI_INT64_T, t, disp(s, t, counter_slot(c)), 1, MPI_INT64_T,
                                   MPI_SUM, win, &s->reqs[s->nreq++]));
        } else {
            MPI_OK(MPI_Put(&src[k], 1, MPI_INT64_T, t, disp(s, t, put_slot(rank, h, k)), 1, MPI_INT64_T, win));
            MPI_OK(MPI_Accumulate(&acc_add, 1, MPI_INT64_T, t, disp(s, t, counter_slot(c)), 1, MPI_INT64_T,
                                  MPI_SUM, win));
        }
        MPI_OK(MPI_Fetch_and_op(&fop_add, &s->fop_res[t * H + k], MPI_INT64_T, t, disp(s, t, counter_slot(c)),
                                MPI_SUM, win));
        if (requests) {
            MPI_OK(MPI_Rget_accumulate(&gacc_add, 1, MPI_INT64_T, &s->gacc_res[t * H + k], 1, MPI_INT64_T, t,
                                       disp(s, t, counter_slot(c)), 1, MPI_INT64_T, MPI_SUM, win,
                                       &s->reqs[s->nreq++]));
        } else {
            MPI_OK(MPI_Get_accumulate(&gacc_add, 1, MPI_INT64_T, &s->gacc_res[t * H + k], 1, MPI_INT64_T, t,
                                      disp(s, t, counter_slot(c)), 1, MPI_INT64_T, MPI_SUM, win));
        }
        MPI_OK(MPI_Compare_and_swap(next, cmp, &s->cas_res[t * H + k], MPI_INT64_T, t, disp(s, t, cas_slot(rank)),
                                    win));
        s->cas_next[t] = *next;
    }
    ops_done += OPS_PER_TARGET;
}

static void wait_requests(soak_t *s)
{
    MPI_OK(MPI_Waitall(s->nreq, s->reqs, MPI_STATUSES_IGNORE));
    s->nreq = 0;
}

/* After the epoch's operations to `t` completed: check what came back, and
 * scribble over the buffers so a stale value cannot pass next time. */
static void check(soak_t *s, int t)
{
    int64_t *lower = s->lower + t * C;
    for (int k = 0; k < H; ++k) {
        const int64_t want = pattern(rank, t, s->g - 1, k);
        CHECK(s->get_buf[t * H + k] == want, "%s epoch %lld: get from %d slot %d is %lld, expected %lld", s->what,
              (long long) s->g, t, k, (long long) s->get_buf[t * H + k], (long long) want);
        s->get_buf[t * H + k] = -1;
    }
    /* replay this origin's adds in issue order: accumulate, fetch_and_op,
     * get_accumulate per k; others' adds only raise the counter */
    for (int k = 0; k < H; ++k) {
        const int c = k % C;
        const int64_t fop = s->fop_res[t * H + k], gacc = s->gacc_res[t * H + k];
        const int64_t cas_want = s->cas_next[t] - H + k;
        lower[c] += acc_add;
        CHECK(fop >= lower[c], "%s epoch %lld: fetch_and_op at %d counter %d returned %lld, below %lld", s->what,
              (long long) s->g, t, c, (long long) fop, (long long) lower[c]);
        lower[c] = fop + fop_add;
        CHECK(gacc >= lower[c], "%s epoch %lld: get_accumulate at %d counter %d returned %lld, below %lld", s->what,
              (long long) s->g, t, c, (long long) gacc, (long long) lower[c]);
        lower[c] = gacc + gacc_add;
        CHECK(s->cas_res[t * H + k] == cas_want, "%s epoch %lld: compare_and_swap at %d returned %lld, expected %lld",
              s->what, (long long) s->g, t, (long long) s->cas_res[t * H + k], (long long) cas_want);
        s->fop_res[t * H + k] = s->gacc_res[t * H + k] = s->cas_res[t * H + k] = -1;
        s->put_src[t * H + k] = -1;   /* puts are complete: the buffer is ours again */
    }
}

static void count_adds(soak_t *s)
{
    for (int k = 0; k < H; ++k) s->adds[k % C] += acc_add + fop_add + gacc_add;
}

static void issue_all(soak_t *s, int requests)
{
    for (int t = 0; t < size; ++t) issue(s, t, requests);
    if (requests) wait_requests(s);
}

static void check_all(soak_t *s)
{
    for (int t = 0; t < size; ++t) check(s, t);
    count_adds(s);
    s->g++;
}

static void run_fence(soak_t *s, int epochs)
{
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, s->tw.win));
    for (int e = 0; e < epochs; ++e) {
        issue_all(s, 0);
        MPI_OK(MPI_Win_fence(e == epochs - 1 ? MPI_MODE_NOSUCCEED : 0, s->tw.win));
        check_all(s);
    }
}

static void run_pscw(soak_t *s, int epochs)
{
    MPI_Group all;
    MPI_Win_get_group(s->tw.win, &all);
    for (int e = 0; e < epochs; ++e) {
        MPI_OK(MPI_Win_post(all, 0, s->tw.win));
        MPI_OK(MPI_Win_start(all, 0, s->tw.win));
        issue_all(s, 0);
        MPI_OK(MPI_Win_complete(s->tw.win));
        MPI_OK(MPI_Win_wait(s->tw.win));
        check_all(s);
    }
    MPI_Group_free(&all);
}

static void run_lock(soak_t *s, int epochs)
{
    for (int e = 0; e < epochs; ++e) {
        const int type = (s->g % 2) ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
        for (int t = 0; t < size; ++t) {
            MPI_OK(MPI_Win_lock(type, t, 0, s->tw.win));
            issue(s, t, e % 2);
            if (e % 2) wait_requests(s);
            MPI_OK(MPI_Win_unlock(t, s->tw.win));
            check(s, t);
        }
        count_adds(s);
        s->g++;
    }
}

/* lock_all, then per epoch a flush (local or not) of each target in turn or
 * of all at once.  After flush_local the results are here but the puts may
 * not have reached the targets: a flush_all before the next epoch's gets. */
static void run_flush(soak_t *s, int epochs, int local)
{
    MPI_OK(MPI_Win_lock_all(0, s->tw.win));
    for (int e = 0; e < epochs; ++e) {
        issue_all(s, e % 2);
        if (s->g % 2) {
            MPI_OK(local ? MPI_Win_flush_local_all(s->tw.win) : MPI_Win_flush_all(s->tw.win));
        } else {
            for (int t = 0; t < size; ++t)
                MPI_OK(local ? MPI_Win_flush_local(t, s->tw.win) : MPI_Win_flush(t, s->tw.win));
        }
        check_all(s);
        if (local) MPI_OK(MPI_Win_flush_all(s->tw.win));
    }
    MPI_OK(MPI_Win_unlock_all(s->tw.win));
}

/* Every rank checks its own window: the last two epochs' puts of every
 * origin, the counters, the CAS chains. */
static void check_own_memory(soak_t *s)
{
    const int64_t g = s->g;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, s->tw.win));
    volatile int64_t *mem = (volatile int64_t *) s->tw.mem;
    for (int o = 0; o < size; ++o) {
        for (int k = 0; k < H; ++k) {
            int64_t last = pattern(o, rank, g - 1, k), before = pattern(o, rank, g - 2, k);
            CHECK(mem[put_slot(o, (int) ((g - 1) % 2), k)] == last && mem[put_slot(o, (int) (g % 2), k)] == before,
                  "%s window: slots of origin %d element %d hold %lld / %lld, expected %lld / %lld",
                  flavor_names[s->tw.flavor], o, k, (long long) mem[put_slot(o, (int) ((g - 1) % 2), k)],
                  (long long) mem[put_slot(o, (int) (g % 2), k)], (long long) last, (long long) before);
        }
        /* every origin ran the same chain to every target */
        CHECK(mem[cas_slot(o)] == s->cas_next[rank], "%s window: CAS slot of %d is %lld, expected %lld",
              flavor_names[s->tw.flavor], o, (long long) mem[cas_slot(o)], (long long) s->cas_next[rank]);
    }
    for (int c = 0; c < C; ++c)
        CHECK(mem[counter_slot(c)] == size * s->adds[c], "%s window: counter %d is %lld, expected %lld",
              flavor_names[s->tw.flavor], c, (long long) mem[counter_slot(c)], (long long) (size * s->adds[c]));
    MPI_OK(MPI_Win_unlock(rank, s->tw.win));
}

static void soak_close(soak_t *s)
{
    check_own_memory(s);
    test_win_free(&s->tw);
    free(s->put_src);
    free(s->get_buf);
    free(s->fop_res);
    free(s->gacc_res);
    free(s->cas_res);
    free(s->cas_cmp);
    free(s->cas_new);
    free(s->cas_next);
    free(s->lower);
    free(s->reqs);
}

static void soak_window(int flavor, int epochs)
{
    soak_t s;
    char what[64];
    soak_open(&s, flavor);
    for (int m = 0; m < SYNC_COUNT; ++m) {
        snprintf(what, sizeof(what), "%s/%s", flavor_names[flavor], sync_names[m]);
        s.what = what;
        switch (m) {
        case SYNC_FENCE: run_fence(&s, epochs); break;
        case SYNC_PSCW: run_pscw(&s, epochs); break;
        case SYNC_LOCK: run_lock(&s, epochs); break;
        case SYNC_FLUSH: run_flush(&s, epochs, 0); break;
        case SYNC_FLUSH_LOCAL: run_flush(&s, epochs, 1); break;
        }
    }
    soak_close(&s);
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return (NULL != v && atol(v) > 0) ? atol(v) : dflt;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *pids = test_job_pids();

    const long rounds = (env_long("NEWRMA_SOAK_WINDOWS", DEFAULT_WINDOWS) + FLAVOR_COUNT - 1) / FLAVOR_COUNT;
    const long ops = env_long("NEWRMA_SOAK_OPS", DEFAULT_OPS);
    const long per_epoch = (long) size * OPS_PER_TARGET;
    long epochs = ops / (rounds * FLAVOR_COUNT * SYNC_COUNT * per_epoch);
    if (epochs < 1) epochs = 1;
    const long warmup = rounds / 4 > 0 ? rounds / 4 : 1;
    long rss_warm = -1, ops_warm = 0;

    for (long r = 0; r < rounds; ++r) {
        for (int f = 0; f < FLAVOR_COUNT; f = test_next_flavor(f)) soak_window(f, (int) epochs);
        if (warmup - 1 == r) {
            MPI_Barrier(MPI_COMM_WORLD);
            rss_warm = test_status_kb("VmRSS");
            ops_warm = ops_done;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const long rss_end = test_status_kb("VmRSS");
    if (0 == rank) test_scan_dev_shm("after every window was freed", pids, size);

    const long windows = rounds * FLAVOR_COUNT, measured = (rounds - warmup) * FLAVOR_COUNT;
    const long growth = rss_end - rss_warm;
    CHECK(rss_warm > 0 && rss_end > 0, "cannot read VmRSS from /proc/self/status");
    CHECK(!test_rss_meaningful() || growth <= RSS_SLACK_KB,
          "resident memory grew by %ld kB over %ld windows and %ld operations (%ld -> %ld kB): %.1f bytes per "
          "window, %.3f per operation: a leak",
          growth, measured, ops_done - ops_warm, rss_warm, rss_end, measured ? growth * 1024.0 / measured : 0.0,
          ops_done > ops_warm ? growth * 1024.0 / (double) (ops_done - ops_warm) : 0.0);
    if (getenv("NEWRMA_TEST_VERBOSE"))
        fprintf(stderr,
                "[rank %d] soak: %ld windows, %ld epochs per sync, %ld operations; VmRSS %ld kB after %ld "
                "windows, %ld kB at the end (%+ld kB over %ld windows, %ld operations)\n",
                rank, windows, epochs, ops_done, rss_warm, warmup * FLAVOR_COUNT, rss_end, growth, measured,
                ops_done - ops_warm);
    free(pids);
    return test_finalize("soak_ops");
}
