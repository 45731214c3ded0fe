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
 * Latency of 8-byte RMA from rank 0 to a peer on its node and to a peer on
 * another node, in one MPI_Win_allocate window over MPI_COMM_WORLD (run by
 * bench/mixed_window.sh, across the test nodes and on one node).  A
 * benchmark, not a test.  Rows, each per target:
 *   put_flush, get_flush, acc_flush, fop_flush, cas_flush  in one lock_all epoch
 *   lock_put_unlock                                        exclusive lock
 *   pingpong                                               MPI_Send + MPI_Recv, 8 B
 * and rows of the whole window, "ROW all MICROSECONDS":
 *   fence                   MPI_Win_fence on every rank, nothing between
 *   barrier                 MPI_Barrier over the window's ranks (the reference)
 *   lockall_unlockall       rank 0: MPI_Win_lock_all + MPI_Win_unlock_all
 *   lockall_put_unlockall   rank 0: the same with an 8-byte put to every other rank
 * Output: one line per row and target that exists, "ROW local|remote|all
 * MICROSECONDS" (the median of BATCHES batches of ITERS operations).  In the
 * rows of rank 0 alone the other ranks wait in MPI_Recv (inside MPI, so
 * active-message targets progress) and answer the ping-pongs.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 200
#define BATCHES 9
#define TAG_PING 1
#define TAG_NEXT 2

enum row { PUT, GET, ACC, FOP, CAS, LOCK_PUT, PINGPONG, FENCE, BARRIER, LOCKALL, LOCKALL_PUT, NROWS };
static const char *row_names[NROWS] = { "put_flush", "get_flush", "acc_flush", "fop_flush", "cas_flush",
                                        "lock_put_unlock", "pingpong", "fence", "barrier",
                                        "lockall_unlockall", "lockall_put_unlockall" };

static int rank, size;
static MPI_Win win;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void one_op(enum row r, int t)
{
    int64_t v = 1, got = 0, cmp = 0;
    switch (r) {
    case PUT: MPI_Put(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win); MPI_Win_flush(t, win); break;
    case GET: MPI_Get(&got, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win); MPI_Win_flush(t, win); break;
    case ACC: MPI_Accumulate(&v, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T, MPI_SUM, win); MPI_Win_flush(t, win); break;
    case FOP: MPI_Fetch_and_op(&v, &got, MPI_INT64_T, t, 1, MPI_SUM, win); MPI_Win_flush(t, win); break;
    case CAS: MPI_Compare_and_swap(&v, &cmp, &got, MPI_INT64_T, t, 2, win); MPI_Win_flush(t, win); break;
    case LOCK_PUT:
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        MPI_Put(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win);
        MPI_Win_unlock(t, win);
        break;
    case PINGPONG:
        MPI_Send(&v, 1, MPI_INT64_T, t, TAG_PING, MPI_COMM_WORLD);
        MPI_Recv(&got, 1, MPI_INT64_T, t, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case FENCE: MPI_Win_fence(0, win); break;
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case LOCKALL:
    case LOCKALL_PUT:
        MPI_Win_lock_all(0, win);
        for (int p = 1; LOCKALL_PUT == r && p < size; ++p) {
            MPI_Put(&v, 1, MPI_INT64_T, p, 3, 1, MPI_INT64_T, win);
        }
        MPI_Win_unlock_all(win);
        break;
    default: break;
    }
}

static double measure(enum row r, int t)
{
    double batch[BATCHES];
    int in_lock_all = r <= CAS;
    if (in_lock_all) MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITERS / 4; ++i) one_op(r, t);          /* warm up */
    for (int b = 0; b < BATCHES; ++b) {
        double start = MPI_Wtime();
        for (int i = 0; i < ITERS; ++i) one_op(r, t);
        batch[b] = (MPI_Wtime() - start) / ITERS * 1e6;
    }
    if (in_lock_all) MPI_Win_unlock_all(win);
    qsort(batch, BATCHES, sizeof(double), cmp_double);
    return batch[BATCHES / 2];
}

/* Every other rank: answer ping-pongs until rank 0 says the row is over. */
static void serve(void)
{
    for (;;) {
        int64_t v;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (TAG_NEXT == st.MPI_TAG) return;
        MPI_Send(&v, 1, MPI_INT64_T, 0, TAG_PING, MPI_COMM_WORLD);
    }
}

static void row_over(void)
{
    int64_t v = 0;
    for (int p = 1; p < size; ++p) MPI_Send(&v, 1, MPI_INT64_T, p, TAG_NEXT, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Comm node;
    int *node_of, mine, local = -1, remote = -1;
    int64_t *base;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Allreduce(&rank, &mine, 1, MPI_INT, MPI_MIN, node);
    node_of = malloc(sizeof(int) * (size_t) size);
    MPI_Allgather(&mine, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    for (int p = size - 1; p > 0; --p) {
        if (node_of[p] == node_of[0]) local = p;
        else remote = p;
    }
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, 4096);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = FENCE; r <= BARRIER; ++r) {        /* every rank takes part */
        double us = measure((enum row) r, -1);
        if (0 == rank) printf("%s all %.3f\n", row_names[r], us);
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int r = LOCKALL; r <= LOCKALL_PUT; ++r) {  /* rank 0 alone */
        if (0 == rank) {
            printf("%s all %.3f\n", row_names[r], measure((enum row) r, -1));
            fflush(stdout);
            row_over();
        } else {
            serve();
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int r = 0; r < FENCE; ++r) {
        for (int which = 0; which < 2; ++which) {
            int t = 0 == which ? local : remote;
            if (t < 0) continue;
            if (0 == rank) {
                double us = measure((enum row) r, t);
                printf("%s %s %.3f\n", row_names[r], 0 == which ? "local" : "remote", us);
                fflush(stdout);
                row_over();
            } else {
                serve();
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    free(node_of);
    MPI_Finalize();
    return 0;
}
