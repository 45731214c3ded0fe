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
 * Accumulates on the MAXLOC/MINLOC pair types whose C struct has padding:
 * MPI_SHORT_INT (short, 2 bytes of padding, int), MPI_LONG_INT and
 * MPI_DOUBLE_INT (8 + 4 bytes, 4 of trailing padding), MPI_LONG_DOUBLE_INT
 * (16 + 4 bytes, 12 of padding) -- and, as controls, MPI_2INT and
 * MPI_FLOAT_INT, which have none.  The type's size is less than its extent,
 * so an element is not one contiguous run of bytes and a packed buffer of
 * them is not an array of the C struct (MPICH's atomic_get_*_int and
 * acc_pairtype).  Several elements per call:
 *  - MPI_Accumulate(MAXLOC) of K elements: odd elements win, even ones lose;
 *  - MPI_Get_accumulate(MINLOC) of K elements returns the previous ones and
 *    stores the origin's (smaller) values;
 *  - MPI_Get_accumulate(NO_OP) and MPI_Fetch_and_op(MAXLOC) on one element;
 *  - MPI_Accumulate(MAXLOC) with a vector type of pairs (every other one);
 * on every flavor, to every target including self, under lock_all.  Each
 * origin owns its K elements of every target's window: exact values.
 */
#include "common.h"

#define K 6

#define PAIR_TEST(NAME, CTYPE, MPITYPE)                                                                        \
typedef struct { CTYPE a; int b; } NAME##_t;                                                                  \
static void NAME##_run(int flavor)                                                                            \
{                                                                                                             \
    int rank, size;                                                                                           \
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);                                                                     \
    MPI_Comm_size(MPI_COMM_WORLD, &size);                                                                     \
    const char *fl = flavor_names[flavor], *tn = #MPITYPE;                                                    \
    const int unit = (int) sizeof(NAME##_t);                                                                  \
    test_win_t tw;                                                                                            \
    test_win_create(&tw, flavor, (size_t) size * K * sizeof(NAME##_t), unit, MPI_INFO_NULL, MPI_COMM_WORLD);   \
    MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN);                                                        \
    NAME##_t *mine = tw.mem;                                                                                  \
    /* my window: origin o's element i is { 10 + i, 100 * o + i } */                                          \
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, tw.win));                                                \
    for (int o = 0; o < size; ++o)                                                                            \
        for (int i = 0; i < K; ++i) {                                                                         \
            mine[o * K + i].a = (CTYPE) (10 + i);                                                             \
            mine[o * K + i].b = 100 * o + i;                                                                  \
        }                                                                                                     \
    MPI_OK(MPI_Win_unlock(rank, tw.win));                                                                     \
    MPI_Barrier(MPI_COMM_WORLD);                                                                              \
                                                                                                              \
    NAME##_t in[K], res[K], one, old;                                                                         \
    MPI_Datatype every_other;                                                                                 \
    MPI_Type_vector(K / 2, 1, 2, MPITYPE, &every_other);                                                      \
    MPI_Type_commit(&every_other);                                                                            \
    MPI_OK(MPI_Win_lock_all(0, tw.win));                                                                      \
    for (int t = 0; t < size; ++t) {                                                                          \
        MPI_Aint d = test_disp(&tw, t, (MPI_Aint) rank * K, unit);                                           \
        /* MAXLOC: odd elements are larger than the target's, even ones smaller */                            \
        for (int i = 0; i < K; ++i) {                                                                         \
            in[i].a = (CTYPE) (i % 2 ? 20 + i : 5);                                                           \
            clear_ldouble_padding(&in[i].a, sizeof(CTYPE));                                                   \
            in[i].b = 1000 + i;                                                                               \
        }                                                                                                     \
        MPI_OK(MPI_Accumulate(in, K, MPITYPE, t, d, K, MPITYPE, MPI_MAXLOC, tw.win));                         \
        MPI_OK(MPI_Win_flush(t, tw.win));                                                                     \
        /* MINLOC with smaller values everywhere: returns the MAXLOC result */                                 \
        for (int i = 0; i < K; ++i) {                                                                         \
            in[i].a = (CTYPE) (1 + i);                                                                        \
            clear_ldouble_padding(&in[i].a, sizeof(CTYPE));                                                   \
            in[i].b = 2000 + i;                                                                               \
            res[i].a = (CTYPE) -1;                                                                            \
            res[i].b = -1;                                                                                    \
        }                                                                                                     \
        MPI_OK(MPI_Get_accumulate(in, K, MPITYPE, res, K, MPITYPE, t, d, K, MPITYPE, MPI_MINLOC, tw.win));    \
        MPI_OK(MPI_Win_flush(t, tw.win));                                                                     \
        for (int i = 0; i < K; ++i) {                                                                         \
            CTYPE ea = (CTYPE) (i % 2 ? 20 + i : 10 + i);                                                     \
            int eb = i % 2 ? 1000 + i : 100 * rank + i;                                                        \
            CHECK(res[i].a == ea && res[i].b == eb,                                                           \
                  "%s/%s: get_accumulate(MINLOC) from %d: old[%d] = {%g, %d}, expected {%g, %d}", fl, tn, t, i,  \
                  (double) res[i].a, res[i].b, (double) ea, eb);                                              \
        }                                                                                                     \
        /* NO_OP: the MINLOC result */                                                                        \
        for (int i = 0; i < K; ++i) {                                                                         \
            res[i].a = (CTYPE) -1;                                                                            \
            res[i].b = -1;                                                                                    \
        }                                                                                                     \
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPITYPE, res, K, MPITYPE, t, d, K, MPITYPE, MPI_NO_OP, tw.win));   \
        MPI_OK(MPI_Win_flush(t, tw.win));                                                                     \
        for (int i = 0; i < K; ++i) {                                                                         \
            CHECK(res[i].a == (CTYPE) (1 + i) && res[i].b == 2000 + i,                                        \
                  "%s/%s: get_accumulate(NO_OP) from %d: [%d] = {%g, %d}, expected {%d, %d}", fl, tn, t, i,      \
                  (double) res[i].a, res[i].b, 1 + i, 2000 + i);                                              \
        }                                                                                                     \
        /* fetch_and_op MAXLOC on the last element */                                                         \
        one.a = (CTYPE) 50;                                                                                   \
        clear_ldouble_padding(&one.a, sizeof(CTYPE));                                                         \
        one.b = 3000;                                                                                         \
        old.a = (CTYPE) -1;                                                                                   \
        old.b = -1;                                                                                           \
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPITYPE, t, test_disp(&tw, t, (MPI_Aint) rank * K + K - 1, unit),  \
                                MPI_MAXLOC, tw.win));                                                         \
        MPI_OK(MPI_Win_flush(t, tw.win));                                                                     \
        CHECK(old.a == (CTYPE) K && old.b == 2000 + K - 1,                                                    \
              "%s/%s: fetch_and_op(MAXLOC) from %d returned {%g, %d}, expected {%d, %d}", fl, tn, t,            \
              (double) old.a, old.b, K, 2000 + K - 1);                                                        \
        /* MAXLOC through a vector of pairs: elements 0, 2, 4 become { 40 + i, 4000 + i } */                  \
        for (int i = 0; i < K / 2; ++i) {                                                                     \
            in[i].a = (CTYPE) (40 + 2 * i);                                                                   \
            clear_ldouble_padding(&in[i].a, sizeof(CTYPE));                                                   \
            in[i].b = 4000 + 2 * i;                                                                           \
        }                                                                                                     \
        MPI_OK(MPI_Accumulate(in, K / 2, MPITYPE, t, d, 1, every_other, MPI_MAXLOC, tw.win));                 \
    }                                                                                                         \
    MPI_OK(MPI_Win_unlock_all(tw.win));                                                                       \
    MPI_Barrier(MPI_COMM_WORLD);                                                                              \
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw.win));                                                   \
    for (int o = 0; o < size; ++o)                                                                            \
        for (int i = 0; i < K; ++i) {                                                                         \
            CTYPE ea = (CTYPE) (i % 2 ? 1 + i : 40 + i);                                                      \
            int eb = i % 2 ? 2000 + i : 4000 + i;                                                             \
            if (K - 1 == i) {                                                                                 \
                ea = (CTYPE) 50;                                                                              \
                eb = 3000;                                                                                    \
            }                                                                                                 \
            CHECK(mine[o * K + i].a == ea && mine[o * K + i].b == eb,                                         \
                  "%s/%s: my element %d of origin %d is {%g, %d}, expected {%g, %d}", fl, tn, i, o,             \
                  (double) mine[o * K + i].a, mine[o * K + i].b, (double) ea, eb);                            \
        }                                                                                                     \
    MPI_OK(MPI_Win_unlock(rank, tw.win));                                                                     \
    MPI_Type_free(&every_other);                                                                              \
    test_win_free(&tw);                                                                                       \
}

PAIR_TEST(pshort, short, MPI_SHORT_INT)
PAIR_TEST(plong, long, MPI_LONG_INT)
PAIR_TEST(pdouble, double, MPI_DOUBLE_INT)
PAIR_TEST(pldouble, long double, MPI_LONG_DOUBLE_INT)
PAIR_TEST(p2int, int, MPI_2INT)
PAIR_TEST(pfloat, float, MPI_FLOAT_INT)

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) {
        p2int_run(flavor);
        pfloat_run(flavor);
        pshort_run(flavor);
        plong_run(flavor);
        pdouble_run(flavor);
        pldouble_run(flavor);
    }
    return test_finalize("acc_pair_padding");
}
