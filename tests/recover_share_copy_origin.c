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
 * Failure point share_copy_origin:1 (docs/errors.md, "Failure points"):
 * the origin's own 1st chunk of a shared put fails half-way: an error,
 * the mailbox free again, the next (shared) put and get exact.
 * The body and its checks: tests/recover_origin.h.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_piece_bytes:0,osc_newrma_assist_share_bytes:65536,osc_newrma_fail_at:share_copy_origin:1
 */
#define RECOVER_NAME "recover_share_copy_origin"
#define RECOVER_KIND RECOVER_MOVE
#include "recover_origin.h"
