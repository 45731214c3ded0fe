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
 * Failure point share_copy_target:1:short (docs/errors.md, "Failure points"):
 * the target's 1st chunk of a shared put comes back short: the rest must
 * follow.
 * The body and its checks: tests/recover.h.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_piece_bytes:0,osc_newrma_fail_at:share_copy_target:1:short
 */
#define RECOVER_NAME "recover_share_copy_short"
#define RECOVER_FIRST RECOVER_MOVES
#include "recover.h"
