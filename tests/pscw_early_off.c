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
 * tests/pscw_early.c with osc_newrma_pscw_early_answers at 0: every epoch
 * waits for its post, and the same schedules (groups changing, empty
 * epochs, exact values after every wait) hold.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_pscw_early_answers:0
 */
#define PSCW_EARLY_NAME "pscw_early_off"
#include "pscw_early.c"
