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
 * osc/newrma: shared copies, large copies of windows of user memory on one
 * node done by origin and target together (osc_newrma_shared_copy.c; the
 * request goes through the target's mailbox, osc_newrma_mailbox.h; when to
 * share: osc_newrma_node_policy.h).
 */

#ifndef OSC_NEWRMA_SHARED_COPY_H
#define OSC_NEWRMA_SHARED_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_newrma.h"
#include "osc_newrma_mailbox.h"

/* A shared copy's payload in the mailbox: where the origin's bytes are,
 * how many, in what chunks; the offset of the next chunk to take (both
 * processes take chunks with a fetch-and-add); where the target stopped in
 * a chunk it failed: the first byte it left undone, the origin does the
 * rest of that chunk from there (an accumulate's pieces before it are
 * reduced already and must not be again).  40 bytes: the mailbox's first
 * hardware line. */
typedef struct {
    uint64_t origin_addr;
    uint64_t bytes;
    uint64_t chunk;
    uint64_t next;
    uint64_t failed;
} osc_newrma_share_t;
#define NEWRMA_SHARE_NONE UINT64_MAX
/* A shared get_accumulate's payload: the same, and where the origin wants
 * the old values (each process writes those of the chunks it takes).  Past
 * the first hardware line: only where the mailbox holds it (a 128-byte
 * cache line; not with 64). */
typedef struct {
    osc_newrma_share_t head;
    uint64_t result_addr;
} osc_newrma_share_result_t;

/* What a process does with the bytes [off, off + len) of a shared operation. */
typedef int (*osc_newrma_share_chunk_fn_t)(void *ctx, uint64_t off, uint64_t len);

/* Origin side, large contiguous puts and gets of the user-memory table:
 * post the copy to the target's mailbox and copy `bytes` with whichever
 * help it gives (a target inside MPI joins; each process takes the next
 * chunk until none are left); complete when it returns
 * (OMPI_ERR_WOULD_BLOCK: mailbox busy, not posted -- the caller copies it
 * alone). */
int osc_newrma_shared_copy(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                           uint64_t taddr, size_t bytes);

/* Origin side, large accumulates and get_accumulates (`bytes` of packed
 * elements of predefined `dt` at `origin`, to `taddr`; old values into
 * `result` unless NULL): the caller holds the accumulate stripes of the
 * whole span, for both processes; each takes the next chunk until none are
 * left -- the target reads the origin's elements (writes its old ones to
 * `result`) and reduces them into its memory in place, the origin does its
 * chunks with `fn` (read, combine, write back).  Same returns as
 * osc_newrma_shared_copy. */
int osc_newrma_shared_copy_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin,
                                      void *result, uint64_t taddr, size_t bytes, struct ompi_op_t *op,
                                      struct ompi_datatype_t *dt, osc_newrma_share_chunk_fn_t fn, void *ctx);

/* Target side, from osc_newrma_mailbox_serve: join the shared operation
 * posted (`posted`: the state seen; `req`, `posted_payload`: the copies of
 * the request and its payload read before taking it).  Returns the work done (0: not taken). */
int osc_newrma_shared_copy_serve(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t posted,
                                 const osc_newrma_mailbox_request_t *req, const void *posted_payload);

#endif /* OSC_NEWRMA_SHARED_COPY_H */
