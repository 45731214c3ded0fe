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
 * Relays (osc_newrma_relay.c): tests/assist_share.c's
 * phases with large contiguous puts and gets streamed through the origin's
 * shared slots instead of shared copies -- a target inside MPI copies a
 * put's chunks out of them (a get's into them) while the origin copies the
 * others; a target computing outside MPI never takes the request and the
 * origin withdraws it and copies alone.  Every byte checked, as there;
 * phase 0 checks the threshold (a put one byte short of
 * osc_newrma_relay_bytes is never relayed, one of exactly it is), phase 1
 * that a target inside MPI relays after the first relay too (MPI_T
 * osc_newrma_relayed_bytes).  Phase 4's large accumulates and
 * get_accumulates are relayed too (the target reduces the origin's
 * elements out of the slots): required at least once each with a core per
 * rank, every sum and old value checked.  Shared copies are off.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_bytes:20000,osc_newrma_assist_share_bytes:0
 */
#define ASSIST_NAME "assist_relay"
#define ASSIST_COUNTER "osc_newrma_relayed_bytes"
#define ASSIST_THRESHOLD "osc_newrma_relay_bytes"
#define ASSIST_ACC_SHARED 1
#include "assist_share.c"
