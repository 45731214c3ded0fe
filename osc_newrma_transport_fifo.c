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
 * osc/newrma: the node-local FIFO transport of the active-message path (see
 * osc_newrma_transport_fifo.h for what it offers, osc_newrma_transport.h
 * for the interface it implements, docs/am-protocol.md and
 * docs/shared-segment.md for why it is built this way).
 *
 * The queue.  Each receiver has `depth` cells, an enqueue ticket (a 64-bit
 * counter its producers advance with a compare-and-swap) and a dequeue
 * position (written by the receiver only).  A producer may take ticket h
 * only while h - dequeue < depth, i.e. once the receiver has finished with
 * the cell's previous use; it then fills cell h % depth and writes the
 * cell's stamp (h + 1) last.  The receiver waits for the stamp it expects at
 * its position, runs the cell, then publishes the next position.  So the
 * receiver never writes a line a producer writes (cells, ticket) and the
 * producers never write the receiver's line: no line ping-pongs between
 * writers, and an empty queue costs the receiver one load of its next
 * cell's stamp, which stays in its cache until a producer fills it.
 *
 * The segment's layout is node rank 0's: it writes its depth, cell size,
 * cache line and thread level into the header before anyone else maps the
 * segment, and every process lays the segment out from that header, not
 * from its own MCA values (segment_adopt_header).
 *
 * Everything here runs with the component's AM lock held: a process sends
 * and receives from one thread at a time, so one producer's fragments
 * enter a queue in order, and the per-window state needs no other lock.
 */

#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "opal/mca/shmem/base/base.h"
#include "opal/util/show_help.h"
#include "ompi/communicator/communicator.h"
#include "ompi/runtime/mpiruntime.h"

#include "osc_newrma.h"
#include "osc_newrma_am.h"
#include "osc_newrma_transport.h"
#include "osc_newrma_transport_fifo.h"

/* A packet (or its unsent rest) waiting for room in a receiver's queue. */
typedef struct {
    opal_list_item_t super;
    int dest;                    /* receiver's rank on the node */
    size_t total;                /* the packet's stream length */
    size_t offset;               /* stream bytes already in the queue */
    size_t base;                 /* stream offset of data[0] */
    char data[];
} backlog_t;

/* A packet being put back together: fragments of one sender arrive in
 * order, but fragments of different senders interleave. */
typedef struct {
    size_t total;
    size_t got;
    char data[];                 /* 16-byte aligned: two size_t before it */
} partial_t;

struct osc_newrma_fifo_t {
    struct osc_newrma_fifo_t *next;      /* this process's FIFO windows */
    ompi_osc_newrma_module_t *module;
    struct ompi_communicator_t *node_comm;   /* the window's processes on this node */
    bool own_node_comm;                  /* split from the window's (else the same) */
    int local_rank;
    int local_size;
    int *window_of;                      /* node rank -> window rank (mixed windows) */
    osc_newrma_fifo_layout_t layout;
    osc_newrma_mapping_t mapping;
    char *base;
    uint64_t tail;                       /* our dequeue position (private copy) */
    opal_hash_table_t partials;          /* sender's window rank -> partial_t */
    bool partials_built;
    opal_list_t backlog;                 /* in send order */
    size_t backlog_count;
    uint32_t *queued;                    /* backlog entries per receiver */
    uint32_t *blocked;                   /* pass in which a receiver was found full */
    uint32_t pass;
    uint64_t sent, backlogged, fragments;   /* statistics (verbose output at free) */
};
typedef struct osc_newrma_fifo_t fifo_t;

/* This process's FIFO windows; changed under the AM lock. */
static fifo_t *fifo_windows;

static size_t align_up(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

/* ------------------------------------------------------------------ */
/* layout                                                              */
/* ------------------------------------------------------------------ */

int osc_newrma_fifo_layout(osc_newrma_fifo_layout_t *layout, const osc_newrma_fifo_params_t *params)
{
    size_t line = params->cacheline, offset = 0, in_rank = 0;
    size_t smallest = sizeof(osc_newrma_fifo_cell_t) + sizeof(osc_newrma_am_hdr_t);

    if (params->nranks <= 0 || 0 == line || (line & (line - 1)) || params->depth < 2) {
        return OMPI_ERR_BAD_PARAM;
    }
    memset(layout, 0, sizeof(*layout));
    layout->cacheline = line;
    layout->depth = params->depth;
    /* a cell is whole lines (cells of different tickets are filled by
     * different producers) and holds at least a packet header */
    layout->cell_size = align_up(params->cell_size > smallest ? params->cell_size : smallest, line);

    layout->header_offset = offset;
    offset += align_up(sizeof(osc_newrma_fifo_header_t), line);

    /* a receiver's block: the producers' line, the receiver's line(s), the
     * cells; the block is whole lines, so no two receivers share one */
    layout->enqueue_in_rank = in_rank;
    in_rank += line;
    layout->dequeue_in_rank = in_rank;
    layout->backlog_in_rank = in_rank + sizeof(int64_t);
    if (params->thread_multiple) {
        /* the consumer (often the progress thread) and a sending thread
         * write these: on lines of their own they do not bounce between
         * the two threads' cores */
        in_rank += line;
        layout->backlog_in_rank = in_rank;
    }
    in_rank += line;
    layout->cells_in_rank = in_rank;
    in_rank += (size_t) params->depth * layout->cell_size;
    layout->rank_stride = in_rank;

    layout->rank_offset = offset;
    offset += (size_t) params->nranks * layout->rank_stride;
    layout->total_size = offset;
    return OMPI_SUCCESS;
}

void osc_newrma_fifo_layout_print(const osc_newrma_fifo_layout_t *l, int nranks,
                                  void (*print)(void *ctx, const char *line), void *ctx)
{
    char text[256];

    snprintf(text, sizeof(text), "FIFO segment of %d ranks: %lu bytes in all, cache line %lu, "
             "%u cells of %lu bytes per rank, rank block %lu bytes", nranks, (unsigned long) l->total_size,
             (unsigned long) l->cacheline, l->depth, (unsigned long) l->cell_size, (unsigned long) l->rank_stride);
    print(ctx, text);
    osc_newrma_shm_print_region(print, ctx, "header", l->header_offset, l->rank_offset - l->header_offset,
                 "magic, size, ranks, depth, cell size; written once by node rank 0");
    osc_newrma_shm_print_region(print, ctx, "receiver blocks", l->rank_offset, (size_t) nranks * l->rank_stride, "one per rank:");
    osc_newrma_shm_print_region(print, ctx, "  enqueue ticket", l->enqueue_in_rank, l->cacheline, "written by the rank's senders");
    osc_newrma_shm_print_region(print, ctx, "  owner words", l->dequeue_in_rank, l->cells_in_rank - l->dequeue_in_rank,
                 "dequeue position, own backlog; written by the rank");
    snprintf(text, sizeof(text), "%u x %lu bytes, each filled by the sender that reserved it", l->depth,
             (unsigned long) l->cell_size);
    osc_newrma_shm_print_region(print, ctx, "  cells", l->cells_in_rank, (size_t) l->depth * l->cell_size, text);
}

/* ------------------------------------------------------------------ */
/* where things are                                                    */
/* ------------------------------------------------------------------ */

static char *rank_block(const fifo_t *f, int local)
{
    return f->base + f->layout.rank_offset + (size_t) local * f->layout.rank_stride;
}

static int64_t *enqueue_word(const fifo_t *f, int local)
{
    return (int64_t *) (rank_block(f, local) + f->layout.enqueue_in_rank);
}

static int64_t *dequeue_word(const fifo_t *f, int local)
{
    return (int64_t *) (rank_block(f, local) + f->layout.dequeue_in_rank);
}

static int64_t *backlog_word(const fifo_t *f, int local)
{
    return (int64_t *) (rank_block(f, local) + f->layout.backlog_in_rank);
}

static osc_newrma_fifo_cell_t *cell_at(const fifo_t *f, int local, uint64_t ticket)
{
    return (osc_newrma_fifo_cell_t *) (rank_block(f, local) + f->layout.cells_in_rank
                                       + (size_t) (ticket % f->layout.depth) * f->layout.cell_size);
}

static size_t cell_capacity(const fifo_t *f)
{
    return f->layout.cell_size - sizeof(osc_newrma_fifo_cell_t);
}

/* window rank -> node rank, or -1 if the peer is on another node */
static int local_of(const fifo_t *f, int peer)
{
    if (NULL == f->window_of) {
        return peer;    /* the whole window is on this node */
    }
    return osc_newrma_rank_index(f->window_of, (size_t) f->local_size, peer);
}

/* ------------------------------------------------------------------ */
/* producing                                                           */
/* ------------------------------------------------------------------ */

/* A packet's bytes as one stream: the header and the payload, or a
 * backlog entry's copy of what was left (starting at stream offset base). */
typedef struct {
    const char *a;
    size_t alen;
    const char *b;
    size_t blen;
    size_t base;
} stream_t;

static void stream_copy(const stream_t *s, size_t from, char *to, size_t n)
{
    size_t rel = from - s->base;

    if (rel < s->alen) {
        size_t first = s->alen - rel < n ? s->alen - rel : n;
        memcpy(to, s->a + rel, first);
        to += first;
        n -= first;
        rel = s->alen;
    }
    if (n > 0) {
        memcpy(to, s->b + (rel - s->alen), n);
    }
}

/* Take up to `want` consecutive tickets of the receiver's queue, as many as
 * it has room for: one compare-and-swap (and one look at the receiver's
 * line) for a run of fragments instead of one per cell.  Returns how many
 * (0: full, the caller keeps the rest in its backlog). */
static size_t reserve(const fifo_t *f, int dest, size_t want, int64_t *first)
{
    int64_t *enqueue = enqueue_word(f, dest), *dequeue = dequeue_word(f, dest);

    for (;;) {
        /* acquire: the receiver is done reading the cells it gave back */
        int64_t h = osc_newrma_load_relaxed(enqueue), t = osc_newrma_load_acquire(dequeue);
        int64_t room = (int64_t) f->layout.depth - (h - t);
        size_t take;

        if (room <= 0) {
            return 0;
        }
        take = (size_t) room < want ? (size_t) room : want;
        if (osc_newrma_cas_relaxed(enqueue, &h, h + (int64_t) take)) {   /* tickets only */
            *first = h;
            return take;
        }
    }
}

/* Fill one reserved cell with `n` stream bytes from `offset`; its stamp is
 * written last, so the receiver may start on it while we fill the next. */
static void fill_cell(const fifo_t *f, int dest, int64_t ticket, size_t total, size_t offset, size_t n,
                      const stream_t *s)
{
    osc_newrma_fifo_cell_t *cell = cell_at(f, dest, (uint64_t) ticket);

    cell->sender = f->module->rank;
    cell->bytes = (uint32_t) n;
    cell->total = total;
    cell->first = 0 == offset;
    stream_copy(s, offset, (char *) (cell + 1), n);
    osc_newrma_store_release(&cell->stamp, ticket + 1);   /* the contents before the stamp */
}

/* Put as much of the stream from `offset` on as fits into dest's queue;
 * returns the new offset (== total: all of it). */
static size_t push_stream(const fifo_t *f, int dest, size_t total, size_t offset, const stream_t *s)
{
    size_t capacity = cell_capacity(f), got;
    int64_t ticket;

    while (offset < total
           && 0 < (got = reserve(f, dest, (total - offset + capacity - 1) / capacity, &ticket))) {
        for (size_t i = 0 ; i < got ; ++i) {
            size_t n = total - offset < capacity ? total - offset : capacity;
            fill_cell(f, dest, ticket + (int64_t) i, total, offset, n, s);
            offset += n;
        }
    }
    return offset;
}

static void backlog_publish(const fifo_t *f)
{
    osc_newrma_store_relaxed(backlog_word(f, f->local_rank), (int64_t) f->backlog_count);
}

/* Keep the rest of a packet (from `offset` on) for later: copied, so the
 * caller's buffers are free once we return. */
static int backlog_add(fifo_t *f, int dest, size_t total, size_t offset, const stream_t *s)
{
    backlog_t *entry = malloc(sizeof(*entry) + (total - offset));

    if (NULL == entry) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&entry->super, opal_list_item_t);
    entry->dest = dest;
    entry->total = total;
    entry->offset = offset;
    entry->base = offset;
    stream_copy(s, offset, entry->data, total - offset);
    opal_list_append(&f->backlog, &entry->super);
    f->queued[dest]++;
    f->backlog_count++;
    backlog_publish(f);
    return OMPI_SUCCESS;
}

static void backlog_free(fifo_t *f, backlog_t *entry)
{
    opal_list_remove_item(&f->backlog, &entry->super);
    f->queued[entry->dest]--;
    f->backlog_count--;
    OBJ_DESTRUCT(&entry->super);
    free(entry);
}

/* Push what fits of a backlog entry now.  A full queue is left for the
 * next pass (waiting a few spins for a receiver to drain it did not pay:
 * docs/tuning.md, row 64). */
static size_t push_backlog_entry(const fifo_t *f, backlog_t *entry)
{
    stream_t s = { .a = entry->data, .alen = entry->total - entry->base, .base = entry->base };

    return push_stream(f, entry->dest, entry->total, entry->offset, &s);
}

/* Push backlog entries in order; once a receiver's queue is found full,
 * its later entries wait for the next pass (they must stay behind). */
static bool backlog_retry(fifo_t *f)
{
    backlog_t *entry, *next;
    bool any = false;

    if (0 == ++f->pass) {
        f->pass = 1;     /* 0 means "never blocked" */
    }
    OPAL_LIST_FOREACH_SAFE(entry, next, &f->backlog, backlog_t) {
        size_t before = entry->offset;

        if (f->blocked[entry->dest] == f->pass) {
            continue;
        }
        entry->offset = push_backlog_entry(f, entry);
        any |= entry->offset != before;
        if (entry->offset < entry->total) {
            f->blocked[entry->dest] = f->pass;
            continue;
        }
        backlog_free(f, entry);
    }
    backlog_publish(f);
    return any;
}

/* Every byte is in the receiver's queue or copied to the backlog when this
 * returns: done at once (1), `done` never called. */
static int fifo_send(ompi_osc_newrma_module_t *module, int peer, const void *header, size_t header_len,
                     const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg)
{
    fifo_t *f = module->am_fifo;
    int dest = local_of(f, peer);
    stream_t s = { .a = header, .alen = header_len, .b = payload, .blen = len, .base = 0 };
    size_t total = header_len + len, offset = 0;
    int ret;

    (void) done; (void) arg;
    f->sent++;
    f->fragments += (total + cell_capacity(f) - 1) / cell_capacity(f);
    /* behind anything already waiting for this receiver */
    if (0 == f->queued[dest]) {
        offset = push_stream(f, dest, total, 0, &s);
        if (offset == total) {
            return 1;
        }
    }
    f->backlogged++;
    ret = backlog_add(f, dest, total, offset, &s);
    return OMPI_SUCCESS == ret ? 1 : ret;
}

/* ------------------------------------------------------------------ */
/* consuming                                                           */
/* ------------------------------------------------------------------ */

static void deliver(char *stream, size_t total)
{
    size_t header_len = sizeof(osc_newrma_am_hdr_t);

    if (total < header_len) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "FIFO: dropped a packet of %lu bytes (shorter than a header)", (unsigned long) total);
        return;
    }
    osc_newrma_am_receive(stream, header_len, stream + header_len, total - header_len, NULL);
}

/* Run one cell.  False if it cannot be taken now (no memory to put its
 * packet together): it stays in the queue and is tried again later. */
static bool consume(fifo_t *f, osc_newrma_fifo_cell_t *cell)
{
    char *data = (char *) (cell + 1);
    void *value = NULL;
    partial_t *partial = NULL;

    if (cell->first && cell->bytes == cell->total) {
        deliver(data, cell->total);      /* the common case: straight from the cell */
        return true;
    }
    if (OPAL_SUCCESS == opal_hash_table_get_value_uint32(&f->partials, (uint32_t) cell->sender, &value)) {
        partial = value;
    }
    if (cell->first) {
        if (NULL != partial) {
            NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "FIFO: rank %d started a packet before finishing one", cell->sender);
            free(partial);
        }
        partial = malloc(sizeof(*partial) + cell->total);
        if (NULL == partial) {
            opal_hash_table_remove_value_uint32(&f->partials, (uint32_t) cell->sender);
            return false;
        }
        partial->total = cell->total;
        partial->got = 0;
        opal_hash_table_set_value_uint32(&f->partials, (uint32_t) cell->sender, partial);
    } else if (NULL == partial || partial->got + cell->bytes > partial->total) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "FIFO: dropped a stray fragment from rank %d", cell->sender);
        return true;
    }
    memcpy(partial->data + partial->got, data, cell->bytes);
    partial->got += cell->bytes;
    if (partial->got == partial->total) {
        opal_hash_table_remove_value_uint32(&f->partials, (uint32_t) cell->sender);
        deliver(partial->data, partial->total);
        free(partial);
    }
    return true;
}

/* Run the cells waiting in our queue, at most two queues' worth (64 cells
 * at least: a sender refilling a tiny queue as we drain it keeps going) so
 * a stream of packets cannot keep progress here forever.  The position is
 * published every few cells (and at the end), not after each: producers
 * read that line, so each write costs them a miss. */
static bool drain(fifo_t *f)
{
    unsigned int budget = 2 * f->layout.depth < 64 ? 64 : 2 * f->layout.depth, unpublished = 0;
    unsigned int publish_every = f->layout.depth >= 32 ? 8 : 1;
    bool any = false;

    while (budget-- > 0) {
        osc_newrma_fifo_cell_t *cell = cell_at(f, f->local_rank, f->tail);
        if (osc_newrma_load_acquire(&cell->stamp) != (int64_t) f->tail + 1) {   /* the contents after it */
            break;
        }
        if (!consume(f, cell)) {
            break;
        }
        f->tail++;
        any = true;
        if (++unpublished >= publish_every) {
            /* release: done reading before the cells are given back */
            osc_newrma_store_release(dequeue_word(f, f->local_rank), (int64_t) f->tail);
            unpublished = 0;
        }
    }
    if (unpublished > 0) {
        osc_newrma_store_release(dequeue_word(f, f->local_rank), (int64_t) f->tail);
    }
    return any;
}

static bool fifo_has_work(const fifo_t *f)
{
    return f->backlog_count > 0 || osc_newrma_load_relaxed(&cell_at(f, f->local_rank, f->tail)->stamp) == (int64_t) f->tail + 1;
}

/* Our own queues first, then the backlogs (see the header). */
static int fifo_progress(void)
{
    bool any = false;

    for (fifo_t *f = fifo_windows ; NULL != f ; f = f->next) {
        any |= drain(f);
    }
    for (fifo_t *f = fifo_windows ; NULL != f ; f = f->next) {
        if (f->backlog_count > 0) {
            any |= backlog_retry(f);
        }
    }
    return any;
}

/* Any FIFO window in this process? (a load of a pointer) */
static bool fifo_active(void)
{
    return NULL != fifo_windows;
}

/* One load of a line of our own per window when idle. */
static bool fifo_any_work(void)
{
    for (fifo_t *f = fifo_windows ; NULL != f ; f = f->next) {
        if (fifo_has_work(f)) {
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* window life cycle                                                   */
/* ------------------------------------------------------------------ */

/* Is the window all on this node?  osc_newrma_fifo_node_ranks > 0 pretends
 * nodes of that many consecutive ranks of each node (tests of windows
 * spanning nodes on one machine). */
static bool window_spans_nodes(const ompi_osc_newrma_module_t *module)
{
    return mca_osc_newrma_component.fifo_node_ranks > 0
        || ompi_group_have_remote_peers(module->comm->c_local_group);
}

/* The window's processes on this node: the window's communicator itself,
 * or (window_of allocated by the caller) a split of it. */
static int node_comm_init(fifo_t *f, ompi_osc_newrma_module_t *module)
{
    struct ompi_communicator_t *comm = module->comm;
    unsigned int pretend = mca_osc_newrma_component.fifo_node_ranks;
    int ret;

    if (NULL == f->window_of) {
        f->node_comm = comm;
        f->local_rank = module->rank;
        f->local_size = module->size;
        return OMPI_SUCCESS;
    }
    ret = ompi_comm_split_type(comm, MPI_COMM_TYPE_SHARED, module->rank, NULL, &f->node_comm);
    if (OMPI_SUCCESS == ret && pretend > 0) {
        /* pretend nodes inside the real one: never a segment across nodes */
        struct ompi_communicator_t *real = f->node_comm;
        ret = ompi_comm_split(real, ompi_comm_rank(real) / (int) pretend, module->rank, &f->node_comm, false);
        ompi_comm_free(&real);
    }
    if (OMPI_SUCCESS != ret) {
        f->node_comm = NULL;
        return ret;
    }
    f->own_node_comm = true;
    f->local_rank = ompi_comm_rank(f->node_comm);
    f->local_size = ompi_comm_size(f->node_comm);
    /* ranks kept in window order (key = window rank): window_of is sorted */
    return f->node_comm->c_coll->coll_allgather(&module->rank, 1, MPI_INT, f->window_of, 1, MPI_INT,
                                                f->node_comm, f->node_comm->c_coll->coll_allgather_module);
}

static void print_verbose(void *ctx, const char *line)
{
    (void) ctx;
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "%s", line);
}

/* Node rank 0 writes the header before anyone else maps the segment (a
 * fill of osc_newrma_shm_map): it is there for everyone when mapping
 * returns. */
static void segment_fill_header(void *ctx, char *base)
{
    const fifo_t *f = ctx;
    osc_newrma_fifo_header_t *header = (osc_newrma_fifo_header_t *) (base + f->layout.header_offset);

    header->magic = NEWRMA_FIFO_MAGIC;
    header->total_size = f->layout.total_size;
    header->nranks = f->local_size;
    header->depth = f->layout.depth;
    header->cell_size = f->layout.cell_size;
    header->cacheline = (uint32_t) f->layout.cacheline;
    header->thread_multiple = osc_newrma_thread_multiple();   /* what segment_init laid out with */
}

/* The layout every process uses: the one node rank 0 made, from its header
 * (its osc_newrma_fifo_depth, fifo_fragment_size, cache line and thread
 * level), not this process's own values, which may differ.  The same pure
 * function of the same header in every process, so a header that does not
 * describe the mapped segment fails every process alike. */
static int segment_adopt_header(fifo_t *f)
{
    const osc_newrma_fifo_header_t *header = (const osc_newrma_fifo_header_t *) (f->base + f->layout.header_offset);
    osc_newrma_fifo_params_t params = {
        .nranks = header->nranks,
        .depth = header->depth,
        .cell_size = header->cell_size,
        .cacheline = header->cacheline,
        .thread_multiple = 0 != header->thread_multiple,
    };
    int ret = NEWRMA_FIFO_MAGIC == header->magic && header->nranks == f->local_size
              && header->total_size <= f->mapping.size ? osc_newrma_fifo_layout(&f->layout, &params)
                                                       : OMPI_ERR_BAD_PARAM;

    if (OMPI_SUCCESS == ret && f->layout.total_size != header->total_size) {
        ret = OMPI_ERR_BAD_PARAM;
    }
    if (OMPI_SUCCESS != ret && 0 == f->local_rank) {
        opal_show_help("help-osc-newrma.txt", "fifo header mismatch", true, (unsigned long) header->magic,
                       (int) header->nranks, f->local_size, header->depth, (unsigned long) header->cell_size,
                       (unsigned long) header->total_size, (unsigned long) f->mapping.size);
    }
    return ret;
}

static int segment_init(fifo_t *f)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    osc_newrma_fifo_params_t params = {
        .nranks = f->local_size,
        .depth = c->fifo_depth,
        .cell_size = c->fifo_fragment_size,
        .cacheline = c->cacheline,
        .thread_multiple = osc_newrma_thread_multiple(),
    };
    int ret = osc_newrma_fifo_layout(&f->layout, &params);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (ompi_osc_base_framework.framework_verbose >= MCA_BASE_VERBOSE_DEBUG && 0 == f->local_rank) {
        osc_newrma_fifo_layout_print(&f->layout, f->local_size, print_verbose, NULL);
    }
    /* only node rank 0's layout sizes and fills the file (the file starts
     * zeroed: every ticket, position and stamp 0; nobody sends before
     * window creation's closing barrier); the page-aligned mapping is
     * aligned for any process's cache line */
    ret = osc_newrma_shm_map(f->node_comm, f->layout.total_size, c->cacheline, &f->mapping, &f->base,
                             segment_fill_header, f, NULL);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    return segment_adopt_header(f);
}

static int state_init(fifo_t *f)
{
    OBJ_CONSTRUCT(&f->backlog, opal_list_t);
    OBJ_CONSTRUCT(&f->partials, opal_hash_table_t);
    f->partials_built = true;
    f->queued = calloc((size_t) f->local_size, sizeof(uint32_t));
    f->blocked = calloc((size_t) f->local_size, sizeof(uint32_t));
    if (NULL == f->queued || NULL == f->blocked) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return opal_hash_table_init(&f->partials, 16);
}

static void fifo_free(fifo_t *f)
{
    if (f->partials_built) {
        uint32_t key;
        void *value, *node = NULL;
        backlog_t *entry, *next;

        if (OPAL_SUCCESS == opal_hash_table_get_first_key_uint32(&f->partials, &key, &value, &node)) {
            do {
                free(value);
            } while (OPAL_SUCCESS == opal_hash_table_get_next_key_uint32(&f->partials, &key, &value, node, &node));
        }
        OBJ_DESTRUCT(&f->partials);
        OPAL_LIST_FOREACH_SAFE(entry, next, &f->backlog, backlog_t) {
            backlog_free(f, entry);
        }
        OBJ_DESTRUCT(&f->backlog);
    }
    if (NULL != f->base) {
        osc_newrma_shm_unmap(&f->mapping);
    }
    if (f->own_node_comm && NULL != f->node_comm) {
        ompi_comm_free(&f->node_comm);
    }
    free(f->window_of);
    free(f->queued);
    free(f->blocked);
    free(f);
}

/* Collective over the window: find the window's processes on this node and,
 * if there are others, create and map the FIFO segment.  Leaves
 * module->am_fifo NULL when no peer is reachable through it -- and when
 * every peer must look remote (osc_newrma_force_remote). */
static int fifo_window_init(ompi_osc_newrma_module_t *module)
{
    fifo_t *f;
    int ret, ok, all_ok = 0;

    if (module->size < 2 || mca_osc_newrma_component.force_remote) {
        return OMPI_SUCCESS;
    }
    f = calloc(1, sizeof(*f));
    if (NULL == f) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    f->module = module;
    /* a window spanning nodes maps ranks; the node has at most all of them
     * (memory taken before any collective, so a failure is agreed on) */
    ok = true;
    if (window_spans_nodes(module)) {
        f->window_of = malloc(sizeof(int) * (size_t) module->size);
        ok = NULL != f->window_of;
    }
    ret = module->comm->c_coll->coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, module->comm,
                                               module->comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS == ret && !all_ok) {
        ret = OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OMPI_SUCCESS == ret) {
        ret = node_comm_init(f, module);
    }
    if (OMPI_SUCCESS != ret || 1 == f->local_size) {
        fifo_free(f);          /* alone on this node: nothing to do */
        return ret;
    }
    ret = segment_init(f);     /* collective over the node, fails alike */
    if (OMPI_SUCCESS == ret) {
        ret = state_init(f);
    }
    if (OMPI_SUCCESS != ret) {
        fifo_free(f);
        return ret;
    }
    osc_newrma_am_enter();
    module->am_fifo = f;
    f->next = fifo_windows;
    fifo_windows = f;
    osc_newrma_am_leave();
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "FIFO transport to %d processes on this node: %u cells of %lu bytes each, "
                   "segment %lu bytes", f->local_size - 1, f->layout.depth, (unsigned long) f->layout.cell_size,
                   (unsigned long) f->layout.total_size);
    return OMPI_SUCCESS;
}

struct ompi_communicator_t *osc_newrma_fifo_node_comm(const ompi_osc_newrma_module_t *module)
{
    const fifo_t *f = module->am_fifo;

    return NULL != f && NULL != f->window_of ? f->node_comm : NULL;
}

/* Push out this window's backlog, so that once every process has passed
 * MPI_Win_free's barrier every packet of the window is in a queue. */
static int fifo_window_quiesce(ompi_osc_newrma_module_t *module)
{
    fifo_t *f = module->am_fifo;

    if (NULL == f) {
        return OMPI_SUCCESS;
    }
    osc_newrma_am_enter();
    while (f->backlog_count > 0) {
        osc_newrma_am_progress_once();
    }
    osc_newrma_am_leave();
    return OMPI_SUCCESS;
}

/* After that barrier: run what is left in our queue, unregister, unmap. */
static void fifo_window_fini(ompi_osc_newrma_module_t *module)
{
    fifo_t *f = module->am_fifo, **link;

    if (NULL == f) {
        return;
    }
    osc_newrma_am_enter();
    /* every process has pushed its backlog and passed the barrier: what is
     * still queued for us (nothing, in a correct program) is run now */
    if (drain(f)) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "FIFO: packets arrived after the window's last epoch");
    }
    for (link = &fifo_windows ; *link != f ; link = &(*link)->next) {
    }
    *link = f->next;
    module->am_fifo = NULL;
    if (f->backlog_count > 0) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "FIFO: %lu packets never sent (window freed)", (unsigned long) f->backlog_count);
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "FIFO: sent %lu packets in %lu fragments, %lu of them waited in the backlog",
                   (unsigned long) f->sent, (unsigned long) f->fragments, (unsigned long) f->backlogged);
    osc_newrma_am_leave();
    fifo_free(f);
}

static bool fifo_reaches(const ompi_osc_newrma_module_t *module, int peer)
{
    return NULL != module->am_fifo && local_of(module->am_fifo, peer) >= 0;
}

/* ------------------------------------------------------------------ */
/* the transport                                                       */
/* ------------------------------------------------------------------ */

const osc_newrma_transport_t osc_newrma_transport_fifo = {
    .name = "fifo",
    .window_init = fifo_window_init,
    .window_quiesce = fifo_window_quiesce,
    .window_fini = fifo_window_fini,
    .reaches = fifo_reaches,
    .send = fifo_send,
    .progress = fifo_progress,
    .has_work = fifo_any_work,
    .active = fifo_active,
};
