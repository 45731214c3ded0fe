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
 * shared_query_flavors.c with nodes of 2 ranks pretended on one machine
 * (osc_newrma_fifo_node_ranks): allocate windows span nodes and take the
 * active-message path; a node's ranks address each other's memory in the
 * node route's segment, the other nodes' not.
 *
 * newrma-test: only-newrma np>=1 mca=osc_newrma_fifo_node_ranks:2
 */
#include "shared_query_flavors.c"
