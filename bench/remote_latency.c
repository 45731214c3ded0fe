/*
 * Off-node RMA latency, emulated on one machine: 2 ranks, rank 0 the origin,
 * rank 1 the target, over whatever transport the driver selects (TCP loopback
 * in bench/remote_latency.sh).  Rows, all 8 bytes to offset 0 of rank 1's
 * window except put_bw:
 *   pingpong         MPI_Send + MPI_Recv round trip (the transport's floor)
 *   lock_put_unlock  MPI_Win_lock(EXCLUSIVE, 1) + MPI_Put + MPI_Win_unlock
 *   lock_fop_unlock  lock + MPI_Fetch_and_op(MPI_INT64_T, MPI_SUM) + unlock
 *   lock_acc_unlock  lock + MPI_Accumulate(MPI_INT64_T, MPI_SUM) + unlock
 *   fop_flush        MPI_Fetch_and_op + MPI_Win_flush, in a lock_all epoch
 *   put_flush        MPI_Put + MPI_Win_flush, in a lock_all epoch
 *   put_bw           64 KiB MPI_Puts, one MPI_Win_flush at the end, in a
 *                    lock_all epoch (MB/s, 1 MB = 1e6 B)
 * The lock_all epoch of the last three is opened and closed outside the
 * timed part of each batch.
 *
 * The target is inside MPI all along: for every batch it sits in MPI_Recv
 * (answering pings) until the origin sends it a "done" message, so a
 * component that needs the target's progress gets it.  Each row's iteration
 * count is calibrated so that a batch lasts about TARGET_MS (twice, the first
 * pass a warm-up); then BATCHES rounds run every row once (interleaved), and
 * rank 0 prints the median as "row size value iterations" lines
 * (microseconds per iteration, or MB/s for put_bw).  A row whose call returns
 * an error prints "-".  If the window cannot be created on some rank, rank 0
 * prints "window_failed <message>".
 *   remote_latency [create|allocate] [row,row,...]   (default: create, all)
 * create: MPI_Win_create on malloc'ed memory; allocate: MPI_Win_allocate.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCHES 21
#define TARGET_MS 25.0
#define MAX_ITERS 100000
#define WIN_BYTES (1 << 20)
#define BW_BYTES 65536

#define TAG_PING 1
#define TAG_PONG 2
#define TAG_DONE 3

enum row { PINGPONG, LOCK_PUT_UNLOCK, LOCK_FOP_UNLOCK, LOCK_ACC_UNLOCK, FOP_FLUSH, PUT_FLUSH, PUT_BW, NROWS };
static const char *row_name[] = { "pingpong", "lock_put_unlock", "lock_fop_unlock", "lock_acc_unlock",
                                  "fop_flush", "put_flush", "put_bw" };

struct test {
    enum row row;
    int bytes;
    long iters;
    int failed;
    double t[BATCHES];
};

static MPI_Win win;
static char *origin, *result;

static int cmp(const void *a, const void *b) { double x = *(const double *) a, y = *(const double *) b; return (x > y) - (x < y); }

static double median(double *v, int n) { qsort(v, (size_t) n, sizeof(double), cmp); return v[n / 2]; }

static int in_lock_all(enum row r) { return FOP_FLUSH == r || PUT_FLUSH == r || PUT_BW == r; }

/* one iteration of a row on rank 0; returns an MPI error code */
static int one(const struct test *t)
{
    int rc = MPI_SUCCESS, rc2;

    switch (t->row) {
    case PINGPONG:
        rc = MPI_Send(origin, 8, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
        if (MPI_SUCCESS == rc)
            rc = MPI_Recv(result, 8, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return rc;
    case LOCK_PUT_UNLOCK:
    case LOCK_FOP_UNLOCK:
    case LOCK_ACC_UNLOCK:
        rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        if (MPI_SUCCESS != rc)
            return rc;
        if (LOCK_PUT_UNLOCK == t->row)
            rc = MPI_Put(origin, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        else if (LOCK_FOP_UNLOCK == t->row)
            rc = MPI_Fetch_and_op(origin, result, MPI_INT64_T, 1, 0, MPI_SUM, win);
        else
            rc = MPI_Accumulate(origin, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, win);
        rc2 = MPI_Win_unlock(1, win);
        return MPI_SUCCESS != rc ? rc : rc2;
    case FOP_FLUSH:
        rc = MPI_Fetch_and_op(origin, result, MPI_INT64_T, 1, 0, MPI_SUM, win);
        return MPI_SUCCESS != rc ? rc : MPI_Win_flush(1, win);
    case PUT_FLUSH:
        rc = MPI_Put(origin, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
        return MPI_SUCCESS != rc ? rc : MPI_Win_flush(1, win);
    case PUT_BW:
        return MPI_Put(origin, t->bytes, MPI_BYTE, 1, 0, t->bytes, MPI_BYTE, win);
    default:
        return MPI_ERR_OTHER;
    }
}

/* time n iterations on rank 0 (the lock_all epoch, where the row has one,
 * opened and closed outside the timing); seconds, or -1 on error */
static double run(const struct test *t, long n)
{
    double t0, s;
    int rc = MPI_SUCCESS;

    if (in_lock_all(t->row) && MPI_SUCCESS != MPI_Win_lock_all(0, win))
        return -1;
    t0 = MPI_Wtime();
    for (long i = 0; i < n && MPI_SUCCESS == rc; ++i)
        rc = one(t);
    if (MPI_SUCCESS == rc && PUT_BW == t->row)
        rc = MPI_Win_flush(1, win);
    s = MPI_Wtime() - t0;
    if (in_lock_all(t->row) && MPI_SUCCESS != MPI_Win_unlock_all(win))
        rc = MPI_ERR_OTHER;
    return MPI_SUCCESS == rc ? s : -1;
}

/* rank 1: answer pings until the origin says done */
static void serve(void)
{
    char buf[8];
    MPI_Status st;

    for (;;) {
        if (MPI_SUCCESS != MPI_Recv(buf, 8, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st))
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (TAG_DONE == st.MPI_TAG)
            return;
        MPI_Send(buf, 8, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD);
    }
}

static void done(void) { MPI_Send(origin, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD); }

int main(int argc, char **argv)
{
    int rank, size, rc, any_failed;
    void *base = NULL;
    int create = !(argc > 1 && 0 == strcmp(argv[1], "allocate"));
    struct test tests[NROWS];
    int ntests = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 != size) {
        if (0 == rank) fprintf(stderr, "needs exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    for (enum row r = PINGPONG; r < NROWS; ++r) {
        if (argc > 2) { /* keep only the rows named in argv[2] */
            char list[512], key[32];
            snprintf(list, sizeof(list), ",%s,", argv[2]);
            snprintf(key, sizeof(key), ",%s,", row_name[r]);
            if (!strstr(list, key)) continue;
        }
        tests[ntests++] = (struct test) { .row = r, .bytes = PUT_BW == r ? BW_BYTES : 8 };
    }

    origin = calloc(1, WIN_BYTES);
    result = calloc(1, WIN_BYTES);
    for (int i = 0; i < WIN_BYTES / 8; ++i) ((int64_t *) origin)[i] = 1;
    if (create) {
        base = malloc(WIN_BYTES);
        rc = MPI_Win_create(base, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        rc = MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    }
    /* agree, so that one rank's failure does not leave the other waiting */
    any_failed = MPI_SUCCESS != rc;
    MPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed) {
        if (0 == rank) {
            char msg[MPI_MAX_ERROR_STRING] = "on the other rank";
            int len = 0;
            if (MPI_SUCCESS != rc) MPI_Error_string(rc, msg, &len);
            printf("window_failed %s\n", msg);
        }
        if (MPI_SUCCESS == rc) MPI_Win_free(&win);
        MPI_Finalize();
        return 0;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(base, 0, WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    /* calibrate: grow n until a run takes >= 2 ms, then scale to TARGET_MS;
     * twice, the first pass being the warm-up (connections, registration) */
    if (0 == rank) {
        for (int pass = 0; pass < 2; ++pass) {
            for (int k = 0; k < ntests; ++k) {
                struct test *t = &tests[k];
                long n = 1;
                double s = 0;
                if (t->failed) continue;
                for (;;) {
                    s = run(t, n);
                    if (s < 0) { t->failed = 1; break; }
                    if (s >= 2e-3 || n >= MAX_ITERS) break;
                    n *= 2;
                }
                if (!t->failed) {
                    long want = (long) (TARGET_MS * 1e-3 / (s / n) + 0.5);
                    t->iters = want < 1 ? 1 : want > MAX_ITERS ? MAX_ITERS : want;
                }
            }
        }
        done();
    } else {
        serve();
    }

    /* interleaved batches: every row once per round; the target waits in
     * MPI_Recv throughout each batch */
    for (int b = 0; b < BATCHES; ++b) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 != rank) { serve(); continue; }
            if (!t->failed) {
                double s = run(t, t->iters);
                if (s < 0)
                    t->failed = 1;
                else
                    t->t[b] = PUT_BW == t->row ? (double) t->bytes * t->iters / s / 1e6 : s / t->iters * 1e6;
            }
            done();
        }
    }

    if (0 == rank) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            if (t->failed)
                printf("%-16s %6d %12s\n", row_name[t->row], t->bytes, "-");
            else
                printf("%-16s %6d %12.3f %ld\n", row_name[t->row], t->bytes, median(t->t, BATCHES), t->iters);
        }
        fflush(stdout);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    if (create) free(base);
    free(origin);
    free(result);
    MPI_Finalize();
    return 0;
}
