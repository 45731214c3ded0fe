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
 * Request-based RMA: MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate,
 * every flavor, every rank to every rank.
 *
 * - Inside MPI_Win_lock (completed with MPI_Wait and MPI_Waitall), inside
 *   MPI_Win_lock_all (completed with MPI_Test loops and MPI_Testall): exact
 *   values moved, accumulated and returned (SUM, NO_OP), and every completed
 *   request handle is MPI_REQUEST_NULL afterwards.
 * - newrma only (MPI makes these erroneous; newrma reports them): inside a
 *   fence epoch, inside a PSCW access epoch, outside any epoch, and to a
 *   target not locked in a lock epoch, each of the four returns
 *   MPI_ERR_RMA_SYNC, sets the request to MPI_REQUEST_NULL and writes
 *   nothing; the epoch then finishes normally and moves exact data, and the
 *   passive parts above run afterwards on the same window.
 * - An MPI_Rput whose lock_all lock the target refuses at first (another
 *   rank holds an exclusive lock) completes with nothing but MPI_Wait
 *   (np >= 2; it used to hang on the active-message path).
 */
#include "common.h"

#define N 16

static int rank, size;

static int only_newrma(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return NULL != osc && NULL != strstr(osc, "newrma");
}

static int64_t pattern(int origin, int target, int i, int round)
{
    return (int64_t) round * 100000007 + (int64_t) origin * 1000003 + target * 1009 + i + 1;
}

/* window layout (int64, disp unit 8): [0, size*N): put slots, one per origin;
 * [size*N, 2*size*N): accumulate slots; [2*size*N]: proof slot for errors */
static MPI_Aint put_slot(const test_win_t *tw, int target, int origin)
{
    return test_disp(tw, target, (MPI_Aint) origin * N, 8);
}
static MPI_Aint acc_slot(const test_win_t *tw, int target, int origin)
{
    return test_disp(tw, target, (MPI_Aint) (size + origin) * N, 8);
}
static size_t win_bytes(void) { return (size_t) (2 * size * N + 8) * sizeof(int64_t); }

/* ---- erroneous calls (newrma) ------------------------------------------ */

static void expect_sync_errors(test_win_t *tw, int target, const char *where)
{
    const char *fl = flavor_names[tw->flavor];
    int64_t src[N], dst[N], res[N];
    MPI_Request sentinel, req;
    int x = 0;

    for (int i = 0; i < N; ++i) src[i] = -1000 - i, dst[i] = res[i] = 7;
    /* a real, inactive request as the handle's previous value */
    MPI_Send_init(&x, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &sentinel);

    for (int op = 0; op < 4; ++op) {
        static const char *const names[4] = { "MPI_Rput", "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate" };
        int rc = MPI_SUCCESS, cls;
        req = sentinel;
        switch (op) {
        case 0:
            rc = MPI_Rput(src, N, MPI_INT64_T, target, put_slot(tw, target, rank), N, MPI_INT64_T, tw->win, &req);
            break;
        case 1:
            rc = MPI_Rget(dst, N, MPI_INT64_T, target, put_slot(tw, target, rank), N, MPI_INT64_T, tw->win, &req);
            break;
        case 2:
            rc = MPI_Raccumulate(src, N, MPI_INT64_T, target, acc_slot(tw, target, rank), N, MPI_INT64_T, MPI_SUM,
                                 tw->win, &req);
            break;
        case 3:
            rc = MPI_Rget_accumulate(src, N, MPI_INT64_T, res, N, MPI_INT64_T, target, acc_slot(tw, target, rank), N,
                                     MPI_INT64_T, MPI_SUM, tw->win, &req);
            break;
        }
        MPI_Error_class(rc, &cls);
        CHECK(MPI_ERR_RMA_SYNC == cls, "%s: %s %s returned class %d, expected MPI_ERR_RMA_SYNC", fl, where, names[op],
              cls);
        CHECK(MPI_REQUEST_NULL == req, "%s: %s: %s left the request %s", fl, where, names[op],
              req == sentinel ? "unchanged" : "set to something other than MPI_REQUEST_NULL");
        if (MPI_SUCCESS == rc && MPI_REQUEST_NULL != req && sentinel != req) MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < N; ++i) {
        CHECK(7 == dst[i], "%s: %s: failed MPI_Rget wrote the origin buffer", fl, where);
        CHECK(7 == res[i], "%s: %s: failed MPI_Rget_accumulate wrote the result buffer", fl, where);
    }
    MPI_Request_free(&sentinel);
}

/* Errors in each kind of epoch that does not allow request-based operations;
 * every epoch then finishes and moves exact data. */
static void errors(test_win_t *tw)
{
    const char *fl = flavor_names[tw->flavor];
    volatile int64_t *mem = tw->mem;
    MPI_Aint proof = test_disp(tw, (rank + 1) % size, 2 * size * N, 8);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world, group;

    /* outside any epoch */
    for (int t = 0; t < size; ++t) expect_sync_errors(tw, t, "outside any epoch");

    /* fence epoch */
    MPI_OK(MPI_Win_fence(0, tw->win));
    expect_sync_errors(tw, right, "in a fence epoch");
    int64_t v = pattern(rank, right, 0, 11);
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, proof, 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    CHECK(mem[2 * size * N] == pattern(left, rank, 0, 11), "%s: fence epoch after errors delivered %lld", fl,
          (long long) mem[2 * size * N]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* PSCW epoch (everyone exposes to and accesses everyone) */
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    group = world;
    MPI_OK(MPI_Win_post(group, 0, tw->win));
    MPI_OK(MPI_Win_start(group, 0, tw->win));
    expect_sync_errors(tw, right, "in a PSCW access epoch");
    v = pattern(rank, right, 0, 12);
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, proof, 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_complete(tw->win));
    MPI_OK(MPI_Win_wait(tw->win));
    CHECK(mem[2 * size * N] == pattern(left, rank, 0, 12), "%s: PSCW epoch after errors delivered %lld", fl,
          (long long) mem[2 * size * N]);
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);

    /* lock epoch on one target: the others are not in an epoch */
    if (size > 1) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw->win));
        for (int t = 0; t < size; ++t)
            if (t != right) expect_sync_errors(tw, t, "to a target not locked");
        v = pattern(rank, right, 0, 13);
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, proof, 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_unlock(right, tw->win));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw->win));
        CHECK(mem[2 * size * N] == pattern(left, rank, 0, 13), "%s: lock epoch after errors delivered %lld", fl,
              (long long) mem[2 * size * N]);
        MPI_OK(MPI_Win_unlock(rank, tw->win));
    }

    /* after an epoch is over: outside any epoch again */
    for (int t = 0; t < size; ++t) expect_sync_errors(tw, t, "after the epochs");

    /* none of the failed calls wrote anything: put and accumulate slots still 0 */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw->win));
    for (int i = 0; i < 2 * size * N; ++i)
        CHECK(0 == mem[i], "%s: a failed request-based call wrote slot %d of rank %d: %lld", fl, i, rank,
              (long long) mem[i]);
    MPI_OK(MPI_Win_unlock(rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- passive target ------------------------------------------------------ */

enum { COMPLETE_WAIT, COMPLETE_TEST };

static void complete(MPI_Request *req, int how)
{
    if (COMPLETE_WAIT == how) {
        MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    } else {
        int flag = 0;
        long spins = 0;
        while (!flag && spins++ < 100000000L) MPI_OK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "MPI_Test never reported completion");
    }
}

static void complete_all(int n, MPI_Request *reqs, int how)
{
    if (COMPLETE_WAIT == how) {
        MPI_OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    } else {
        int flag = 0;
        long spins = 0;
        while (!flag && spins++ < 100000000L) MPI_OK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
        CHECK(flag, "MPI_Testall never reported completion");
    }
}

/* One passive epoch kind: lock_all (test completion) or lock per target (wait). */
static void passive(test_win_t *tw, int use_lock_all, int round)
{
    const char *fl = flavor_names[tw->flavor];
    const char *ep = use_lock_all ? "lock_all" : "lock";
    int how = use_lock_all ? COMPLETE_TEST : COMPLETE_WAIT;
    int64_t (*src)[N] = calloc((size_t) size, sizeof *src), (*add)[N] = calloc((size_t) size, sizeof *add);
    int64_t (*got)[N] = calloc((size_t) size, sizeof *got), (*old1)[N] = calloc((size_t) size, sizeof *old1);
    int64_t (*old2)[N] = calloc((size_t) size, sizeof *old2);
    volatile int64_t *mem = tw->mem;

    /* this rank's memory: put slots 0, accumulate slots pattern(origin, me, i, round + 50) */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw->win));
    for (int o = 0; o < size; ++o)
        for (int i = 0; i < N; ++i) {
            mem[o * N + i] = 0;
            mem[(size + o) * N + i] = pattern(o, rank, i, round + 50);
        }
    MPI_OK(MPI_Win_unlock(rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);

    if (use_lock_all) MPI_OK(MPI_Win_lock_all(0, tw->win));
    for (int k = 0; k < size; ++k) {
        int t = (rank + k) % size;
        MPI_Request reqs[3] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
        for (int i = 0; i < N; ++i) {
            src[t][i] = pattern(rank, t, i, round);
            add[t][i] = 1000 * (i + 1) + rank;
            got[t][i] = old1[t][i] = old2[t][i] = -1;
        }
        if (!use_lock_all) MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw->win));
        /* put and accumulate, then get back and get_accumulate twice (SUM, NO_OP) */
        MPI_OK(MPI_Rput(src[t], N, MPI_INT64_T, t, put_slot(tw, t, rank), N, MPI_INT64_T, tw->win, &reqs[0]));
        MPI_OK(MPI_Rget_accumulate(add[t], N, MPI_INT64_T, old1[t], N, MPI_INT64_T, t, acc_slot(tw, t, rank), N,
                                   MPI_INT64_T, MPI_SUM, tw->win, &reqs[1]));
        MPI_OK(MPI_Raccumulate(add[t], N, MPI_INT64_T, t, acc_slot(tw, t, rank), N, MPI_INT64_T, MPI_SUM, tw->win,
                               &reqs[2]));
        complete(&reqs[0], how);
        CHECK(MPI_REQUEST_NULL == reqs[0], "%s %s: MPI_Rput request not MPI_REQUEST_NULL after completion", fl, ep);
        complete_all(2, &reqs[1], how);
        CHECK(MPI_REQUEST_NULL == reqs[1] && MPI_REQUEST_NULL == reqs[2],
              "%s %s: accumulate requests not MPI_REQUEST_NULL after completion", fl, ep);
        /* the put may not be complete at the target until a flush */
        MPI_OK(MPI_Win_flush(t, tw->win));
        MPI_OK(MPI_Rget(got[t], N, MPI_INT64_T, t, put_slot(tw, t, rank), N, MPI_INT64_T, tw->win, &reqs[0]));
        MPI_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT64_T, old2[t], N, MPI_INT64_T, t, acc_slot(tw, t, rank), N,
                                   MPI_INT64_T, MPI_NO_OP, tw->win, &reqs[1]));
        complete_all(2, reqs, how);
        CHECK(MPI_REQUEST_NULL == reqs[0] && MPI_REQUEST_NULL == reqs[1],
              "%s %s: get requests not MPI_REQUEST_NULL after completion", fl, ep);
        /* results of gets are usable once the request completed, before the epoch ends */
        for (int i = 0; i < N; ++i) {
            CHECK(got[t][i] == src[t][i], "%s %s: MPI_Rget from %d [%d] = %lld, expected %lld", fl, ep, t, i,
                  (long long) got[t][i], (long long) src[t][i]);
            int64_t init = pattern(rank, t, i, round + 50);
            CHECK(old1[t][i] == init, "%s %s: MPI_Rget_accumulate(SUM) from %d [%d] returned %lld, expected %lld",
                  fl, ep, t, i, (long long) old1[t][i], (long long) init);
            CHECK(old2[t][i] == init + 2 * add[t][i],
                  "%s %s: MPI_Rget_accumulate(NO_OP) from %d [%d] returned %lld, expected %lld", fl, ep, t, i,
                  (long long) old2[t][i], (long long) (init + 2 * add[t][i]));
        }
        if (!use_lock_all) MPI_OK(MPI_Win_unlock(t, tw->win));
    }
    if (use_lock_all) MPI_OK(MPI_Win_unlock_all(tw->win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* this rank's memory as target */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw->win));
    for (int o = 0; o < size; ++o)
        for (int i = 0; i < N; ++i) {
            int64_t put = pattern(o, rank, i, round);
            int64_t acc = pattern(o, rank, i, round + 50) + 2 * (1000 * (i + 1) + o);
            CHECK(mem[o * N + i] == put, "%s %s: put slot of %d [%d] = %lld, expected %lld", fl, ep, o, i,
                  (long long) mem[o * N + i], (long long) put);
            CHECK(mem[(size + o) * N + i] == acc, "%s %s: accumulate slot of %d [%d] = %lld, expected %lld", fl, ep,
                  o, i, (long long) mem[(size + o) * N + i], (long long) acc);
        }
    MPI_OK(MPI_Win_unlock(rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);
    free(src);
    free(add);
    free(got);
    free(old1);
    free(old2);
}

/* A request-based operation whose lock_all lock is refused.  The
 * active-message path takes lock_all's locks lazily and, while holding one,
 * only tries the next: rank 0 holds its own shared lock (a put to itself,
 * flushed) when rank 1 holds an exclusive lock on itself, so rank 0's Rput
 * to rank 1 is refused; rank 1 unlocks only once rank 0 has made the call
 * (a message sent after it), and rank 0's MPI_Wait alone must then get the
 * lock and complete the put.  Rank 1's lock may also legally wait for rank
 * 0's unlock_all (the direct and single-copy paths' lock_all is one
 * window-wide lock; so is the active-message path's window protocol), so
 * rank 0 waits for rank 1's "locked" at most 2 s, and only where lock_all
 * is expected to be lazy: the active-message path with target elements for
 * every process (osc_newrma_target_pool_local + _global >= the window's
 * size, osc_newrma_am_sync.c window_protocol_needed); with fewer, lock_all
 * holds rank 1's shared lock from its start and "locked" cannot come
 * before our unlock_all. */
static void refused_lock_all_request(int flavor)
{
    enum { TAG_LOCKED = 701, TAG_GO = 702 };
    test_win_t tw;
    int token = 1, locked = 0;
    const int64_t mine = pattern(0, 0, 0, 77), theirs = pattern(0, 1, 0, 77);

    if (size < 2) return;   /* needs a second process to hold the lock */
    test_win_create(&tw, flavor, win_bytes(), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    if (0 == rank) {
        MPI_Request req, locked_req, go_req;
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        MPI_OK(MPI_Put(&mine, 1, MPI_INT64_T, 0, put_slot(&tw, 0, 0), 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_flush(0, tw.win));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Irecv(&locked, 1, MPI_INT, 1, TAG_LOCKED, MPI_COMM_WORLD, &locked_req);
        /* a bounded wait: rank 1's lock may legally wait for our
         * unlock_all (always on the direct path; on the active-message
         * path when lock_all takes the window protocol, short of target
         * elements) */
        int flag = 0;
        const int lazy = test_am_path(flavor) && test_cvar_int("osc_newrma_target_pool_local")
                                                 + test_cvar_int("osc_newrma_target_pool_global") >= size;
        const double until = MPI_Wtime() + (lazy ? 2.0 : 0.0);
        while (!flag && MPI_Wtime() < until) MPI_Test(&locked_req, &flag, MPI_STATUS_IGNORE);
        MPI_OK(MPI_Rput(&theirs, 1, MPI_INT64_T, 1, put_slot(&tw, 1, 0), 1, MPI_INT64_T, tw.win, &req));
        MPI_Isend(&token, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, &go_req);
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Win_unlock_all(tw.win));
        MPI_Wait(&go_req, MPI_STATUS_IGNORE);
        MPI_Wait(&locked_req, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (1 == rank) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, tw.win));
            MPI_Send(&token, 1, MPI_INT, 0, TAG_LOCKED, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_OK(MPI_Win_unlock(1, tw.win));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < 2) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        const int64_t got = ((volatile int64_t *) tw.mem)[0], want = rank ? theirs : mine;   /* origin 0's slot */
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        CHECK(got == want, "%s: put under a refused lock_all lock: %lld at rank %d, expected %lld",
              flavor_names[flavor], (long long) got, rank, (long long) want);
    }
    test_win_free(&tw);
}

static void run(int flavor)
{
    test_win_t tw;
    test_win_create(&tw, flavor, win_bytes(), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    if (only_newrma()) errors(&tw);
    passive(&tw, 0, 1);
    passive(&tw, 1, 2);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) refused_lock_all_request(flavor);
    return test_finalize("request_ops");
}
