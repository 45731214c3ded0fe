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
 * am_progress.c on the node-local FIFO transport: passive-target epochs
 * served by the target's opal_progress callback draining its FIFO while it
 * is blocked in MPI_Recv, MPI_Barrier or MPI_Wait (osc_newrma_force_am: the
 * MPI_Win_create windows take the active-message path over FIFOs).
 *
 * newrma-test: np>=2 mca=osc_newrma_force_am:1
 */
#include "am_progress.c"
