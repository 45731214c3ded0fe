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
 * osc/newrma: the node-local FIFO transport of the active-message path
 * (one of the transports of osc_newrma_transport.h; its code is
 * osc_newrma_transport_fifo.c).
 *
 * An active-message window whose peers share this node (all of them with
 * osc_newrma_force_am, or when single-copy access is refused; some of them
 * in a window that spans nodes) sends its packets to those peers through
 * FIFOs in a shared segment of its own, not through UCX.  One bounded
 * multi-producer, single-consumer queue per receiving process: fixed-size
 * cells, a packet larger than a cell split into fragments the receiver
 * puts back together (per sender).  A full queue never drops a packet and
 * never makes the sender wait: the rest of the packet is copied to the
 * sender's backlog and pushed from progress, behind which every later packet
 * to that receiver queues.
 *
 * The segment follows ompi-rfc-fragmented-sm-allocations.txt: one
 * allocation, every offset and the exact size computed up front by
 * osc_newrma_fifo_layout() (a pure function), cache-line alignment, queues
 * and the consumer's word local to the receiver, the producers' word on a
 * line of its own, the read-only "wrapper" (the header) never on a line that
 * is written at run time.  See docs/shared-segment.md and
 * docs/am-protocol.md.
 */

#ifndef OSC_NEWRMA_TRANSPORT_FIFO_H
#define OSC_NEWRMA_TRANSPORT_FIFO_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_newrma_compat.h"

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;
struct osc_newrma_fifo_t;

#define NEWRMA_FIFO_MAGIC 0x6e657766696602ull   /* "newfif" + layout version 2 */

/* The FIFO segment's header: written once by the node's first process
 * before any packet is sent, read-only afterwards (the RFC's "wrapper"). */
typedef struct {
    uint64_t magic;
    uint64_t total_size;
    int32_t nranks;
    uint32_t depth;
    uint64_t cell_size;
    uint32_t cacheline;
    uint32_t thread_multiple;    /* owner words on lines of their own */
} osc_newrma_fifo_header_t;

/* The start of every cell; the packet's bytes (its 64-byte header first,
 * then the payload: the "stream") follow.  Written by the one producer that
 * reserved the cell, `stamp` last. */
typedef struct {
    int64_t stamp;               /* ticket + 1 once the cell is full */
    int32_t sender;              /* the producer's rank in the window */
    uint32_t bytes;              /* stream bytes in this cell */
    uint64_t total;              /* the packet's stream length */
    uint32_t first;              /* 1: the packet's first fragment */
    uint32_t pad;
} osc_newrma_fifo_cell_t;

/* What the layout depends on; identical in every process of the node. */
typedef struct {
    int nranks;                  /* processes of the window on this node */
    unsigned int depth;          /* cells per queue (osc_newrma_fifo_depth, >= 2) */
    size_t cell_size;            /* requested bytes per cell (osc_newrma_fifo_fragment_size) */
    size_t cacheline;
    bool thread_multiple;        /* owner-written words on lines of their own */
} osc_newrma_fifo_params_t;

/* Offsets of every region; the same in every process. */
typedef struct {
    size_t cacheline;
    size_t total_size;
    size_t header_offset;        /* one line, read-only */
    size_t rank_offset;          /* nranks x rank_stride: one block per receiver */
    size_t rank_stride;
    /* inside a receiver's block (relative to its start) */
    size_t enqueue_in_rank;      /* one line: the enqueue ticket, written by its producers */
    size_t dequeue_in_rank;      /* the dequeue position, written by the receiver */
    size_t backlog_in_rank;      /* packets the receiver holds in its own backlog (as a
                                    sender), written by it: same line as the dequeue
                                    position unless thread_multiple */
    size_t cells_in_rank;        /* depth x cell_size */
    size_t cell_size;            /* whole lines, at least the cell header + packet header */
    unsigned int depth;
} osc_newrma_fifo_layout_t;

/* Compute every region's offset and the exact total; a pure function of
 * its parameters.  Exported, as the print below, for tests/segment_layout.c
 * (the component is built with hidden visibility otherwise). */
OSC_NEWRMA_DECLSPEC int osc_newrma_fifo_layout(osc_newrma_fifo_layout_t *layout, const osc_newrma_fifo_params_t *params);

/* Print a layout, one region a line (layout tool, verbose output). */
OSC_NEWRMA_DECLSPEC void osc_newrma_fifo_layout_print(const osc_newrma_fifo_layout_t *layout, int nranks,
                                                       void (*print)(void *ctx, const char *line), void *ctx);

/* A window spanning nodes: its processes on this node (in window-rank
 * order), when there are others than us; else NULL.  For the node route
 * (osc_newrma_node_route.c), which must not split the window again. */
struct ompi_communicator_t *osc_newrma_fifo_node_comm(const struct ompi_osc_newrma_module_t *module);

/* The transport (osc_newrma_transport.h): reaches the window's other
 * processes on this node; send copies the packet into the receiver's queue
 * or the backlog and is done at once; progress runs our own queues first
 * (that is what lets two processes whose queues are full towards each
 * other go on), then the backlogs; no wake-up descriptor. */
extern const struct osc_newrma_transport_t osc_newrma_transport_fifo;

END_C_DECLS

#endif /* OSC_NEWRMA_TRANSPORT_FIFO_H */
