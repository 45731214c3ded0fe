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
 * MPI_Win_start does not wait for the posts (the design's PSCW_ISSUED
 * state); the epoch's first operation to a target, or MPI_Win_complete,
 * does.  MPI lets a start block, so this is newrma's behaviour, not every
 * component's.  Every window flavor, rank 0 the origin, the others targets:
 *  - start before post: rank 0 starts, then sends each target a message
 *    that the target receives before it posts; a start that waited for the
 *    posts would never send it (the targets give up after 30 s and fail
 *    rather than hang).  Then puts to every target, complete; each target
 *    checks its values after its wait;
 *  - an operation to a rank outside the start group fails with
 *    MPI_ERR_RMA_SYNC at once, before any post (the group is {1} and rank 1
 *    posts only after the origin's message, sent after the failed call);
 *    the epoch stays usable: a put to rank 1 and complete;
 *  - an empty epoch is matched to its own post (its complete may answer
 *    that post before it comes: tests/pscw_early.c): the target posts
 *    after the message, waits, and the origin's next epoch gets what the
 *    target stored before its second post, not the word as it was at the
 *    first;
 *  - several epochs in a row, each started before the target posted.
 * newrma-test: only-newrma
 * newrma-test: np>=2
 */
#include "common.h"

#define WORDS 4
#define ROUNDS 5
#define GIVE_UP_S 30.0

static int64_t value(int round, int target, int i)
{
    return (int64_t) round * 1000003 + target * 1009 + i + 1;
}

/* Receive rank 0's go-ahead, or fail after GIVE_UP_S (a start that blocked). */
static void await_go(int tag)
{
    MPI_Request req;
    int go = 0, done = 0;
    double deadline = MPI_Wtime() + GIVE_UP_S;

    MPI_Irecv(&go, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &req);
    while (!done && MPI_Wtime() < deadline) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
    CHECK(done, "no message from rank 0 (tag %d) in %.0f s: its MPI_Win_start waited for our post", tag, GIVE_UP_S);
    if (!done) {
        fprintf(stderr, "[rank %d] giving up\n", test_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void send_go(int target, int tag)
{
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, target, tag, MPI_COMM_WORLD);
}

static void start_before_post(test_win_t *tw, MPI_Group targets, MPI_Group origin, int size, int round)
{
    int64_t *mem = tw->mem;

    if (0 == test_rank) {
        /* one buffer per target: in use until complete */
        int64_t (*src)[WORDS] = malloc((size_t) size * sizeof *src);
        MPI_OK(MPI_Win_start(targets, 0, tw->win));
        for (int t = 1; t < size; ++t) send_go(t, round);
        for (int t = 1; t < size; ++t) {
            for (int i = 0; i < WORDS; ++i) src[t][i] = value(round, t, i);
            MPI_OK(MPI_Put(src[t], WORDS, MPI_INT64_T, t, test_disp(tw, t, 0, 8), WORDS, MPI_INT64_T, tw->win));
        }
        MPI_OK(MPI_Win_complete(tw->win));
        free(src);
        return;
    }
    await_go(round);
    MPI_OK(MPI_Win_post(origin, 0, tw->win));
    MPI_OK(MPI_Win_wait(tw->win));
    for (int i = 0; i < WORDS; ++i)
        CHECK(mem[i] == value(round, test_rank, i), "%s round %d: word %d is %lld, expected %lld",
              flavor_names[tw->flavor], round, i, (long long) mem[i], (long long) value(round, test_rank, i));
}

static void outside_group(test_win_t *tw, MPI_Group one, MPI_Group origin, int size)
{
    int64_t src = -5, *mem = tw->mem;
    int outsider = size > 2 ? 2 : 0;

    if (0 == test_rank) {
        MPI_OK(MPI_Win_start(one, 0, tw->win));
        MPI_FAILS_WITH(MPI_ERR_RMA_SYNC,
                       MPI_Put(&src, 1, MPI_INT64_T, outsider, test_disp(tw, outsider, 0, 8), 1, MPI_INT64_T, tw->win));
        send_go(1, 100);
        MPI_OK(MPI_Put(&src, 1, MPI_INT64_T, 1, test_disp(tw, 1, 1, 8), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
    } else if (1 == test_rank) {
        await_go(100);
        MPI_OK(MPI_Win_post(origin, 0, tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        CHECK(-5 == mem[1], "%s: word 1 is %lld after the put in the group, expected -5", flavor_names[tw->flavor],
              (long long) mem[1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (2 == test_rank) {
        CHECK(0 == mem[0] || value(ROUNDS - 1, 2, 0) == mem[0], "%s: the refused put reached rank 2 (%lld)",
              flavor_names[tw->flavor], (long long) mem[0]);
    }
}

/* The origin's empty epoch completes; then a second epoch (also started
 * before the post) gets a mark the target stores before its second post:
 * had the first epoch not been counted for the first post, the second
 * epoch's get would be matched to that one and read the word before the
 * mark was stored. */
static void empty_epoch(test_win_t *tw, MPI_Group one, MPI_Group origin)
{
    int64_t *mem = tw->mem, got = 0;

    if (0 == test_rank) {
        MPI_OK(MPI_Win_start(one, 0, tw->win));
        send_go(1, 200);
        MPI_OK(MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_start(one, 0, tw->win));
        send_go(1, 201);
        MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, 1, test_disp(tw, 1, 2, 8), 1, MPI_INT64_T, tw->win));
        MPI_OK(MPI_Win_complete(tw->win));
        CHECK(4242 == got, "%s: got %lld from the second epoch, expected the mark 4242", flavor_names[tw->flavor],
              (long long) got);
    } else if (1 == test_rank) {
        await_go(200);
        test_compute_us(2000);
        MPI_OK(MPI_Win_post(origin, 0, tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        await_go(201);
        test_compute_us(2000);
        mem[2] = 4242;
        MPI_OK(MPI_Win_post(origin, 0, tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
    }
}

int main(int argc, char **argv)
{
    int size, zero = 0, one_rank = 1;
    MPI_Group world, targets, origin, one;

    test_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &zero, &targets);
    MPI_Group_incl(world, 1, &zero, &origin);
    MPI_Group_incl(world, 1, &one_rank, &one);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        test_win_t tw;
        test_win_create(&tw, flavor, WORDS * sizeof(int64_t), 8, MPI_INFO_NULL, MPI_COMM_WORLD);
        MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);
        for (int round = 0; round < ROUNDS; ++round) start_before_post(&tw, targets, origin, size, round);
        MPI_Barrier(MPI_COMM_WORLD);
        outside_group(&tw, one, origin, size);
        MPI_Barrier(MPI_COMM_WORLD);
        empty_epoch(&tw, one, origin);
        test_win_free(&tw);
    }
    MPI_Group_free(&one);
    MPI_Group_free(&origin);
    MPI_Group_free(&targets);
    MPI_Group_free(&world);
    return test_finalize("pscw_start_early");
}
