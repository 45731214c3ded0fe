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
 * memory_alignment.c with nodes of 2 ranks pretended on one machine
 * (osc_newrma_fifo_node_ranks): allocate windows span nodes, their memory
 * is in each node route's segment (allocate_shared windows stay on the
 * node path: one real node).
 *
 * newrma-test: only-newrma np>=1 mca=osc_newrma_fifo_node_ranks:2
 */
#include "memory_alignment.c"
