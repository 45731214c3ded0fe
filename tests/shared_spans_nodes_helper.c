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
 * Helper of tests/shared_spans_nodes.sh: which ranks share a node, and
 * MPI_Win_allocate_shared on a communicator that spans nodes.
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) must group exactly the ranks
 * with one processor name (the test nodes of contrib/test-nodes.sh each have
 * their own hostname); MPI_Win_allocate_shared on MPI_COMM_WORLD is served
 * when that is one node and fails (the job going on) when it spans several,
 * while the same window on each node's communicator works with load/store
 * between the node's ranks.  Prints "nodes: N, ranks per node: A,B,..." for
 * the script, which checks newrma's reason for declining.
 *
 * newrma-test: helper
 */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, node_rank, node_size;
    char name[MPI_MAX_PROCESSOR_NAME] = { 0 };
    int len;
    MPI_Comm node;

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);

    /* the node communicator is the ranks of this processor name */
    char *names = calloc((size_t) size, MPI_MAX_PROCESSOR_NAME);
    int *node_of = calloc((size_t) size, sizeof(int));
    int *node_sizes = calloc((size_t) size, sizeof(int));
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    int same_name = 0, nodes = 0;
    for (int r = 0; r < size; ++r) {
        same_name += 0 == strcmp(name, names + (size_t) r * MPI_MAX_PROCESSOR_NAME);
        node_of[r] = -1;
        for (int q = 0; q < r && node_of[r] < 0; ++q) {
            if (0 == strcmp(names + (size_t) q * MPI_MAX_PROCESSOR_NAME, names + (size_t) r * MPI_MAX_PROCESSOR_NAME)) {
                node_of[r] = node_of[q];
            }
        }
        if (node_of[r] < 0) node_of[r] = nodes++;
        node_sizes[node_of[r]]++;
    }
    CHECK(node_size == same_name, "%s: MPI_COMM_TYPE_SHARED gives %d ranks, %d ranks have this processor name",
          name, node_size, same_name);
    if (0 == rank) {
        printf("nodes: %d, ranks per node:", nodes);
        for (int i = 0; i < nodes; ++i) printf("%s%d", i ? "," : " ", node_sizes[i]);
        printf("\n");
        fflush(stdout);
    }

    /* across nodes: declined, and the job goes on */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int64_t *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (nodes > 1) {
        CHECK(MPI_SUCCESS != rc, "MPI_Win_allocate_shared over %d nodes was served", nodes);
    } else {
        CHECK(MPI_SUCCESS == rc, "MPI_Win_allocate_shared on one node was refused (error %d)", rc);
    }
    if (MPI_SUCCESS == rc) MPI_Win_free(&win);

    /* on each node: every rank stores its rank, each reads its neighbour's */
    MPI_OK(MPI_Win_allocate_shared(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, node, &base, &win));
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    __atomic_store_n(base, (int64_t) rank + 1000, __ATOMIC_RELAXED);
    MPI_OK(MPI_Win_sync(win));
    MPI_Barrier(node);
    MPI_OK(MPI_Win_sync(win));
    int peer = (node_rank + 1) % node_size;
    MPI_Aint bytes;
    int disp;
    int64_t *peer_base = NULL;
    MPI_OK(MPI_Win_shared_query(win, peer, &bytes, &disp, &peer_base));
    int peer_world = -1;
    MPI_Group wg, ng;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    MPI_Group_translate_ranks(ng, 1, &peer, wg, &peer_world);
    CHECK(NULL != peer_base && __atomic_load_n(peer_base, __ATOMIC_RELAXED) == peer_world + 1000,
          "node window: rank %d's word reads %lld", peer_world,
          NULL != peer_base ? (long long) *peer_base : -1LL);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    free(names);
    free(node_of);
    free(node_sizes);
    return test_finalize("shared_spans_nodes_helper");
}
