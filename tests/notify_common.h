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
 * What the notified-RMA tests (tests/notify_*.c, docs/notified-rma.md)
 * share: a window of every flavor with counters attached, and a counter's
 * value.
 */
#ifndef NEWRMA_TEST_NOTIFY_COMMON_H
#define NEWRMA_TEST_NOTIFY_COMMON_H

#include "common.h"
#include "mpix_newrma.h"

static inline MPI_Count notify_counter(MPI_Win win, int idx)
{
    MPI_Count value = -1;
    MPI_OK(MPIX_Win_notify_get_value(win, idx, &value));
    return value;
}

/* A window of `flavor` on MPI_COMM_WORLD returning errors, with `count`
 * counters attached; checks and returns the path its notifications take
 * (rank 0 prints it). */
static inline int notify_win_open(test_win_t *tw, int flavor, size_t bytes, int count)
{
    int path = -1;

    test_win_create(tw, flavor, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(tw->win, MPI_ERRORS_RETURN);
    MPI_OK(MPIX_Win_notify_attach(tw->win, count, MPI_INFO_NULL));
    MPI_OK(MPIX_Win_notify_path(tw->win, &path));
    CHECK(path == test_notify_expected_path(tw->win, flavor), "%s: path %d", flavor_names[flavor], path);
    if (0 == test_rank) {
        printf("%s: %s path\n", flavor_names[flavor], MPIX_NOTIFY_PATH_MEMORY == path ? "memory" : "fallback");
    }
    return path;
}

#endif /* NEWRMA_TEST_NOTIFY_COMMON_H */
