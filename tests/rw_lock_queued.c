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
 * rw_lock_stress (every check of it) with writers that never try before
 * queueing (osc_newrma_lock_barge_tries 0): every contended exclusive lock
 * goes through the Mellor-Crummey/Scott writer queue and its hand-over
 * (osc_newrma_lock.c), which the default (try 64 times first) reaches only
 * under sustained contention.  tests/rw_lock_barging.c mixes both.
 * newrma-test: np>=2 only-newrma mca=osc_newrma_lock_barge_tries:0
 */
#include "rw_lock_stress.c"
