/*
 * The operations newrma does not provide yet -- MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Rput,
 * MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate -- return
 * MPI_ERR_UNSUPPORTED_OPERATION inside a valid epoch (fence, lock, lock_all,
 * PSCW) and MPI_ERR_RMA_SYNC outside any epoch.  Either way nothing is
 * written: not the target window, not the result/origin buffers; the
 * request-returning calls set the request to MPI_REQUEST_NULL.  The window
 * keeps working (a put in the same epoch goes through).  Every flavor.
 *
 * newrma-test: only-newrma
 */
#include "common.h"

#define NSLOT 8
#define FILL ((int64_t) -31)

static int rank, size, right, left;

static int64_t init_value(int owner, int i) { return (int64_t) owner * 100 + i + 1; }

/* A request handle that is not MPI_REQUEST_NULL, to see the call overwrite
 * it: an inactive persistent request (freed by the caller). */
static MPI_Request sentinel_request(void)
{
    static int64_t dummy;
    MPI_Request req;
    MPI_OK(MPI_Send_init(&dummy, 1, MPI_INT64_T, MPI_PROC_NULL, 0, MPI_COMM_SELF, &req));
    return req;
}

/* All eight calls to `target`; each must fail with `expected`.  Result and
 * origin buffers must stay as they were. */
static void all_calls(test_win_t *tw, int target, int expected, const char *ctx)
{
    const char *fl = flavor_names[tw->flavor];
    MPI_Win win = tw->win;
    MPI_Aint d = test_disp(tw, target, 2, sizeof(int64_t));
    int64_t origin[4] = { 5, 6, 7, 8 }, compare = init_value(target, 2), result[4];
    MPI_Request req, keep;
    int cls;

#define EXPECT(call, name)                                                                         \
    do {                                                                                           \
        MPI_Error_class((call), &cls);                                                             \
        CHECK(cls == expected, "%s, %s: %s returned class %d, expected %s (%d)", fl, ctx, name, cls, \
              expected == MPI_ERR_RMA_SYNC ? "MPI_ERR_RMA_SYNC" : "MPI_ERR_UNSUPPORTED_OPERATION", expected); \
    } while (0)
#define RESULT_UNTOUCHED(name)                                                                     \
    do {                                                                                           \
        for (int i_ = 0; i_ < 4; ++i_)                                                             \
            if (result[i_] != FILL) {                                                              \
                CHECK(0, "%s, %s: %s wrote the result buffer (element %d = %lld)", fl, ctx, name, i_, \
                      (long long) result[i_]);                                                     \
                break;                                                                             \
            }                                                                                      \
    } while (0)
#define REQUEST_NULL(name)                                                                         \
    do {                                                                                           \
        CHECK(MPI_REQUEST_NULL == req, "%s, %s: %s left the request %s", fl, ctx, name,            \
              req == keep ? "unchanged" : "set to something other than MPI_REQUEST_NULL");         \
        MPI_Request_free(&keep);                                                                   \
    } while (0)

    for (int i = 0; i < 4; ++i) result[i] = FILL;
    EXPECT(MPI_Accumulate(origin, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, MPI_SUM, win), "MPI_Accumulate(SUM)");
    EXPECT(MPI_Accumulate(origin, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, MPI_REPLACE, win),
           "MPI_Accumulate(REPLACE)");
    EXPECT(MPI_Get_accumulate(origin, 4, MPI_INT64_T, result, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, MPI_SUM,
                              win), "MPI_Get_accumulate(SUM)");
    RESULT_UNTOUCHED("MPI_Get_accumulate(SUM)");
    EXPECT(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, result, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, MPI_NO_OP,
                              win), "MPI_Get_accumulate(NO_OP)");
    RESULT_UNTOUCHED("MPI_Get_accumulate(NO_OP)");
    EXPECT(MPI_Fetch_and_op(origin, result, MPI_INT64_T, target, d, MPI_SUM, win), "MPI_Fetch_and_op(SUM)");
    RESULT_UNTOUCHED("MPI_Fetch_and_op(SUM)");
    EXPECT(MPI_Fetch_and_op(NULL, result, MPI_INT64_T, target, d, MPI_NO_OP, win), "MPI_Fetch_and_op(NO_OP)");
    RESULT_UNTOUCHED("MPI_Fetch_and_op(NO_OP)");
    EXPECT(MPI_Compare_and_swap(origin, &compare, result, MPI_INT64_T, target, d, win), "MPI_Compare_and_swap");
    RESULT_UNTOUCHED("MPI_Compare_and_swap");

    req = keep = sentinel_request();
    EXPECT(MPI_Rput(origin, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, win, &req), "MPI_Rput");
    REQUEST_NULL("MPI_Rput");
    req = keep = sentinel_request();
    EXPECT(MPI_Rget(result, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, win, &req), "MPI_Rget");
    REQUEST_NULL("MPI_Rget");
    RESULT_UNTOUCHED("MPI_Rget");
    req = keep = sentinel_request();
    EXPECT(MPI_Raccumulate(origin, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, MPI_SUM, win, &req),
           "MPI_Raccumulate");
    REQUEST_NULL("MPI_Raccumulate");
    req = keep = sentinel_request();
    EXPECT(MPI_Rget_accumulate(origin, 4, MPI_INT64_T, result, 4, MPI_INT64_T, target, d, 4, MPI_INT64_T, MPI_SUM,
                               win, &req), "MPI_Rget_accumulate");
    REQUEST_NULL("MPI_Rget_accumulate");
    RESULT_UNTOUCHED("MPI_Rget_accumulate");

    CHECK(origin[0] == 5 && origin[1] == 6 && origin[2] == 7 && origin[3] == 8 && compare == init_value(target, 2),
          "%s, %s: an origin or compare buffer changed", fl, ctx);
#undef EXPECT
#undef RESULT_UNTOUCHED
#undef REQUEST_NULL
}

/* This rank's window holds its initial values, except slot 0, which a put
 * in each epoch sets to `slot0`. */
static void check_window(test_win_t *tw, int64_t slot0, const char *ctx)
{
    int64_t *mine = tw->mem;
    CHECK(mine[0] == slot0, "%s, %s: slot 0 is %lld, expected %lld (put in the same epoch)", flavor_names[tw->flavor],
          ctx, (long long) mine[0], (long long) slot0);
    for (int i = 1; i < NSLOT; ++i)
        CHECK(mine[i] == init_value(rank, i), "%s, %s: slot %d is %lld, expected %lld: an unsupported call wrote it",
              flavor_names[tw->flavor], ctx, i, (long long) mine[i], (long long) init_value(rank, i));
}

static int64_t put_value(int writer, int epoch) { return -(int64_t) (writer * 10 + epoch) - 1000; }

/* A put to slot 0 of the right neighbour, to show the epoch still works. */
static void put_slot0(test_win_t *tw, int epoch)
{
    int64_t v = put_value(rank, epoch);
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, test_disp(tw, right, 0, sizeof(int64_t)), 1, MPI_INT64_T, tw->win));
}

static void run(int flavor)
{
    test_win_t tw;
    MPI_Group all, to, from;

    test_win_create(&tw, flavor, NSLOT * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    for (int i = 0; i < NSLOT; ++i) ((int64_t *) tw.mem)[i] = init_value(rank, i);
    MPI_Barrier(MPI_COMM_WORLD);

    /* outside any epoch, to every target */
    for (int t = 0; t < size; ++t) all_calls(&tw, t, MPI_ERR_RMA_SYNC, "outside any epoch");

    /* fence epoch */
    MPI_OK(MPI_Win_fence(0, tw.win));
    all_calls(&tw, right, MPI_ERR_UNSUPPORTED_OPERATION, "fence epoch");
    put_slot0(&tw, 1);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
    check_window(&tw, put_value(left, 1), "after a fence epoch");
    MPI_Barrier(MPI_COMM_WORLD);   /* checked before the next epoch writes slot 0 again */

    /* after the fence epoch closed */
    all_calls(&tw, right, MPI_ERR_RMA_SYNC, "after fence(NOSUCCEED)");

    /* lock epoch; and to a target that is not locked */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw.win));
    all_calls(&tw, right, MPI_ERR_UNSUPPORTED_OPERATION, "lock epoch");
    if (size > 1) all_calls(&tw, rank, MPI_ERR_RMA_SYNC, "lock epoch, target not locked");
    put_slot0(&tw, 2);
    MPI_OK(MPI_Win_unlock(right, tw.win));
    all_calls(&tw, right, MPI_ERR_RMA_SYNC, "after unlock");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    check_window(&tw, put_value(left, 2), "after a lock epoch");
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* lock_all epoch */
    MPI_OK(MPI_Win_lock_all(0, tw.win));
    for (int t = 0; t < size; ++t) all_calls(&tw, t, MPI_ERR_UNSUPPORTED_OPERATION, "lock_all epoch");
    put_slot0(&tw, 3);
    MPI_OK(MPI_Win_unlock_all(tw.win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));
    check_window(&tw, put_value(left, 3), "after a lock_all epoch");
    MPI_OK(MPI_Win_unlock(rank, tw.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* PSCW epoch: start group {right} */
    MPI_OK(MPI_Win_get_group(tw.win, &all));
    MPI_OK(MPI_Group_incl(all, 1, &right, &to));
    MPI_OK(MPI_Group_incl(all, 1, &left, &from));
    MPI_OK(MPI_Win_post(from, 0, tw.win));
    MPI_OK(MPI_Win_start(to, 0, tw.win));
    all_calls(&tw, right, MPI_ERR_UNSUPPORTED_OPERATION, "PSCW epoch");
    if (size > 2) all_calls(&tw, left, MPI_ERR_RMA_SYNC, "PSCW epoch, target outside the start group");
    put_slot0(&tw, 4);
    MPI_OK(MPI_Win_complete(tw.win));
    MPI_OK(MPI_Win_wait(tw.win));
    check_window(&tw, put_value(left, 4), "after a PSCW epoch");
    MPI_OK(MPI_Group_free(&to));
    MPI_OK(MPI_Group_free(&from));
    MPI_OK(MPI_Group_free(&all));

    MPI_Barrier(MPI_COMM_WORLD);
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (int flavor = 0; flavor < FLAVOR_COUNT; ++flavor) run(flavor);
    return test_finalize("unsupported_ops");
}
