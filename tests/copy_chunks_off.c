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
 * tests/copy_chunks.c with pieces switched off (osc_newrma_copy_chunk_bytes
 * 0): every payload is one memcpy, whatever its length.
 * newrma-test: np>=2 only-newrma mca=osc_newrma_copy_chunk_bytes:0
 */
#include "copy_chunks.c"
