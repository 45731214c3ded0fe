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
 * tests/node_lock.c with osc_newrma_node_lock at 0: node-local origins lock
 * their node peers through the target's packet handler, as remote origins
 * do; the same pairs of origins in every order exclude each other (or
 * share) exactly as with the node lock, and no lock is counted as taken in
 * the node segment.
 *
 * newrma-test: only-newrma np>=2 mca=osc_newrma_node_lock:0
 */
#define NODE_LOCK_NAME "node_lock_off"
#include "node_lock.c"
