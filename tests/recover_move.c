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
 * Failure point move:1 (docs/errors.md, "Failure points"):
 * an origin's put by single copy (48 KiB: neither batched nor shared)
 * fails half-way: an error, and the next put and get are exact.
 * The body and its checks: tests/recover_origin.h.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_relay_piece_bytes:0,osc_newrma_assist_share_bytes:0,osc_newrma_fail_at:move:1
 */
#define RECOVER_NAME "recover_move"
#define RECOVER_KIND RECOVER_MOVE
#define RECOVER_BYTES (48 * 1024)
#include "recover_origin.h"
