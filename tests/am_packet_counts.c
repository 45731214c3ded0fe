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
 * Message counts of the active-message path (docs/am-protocol.md, "Epochs
 * over messages"), asserted exactly with newrma's MPI_T performance
 * variables osc_newrma_packets_<kind>: packets of each kind this process
 * sent to other processes (packets to itself are not counted).
 *
 * Every scenario is a counted phase: barrier, every rank reads its counters,
 * barrier, the scenario (one origin at a time unless it is collective; the
 * other ranks wait in the next barrier, whose traffic is not osc packets),
 * barrier, every rank reads again and checks its own deltas -- and the data
 * the scenario moved.  Scenarios, on MPI_Win_create and MPI_Win_allocate
 * windows with same_size and same_disp_unit (no INFO packets needed):
 *
 *   0  lock/put/fetch/unlock to self                  nothing counted
 *   1  lock(excl) + 1 put + unlock                    origin 1 put (LOCK+UNLOCK ride on it),
 *                                                     target 1 ack
 *   2  lock + 1 fetch_and_op + unlock                 origin 1 get_acc, target 1 reply (it is the ack)
 *   3  lock + N puts + unlock                         origin 1 lock + N put (UNLOCK on the last),
 *                                                     target 1 grant + 1 ack
 *   4  lock + unlock, no operation                    nothing
 *   5  lock_all + put to k of P ranks + unlock_all    origin k put + <= k lock; each contacted
 *                                                     target 1 ack + its grant; the others nothing
 *   6  fence, put to each neighbour, fence            each rank 1 put (FLUSH on it) and 1 ack per neighbour
 *   7  without same_size/same_disp_unit: two          first epoch INFO + INFO_REPLY, then cached
 *      lock+put+unlock epochs to one target
 *
 * Scenario 3 is exact when the newest N operations may wait for the unlock
 * (osc_newrma_piggyback_threshold >= N and op pools of at least N+1); with
 * smaller pools/threshold (tests/run.sh --mode minimum) operations go out
 * earlier and the UNLOCK may need a SYNC packet of its own: that is checked
 * as an upper bound.
 *
 * When the target-element pools cannot hold one element per process
 * (osc_newrma_target_pool_local + _global < P, as in --mode minimum),
 * lock_all uses the design's window protocol instead: a LOCK to every
 * other rank and a GRANT back, and at unlock_all the UNLOCK rides on the
 * last put to each contacted rank and goes as a SYNC to the others, one ACK
 * each.  Scenarios 0 and 5 then expect exactly that (no exclusive lock is
 * held while their lock_alls run: a refused tried lock adds a round of
 * packets, docs/am-protocol.md).  Scenario 5 is exact while the operation
 * pools hold its puts (k = P - 2 of them); with fewer elements (--mode
 * minimum from 5 ranks) they go out early and SYNC and ACK are bounded.
 *
 * A window of the native route (osc_newrma_native_rma: MPI_Win_allocate
 * windows whose peers UCX reaches by shared memory, docs/mixed-windows.md)
 * sends no packet in any of these scenarios: its locks are a word in the
 * target's memory, its puts and single-element atomics UCX RMA, its
 * synchronizations flush the endpoint.  There every scenario expects
 * nothing sent and exactly its operations counted by
 * osc_newrma_route_native_ops (none elsewhere).  The allocate flavor is
 * native where UCX_TLS names no tcp and not native where it does; with
 * UCX_TLS unset UCX picks, and scenario 0's operations on ourselves (native
 * too in a native window) tell which.
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_force_remote:1
 */
#include "common.h"

enum {
    K_PUT, K_GET, K_ACC, K_GET_ACC, K_CAS, K_LOCK, K_SYNC, K_INFO, K_POST, K_GRANT, K_ACK, K_REPLY,
    K_INFO_REPLY, K_COUNT
};
static const char *const kind_names[K_COUNT] = {
    "put", "get", "acc", "get_acc", "cas", "lock", "sync", "info", "post", "grant", "ack", "reply",
    "info_reply",
};

typedef unsigned long long counts_t[K_COUNT];

#define NPUTS 10              /* scenario 3 */
/* Element indices of each scenario (o: origin rank), one slot per rank of
 * SLOTS = max(P, 4): every origin its own elements at any rank count, the
 * same layout as ever up to 4 ranks. */
#define SLOTS (nprocs > 4 ? nprocs : 4)
#define IDX_S0 0                                  /* self: 0, 1, 2 */
#define IDX_S1 4                                  /* + o */
#define IDX_S2 (IDX_S1 + SLOTS)                   /* + o */
#define IDX_S3 (IDX_S2 + 2 * SLOTS)               /* + o * NPUTS + i */
#define IDX_S5 (IDX_S3 + SLOTS * NPUTS + 8)       /* + o */
#define IDX_S6 (IDX_S5 + 2 * SLOTS)               /* + 0: from the left neighbour, + 1: from the right one */
#define IDX_S7 (IDX_S6 + 8)                       /* + 2 * o + epoch */
#define WIN_ELEMS (IDX_S7 + 2 * SLOTS + 40)       /* int64 elements per rank (128 up to 4 ranks) */

static int rank, nprocs;
static int counters_ok;
static MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
static MPI_T_pvar_handle handles[K_COUNT];
static int exact_piggyback;   /* scenario 3 exact (see above) */
static int window_protocol;   /* lock_all locks every rank at once (see below) */
static long long op_pools;    /* operation elements a window can hold (local + global pool) */
static test_pvar_t native_ops; /* osc_newrma_route_native_ops */
static unsigned long long native_before, native_delta;
static int native_window;     /* the window of the flavor being run is native (see above) */

/* ---- MPI_T ------------------------------------------------------------- */

static void counters_init(void)
{
    int provided, ret;

    ret = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    CHECK(MPI_SUCCESS == ret, "MPI_T_init_thread returned %d", ret);
    if (MPI_SUCCESS != ret) {
        return;
    }
    ret = MPI_T_pvar_session_create(&session);
    CHECK(MPI_SUCCESS == ret, "MPI_T_pvar_session_create returned %d", ret);
    if (MPI_SUCCESS != ret) {
        return;
    }
    counters_ok = 1;
    for (int k = 0 ; k < K_COUNT ; ++k) {
        char name[64], found[256], desc[512];
        int index = -1, name_len = sizeof(found), desc_len = sizeof(desc), verbosity, var_class, bind;
        int readonly, continuous, atomic, count = 0;
        MPI_Datatype type;
        MPI_T_enum enumtype;

        snprintf(name, sizeof(name), "osc_newrma_packets_%s", kind_names[k]);
        ret = MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index);
        CHECK(MPI_SUCCESS == ret, "performance variable %s (class COUNTER) not found (%d)", name, ret);
        if (MPI_SUCCESS != ret) {
            counters_ok = 0;
            continue;
        }
        ret = MPI_T_pvar_get_info(index, found, &name_len, &verbosity, &var_class, &type, &enumtype, desc,
                                  &desc_len, &bind, &readonly, &continuous, &atomic);
        CHECK(MPI_SUCCESS == ret, "MPI_T_pvar_get_info(%s) returned %d", name, ret);
        if (MPI_SUCCESS == ret) {
            CHECK(0 == strcmp(found, name), "index %d of %s is named %s", index, name, found);
            CHECK(MPI_T_PVAR_CLASS_COUNTER == var_class, "%s: class %d", name, var_class);
            CHECK(MPI_UNSIGNED_LONG_LONG == type, "%s: datatype is not MPI_UNSIGNED_LONG_LONG", name);
            CHECK(MPI_T_BIND_NO_OBJECT == bind, "%s: bound to object kind %d", name, bind);
            CHECK(readonly, "%s: not readonly", name);
            CHECK(continuous, "%s: not continuous", name);
        }
        ret = MPI_T_pvar_handle_alloc(session, index, NULL, &handles[k], &count);
        CHECK(MPI_SUCCESS == ret && 1 == count, "MPI_T_pvar_handle_alloc(%s) returned %d, count %d", name, ret,
              count);
        if (MPI_SUCCESS != ret || 1 != count) {
            counters_ok = 0;
        }
    }
}

static void counters_fini(void)
{
    if (MPI_T_PVAR_SESSION_NULL != session) {
        for (int k = 0 ; k < K_COUNT && counters_ok ; ++k) {
            MPI_T_pvar_handle_free(session, &handles[k]);
        }
        MPI_T_pvar_session_free(&session);
    }
    MPI_T_finalize();
}

static void counters_read(counts_t v)
{
    memset(v, 0, sizeof(counts_t));
    for (int k = 0 ; k < K_COUNT && counters_ok ; ++k) {
        int ret = MPI_T_pvar_read(session, handles[k], &v[k]);
        CHECK(MPI_SUCCESS == ret, "MPI_T_pvar_read(%s) returned %d", kind_names[k], ret);
    }
}

/* An MCA parameter of newrma, as an unsigned value (-1 if not found). */
static long long cvar_value(const char *name)
{
    int index, count = 0, ret;
    MPI_T_cvar_handle handle;
    MPI_Datatype type;
    char n[256], desc[512];
    int name_len = sizeof(n), desc_len = sizeof(desc), verbosity, bind, scope;
    MPI_T_enum enumtype;
    long long value = -1;

    if (MPI_SUCCESS != MPI_T_cvar_get_index(name, &index)
        || MPI_SUCCESS != MPI_T_cvar_get_info(index, n, &name_len, &verbosity, &type, &enumtype, desc, &desc_len,
                                              &bind, &scope)
        || MPI_SUCCESS != MPI_T_cvar_handle_alloc(index, NULL, &handle, &count)) {
        return -1;
    }
    if (MPI_UNSIGNED == type || MPI_INT == type) {
        unsigned int v;
        ret = MPI_T_cvar_read(handle, &v);
        value = MPI_SUCCESS == ret ? (long long) v : -1;
    } else if (MPI_UNSIGNED_LONG == type || MPI_LONG == type) {
        unsigned long v;
        ret = MPI_T_cvar_read(handle, &v);
        value = MPI_SUCCESS == ret ? (long long) v : -1;
    } else if (MPI_UNSIGNED_LONG_LONG == type || MPI_LONG_LONG == type) {
        unsigned long long v;
        ret = MPI_T_cvar_read(handle, &v);
        value = MPI_SUCCESS == ret ? (long long) v : -1;
    } else if (MPI_C_BOOL == type) {
        _Bool v = 0;
        ret = MPI_T_cvar_read(handle, &v);
        value = MPI_SUCCESS == ret ? (long long) v : -1;
    }
    MPI_T_cvar_handle_free(&handle);
    return value;
}

/* ---- counted phases ---------------------------------------------------- */

static counts_t before;

static void phase_begin(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    counters_read(before);
    native_before = test_pvar_read(&native_ops);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* This rank's counter deltas since phase_begin. */
static void phase_end(counts_t delta)
{
    counts_t after;

    MPI_Barrier(MPI_COMM_WORLD);
    counters_read(after);
    native_delta = test_pvar_read(&native_ops) - native_before;
    for (int k = 0 ; k < K_COUNT ; ++k) {
        delta[k] = after[k] - before[k];
    }
}

static void format_counts(char *buf, size_t size, const unsigned long long *c)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int k = 0 ; k < K_COUNT && used < size ; ++k) {
        if (0 != c[k]) {
            used += (size_t) snprintf(buf + used, size - used, "%s%s=%llu", used ? " " : "", kind_names[k], c[k]);
        }
    }
    if (0 == used) {
        snprintf(buf, size, "nothing");
    }
}

/* Every kind exactly as expected. */
static void expect_exact(const char *what, const counts_t delta, const counts_t expected)
{
    if (0 != memcmp(delta, expected, sizeof(counts_t))) {
        char got[256], want[256];
        format_counts(got, sizeof(got), delta);
        format_counts(want, sizeof(want), expected);
        CHECK(0, "%s: sent %s, expected %s", what, got, want);
    }
}

/* A phase as expected: on the active-message path the packets `expected`
 * and no native operation; in a native window no packet at all and this
 * rank's `native_n` operations by the native route. */
static void expect_phase(const char *what, const counts_t delta, counts_t expected, unsigned long long native_n)
{
    if (native_window) {
        memset(expected, 0, sizeof(counts_t));
    } else {
        native_n = 0;
    }
    expect_exact(what, delta, expected);
    CHECK(native_delta == native_n, "%s: %llu native operations, expected %llu", what, native_delta, native_n);
}

/* Is the allocate flavor's window native (see the header)?  After scenario
 * 0, whose operations on ourselves counted `self_native` native ones. */
static int window_is_native(unsigned long long self_native)
{
    const char *tls = getenv("UCX_TLS");
    int seen = 0 != self_native;

    if (cvar_value("osc_newrma_native_rma") <= 0) {
        return 0;
    }
    if (NULL != tls) {
        return NULL == strstr(tls, "tcp");
    }
    MPI_Allreduce(MPI_IN_PLACE, &seen, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return seen;
}

static const char *const flavor_label[2] = { "create", "allocate" };

static int64_t value_of(int scenario, int origin, int target, int i)
{
    return ((int64_t) scenario << 40) | ((int64_t) origin << 24) | ((int64_t) target << 16) | (int64_t) (i + 1);
}

/* Own window memory, read under a lock on ourselves (loopback only). */
static int64_t own_elem(MPI_Win win, const int64_t *mem, int index)
{
    int64_t v;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    v = mem[index];
    MPI_OK(MPI_Win_unlock(rank, win));
    return v;
}

/* ---- the scenarios ----------------------------------------------------- */

static void run_flavor(int flavor)
{
    const char *fl = flavor_label[flavor];
    test_win_t tw;
    MPI_Info info;
    int64_t *mem;
    counts_t d, want;
    char what[160];

    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    test_win_create(&tw, FLAVOR_CREATE == flavor ? FLAVOR_CREATE : FLAVOR_ALLOCATE,
                    WIN_ELEMS * sizeof(int64_t), (int) sizeof(int64_t), info, MPI_COMM_WORLD);
    MPI_Info_free(&info);
    mem = tw.mem;

    /* 0: self -- and the initial values of scenario 2, stored under a lock
     * on ourselves.  Nothing counted. */
    phase_begin();
    {
        int64_t one = value_of(0, rank, rank, 0), two = 0, add = 3;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));
        for (int o = 0 ; o < nprocs ; ++o) {
            mem[IDX_S2 + o] = value_of(2, o, rank, 100);
        }
        MPI_OK(MPI_Put(&one, 1, MPI_INT64_T, rank, IDX_S0, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Fetch_and_op(&add, &two, MPI_INT64_T, rank, IDX_S0 + 1, MPI_SUM, tw.win));
        MPI_OK(MPI_Win_unlock(rank, tw.win));
        CHECK(0 == two, "%s scenario 0: fetched %lld from self, expected 0", fl, (long long) two);
        /* no exclusive lock held anywhere when the lock_alls begin: the
         * window protocol's tried lock, refused by another rank's exclusive
         * self-lock, would give back and ask again (more packets) */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_Win_lock_all(0, tw.win));
        MPI_OK(MPI_Put(&one, 1, MPI_INT64_T, rank, IDX_S0 + 2, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_unlock_all(tw.win));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
        CHECK(mem[IDX_S0] == one && mem[IDX_S0 + 1] == 3 && mem[IDX_S0 + 2] == one,
              "%s scenario 0: self data %lld %lld %lld", fl, (long long) mem[IDX_S0], (long long) mem[IDX_S0 + 1],
              (long long) mem[IDX_S0 + 2]);
        MPI_OK(MPI_Win_unlock(rank, tw.win));
    }
    phase_end(d);
    native_window = FLAVOR_CREATE != flavor && window_is_native(native_delta);
    memset(want, 0, sizeof(want));
    if (window_protocol) {
        /* every rank's lock_all locks and unlocks every other rank */
        want[K_LOCK] = want[K_SYNC] = want[K_GRANT] = want[K_ACK] = (unsigned long long) (nprocs - 1);
    }
    snprintf(what, sizeof(what), "%s scenario 0 (operations and locks on self only)", fl);
    expect_phase(what, d, want, 3);

    /* 1: lock(exclusive) + one 8-byte put + unlock: the single-op packet */
    for (int o = 0 ; o < nprocs ; ++o) {
        int t = (o + 1) % nprocs;
        int64_t v = value_of(1, o, t, 0);
        phase_begin();
        if (rank == o) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw.win));
            MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, IDX_S1 + o, 1, MPI_INT64_T, tw.win));
            MPI_OK(MPI_Win_unlock(t, tw.win));
        }
        phase_end(d);
        memset(want, 0, sizeof(want));
        if (rank == o) want[K_PUT] = 1;
        if (rank == t) want[K_ACK] = 1;
        snprintf(what, sizeof(what), "%s scenario 1 (lock+put+unlock %d->%d) as %s", fl, o, t,
                 rank == o ? "origin" : rank == t ? "target" : "bystander");
        expect_phase(what, d, want, rank == o);
        if (rank == t) {
            int64_t got = own_elem(tw.win, mem, IDX_S1 + o);
            CHECK(got == v, "%s scenario 1: put from %d arrived as %lld, expected %lld", fl, o, (long long) got,
                  (long long) v);
        }
    }

    /* 2: lock + fetch_and_op + unlock: one get_acc, one reply carrying the ack */
    for (int o = 0 ; o < nprocs ; ++o) {
        int t = (o + 1) % nprocs;
        int64_t add = 1000 + o, fetched = -1, initial = value_of(2, o, t, 100);
        phase_begin();
        if (rank == o) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
            MPI_OK(MPI_Fetch_and_op(&add, &fetched, MPI_INT64_T, t, IDX_S2 + o, MPI_SUM, tw.win));
            MPI_OK(MPI_Win_unlock(t, tw.win));
            CHECK(fetched == initial, "%s scenario 2: fetched %lld from %d, expected %lld", fl, (long long) fetched,
                  t, (long long) initial);
        }
        phase_end(d);
        memset(want, 0, sizeof(want));
        if (rank == o) want[K_GET_ACC] = 1;
        if (rank == t) want[K_REPLY] = 1;
        snprintf(what, sizeof(what), "%s scenario 2 (lock+fetch_and_op+unlock %d->%d) as %s", fl, o, t,
                 rank == o ? "origin" : rank == t ? "target" : "bystander");
        expect_phase(what, d, want, rank == o);
        if (rank == t) {
            int64_t got = own_elem(tw.win, mem, IDX_S2 + o);
            CHECK(got == initial + add, "%s scenario 2: element is %lld after fetch_and_op from %d, expected %lld",
                  fl, (long long) got, o, (long long) (initial + add));
        }
    }

    /* 3: lock + N puts + unlock: LOCK, GRANT, N puts (UNLOCK on the last), ACK */
    for (int o = 0 ; o < nprocs ; ++o) {
        int t = (o + 1) % nprocs;
        int64_t v[NPUTS];
        for (int i = 0 ; i < NPUTS ; ++i) {
            v[i] = value_of(3, o, t, i);
        }
        phase_begin();
        if (rank == o) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw.win));
            for (int i = 0 ; i < NPUTS ; ++i) {
                MPI_OK(MPI_Put(&v[i], 1, MPI_INT64_T, t, IDX_S3 + o * NPUTS + i, 1, MPI_INT64_T, tw.win));
            }
            MPI_OK(MPI_Win_unlock(t, tw.win));
        }
        phase_end(d);
        memset(want, 0, sizeof(want));
        if (rank == o) {
            want[K_LOCK] = 1;
            want[K_PUT] = NPUTS;
        }
        if (rank == t) {
            want[K_GRANT] = 1;
            want[K_ACK] = 1;
        }
        snprintf(what, sizeof(what), "%s scenario 3 (lock+%d puts+unlock %d->%d) as %s", fl, NPUTS, o, t,
                 rank == o ? "origin" : rank == t ? "target" : "bystander");
        if (!exact_piggyback && rank == o && d[K_SYNC] <= 1) {
            want[K_SYNC] = d[K_SYNC];    /* operations went out early: UNLOCK may travel alone */
        }
        expect_phase(what, d, want, rank == o ? NPUTS : 0);
        if (rank == t) {
            for (int i = 0 ; i < NPUTS ; ++i) {
                int64_t got = own_elem(tw.win, mem, IDX_S3 + o * NPUTS + i);
                CHECK(got == v[i], "%s scenario 3: put %d from %d arrived as %lld, expected %lld", fl, i, o,
                      (long long) got, (long long) v[i]);
            }
        }
    }

    /* 4: lock + unlock with no operation: no packet at all */
    for (int o = 0 ; o < nprocs ; ++o) {
        int t = (o + 1) % nprocs;
        phase_begin();
        if (rank == o) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw.win));
            MPI_OK(MPI_Win_unlock(t, tw.win));
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, tw.win));
            MPI_OK(MPI_Win_flush(t, tw.win));
            MPI_OK(MPI_Win_unlock(t, tw.win));
        }
        phase_end(d);
        memset(want, 0, sizeof(want));
        snprintf(what, sizeof(what), "%s scenario 4 (lock+unlock, lock+flush+unlock %d->%d, no operation)", fl,
                 o, t);
        expect_phase(what, d, want, 0);
    }

    /* 5: lock_all + a put to k of the P ranks + unlock_all: only those k see
     * packets; each is locked by its put (single-op, or LOCK when the lock
     * of ourselves is still held: TRY + GRANT), 1 ack each */
    for (int o = 0 ; o < nprocs ; ++o) {
        int k = nprocs >= 3 ? nprocs - 2 : 1;
        int contacted = 0;
        unsigned long long (*all)[K_COUNT] = malloc((size_t) nprocs * sizeof *all);
        for (int j = 1 ; j <= k ; ++j) {
            contacted |= rank == (o + j) % nprocs;
        }
        phase_begin();
        if (rank == o) {
            MPI_OK(MPI_Win_lock_all(0, tw.win));
            int64_t *w = malloc((size_t) (k + 1) * sizeof *w);   /* each put its own buffer, valid until unlock_all */
            for (int j = 1 ; j <= k ; ++j) {
                int t = (o + j) % nprocs;
                w[j] = value_of(5, o, t, 0);
                MPI_OK(MPI_Put(&w[j], 1, MPI_INT64_T, t, IDX_S5 + o, 1, MPI_INT64_T, tw.win));
            }
            MPI_OK(MPI_Win_unlock_all(tw.win));
            free(w);
        }
        phase_end(d);
        MPI_Allgather(d, K_COUNT, MPI_UNSIGNED_LONG_LONG, all, K_COUNT, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
        snprintf(what, sizeof(what), "%s scenario 5 (lock_all, put to %d of %d ranks from %d) as %s", fl, k,
                 nprocs, o, rank == o ? "origin" : contacted ? "contacted target" : "uncontacted rank");
        memset(want, 0, sizeof(want));
        if (window_protocol) {
            /* exact while the pools hold the k puts until unlock_all; with
             * fewer elements the window issues what is queued and waits for
             * it (a SYNC and its ACK per contacted target), and an UNLOCK
             * may then travel alone: at most one SYNC more each */
            int early = k > op_pools;
            if (rank == o) {
                want[K_LOCK] = (unsigned long long) (nprocs - 1);
                want[K_PUT] = (unsigned long long) k;
                want[K_SYNC] = (unsigned long long) (nprocs - 1 - k);
                if (early && d[K_SYNC] >= want[K_SYNC] && d[K_SYNC] <= (unsigned long long) (nprocs - 1 + k))
                    want[K_SYNC] = d[K_SYNC];
            } else {
                want[K_GRANT] = want[K_ACK] = 1;
                if (early && contacted && d[K_ACK] <= 2) want[K_ACK] = d[K_ACK];
            }
        } else if (rank == o) {
            CHECK(d[K_LOCK] <= (unsigned long long) k, "%s: %llu lock packets for %d targets", what, d[K_LOCK], k);
            want[K_PUT] = (unsigned long long) k;
            want[K_LOCK] = d[K_LOCK] <= (unsigned long long) k ? d[K_LOCK] : 0;
            unsigned long long grants = 0;
            for (int j = 1 ; j <= k ; ++j) {
                grants += all[(o + j) % nprocs][K_GRANT];
            }
            CHECK(grants == d[K_LOCK], "%s: %llu lock packets sent, %llu grants came back", what, d[K_LOCK],
                  grants);
        } else if (contacted) {
            CHECK(d[K_GRANT] <= 1, "%s: %llu grants", what, d[K_GRANT]);
            want[K_ACK] = 1;
            want[K_GRANT] = d[K_GRANT] <= 1 ? d[K_GRANT] : 0;
        }
        expect_phase(what, d, want, rank == o ? (unsigned long long) k : 0);
        if (rank != o) {
            int64_t got = own_elem(tw.win, mem, IDX_S5 + o);
            int64_t exp = contacted ? value_of(5, o, rank, 0) : 0;
            CHECK(got == exp, "%s: element is %lld, expected %lld", what, (long long) got, (long long) exp);
        }
        free(all);
    }

    /* 6: fence epoch, every rank puts to each neighbour: per neighbour one
     * put carrying the FLUSH and one ack back */
    {
        int right = (rank + 1) % nprocs, left = (rank - 1 + nprocs) % nprocs;
        int neighbours = left == right ? 1 : 2;
        int64_t to_right = value_of(6, rank, right, 0), to_left = value_of(6, rank, left, 1);
        phase_begin();
        MPI_OK(MPI_Win_fence(0, tw.win));
        /* at `right` I am the left neighbour: element IDX_S6 */
        MPI_OK(MPI_Put(&to_right, 1, MPI_INT64_T, right, IDX_S6, 1, MPI_INT64_T, tw.win));
        if (2 == neighbours) {
            MPI_OK(MPI_Put(&to_left, 1, MPI_INT64_T, left, IDX_S6 + 1, 1, MPI_INT64_T, tw.win));
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
        phase_end(d);
        memset(want, 0, sizeof(want));
        want[K_PUT] = (unsigned long long) neighbours;
        want[K_ACK] = (unsigned long long) neighbours;
        snprintf(what, sizeof(what), "%s scenario 6 (fence, a put to each of %d neighbours)", fl, neighbours);
        expect_phase(what, d, want, (unsigned long long) neighbours);
        int64_t from_left = own_elem(tw.win, mem, IDX_S6);
        CHECK(from_left == value_of(6, left, rank, 0), "%s scenario 6: element from the left is %lld, expected %lld",
              fl, (long long) from_left, (long long) value_of(6, left, rank, 0));
        if (2 == neighbours) {
            int64_t from_right = own_elem(tw.win, mem, IDX_S6 + 1);
            CHECK(from_right == value_of(6, right, rank, 1),
                  "%s scenario 6: element from the right is %lld, expected %lld", fl, (long long) from_right,
                  (long long) value_of(6, right, rank, 1));
        }
    }
    test_win_free(&tw);

    /* 7: no same_size/same_disp_unit: the origin asks the target's size
     * once (INFO, INFO_REPLY), then uses its cache */
    test_win_create(&tw, FLAVOR_CREATE == flavor ? FLAVOR_CREATE : FLAVOR_ALLOCATE,
                    WIN_ELEMS * sizeof(int64_t), (int) sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    mem = tw.mem;
    for (int o = 0 ; o < nprocs ; ++o) {
        int t = (o + 1) % nprocs;
        for (int epoch = 0 ; epoch < 2 ; ++epoch) {
            int64_t v = value_of(7, o, t, epoch);
            phase_begin();
            if (rank == o) {
                MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, tw.win));
                MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, t, IDX_S7 + 2 * o + epoch, 1, MPI_INT64_T, tw.win));
                MPI_OK(MPI_Win_unlock(t, tw.win));
            }
            phase_end(d);
            memset(want, 0, sizeof(want));
            if (rank == o) {
                want[K_PUT] = 1;
                want[K_INFO] = 0 == epoch;
            }
            if (rank == t) {
                want[K_ACK] = 1;
                want[K_INFO_REPLY] = 0 == epoch;
            }
            snprintf(what, sizeof(what), "%s scenario 7 (no size info keys, epoch %d %d->%d) as %s", fl, epoch, o,
                     t, rank == o ? "origin" : rank == t ? "target" : "bystander");
            expect_phase(what, d, want, rank == o);
            if (rank == t) {
                int64_t got = own_elem(tw.win, mem, IDX_S7 + 2 * o + epoch);
                CHECK(got == v, "%s: put arrived as %lld, expected %lld", what, (long long) got, (long long) v);
            }
        }
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    counters_init();
    test_pvar_open(&native_ops, "osc_newrma_route_native_ops");
    CHECK(native_ops.ok, "no MPI_T counter osc_newrma_route_native_ops");
    {
        long long threshold = cvar_value("osc_newrma_piggyback_threshold");
        long long pool = cvar_value("osc_newrma_op_pool_local");
        op_pools = pool + cvar_value("osc_newrma_op_pool_global");
        long long targets = cvar_value("osc_newrma_target_pool_local") + cvar_value("osc_newrma_target_pool_global");
        exact_piggyback = threshold >= NPUTS && pool > NPUTS;
        window_protocol = targets < nprocs;
        if (0 == rank) {
            printf("piggyback_threshold %lld, op_pool_local %lld: scenario 3 %s\n", threshold, pool,
                   exact_piggyback ? "exact" : "with a bound on sync");
            printf("target elements %lld for %d ranks: lock_all's %s protocol\n", targets, nprocs,
                   window_protocol ? "window" : "per-target");
        }
    }
    if (counters_ok && nprocs >= 2) {
        /* over the node's FIFOs (osc_newrma_force_am, am_packet_counts_fifo.c)
         * only create windows take the active-message path: allocate
         * windows are served by load/store and send no packet */
        int flavors = cvar_value("osc_newrma_force_remote") > 0 ? 2 : 1;
        for (int flavor = 0 ; flavor < flavors ; ++flavor) {
            run_flavor(flavor);
        }
    }
    CHECK(nprocs >= 2, "run with 2 processes or more, not %d", nprocs);
    test_pvar_close(&native_ops);
    counters_fini();
    return test_finalize("am_packet_counts");
}
