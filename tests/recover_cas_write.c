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
 * Failure point cas_write:1 (docs/errors.md, "Failure points"):
 * an origin's write of the new value of a single-copy compare_and_swap
 * (the target computing outside MPI: never asked, or the request taken
 * back) fails (nothing written: an aligned element is never torn): an error,
 * and the next compare_and_swap exact.
 * The body and its checks: tests/recover_origin.h.
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_fail_at:cas_write:1
 */
#define RECOVER_NAME "recover_cas_write"
#define RECOVER_KIND RECOVER_CAS
#include "recover_origin.h"
