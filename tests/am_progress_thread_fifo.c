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
 * am_progress_thread.c on the node-local FIFO transport: the progress
 * thread drains the target's FIFO while the target computes outside MPI
 * (osc_newrma_force_am: the MPI_Win_create windows take the active-message
 * path over FIFOs; no UCX at all on one node).
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_force_am:1,osc_newrma_progress_thread:1
 */
#include "am_progress_thread.c"
