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
 * Notified RMA for Open MPI (libmpix_newrma): per-window notification
 * counters that an operation increments at its target once its data is
 * there.  Named and shaped after the MPI Forum's proposal (mpi-issues #59,
 * "RMA Notification") as Intel MPI ships it; the exact semantics and where
 * this library had to choose: docs/notified-rma.md.
 *
 * Works on windows of any osc component: newrma windows whose processes
 * share a node take the memory path (the operation, then a release
 * increment in shared memory), newrma's active-message windows (across
 * nodes, or forced) one packet carrying data and notification, every other
 * window a portable fallback (operation, flush, atomic increment on a
 * companion window).
 * Link with -lmpix_newrma.  Public MPI types only: any Open MPI newrma
 * supports (4.1, 5.0).
 */

#ifndef MPIX_NEWRMA_H
#define MPIX_NEWRMA_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPIX_NEWRMA_VERSION 1

/* Collective over the window's group: give every process of `win`
 * `notification_num` counters, all 0.  `info` is reserved (MPI_INFO_NULL). */
int MPIX_Win_notify_attach(MPI_Win win, int notification_num, MPI_Info info);
/* Collective: drop the counters (also done by MPI_Win_free). */
int MPIX_Win_notify_detach(MPI_Win win);

/* This process's counter `notification_idx`: read (with acquire semantics:
 * the data of every operation counted is visible afterwards) and set. */
int MPIX_Win_notify_get_value(MPI_Win win, int notification_idx, MPI_Count *value);
int MPIX_Win_notify_set_value(MPI_Win win, int notification_idx, MPI_Count value);

/* MPI_Put / MPI_Get / MPI_Accumulate, then one increment of counter
 * `notification_idx` at `target_rank` once the operation is complete
 * there. */
int MPIX_Put_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, int notification_idx);
int MPIX_Get_notify(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, int notification_idx);
int MPIX_Accumulate_notify(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, int target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, int notification_idx);

/* newrma's own (not in the proposal): how the attached window's
 * notifications travel, for tests and tuning. */
#define MPIX_NOTIFY_PATH_FALLBACK 0   /* operation, flush, accumulate on a companion window */
#define MPIX_NOTIFY_PATH_MEMORY   1   /* newrma on one node: data, then a release increment */
#define MPIX_NOTIFY_PATH_MESSAGE  2   /* newrma across nodes: one packet, data then the increment */
int MPIX_Win_notify_path(MPI_Win win, int *path);

/* ==== MPIX_NEWRMA_EXPERIMENTAL: signals and batches ====================
 * Experimental (issue #36, part 2; docs/notified-rma.md, "Signals and
 * batches (experimental)"): after the design of Schuchart and Gillis
 * ("A New Synchronisation Scheme for MPI RMA", EuroMPI 2024), which no MPI
 * standard has yet.  Names, arguments and semantics may change in any
 * release.  A window's signals are fixed when it is created; a batch of
 * operations to any targets, closed with a signal, releases that signal at
 * each of its targets once all its operations are complete there; waiting
 * on a signal acquires.  No epoch for the user: the library keeps the
 * window in a lock_all epoch for its whole life, so batches may be used
 * from several threads at once (MPI_THREAD_MULTIPLE). */
#define MPIX_NEWRMA_EXPERIMENTAL 1

typedef struct mpix_newrma_batch *MPIX_Batch;
#define MPIX_BATCH_NULL ((MPIX_Batch) 0)
/* MPIX_Batch_close without a signal: the batch completes at its targets */
#define MPIX_SIGNAL_NONE (-1)

/* Collective over `comm`: MPI_Win_allocate with `nsignals` signals (0 .. nsignals-1,
 * each 0) at every process, in the library's epoch.  Free it with
 * MPIX_Win_free_signals, not MPI_Win_free. */
int MPIX_Win_allocate_signals(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, int nsignals,
                              void *baseptr, MPI_Win *win);
/* Collective: closes the library's epoch and frees the window.  Every batch
 * on it must be closed. */
int MPIX_Win_free_signals(MPI_Win *win);

/* A new batch on a window of MPIX_Win_allocate_signals.  One thread uses a
 * batch at a time; any number of batches may be open at once. */
int MPIX_Batch_open(MPI_Win win, MPIX_Batch *batch);
/* MPI_Put / MPI_Get / MPI_Accumulate into the batch: the origin buffer is
 * the library's (not to be changed, nor read for a get) until the close. */
int MPIX_Batch_put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIX_Batch batch);
int MPIX_Batch_get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPIX_Batch batch);
int MPIX_Batch_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPIX_Batch batch);
/* Closes the batch and sets *batch to MPIX_BATCH_NULL: its operations are
 * complete at the origin when it returns; with `signal_idx`, signal
 * `signal_idx` of each target of the batch is released (+1) once every
 * operation of the batch is complete there; with MPIX_SIGNAL_NONE the
 * operations are complete at their targets when it returns. */
int MPIX_Batch_close(MPIX_Batch *batch, int signal_idx);

/* Acquire: blocks until this process's signal `signal_idx` counts at least
 * `value`; the data of the batches counted is then visible here. */
int MPIX_Signal_wait(MPI_Win win, int signal_idx, MPI_Count value);
/* The same without blocking: *flag is 1 (and the data visible) if the
 * signal counts at least `value`, else 0. */
int MPIX_Signal_test(MPI_Win win, int signal_idx, MPI_Count value, int *flag);
/* Sets this process's signal back to 0: only when no batch is in flight to it. */
int MPIX_Signal_reset(MPI_Win win, int signal_idx);
/* (A signal's count: MPIX_Win_notify_get_value; its path: MPIX_Win_notify_path.) */

#ifdef __cplusplus
}
#endif

#endif /* MPIX_NEWRMA_H */
