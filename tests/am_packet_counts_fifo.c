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
 * am_packet_counts.c on the node-local FIFO transport: the same scenarios
 * and exact message counts, the packets carried by the window's FIFOs
 * instead of UCX (osc_newrma_force_am, no force_remote), on MPI_Win_create
 * windows.  The osc_newrma_packets_<kind> counters count a FIFO packet once,
 * however many fragments it takes.
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_force_am:1
 */
#include "am_packet_counts.c"
