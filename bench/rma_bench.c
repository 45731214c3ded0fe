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
 * On-node RMA benchmark: one run measures one osc component (chosen by
 * mpirun --mca osc NAME) on one window flavor, 2 or more ranks; rank 0 is
 * the origin, rank 1 the target; bench/rma_bench.sh runs it for every
 * component, flavor and rank count, interleaved, and makes the tables.
 *
 *   rma_bench allocate|create|dynamic quick|full [FIRST_ROW [SKIP,SKIP...]]
 * (FIRST_ROW: resume after a row that crashed; SKIP: rows not to run, those
 * that crashed in an earlier run of the same component)
 * Environment RMA_BENCH_ONLY: an extended regular expression; only rows
 * whose name ("lat flush put 8", "bw flush get 1024", "sync - fence 0")
 * matches run (an A/B of one mechanism then takes seconds, not minutes).
 *
 * Rows (every one timed on rank 0, median over the run's batches):
 *   sync  cost of one synchronization, no data: MPI_Barrier (reference),
 *         fence (all ranks), PSCW round (rank 0 start/complete on all other
 *         ranks, which post/wait), lock/unlock shared and exclusive of rank
 *         1, lock_all/unlock_all, flush of rank 1 inside lock_all.       [us]
 *   lat   one operation plus its synchronization, per sync mode:
 *           lock         lock(exclusive, 1) + op + unlock(1)
 *           flush        op + flush(1)        inside one lock_all epoch
 *           flush_local  op + flush_local(1)  inside one lock_all epoch
 *           lock_all     lock_all + op + unlock_all
 *           pscw         start({1}) + op + complete; rank 1 post({0}) + wait
 *           fence        op + fence(0) on all ranks
 *         ops: put, get (MPI_BYTE), acc, gacc (MPI_SUM on MPI_DOUBLE),
 *         fop (MPI_SUM, one MPI_DOUBLE), cas (one MPI_INT64_T).        [us]
 *   bw    WINDOW_OPS puts (gets) of one size, then one flush, in lock_all:
 *         bandwidth [MB/s, 1e6 B/s] and message rate [Mop/s], same batches.
 *
 * Output of rank 0, one line at a time and flushed, so that the driver can
 * tell in which row a crashing or hanging run stopped and resume after it:
 *   start IDX SECTION MODE OP BYTES
 *   row IDX SECTION MODE OP BYTES VALUE       (VALUE "-": an error)
 *   note IDX text                             (why a row is "-")
 *   cpus IDX SHARED                           (after a row: the fraction of
 *                                              its batches that ended with
 *                                              ranks 0 and 1 on one CPU)
 *   window_failed text                        (the component refused the window)
 *   done
 * Ranks other than the ones a row names wait in the MPI_Allreduce that
 * ends each batch: that is where a component needing target-side progress
 * gets it, the same for every component.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include "bench_common.h"

#include <regex.h>
#include <sched.h>
#include <stdint.h>

#define MAX_BATCHES 15
#define MAX_ITERS 100000L
#define WINDOW_OPS 64        /* operations per synchronization in bw rows */
#define MAX_BYTES (4u << 20) /* largest size; the window's size per rank */

enum section { SYNC, LAT, BW };
static const char *const section_name[] = { "sync", "lat", "bw" };
enum mode { LOCK, FLUSH, FLUSH_LOCAL, LOCK_ALL, PSCW, FENCE, NMODES };
static const char *const mode_name[] = { "lock", "flush", "flush_local", "lock_all", "pscw", "fence" };
enum op { PUT, GET, ACC, GACC, FOP, CAS, NOPS };
static const char *const op_name[] = { "put", "get", "acc", "gacc", "fop", "cas" };
enum sync { S_BARRIER, S_FENCE, S_PSCW, S_LOCK_SHARED, S_LOCK_EXCL, S_LOCK_ALL, S_FLUSH, NSYNCS };
static const char *const sync_name[] = { "barrier", "fence", "pscw", "lock_shared", "lock_exclusive",
                                         "lock_all", "flush" };

struct row {
    enum section sec;
    int kind;     /* enum sync for SYNC, enum mode for LAT; unused for BW */
    enum op op;   /* LAT, BW */
    size_t bytes; /* LAT, BW */
};

/* the run's settings: quick mode has fewer sizes, shorter and fewer batches */
static struct {
    const size_t *lat_sizes, *bw_sizes;
    int nlat, nbw, batches;
    double batch_s; /* target duration of one batch */
} cfg;

static struct bench_win w;
static int rank, nranks;
static char *origin, *result;
static int64_t compare_val;
static MPI_Group g_target, g_origin, g_others; /* {1}, {0}, {1..P-1} */

/* issue one operation to `target`; an MPI error code */
static int issue(enum op op, size_t bytes, int target)
{
    MPI_Aint disp = bench_win_disp(&w, target, 0);
    int n = (int) bytes, nd = (int) (bytes / sizeof(double));

    switch (op) {
    case PUT: return MPI_Put(origin, n, MPI_BYTE, target, disp, n, MPI_BYTE, w.win);
    case GET: return MPI_Get(result, n, MPI_BYTE, target, disp, n, MPI_BYTE, w.win);
    case ACC: return MPI_Accumulate(origin, nd, MPI_DOUBLE, target, disp, nd, MPI_DOUBLE, MPI_SUM, w.win);
    case GACC:
        return MPI_Get_accumulate(origin, nd, MPI_DOUBLE, result, nd, MPI_DOUBLE, target, disp, nd, MPI_DOUBLE,
                                  MPI_SUM, w.win);
    case FOP: return MPI_Fetch_and_op(origin, result, MPI_DOUBLE, target, disp, MPI_SUM, w.win);
    case CAS: return MPI_Compare_and_swap(origin, &compare_val, result, MPI_INT64_T, target, disp, w.win);
    default: return MPI_ERR_ARG;
    }
}

/* first error of two */
static int first_err(int a, int b) { return MPI_SUCCESS != a ? a : b; }

/* one iteration of a latency row, this rank's part.  The synchronization
 * calls are made even when the operation fails, so that the ranks' active
 * epochs stay matched and a refused operation does not hang the others. */
static int lat_iteration(const struct row *r)
{
    int rc = MPI_SUCCESS;

    switch ((enum mode) r->kind) {
    case LOCK:
        if (0 != rank) return MPI_SUCCESS;
        rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w.win);
        if (MPI_SUCCESS != rc) return rc;
        rc = issue(r->op, r->bytes, 1);
        return first_err(rc, MPI_Win_unlock(1, w.win));
    case FLUSH:
    case FLUSH_LOCAL:
        if (0 != rank) return MPI_SUCCESS;
        rc = issue(r->op, r->bytes, 1);
        if (MPI_SUCCESS != rc) return rc;
        return FLUSH == r->kind ? MPI_Win_flush(1, w.win) : MPI_Win_flush_local(1, w.win);
    case LOCK_ALL:
        if (0 != rank) return MPI_SUCCESS;
        rc = MPI_Win_lock_all(0, w.win);
        if (MPI_SUCCESS != rc) return rc;
        rc = issue(r->op, r->bytes, 1);
        return first_err(rc, MPI_Win_unlock_all(w.win));
    case PSCW:
        if (0 == rank) {
            rc = MPI_Win_start(g_target, 0, w.win);
            if (MPI_SUCCESS != rc) return rc;
            rc = issue(r->op, r->bytes, 1);
            return first_err(rc, MPI_Win_complete(w.win));
        }
        if (1 != rank) return MPI_SUCCESS;
        rc = MPI_Win_post(g_origin, 0, w.win);
        return MPI_SUCCESS != rc ? rc : MPI_Win_wait(w.win);
    case FENCE:
        if (0 == rank) rc = issue(r->op, r->bytes, 1);
        return first_err(rc, MPI_Win_fence(0, w.win));
    default: return MPI_ERR_ARG;
    }
}

/* one iteration of a synchronization row, this rank's part */
static int sync_iteration(const struct row *r)
{
    int rc;

    switch ((enum sync) r->kind) {
    case S_BARRIER: return MPI_Barrier(MPI_COMM_WORLD);
    case S_FENCE: return MPI_Win_fence(0, w.win);
    case S_PSCW:
        if (0 == rank) {
            rc = MPI_Win_start(g_others, 0, w.win);
            return MPI_SUCCESS != rc ? rc : MPI_Win_complete(w.win);
        }
        rc = MPI_Win_post(g_origin, 0, w.win);
        return MPI_SUCCESS != rc ? rc : MPI_Win_wait(w.win);
    case S_LOCK_SHARED:
    case S_LOCK_EXCL:
        if (0 != rank) return MPI_SUCCESS;
        rc = MPI_Win_lock(S_LOCK_SHARED == r->kind ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 1, 0, w.win);
        return MPI_SUCCESS != rc ? rc : MPI_Win_unlock(1, w.win);
    case S_LOCK_ALL:
        if (0 != rank) return MPI_SUCCESS;
        rc = MPI_Win_lock_all(0, w.win);
        return MPI_SUCCESS != rc ? rc : MPI_Win_unlock_all(w.win);
    case S_FLUSH: return 0 == rank ? MPI_Win_flush(1, w.win) : MPI_SUCCESS;
    default: return MPI_ERR_ARG;
    }
}

/* one iteration of a bandwidth row: WINDOW_OPS operations, one flush */
static int bw_iteration(const struct row *r)
{
    int rc = MPI_SUCCESS;
    if (0 != rank) return MPI_SUCCESS;
    for (int i = 0; i < WINDOW_OPS && MPI_SUCCESS == rc; ++i) rc = issue(r->op, r->bytes, 1);
    return first_err(rc, MPI_Win_flush(1, w.win));
}

static int iteration(const struct row *r)
{
    return SYNC == r->sec ? sync_iteration(r) : LAT == r->sec ? lat_iteration(r) : bw_iteration(r);
}

/* does the row run inside one lock_all epoch of rank 0 (opened untimed)? */
static int in_lock_all(const struct row *r)
{
    return BW == r->sec || (SYNC == r->sec && S_FLUSH == r->kind) ||
           (LAT == r->sec && (FLUSH == r->kind || FLUSH_LOCAL == r->kind));
}

/* does the row run inside a fence epoch (opened and closed untimed)? */
static int in_fence(const struct row *r)
{
    return (SYNC == r->sec && S_FENCE == r->kind) || (LAT == r->sec && FENCE == r->kind);
}

/* do all ranks (or rank 1) take part in every iteration?  Then an error
 * does not stop the loop: the others would wait for us */
static int others_loop_too(const struct row *r)
{
    return in_fence(r) || (SYNC == r->sec && (S_BARRIER == r->kind || S_PSCW == r->kind)) ||
           (LAT == r->sec && PSCW == r->kind);
}

/* Time n iterations, collectively.  Returns rank 0's seconds on every rank,
 * or -1 on every rank if any rank got an error (*err: the first one seen
 * on this rank).  *shared_cpu: whether ranks 0 and 1 ended the batch on one
 * CPU -- with more ranks than cores, a row whose two ranks hand over to
 * each other costs context switches then, a line transfer otherwise, and
 * the scheduler decides which (bench/floors.c measures both floors). */
static double batch(const struct row *r, long n, int *err, int *shared_cpu)
{
    int rc = MPI_SUCCESS, ends[3];
    double t = 0;

    if (0 == rank && in_lock_all(r)) rc = MPI_Win_lock_all(0, w.win);
    if (in_fence(r)) rc = first_err(rc, MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; ++i) {
        int rc2 = iteration(r);
        if (MPI_SUCCESS == rc2) continue;
        rc = first_err(rc, rc2);
        if (!others_loop_too(r)) break; /* only rank 0 loops: stop at once */
    }
    t = MPI_Wtime() - t0;
    if (in_fence(r)) rc = first_err(rc, MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win));
    if (0 == rank && in_lock_all(r)) rc = first_err(rc, MPI_Win_unlock_all(w.win));
    if (MPI_SUCCESS != rc && MPI_SUCCESS == *err) *err = rc;
    /* one reduction: any error, rank 0's CPU, rank 1's CPU */
    ends[0] = MPI_SUCCESS != rc;
    ends[1] = 0 == rank ? sched_getcpu() : -1;
    ends[2] = 1 == rank ? sched_getcpu() : -1;
    MPI_Allreduce(MPI_IN_PLACE, ends, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    *shared_cpu = ends[1] >= 0 && ends[1] == ends[2];
    return ends[0] ? -1 : t;
}

/* iterations for one batch to last about cfg.batch_s (the doubling also
 * warms up: first touch, registration, connection) */
static long calibrate(const struct row *r, int *err)
{
    long n = 1;
    double t;
    int shared;
    for (;;) {
        if ((t = batch(r, n, err, &shared)) < 0) return -1;
        if (t >= cfg.batch_s / 8 || n >= MAX_ITERS) break;
        n *= 2;
    }
    double want = cfg.batch_s / (t / (double) n);
    return want < 1 ? 1 : want > MAX_ITERS ? MAX_ITERS : (long) want;
}

/* "MODE OP BYTES" of a row: what the driver keys it by */
/* a row's key, "MODE OP BYTES" ("flush put 8", "- fence 0") */
static void format_key(const struct row *r, char *key, size_t len)
{
    const char *mode = SYNC == r->sec ? "-" : LAT == r->sec ? mode_name[r->kind] : "flush";
    const char *name = SYNC == r->sec ? sync_name[r->kind] : op_name[r->op];
    snprintf(key, len, "%s %s %zu", mode, name, r->bytes);
}

static void print_key(const struct row *r)
{
    char key[80];
    format_key(r, key, sizeof(key));
    fputs(key, stdout);
}

static void print_value(int idx, const struct row *r, const char *sec, double v)
{
    printf("row %d %s ", idx, sec);
    print_key(r);
    if (v < 0) printf(" -\n");
    else printf(" %.4f\n", v);
}

/* measure one row and print it (rank 0) */
static void measure(int idx, const struct row *r)
{
    double t[MAX_BATCHES];
    int err = MPI_SUCCESS, shared, shared_batches = 0;
    long n = calibrate(r, &err);

    for (int b = 0; n > 0 && b < cfg.batches; ++b) {
        if ((t[b] = batch(r, n, &err, &shared)) < 0) n = -1;
        shared_batches += shared;
    }
    /* the error text of whichever rank failed: rank 0 reports */
    int code = err, worst;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 != rank) return;
    if (n < 0) {
        print_value(idx, r, section_name[r->sec], -1);
        if (BW == r->sec) print_value(idx, r, "rate", -1);
        printf("note %d %s\n", idx, bench_errstr(worst));
        return;
    }
    double s = bench_median(t, cfg.batches) / (double) n; /* seconds per iteration */
    if (BW == r->sec) {
        print_value(idx, r, "bw", (double) r->bytes * WINDOW_OPS / s / 1e6);
        print_value(idx, r, "rate", WINDOW_OPS / s / 1e6);
    } else {
        print_value(idx, r, section_name[r->sec], s * 1e6);
    }
    printf("cpus %d %.2f\n", idx, (double) shared_batches / cfg.batches);
}

/* is row idx in the comma-separated list? */
static int listed(const char *list, int idx)
{
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (atoi(p) == idx) return 1;
    return 0;
}

/* does row r's name match RMA_BENCH_ONLY (or is it unset)? a bw row is
 * named by its bandwidth line, the name the drivers select it by */
static int selected(const struct row *r)
{
    static regex_t only;
    static int state; /* 0 unread, 1 no filter, 2 filter compiled */
    if (0 == state) {
        const char *re = getenv("RMA_BENCH_ONLY");
        state = (NULL != re && 0 == regcomp(&only, re, REG_EXTENDED | REG_NOSUB)) ? 2 : 1;
    }
    if (1 == state) return 1;
    char key[80], name[96];
    format_key(r, key, sizeof(key));
    snprintf(name, sizeof(name), "%s %s", section_name[r->sec], key);
    return 0 == regexec(&only, name, 0, NULL, 0);
}

/* the run's rows, in order; returns their number */
static int make_rows(struct row *rows)
{
    int n = 0;
    for (int s = 0; s < NSYNCS; ++s) rows[n++] = (struct row) { .sec = SYNC, .kind = s };
    for (int m = 0; m < NMODES; ++m)
        for (int o = 0; o < NOPS; ++o) {
            int single = FOP == o || CAS == o; /* one element by definition */
            for (int k = 0; k < (single ? 1 : cfg.nlat); ++k)
                rows[n++] = (struct row) { .sec = LAT, .kind = m, .op = o, .bytes = single ? 8 : cfg.lat_sizes[k] };
        }
    for (int o = PUT; o <= GET; ++o)
        for (int k = 0; k < cfg.nbw; ++k) rows[n++] = (struct row) { .sec = BW, .op = o, .bytes = cfg.bw_sizes[k] };
    return n;
}

static void set_mode(int quick)
{
    static const size_t lat_full[] = { 8, 64, 512, 4096, 32768, 262144, 1u << 20, 4u << 20 };
    static const size_t bw_full[] = { 1024, 4096, 16384, 65536, 262144, 1u << 20, 4u << 20 };
    static const size_t lat_quick[] = { 8, 65536, 4u << 20 };
    static const size_t bw_quick[] = { 1024, 65536, 4u << 20 };

    cfg.lat_sizes = quick ? lat_quick : lat_full;
    cfg.nlat = quick ? 3 : 8;
    cfg.bw_sizes = quick ? bw_quick : bw_full;
    cfg.nbw = quick ? 3 : 7;
    /* many short batches rather than a few long ones: a batch hit by
     * another process's time slice is an outlier the median drops */
    cfg.batches = quick ? 7 : 15;
    cfg.batch_s = quick ? 0.5e-3 : 1e-3;
}

static void make_groups(void)
{
    MPI_Group world;
    int zero = 0, one = 1, range[1][3] = { { 1, nranks - 1, 1 } };
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &one, &g_target);
    MPI_Group_incl(world, 1, &zero, &g_origin);
    MPI_Group_range_incl(world, 1, range, &g_others);
    MPI_Group_free(&world);
}

int main(int argc, char **argv)
{
    static struct row rows[512];
    int flavor = argc > 1 ? bench_flavor_parse(argv[1]) : -1, first = argc > 3 ? atoi(argv[3]) : 0;
    const char *skip = argc > 4 ? argv[4] : NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (flavor < 0 || argc < 3 || nranks < 2) {
        if (0 == rank) fprintf(stderr, "usage: mpirun -np N>=2 rma_bench allocate|create|dynamic quick|full [FIRST_ROW [SKIP,...]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    set_mode(0 == strcmp(argv[2], "quick"));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    make_groups();
    origin = bench_filled(MAX_BYTES);
    result = bench_filled(MAX_BYTES);
    if (NULL == origin || NULL == result) {
        fprintf(stderr, "rma_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    int rc = bench_win_open(&w, flavor, MAX_BYTES, NULL, MPI_COMM_WORLD), ok = MPI_SUCCESS == rc, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (0 == rank) printf("window_failed %s\n", ok ? "on another rank" : bench_errstr(rc));
        if (ok) bench_win_close(&w, MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN);

    int nrows = make_rows(rows);
    for (int i = first; i < nrows; ++i) {
        if (listed(skip, i) || !selected(&rows[i])) continue;
        if (0 == rank) {
            printf("start %d %s ", i, section_name[rows[i].sec]);
            print_key(&rows[i]);
            printf("\n");
            fflush(stdout);
        }
        measure(i, &rows[i]);
        if (0 == rank) fflush(stdout);
    }
    bench_win_close(&w, MPI_COMM_WORLD);
    if (0 == rank) printf("done\n");
    MPI_Group_free(&g_target);
    MPI_Group_free(&g_origin);
    MPI_Group_free(&g_others);
    free(origin);
    free(result);
    MPI_Finalize();
    return 0;
}
