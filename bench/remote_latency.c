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
 * Off-node RMA latency, emulated on one machine: 2 ranks, rank 0 the origin,
 * rank 1 the target, over whatever transport the driver selects (TCP loopback
 * in bench/remote_latency.sh).  Rows, all 8 bytes to offset 0 of rank 1's
 * window except put_bw:
 *   pingpong         MPI_Send + MPI_Recv round trip (the MPI transport's floor)
 *   ucp_pingpong     8-byte UCP active-message round trip on a UCX worker of
 *                    the benchmark's own (built with HAVE_UCP; UCX_TLS etc.
 *                    apply): the floor of newrma's transport, without MPI
 *   lock_put_unlock  MPI_Win_lock(EXCLUSIVE, 1) + MPI_Put + MPI_Win_unlock
 *   lock_fop_unlock  lock + MPI_Fetch_and_op(MPI_INT64_T, MPI_SUM) + unlock
 *   lock_acc_unlock  lock + MPI_Accumulate(MPI_INT64_T, MPI_SUM) + unlock
 *   fop_flush        MPI_Fetch_and_op + MPI_Win_flush, in a lock_all epoch
 *   put_flush        MPI_Put + MPI_Win_flush, in a lock_all epoch
 *   put_bw           64 KiB MPI_Puts (-DBW_BYTES=N: N bytes), one MPI_Win_flush at the end, in a
 *                    lock_all epoch (MB/s, 1 MB = 1e6 B)
 * The lock_all epoch of the last three is opened and closed outside the
 * timed part of each batch.
 *
 * (The ucp_pingpong row is only measured where asked for by name.)
 * Where newrma's MPI_T counters osc_newrma_packets_<kind> exist, rank 0
 * then prints, for every RMA row, the packets each side sent per
 * iteration (200 iterations after the timed part):
 *   packets <row> origin: <kind>=<n> ...  target: <kind>=<n> ...
 * The target is inside MPI all along: for every batch it sits in MPI_Recv
 * (answering pings) until the origin sends it a "done" message, so a
 * component that needs the target's progress gets it (ucp_pingpong batches
 * excepted: there the target only drives the benchmark's UCP worker).  Each row's iteration
 * count is calibrated so that a batch lasts about TARGET_MS (twice, the first
 * pass a warm-up); then BATCHES rounds run every row once (interleaved), and
 * rank 0 prints the median as "row size value iterations" lines
 * (microseconds per iteration, or MB/s for put_bw).  A row whose call returns
 * an error prints "-".  If the window cannot be created on some rank, rank 0
 * prints "window_failed <message>".
 *   remote_latency [create|allocate] [row,row,...]   (default: create, all)
 * create: MPI_Win_create on malloc'ed memory; allocate: MPI_Win_allocate.
 */
#include "bench_common.h"

#include <stdint.h>
#ifdef HAVE_UCP
#include <ucp/api/ucp.h>
#endif

#define BATCHES 21
#define TARGET_MS 25.0
#define MAX_ITERS 100000
#define WIN_BYTES (1 << 20)
#ifndef BW_BYTES
#define BW_BYTES 65536
#endif

#define TAG_PING 1
#define TAG_PONG 2
#define TAG_DONE 3

enum row { PINGPONG, UCP_PINGPONG, LOCK_PUT_UNLOCK, LOCK_FOP_UNLOCK, LOCK_ACC_UNLOCK, FOP_FLUSH, PUT_FLUSH, PUT_BW,
           NROWS };
static const char *row_name[] = { "pingpong", "ucp_pingpong", "lock_put_unlock", "lock_fop_unlock",
                                  "lock_acc_unlock", "fop_flush", "put_flush", "put_bw" };

struct test {
    enum row row;
    int bytes;
    long iters;
    int failed;
    double t[BATCHES];
};

static MPI_Win win;
static int rank_g;
static char *origin, *result;


static int in_lock_all(enum row r) { return FOP_FLUSH == r || PUT_FLUSH == r || PUT_BW == r; }


#ifdef HAVE_UCP
/* ------------------------------------------------------------------ */
/* a bare UCP active-message ping-pong: newrma's transport without newrma */
/* ------------------------------------------------------------------ */
enum { AM_PING = 1, AM_PONG = 2, AM_DONE = 3 };
static struct {
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_ep_h ep;
    volatile long pings, pongs, dones;
    int up;
} bu;

static ucs_status_t am_count(void *arg, const void *header, size_t header_len, void *data, size_t len,
                             const ucp_am_recv_param_t *param)
{
    (void) header; (void) header_len; (void) data; (void) len; (void) param;
    ++*(volatile long *) arg;
    return UCS_OK;
}

/* send 8 bytes with AM id, wait for local completion; 0 or -1 */
static int ucp_send8(unsigned id, const void *buf)
{
    ucp_request_param_t param = { .op_attr_mask = 0 };
    ucs_status_ptr_t req = ucp_am_send_nbx(bu.ep, id, NULL, 0, buf, 8, &param);
    ucs_status_t st = UCS_OK;

    if (UCS_PTR_IS_ERR(req)) return -1;
    if (NULL != req) {
        while (UCS_INPROGRESS == (st = ucp_request_check_status(req)))
            ucp_worker_progress(bu.worker);
        ucp_request_free(req);
    }
    return UCS_OK == st ? 0 : -1;
}

/* set up on both ranks (collective); 0 on success everywhere */
static int ucp_setup(int rank)
{
    ucp_params_t params = { .field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM };
    ucp_worker_params_t wparams = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                    .thread_mode = UCS_THREAD_MODE_SINGLE };
    ucp_config_t *config = NULL;
    ucp_address_t *addr = NULL;
    size_t len = 0;
    long mylen, peerlen = 0;
    char *peer = NULL;
    int ok = 1, all_ok;
    volatile long *counters[] = { NULL, &bu.pings, &bu.pongs, &bu.dones };

    ok = ok && UCS_OK == ucp_config_read(NULL, NULL, &config);
    ok = ok && UCS_OK == ucp_init(&params, config, &bu.context);
    if (config) ucp_config_release(config);
    ok = ok && UCS_OK == ucp_worker_create(bu.context, &wparams, &bu.worker);
    for (unsigned id = AM_PING; ok && id <= AM_DONE; ++id) {
        ucp_am_handler_param_t h = { .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB
                                                   | UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
                                     .id = id, .cb = am_count, .arg = (void *) counters[id],
                                     .flags = UCP_AM_FLAG_WHOLE_MSG };
        ok = UCS_OK == ucp_worker_set_am_recv_handler(bu.worker, &h);
    }
    ok = ok && UCS_OK == ucp_worker_get_address(bu.worker, &addr, &len);
    mylen = ok ? (long) len : 0;
    MPI_Sendrecv(&mylen, 1, MPI_LONG, 1 - rank, 7, &peerlen, 1, MPI_LONG, 1 - rank, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    peer = malloc(peerlen > 0 ? (size_t) peerlen : 1);
    MPI_Sendrecv(addr, (int) mylen, MPI_BYTE, 1 - rank, 8, peer, (int) peerlen, MPI_BYTE, 1 - rank, 8,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (ok && peerlen > 0) {
        ucp_ep_params_t ep = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = (ucp_address_t *) peer };
        ok = UCS_OK == ucp_ep_create(bu.worker, &ep, &bu.ep);
    } else {
        ok = 0;
    }
    if (addr) ucp_worker_release_address(bu.worker, addr);
    free(peer);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    bu.up = all_ok;
    return all_ok ? 0 : -1;
}

/* rank 1: answer UCP pings until the origin's AM_DONE */
static void ucp_serve(void)
{
    char buf[8] = { 0 };
    long answered = bu.pings;

    while (!bu.dones) {
        ucp_worker_progress(bu.worker);
        while (answered < bu.pings) {
            ++answered;
            if (0 != ucp_send8(AM_PONG, buf)) MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    bu.dones = 0;
}

static int ucp_pingpong(void)
{
    long want = bu.pongs + 1;

    if (0 != ucp_send8(AM_PING, origin)) return MPI_ERR_OTHER;
    while (bu.pongs < want)
        ucp_worker_progress(bu.worker);
    return MPI_SUCCESS;
}

static void ucp_done(void) { if (0 != ucp_send8(AM_DONE, origin)) MPI_Abort(MPI_COMM_WORLD, 1); }

static void ucp_teardown(void)
{
    if (bu.ep) {
        ucp_request_param_t param = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE };
        ucs_status_ptr_t req = ucp_ep_close_nbx(bu.ep, &param);
        while (UCS_PTR_IS_PTR(req) && UCS_INPROGRESS == ucp_request_check_status(req))
            ucp_worker_progress(bu.worker);
        if (UCS_PTR_IS_PTR(req)) ucp_request_free(req);
    }
    if (bu.worker) ucp_worker_destroy(bu.worker);
    if (bu.context) ucp_cleanup(bu.context);
}
#else
static struct { int up; } bu;
static int ucp_setup(int rank) { (void) rank; return -1; }
static void ucp_serve(void) {}
static int ucp_pingpong(void) { return MPI_ERR_OTHER; }
static void ucp_done(void) {}
static void ucp_teardown(void) {}
#endif

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
    case UCP_PINGPONG:
        return ucp_pingpong();
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

/* end of a batch of row r: rank 0 releases rank 1, which serves it */
static void done(enum row r)
{
    if (UCP_PINGPONG == r)
        ucp_done();
    else
        MPI_Send(origin, 0, MPI_BYTE, 1, TAG_DONE, MPI_COMM_WORLD);
}

static void serve_row(enum row r)
{
    if (UCP_PINGPONG == r)
        ucp_serve();
    else
        serve();
}

/* ------------------------------------------------------------------ */
/* newrma's packet counters (MPI_T pvars osc_newrma_packets_<kind>):   */
/* packets per iteration of each row, where the pvars exist            */
/* ------------------------------------------------------------------ */
static const char *kinds[] = { "put", "get", "acc", "get_acc", "cas", "lock", "sync", "info",
                               "post", "grant", "ack", "reply", "info_reply" };
#define NKINDS ((int) (sizeof(kinds) / sizeof(kinds[0])))
static MPI_T_pvar_session pv_session = MPI_T_PVAR_SESSION_NULL;
static MPI_T_pvar_handle pv_handles[NKINDS];
static int pv_ok;

static void pvars_init(void)
{
    int provided, ok = 1;

    if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)) return;
    if (MPI_SUCCESS != MPI_T_pvar_session_create(&pv_session)) return;
    for (int k = 0; k < NKINDS && ok; ++k) {
        char name[64];
        int index, count = 0;
        snprintf(name, sizeof(name), "osc_newrma_packets_%s", kinds[k]);
        ok = MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index)
             && MPI_SUCCESS == MPI_T_pvar_handle_alloc(pv_session, index, NULL, &pv_handles[k], &count)
             && 1 == count;
    }
    MPI_Allreduce(&ok, &pv_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
}

static void pvars_read(unsigned long long *v)
{
    for (int k = 0; k < NKINDS; ++k)
        if (MPI_SUCCESS != MPI_T_pvar_read(pv_session, pv_handles[k], &v[k])) v[k] = 0;
}

/* "packets <row> origin: k=n/iter ... target: k=n/iter ..." on rank 0 */
static void pvars_row(struct test *t)
{
    enum { N = 200 };
    unsigned long long a[NKINDS], b[NKINDS], d[2][NKINDS];

    MPI_Barrier(MPI_COMM_WORLD);
    pvars_read(a);
    /* again: a target still in the first barrier would serve (and count)
     * the origin's first packet before its own read */
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank_g) {
        if (run(t, N) < 0) t->failed = 1;
        done(t->row);
    } else {
        serve_row(t->row);
    }
    pvars_read(b);
    for (int k = 0; k < NKINDS; ++k) d[0][k] = b[k] - a[k];
    if (0 == rank_g) {
        MPI_Recv(d[1], NKINDS, MPI_UNSIGNED_LONG_LONG, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("packets %-16s", row_name[t->row]);
        for (int side = 0; side < 2; ++side) {
            int any = 0;
            printf(" %s:", side ? " target" : "origin");
            for (int k = 0; k < NKINDS; ++k)
                if (d[side][k]) { printf(" %s=%.2f", kinds[k], (double) d[side][k] / N); any = 1; }
            if (!any) printf(" none");
        }
        printf("\n");
    } else {
        MPI_Send(d[0], NKINDS, MPI_UNSIGNED_LONG_LONG, 0, TAG_PONG, MPI_COMM_WORLD);
    }
}

static void pvars_fini(void)
{
    if (MPI_T_PVAR_SESSION_NULL != pv_session) {
        for (int k = 0; k < NKINDS && pv_ok; ++k) MPI_T_pvar_handle_free(pv_session, &pv_handles[k]);
        MPI_T_pvar_session_free(&pv_session);
    }
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    int rank, size, rc, any_failed;
    struct bench_win bw;
    int create = !(argc > 1 && 0 == strcmp(argv[1], "allocate"));
    struct test tests[NROWS];
    int ntests = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rank_g = rank;
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
        } else if (UCP_PINGPONG == r) {
            continue;
        }
        tests[ntests++] = (struct test) { .row = r, .bytes = PUT_BW == r ? BW_BYTES : 8 };
    }

    origin = calloc(1, WIN_BYTES);
    result = calloc(1, WIN_BYTES);
    for (int i = 0; i < WIN_BYTES / 8; ++i) ((int64_t *) origin)[i] = 1;
    rc = bench_win_open(&bw, create ? BENCH_CREATE : BENCH_ALLOCATE, WIN_BYTES, NULL, MPI_COMM_WORLD);
    win = bw.win;
    /* agree, so that one rank's failure does not leave the other waiting */
    any_failed = MPI_SUCCESS != rc;
    MPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed) {
        if (0 == rank) printf("window_failed %s\n", MPI_SUCCESS != rc ? bench_errstr(rc) : "on the other rank");
        if (MPI_SUCCESS == rc) bench_win_close(&bw, MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(bw.base, 0, WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the bare UCP ping-pong row, where asked for (agreed on both ranks) */
    for (int k = 0; k < ntests; ++k)
        if (UCP_PINGPONG == tests[k].row && 0 != ucp_setup(rank))
            tests[k].failed = 1;

    /* calibrate: grow n until a run takes >= 2 ms, then scale to TARGET_MS;
     * twice, the first pass being the warm-up (connections, registration).
     * Rank 1 serves each row's calibration on the row's own transport. */
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            long n = 1;
            double s = 0;
            if (UCP_PINGPONG == t->row && !bu.up) continue;
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 != rank) { serve_row(t->row); continue; }
            if (!t->failed) {
                for (;;) {
                    s = run(t, n);
                    if (s < 0) { t->failed = 1; break; }
                    if (s >= 2e-3 || n >= MAX_ITERS) break;
                    n *= 2;
                }
            }
            if (!t->failed) {
                long want = (long) (TARGET_MS * 1e-3 / (s / n) + 0.5);
                t->iters = want < 1 ? 1 : want > MAX_ITERS ? MAX_ITERS : want;
            }
            done(t->row);
        }
    }

    /* interleaved batches: every row once per round; the target waits in
     * MPI_Recv throughout each batch */
    for (int b = 0; b < BATCHES; ++b) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            if (UCP_PINGPONG == t->row && !bu.up) continue;
            MPI_Barrier(MPI_COMM_WORLD);
            if (0 != rank) { serve_row(t->row); continue; }
            if (!t->failed) {
                double s = run(t, t->iters);
                if (s < 0)
                    t->failed = 1;
                else
                    t->t[b] = PUT_BW == t->row ? (double) t->bytes * t->iters / s / 1e6 : s / t->iters * 1e6;
            }
            done(t->row);
        }
    }

    /* only rank 0 knows which rows failed; both must skip the same ones */
    for (int k = 0; k < ntests; ++k)
        MPI_Bcast(&tests[k].failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

    /* packets per iteration, after the timed part (newrma only) */
    pvars_init();
    for (int k = 0; pv_ok && k < ntests; ++k)
        if (PINGPONG != tests[k].row && UCP_PINGPONG != tests[k].row && !tests[k].failed)
            pvars_row(&tests[k]);

    if (0 == rank) {
        for (int k = 0; k < ntests; ++k) {
            struct test *t = &tests[k];
            if (t->failed)
                printf("%-16s %6d %12s\n", row_name[t->row], t->bytes, "-");
            else
                printf("%-16s %6d %12.3f %ld\n", row_name[t->row], t->bytes, bench_median(t->t, BATCHES), t->iters);
        }
        fflush(stdout);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    pvars_fini();
    ucp_teardown();
    MPI_Barrier(MPI_COMM_WORLD);
    bench_win_close(&bw, MPI_COMM_WORLD);
    free(origin);
    free(result);
    MPI_Finalize();
    return 0;
}
