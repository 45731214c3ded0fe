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
 * osc/newrma: a window's limits on the user-memory path on one node --
 * which puts, gets and accumulates go through the target's mailbox, are
 * shared with the target or relayed (osc_newrma_node_policy.h holds the
 * numbers and the per-call choices; the mechanisms are
 * osc_newrma_single_copy.c, osc_newrma_mailbox.c, osc_newrma_shared_copy.c,
 * osc_newrma_relay.c and the batch in osc_newrma_usermem.c).
 *
 * Left at their defaults, osc_newrma_assist_share_bytes and
 * osc_newrma_relay_bytes follow the node's single-copy speed: each process
 * measures it once (osc_newrma_node_policy_probe), the window's creation
 * exchanges the measurements with the rest of its peer inputs, and every
 * process of the window decides from the same agreed value.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/runtime/opal_progress.h"

#include "osc_newrma.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_shared_copy.h"
#include "osc_newrma_single_copy.h"

/* When copies are shared (from `bytes` on) and in how many chunks, and
 * when puts, gets and accumulates are relayed. */
typedef struct {
    size_t from_bytes;
    unsigned int parts;
    size_t relay_from;       /* relays from this size (SIZE_MAX: none) */
    size_t relay_batch_from; /* a batch of puts or gets relayed from this size ... */
    unsigned int relay_batch_pieces; /* ... or this many pieces */
} share_policy_t;

/* Are targets asked for small operations on this node?  Not with more
 * ranks than cores (Open MPI then yields when idle), unless
 * osc_newrma_assist_oversubscribed says so. */
static bool targets_attended(void)
{
    return !opal_progress_yield_when_idle || mca_osc_newrma_component.assist_oversubscribed;
}

/* How fast a process_vm_readv of `bytes` (on ourselves) copies, as a
 * fraction of memcpy's speed: about 1 where memory bandwidth bounds both,
 * far below where the kernel's per-page work bounds the system call.  A
 * negative value: not measured (no memory, or the call failed). */
static double single_copy_speed(size_t bytes)
{
    char *src = malloc(bytes), *dst = malloc(bytes);
    uint64_t best_single_copy = UINT64_MAX, best_memcpy = UINT64_MAX;
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
        best_single_copy = t1 - t0 < best_single_copy ? t1 - t0 : best_single_copy;
        best_memcpy = t2 - t1 < best_memcpy ? t2 - t1 : best_memcpy;
    }
    speed = 0 == best_single_copy ? 1.0 : (double) best_memcpy / (double) best_single_copy;
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

/* Does this process want the probe at all?  Not if the user set both
 * limits, nor if it asks its targets nothing. */
static bool probe_wanted(void)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;

    return 0 != c->assist_timeout && (var_is_default(c->assist_share_bytes_var) || var_is_default(c->relay_bytes_var));
}

int32_t osc_newrma_node_policy_probe(void)
{
    static int32_t measured;
    static int32_t is_measured = 0;

    if (!probe_wanted()) {
        return -1;
    }
    if (!osc_newrma_load_acquire(&is_measured)) {
        /* threads creating windows at once may both measure: either answer
         * does (the component's lock: windows are rarely created at once) */
        double speed = single_copy_speed(NEWRMA_SHARE_PROBE_BYTES);
        OPAL_THREAD_LOCK(&mca_osc_newrma_component.am_lock);
        if (!osc_newrma_load_relaxed(&is_measured)) {   /* under the lock */
            measured = speed < 0.0 ? -1 : speed > 1000.0 ? 1000000 : (int32_t) (speed * 1000.0);
            osc_newrma_store_release(&is_measured, 1);
        }
        OPAL_THREAD_UNLOCK(&mca_osc_newrma_component.am_lock);
    }
    return measured;
}

/* osc_newrma_assist_share_bytes and osc_newrma_relay_bytes as set
 * (share_bytes, relay_bytes), or, left at their defaults, as the window's
 * agreed single-copy speed says.  A relay pays where the system call is
 * slow (two memcpys at cache speed against it); elsewhere it costs a
 * hand-over and a second copy for nothing. */
static share_policy_t share_policy_choose(int32_t speed_permille, size_t share_bytes, size_t relay_bytes)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    share_policy_t policy = { .from_bytes = share_bytes, .parts = NEWRMA_SHARE_PARTS,
                              .relay_from = 0 == relay_bytes ? SIZE_MAX : relay_bytes };
    bool share_auto = var_is_default(c->assist_share_bytes_var), relay_auto = var_is_default(c->relay_bytes_var);
    bool kernel_bound = speed_permille >= 0 && speed_permille < (int32_t) (NEWRMA_SHARE_CPU_BOUND_SPEED * 1000);

    if (!share_auto && !relay_auto) {
        return policy;
    }
    if (share_auto && kernel_bound) {
        policy.from_bytes = NEWRMA_SHARE_KERNEL_BOUND_FROM;
        policy.parts = NEWRMA_SHARE_KERNEL_BOUND_PARTS;
    }
    if (relay_auto && !kernel_bound) {
        policy.relay_from = SIZE_MAX;
    } else if (relay_auto && !targets_attended()) {
        policy.relay_from = policy.relay_from > NEWRMA_RELAY_UNATTENDED_BYTES ? policy.relay_from
                                                                              : NEWRMA_RELAY_UNATTENDED_BYTES;
        policy.relay_batch_from = NEWRMA_RELAY_UNATTENDED_BATCH_BYTES;
        policy.relay_batch_pieces = NEWRMA_RELAY_UNATTENDED_BATCH_PIECES;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "single copy at %.3f of memcpy's speed (256 KiB, agreed by the window): shared copies from "
                   "%zu bytes, in %u parts; relays from %zu bytes (batches from %zu bytes or %u pieces)",
                   speed_permille / 1000.0, policy.from_bytes, policy.parts, policy.relay_from,
                   policy.relay_batch_from, policy.relay_batch_pieces);
    return policy;
}

/* The window's policy.  The first window that decides one also writes its
 * values to the MCA variables, which MPI_T and ompi_info --all read from
 * then on (the values in use); later windows decide from the values as the
 * user left them. */
static share_policy_t share_policy(int32_t speed_permille)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    static size_t share_bytes_set, relay_bytes_set;
    static bool recorded = false;
    share_policy_t policy;

    OPAL_THREAD_LOCK(&c->am_lock);
    if (!recorded) {
        share_bytes_set = c->assist_share_bytes;
        relay_bytes_set = c->relay_bytes;
    }
    policy = share_policy_choose(speed_permille, share_bytes_set, relay_bytes_set);
    if (!recorded) {
        c->assist_share_bytes = policy.from_bytes;
        c->relay_bytes = SIZE_MAX == policy.relay_from ? 0 : policy.relay_from;
        recorded = true;
    }
    OPAL_THREAD_UNLOCK(&c->am_lock);
    return policy;
}

void osc_newrma_node_policy_init(ompi_osc_newrma_module_t *module, int32_t speed_permille)
{
    size_t line = module->shm.layout.cacheline, payload = line - offsetof(osc_newrma_mailbox_t, payload);

    module->assist_max_bytes = module->assist_serve_bytes = 0;
    module->assist_attended = false;
    module->assist_share_bytes = SIZE_MAX;
    module->assist_share_parts = 1;
    module->assist_relay_bytes = SIZE_MAX;
    module->assist_relay_batch_bytes = 0;
    module->assist_relay_batch_pieces = 0;
    if (NEWRMA_PATH_USERMEM != module->path || !module->shm.is_shared || SIZE_MAX == module->shm.layout.assist_in_rank) {
        return;
    }
    /* Every process of the window has the mailbox (the layout is agreed),
     * and serves it whatever its own parameters say: an origin may leave a
     * PSCW put or accumulate there for our MPI_Win_wait to apply. */
    module->assist_serve_bytes = payload < NEWRMA_MAILBOX_MAX_PAYLOAD ? payload : NEWRMA_MAILBOX_MAX_PAYLOAD;
    if (0 == mca_osc_newrma_component.assist_timeout) {
        return;   /* this process asks nothing of its targets */
    }
    module->assist_max_bytes = module->assist_serve_bytes;
    /* More ranks than cores (Open MPI then yields when idle): a target is
     * often off its core, and waiting for it costs more than doing it
     * ourselves.  Hand-offs in a PSCW epoch stay: puts and accumulates wait
     * for nobody, and answers are collected after MPI_Win_complete signals,
     * when the target's MPI_Win_wait is about to serve them anyway.  So do
     * relays of large transfers (NEWRMA_RELAY_UNATTENDED_BYTES). */
    module->assist_attended = targets_attended();
    if (module->assist_max_bytes >= sizeof(osc_newrma_share_t)) {
        share_policy_t policy = share_policy(speed_permille);
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

void osc_newrma_node_policy_batch_set(ompi_osc_newrma_module_t *module)
{
    /* the largest put or get worth handing over: within one hardware line */
    size_t in_line = NEWRMA_MAILBOX_HW_LINE - offsetof(osc_newrma_mailbox_t, payload);
    size_t move_max = module->assist_max_bytes < in_line ? module->assist_max_bytes : in_line;

    module->assist_move_bytes = ompi_mpi_thread_multiple ? 0 : move_max;
    if (NULL == module->usermem_batch) {
        module->assist_relay_bytes = SIZE_MAX;
    }
}

bool osc_newrma_node_policy_relay_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize)
{
    /* chunks hold whole elements */
    return bytes >= module->assist_relay_bytes && 0 != esize && 0 == NEWRMA_RELAY_ACC_CHUNK % esize;
}

bool osc_newrma_node_policy_shared_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize,
                                            bool with_result)
{
    /* chunks are whole pages, so whole elements */
    return bytes >= module->assist_share_bytes && 0 != esize && 0 == NEWRMA_SHARE_PAGE % esize
           && (!with_result || module->assist_max_bytes >= sizeof(osc_newrma_share_result_t));
}
