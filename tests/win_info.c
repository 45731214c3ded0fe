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
 * Window info keys newrma honors, as MPI_Win_get_info reports them:
 *   no_locks, accumulate_ordering, accumulate_ops, same_size, same_disp_unit,
 *   alloc_shared_noncontig
 * - defaults when the user passes no info (or an empty one);
 * - the user's values at creation, accumulate_ordering in canonical order
 *   (rar,raw,war,waw) whatever order the user wrote;
 * - malformed values are ignored: the default is reported;
 * - MPI_Win_set_info changes no_locks, accumulate_ordering and
 *   accumulate_ops (malformed values ignored: the value in effect stays),
 *   but not same_size, same_disp_unit, alloc_shared_noncontig;
 * - no_locks=true is honored (lock refused), malformed no_locks is not;
 *   taken back with MPI_Win_set_info on a window created with it, locks stay
 *   refused where the window was laid out without lock words (newrma's node
 *   windows), never a crash.
 * After MPI_Win_set_info, Open MPI 4.1's info layer (not the component)
 * reports the string the user passed, whatever the component keeps
 * (opal_infosubscribe_change_info saves it as "__IN_<key>" after the
 * component's callback, and MPI_Win_get_info prefers that); so after
 * set_info this test checks get_info only for values the user spelled
 * canonically, and checks behaviour (locks refused or not) for the rest.
 * Every flavor, on MPI_COMM_WORLD.
 *
 * newrma-test: only-newrma
 * (what other components report for these keys differs)
 */
#include "common.h"

#define NKEYS 6
static const char *const keys[NKEYS] = { "no_locks", "accumulate_ordering", "accumulate_ops",
                                         "same_size", "same_disp_unit", "alloc_shared_noncontig" };
static const char *const defaults[NKEYS] = { "false", "rar,raw,war,waw", "same_op_no_op", "false", "false", "false" };

static int rank, size;

/* Check that get_info reports `expected[i]` for every key i (NULL: skip). */
static void expect_info(MPI_Win win, const char *ctx, const char *const expected[NKEYS])
{
    MPI_Info info = MPI_INFO_NULL;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    MPI_OK(MPI_Win_get_info(win, &info));
    if (MPI_INFO_NULL == info) {
        CHECK(0, "%s: MPI_Win_get_info returned MPI_INFO_NULL", ctx);
        return;
    }
    for (int i = 0; i < NKEYS; ++i) {
        if (NULL == expected[i]) continue;
        flag = 0;
        value[0] = '\0';
        MPI_OK(MPI_Info_get(info, keys[i], MPI_MAX_INFO_VAL, value, &flag));
        CHECK(flag, "%s: MPI_Win_get_info has no key %s (expected \"%s\")", ctx, keys[i], expected[i]);
        if (flag)
            CHECK(0 == strcmp(value, expected[i]), "%s: %s is \"%s\", expected \"%s\"", ctx, keys[i], value,
                  expected[i]);
    }
    MPI_OK(MPI_Info_free(&info));
}

static void expect_one(MPI_Win win, const char *ctx, int key, const char *expected)
{
    const char *e[NKEYS] = { NULL };
    e[key] = expected;
    expect_info(win, ctx, e);
}

/* Window of `flavor` with the given key/value pairs (NULL-terminated). */
static void open_with(test_win_t *tw, int flavor, const char *const *pairs)
{
    MPI_Info info = MPI_INFO_NULL;
    if (NULL != pairs) {
        MPI_Info_create(&info);
        for (; NULL != pairs[0]; pairs += 2) MPI_OK(MPI_Info_set(info, pairs[0], pairs[1]));
    }
    test_win_create(tw, flavor, 16 * sizeof(int64_t), sizeof(int64_t), info, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw->win, MPI_ERRORS_RETURN));
    if (MPI_INFO_NULL != info) MPI_Info_free(&info);
}

static void set_info(MPI_Win win, const char *key, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_OK(MPI_Info_set(info, key, value));
    MPI_OK(MPI_Win_set_info(win, info));
    MPI_Info_free(&info);
}

/* Locks work (or are refused with RMA_SYNC), and a put moves data either way. */
static void check_locks(test_win_t *tw, const char *ctx, int allowed)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int64_t out = 1000 + rank;
    if (allowed) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, tw->win));
        MPI_OK(MPI_Win_unlock(right, tw->win));
        MPI_OK(MPI_Win_lock_all(0, tw->win));
        MPI_OK(MPI_Win_unlock_all(tw->win));
    } else {
        int cls;
        MPI_Error_class(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, tw->win), &cls);
        CHECK(MPI_ERR_RMA_SYNC == cls, "%s: lock returned class %d, expected MPI_ERR_RMA_SYNC (no_locks)", ctx, cls);
        MPI_Error_class(MPI_Win_lock_all(0, tw->win), &cls);
        CHECK(MPI_ERR_RMA_SYNC == cls, "%s: lock_all returned class %d, expected MPI_ERR_RMA_SYNC (no_locks)", ctx,
              cls);
    }
    MPI_OK(MPI_Win_fence(0, tw->win));
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, test_disp(tw, right, 5, sizeof(int64_t)), 1, MPI_INT64_T, tw->win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
    CHECK(((int64_t *) tw->mem)[5] == 1000 + left, "%s: fence put delivered %lld", ctx,
          (long long) ((int64_t *) tw->mem)[5]);
}

static void run(int flavor)
{
    const char *fl = flavor_names[flavor];
    char ctx[160];
    test_win_t tw;

    /* ---- defaults ---- */
    open_with(&tw, flavor, NULL);
    snprintf(ctx, sizeof(ctx), "%s, MPI_INFO_NULL", fl);
    expect_info(tw.win, ctx, defaults);
    check_locks(&tw, ctx, 1);
    test_win_free(&tw);

    {
        static const char *const none[] = { NULL };
        open_with(&tw, flavor, none);
        snprintf(ctx, sizeof(ctx), "%s, empty info", fl);
        expect_info(tw.win, ctx, defaults);
        test_win_free(&tw);
    }

    /* ---- user values at creation ---- */
    {
        static const char *const pairs[] = { "no_locks", "true", "accumulate_ordering", "none",
                                             "accumulate_ops", "same_op", "same_size", "true",
                                             "same_disp_unit", "true", "alloc_shared_noncontig", "true", NULL };
        static const char *const expect[NKEYS] = { "true", "none", "same_op", "true", "true", "true" };
        open_with(&tw, flavor, pairs);
        snprintf(ctx, sizeof(ctx), "%s, every key set", fl);
        expect_info(tw.win, ctx, expect);
        check_locks(&tw, ctx, 0);
        test_win_free(&tw);
    }
    {
        static const char *const pairs[] = { "no_locks", "false", "accumulate_ordering", "rar,raw,war,waw",
                                             "accumulate_ops", "same_op_no_op", "same_size", "false",
                                             "same_disp_unit", "false", "alloc_shared_noncontig", "false", NULL };
        open_with(&tw, flavor, pairs);
        snprintf(ctx, sizeof(ctx), "%s, every key set to its default", fl);
        expect_info(tw.win, ctx, defaults);
        check_locks(&tw, ctx, 1);
        test_win_free(&tw);
    }

    /* accumulate_ordering: subsets, any order in, canonical order out */
    {
        static const char *const in_out[][2] = {
            { "rar", "rar" }, { "waw", "waw" }, { "waw,rar", "rar,waw" }, { "war,raw", "raw,war" },
            { "waw,war,raw,rar", "rar,raw,war,waw" }, { "raw,rar,waw", "rar,raw,waw" },
        };
        for (size_t k = 0; k < sizeof(in_out) / sizeof(in_out[0]); ++k) {
            const char *pairs[] = { "accumulate_ordering", in_out[k][0], NULL };
            open_with(&tw, flavor, pairs);
            snprintf(ctx, sizeof(ctx), "%s, created with accumulate_ordering=\"%s\"", fl, in_out[k][0]);
            expect_one(tw.win, ctx, 1, in_out[k][1]);
            test_win_free(&tw);
        }
    }

    /* ---- malformed values at creation: defaults reported ----
     * (not accumulate_ops: Open MPI's MPI layer itself refuses to create a
     * window with a malformed accumulate_ops, before any component runs) */
    {
        static const char *const pairs[] = { "no_locks", "maybe", "accumulate_ordering", "rar,foo",
                                             "same_size", "yes", "same_disp_unit", "tru",
                                             "alloc_shared_noncontig", "on", NULL };
        open_with(&tw, flavor, pairs);
        snprintf(ctx, sizeof(ctx), "%s, malformed values at creation", fl);
        expect_info(tw.win, ctx, defaults);
        check_locks(&tw, ctx, 1);   /* no_locks=maybe does not forbid locks */
        test_win_free(&tw);
    }
    {
        static const char *const pairs[] = { "accumulate_ordering", "sometimes", NULL };
        open_with(&tw, flavor, pairs);
        snprintf(ctx, sizeof(ctx), "%s, accumulate_ordering=\"sometimes\"", fl);
        expect_one(tw.win, ctx, 1, defaults[1]);
        test_win_free(&tw);
    }

    /* ---- MPI_Win_set_info on a default window ---- */
    open_with(&tw, flavor, NULL);
    snprintf(ctx, sizeof(ctx), "%s, set_info no_locks=true", fl);
    set_info(tw.win, "no_locks", "true");
    expect_one(tw.win, ctx, 0, "true");
    check_locks(&tw, ctx, 0);
    snprintf(ctx, sizeof(ctx), "%s, set_info no_locks=maybe (after true)", fl);
    set_info(tw.win, "no_locks", "maybe");
    check_locks(&tw, ctx, 0);       /* still true: the malformed value is ignored */
    snprintf(ctx, sizeof(ctx), "%s, set_info no_locks=false", fl);
    set_info(tw.win, "no_locks", "false");
    expect_one(tw.win, ctx, 0, "false");
    check_locks(&tw, ctx, 1);

    snprintf(ctx, sizeof(ctx), "%s, set_info accumulate_ordering=raw", fl);
    set_info(tw.win, "accumulate_ordering", "raw");
    expect_one(tw.win, ctx, 1, "raw");
    snprintf(ctx, sizeof(ctx), "%s, set_info accumulate_ordering=raw,waw", fl);
    set_info(tw.win, "accumulate_ordering", "raw,waw");
    expect_one(tw.win, ctx, 1, "raw,waw");
    snprintf(ctx, sizeof(ctx), "%s, set_info accumulate_ordering=none", fl);
    set_info(tw.win, "accumulate_ordering", "none");
    expect_one(tw.win, ctx, 1, "none");

    snprintf(ctx, sizeof(ctx), "%s, set_info accumulate_ops=same_op", fl);
    set_info(tw.win, "accumulate_ops", "same_op");
    expect_one(tw.win, ctx, 2, "same_op");
    snprintf(ctx, sizeof(ctx), "%s, set_info accumulate_ops=same_op_no_op", fl);
    set_info(tw.win, "accumulate_ops", "same_op_no_op");
    expect_one(tw.win, ctx, 2, "same_op_no_op");

    test_win_free(&tw);

    /* ... and the other way round, several keys in one set_info */
    {
        static const char *const pairs[] = { "same_size", "true", "same_disp_unit", "true",
                                             "alloc_shared_noncontig", "true", NULL };
        /* the fixed keys' reported values are Open MPI 4.1's (see above) */
        static const char *const expect[NKEYS] = { "true", "rar", "same_op_no_op", NULL, NULL, NULL };
        MPI_Info info;
        open_with(&tw, flavor, pairs);
        MPI_Info_create(&info);
        MPI_Info_set(info, "same_size", "false");
        MPI_Info_set(info, "same_disp_unit", "false");
        MPI_Info_set(info, "alloc_shared_noncontig", "false");
        MPI_Info_set(info, "no_locks", "true");
        MPI_Info_set(info, "accumulate_ordering", "rar");
        MPI_OK(MPI_Win_set_info(tw.win, info));
        MPI_Info_free(&info);
        snprintf(ctx, sizeof(ctx), "%s, created with fixed keys true, set_info false + no_locks=true", fl);
        expect_info(tw.win, ctx, expect);
        check_locks(&tw, ctx, 0);
        test_win_free(&tw);
    }

    /* created with no_locks=true, then set_info no_locks=false: newrma's
     * node windows were laid out without lock words and keep refusing locks
     * (MPI_Win_set_info's hints need not be honored); active-message
     * windows lock by messages and take locks again.  Never a crash. */
    {
        static const char *const pairs[] = { "no_locks", "true", NULL };
        open_with(&tw, flavor, pairs);
        set_info(tw.win, "no_locks", "false");
        snprintf(ctx, sizeof(ctx), "%s, created with no_locks=true, set_info no_locks=false", fl);
        check_locks(&tw, ctx, test_am_path(flavor));
        test_win_free(&tw);
    }
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < FLAVOR_COUNT; flavor = test_next_flavor(flavor)) run(flavor);
    return test_finalize("win_info");
}
