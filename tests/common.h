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
 * Helpers shared by newrma's tests.  Each test is an MPI program that checks
 * exact values and error codes, prints one line per failed check, and exits
 * non-zero (through MPI_Abort-free reduction) if any rank saw a failure.
 */
#ifndef NEWRMA_TEST_COMMON_H
#define NEWRMA_TEST_COMMON_H

#include <mpi.h>
#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_errors = 0;
static int test_rank = -1;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            /* atomic: threads of MPI_THREAD_MULTIPLE tests check too */       \
            if (__atomic_add_fetch(&test_errors, 1, __ATOMIC_RELAXED) <= 20) {  \
                fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", test_rank, \
                        __FILE__, __LINE__, #cond);                             \
                fprintf(stderr, __VA_ARGS__);                                   \
                fprintf(stderr, "\n");                                          \
            }                                                                   \
        }                                                                       \
    } while (0)

/* An MPI call that must succeed. */
#define MPI_OK(call)                                                            \
    do {                                                                        \
        int rc_ = (call);                                                       \
        if (MPI_SUCCESS != rc_) {                                               \
            char msg_[MPI_MAX_ERROR_STRING];                                    \
            int len_ = 0;                                                       \
            MPI_Error_string(rc_, msg_, &len_);                                 \
            CHECK(MPI_SUCCESS == rc_, "%s returned %s", #call, msg_);           \
        }                                                                       \
    } while (0)

/* An MPI call that must fail with a given error class. */
#define MPI_FAILS_WITH(expected_class, call)                                    \
    do {                                                                        \
        int rc_ = (call), class_ = MPI_SUCCESS;                                 \
        MPI_Error_class(rc_, &class_);                                          \
        CHECK(class_ == (expected_class), "%s returned class %d, expected %s (%d)", \
              #call, class_, #expected_class, (expected_class));                \
    } while (0)

static inline void test_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE.  Without it there is
 * nothing to test: a check fails (not a pass) and the caller returns
 * test_finalize at once. */
static inline int test_init_multiple(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &test_rank);
    CHECK(provided >= MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    return provided >= MPI_THREAD_MULTIPLE;
}

/* After a window creation that had to fail: a small window created (by the
 * caller) in the same place works -- a put to the right neighbour and a
 * get back in fence epochs -- and is freed. */
static inline void test_window_goes_on(MPI_Win win, int rank, int size)
{
    if (MPI_WIN_NULL != win) {
        int64_t v = 77 + rank, got = -1;
        int right = (rank + 1) % size;
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, 5, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, 5, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        CHECK(got == v, "after the failure: got %lld, expected %lld", (long long) got, (long long) v);
        MPI_OK(MPI_Win_free(&win));
    }
}

/* Collective: every rank learns whether any rank failed; rank 0 reports. */
static inline int test_finalize(const char *name)
{
    int all_errors = 0;
    MPI_Allreduce(&test_errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == test_rank) {
        if (0 == all_errors) {
            printf("%s: No Errors\n", name);
        } else {
            printf("%s: %d errors\n", name, all_errors);
        }
    }
    MPI_Finalize();
    return all_errors ? 1 : 0;
}

/* An MCA parameter of newrma through MPI_T (0 if there is no such
 * variable), read into 64 bits: a size_t variable fills them, an int or a
 * boolean the low half (x86-64 and aarch64 are little-endian).  The caller
 * has called MPI_T_init_thread. */
static inline unsigned long long test_cvar_u64(const char *name)
{
    int index, count;
    unsigned long long value = 0;
    MPI_T_cvar_handle handle;
    if (MPI_SUCCESS != MPI_T_cvar_get_index(name, &index)) return 0;
    MPI_T_cvar_handle_alloc(index, NULL, &handle, &count);
    MPI_T_cvar_read(handle, &value);
    MPI_T_cvar_handle_free(&handle);
    return value;
}

static inline int test_cvar_int(const char *name)
{
    return (int) test_cvar_u64(name);
}

/* A counter performance variable of newrma, kept open: Open MPI's counter
 * handles read what was counted since the handle was made, so one handle
 * serves a test's before/after reads.  test_pvar_read gives 0 if the
 * variable does not exist.  The caller has called MPI_T_init_thread. */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    int ok;
} test_pvar_t;

static inline void test_pvar_open(test_pvar_t *pv, const char *name)
{
    int index, count;
    pv->ok = MPI_SUCCESS == MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index)
             && MPI_SUCCESS == MPI_T_pvar_session_create(&pv->session);
    if (pv->ok && MPI_SUCCESS != MPI_T_pvar_handle_alloc(pv->session, index, NULL, &pv->handle, &count)) {
        MPI_T_pvar_session_free(&pv->session);
        pv->ok = 0;
    }
}

static inline unsigned long long test_pvar_read(test_pvar_t *pv)
{
    unsigned long long value = 0;
    if (pv->ok) MPI_T_pvar_read(pv->session, pv->handle, &value);
    return value;
}

static inline void test_pvar_close(test_pvar_t *pv)
{
    if (pv->ok) {
        MPI_T_pvar_handle_free(pv->session, &pv->handle);
        MPI_T_pvar_session_free(&pv->session);
    }
}

/* Collective over MPI_COMM_WORLD: the counter's increase since `before`
 * (a test_pvar_read of this handle), summed over every rank; closes it. */
static inline unsigned long long test_pvar_close_total(test_pvar_t *pv, unsigned long long before)
{
    unsigned long long mine = test_pvar_read(pv) - before, total = 0;
    test_pvar_close(pv);
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* ---- window flavors ---------------------------------------------------- */

enum { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_SHARED, FLAVOR_DYNAMIC, FLAVOR_COUNT };

/* Each rank's node as newrma sees it (collective over MPI_COMM_WORLD): its
 * real node (named by its lowest rank r, as r * size), or, with pretend > 0,
 * the pretend nodes of `pretend` consecutive ranks of it that
 * osc_newrma_fifo_node_ranks makes (r * size + local rank / pretend).  The
 * caller frees the array. */
static inline int *test_node_of(int pretend)
{
    MPI_Comm shared;
    int rank, size, local, leader, mine, *node_of;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    MPI_Comm_rank(shared, &local);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared);
    MPI_Comm_free(&shared);
    mine = leader * size + (pretend > 0 ? local / pretend : 0);
    node_of = malloc(sizeof(int) * (size_t) size);
    MPI_Allgather(&mine, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    return node_of;
}

/* Whether MPI_COMM_WORLD spans several nodes (tests/run.sh's node modes).
 * Open MPI's launcher tells each rank how many of the job's ranks share its
 * node: fewer than all on one rank means more than one node, and then every
 * rank sees fewer -- so every rank answers the same without communicating. */
static inline int test_world_spans_nodes(void)
{
    static int spans = -1;
    if (spans < 0) {
        const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        spans = NULL != local && atoi(local) < size;
    }
    return spans;
}

/* Whether a window of `flavor` takes newrma's active-message path in this
 * run, for a window on MPI_COMM_WORLD: with osc_newrma_force_remote, or
 * when the world spans nodes (a window with a peer off its node works by
 * active messages), every flavor but allocate_shared; with
 * osc_newrma_force_am create and dynamic (0 with another component, which
 * has no such variables).  Initializes MPI_T on first use. */
static inline int test_am_path(int flavor)
{
    static int remote = -1, force_am = -1;
    if (remote < 0) {
        int provided;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        /* pretend nodes (osc_newrma_fifo_node_ranks) span nodes too */
        remote = test_cvar_int("osc_newrma_force_remote") || test_cvar_int("osc_newrma_fifo_node_ranks") > 0;
        force_am = test_cvar_int("osc_newrma_force_am");
    }
    if (remote || test_world_spans_nodes()) return FLAVOR_SHARED != flavor;
    return force_am && (FLAVOR_CREATE == flavor || FLAVOR_DYNAMIC == flavor);
}

/* The flavor after `flavor` in a loop over the flavors of windows on
 * MPI_COMM_WORLD: allocate_shared is left out when the world spans nodes,
 * where it cannot exist (newrma declines it with its reason:
 * tests/shared_spans_nodes.sh). */
static inline int test_next_flavor(int flavor)
{
    ++flavor;
    if (FLAVOR_SHARED == flavor && test_world_spans_nodes()) ++flavor;
    return flavor;
}

static const char *const flavor_names[FLAVOR_COUNT] = { "create", "allocate", "shared", "dynamic" };

/* A window of `bytes` bytes per rank of any flavor.  For dynamic windows the
 * memory is attached and `*disp_base` is the address targets use as
 * displacement 0 (gathered from every rank into `*bases`, caller frees).
 * For the others *bases is NULL and displacements start at 0. */
typedef struct {
    MPI_Win win;
    int flavor;
    void *mem;            /* this rank's window memory */
    MPI_Aint *bases;      /* dynamic: every rank's base address */
    void *owned;          /* memory to free after MPI_Win_free */
    MPI_Comm comm;
} test_win_t;

static inline void test_win_create(test_win_t *tw, int flavor, size_t bytes, int disp_unit,
                                   MPI_Info info, MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    memset(tw, 0, sizeof(*tw));
    tw->flavor = flavor;
    tw->comm = comm;
    switch (flavor) {
    case FLAVOR_CREATE:
        tw->owned = tw->mem = calloc(1, bytes ? bytes : 1);
        MPI_OK(MPI_Win_create(tw->mem, (MPI_Aint) bytes, disp_unit, info, comm, &tw->win));
        break;
    case FLAVOR_ALLOCATE:
        MPI_OK(MPI_Win_allocate((MPI_Aint) bytes, disp_unit, info, comm, &tw->mem, &tw->win));
        if (bytes) memset(tw->mem, 0, bytes);
        break;
    case FLAVOR_SHARED:
        MPI_OK(MPI_Win_allocate_shared((MPI_Aint) bytes, disp_unit, info, comm, &tw->mem, &tw->win));
        if (bytes) memset(tw->mem, 0, bytes);
        break;
    case FLAVOR_DYNAMIC: {
        MPI_Aint mine;
        tw->owned = tw->mem = calloc(1, bytes ? bytes : 1);
        MPI_OK(MPI_Win_create_dynamic(info, comm, &tw->win));
        MPI_OK(MPI_Win_attach(tw->win, tw->mem, (MPI_Aint) bytes));
        MPI_Get_address(tw->mem, &mine);
        tw->bases = malloc(sizeof(MPI_Aint) * (size_t) size);
        MPI_Allgather(&mine, 1, MPI_AINT, tw->bases, 1, MPI_AINT, comm);
        break;
    }
    }
    /* everyone's memory is initialized before anyone accesses it: a fence
     * that neither ends nor opens an epoch (an RMA-aware barrier; a plain
     * barrier orders the processes but not this process's stores before a
     * progress thread that applies other ranks' operations to its memory --
     * ThreadSanitizer reported the memset above racing with it) */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
}

/* Displacement of element `index` (in disp units) at `target`. */
static inline MPI_Aint test_disp(const test_win_t *tw, int target, MPI_Aint index, int disp_unit)
{
    if (FLAVOR_DYNAMIC == tw->flavor) {
        return tw->bases[target] + index * disp_unit;
    }
    return index;
}

/* Whether newrma serves `win`: its windows publish the info key
 * "osc_newrma_notify" (notified RMA's entry point, docs/notified-rma.md). */
static inline int test_served_by_newrma(MPI_Win win)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int newrma = 0;
    MPI_Info info;
    MPI_OK(MPI_Win_get_info(win, &info));
#if MPI_VERSION >= 4
    int length = (int) sizeof(value);
    MPI_OK(MPI_Info_get_string(info, "osc_newrma_notify", &length, value, &newrma));
#else
    MPI_OK(MPI_Info_get(info, "osc_newrma_notify", MPI_MAX_INFO_VAL, value, &newrma));
#endif
    MPI_Info_free(&info);
    return newrma;
}

static inline void test_win_free(test_win_t *tw)
{
    /* nobody may still be accessing our memory when it is detached (a
     * passive-target epoch elsewhere may outlast ours) */
    MPI_Barrier(tw->comm);
    if (FLAVOR_DYNAMIC == tw->flavor) {
        MPI_OK(MPI_Win_detach(tw->win, tw->mem));
    }
    MPI_OK(MPI_Win_free(&tw->win));
    free(tw->owned);
    free(tw->bases);
}

/* ---- small helpers ------------------------------------------------------- */

#include <time.h>

/* work outside MPI for about `us` microseconds (a target that computes) */
static inline void test_compute_us(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double) (t.tv_sec - t0.tv_sec) * 1e6 + (double) (t.tv_nsec - t0.tv_nsec) * 1e-3 < us);
}

/* End an exposure epoch by MPI_Win_wait, or by MPI_Win_test until true. */
static inline void test_wait_or_test(MPI_Win win, int by_test)
{
    int flag = 0;
    if (!by_test) {
        MPI_OK(MPI_Win_wait(win));
        return;
    }
    while (!flag) {
        MPI_OK(MPI_Win_test(win, &flag));
    }
}

/* qsort order of int64_t (checks that fetched counter values are distinct) */
static inline int test_cmp_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *) x, b = *(const int64_t *) y;
    return (a > b) - (a < b);
}

/* CLOCK_MONOTONIC in seconds: how long a test retries something the
 * scheduler decides (never what it checks) */
static inline double test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* ---- target assistance ------------------------------------------------- */

#include <unistd.h>

/* Whether newrma's target assistance should be seen at work on a window of
 * `flavor` among `size` ranks: on (osc_newrma_assist_timeout), the
 * single-copy path (not active messages), and a core per rank -- with more
 * ranks than cores newrma does not assist unless the assist tests ask for
 * it anyway (osc_newrma_assist_oversubscribed, to run the mailbox with
 * several origins), and then the target may be off its core for whole time
 * slices, and origins rightly stop asking it. */
static inline int test_assist_expected(int flavor, int size)
{
    return test_cvar_int("osc_newrma_assist_timeout") > 0 && size <= sysconf(_SC_NPROCESSORS_ONLN)
           && !test_am_path(flavor);
}

/* The groups of a test whose rank 0 is the target of every other rank:
 * the origins (all but 0) and the target (0). */
static inline void test_target0_groups(MPI_Group *origins, MPI_Group *target)
{
    MPI_Group world;
    int zero = 0;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &zero, origins);
    MPI_Group_incl(world, 1, &zero, target);
    MPI_Group_free(&world);
}

/* Rank 0 computes outside MPI (no progress: it serves no mailbox) until
 * every other rank, one after another (barriers on `origins`), has done
 * `work(tw, origin, round)` -- an exclusive-lock epoch to rank 0, say --
 * and then added 1 to rank 0's int counter at byte `counter_at` of its
 * window (8-aligned, outside what the work writes; reset to 0 here). */
static inline void test_target0_computing(test_win_t *tw, MPI_Aint counter_at, MPI_Comm origins,
                                          void (*work)(test_win_t *tw, int origin, int round), int round,
                                          const char *flavor)
{
    volatile int *done = (volatile int *) ((unsigned char *) tw->mem + counter_at);
    int size;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (0 == test_rank) *done = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while (*done < size - 1 && t.tv_sec - t0.tv_sec < 60);
        CHECK(*done == size - 1, "%s: %d of %d origins done without the target's progress", flavor, *done, size - 1);
        return;
    }
    for (int o = 1 ; o < size ; ++o) {
        if (o == test_rank) {
            const int one = 1;
            work(tw, o, round);
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, test_disp(tw, 0, counter_at, 1), 1, MPI_INT, MPI_SUM,
                                  tw->win));
            MPI_OK(MPI_Win_unlock(0, tw->win));
        }
        MPI_Barrier(origins);
    }
}

/* Rounds round0.. of a phase that runs inside fence epochs, between an
 * opening (NOPRECEDE) and a closing (NOSUCCEED) fence. */
typedef void (*test_fence_phase_fn)(test_win_t *tw, unsigned char *buf, unsigned char *got, int size, int round,
                                    const char *flavor);
static inline void test_fence_rounds(test_win_t *tw, test_fence_phase_fn phase, unsigned char *buf,
                                     unsigned char *got, int size, int round0, int rounds, const char *flavor)
{
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw->win));
    for (int round = round0 ; round < round0 + rounds ; ++round) phase(tw, buf, got, size, round, flavor);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
}

/* The end of a target-assistance test's run: the window, the origins'
 * communicator, the counter and two buffers released. */
static inline void test_assist_cleanup(test_win_t *tw, MPI_Comm *others, test_pvar_t *pv, void *buf, void *got)
{
    test_win_free(tw);
    MPI_Comm_free(others);
    test_pvar_close(pv);
    free(buf);
    free(got);
}

/* main() of a target-assistance test: MPI_T up, then run(flavor, size,
 * expected) on create and dynamic windows when there are 2 ranks or more
 * (expected: test_assist_expected). */
static inline int test_assist_main(int *argc, char ***argv, const char *name,
                                   void (*run)(int flavor, int size, int expected))
{
    int size, provided;
    test_init(argc, argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (size >= 2) {
        run(FLAVOR_CREATE, size, test_assist_expected(FLAVOR_CREATE, size));
        run(FLAVOR_DYNAMIC, size, test_assist_expected(FLAVOR_DYNAMIC, size));
    }
    MPI_T_finalize();
    return test_finalize(name);
}

/* ---- resource checks for soaks ------------------------------------------ */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#define TEST_SHM_PREFIX "osc_newrma"

/* A "Field:  N kB" line of /proc/self/status (VmRSS, VmHWM ...), or -1. */
static inline long test_status_kb(const char *field)
{
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");
    if (NULL == f) return -1;
    while (fgets(line, sizeof(line), f))
        if (0 == strncmp(line, field, n) && ':' == line[n]) {
            kb = atol(line + n + 1);
            break;
        }
    fclose(f);
    return kb;
}

/* Whether resident memory can show a leak: not under AddressSanitizer,
 * whose quarantine keeps freed memory (contrib/sanitized-tests.sh sets
 * NEWRMA_TEST_RSS_UNRELIABLE; the sanitizer's own reports count there). */
static inline int test_rss_meaningful(void)
{
    const int meaningful = NULL == getenv("NEWRMA_TEST_RSS_UNRELIABLE");
    if (!meaningful && 0 == test_rank) {
        printf("note: resident-memory growth not judged (NEWRMA_TEST_RSS_UNRELIABLE)\n");
    }
    return meaningful;
}

/* Collective: the pid of every process of MPI_COMM_WORLD, on every rank
 * (caller frees). */
static inline int *test_job_pids(void)
{
    int size, pid = (int) getpid();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *pids = malloc(sizeof(int) * (size_t) size);
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    return pids;
}

/* The creator's pid in "osc_newrma.<host>.<pid>.<counter>", or -1. */
static inline long test_shm_name_pid(const char *name)
{
    const char *last = strrchr(name, '.'), *p;
    if (NULL == last || last == name) return -1;
    for (p = last - 1; p > name && '.' != *p; --p) {}
    if ('.' != *p) return -1;
    char *end;
    long pid = strtol(p + 1, &end, 10);
    return (end == last && pid > 0) ? pid : -1;
}

/* Files in /dev/shm named osc_newrma* that this job (pids[0..npids)) left or
 * that belong to no live process; each is a failed check.  Files of other
 * jobs running at the same time (a live creator outside this job) are not
 * counted: the machine may be shared.  Call it on one rank. */
static inline int test_scan_dev_shm(const char *when, const int *pids, int npids)
{
    DIR *d;
    struct dirent *e;
    int bad = 0;

    d = opendir("/dev/shm");
    if (NULL == d) {
        CHECK(0, "%s: cannot open /dev/shm: %s", when, strerror(errno));
        return 1;
    }
    while (NULL != (e = readdir(d))) {
        if (0 != strncmp(e->d_name, TEST_SHM_PREFIX, strlen(TEST_SHM_PREFIX))) continue;
        long pid = test_shm_name_pid(e->d_name);
        int ours = 0;
        for (int r = 0; r < npids; ++r) ours |= (pid == pids[r]);
        if (!ours && pid > 0 && (0 == kill((pid_t) pid, 0) || EPERM == errno)) {
            continue;   /* a live process of another job */
        }
        ++bad;
        CHECK(0, "%s: /dev/shm/%s exists (%s)", when, e->d_name,
              ours ? "created by this job" : pid > 0 ? "its creator is gone: a stale file" : "unknown creator");
    }
    closedir(d);
    return bad;
}

/* An x87 long double (64-bit mantissa) has 10 significant bytes in its 16;
 * no store writes the other 6, so a generated value would hand MPI (and
 * valgrind: contrib/valgrind-tests.sh) uninitialised bytes.  Tests that
 * generate values of a real type of real_size bytes in buffer p call this
 * after the value is there (a memset before the assignment is not enough:
 * the compiler treats a long double store as writing all 16 bytes). */
static inline void clear_ldouble_padding(void *p, size_t real_size)
{
    if (real_size == sizeof(long double) && 64 == LDBL_MANT_DIG && sizeof(long double) > 10)
        memset((char *) p + 10, 0, sizeof(long double) - 10);
}

#endif
