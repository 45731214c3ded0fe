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
 * Many fences in a row, every window flavor, with exact values: the node
 * barrier's episodes must stay in step however the fences are mixed.  Each
 * epoch e, every rank stores a value for e in its own window word (before
 * the fence that opens e), puts a value for e into the window of the rank
 * at distance d = 1 + e mod (n - 1) and gets that rank's stored word; after
 * the fence that closes e it checks both (the put from the rank at -d, the
 * get of the rank at +d).  Words alternate by epoch parity, so an epoch's
 * accesses never touch what the neighbouring epochs use.  The distance
 * walks every partner, so every pair of ranks meets across the barrier's
 * rounds, whatever n (powers of two or not).
 *
 * The fences vary with e (the same choice on every rank): an epoch is
 * closed by the next epoch's opening fence(0) (a chain), by
 * fence(NOSUCCEED), by fence(NOSUCCEED) and then one to three
 * fence(NOPRECEDE | NOSUCCEED), by fence(NOSUCCEED) and an empty epoch
 * (fence(NOPRECEDE), fence(NOSUCCEED)), or by fence(0) opening an epoch
 * with no RMA; an epoch outside a chain is opened by fence(NOPRECEDE)
 * (the nonblocking arrival: the first RMA call waits) or fence(0).  Every
 * fourth epoch one rank (a different one each time) arrives late, after
 * its stores, so an RMA call that ran ahead of it would read its old word.
 * Last, a rank that arrived at fence(NOPRECEDE) and then waits in a
 * receive, or in another window's fence, for the others' next steps must
 * not keep their first RMA calls waiting (elsewhere_in_mpi).
 *
 * newrma-test: np>=2
 */
#include "common.h"

#define EPOCHS 200
#define U ((int) sizeof(int64_t))

/* window words: [0, n) puts of epochs of even parity (word = origin rank),
 * [n, 2n) of odd parity, then the two stored words */
static MPI_Aint put_word(int size, int e, int origin) { return (MPI_Aint) (e % 2) * size + origin; }
static MPI_Aint stored_word(int size, int e) { return (MPI_Aint) 2 * size + e % 2; }
static int64_t put_value(int e, int origin) { return (int64_t) e * 100003 + origin + 1; }
static int64_t stored_value(int e, int rank) { return -((int64_t) e * 100019 + rank + 1); }

enum { CLOSE_CHAIN, CLOSE_NOSUCCEED, CLOSE_BARRIERS, CLOSE_EMPTY_EPOCH, CLOSE_OPEN_EMPTY, CLOSE_KINDS };

/* the same pseudo-random choice on every rank */
static unsigned int choice(int e, unsigned int salt)
{
    uint32_t x = (uint32_t) e * 2654435761u ^ salt * 40503u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return x;
}

typedef struct {
    test_win_t tw;
    int rank, size;
    int64_t put, got;      /* the current epoch's origin and result buffers */
} fence_state_t;

/* after the fence that closed epoch e */
static void check_epoch(fence_state_t *s, int e)
{
    int64_t *mine = s->tw.mem;
    int d = 1 + e % (s->size - 1);
    int from = (s->rank - d + s->size) % s->size, to = (s->rank + d) % s->size;
    int64_t put = mine[put_word(s->size, e, from)];

    CHECK(put == put_value(e, from), "%s: epoch %d: word of rank %d is %lld, expected %lld",
          flavor_names[s->tw.flavor], e, from, (long long) put, (long long) put_value(e, from));
    CHECK(s->got == stored_value(e, to), "%s: epoch %d: got %lld from rank %d, expected %lld",
          flavor_names[s->tw.flavor], e, (long long) s->got, to, (long long) stored_value(e, to));
}

static void access_epoch(fence_state_t *s, int e)
{
    int d = 1 + e % (s->size - 1), to = (s->rank + d) % s->size;

    s->put = put_value(e, s->rank);
    s->got = 0;
    MPI_OK(MPI_Put(&s->put, 1, MPI_INT64_T, to, test_disp(&s->tw, to, put_word(s->size, e, s->rank), U), 1,
                   MPI_INT64_T, s->tw.win));
    MPI_OK(MPI_Get(&s->got, 1, MPI_INT64_T, to, test_disp(&s->tw, to, stored_word(s->size, e), U), 1,
                   MPI_INT64_T, s->tw.win));
}

static void run(int flavor)
{
    fence_state_t s;
    /* what the previous fence left: no epoch, an epoch with this rank's
     * RMA calls in it (closed by the next fence(0)), or one without */
    enum { CLOSED, OPEN_USED, OPEN_EMPTY } state = CLOSED;

    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    test_win_create(&s.tw, flavor, (size_t) (2 * s.size + 2) * U, U, MPI_INFO_NULL, MPI_COMM_WORLD);
    int64_t *mine = s.tw.mem;

    for (int e = 0; e < EPOCHS; ++e) {
        unsigned int how = choice(e, 1) % CLOSE_KINDS;
        int late = 0 == e % 4 && (int) (choice(e, 2) % (unsigned int) s.size) == s.rank;

        if (late) {
            test_compute_us(30);
        }
        /* nobody reads this word in epoch e - 1 (the other parity) */
        mine[stored_word(s.size, e)] = stored_value(e, s.rank);
        if (OPEN_USED == state) {
            MPI_OK(MPI_Win_fence(0, s.tw.win));
            check_epoch(&s, e - 1);
        } else {
            /* NOPRECEDE after an epoch without RMA as well as after none */
            MPI_OK(MPI_Win_fence(choice(e, 3) % 4 ? MPI_MODE_NOPRECEDE : 0, s.tw.win));
        }
        access_epoch(&s, e);
        state = CLOSED;
        switch (how) {
        case CLOSE_CHAIN:
            state = OPEN_USED;
            continue;
        case CLOSE_OPEN_EMPTY:
            MPI_OK(MPI_Win_fence(0, s.tw.win));
            state = OPEN_EMPTY;
            break;
        default:
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, s.tw.win));
            break;
        }
        check_epoch(&s, e);
        if (CLOSE_BARRIERS == how) {
            for (unsigned int i = 0; i <= choice(e, 4) % 3; ++i) {
                MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, s.tw.win));
            }
        } else if (CLOSE_EMPTY_EPOCH == how) {
            MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, s.tw.win));
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, s.tw.win));
        }
    }
    if (OPEN_USED == state) {
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, s.tw.win));
        check_epoch(&s, EPOCHS - 1);
    } else if (OPEN_EMPTY == state) {
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, s.tw.win));
    }
    test_win_free(&s.tw);
}

/* A process that arrived at fence(NOPRECEDE) and then waits elsewhere in
 * MPI must not hold up the others' first RMA calls of that epoch: rank 0
 * receives a message from every other rank, which each sends only after
 * its put; then rank 0 waits in another window's fence, which the others
 * reach only after their get.  (A barrier whose later steps needed rank 0
 * back in this window would never complete: newrma's dissemination rounds
 * are passed on from the progress engine.) */
static void elsewhere_in_mpi(int flavor)
{
    int rank, size;
    test_win_t tw, other;
    int64_t value, got = 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_win_create(&tw, flavor, (size_t) size * U, U, MPI_INFO_NULL, MPI_COMM_WORLD);
    test_win_create(&other, FLAVOR_ALLOCATE, U, U, MPI_INFO_NULL, MPI_COMM_WORLD);
    int64_t *mine = tw.mem;
    mine[rank] = 1000 + rank;
    value = 2000 + rank;

    /* a message */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw.win));
    if (0 == rank) {
        for (int i = 1; i < size; ++i) {
            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_OK(MPI_Put(&value, 1, MPI_INT64_T, (rank + 1) % size, test_disp(&tw, (rank + 1) % size, rank, U), 1,
                       MPI_INT64_T, tw.win));
        MPI_Send(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    int from = (rank + size - 1) % size;
    if (0 != from) {
        CHECK(mine[from] == 2000 + from, "%s: put of rank %d while rank 0 received: %lld", flavor_names[flavor], from,
              (long long) mine[from]);
    }

    /* another window's fence */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, tw.win));
    if (0 != rank) {
        MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, 0, test_disp(&tw, 0, 0, U), 1, MPI_INT64_T, tw.win));
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, other.win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    if (0 != rank) {
        CHECK(got == 1000, "%s: get of rank 0 while it waited in another window: %lld", flavor_names[flavor],
              (long long) got);
    }
    test_win_free(&other);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) elsewhere_in_mpi(flavor);
    return test_finalize("fence_many");
}
