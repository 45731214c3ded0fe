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
 * osc/newrma: relays (osc_newrma_relay.c).
 *
 * A relay moves a put, get or accumulate of a window of user memory on one
 * node (MPI_Win_create/create_dynamic) through shared memory when its
 * target is inside MPI: the writer copies a chunk into a slot, the reader
 * copies it out, the two streaming through NEWRMA_RELAY_SLOTS slots -- two
 * memcpys at cache speed where the kernel's process_vm_* may copy far
 * slower (docs/rationale.md, "Relays").  The origin posts the relay in
 * the target's mailbox (osc_newrma_mailbox.c); when to relay is
 * osc_newrma_node_policy.h's, and so are the sizes below.
 *
 *  - each process has one staging area, for all its windows (so no
 *    window's memory grows): a memfd made on its first relay, mapped
 *    shared, named to the target by its fd number and a random cookie;
 *  - a target maps an origin's area through /proc/<pid>/fd/<fd> (the
 *    ptrace permission single copy already needs) and keeps the last few
 *    mappings (NEWRMA_RELAY_PEERS), checked against the cookie so that a
 *    reused pid or fd never reads as the old area.
 */

#ifndef OSC_NEWRMA_RELAY_H
#define OSC_NEWRMA_RELAY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "osc_newrma.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_node_policy.h"

/* One target segment of a relay: address in the target, length. */
typedef struct {
    uint64_t addr;
    uint64_t len;
} osc_newrma_relay_seg_t;

/* The head of an area: the cookie, the two counters of the relay in
 * progress, each on a line of its own (the writer owns `filled`, the
 * reader `consumed`; the origin zeroes both before it posts a relay), and
 * the relay's target segments, which the origin writes before it posts:
 * the stream of chunks is their bytes in order, as it is the origin's own
 * segments' (the two lists have the same lengths). */
typedef struct {
    uint64_t cookie;
    _Alignas(64) uint64_t filled;               /* chunks published by the writer */
    _Alignas(64) uint64_t consumed;             /* chunks copied out by the reader */
    _Alignas(64) osc_newrma_relay_seg_t segs[NEWRMA_RELAY_SEGS];
} osc_newrma_relay_head_t;

typedef struct {
    int fd;                            /* in the owner's process */
    uint64_t cookie;
    osc_newrma_relay_head_t *head;
    char *slots;                       /* NEWRMA_RELAY_SLOTS * NEWRMA_RELAY_SLOT_BYTES */
} osc_newrma_relay_area_t;

/* This process's area, made on first use; NULL if it cannot be (then
 * relays are off for good in this process). */
const osc_newrma_relay_area_t *osc_newrma_relay_own(void);

/* Process `pid`'s area named by (fd, cookie), mapped or found mapped; NULL
 * if it cannot be mapped or is not the area named. */
const osc_newrma_relay_area_t *osc_newrma_relay_peer(pid_t pid, int fd, uint64_t cookie);

/* the slot of chunk `seq` */
static inline char *osc_newrma_relay_slot(const osc_newrma_relay_area_t *area, uint64_t seq)
{
    return area->slots + (seq % NEWRMA_RELAY_SLOTS) * (uint64_t) NEWRMA_RELAY_SLOT_BYTES;
}

/* Origin side, puts and gets of the user-memory table -- a window's
 * batch, or the contiguous pieces of a derived datatype's transfer -- to
 * a target inside MPI (its presence stamp is fresh): stream the `bytes` of
 * `nsegs` (at most NEWRMA_RELAY_SEGS) segments through this process's
 * relay area -- the writer copies chunks into its slots, the reader out of
 * them -- and return complete.  `local[i]` and `remote[i]` (target
 * addresses) have the same length.  OMPI_ERR_WOULD_BLOCK: not done (target
 * absent, mailbox busy, no area, not taken in time, or the target cannot
 * map the area); the caller copies it another way. */
int osc_newrma_relay_move(ompi_osc_newrma_module_t *module, int target, bool write, const struct iovec *local,
                          const struct iovec *remote, unsigned int nsegs, size_t bytes);

/* Origin side, accumulates and get_accumulates on the user-memory table
 * to a target inside MPI, under the stripes of the whole span (the caller
 * holds them for both processes): `bytes` of packed elements of predefined
 * `dt` at `origin` (NULL for MPI_NO_OP) streamed through this process's
 * relay area, NEWRMA_RELAY_ACC_CHUNK at a time; the target reduces each
 * chunk into its `nsegs` (at most NEWRMA_RELAY_SEGS) segments `remote`, of
 * whole elements, as it arrives, first leaving its old values in the slot
 * for `old` (unless NULL; packed like `origin`).  Complete when it
 * returns; OMPI_ERR_WOULD_BLOCK: nothing done, as osc_newrma_relay_move. */
int osc_newrma_relay_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin, void *old,
                                const struct iovec *remote, unsigned int nsegs, size_t bytes,
                                struct ompi_op_t *op, struct ompi_datatype_t *dt);

/* Target side, from osc_newrma_mailbox_serve: serve the relay posted
 * (`posted`: the state seen; `req`, `posted_payload`: the copies of the
 * request and its payload read before taking it) -- map the origin's area, stream, say DONE.  Returns the work
 * done (0: not taken). */
int osc_newrma_relay_serve(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t posted,
                           const osc_newrma_mailbox_request_t *req, const void *posted_payload);

/* Component finalize: every mapping and the own area released. */
void osc_newrma_relay_fini(void);

#endif /* OSC_NEWRMA_RELAY_H */
