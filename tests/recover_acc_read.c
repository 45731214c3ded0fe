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
 * Failure point acc_read:1 (docs/errors.md, "Failure points"):
 * an origin's read of the target's 1st piece of a single-copy
 * accumulate fails: an error, nothing applied twice, the next accumulate,
 * get_accumulate and fetch_and_op exact.
 * The body and its checks: tests/recover_origin.h.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_timeout:0,osc_newrma_fail_at:acc_read:1
 */
#define RECOVER_NAME "recover_acc_read"
#define RECOVER_KIND RECOVER_ACC
#include "recover_origin.h"
