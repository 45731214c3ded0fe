/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: target-assisted accumulates on windows of user memory.
 *
 * On the single-copy path an accumulate, fetch_and_op or compare_and_swap
 * costs the origin two system calls under the stripe lock (read, combine,
 * write back: about 1.3 us), where a target that is inside MPI anyway --
 * waiting in a barrier, a receive, a fence, MPI_Win_wait -- could apply it
 * in place in a fraction of that.  So each rank block of such a window has
 * a mailbox line and a presence line (docs/shared-segment.md):
 *
 *  - the target stamps its presence line (CLOCK_MONOTONIC) from newrma's
 *    progress callback (osc_newrma_progress.c), at most once a microsecond;
 *  - an origin whose target stamped within NEWRMA_ASSIST_FRESH_NS claims the
 *    mailbox (compare-and-swap FREE -> CLAIMED with the next sequence
 *    number), writes the request and posts it, then waits up to
 *    osc_newrma_assist_timeout us for the target to take it;
 *  - the target, in progress, sees POSTED, takes the element's accumulate
 *    stripe with a try (the same stripes the single-copy path locks, so the
 *    two exclude each other as MPI's atomicity requires), takes the request
 *    (POSTED -> TAKEN), applies it to its own memory, gives the stripe back
 *    and answers (old values in the payload, DONE);
 *  - an origin that was not answered in time withdraws (POSTED -> FREE): one
 *    of the two compare-and-swaps wins, so a request is applied exactly once
 *    -- by the target, or after the withdrawal by the origin itself over the
 *    single-copy path.  The origin remembers the stamp that did not answer
 *    and does not try that target again until it stamps anew.
 *
 * Passive targets stay passive: a target computing outside MPI has a stale
 * stamp, and its origins go straight to single-copy (one extra load and a
 * clock reading).  Nothing waits on the target for long, progress never
 * waits at all, and an operation is still complete when the call returns.
 * The sequence number in the state word is what makes the target's
 * compare-and-swap safe: it copied the request before taking it, and a
 * request withdrawn and replaced meanwhile has another sequence.
 */

#include "ompi_config.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/op/op.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_single_copy.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_relay.h"
#include "opal/runtime/opal_progress.h"

/* A stamp older than this means the target is computing, not in MPI. */
#define NEWRMA_ASSIST_FRESH_NS 50000
/* The target rewrites its stamp at most this often (the line is read by
 * every origin deciding whether to ask: rewriting it costs them a miss). */
#define NEWRMA_ASSIST_STAMP_NS 1000
/* spins between clock readings while waiting for the target */
#define NEWRMA_ASSIST_CLOCK_SPINS 64
/* the largest payload: one line's worth, and aligned local copies of it */
#define NEWRMA_ASSIST_MAX_PAYLOAD 64
/* The hardware line.  Open MPI's cache line (opal_cache_line_size, the
 * segment's spacing) is 128 bytes by default -- lines move in adjacent
 * pairs for the prefetcher -- so a full payload spans two hardware lines
 * and a request moves both each way.  For an accumulate that still beats
 * the two system calls of doing it ourselves (64 B: 0.58 against 0.96 us);
 * a put or get replaces one system call only and does not (64 B: 0.55-0.70
 * against 0.45 us), so those are handed over only within this line. */
#define NEWRMA_ASSIST_HW_LINE 64

/* A shared copy's payload (osc_newrma_assist_share): where the origin's
 * bytes are, how many, in what chunks; the offset of the next chunk to
 * take (both processes take chunks with a fetch-and-add, so whoever is
 * faster -- or alone -- copies more); the offset of a chunk the target
 * failed to copy.  40 bytes: the mailbox's first hardware line. */
typedef struct {
    uint64_t origin_addr;
    uint64_t bytes;
    uint64_t chunk;
    volatile uint64_t next;
    volatile uint64_t failed;
} assist_share_t;
#define NEWRMA_SHARE_NONE UINT64_MAX
/* A shared get_accumulate's payload: the same, and where the origin wants
 * the old values (each process writes those of the chunks it takes).  Past
 * the first hardware line: only where the mailbox holds it (a 128-byte
 * cache line; not with 64). */
typedef struct {
    assist_share_t head;
    uint64_t result_addr;
} assist_share_result_t;
/* Chunks are a fraction of the copy (share_policy_t), whole pages, at least
 * this much: a system call per chunk stays small against its copy, and the
 * last chunk one process waits for is short. */
#define NEWRMA_SHARE_MIN_CHUNK (32 * 1024)
/* A target reduces a shared accumulate's chunk through a buffer of at most
 * this much (read from the origin, combined in place): it stays in the
 * cache between the two. */
#define NEWRMA_SHARE_REDUCE_BUFFER (256 * 1024)

/* When copies are shared (from `bytes` on) and in how many chunks.
 *
 * Where memory bandwidth bounds a single-copy system call (the Intel VM of
 * 2026-11-25: a 256 KiB process_vm_readv at about memcpy's 35 GB/s),
 * sharing lost below 1 MiB (the parameter's default), and sixteenths kept
 * the wait for the other process's last chunk short
 * (docs/results/share-threshold-2026-11-25.txt).
 * Where the kernel's per-page work bounds it (it copies at less than half
 * memcpy's speed), two processes copying at once nearly double it and each
 * chunk's system call is dear: the AMD EPYC VM of 2026-11-26 copied at 0.25
 * of memcpy (14 against 56 GB/s), and sharing from 64 KiB in quarters took
 * create windows' put bandwidth at 64 KiB from 10.7 to 17.0 GB/s and at
 * 256 KiB from 12.9 to 20.0 (sixteenths: 15.7; halves: 23.5, but a target
 * that joins late then holds the origin for half the copy)
 * (docs/results/share-threshold-2026-11-26.txt). */
typedef struct {
    size_t from_bytes;
    unsigned int parts;
    size_t relay_from;       /* relays from this size (SIZE_MAX: none) */
    size_t relay_batch_from; /* a batch of puts or gets relayed from this size ... */
    unsigned int relay_batch_pieces; /* ... or this many pieces */
} share_policy_t;

#define NEWRMA_SHARE_PROBE_BYTES (256 * 1024)
#define NEWRMA_SHARE_CPU_BOUND_SPEED 0.5
/* With more ranks than cores (Open MPI yields when idle) targets are not
 * asked for small operations (osc_newrma_assist_init): the target is often
 * off its core, and a hand-over costs a context switch or two, about 3 us
 * at 4 ranks on 2 cores (AMD VM).  Relays still pay where the system call
 * costs more: an accumulate from 32 KiB (two calls under the lock: 64 KiB
 * 11.2 -> 6.3 us relayed), a batch of puts or gets from 128 KiB (the call
 * copies at 12 GB/s there; a single 64 KiB put + flush took 5.2 us by it,
 * 5.8-6.2 relayed) or of 16 pieces (the kernel's work per piece: 64 puts of
 * 1 KiB at 2.5 GB/s by one call, 4.5 relayed). */
#define NEWRMA_RELAY_UNATTENDED_BYTES (32 * 1024)
#define NEWRMA_RELAY_UNATTENDED_BATCH_BYTES (128 * 1024)
#define NEWRMA_RELAY_UNATTENDED_BATCH_PIECES 16

/* Are targets asked for small operations on this node?  Not with more
 * ranks than cores (Open MPI then yields when idle), unless
 * osc_newrma_assist_oversubscribed says so (osc_newrma_assist_init). */
static bool targets_attended(void)
{
    return !opal_progress_yield_when_idle || mca_osc_newrma_component.assist_oversubscribed;
}

/* The best of a few: the first calls fault the pages in, and a preemption
 * only ever makes a copy slower. */
#define NEWRMA_SHARE_PROBE_TRIES 5

/* How fast a process_vm_readv of `bytes` (on ourselves) copies, as a
 * fraction of memcpy's speed: about 1 where memory bandwidth bounds both,
 * far below where the kernel's per-page work bounds the system call.  A
 * negative value: not measured (no memory, or the call failed). */
static double single_copy_speed(size_t bytes)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    uint64_t best_cma = UINT64_MAX, best_memcpy = UINT64_MAX;
    double speed = -1.0;

    if (NULL == src || NULL == dst) {
        goto cleanup;
    }
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    for (int i = 0 ; i < NEWRMA_SHARE_PROBE_TRIES ; ++i) {
        uint64_t t0 = osc_newrma_clock_ns(), t1, t2;
        if (OMPI_SUCCESS != osc_newrma_single_copy(getpid(), dst, (uint64_t) (uintptr_t) src, bytes, false)) {
            goto cleanup;
        }
        t1 = osc_newrma_clock_ns();
        memcpy(dst, src, bytes);
        __asm__ __volatile__("" : : "r"(dst) : "memory");   /* the copy is used */
        t2 = osc_newrma_clock_ns();
        best_cma = t1 - t0 < best_cma ? t1 - t0 : best_cma;
        best_memcpy = t2 - t1 < best_memcpy ? t2 - t1 : best_memcpy;
    }
    speed = 0 == best_cma ? 1.0 : (double) best_memcpy / (double) best_cma;
cleanup:
    free(src);
    free(dst);
    return speed;
}

/* Was MCA variable `var` left at its default? */
static bool var_is_default(int var)
{
    mca_base_var_source_t source = MCA_BASE_VAR_SOURCE_DEFAULT;

    return OPAL_SUCCESS == mca_base_var_get_value(var, NULL, &source, NULL) && MCA_BASE_VAR_SOURCE_DEFAULT == source;
}

/* osc_newrma_assist_share_bytes and osc_newrma_relay_bytes as set, or,
 * left at their defaults, as this machine's single-copy speed says
 * (measured once per process: 0.1 ms).  A relay pays where the system call
 * is slow (two memcpys at cache speed against it); elsewhere it costs a
 * hand-over and a second copy for nothing. */
static share_policy_t share_policy_choose(void)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    share_policy_t policy = { .from_bytes = c->assist_share_bytes, .parts = 16,
                              .relay_from = 0 == c->relay_bytes ? SIZE_MAX : c->relay_bytes };
    bool share_auto = var_is_default(c->assist_share_bytes_var), relay_auto = var_is_default(c->relay_bytes_var);
    bool kernel_bound;
    double speed;

    if (!share_auto && !relay_auto) {
        return policy;
    }
    speed = single_copy_speed(NEWRMA_SHARE_PROBE_BYTES);
    kernel_bound = speed >= 0.0 && speed < NEWRMA_SHARE_CPU_BOUND_SPEED;
    if (share_auto && kernel_bound) {
        policy.from_bytes = 2 * NEWRMA_SHARE_MIN_CHUNK;
        policy.parts = 4;
    }
    if (relay_auto && !kernel_bound) {
        policy.relay_from = SIZE_MAX;
    } else if (relay_auto && !targets_attended()) {
        policy.relay_from = policy.relay_from > NEWRMA_RELAY_UNATTENDED_BYTES ? policy.relay_from
                                                                              : NEWRMA_RELAY_UNATTENDED_BYTES;
        policy.relay_batch_from = NEWRMA_RELAY_UNATTENDED_BATCH_BYTES;
        policy.relay_batch_pieces = NEWRMA_RELAY_UNATTENDED_BATCH_PIECES;
    }
    NEWRMA_VERBOSE(10, "single copy at %.2f of memcpy's speed (256 KiB): shared copies from %zu bytes, in %u parts; "
                   "relays from %zu bytes (batches from %zu bytes or %u pieces)", speed, policy.from_bytes,
                   policy.parts, policy.relay_from, policy.relay_batch_from, policy.relay_batch_pieces);
    return policy;
}

static share_policy_t share_policy(void)
{
    static share_policy_t chosen;
    static volatile int32_t is_chosen = 0;

    if (!__atomic_load_n(&is_chosen, __ATOMIC_ACQUIRE)) {
        /* threads creating windows at once may both measure: either answer
         * does (the component's lock: windows are rarely created at once) */
        share_policy_t policy = share_policy_choose();
        OPAL_THREAD_LOCK(&mca_osc_newrma_component.am_lock);
        if (!is_chosen) {
            chosen = policy;
            /* what MPI_T and ompi_info --all read from now on: the value in use */
            mca_osc_newrma_component.assist_share_bytes = policy.from_bytes;
            mca_osc_newrma_component.relay_bytes = SIZE_MAX == policy.relay_from ? 0 : policy.relay_from;
            __atomic_store_n(&is_chosen, 1, __ATOMIC_RELEASE);
        }
        OPAL_THREAD_UNLOCK(&mca_osc_newrma_component.am_lock);
    }
    return chosen;
}

void osc_newrma_assist_init(ompi_osc_newrma_module_t *module)
{
    size_t line = module->shm.layout.cacheline, payload = line - offsetof(osc_newrma_assist_box_t, payload);

    module->assist_max_bytes = module->assist_serve_bytes = 0;
    module->assist_attended = false;
    module->assist_share_bytes = SIZE_MAX;
    module->assist_share_parts = 1;
    module->assist_relay_bytes = SIZE_MAX;
    module->assist_relay_batch_bytes = 0;
    module->assist_relay_batch_pieces = 0;
    if (NEWRMA_PATH_CMA != module->path || !module->shm.is_shared || SIZE_MAX == module->shm.layout.assist_in_rank) {
        return;
    }
    /* Every process of the window has the mailbox (the layout is agreed),
     * and serves it whatever its own parameters say: an origin may leave a
     * PSCW put or accumulate there for our MPI_Win_wait to apply. */
    module->assist_serve_bytes = payload < NEWRMA_ASSIST_MAX_PAYLOAD ? payload : NEWRMA_ASSIST_MAX_PAYLOAD;
    if (0 == mca_osc_newrma_component.assist_timeout) {
        return;   /* this process asks nothing of its targets */
    }
    module->assist_max_bytes = module->assist_serve_bytes;
    /* More ranks than cores (Open MPI then yields when idle): a target is
     * often off its core, and waiting for it costs more than doing it
     * ourselves (4 ranks on 2 cores, create windows: 8 B put + flush 1.04
     * -> 0.60 us, acc 1.71 -> 1.25 without assistance).  Hand-offs in a
     * PSCW epoch stay: puts and accumulates wait for nobody, and answers
     * are collected after MPI_Win_complete signals, when the target's
     * MPI_Win_wait is about to serve them anyway.  So do relays of large
     * transfers (NEWRMA_RELAY_UNATTENDED_BYTES). */
    module->assist_attended = targets_attended();
    if (module->assist_max_bytes >= sizeof(assist_share_t)) {
        share_policy_t policy = share_policy();
        if (module->assist_attended && 0 != policy.from_bytes) {
            module->assist_share_bytes = policy.from_bytes;
            module->assist_share_parts = policy.parts;
        }
        /* one relay area per process, used by one thread at a time */
        module->assist_relay_bytes = ompi_mpi_thread_multiple ? SIZE_MAX : policy.relay_from;
        module->assist_relay_batch_bytes = policy.relay_batch_from;
        module->assist_relay_batch_pieces = policy.relay_batch_pieces;
    }
}

size_t osc_newrma_assist_move_max(const ompi_osc_newrma_module_t *module)
{
    size_t in_line = NEWRMA_ASSIST_HW_LINE - offsetof(osc_newrma_assist_box_t, payload);

    return module->assist_max_bytes < in_line ? module->assist_max_bytes : in_line;
}

/* ------------------------------------------------------------------ */
/* origin side                                                         */
/* ------------------------------------------------------------------ */

/* What one request says, besides its payload. */
typedef struct {
    uint8_t kind;
    uint8_t want_result;
    uint16_t dt_id;
    int32_t op_index;
    int32_t answer_to;   /* 1 + the rank whose answer line gets the answer; 0: the mailbox */
    uint32_t count;
    uint64_t addr;
} assist_request_t;

/* The mailbox holds a datatype id and an op index in a byte each: every
 * predefined datatype fits, and so does every predefined op (Open MPI
 * numbers them first, before any user-defined one). */
_Static_assert(OMPI_DATATYPE_MPI_MAX_PREDEFINED <= 256, "predefined datatype ids fit in a byte");

/* After a target answered us, this many requests to it go out without a
 * clock reading (about 20 ns of a 0.2 us compare-and-swap): a target that
 * keeps answering is inside MPI.  One that left since costs at most one
 * timeout, after which its stamp is remembered as a miss -- as a stamp
 * younger than NEWRMA_ASSIST_FRESH_NS can already cost. */
#define NEWRMA_ASSIST_TRUSTED_ANSWERS 64

static inline uint64_t target_word(int target, uint32_t low)
{
    return (uint64_t) (uint32_t) target << 32 | low;
}

/* Has the target run progress lately, and not failed us since?  *stamp:
 * the stamp seen (remembered if the target then does not answer). */
static inline bool target_present(ompi_osc_newrma_module_t *module, int target, uint64_t *stamp)
{
    uint64_t trusted;

    *stamp = __atomic_load_n(&osc_newrma_shm_assist_presence(&module->shm, target)->stamp, __ATOMIC_RELAXED);
    if (0 == *stamp || *stamp == __atomic_load_n(&module->assist_miss_stamp, __ATOMIC_RELAXED)) {
        return false;
    }
    /* a lost decrement (threads) only trusts one answer more */
    trusted = __atomic_load_n(&module->assist_trusted, __ATOMIC_RELAXED);
    if ((trusted >> 32) == (uint32_t) target && (uint32_t) trusted > 0) {
        __atomic_store_n(&module->assist_trusted, trusted - 1, __ATOMIC_RELAXED);
        return true;
    }
    return osc_newrma_clock_ns() - *stamp < NEWRMA_ASSIST_FRESH_NS;
}

/* How long an origin waits for its target to take a request. */
typedef enum {
    ASSIST_WITHDRAW_AT_ONCE,   /* not at all: the target is likely busy outside MPI */
    ASSIST_SPIN,               /* up to the timeout, spinning: the target looked present */
    ASSIST_SPIN_POLITELY,      /* up to the timeout, serving our own mailbox and giving
                                * the core away: a PSCW epoch, whose target is likely
                                * in MPI_Win_wait but may be off its core */
    ASSIST_AFTER_COMPLETION,   /* the same after MPI_Win_complete signalled: a withdrawal
                                * holds the mailbox (WITHDRAWING) until the single copy
                                * is done, as the target's wait may be draining it */
} assist_patience_t;

/* Has a wait passed osc_newrma_assist_timeout?  *deadline: 0 at the
 * wait's start (the first call sets it). */
static bool assist_timed_out(uint64_t *deadline)
{
    uint64_t now = osc_newrma_clock_ns();

    if (0 == *deadline) {
        *deadline = now + 1000ull * mca_osc_newrma_component.assist_timeout;
        return false;
    }
    return now > *deadline;
}

/* Wait until the target takes request `posted` or the timeout passes. */
static bool wait_taken(ompi_osc_newrma_module_t *module, osc_newrma_assist_box_t *box, uint32_t posted,
                       assist_patience_t patience)
{
    uint64_t deadline = 0;
    unsigned int spins = 0, turns = 0, clock_turns = ASSIST_SPIN == patience ? NEWRMA_ASSIST_CLOCK_SPINS : 1;

    while (posted == __atomic_load_n(&box->state, __ATOMIC_ACQUIRE)) {
        if (ASSIST_SPIN == patience) {
            osc_newrma_cpu_relax();
        } else {
            /* two completing epochs may wait for each other's answers */
            osc_newrma_assist_backoff(module, &spins);
        }
        if (0 == ++turns % clock_turns && assist_timed_out(&deadline)) {
            return false;
        }
    }
    return true;
}

/* Wait until our answer line holds `tag` or the timeout passes. */
static bool wait_answer(const osc_newrma_assist_answer_t *answer, uint64_t tag)
{
    uint64_t deadline = 0;
    unsigned int turns = 0;

    while (tag != __atomic_load_n(&answer->tag, __ATOMIC_ACQUIRE)) {
        osc_newrma_cpu_relax();
        if (0 == ++turns % NEWRMA_ASSIST_CLOCK_SPINS && assist_timed_out(&deadline)) {
            return false;
        }
    }
    return true;
}

/* Claim a free mailbox: a compare-and-swap from the state it is expected
 * in -- where our last claim left it, if that was this target's, which
 * saves fetching the line before taking it -- then from the state seen. */
static bool assist_claim(ompi_osc_newrma_module_t *module, int target, osc_newrma_assist_box_t *box,
                         uint32_t *mine)
{
    uint64_t hint = __atomic_load_n(&module->assist_box_hint, __ATOMIC_RELAXED);
    uint32_t seen = (hint >> 32) == (uint32_t) target ? (uint32_t) hint
                                                       : __atomic_load_n(&box->state, __ATOMIC_RELAXED);

    for (int attempt = 0 ; attempt < 2 ; ++attempt) {
        /* busy (another origin's request): single-copy, no waiting in line */
        if (NEWRMA_ASSIST_FREE != (seen & NEWRMA_ASSIST_MASK)) {
            return false;
        }
        *mine = (seen & ~NEWRMA_ASSIST_MASK) + (1u << NEWRMA_ASSIST_BITS);
        if (__atomic_compare_exchange_n(&box->state, &seen, *mine | NEWRMA_ASSIST_CLAIMED, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            /* every way out of a request leaves the mailbox FREE under its sequence */
            __atomic_store_n(&module->assist_box_hint, target_word(target, *mine | NEWRMA_ASSIST_FREE),
                             __ATOMIC_RELAXED);
            return true;
        }
    }
    return false;
}

/* Claim the target's mailbox and post a request: OMPI_ERR_WOULD_BLOCK if
 * the mailbox is busy.  *mine: the request's sequence. */
static int assist_claim_post(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                             const void *in, size_t in_bytes, uint32_t *mine)
{
    osc_newrma_assist_box_t *box = osc_newrma_shm_assist_box(&module->shm, target);

    if (!assist_claim(module, target, box, mine)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    box->kind = req->kind;
    box->want_result = req->want_result;
    box->dt_id = (uint8_t) req->dt_id;
    box->op_index = (uint8_t) req->op_index;
    box->answer_to = req->answer_to;
    box->count = req->count;
    box->addr = req->addr;
    memcpy(box->payload, in, in_bytes);
    __atomic_store_n(&box->state, *mine | NEWRMA_ASSIST_POSTED, __ATOMIC_RELEASE);
    return OMPI_SUCCESS;
}

/* The same for a request the origin will wait for: only to a target that
 * is present.  *stamp: the presence stamp it was posted on. */
static int assist_post(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                       const void *in, size_t in_bytes, uint32_t *mine, uint64_t *stamp)
{
    if (!module->assist_attended || !target_present(module, target, stamp)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    return assist_claim_post(module, target, req, in, in_bytes, mine);
}

/* Take back a request the target did not take in time (POSTED -> `back`):
 * false if it took it meanwhile.  The stamp it was asked on is remembered
 * (unless 0: not asked on a stamp, nothing learned). */
static bool assist_withdraw(ompi_osc_newrma_module_t *module, osc_newrma_assist_box_t *box, uint32_t mine,
                            uint64_t stamp, uint32_t back)
{
    uint32_t posted = mine | NEWRMA_ASSIST_POSTED;

    if (!__atomic_compare_exchange_n(&box->state, &posted, mine | back, false, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
        return false;
    }
    if (0 != stamp) {
        __atomic_store_n(&module->assist_miss_stamp, stamp, __ATOMIC_RELAXED);
    }
    OPAL_THREAD_ADD_FETCH64((int64_t *) &mca_osc_newrma_component.assist_withdrawn, 1);
    return true;
}

/* A target answered: count it, and trust it for the next requests. */
static void assist_answered(ompi_osc_newrma_module_t *module, int target)
{
    __atomic_store_n(&module->assist_trusted, target_word(target, NEWRMA_ASSIST_TRUSTED_ANSWERS), __ATOMIC_RELAXED);
    OPAL_THREAD_ADD_FETCH64((int64_t *) &mca_osc_newrma_component.assisted_ops, 1);
}

/* Wait for a posted request's answer (its payload into `out`), or withdraw
 * it if the target does not take it in time: OMPI_ERR_WOULD_BLOCK, and the
 * caller does the operation itself. */
static int assist_finish(ompi_osc_newrma_module_t *module, int target, uint32_t mine, uint64_t stamp,
                         assist_patience_t patience, void *out, size_t out_bytes)
{
    osc_newrma_assist_box_t *box = osc_newrma_shm_assist_box(&module->shm, target);
    uint32_t state;
    unsigned int spins = 0;

    if ((ASSIST_WITHDRAW_AT_ONCE == patience || !wait_taken(module, box, mine | NEWRMA_ASSIST_POSTED, patience))
        && assist_withdraw(module, box, mine, stamp,
                           ASSIST_AFTER_COMPLETION == patience ? NEWRMA_ASSIST_WITHDRAWING : NEWRMA_ASSIST_FREE)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* taken: the target is applying it, a few instructions away; it
     * answers DONE, or frees the mailbox itself when it owes no answer */
    while ((mine | NEWRMA_ASSIST_TAKEN) == (state = __atomic_load_n(&box->state, __ATOMIC_ACQUIRE))) {
        osc_newrma_backoff(&spins);
    }
    if ((mine | NEWRMA_ASSIST_DONE) == state) {
        memcpy(out, box->payload, out_bytes);
        __atomic_store_n(&box->state, mine | NEWRMA_ASSIST_FREE, __ATOMIC_RELEASE);
    }
    assist_answered(module, target);
    return OMPI_SUCCESS;
}

/* The same for a request answered on our answer line: we spin on a line of
 * our own, the target frees its mailbox before it answers, and nothing of
 * ours stays to be written back to the target's line. */
static int assist_finish_on_line(ompi_osc_newrma_module_t *module, int target, uint32_t mine, uint64_t stamp,
                                 void *out, size_t out_bytes)
{
    const osc_newrma_assist_answer_t *answer = osc_newrma_shm_assist_answer(&module->shm, module->rank);
    uint64_t tag = target_word(target, mine | NEWRMA_ASSIST_DONE);
    unsigned int spins = 0;

    if (!wait_answer(answer, tag)) {
        if (assist_withdraw(module, osc_newrma_shm_assist_box(&module->shm, target), mine, stamp,
                            NEWRMA_ASSIST_FREE)) {
            return OMPI_ERR_WOULD_BLOCK;
        }
        /* taken meanwhile: the answer is a few instructions away */
        while (tag != __atomic_load_n(&answer->tag, __ATOMIC_ACQUIRE)) {
            osc_newrma_backoff(&spins);
        }
    }
    memcpy(out, answer->payload, out_bytes);
    assist_answered(module, target);
    return OMPI_SUCCESS;
}

/* Our answer line serves one request at a time: with threads, taken with
 * a try (a thread that finds it taken has the answer left in the mailbox). */
static inline bool answer_line_take(ompi_osc_newrma_module_t *module)
{
    return !opal_using_threads() || !__atomic_exchange_n(&module->assist_answer_busy, true, __ATOMIC_ACQUIRE);
}

static inline void answer_line_give(ompi_osc_newrma_module_t *module)
{
    if (opal_using_threads()) {
        __atomic_store_n(&module->assist_answer_busy, false, __ATOMIC_RELEASE);
    }
}

/* A request the caller waits for: answered on our answer line when it
 * owes an answer and we have the line to ourselves, else in the mailbox
 * (one owing none, an accumulate without result, only frees it). */
static int assist_run(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                      const void *in, size_t in_bytes, void *out, size_t out_bytes)
{
    assist_request_t on_line = *req;
    bool own_line = 0 != out_bytes && answer_line_take(module);
    uint32_t mine;
    uint64_t stamp;
    int ret;

    on_line.answer_to = own_line ? module->rank + 1 : 0;
    ret = assist_post(module, target, &on_line, in, in_bytes, &mine, &stamp);
    if (OMPI_SUCCESS == ret) {
        ret = own_line ? assist_finish_on_line(module, target, mine, stamp, out, out_bytes)
                       : assist_finish(module, target, mine, stamp, ASSIST_SPIN, out, out_bytes);
    }
    if (own_line) {
        answer_line_give(module);
    }
    return ret;
}

/* Post a request that completes later: at most one per window.  In a PSCW
 * epoch the target is sure to serve it -- its MPI_Win_wait drains the
 * mailbox -- so it is posted whether or not the target looks present
 * (stamp 0: unattended). */
static int assist_defer(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                        const osc_newrma_assist_pending_t *what, const void *in, size_t in_bytes)
{
    osc_newrma_assist_pending_t *pending = &module->assist_pending;
    uint32_t mine;
    uint64_t stamp = 0;
    int ret;

    if (pending->active) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    ret = NEWRMA_WIN_PSCW_GRANTED == module->state
              ? assist_claim_post(module, target, req, in, in_bytes, &mine)
              : assist_post(module, target, req, in, in_bytes, &mine, &stamp);
    if (OMPI_SUCCESS == ret) {
        *pending = *what;
        memcpy(pending->data, in, in_bytes);
        pending->active = true;
        pending->kind = req->kind;
        pending->target = target;
        pending->mine = mine;
        pending->stamp = stamp;
    }
    return ret;
}

int osc_newrma_assist_move(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                           uint64_t taddr, size_t bytes)
{
    assist_request_t req = { .kind = write ? NEWRMA_ASSIST_PUT : NEWRMA_ASSIST_GET, .count = (uint32_t) bytes,
                             .addr = taddr };
    osc_newrma_assist_pending_t what = { .local = local, .taddr = taddr, .bytes = bytes };

    return assist_defer(module, target, &req, &what, local, write ? bytes : 0);
}

/* Where a pending request's answer goes: a get's buffer, a get_accumulate's
 * or compare-and-swap's result; NULL if it owes none (a put, an accumulate). */
static inline void *pending_answer(const osc_newrma_assist_pending_t *p)
{
    return NEWRMA_ASSIST_PUT == p->kind ? NULL : p->local;
}

/* An unattended request's target may be busy outside MPI: without
 * assistance for attended ones (more ranks than cores) it most likely is,
 * so it is taken back at once rather than after the timeout -- except in a
 * PSCW epoch: that target has posted and waits, or soon will, in
 * MPI_Win_wait, and a few yields give it the core. */
static assist_patience_t pending_patience(const ompi_osc_newrma_module_t *module,
                                          const osc_newrma_assist_pending_t *p)
{
    if (NEWRMA_WIN_PSCW_GRANTED == module->state) {
        return ASSIST_SPIN_POLITELY;
    }
    return 0 != p->stamp || module->assist_attended ? ASSIST_SPIN : ASSIST_WITHDRAW_AT_ONCE;
}

/* The pending request by single copy after its withdrawal: from the data
 * as it was at the call, or into the answer's buffer (still the caller's
 * to fill). */
static int pending_single_copy(ompi_osc_newrma_module_t *module, const osc_newrma_assist_pending_t *p, void *answer)
{
    if (NEWRMA_ASSIST_ACC == p->kind) {
        return osc_newrma_acc_single_copy(module, p->data, answer, p->count, p->dt, p->target, p->disp, p->op);
    }
    if (NEWRMA_ASSIST_CAS == p->kind) {
        return osc_newrma_cas_single_copy(module, p->target, p->taddr, p->data, p->data + p->bytes, answer,
                                          p->bytes);
    }
    return osc_newrma_single_copy(osc_newrma_shm_peer(&module->shm, p->target)->pid,
                               NEWRMA_ASSIST_PUT == p->kind ? (void *) p->data : p->local, p->taddr, p->bytes,
                               NEWRMA_ASSIST_PUT == p->kind);
}

static int pending_complete(ompi_osc_newrma_module_t *module, assist_patience_t patience)
{
    osc_newrma_assist_pending_t *p = &module->assist_pending;
    void *answer = pending_answer(p);
    int ret;

    p->active = false;
    ret = assist_finish(module, p->target, p->mine, p->stamp, patience, answer, NULL != answer ? p->bytes : 0);
    if (OMPI_ERR_WOULD_BLOCK != ret) {
        return ret;
    }
    ret = pending_single_copy(module, p, answer);
    if (ASSIST_AFTER_COMPLETION == patience) {
        /* done: the target's MPI_Win_wait may return */
        __atomic_store_n(&osc_newrma_shm_assist_box(&module->shm, p->target)->state, p->mine | NEWRMA_ASSIST_FREE,
                         __ATOMIC_RELEASE);
    }
    return ret;
}

int osc_newrma_assist_move_complete(ompi_osc_newrma_module_t *module)
{
    return pending_complete(module, pending_patience(module, &module->assist_pending));
}

int osc_newrma_assist_complete_epoch(ompi_osc_newrma_module_t *module)
{
    /* a put or an accumulate without result may complete at the target as
     * late as its MPI_Win_wait, which drains the mailbox before it returns
     * (osc_newrma_assist_drained); a get, get_accumulate or
     * compare-and-swap stays pending for its answer, collected after the
     * completion is signalled (osc_newrma_assist_collect_answer) */
    if (module->assist_pending.active && NULL == pending_answer(&module->assist_pending)) {
        module->assist_pending.active = false;
        OPAL_THREAD_ADD_FETCH64((int64_t *) &mca_osc_newrma_component.assist_left, 1);
    }
    return OMPI_SUCCESS;
}

int osc_newrma_assist_collect_answer(ompi_osc_newrma_module_t *module)
{
    return module->assist_pending.active ? pending_complete(module, ASSIST_AFTER_COMPLETION) : OMPI_SUCCESS;
}

/* The target finds predefined types and intrinsic ops by index: the same in
 * every process. */
static inline bool dt_indexable(struct ompi_datatype_t *dt)
{
    return dt->id >= 0 && dt->id < OMPI_DATATYPE_MPI_MAX_PREDEFINED && ompi_datatype_basicDatatypes[dt->id] == dt;
}

int osc_newrma_assist_accumulate(ompi_osc_newrma_module_t *module, int target, uint64_t taddr, ptrdiff_t disp,
                                 struct ompi_op_t *op, struct ompi_datatype_t *dt, int count,
                                 const void *origin, void *result)
{
    size_t bytes = (size_t) count * dt->super.size, in_bytes = &ompi_mpi_op_no_op.op == op ? 0 : bytes;
    assist_request_t req = { .kind = NEWRMA_ASSIST_ACC, .want_result = NULL != result, .dt_id = (uint16_t) dt->id,
                             .op_index = op->o_f_to_c_index, .count = (uint32_t) count, .addr = taddr };

    if (!dt_indexable(dt) || !ompi_op_is_intrinsic(op)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* No result wanted: complete it at the next completion point, like a
     * put.  In a PSCW epoch, results too: the target has posted and will
     * serve the mailbox in its MPI_Win_wait; MPI_Win_complete collects the
     * answer (the result may not be read before then). */
    if ((NULL == result || NEWRMA_WIN_PSCW_GRANTED == module->state) && 0 != module->assist_move_bytes) {
        osc_newrma_assist_pending_t what = { .local = result, .taddr = taddr, .bytes = bytes, .op = op,
                                             .dt = dt, .count = count, .disp = disp };
        return assist_defer(module, target, &req, &what, origin, in_bytes);
    }
    return assist_run(module, target, &req, origin, in_bytes, result, NULL != result ? bytes : 0);
}

int osc_newrma_assist_cas(ompi_osc_newrma_module_t *module, int target, uint64_t taddr,
                          struct ompi_datatype_t *dt, const void *origin, const void *compare, void *result)
{
    size_t size = dt->super.size;
    uint8_t in[NEWRMA_ASSIST_MAX_PAYLOAD];
    assist_request_t req = { .kind = NEWRMA_ASSIST_CAS, .want_result = 1, .dt_id = (uint16_t) dt->id,
                             .count = 1, .addr = taddr };

    if (!dt_indexable(dt)) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    memcpy(in, origin, size);
    memcpy(in + size, compare, size);
    /* in a PSCW epoch, answered at MPI_Win_complete (as get_accumulate) */
    if (NEWRMA_WIN_PSCW_GRANTED == module->state && 0 != module->assist_move_bytes) {
        osc_newrma_assist_pending_t what = { .local = result, .taddr = taddr, .bytes = size, .dt = dt, .count = 1 };
        return assist_defer(module, target, &req, &what, in, 2 * size);
    }
    return assist_run(module, target, &req, in, 2 * size, result, size);
}

/* ------------------------------------------------------------------ */
/* shared copies: large contiguous puts and gets, both processes copy   */
/* ------------------------------------------------------------------ */

static uint64_t share_chunk(const ompi_osc_newrma_module_t *module, size_t bytes)
{
    uint64_t chunk = ((uint64_t) bytes / module->assist_share_parts + 4095) & ~(uint64_t) 4095;

    return chunk < NEWRMA_SHARE_MIN_CHUNK ? NEWRMA_SHARE_MIN_CHUNK : chunk;
}

/* the length of the chunk at `off` (the last one may be short) */
static inline uint64_t share_chunk_len(uint64_t bytes, uint64_t off, uint64_t chunk)
{
    return bytes - off < chunk ? bytes - off : chunk;
}

/* Take chunks of a shared operation until none are left (either side's
 * loop), doing each with `fn`.  Returns the offset of a chunk that failed
 * (*ret: why; no more chunks are taken then) or NEWRMA_SHARE_NONE; *done:
 * bytes this process did. */
static uint64_t share_take_chunks(assist_share_t *share, uint64_t bytes, uint64_t chunk,
                                  osc_newrma_share_chunk_fn_t fn, void *ctx, int *ret, size_t *done)
{
    for (;;) {
        uint64_t off = __atomic_fetch_add(&share->next, chunk, __ATOMIC_RELAXED), len;

        if (off >= bytes) {
            return NEWRMA_SHARE_NONE;
        }
        len = share_chunk_len(bytes, off, chunk);
        *ret = fn(ctx, off, len);
        if (OMPI_SUCCESS != *ret) {
            return off;
        }
        *done += len;
    }
}

/* A shared copy's chunk: `mine` in this process, `theirs` in process
 * `pid`; `write` moves mine to theirs. */
typedef struct {
    pid_t pid;
    char *mine;
    uint64_t theirs;
    bool write;
} share_copy_t;

static int share_copy_chunk(void *ctx, uint64_t off, uint64_t len)
{
    const share_copy_t *c = (const share_copy_t *) ctx;

    return osc_newrma_single_copy(c->pid, c->mine + off, c->theirs + off, len, c->write);
}

/* The origin's side of any shared operation: post it (the target joins
 * when it sees it), do chunks with `fn` until none are left, then withdraw
 * the request if the target never took it, or wait for the target's last
 * chunk; a chunk the target failed is done with `fn` too. */
static int share_run(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                     const assist_share_t *init, size_t init_bytes, osc_newrma_share_chunk_fn_t fn, void *ctx)
{
    osc_newrma_assist_box_t *box = osc_newrma_shm_assist_box(&module->shm, target);
    assist_share_t *share = (assist_share_t *) box->payload;
    uint64_t bytes = init->bytes, chunk = init->chunk;
    uint32_t mine;
    uint64_t failed;
    size_t ours = 0;
    unsigned int spins = 0;
    int ret = osc_newrma_assist_flush_pending(module);   /* the mailbox may hold our own request */

    /* Posted whether or not the target looks present: the origin does not
     * wait for it, so a target that never joins costs a claim and a
     * withdrawal (a few line transfers against a copy of a megabyte or
     * more), and one that is just entering MPI -- its stamp not fresh yet --
     * still joins. */
    if (OMPI_SUCCESS != ret || OMPI_SUCCESS != assist_claim_post(module, target, req, init, init_bytes, &mine)) {
        return OMPI_SUCCESS != ret ? ret : OMPI_ERR_WOULD_BLOCK;
    }
    /* no waiting for the target: we start at once, it joins when it sees
     * the request */
    (void) share_take_chunks(share, bytes, chunk, fn, ctx, &ret, &ours);
    /* every chunk is taken: a target that never joined is withdrawn from,
     * one that did is waited for (its last chunk at most) */
    if (assist_withdraw(module, box, mine, 0, NEWRMA_ASSIST_FREE)) {
        return ret;
    }
    while ((mine | NEWRMA_ASSIST_DONE) != __atomic_load_n(&box->state, __ATOMIC_ACQUIRE)) {
        osc_newrma_backoff(&spins);
    }
    failed = share->failed;
    __atomic_store_n(&box->state, mine | NEWRMA_ASSIST_FREE, __ATOMIC_RELEASE);
    OPAL_THREAD_ADD_FETCH64((int64_t *) &mca_osc_newrma_component.shared_copy_bytes, (int64_t) (bytes - ours));
    /* a chunk the target could not do: ours to do */
    if (NEWRMA_SHARE_NONE != failed && OMPI_SUCCESS == ret) {
        ret = fn(ctx, failed, share_chunk_len(bytes, failed, chunk));
    }
    return ret;
}

int osc_newrma_assist_share(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                            uint64_t taddr, size_t bytes)
{
    share_copy_t copy = { .pid = osc_newrma_shm_peer(&module->shm, target)->pid, .mine = local, .theirs = taddr,
                          .write = write };
    assist_request_t req = { .kind = write ? NEWRMA_ASSIST_SHARE_PUT : NEWRMA_ASSIST_SHARE_GET,
                             .count = (uint32_t) module->rank, .addr = taddr };
    assist_share_t init = { .origin_addr = (uint64_t) (uintptr_t) local, .bytes = bytes,
                            .chunk = share_chunk(module, bytes), .next = 0, .failed = NEWRMA_SHARE_NONE };

    return share_run(module, target, &req, &init, sizeof(init), share_copy_chunk, &copy);
}

bool osc_newrma_assist_share_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize,
                                      bool with_result)
{
    /* chunks are whole pages, so whole elements */
    return bytes >= module->assist_share_bytes && 0 != esize && 0 == 4096 % esize
           && (!with_result || module->assist_max_bytes >= sizeof(assist_share_result_t));
}

int osc_newrma_assist_share_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin,
                                       void *result, uint64_t taddr, size_t bytes, struct ompi_op_t *op,
                                       struct ompi_datatype_t *dt, osc_newrma_share_chunk_fn_t fn, void *ctx)
{
    assist_request_t req = { .kind = NEWRMA_ASSIST_SHARE_ACC, .want_result = NULL != result,
                             .dt_id = (uint16_t) dt->id, .op_index = op->o_f_to_c_index,
                             .count = (uint32_t) module->rank, .addr = taddr };
    assist_share_result_t init = {
        .head = { .origin_addr = (uint64_t) (uintptr_t) origin, .bytes = bytes, .chunk = share_chunk(module, bytes),
                  .next = 0, .failed = NEWRMA_SHARE_NONE },
        .result_addr = (uint64_t) (uintptr_t) result };

    return share_run(module, target, &req, &init.head, NULL != result ? sizeof(init) : sizeof(init.head), fn, ctx);
}

/* ------------------------------------------------------------------ */
/* relays: puts, gets and accumulates through shared slots            */
/* ------------------------------------------------------------------ */

/* A relay's payload: the size, the number of target segments (in the
 * area's head), and the origin's area by its names. */
typedef struct {
    uint64_t bytes;
    uint64_t cookie;
    int32_t fd;
    uint32_t nsegs;
} assist_relay_t;

static inline uint64_t relay_chunks(uint64_t bytes)
{
    return (bytes + NEWRMA_RELAY_SLOT_BYTES - 1) / NEWRMA_RELAY_SLOT_BYTES;
}

/* the length of chunk i (the last one may be short) */
static inline size_t relay_chunk_len(uint64_t bytes, uint64_t i)
{
    return share_chunk_len(bytes, i * NEWRMA_RELAY_SLOT_BYTES, NEWRMA_RELAY_SLOT_BYTES);
}

/* Where one side of a relay is in its own segments: the stream of chunks
 * is their bytes in order, so a chunk may end inside a segment or span
 * several (a batch of small puts). */
typedef struct {
    const struct iovec *seg;   /* the current segment */
    size_t off;                /* bytes of it already streamed */
} relay_cursor_t;

/* What to do with one piece of a chunk: `here` in a segment, `at` bytes
 * into the chunk, `len` bytes. */
typedef void (*relay_piece_fn_t)(void *ctx, char *here, size_t at, size_t len);

/* Walk the next `len` bytes of the stream over the segments, piece by
 * piece (a piece ends where a segment does), and move on. */
static void relay_cursor_walk(relay_cursor_t *c, size_t len, relay_piece_fn_t fn, void *ctx)
{
    for (size_t at = 0 ; at < len ;) {
        size_t left = c->seg->iov_len - c->off, piece = left < len - at ? left : len - at;

        fn(ctx, (char *) c->seg->iov_base + c->off, at, piece);
        at += piece;
        c->off += piece;
        if (c->off == c->seg->iov_len) {
            ++c->seg;
            c->off = 0;
        }
    }
}

static void piece_to_slot(void *slot, char *here, size_t at, size_t len)
{
    osc_newrma_copy_bytes((char *) slot + at, here, len);
}

static void piece_from_slot(void *slot, char *here, size_t at, size_t len)
{
    osc_newrma_copy_bytes(here, (char *) slot + at, len);
}

/* Copy the next `len` bytes of the stream between `slot` and the segments
 * (into the slot if `to_slot`), and move on. */
static void relay_cursor_copy(relay_cursor_t *c, char *slot, size_t len, bool to_slot)
{
    relay_cursor_walk(c, len, to_slot ? piece_to_slot : piece_from_slot, slot);
}

/* One step of any wait of a relay, on either side: spin, then give the
 * core away (the other side may need it) -- but never opal_progress: it
 * serves our mailbox, and an origin that took another origin's relay from
 * inside its own relay's wait could wait on that origin while it does the
 * same (two processes relaying to each other at once).  With a core per
 * process, spin as long as other waits run progress: the other side is
 * copying a chunk, and a yield (a system call) noticed its end late.  On
 * an oversubscribed node, as long as the place that waits has learnt pays
 * (osc_newrma_shm.c): the two sides of a stream wait for each other in
 * turn, as the two of a PSCW epoch do. */
static inline void relay_pause_at(unsigned int *spins, osc_newrma_spin_site_t *site)
{
    ++*spins;
    if (*spins < (NULL != site ? osc_newrma_oversubscribed_spins(*spins, site) : NEWRMA_BUSY_SPINS + NEWRMA_PROGRESS_SPINS)) {
        osc_newrma_cpu_relax();
    } else {
        (void) sched_yield();
    }
}

/* a spin site of its own for each place that waits, where it is needed */
#define relay_pause(spins) relay_pause_at((spins), opal_progress_yield_when_idle ? OSC_NEWRMA_SPIN_SITE() : NULL)

typedef enum {
    RELAY_READY,      /* the counter got there */
    RELAY_WITHDRAWN,  /* the target did not take the request in time: taken back */
    RELAY_CROSSED,    /* taken back at once: another origin's relay waits for us */
    RELAY_REFUSED,    /* the target took it and gave up at once (it cannot map our area) */
} relay_wait_t;

/* One relay in flight, as its origin's waits see it: the target's mailbox
 * and our request's sequence there, our own mailbox (where another
 * origin's relay may be waiting for us), the withdrawal deadline (0: not
 * set yet). */
typedef struct {
    osc_newrma_assist_box_t *box;
    const osc_newrma_assist_box_t *own;
    uint32_t mine;
    uint64_t deadline;
} relay_link_t;

/* Is another origin's relay waiting in our own mailbox?  Then two relays
 * may be crossing: neither process serves while it relays, so each would
 * wait out the other's timeout. */
static inline bool relay_crossing(const osc_newrma_assist_box_t *own)
{
    uint8_t kind = own->kind;

    return NEWRMA_ASSIST_POSTED == (__atomic_load_n(&own->state, __ATOMIC_RELAXED) & NEWRMA_ASSIST_MASK)
           && (NEWRMA_ASSIST_RELAY_PUT == kind || NEWRMA_ASSIST_RELAY_GET == kind || NEWRMA_ASSIST_RELAY_ACC == kind);
}

/* Wait until the other side's counter reaches `at_least`.  While the
 * request is only posted, up to osc_newrma_assist_timeout (from the first
 * wait of the relay), then withdraw it -- at once if a relay is waiting
 * for us meanwhile (the caller copies by system call, and our waits serve
 * that relay later); once taken, as long as it takes: the target copies
 * until it is done. */
static relay_wait_t relay_wait(relay_link_t *link, const volatile uint64_t *counter, uint64_t at_least)
{
    unsigned int turns = 0, spins = 0;

    while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < at_least) {
        uint32_t state = __atomic_load_n(&link->box->state, __ATOMIC_ACQUIRE);
        uint32_t posted = link->mine | NEWRMA_ASSIST_POSTED;
        relay_wait_t give_up = RELAY_READY;

        if ((link->mine | NEWRMA_ASSIST_DONE) == state) {
            /* the target advances the counters before it says DONE */
            return __atomic_load_n(counter, __ATOMIC_ACQUIRE) >= at_least ? RELAY_READY : RELAY_REFUSED;
        }
        if (posted == state && relay_crossing(link->own)) {
            give_up = RELAY_CROSSED;
        } else if (posted == state && 0 == ++turns % NEWRMA_ASSIST_CLOCK_SPINS) {
            uint64_t now = osc_newrma_clock_ns();
            if (0 == link->deadline) {
                link->deadline = now + 1000ull * mca_osc_newrma_component.assist_timeout;
            }
            give_up = now > link->deadline ? RELAY_WITHDRAWN : RELAY_READY;
        }
        if (RELAY_READY != give_up
            && __atomic_compare_exchange_n(&link->box->state, &posted, link->mine | NEWRMA_ASSIST_FREE, false,
                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            return give_up;
        }
        relay_pause(&spins);
    }
    return RELAY_READY;
}

/* Stream the chunks: a put's into the slots as they free up, a get's out
 * of them as they fill. */
static relay_wait_t relay_stream(const osc_newrma_relay_area_t *area, relay_link_t *link, bool write,
                                 const struct iovec *local, uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    uint64_t chunks = relay_chunks(bytes);
    relay_cursor_t at = { .seg = local, .off = 0 };
    relay_wait_t got = RELAY_READY;

    for (uint64_t i = 0 ; i < chunks && RELAY_READY == got ; ++i) {
        char *slot = osc_newrma_relay_slot(area, i);
        if (write) {
            got = relay_wait(link, &head->consumed, i >= NEWRMA_RELAY_SLOTS ? i + 1 - NEWRMA_RELAY_SLOTS : 0);
            if (RELAY_READY == got) {
                relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), true);
                __atomic_store_n(&head->filled, i + 1, __ATOMIC_RELEASE);
            }
        } else {
            got = relay_wait(link, &head->filled, i + 1);
            if (RELAY_READY == got) {
                relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), false);
                __atomic_store_n(&head->consumed, i + 1, __ATOMIC_RELEASE);
            }
        }
    }
    /* a put is complete when the target has copied its last chunk out */
    return write && RELAY_READY == got ? relay_wait(link, &head->consumed, chunks) : got;
}

/* Claim the target's mailbox and post relay `req` of `nsegs` target
 * segments (written into our area's head first), `bytes` in all: the
 * area, the posted sequence and the presence stamp seen.
 * OMPI_ERR_WOULD_BLOCK: not posted (target absent, no area, mailbox busy). */
static int relay_post(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                      const struct iovec *remote, unsigned int nsegs, size_t bytes,
                      const osc_newrma_relay_area_t **area, relay_link_t *link, uint64_t *stamp)
{
    const osc_newrma_relay_area_t *own;
    assist_relay_t init;
    int ret = osc_newrma_assist_flush_pending(module);   /* the mailbox may hold our own request */

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (!target_present(module, target, stamp) || NULL == (own = osc_newrma_relay_own())) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* nobody uses the area between relays: the last one's target said
     * DONE after its last access, or never took it */
    own->head->filled = 0;
    own->head->consumed = 0;
    for (unsigned int i = 0 ; i < nsegs ; ++i) {
        own->head->segs[i] = (osc_newrma_relay_seg_t) { .addr = (uint64_t) (uintptr_t) remote[i].iov_base,
                                                        .len = remote[i].iov_len };
    }
    init = (assist_relay_t) { .bytes = bytes, .cookie = own->cookie, .fd = own->fd, .nsegs = nsegs };
    *area = own;
    *link = (relay_link_t) { .box = osc_newrma_shm_assist_box(&module->shm, target),
                             .own = osc_newrma_shm_assist_box(&module->shm, module->rank) };
    return OMPI_SUCCESS == assist_claim_post(module, target, req, &init, sizeof(init), &link->mine)
           ? OMPI_SUCCESS : OMPI_ERR_WOULD_BLOCK;
}

/* After the stream: a withdrawn relay is not done (the target never took
 * it); else wait for DONE and free the mailbox -- a refused one is not
 * done either, and the window stops relaying. */
static int relay_finish(ompi_osc_newrma_module_t *module, int target, const relay_link_t *link, uint64_t stamp,
                        relay_wait_t got, size_t bytes)
{
    if (RELAY_WITHDRAWN == got || RELAY_CROSSED == got) {
        NEWRMA_VERBOSE(30, "relay of %zu bytes to rank %d: %s, withdrawn", bytes, target,
                       RELAY_CROSSED == got ? "another relay waits for us" : "not taken in time");
        if (RELAY_WITHDRAWN == got) {   /* a crossing target is present: no miss */
            __atomic_store_n(&module->assist_miss_stamp, stamp, __ATOMIC_RELAXED);
        }
        OPAL_THREAD_ADD_FETCH64((int64_t *) &mca_osc_newrma_component.assist_withdrawn, 1);
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* the target says DONE right after its last chunk (or at once, refusing) */
    for (unsigned int spins = 0 ;
         (link->mine | NEWRMA_ASSIST_DONE) != __atomic_load_n(&link->box->state, __ATOMIC_ACQUIRE) ;) {
        relay_pause(&spins);
    }
    __atomic_store_n(&link->box->state, link->mine | NEWRMA_ASSIST_FREE, __ATOMIC_RELEASE);
    if (RELAY_REFUSED == got) {
        NEWRMA_VERBOSE(10, "relay to rank %d refused (it cannot map this process's relay area): "
                       "no more relays on this window", target);
        module->assist_relay_bytes = SIZE_MAX;   /* that target cannot reach us: no more tries */
        return OMPI_ERR_WOULD_BLOCK;
    }
    OPAL_THREAD_ADD_FETCH64((int64_t *) &mca_osc_newrma_component.relayed_bytes, (int64_t) bytes);
    return OMPI_SUCCESS;
}

/* An accumulate's chunk: the origin's elements in the first half of a
 * slot, the target's old values (a get_accumulate's) in the second. */
#define NEWRMA_RELAY_ACC_CHUNK (NEWRMA_RELAY_SLOT_BYTES / 2)

static inline uint64_t relay_acc_chunks(uint64_t bytes)
{
    return (bytes + NEWRMA_RELAY_ACC_CHUNK - 1) / NEWRMA_RELAY_ACC_CHUNK;
}

static inline size_t relay_acc_chunk_len(uint64_t bytes, uint64_t i)
{
    return share_chunk_len(bytes, i * NEWRMA_RELAY_ACC_CHUNK, NEWRMA_RELAY_ACC_CHUNK);
}

/* chunk i's old values, out of its slot into `old` */
static void relay_acc_old(const osc_newrma_relay_area_t *area, char *old, uint64_t bytes, uint64_t i)
{
    osc_newrma_copy_bytes(old + i * NEWRMA_RELAY_ACC_CHUNK, osc_newrma_relay_slot(area, i) + NEWRMA_RELAY_ACC_CHUNK,
                          relay_acc_chunk_len(bytes, i));
}

/* The origin's side of a relayed accumulate: each chunk of elements into
 * its slot as the slot frees up -- and, for a get_accumulate, the old
 * values the target left in the slot out first (a slot frees up when the
 * target has reduced its chunk); the last slots' old values at the end. */
static relay_wait_t relay_stream_acc(const osc_newrma_relay_area_t *area, relay_link_t *link, const char *origin,
                                     char *old, uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    uint64_t chunks = relay_acc_chunks(bytes);
    relay_wait_t got = RELAY_READY;

    for (uint64_t i = 0 ; i < chunks && RELAY_READY == got ; ++i) {
        got = relay_wait(link, &head->consumed, i >= NEWRMA_RELAY_SLOTS ? i + 1 - NEWRMA_RELAY_SLOTS : 0);
        if (RELAY_READY != got) {
            break;
        }
        if (NULL != old && i >= NEWRMA_RELAY_SLOTS) {
            relay_acc_old(area, old, bytes, i - NEWRMA_RELAY_SLOTS);
        }
        if (NULL != origin) {   /* MPI_NO_OP has no elements */
            osc_newrma_copy_bytes(osc_newrma_relay_slot(area, i), origin + i * NEWRMA_RELAY_ACC_CHUNK,
                                  relay_acc_chunk_len(bytes, i));
        }
        __atomic_store_n(&head->filled, i + 1, __ATOMIC_RELEASE);
    }
    if (RELAY_READY == got) {
        got = relay_wait(link, &head->consumed, chunks);
    }
    for (uint64_t i = chunks > NEWRMA_RELAY_SLOTS ? chunks - NEWRMA_RELAY_SLOTS : 0 ;
         RELAY_READY == got && NULL != old && i < chunks ; ++i) {
        relay_acc_old(area, old, bytes, i);
    }
    return got;
}

/* Any relay, origin side: post `req`, stream (a put's or get's `local`
 * segments; an accumulate's elements at local->iov_base, NULL for
 * MPI_NO_OP, and old values into `old`), finish. */
static int relay_run(ompi_osc_newrma_module_t *module, int target, const assist_request_t *req,
                     const struct iovec *local, char *old, const struct iovec *remote, unsigned int nsegs, size_t bytes)
{
    const osc_newrma_relay_area_t *area;
    relay_link_t link;
    uint64_t stamp;
    relay_wait_t got;
    int ret = relay_post(module, target, req, remote, nsegs, bytes, &area, &link, &stamp);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    got = NEWRMA_ASSIST_RELAY_ACC == req->kind
        ? relay_stream_acc(area, &link, (const char *) local->iov_base, old, bytes)
        : relay_stream(area, &link, NEWRMA_ASSIST_RELAY_PUT == req->kind, local, bytes);
    return relay_finish(module, target, &link, stamp, got, bytes);
}

int osc_newrma_assist_relay(ompi_osc_newrma_module_t *module, int target, bool write, const struct iovec *local,
                            const struct iovec *remote, unsigned int nsegs, size_t bytes)
{
    assist_request_t req = { .kind = write ? NEWRMA_ASSIST_RELAY_PUT : NEWRMA_ASSIST_RELAY_GET,
                             .count = (uint32_t) module->rank };

    return relay_run(module, target, &req, local, NULL, remote, nsegs, bytes);
}

bool osc_newrma_assist_relay_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize)
{
    /* chunks hold whole elements */
    return bytes >= module->assist_relay_bytes && 0 != esize && 0 == NEWRMA_RELAY_ACC_CHUNK % esize;
}

int osc_newrma_assist_relay_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin, void *old,
                                       const struct iovec *remote, unsigned int nsegs, size_t bytes,
                                       struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    assist_request_t req = { .kind = NEWRMA_ASSIST_RELAY_ACC, .want_result = NULL != old, .dt_id = (uint16_t) dt->id,
                             .op_index = op->o_f_to_c_index, .count = (uint32_t) module->rank };
    struct iovec elements = { .iov_base = (void *) origin, .iov_len = bytes };

    return relay_run(module, target, &req, &elements, (char *) old, remote, nsegs, bytes);
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

/* A shared accumulate's chunk at the target: the origin's elements, read a
 * buffer at a time, combined into our memory in place (the origin holds
 * the stripes of the whole span for us); a get_accumulate's old values
 * written to the origin's result buffer first. */
typedef struct {
    pid_t pid;
    uint64_t origin_addr;
    uint64_t result_addr;            /* 0: no old values wanted */
    char *mine;
    struct ompi_op_t *op;
    struct ompi_datatype_t *dt;
    size_t esize;
    char *buffer;
    size_t buffer_bytes;
} share_reduce_t;

static int share_reduce_chunk(void *ctx, uint64_t off, uint64_t len)
{
    const share_reduce_t *r = (const share_reduce_t *) ctx;
    int ret = OMPI_SUCCESS;

    for (uint64_t at = off ; at < off + len && OMPI_SUCCESS == ret ; at += r->buffer_bytes) {
        size_t n = off + len - at < r->buffer_bytes ? off + len - at : r->buffer_bytes;
        ret = osc_newrma_single_copy(r->pid, r->buffer, r->origin_addr + at, n, false);
        if (OMPI_SUCCESS == ret && 0 != r->result_addr) {
            ret = osc_newrma_single_copy(r->pid, r->mine + at, r->result_addr + at, n, true);
        }
        if (OMPI_SUCCESS == ret) {
            osc_newrma_acc_combine(r->op, r->dt, r->mine + at, r->buffer, NULL, n / r->esize, r->esize);
        }
    }
    return ret;
}

/* A shared accumulate's operation and type, checked (the request is a copy
 * read before it was taken). */
static bool share_reduce_setup(const ompi_osc_newrma_module_t *module, const osc_newrma_assist_box_t *box,
                               const assist_request_t *req, uint64_t chunk, share_reduce_t *r)
{
    if (req->dt_id >= OMPI_DATATYPE_MPI_MAX_PREDEFINED || req->op_index < 0
        || (req->want_result && module->assist_serve_bytes < sizeof(assist_share_result_t))) {
        return false;
    }
    r->result_addr = req->want_result ? ((const assist_share_result_t *) box->payload)->result_addr : 0;
    r->dt = (struct ompi_datatype_t *) ompi_datatype_basicDatatypes[req->dt_id];
    r->op = (struct ompi_op_t *) opal_pointer_array_get_item(ompi_op_f_to_c_table, req->op_index);
    r->esize = NULL != r->dt ? r->dt->super.size : 0;
    r->buffer_bytes = chunk < NEWRMA_SHARE_REDUCE_BUFFER ? chunk : NEWRMA_SHARE_REDUCE_BUFFER;
    return NULL != r->op && 0 != r->esize && 0 == 4096 % r->esize;
}

/* Join a shared operation: read a put's chunks from the origin into our
 * memory, write a get's from our memory to the origin's buffer, or reduce
 * an accumulate's into our memory. */
static int serve_share(ompi_osc_newrma_module_t *module, osc_newrma_assist_box_t *box, uint32_t posted,
                       const assist_request_t *req)
{
    assist_share_t *share = (assist_share_t *) box->payload;
    uint64_t origin_addr = share->origin_addr, bytes = share->bytes, chunk = share->chunk;
    uint32_t taken = (posted & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_TAKEN;
    int origin = (int) req->count, ret = OMPI_SUCCESS;
    share_reduce_t reduce = { .origin_addr = origin_addr, .mine = (char *) (uintptr_t) req->addr };
    share_copy_t copy = { .mine = (char *) (uintptr_t) req->addr, .theirs = origin_addr,
                          .write = NEWRMA_ASSIST_SHARE_GET == req->kind };
    bool is_acc = NEWRMA_ASSIST_SHARE_ACC == req->kind;
    size_t done = 0;
    uint64_t failed;

    /* nothing read above is trusted before the compare-and-swap (a stale
     * copy of a withdrawn request fails it), beyond staying in bounds */
    if (origin < 0 || origin >= module->size || origin == module->rank || 0 == chunk
        || (is_acc && !share_reduce_setup(module, box, req, chunk, &reduce))) {
        return 0;
    }
    /* a buffer before taking it: without one the origin does it alone */
    if (is_acc && NULL == (reduce.buffer = malloc(reduce.buffer_bytes))) {
        return 0;
    }
    if (!__atomic_compare_exchange_n(&box->state, &posted, taken, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        free(reduce.buffer);
        return 0;
    }
    reduce.pid = copy.pid = osc_newrma_shm_peer(&module->shm, origin)->pid;
    failed = share_take_chunks(share, bytes, chunk, is_acc ? share_reduce_chunk : share_copy_chunk,
                               is_acc ? (void *) &reduce : (void *) &copy, &ret, &done);
    share->failed = failed;
    __atomic_store_n(&box->state, (taken & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_DONE, __ATOMIC_RELEASE);
    free(reduce.buffer);
    return 1;
}

static void presence_stamp(ompi_osc_newrma_module_t *module, uint64_t now)
{
    if (0 != now && now - module->assist_stamp_written >= NEWRMA_ASSIST_STAMP_NS) {
        module->assist_stamp_written = now;
        __atomic_store_n(&osc_newrma_shm_assist_presence(&module->shm, module->rank)->stamp, now,
                         __ATOMIC_RELAXED);
    }
}

/* Apply a request we have taken, to our own memory, under its stripe:
 * old values (or the compare-and-swap's result) into `out`. */
static void apply(const assist_request_t *req, struct ompi_datatype_t *dt, const uint8_t *in, uint8_t *out)
{
    size_t size = NULL != dt ? dt->super.size : 0;
    char *t = (char *) (uintptr_t) req->addr;

    if (NEWRMA_ASSIST_PUT == req->kind || NEWRMA_ASSIST_GET == req->kind) {
        osc_newrma_copy_bytes(NEWRMA_ASSIST_PUT == req->kind ? (void *) t : (void *) out, NEWRMA_ASSIST_PUT == req->kind ? in : (const uint8_t *) t,
               req->count);
        return;
    }
    if (NEWRMA_ASSIST_CAS == req->kind) {
        memcpy(out, t, size);
        if (0 == memcmp(t, in + size, size)) {
            memcpy(t, in, size);
        }
        return;
    }
    osc_newrma_acc_combine((struct ompi_op_t *) opal_pointer_array_get_item(ompi_op_f_to_c_table, req->op_index),
                           dt, t, in, req->want_result ? out : NULL, req->count, size);
}

/* Bytes a request carries in (origin data [| compare]) and the target's
 * bytes it touches; 0 if the request cannot be valid (a stale copy). */
static size_t request_bytes(const assist_request_t *req, struct ompi_datatype_t **dt, size_t *in_bytes)
{
    size_t bytes;

    if (NEWRMA_ASSIST_PUT == req->kind || NEWRMA_ASSIST_GET == req->kind) {
        *dt = NULL;
        *in_bytes = NEWRMA_ASSIST_PUT == req->kind ? req->count : 0;
        return req->count;
    }
    if (req->dt_id >= OMPI_DATATYPE_MPI_MAX_PREDEFINED) {
        return 0;
    }
    *dt = (struct ompi_datatype_t *) ompi_datatype_basicDatatypes[req->dt_id];
    bytes = (size_t) req->count * (*dt)->super.size;
    *in_bytes = NEWRMA_ASSIST_CAS == req->kind ? 2 * bytes : bytes;
    return bytes;
}

/* A relay's target segments, out of the origin's area into `segs` (our
 * own copy: the origin does not touch them before DONE, but nothing it
 * wrote is trusted beyond adding up to the relay's size). */
static bool relay_segs_read(const osc_newrma_relay_head_t *head, uint32_t nsegs, uint64_t bytes,
                            struct iovec *segs)
{
    uint64_t total = 0;

    for (uint32_t i = 0 ; i < nsegs ; ++i) {
        osc_newrma_relay_seg_t seg = head->segs[i];
        if (0 == seg.len || seg.len > bytes - total) {
            return false;
        }
        total += seg.len;
        segs[i] = (struct iovec) { .iov_base = (void *) (uintptr_t) seg.addr, .iov_len = seg.len };
    }
    return total == bytes;
}

/* Copy a put's chunks out of the slots into our segments, or a get's from
 * our segments into them, as they fill or free up (the origin copies its
 * side meanwhile; relay_pause: spin, then yield). */
static void serve_relay_stream(const osc_newrma_relay_area_t *area, bool put, const struct iovec *segs,
                               uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    relay_cursor_t at = { .seg = segs, .off = 0 };
    uint64_t chunks = relay_chunks(bytes);

    for (uint64_t i = 0 ; i < chunks ; ++i) {
        char *slot = osc_newrma_relay_slot(area, i);
        unsigned int spins = 0;
        if (put) {
            while (__atomic_load_n(&head->filled, __ATOMIC_ACQUIRE) <= i) {
                relay_pause(&spins);
            }
            relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), false);
            __atomic_store_n(&head->consumed, i + 1, __ATOMIC_RELEASE);
        } else {
            while (i >= __atomic_load_n(&head->consumed, __ATOMIC_ACQUIRE) + NEWRMA_RELAY_SLOTS) {
                relay_pause(&spins);
            }
            relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), true);
            __atomic_store_n(&head->filled, i + 1, __ATOMIC_RELEASE);
        }
    }
}

/* A relayed accumulate at the target: each chunk of the origin's elements
 * reduced into our memory as it arrives (the origin holds the stripes of
 * the whole span for us), a get_accumulate's old values left in the
 * slot's second half first. */
typedef struct {
    struct ompi_op_t *op;
    struct ompi_datatype_t *dt;
    size_t esize;
    bool want_old;
} relay_reduce_t;

/* The request's operation and type, checked (it is a copy read before it
 * was taken). */
static bool relay_reduce_setup(const assist_request_t *req, relay_reduce_t *r)
{
    if (req->dt_id >= OMPI_DATATYPE_MPI_MAX_PREDEFINED || req->op_index < 0) {
        return false;
    }
    r->dt = (struct ompi_datatype_t *) ompi_datatype_basicDatatypes[req->dt_id];
    r->op = (struct ompi_op_t *) opal_pointer_array_get_item(ompi_op_f_to_c_table, req->op_index);
    r->esize = NULL != r->dt ? r->dt->super.size : 0;
    r->want_old = req->want_result;
    return NULL != r->op && 0 != r->esize && 0 == NEWRMA_RELAY_ACC_CHUNK % r->esize;
}

/* one piece of a chunk reduced into our segment (whole elements: chunks
 * and segments both end on element boundaries) */
typedef struct {
    const relay_reduce_t *r;
    char *slot;
} relay_reduce_piece_t;

static void piece_reduce(void *ctx, char *here, size_t at, size_t len)
{
    const relay_reduce_piece_t *p = (const relay_reduce_piece_t *) ctx;

    osc_newrma_acc_combine(p->r->op, p->r->dt, here, p->slot + at,
                           p->r->want_old ? p->slot + NEWRMA_RELAY_ACC_CHUNK + at : NULL, len / p->r->esize,
                           p->r->esize);
}

static void serve_relay_reduce(const osc_newrma_relay_area_t *area, const relay_reduce_t *r,
                               const struct iovec *segs, uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    relay_cursor_t at = { .seg = segs, .off = 0 };
    uint64_t chunks = relay_acc_chunks(bytes);

    for (uint64_t i = 0 ; i < chunks ; ++i) {
        relay_reduce_piece_t piece = { .r = r, .slot = osc_newrma_relay_slot(area, i) };
        unsigned int spins = 0;
        while (__atomic_load_n(&head->filled, __ATOMIC_ACQUIRE) <= i) {
            relay_pause(&spins);
        }
        relay_cursor_walk(&at, relay_acc_chunk_len(bytes, i), piece_reduce, &piece);
        __atomic_store_n(&head->consumed, i + 1, __ATOMIC_RELEASE);
    }
}

/* an accumulate's segments hold whole elements */
static bool relay_segs_whole(const struct iovec *segs, uint32_t nsegs, size_t esize)
{
    for (uint32_t i = 0 ; i < nsegs ; ++i) {
        if (0 != segs[i].iov_len % esize) {
            return false;
        }
    }
    return true;
}

/* Serve a relay: map the origin's area and read its segments (or refuse:
 * DONE at once, nothing copied), then stream -- an accumulate's segments
 * are reduced into, not copied to. */
static __opal_attribute_noinline__ int serve_relay(ompi_osc_newrma_module_t *module, osc_newrma_assist_box_t *box,
                                                   uint32_t posted, const assist_request_t *req)
{
    const assist_relay_t *relay = (const assist_relay_t *) box->payload;
    uint64_t bytes = relay->bytes, cookie = relay->cookie;
    uint32_t taken = (posted & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_TAKEN, nsegs = relay->nsegs;
    uint32_t done = (posted & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_DONE;
    int origin = (int) req->count, fd = relay->fd;
    bool is_acc = NEWRMA_ASSIST_RELAY_ACC == req->kind;
    struct iovec segs[NEWRMA_RELAY_SEGS];
    const osc_newrma_relay_area_t *area;
    relay_reduce_t reduce;
    bool usable;

    if (origin < 0 || origin >= module->size || origin == module->rank || 0 == bytes || 0 == nsegs
        || nsegs > NEWRMA_RELAY_SEGS || (is_acc && !relay_reduce_setup(req, &reduce))) {
        return 0;
    }
    area = osc_newrma_relay_peer(osc_newrma_shm_peer(&module->shm, origin)->pid, fd, cookie);
    if (!__atomic_compare_exchange_n(&box->state, &posted, taken, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        return 0;
    }
    usable = NULL != area && relay_segs_read(area->head, nsegs, bytes, segs)
             && (!is_acc || relay_segs_whole(segs, nsegs, reduce.esize));
    if (usable && is_acc) {
        serve_relay_reduce(area, &reduce, segs, bytes);
    } else if (usable) {
        serve_relay_stream(area, NEWRMA_ASSIST_RELAY_PUT == req->kind, segs, bytes);
    }
    __atomic_store_n(&box->state, done, __ATOMIC_RELEASE);
    /* still inside MPI after a long copy: say so, or the origin's next
     * relay would find the stamp stale */
    presence_stamp(module, osc_newrma_clock_ns());
    return 1;
}

/* Answer a request on its origin's answer line: the mailbox is free first
 * (the origin claims it again as soon as it has its answer), then the
 * payload, then the tag that says it is there. */
static void answer_on_line(ompi_osc_newrma_module_t *module, osc_newrma_assist_box_t *box, uint32_t taken,
                           int origin, const uint8_t *out, size_t bytes)
{
    osc_newrma_assist_answer_t *answer = osc_newrma_shm_assist_answer(&module->shm, origin);
    uint32_t sequence = taken & ~NEWRMA_ASSIST_MASK;

    __atomic_store_n(&box->state, sequence | NEWRMA_ASSIST_FREE, __ATOMIC_RELEASE);
    memcpy(answer->payload, out, bytes);
    __atomic_store_n(&answer->tag, target_word(module->rank, sequence | NEWRMA_ASSIST_DONE), __ATOMIC_RELEASE);
}

int osc_newrma_assist_serve(ompi_osc_newrma_module_t *module, uint64_t now)
{
    osc_newrma_assist_box_t *box = osc_newrma_shm_assist_box(&module->shm, module->rank);
    _Alignas(16) uint8_t in[NEWRMA_ASSIST_MAX_PAYLOAD], out[NEWRMA_ASSIST_MAX_PAYLOAD];
    uint32_t posted, taken;
    struct ompi_datatype_t *dt;
    assist_request_t req;
    osc_newrma_acc_locks_t stripes;
    bool locked;
    size_t bytes, in_bytes;

    posted = __atomic_load_n(&box->state, __ATOMIC_ACQUIRE);
    presence_stamp(module, now);
    if (NEWRMA_ASSIST_POSTED != (posted & NEWRMA_ASSIST_MASK)) {
        return 0;
    }
    /* a copy first: until our compare-and-swap succeeds the request may be
     * withdrawn and the line rewritten under us, so nothing read here is
     * trusted (beyond staying in bounds) before then */
    req = (assist_request_t) { .kind = box->kind, .want_result = box->want_result, .dt_id = box->dt_id,
                               .op_index = box->op_index, .answer_to = box->answer_to, .count = box->count,
                               .addr = box->addr };
    if (NEWRMA_ASSIST_SHARE_PUT == req.kind || NEWRMA_ASSIST_SHARE_GET == req.kind
        || NEWRMA_ASSIST_SHARE_ACC == req.kind) {
        return serve_share(module, box, posted, &req);
    }
    if (NEWRMA_ASSIST_RELAY_PUT == req.kind || NEWRMA_ASSIST_RELAY_GET == req.kind
        || NEWRMA_ASSIST_RELAY_ACC == req.kind) {
        return serve_relay(module, box, posted, &req);
    }
    bytes = request_bytes(&req, &dt, &in_bytes);
    if (0 == bytes || in_bytes > module->assist_serve_bytes || bytes > module->assist_serve_bytes
        || req.answer_to < 0 || req.answer_to > module->size || req.answer_to == module->rank + 1) {
        return 0;
    }
    memcpy(in, box->payload, in_bytes);
    /* the accumulate family excludes the single-copy path's read-combine-
     * write through the element's stripe; puts and gets need no lock */
    locked = NULL != dt;
    if (locked && !osc_newrma_acc_stripes_trylock(module, osc_newrma_usermem_stripe_offset(module, module->rank, req.addr),
                                                  bytes, &stripes)) {
        return 0;
    }
    taken = (posted & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_TAKEN;
    if (!__atomic_compare_exchange_n(&box->state, &posted, taken, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        if (locked) {
            osc_newrma_acc_stripes_unlock(module, &stripes);
        }
        return 0;
    }
    apply(&req, dt, in, out);
    if (locked) {
        osc_newrma_acc_stripes_unlock(module, &stripes);
    }
    /* no answer owed (a put, an accumulate without result): the mailbox
     * is free again at once -- its origin may not be waiting at all */
    if (NEWRMA_ASSIST_PUT == req.kind || (NEWRMA_ASSIST_ACC == req.kind && !req.want_result)) {
        __atomic_store_n(&box->state, (taken & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_FREE, __ATOMIC_RELEASE);
        return 1;
    }
    if (0 != req.answer_to) {
        answer_on_line(module, box, taken, req.answer_to - 1, out, bytes);
        return 1;
    }
    memcpy(box->payload, out, bytes);
    __atomic_store_n(&box->state, (taken & ~NEWRMA_ASSIST_MASK) | NEWRMA_ASSIST_DONE, __ATOMIC_RELEASE);
    return 1;
}

bool osc_newrma_assist_drained(ompi_osc_newrma_module_t *module)
{
    osc_newrma_assist_box_t *box;
    uint32_t state;

    if (!osc_newrma_assist_served(module)) {
        return true;
    }
    box = osc_newrma_shm_assist_box(&module->shm, module->rank);
    state = __atomic_load_n(&box->state, __ATOMIC_ACQUIRE) & NEWRMA_ASSIST_MASK;
    if (NEWRMA_ASSIST_POSTED == state) {
        (void) osc_newrma_progress_serve(module);
        state = __atomic_load_n(&box->state, __ATOMIC_ACQUIRE) & NEWRMA_ASSIST_MASK;
    }
    /* TAKEN: being applied (by another thread's progress); WITHDRAWING:
     * by its origin, which signalled its completion before */
    return NEWRMA_ASSIST_POSTED != state && NEWRMA_ASSIST_TAKEN != state && NEWRMA_ASSIST_WITHDRAWING != state;
}
