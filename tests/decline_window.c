/*
 * A window newrma cannot serve gets a clear error, never a crash, and the
 * job goes on: with single-copy access turned off (osc_newrma_use_cma=0),
 * MPI_Win_create and MPI_Win_create_dynamic on more than one process are
 * declined; with newrma the only osc component, creation returns an error
 * (after a help message saying why) while allocate windows keep working.
 *
 * newrma-test: only-newrma np=2,3,4 mca=osc_newrma_use_cma:0
 */
#include "common.h"

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int64_t mem[4] = { 0 };
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_create(mem, sizeof(mem), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK(MPI_SUCCESS != rc, "MPI_Win_create was served with osc_newrma_use_cma=0");
    if (MPI_SUCCESS == rc) MPI_Win_free(&win);
    rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK(MPI_SUCCESS != rc, "MPI_Win_create_dynamic was served with osc_newrma_use_cma=0");
    if (MPI_SUCCESS == rc) MPI_Win_free(&win);

    /* the job goes on: an allocate window works */
    test_win_t tw;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_win_create(&tw, FLAVOR_ALLOCATE, 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    int64_t v = rank + 100;
    MPI_OK(MPI_Win_fence(0, tw.win));
    MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, (rank + 1) % size, 0, 1, MPI_INT64_T, tw.win));
    MPI_OK(MPI_Win_fence(0, tw.win));
    CHECK(*(int64_t *) tw.mem == (rank + size - 1) % size + 100, "allocate window after the refusals: %lld",
          (long long) *(int64_t *) tw.mem);
    test_win_free(&tw);
    return test_finalize("decline_window");
}
