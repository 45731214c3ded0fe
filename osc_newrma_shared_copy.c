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
 * osc/newrma: shared copies -- a large contiguous put, get, accumulate or
 * get_accumulate on a window of user memory on one node, done by origin
 * and target together.  The origin posts the copy in the target's mailbox
 * (osc_newrma_mailbox.c) and starts at once; a target inside MPI joins
 * from its progress (osc_newrma_mailbox_serve dispatches here); each
 * process takes the next chunk with a fetch-and-add until none are left,
 * so whoever is faster -- or alone -- copies more.  Each chunk is one
 * process_vm_readv/writev (osc_newrma_single_copy.c); an accumulate's
 * target reads the origin's elements and reduces them into its memory in
 * place, under the stripes the origin holds for both.  When copies are
 * shared, and in how many chunks: osc_newrma_node_policy.c.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/op/op.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_shared_copy.h"
#include "osc_newrma_single_copy.h"

/* ------------------------------------------------------------------ */
/* origin side                                                         */
/* ------------------------------------------------------------------ */

static uint64_t share_chunk(size_t bytes)
{
    uint64_t page = NEWRMA_SHARE_PAGE, chunk = ((uint64_t) bytes / NEWRMA_SHARE_PARTS + page - 1) & ~(page - 1);

    return chunk < NEWRMA_SHARE_MIN_CHUNK ? NEWRMA_SHARE_MIN_CHUNK : chunk;
}

/* Take chunks of a shared operation until none are left (either side's
 * loop), doing each with `fn`.  Returns the offset of a chunk that failed
 * (*ret: why; no more chunks are taken then) or NEWRMA_SHARE_NONE; *done:
 * bytes this process did. */
static uint64_t share_take_chunks(osc_newrma_share_t *share, uint64_t bytes, uint64_t chunk,
                                  osc_newrma_share_chunk_fn_t fn, void *ctx, int *ret, size_t *done)
{
    for (;;) {
        uint64_t off = osc_newrma_fetch_add_relaxed(&share->next, chunk), len;

        if (off >= bytes) {
            return NEWRMA_SHARE_NONE;
        }
        len = osc_newrma_chunk_len(bytes, off, chunk);
        *ret = fn(ctx, off, len);
        if (OMPI_SUCCESS != *ret) {
            return off;
        }
        *done += len;
    }
}

/* A shared copy's chunk: `mine` in this process, `theirs` in process
 * `pid`; `write` moves mine to theirs; `point`: the origin's or the
 * target's (tests fail them apart). */
typedef struct {
    pid_t pid;
    char *mine;
    uint64_t theirs;
    bool write;
    osc_newrma_fail_point_t point;
} share_copy_t;

static int share_copy_chunk(void *ctx, uint64_t off, uint64_t len)
{
    const share_copy_t *c = (const share_copy_t *) ctx;

    return osc_newrma_single_copy_at(c->point, c->pid, c->mine + off, c->theirs + off, len, c->write);
}

/* The origin's side of any shared operation: post it (the target joins
 * when it sees it), do chunks with `fn` until none are left, then withdraw
 * the request if the target never took it, or wait for the target's last
 * chunk; the rest of a chunk the target failed is done with `fn` too, from
 * the first byte it left undone to the chunk's end. */
static int share_run(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                     const osc_newrma_share_t *init, size_t init_bytes, osc_newrma_share_chunk_fn_t fn, void *ctx)
{
    osc_newrma_mailbox_t *box = osc_newrma_shm_mailbox(&module->shm, target);
    osc_newrma_share_t *share = (osc_newrma_share_t *) box->payload;
    uint64_t bytes = init->bytes, chunk = init->chunk;
    uint64_t mine;
    uint64_t failed, undone = 0;
    size_t ours = 0;
    unsigned int spins = 0;
    int ret = osc_newrma_mailbox_flush_pending(module);   /* the mailbox may hold our own request */

    /* Posted whether or not the target looks present: the origin does not
     * wait for it, so a target that never joins costs a claim and a
     * withdrawal (a few line transfers against a copy of a megabyte or
     * more), and one that is just entering MPI -- its stamp not fresh yet --
     * still joins. */
    if (OMPI_SUCCESS != ret || OMPI_SUCCESS != osc_newrma_mailbox_post(module, target, req, init, init_bytes, &mine)) {
        return OMPI_SUCCESS != ret ? ret : OMPI_ERR_WOULD_BLOCK;
    }
    /* no waiting for the target: we start at once, it joins when it sees
     * the request */
    (void) share_take_chunks(share, bytes, chunk, fn, ctx, &ret, &ours);
    /* every chunk is taken: a target that never joined is withdrawn from,
     * one that did is waited for (its last chunk at most) */
    if (osc_newrma_mailbox_withdraw(module, box, mine, 0, NEWRMA_MAILBOX_FREE)) {
        return ret;
    }
    while ((mine | NEWRMA_MAILBOX_DONE) != osc_newrma_load_acquire(&box->state)) {
        osc_newrma_backoff(&spins);
    }
    failed = osc_newrma_load_relaxed(&share->failed);   /* after DONE, acquired */
    osc_newrma_store_release(&box->state, mine | NEWRMA_MAILBOX_FREE);
    if (NEWRMA_SHARE_NONE != failed) {
        uint64_t chunk_start = failed - failed % chunk;
        undone = chunk_start + osc_newrma_chunk_len(bytes, chunk_start, chunk) - failed;
    }
    (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.shared_copy_bytes, bytes - ours - undone);
    /* the rest of a chunk the target could not finish: ours to do */
    if (0 != undone && OMPI_SUCCESS == ret) {
        ret = fn(ctx, failed, undone);
    }
    return ret;
}

int osc_newrma_shared_copy(ompi_osc_newrma_module_t *module, int target, bool write, void *local,
                           uint64_t taddr, size_t bytes)
{
    share_copy_t copy = { .pid = osc_newrma_shm_peer(&module->shm, target)->pid, .mine = local, .theirs = taddr,
                          .write = write, .point = NEWRMA_FAIL_SHARE_COPY_ORIGIN };
    osc_newrma_mailbox_request_t req = { .kind = write ? NEWRMA_MAILBOX_SHARE_PUT : NEWRMA_MAILBOX_SHARE_GET,
                                         .count = (uint32_t) module->rank, .addr = taddr };
    osc_newrma_share_t init = { .origin_addr = (uint64_t) (uintptr_t) local, .bytes = bytes,
                                .chunk = share_chunk(bytes), .next = 0, .failed = NEWRMA_SHARE_NONE };

    return share_run(module, target, &req, &init, sizeof(init), share_copy_chunk, &copy);
}

int osc_newrma_shared_copy_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin,
                                      void *result, uint64_t taddr, size_t bytes, struct ompi_op_t *op,
                                      struct ompi_datatype_t *dt, osc_newrma_share_chunk_fn_t fn, void *ctx)
{
    osc_newrma_mailbox_request_t req = { .kind = NEWRMA_MAILBOX_SHARE_ACC, .want_result = NULL != result,
                                         .dt_id = (uint16_t) dt->id, .op_index = op->o_f_to_c_index,
                                         .count = (uint32_t) module->rank, .addr = taddr };
    osc_newrma_share_result_t init = {
        .head = { .origin_addr = (uint64_t) (uintptr_t) origin, .bytes = bytes, .chunk = share_chunk(bytes),
                  .next = 0, .failed = NEWRMA_SHARE_NONE },
        .result_addr = (uint64_t) (uintptr_t) result };

    return share_run(module, target, &req, &init.head, NULL != result ? sizeof(init) : sizeof(init.head), fn, ctx);
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

/* A shared accumulate's chunk at the target: the origin's elements, read a
 * buffer at a time, combined into our memory in place (the origin holds
 * the stripes of the whole span for us); a get_accumulate's old values
 * written to the origin's result buffer first.  A piece whose copy fails is
 * not combined at all; `undone`: its first byte, where the origin resumes. */
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
    uint64_t undone;
} share_reduce_t;

static int share_reduce_chunk(void *ctx, uint64_t off, uint64_t len)
{
    share_reduce_t *r = (share_reduce_t *) ctx;
    int ret = OMPI_SUCCESS;

    for (uint64_t at = off ; at < off + len ; at += r->buffer_bytes) {
        size_t n = off + len - at < r->buffer_bytes ? off + len - at : r->buffer_bytes;
        ret = osc_newrma_single_copy_at(NEWRMA_FAIL_SHARE_REDUCE_READ, r->pid, r->buffer, r->origin_addr + at, n,
                                        false);
        if (OMPI_SUCCESS == ret && 0 != r->result_addr) {
            ret = osc_newrma_single_copy_at(NEWRMA_FAIL_SHARE_REDUCE_RESULT, r->pid, r->mine + at,
                                            r->result_addr + at, n, true);
        }
        if (OMPI_SUCCESS != ret) {
            r->undone = at;
            return ret;
        }
        osc_newrma_acc_combine(r->op, r->dt, r->mine + at, r->buffer, NULL, n / r->esize, r->esize);
    }
    return ret;
}

/* A shared accumulate's operation and type, checked (the request is a copy
 * read before it was taken). */
static bool share_reduce_setup(const ompi_osc_newrma_module_t *module, const void *posted_payload,
                               const osc_newrma_mailbox_request_t *req, uint64_t chunk, share_reduce_t *r)
{
    if (req->dt_id >= OMPI_DATATYPE_MPI_MAX_PREDEFINED
        || (req->want_result && module->assist_serve_bytes < sizeof(osc_newrma_share_result_t))) {
        return false;
    }
    r->result_addr = req->want_result ? ((const osc_newrma_share_result_t *) posted_payload)->result_addr : 0;
    r->dt = (struct ompi_datatype_t *) ompi_datatype_basicDatatypes[req->dt_id];
    r->op = (struct ompi_op_t *) opal_pointer_array_get_item(ompi_op_f_to_c_table, req->op_index);
    r->esize = NULL != r->dt ? r->dt->super.size : 0;
    r->buffer_bytes = chunk < NEWRMA_SHARE_REDUCE_BUFFER ? chunk : NEWRMA_SHARE_REDUCE_BUFFER;
    return NULL != r->op && 0 != r->esize && 0 == NEWRMA_SHARE_PAGE % r->esize;
}

/* Join a shared operation: read a put's chunks from the origin into our
 * memory, write a get's from our memory to the origin's buffer, or reduce
 * an accumulate's into our memory. */
int osc_newrma_shared_copy_serve(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t posted,
                                 const osc_newrma_mailbox_request_t *req, const void *posted_payload)
{
    osc_newrma_share_t *share = (osc_newrma_share_t *) box->payload;
    const osc_newrma_share_t *posted_share = posted_payload;
    uint64_t origin_addr = posted_share->origin_addr, bytes = posted_share->bytes, chunk = posted_share->chunk;
    uint64_t taken = (posted & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_TAKEN;
    int origin = (int) req->count, ret = OMPI_SUCCESS;
    share_reduce_t reduce = { .origin_addr = origin_addr, .mine = (char *) (uintptr_t) req->addr };
    share_copy_t copy = { .mine = (char *) (uintptr_t) req->addr, .theirs = origin_addr,
                          .write = NEWRMA_MAILBOX_SHARE_GET == req->kind, .point = NEWRMA_FAIL_SHARE_COPY_TARGET };
    bool is_acc = NEWRMA_MAILBOX_SHARE_ACC == req->kind;
    size_t done = 0;
    uint64_t failed;

    /* nothing read above is trusted before the compare-and-swap (a stale
     * copy of a withdrawn request fails it), beyond staying in bounds */
    if (origin < 0 || origin >= module->size || origin == module->rank || 0 == chunk
        || (is_acc && !share_reduce_setup(module, posted_payload, req, chunk, &reduce))) {
        return 0;
    }
    /* a buffer before taking it: without one the origin does it alone */
    if (is_acc && NULL == (reduce.buffer = malloc(reduce.buffer_bytes))) {
        return 0;
    }
    if (!osc_newrma_cas_acquire(&box->state, &posted, taken)) {
        free(reduce.buffer);
        return 0;
    }
    reduce.pid = copy.pid = osc_newrma_shm_peer(&module->shm, origin)->pid;
    failed = share_take_chunks(share, bytes, chunk, is_acc ? share_reduce_chunk : share_copy_chunk,
                               is_acc ? (void *) &reduce : (void *) &copy, &ret, &done);
    /* a copy's chunk is done again whole (the same bytes again); an
     * accumulate's from the piece that failed */
    failed = is_acc && NEWRMA_SHARE_NONE != failed ? reduce.undone : failed;
    osc_newrma_store_relaxed(&share->failed, failed);   /* published by DONE */
    osc_newrma_store_release(&box->state, (taken & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_DONE);
    free(reduce.buffer);
    return 1;
}
