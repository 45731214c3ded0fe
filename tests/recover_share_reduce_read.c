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
 * Failure point share_reduce_read:2 (docs/errors.md, "Failure points"):
 * the target's read of the 2nd piece of origin elements of a shared
 * accumulate fails half-way, after its 1st piece was reduced: the origin
 * must resume at the failed piece (not redo the 1st).
 * The body and its checks: tests/recover.h.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_piece_bytes:0,osc_newrma_fail_at:share_reduce_read:2
 */
#define RECOVER_NAME "recover_share_reduce_read"
#define RECOVER_FIRST RECOVER_ACC
#include "recover.h"
