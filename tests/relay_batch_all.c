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
 * tests/relay_batch.c with osc_newrma_relay_bytes at 1, its default: every
 * batch is relayed to a target inside MPI, and puts and gets of any size
 * join the batch (none goes alone between the batch limit and the relay
 * threshold).  Every byte and gap checked as there.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_bytes:1,osc_newrma_assist_share_bytes:0
 */
#define RELAY_BATCH_NAME "relay_batch_all"
#include "relay_batch.c"
