/*
 * Latency of each RMA communication call followed by MPI_Win_flush, rank 0
 * targeting rank 1, inside one MPI_Win_lock_all epoch, on a window of
 * MPI_Win_allocate (or MPI_Win_create: argv[1] = "create"):
 *   put, get                 MPI_BYTE, 8 B .. 1 MiB
 *   acc, gacc                MPI_SUM on MPI_DOUBLE (8 B: MPI_INT64_T)
 *   fop, cas                 MPI_Fetch_and_op (SUM) / MPI_Compare_and_swap,
 *                            MPI_INT64_T, 8 B only
 * plus put bandwidth: a batch of puts of one size, then one flush (MB/s,
 * 1 MB = 1e6 B).
 *
 * Each test's iteration count is calibrated so that one batch lasts about
 * TARGET_MS; then BATCHES rounds run every test once each (interleaved), and
 * the median over the rounds is printed by rank 0 as "name size value" lines
 * (value in microseconds per op, or MB/s for "put_bw").  Rank 1 only sits in
 * MPI_Barrier between batches, which is where a component that needs target
 * progress gets it.  If the window cannot be created, rank 0 prints
 * "window_failed"; a test whose call returns an error prints "-".
 *   op_latency [allocate|create] [op,op,...]   (default: all ops)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 15
#define TARGET_MS 3.0
#define MAX_ITERS 200000
#define WIN_BYTES (1 << 20)

enum op { PUT, GET, ACC, GACC, FOP, CAS, PUT_BW };
static const char *op_name[] = { "put", "get", "acc", "gacc", "fop", "cas", "put_bw" };

struct test {
    enum op op;
    int bytes;
    long iters;
    int failed;
    double t[BATCHES];
};

static MPI_Win win;
static char *origin, *result;
static int64_t compare_val;

static int cmp(const void *a, const void *b) { double x = *(const double *) a, y = *(const double *) b; return (x > y) - (x < y); }

static double median(double *v, int n) { qsort(v, (size_t) n, sizeof(double), cmp); return v[n / 2]; }

/* one call of the test (and its flush, except put_bw); returns an MPI error code */
static int one(const struct test *t)
{
    int rc = MPI_SUCCESS;
    MPI_Datatype acc_type = 8 == t->bytes ? MPI_INT64_T : MPI_DOUBLE;
    int acc_count = t->bytes / 8;

    switch (t->op) {
    case PUT:
    case PUT_BW:
        rc = MPI_Put(origin, t->bytes, MPI_BYTE, 1, 0, t->bytes, MPI_BYTE, win);
        break;
    case GET:
        rc = MPI_Get(result, t->bytes, MPI_BYTE, 1, 0, t->bytes, MPI_BYTE, win);
        break;
    case ACC:
        rc = MPI_Accumulate(origin, acc_count, acc_type, 1, 0, acc_count, acc_type, MPI_SUM, win);
        break;
    case GACC:
        rc = MPI_Get_accumulate(origin, acc_count, acc_type, result, acc_count, acc_type, 1, 0,
                                acc_count, acc_type, MPI_SUM, win);
        break;
    case FOP:
        rc = MPI_Fetch_and_op(origin, result, MPI_INT64_T, 1, 0, MPI_SUM, win);
        break;
    case CAS:
        rc = MPI_Compare_and_swap(origin, &compare_val, result, MPI_INT64_T, 1, 0, win);
        break;
    }
    if (MPI_SUCCESS == rc && PUT_BW != t->op)
        rc = MPI_Win_flush(1, win);
    return rc;
}

/* time n iterations on rank 0; seconds, or -1 on error */
static double run(const struct test *t, long n)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; ++i)
        if (MPI_SUCCESS != one(t))
            return -1;
    if (PUT_BW == t->op && MPI_SUCCESS != MPI_Win_flush(1, win))
        return -1;
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    int rank, size, rc;
    void *base = NULL;
    int create = argc > 1 && 0 == strcmp(argv[1], "create");
    static const int sizes[] = { 8, 64, 1024, 65536, 1 << 20 };
    static const int bw_sizes[] = { 4096, 65536, 1 << 20 };
    struct test tests[64];
    int ntests = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (0 == rank) fprintf(stderr, "needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (enum op o = PUT; o <= GACC; ++o)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s)
            tests[ntests++] = (struct test) { .op = o, .bytes = sizes[s] };
    tests[ntests++] = (struct test) { .op = FOP, .bytes = 8 };
    tests[ntests++] = (struct test) { .op = CAS, .bytes = 8 };
    for (size_t s = 0; s < sizeof(bw_sizes) / sizeof(bw_sizes[0]); ++s)
        tests[ntests++] = (struct test) { .op = PUT_BW, .bytes = bw_sizes[s] };

    if (argc > 2) { /* keep only the ops named in argv[2], e.g. "put,get" */
        int j = 0;
        for (int k = 0; k < ntests; ++k) {
            char list[256];
            snprintf(list, sizeof(list), ",%s,", argv[2]);
            char key[16];
            snprintf(key, sizeof(key), ",%s,", op_name[tests[k].op]);
            if (strstr(list, key)) tests[j++] = tests[k];
        }
        ntests = j;
    }

    origin = calloc(1, WIN_BYTES);
    result = calloc(1, WIN_BYTES);
    if (create) {
        base = calloc(1, WIN_BYTES);
        rc = MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        rc = MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    }
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        if (0 == rank) printf("window_failed %s\n", msg);
        MPI_Finalize();
        return 0;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(base, 0, WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);

    /* calibrate: grow n until a run takes >= 0.5 ms, then scale to
     * TARGET_MS; done twice, the first pass being the warm-up (first touch,
     * registration, ...) */
    for (int pass = 0; 0 == rank && pass < 2; ++pass) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            long n = 1;
            double s;
            for (;;) {
                s = run(t, n);
                if (s < 0) { t->failed = 1; break; }
                if (s >= 0.5e-3 || n >= MAX_ITERS) break;
                n *= 2;
            }
            if (!t->failed) {
                long want = (long) (TARGET_MS * 1e-3 / (s / n) + 0.5);
                t->iters = want < 1 ? 1 : want > MAX_ITERS ? MAX_ITERS : want;
            }
        }
    }

    /* interleaved batches: every test once per round */
    for (int b = 0; b < BATCHES; ++b) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 != rank || t->failed) continue;
            double s = run(t, t->iters);
            if (s < 0) { t->failed = 1; continue; }
            t->t[b] = PUT_BW == t->op ? (double) t->bytes * t->iters / s / 1e6 : s / t->iters * 1e6;
        }
    }

    MPI_Win_unlock_all(win);

    if (0 == rank) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            if (t->failed)
                printf("%-7s %8d %12s\n", op_name[t->op], t->bytes, "-");
            else
                printf("%-7s %8d %12.3f %ld\n", op_name[t->op], t->bytes, median(t->t, BATCHES), t->iters);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    if (create) free(base);
    free(origin);
    free(result);
    MPI_Finalize();
    return 0;
}
