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
 * rw_lock_stress (every check of it) with writers that give up trying early:
 * a writer that finds a lock taken tries to take it again only 4 times before
 * it joins the lock's queue (osc_newrma_lock.c, write_lock_barging; default
 * 64), so trying and queued writers mix on the same locks, with readers and
 * lock_all epochs among them.  The run also sets mpi_yield_when_idle, as Open
 * MPI does on an oversubscribed node (tries then yield at once), on a machine
 * of any number of cores.  tests/rw_lock_queued.c: every writer queues.
 * newrma-test: np>=2 only-newrma mca=mpi_yield_when_idle:1,osc_newrma_lock_barge_tries:4
 */
#include "rw_lock_stress.c"
