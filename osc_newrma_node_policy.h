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
 * osc/newrma: the one policy of the user-memory path on one node
 * (MPI_Win_create/create_dynamic windows whose processes share a node).
 *
 * An operation there moves its bytes by one of five mechanisms, each in a
 * file of its own:
 *   single copy    one process_vm_readv/writev (osc_newrma_single_copy.c);
 *   batch          small puts and gets gathered, issued at the next
 *                  completion as one system call or one relay
 *                  (osc_newrma_usermem.c);
 *   mailbox        a small operation handed to a target inside MPI, which
 *                  applies it to its own memory (osc_newrma_mailbox.c);
 *   shared copy    a large copy done by origin and target together, chunk
 *                  by chunk (osc_newrma_shared_copy.c);
 *   relay          a stream through shared slots, the origin copying
 *                  chunks in, the target out (osc_newrma_relay.c).
 * This header holds every threshold and constant of those paths, and the
 * inline choices the operations make per call; osc_newrma_node_policy.c
 * sets a window's limits at creation from the MCA parameters alone: the
 * same on every machine, and an origin-side choice that its targets serve
 * whatever it is, so the window's processes have nothing to agree on.
 */

#ifndef OSC_NEWRMA_NODE_POLICY_H
#define OSC_NEWRMA_NODE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_newrma.h"

/* ------------------------------------------------------------------ */
/* the numbers                                                         */
/* ------------------------------------------------------------------ */

/* Mailbox (osc_newrma_mailbox.c).  A stamp older than this means the
 * target is computing, not in MPI. */
#define NEWRMA_MAILBOX_FRESH_NS 50000
/* The target rewrites its stamp at most this often (the line is read by
 * every origin deciding whether to ask: rewriting it costs them a miss). */
#define NEWRMA_MAILBOX_STAMP_NS 1000
/* The presence stamp needs a clock reading; progress takes one every this
 * many calls, which keeps it fresh to a microsecond or so in a progress
 * loop at a few ns a call (osc_newrma_progress.c). */
#define NEWRMA_STAMP_EVERY 8
/* spins between clock readings while waiting for the target */
#define NEWRMA_MAILBOX_CLOCK_SPINS 64
/* the largest payload: one line's worth, and aligned local copies of it */
#define NEWRMA_MAILBOX_MAX_PAYLOAD 64
/* The hardware line.  Open MPI's cache line (opal_cache_line_size, the
 * segment's spacing) is 128 bytes by default -- lines move in adjacent
 * pairs for the prefetcher -- so a full payload spans two hardware lines
 * and a request moves both each way.  For an accumulate that still beats
 * the two system calls of doing it ourselves; a put or get replaces one
 * system call only and does not, so those are handed over only within
 * this line. */
#define NEWRMA_MAILBOX_HW_LINE 64
/* After a target answered us, this many requests to it go out without a
 * clock reading (a good part of a small compare-and-swap's cost): a target
 * that keeps answering is inside MPI.  One that left since costs at most
 * one timeout (osc_newrma_assist_timeout), after which its stamp is
 * remembered as a miss -- as a stamp younger than NEWRMA_MAILBOX_FRESH_NS
 * can already cost. */
#define NEWRMA_MAILBOX_TRUSTED_ANSWERS 64

/* Shared copies (osc_newrma_shared_copy.c).  Chunks are a fraction of the
 * copy (NEWRMA_SHARE_PARTS), whole pages, at least NEWRMA_SHARE_MIN_CHUNK:
 * a system call per chunk stays small against its copy, and the last chunk
 * one process waits for is short. */
#define NEWRMA_SHARE_PAGE 4096
#define NEWRMA_SHARE_MIN_CHUNK (32 * 1024)
#define NEWRMA_SHARE_PARTS 4
/* A target reduces a shared accumulate's chunk through a buffer of at most
 * this much (read from the origin, combined in place): it stays in the
 * cache between the two. */
#define NEWRMA_SHARE_REDUCE_BUFFER (256 * 1024)

/* Relays with more ranks than cores (Open MPI yields when idle): a target
 * is often off its core then, and a hand-over costs a context switch or
 * two, which only a group of many pieces (the kernel's work per piece)
 * pays back: a group is relayed from this many pieces or runs, or in a
 * granted PSCW epoch, whose target waits in MPI_Win_wait. */
#define NEWRMA_RELAY_UNATTENDED_PIECES 16

/* Relays (osc_newrma_relay.c): slots of a process's relay area and their
 * size; mappings of other processes' areas a target keeps; the most target
 * segments one relay scatters to or gathers from (a batch of small puts or
 * gets, the blocks of a derived datatype: osc_newrma_usermem.c,
 * osc_newrma_acc.c).  An accumulate's chunk is half a slot: the origin's
 * elements in the first half, the target's old values (a get_accumulate's)
 * in the second. */
#define NEWRMA_RELAY_SLOTS 4
#define NEWRMA_RELAY_SLOT_BYTES (16 * 1024)
#define NEWRMA_RELAY_PEERS 8
#define NEWRMA_RELAY_SEGS 1024
#define NEWRMA_RELAY_ACC_CHUNK (NEWRMA_RELAY_SLOT_BYTES / 2)

/* Batches (osc_newrma_usermem.c): at most NEWRMA_USERMEM_BATCH operations
 * (osc_newrma.h, where the window keeps them), each at most
 * osc_newrma_cma_batch_bytes. */
_Static_assert(NEWRMA_USERMEM_BATCH <= NEWRMA_RELAY_SEGS, "a batch is one relay");

/* ------------------------------------------------------------------ */
/* the choices                                                         */
/* ------------------------------------------------------------------ */

/* How a contiguous put or get of the user-memory table moves its bytes. */
typedef enum {
    NEWRMA_NODE_MAILBOX,      /* handed to a target inside MPI (may refuse: then the rest) */
    NEWRMA_NODE_BATCH,        /* batched: one system call or one relay at the next completion */
    NEWRMA_NODE_SHARED_COPY,  /* copied by both processes (may refuse: then single copy) */
    NEWRMA_NODE_SINGLE_COPY,  /* one system call now */
} osc_newrma_node_way_t;

/* Every way but the mailbox: small ones join the batch (which goes as one
 * relay or one system call, osc_newrma_node_policy_relay_pieces); a large
 * one is shared with a target inside MPI; the rest is one system call (a
 * single contiguous transfer is never relayed: one system call moves it at
 * least as fast as a hand-over and a second copy). */
static inline osc_newrma_node_way_t osc_newrma_node_policy_no_mailbox(const ompi_osc_newrma_module_t *module,
                                                                      size_t bytes)
{
    if (bytes <= module->cma_batch_bytes) {
        return NEWRMA_NODE_BATCH;
    }
    return bytes >= module->assist_share_bytes ? NEWRMA_NODE_SHARED_COPY : NEWRMA_NODE_SINGLE_COPY;
}

/* A contiguous put or get of `bytes` to another process: a small one is
 * offered to the target's mailbox first (no system call). */
static inline osc_newrma_node_way_t osc_newrma_node_policy_contiguous(const ompi_osc_newrma_module_t *module,
                                                                      size_t bytes)
{
    return bytes <= module->assist_move_bytes ? NEWRMA_NODE_MAILBOX : osc_newrma_node_policy_no_mailbox(module, bytes);
}

/* Are groups of pieces relayed at all on this window (the non-contiguous
 * puts and gets are then cut into pieces, a group at a time)? */
static inline bool osc_newrma_node_policy_relays(const ompi_osc_newrma_module_t *module)
{
    return 0 != module->assist_relay_piece_bytes;
}

/* Are `count` pieces or runs enough for a relay?  At least
 * assist_relay_min_pieces (2; more with more ranks than cores, where only a
 * large group pays for the hand-over) -- unless the target waits in
 * MPI_Win_wait for this very epoch, and so takes the relay at once. */
static inline bool osc_newrma_node_policy_relay_group(const ompi_osc_newrma_module_t *module, size_t count)
{
    return osc_newrma_node_policy_relays(module) && count >= 2
           && (count >= module->assist_relay_min_pieces || NEWRMA_WIN_PSCW_GRANTED == module->state);
}

/* Is a group of `count` pieces of `bytes` in all (a batch, or part of a
 * derived datatype's transfer) worth a relay?  Only a group of small
 * pieces: the kernel's work per piece makes one system call of many small
 * pieces dear, while pieces of a few hundred bytes and more it moves about
 * as fast as two memcpys through the slots. */
static inline bool osc_newrma_node_policy_relay_pieces(const ompi_osc_newrma_module_t *module, unsigned int count,
                                                       size_t bytes)
{
    return osc_newrma_node_policy_relay_group(module, count)
           && bytes <= (size_t) count * module->assist_relay_piece_bytes;
}

/* Could `count` elements of predefined `dt` to `target` go through the
 * mailbox at all?  (A window with a mailbox, not ourselves, payload fits.) */
static inline bool osc_newrma_node_policy_mailbox_fits(const ompi_osc_newrma_module_t *module, int target, int count,
                                                       struct ompi_datatype_t *dt)
{
    return (size_t) count * dt->super.size <= module->assist_max_bytes && target != module->rank;
}

/* Is an accumulate into `nruns` runs of the target, in elements of
 * `esize`, worth relaying?  Two runs or more (one run goes by single copy
 * in chunks, as fast), chunks of whole elements. */
bool osc_newrma_node_policy_relay_acc_fits(const ompi_osc_newrma_module_t *module, size_t nruns, size_t esize);

/* Is an accumulate (with_result: a get_accumulate) of `bytes` in elements
 * of `esize` worth sharing with its target? */
bool osc_newrma_node_policy_shared_acc_fits(const ompi_osc_newrma_module_t *module, size_t bytes, size_t esize,
                                            bool with_result);

/* ------------------------------------------------------------------ */
/* window creation                                                     */
/* ------------------------------------------------------------------ */

/* After the segment is attached: the window's mailbox, shared-copy and
 * relay limits, from this process's MCA parameters. */
void osc_newrma_node_policy_init(ompi_osc_newrma_module_t *module);

/* After the batch is set up (osc_newrma_module.c): puts and gets handed to
 * a target stay pending until the window's next completion, per window
 * like the batch, so not with threads; a relay is how a batch is issued,
 * so no batch, no relays. */
void osc_newrma_node_policy_batch_set(ompi_osc_newrma_module_t *module);

#endif /* OSC_NEWRMA_NODE_POLICY_H */
