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
 * What the signal-and-batch tests (tests/signal_*.c; libmpix_newrma's
 * experimental part, docs/notified-rma.md) share: a window with signals,
 * the data pattern, and the check of an origin's blocks.
 */
#ifndef NEWRMA_TEST_SIGNAL_COMMON_H
#define NEWRMA_TEST_SIGNAL_COMMON_H

#include "notify_common.h"   /* common.h, mpix_newrma.h, the expected path */

#define BLOCK 4                 /* int64 words per block */

static inline int64_t signal_pattern(int origin, int target, int round, int i)
{
    return (int64_t) origin * 1000003 + (int64_t) target * 10007 + round * 101 + i + 1;
}

/* A window of `words` int64 words per process with `nsignals` signals,
 * returning errors; checks the path its signals take (rank 0 prints it). */
static inline MPI_Win signal_win_open(MPI_Aint words, int nsignals, int64_t **mem)
{
    MPI_Win win = MPI_WIN_NULL;
    int path = -1;

    MPI_OK(MPIX_Win_allocate_signals(words * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, nsignals, mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_OK(MPIX_Win_notify_path(win, &path));
    CHECK(path == test_notify_expected_path(win, FLAVOR_ALLOCATE), "signal window: path %d", path);
    if (0 == test_rank) {
        printf("signals: %s path\n", notify_path_name(path));
    }
    return win;
}

/* Blocks 0 .. rounds-1 of `origin` at mem[first + (k * BLOCK)] hold its
 * pattern for `target` (read while later rounds may still arrive) */
static inline void signal_check_blocks(const int64_t *mem, MPI_Aint first, int origin, int target, int round0,
                                       int rounds, const char *what)
{
    for (int k = 0; k < rounds; ++k)
        for (int i = 0; i < BLOCK; ++i) {
            int64_t got = __atomic_load_n(&mem[first + (MPI_Aint) k * BLOCK + i], __ATOMIC_RELAXED);
            CHECK(got == signal_pattern(origin, target, round0 + k, i), "%s: origin %d round %d word %d: %lld",
                  what, origin, round0 + k, i, (long long) got);
        }
}

#endif /* NEWRMA_TEST_SIGNAL_COMMON_H */
