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
 * tests/relay_batch.c with osc_newrma_relay_piece_bytes at 256, its
 * default: batches of two pieces of 256 bytes are relayed to a target
 * inside MPI, batches averaging 257 bytes or the small layout's
 * (about 3.3 KiB) are not, nor a single put of 20000 bytes.  Every byte and
 * gap checked as there.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_assist_share_bytes:0
 */
#define RELAY_BATCH_NAME "relay_batch_all"
#define RELAY_PIECE_LIMIT 256
#include "relay_batch.c"
