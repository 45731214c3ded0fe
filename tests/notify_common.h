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

/* The notified-RMA path (mpix_newrma.h) a window must take: memory for a
 * newrma window of the node paths, the message for one of the
 * active-message path, the fallback for other components. */
static inline int test_notify_expected_path(MPI_Win win, int flavor)
{
    if (!test_served_by_newrma(win)) return MPIX_NOTIFY_PATH_FALLBACK;
    return test_am_path(flavor) ? MPIX_NOTIFY_PATH_MESSAGE : MPIX_NOTIFY_PATH_MEMORY;
}

static inline const char *notify_path_name(int path)
{
    return MPIX_NOTIFY_PATH_MEMORY == path ? "memory" : MPIX_NOTIFY_PATH_MESSAGE == path ? "message" : "fallback";
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
        printf("%s: %s path\n", flavor_names[flavor], notify_path_name(path));
    }
    return path;
}

#endif /* NEWRMA_TEST_NOTIFY_COMMON_H */
