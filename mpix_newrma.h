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
 * share a node take the load/store path, newrma windows across nodes one
 * active message carrying data and notification, every other window a
 * portable fallback (operation, flush, atomic increment on a companion
 * window).
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

#ifdef __cplusplus
}
#endif

#endif /* MPIX_NEWRMA_H */
