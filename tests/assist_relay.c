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
 * Relays (osc_newrma_node_policy_relay_pieces, _relay_acc_fits): a single
 * contiguous put, get or accumulate is never relayed, however large and
 * whatever osc_newrma_relay_piece_bytes says (one system call, or the
 * accumulate's chunks, move it at least as fast as a hand-over and a
 * second copy).  tests/assist_share.c's phases with shared copies off and
 * relays on for pieces of any size: large puts, gets, request-based ones,
 * accumulates and get_accumulates, one origin at a time and all at once,
 * crossing, to a target inside MPI and to one computing outside it -- every
 * byte, sum and old value checked as there, and MPI_T
 * osc_newrma_relayed_bytes unchanged on every rank.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_piece_bytes:1073741824,osc_newrma_assist_share_bytes:0
 */
#define ASSIST_NAME "assist_relay"
#define ASSIST_COUNTER "osc_newrma_relayed_bytes"
#define ASSIST_THRESHOLD "osc_newrma_relay_piece_bytes"
#define ASSIST_THRESHOLD_VALUE 1073741824
#define ASSIST_ACC_SHARED 0
#define ASSIST_NEVER 1
#include "assist_share.c"
