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
 * MPI_Win_attach / MPI_Win_detach on dynamic windows.
 *
 *  - 2000 regions attached on one window by every rank (out of address
 *    order), the first, middle and last ones read and written by another
 *    rank, all detached again;
 *  - overlapping attach -> MPI_ERR_RMA_ATTACH (same region, starting inside,
 *    ending inside, covering), while a region that only touches one is fine;
 *  - detach of a base that is not attached -> MPI_ERR_RMA_ATTACH;
 *  - attach / detach on an MPI_Win_allocate window -> MPI_ERR_RMA_FLAVOR;
 *  - a put/get spanning two adjacent regions (two halves of one buffer
 *    attached separately) works; across a gap it is MPI_ERR_RMA_RANGE;
 *  - access to a region the target detached -> MPI_ERR_RMA_RANGE, and works
 *    again once the target re-attaches it;
 *  - a region detached while the origin is inside an epoch that already
 *    accessed it: refused (by the target, on the active-message path) and
 *    reported as MPI_ERR_RMA_RANGE by the call or the next flush, nothing
 *    written;
 *  - MPI_Win_shared_query on a dynamic window -> MPI_ERR_RMA_FLAVOR (MPI 4.1
 *    allows it on the other flavors: tests/shared_query_flavors.c).
 * After every error the window keeps working.
 *
 * newrma-test: only-newrma
 * (error classes of attach/detach and of accesses to unattached memory are
 * newrma's; the legal parts are standard)
 */
#include "common.h"

#define NREG 2000
#define REG_ELEMS 4            /* int64 per region */
#define REG_STRIDE 6           /* regions are REG_STRIDE apart: a 2-element gap between them */
#define HALF 16                /* elements in each half of the split buffer */

static int rank, size, right, left;

static int64_t reg_value(int owner, int region, int k) { return ((int64_t) owner << 32) + region * 8 + k + 1; }

/* The order regions are attached in: a fixed permutation of 0..NREG-1 that
 * is far from address order (multiplicative stride, coprime with NREG). */
static int permuted(int i) { return (int) (((long) i * 1237 + 611) % NREG); }

static MPI_Aint address_of(const void *p)
{
    MPI_Aint a;
    MPI_Get_address(p, &a);
    return a;
}

static void many_regions(void)
{
    MPI_Win win;
    int64_t *buf = malloc(sizeof(int64_t) * NREG * REG_STRIDE);
    MPI_Aint mine, *bases = malloc(sizeof(MPI_Aint) * (size_t) size), rbase;
    int64_t got[REG_ELEMS], out[REG_ELEMS];
    static const int probes[] = { 0, NREG - 1, NREG / 2, 1, NREG - 2 };

    for (int r = 0; r < NREG; ++r)
        for (int k = 0; k < REG_STRIDE; ++k) buf[r * REG_STRIDE + k] = k < REG_ELEMS ? reg_value(rank, r, k) : -1;

    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < NREG; ++i) {
        int r = permuted(i);
        MPI_OK(MPI_Win_attach(win, buf + r * REG_STRIDE, REG_ELEMS * sizeof(int64_t)));
    }
    mine = address_of(buf);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    rbase = bases[right];
    MPI_Barrier(MPI_COMM_WORLD);

    /* read the first, last and a few other regions of the right neighbour */
    MPI_OK(MPI_Win_lock_all(0, win));
    for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); ++p) {
        int r = probes[p];
        for (int k = 0; k < REG_ELEMS; ++k) got[k] = -5;
        MPI_OK(MPI_Get(got, REG_ELEMS, MPI_INT64_T, right, rbase + (MPI_Aint) (r * REG_STRIDE * sizeof(int64_t)),
                       REG_ELEMS, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(right, win));
        for (int k = 0; k < REG_ELEMS; ++k)
            CHECK(got[k] == reg_value(right, r, k), "region %d of rank %d, element %d: got %lld, expected %lld", r,
                  right, k, (long long) got[k], (long long) reg_value(right, r, k));
    }
    /* the gap between two regions is not attached */
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE,
                   MPI_Get(got, 1, MPI_INT64_T, right, rbase + (MPI_Aint) (REG_ELEMS * sizeof(int64_t)), 1,
                           MPI_INT64_T, win));
    /* a region plus one element of the following gap */
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE,
                   MPI_Get(got, REG_ELEMS + 1, MPI_INT64_T, right, rbase, REG_ELEMS + 1, MPI_INT64_T, win));
    /* write into the first and the last region */
    for (int k = 0; k < REG_ELEMS; ++k) out[k] = -reg_value(rank, 0, k);
    MPI_OK(MPI_Put(out, REG_ELEMS, MPI_INT64_T, right, rbase, REG_ELEMS, MPI_INT64_T, win));
    /* a second buffer: the first put's may not change before the epoch ends */
    int64_t out_last[REG_ELEMS];
    for (int k = 0; k < REG_ELEMS; ++k) out_last[k] = -reg_value(rank, NREG - 1, k);
    MPI_OK(MPI_Put(out_last, REG_ELEMS, MPI_INT64_T, right,
                   rbase + (MPI_Aint) ((NREG - 1) * REG_STRIDE * sizeof(int64_t)), REG_ELEMS, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));   /* local reads of RMA-written memory */
    for (int k = 0; k < REG_ELEMS; ++k) {
        CHECK(buf[k] == -reg_value(left, 0, k), "first region, element %d: %lld after put, expected %lld", k,
              (long long) buf[k], (long long) -reg_value(left, 0, k));
        CHECK(buf[(NREG - 1) * REG_STRIDE + k] == -reg_value(left, NREG - 1, k),
              "last region, element %d: %lld after put, expected %lld", k,
              (long long) buf[(NREG - 1) * REG_STRIDE + k], (long long) -reg_value(left, NREG - 1, k));
    }
    /* gaps untouched */
    for (int r = 0; r < NREG; ++r)
        for (int k = REG_ELEMS; k < REG_STRIDE; ++k)
            if (buf[r * REG_STRIDE + k] != -1) {
                CHECK(0, "gap after region %d, element %d was written (%lld)", r, k, (long long) buf[r * REG_STRIDE + k]);
                r = NREG;
                break;
            }
    MPI_OK(MPI_Win_unlock(rank, win));

    /* detach the first region: the neighbour's access to it is refused;
     * the last one still works */
    MPI_OK(MPI_Win_detach(win, buf));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    for (int k = 0; k < REG_ELEMS; ++k) got[k] = -5;
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Get(got, REG_ELEMS, MPI_INT64_T, right, rbase, REG_ELEMS, MPI_INT64_T, win));
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Put(out, 1, MPI_INT64_T, right, rbase, 1, MPI_INT64_T, win));
    CHECK(got[0] == -5, "a refused get from a detached region wrote the origin buffer");
    MPI_OK(MPI_Get(got, REG_ELEMS, MPI_INT64_T, right,
                   rbase + (MPI_Aint) ((NREG - 1) * REG_STRIDE * sizeof(int64_t)), REG_ELEMS, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(right, win));
    CHECK(got[0] == -reg_value(rank, NREG - 1, 0), "last region after detaching the first: %lld, expected %lld",
          (long long) got[0], (long long) -reg_value(rank, NREG - 1, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[0] == -reg_value(left, 0, 0), "a put refused for a detached region wrote it (%lld)", (long long) buf[0]);

    /* re-attach it: accessible again, with its data */
    buf[0] = reg_value(rank, 0, 0) + 100;
    MPI_OK(MPI_Win_attach(win, buf, REG_ELEMS * sizeof(int64_t)));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    got[0] = -5;
    MPI_OK(MPI_Get(got, 1, MPI_INT64_T, right, rbase, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(right, win));
    CHECK(got[0] == reg_value(right, 0, 0) + 100, "re-attached region: got %lld, expected %lld", (long long) got[0],
          (long long) (reg_value(right, 0, 0) + 100));
    MPI_Barrier(MPI_COMM_WORLD);

    /* detach everything (another order); every access is refused */
    for (int i = NREG - 1; i >= 0; --i) MPI_OK(MPI_Win_detach(win, buf + ((i * 7) % NREG) * REG_STRIDE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); ++p)
        MPI_FAILS_WITH(MPI_ERR_RMA_RANGE,
                       MPI_Get(got, 1, MPI_INT64_T, right,
                               rbase + (MPI_Aint) (probes[p] * REG_STRIDE * sizeof(int64_t)), 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_free(&win));
    free(buf);
    free(bases);
}

/* Overlapping attach, detach of unknown bases; the window keeps working. */
static void attach_errors(void)
{
    MPI_Win win;
    int64_t *buf = malloc(sizeof(int64_t) * 64);
    int64_t other, got = -5, out;
    MPI_Aint mine, *bases = malloc(sizeof(MPI_Aint) * (size_t) size);
    const size_t E = sizeof(int64_t);

    for (int i = 0; i < 64; ++i) buf[i] = reg_value(rank, 7, i);
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* detach with nothing attached at all */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, buf));

    /* region A = elements [16, 32) */
    MPI_OK(MPI_Win_attach(win, buf + 16, 16 * E));
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 16, 16 * E));   /* the same again */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 16, 4 * E));    /* same base, shorter */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 20, 4 * E));    /* inside */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 24, 16 * E));   /* starts inside */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 8, 9 * E));     /* ends one element inside */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 8, 32 * E));    /* covers */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 31, E));        /* last element */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, (char *) (buf + 32) - 1, E)); /* last byte */
    /* touching on either side is not overlapping */
    MPI_OK(MPI_Win_attach(win, buf + 8, 8 * E));    /* [8, 16) */
    MPI_OK(MPI_Win_attach(win, buf + 32, 8 * E));   /* [32, 40) */
    /* a region between two attached ones that overlaps only the second */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 4, 5 * E));      /* [4, 9) */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, buf + 39, 4 * E));     /* [39, 43) */

    /* detach of bases that are not the base of an attached region */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, buf + 17));          /* inside A */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, buf + 40));          /* just past the last */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, &other));            /* never attached */
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, buf));               /* before every region */
    /* detach of a region twice */
    MPI_OK(MPI_Win_detach(win, buf + 8));
    MPI_FAILS_WITH(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, buf + 8));

    /* after all that, [16, 40) is attached: a neighbour accesses it */
    mine = address_of(buf);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Get(&got, 1, MPI_INT64_T, right, bases[right] + 39 * (MPI_Aint) E, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(got == reg_value(right, 7, 39), "element 39 after attach errors: %lld, expected %lld", (long long) got,
          (long long) reg_value(right, 7, 39));
    /* the detached [8, 16) and the never attached [40, 64) are out of range */
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Get(&got, 1, MPI_INT64_T, right, bases[right] + 8 * (MPI_Aint) E, 1,
                                              MPI_INT64_T, win));
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Get(&got, 1, MPI_INT64_T, right, bases[right] + 40 * (MPI_Aint) E, 1,
                                              MPI_INT64_T, win));
    out = -reg_value(rank, 7, 16);
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, bases[right] + 16 * (MPI_Aint) E, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));   /* local reads of RMA-written memory */
    CHECK(buf[16] == -reg_value(left, 7, 16), "put after attach errors: %lld, expected %lld", (long long) buf[16],
          (long long) -reg_value(left, 7, 16));
    CHECK(buf[8] == reg_value(rank, 7, 8) && buf[40] == reg_value(rank, 7, 40),
          "refused accesses wrote unattached memory");
    MPI_OK(MPI_Win_unlock(rank, win));

    MPI_OK(MPI_Win_detach(win, buf + 16));
    MPI_OK(MPI_Win_detach(win, buf + 32));
    MPI_OK(MPI_Win_free(&win));
    free(buf);
    free(bases);
}

/* attach / detach on windows that are not dynamic (allocate, and create and
 * allocate_shared too) */
static void attach_wrong_flavor(void)
{
    for (int flavor = FLAVOR_CREATE; flavor <= FLAVOR_SHARED; flavor = test_next_flavor(flavor)) {
        test_win_t tw;
        int64_t extra[4];
        test_win_create(&tw, flavor, 8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
        MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
        MPI_FAILS_WITH(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(tw.win, extra, sizeof(extra)));
        MPI_FAILS_WITH(MPI_ERR_RMA_FLAVOR, MPI_Win_detach(tw.win, extra));
        MPI_FAILS_WITH(MPI_ERR_RMA_FLAVOR, MPI_Win_detach(tw.win, tw.mem));
        /* the window still works */
        int64_t out = reg_value(rank, 9, flavor), in = -5;
        MPI_OK(MPI_Win_fence(0, tw.win));
        MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_fence(0, tw.win));
        MPI_OK(MPI_Get(&in, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, tw.win));
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw.win));
        CHECK(((int64_t *) tw.mem)[3] == reg_value(left, 9, flavor) && in == reg_value(rank, 9, flavor),
              "%s: window after a refused attach: element %lld, got %lld", flavor_names[flavor],
              (long long) ((int64_t *) tw.mem)[3], (long long) in);
        test_win_free(&tw);
    }
}

/* Two halves of one buffer attached separately: one access spans both.
 * A third region with a gap before it: an access across the gap fails. */
static void spanning_regions(void)
{
    MPI_Win win;
    int64_t *buf = malloc(sizeof(int64_t) * (4 * HALF));
    int64_t out[2 * HALF + 1], in[2 * HALF + 1];
    MPI_Aint mine, *bases = malloc(sizeof(MPI_Aint) * (size_t) size);
    MPI_Datatype strided;

    for (int i = 0; i < 4 * HALF; ++i) buf[i] = reg_value(rank, 11, i);
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* second half first, so the table order differs from attach order */
    MPI_OK(MPI_Win_attach(win, buf + HALF, HALF * sizeof(int64_t)));
    MPI_OK(MPI_Win_attach(win, buf, HALF * sizeof(int64_t)));
    /* [3*HALF, 4*HALF): a gap of HALF elements before it */
    MPI_OK(MPI_Win_attach(win, buf + 3 * HALF, HALF * sizeof(int64_t)));
    mine = address_of(buf);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_OK(MPI_Win_lock_all(0, win));
    /* get all of both halves in one call */
    for (int i = 0; i < 2 * HALF; ++i) in[i] = -5;
    MPI_OK(MPI_Get(in, 2 * HALF, MPI_INT64_T, right, bases[right], 2 * HALF, MPI_INT64_T, win));
    MPI_OK(MPI_Win_flush(right, win));
    for (int i = 0; i < 2 * HALF; ++i)
        if (in[i] != reg_value(right, 11, i)) {
            CHECK(0, "spanning get, element %d: %lld, expected %lld", i, (long long) in[i],
                  (long long) reg_value(right, 11, i));
            break;
        }
    /* a put of 4 elements across the boundary, and a strided put touching both */
    for (int i = 0; i < 4; ++i) out[i] = -reg_value(rank, 12, i);
    MPI_OK(MPI_Put(out, 4, MPI_INT64_T, right, bases[right] + (HALF - 2) * (MPI_Aint) sizeof(int64_t), 4,
                   MPI_INT64_T, win));
    MPI_OK(MPI_Type_vector(2, 1, HALF, MPI_INT64_T, &strided));   /* elements 0 and HALF */
    MPI_OK(MPI_Type_commit(&strided));
    out[4] = -reg_value(rank, 13, 0);
    out[5] = -reg_value(rank, 13, 1);
    MPI_OK(MPI_Put(out + 4, 2, MPI_INT64_T, right, bases[right] + 4 * (MPI_Aint) sizeof(int64_t), 1, strided, win));
    MPI_OK(MPI_Win_flush(right, win));

    /* across the gap: [HALF, 3*HALF+1) and a single element in the gap */
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Get(in, 2 * HALF + 1, MPI_INT64_T, right,
                                              bases[right] + HALF * (MPI_Aint) sizeof(int64_t), 2 * HALF + 1,
                                              MPI_INT64_T, win));
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Put(out, 2, MPI_INT64_T, right,
                                              bases[right] + (2 * HALF - 1) * (MPI_Aint) sizeof(int64_t), 2,
                                              MPI_INT64_T, win));
    /* all three regions but the whole buffer: the gap in the middle */
    MPI_FAILS_WITH(MPI_ERR_RMA_RANGE, MPI_Get(in, 1, MPI_INT64_T, right,
                                              bases[right] + 2 * HALF * (MPI_Aint) sizeof(int64_t), 1, MPI_INT64_T,
                                              win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));   /* local reads of RMA-written memory */

    for (int i = 0; i < 4 * HALF; ++i) {
        int64_t expect = reg_value(rank, 11, i);
        if (i >= HALF - 2 && i < HALF + 2) expect = -reg_value(left, 12, i - (HALF - 2));
        if (4 == i) expect = -reg_value(left, 13, 0);
        if (4 + HALF == i) expect = -reg_value(left, 13, 1);
        if (buf[i] != expect) {
            CHECK(0, "after spanning puts, element %d: %lld, expected %lld", i, (long long) buf[i],
                  (long long) expect);
            break;
        }
    }
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Type_free(&strided));
    MPI_OK(MPI_Win_detach(win, buf));
    MPI_OK(MPI_Win_detach(win, buf + HALF));
    MPI_OK(MPI_Win_detach(win, buf + 3 * HALF));
    MPI_OK(MPI_Win_free(&win));
    free(buf);
    free(bases);
}

/* One erroneous access inside a passive epoch: its error comes back from
 * the call itself or, if the origin's view of the target's regions was
 * stale and the target refused it, from the flush that follows -- exactly
 * once, and as MPI_ERR_RMA_RANGE.  Returns where: 1 the call, 2 the flush. */
static int range_error_at_call_or_flush(int rc, MPI_Win win, const char *what)
{
    int flush_rc = MPI_Win_flush(right, win), cls = MPI_SUCCESS, where = MPI_SUCCESS != rc ? 1 : 2;
    MPI_Error_class(MPI_SUCCESS != rc ? rc : flush_rc, &cls);
    CHECK(MPI_ERR_RMA_RANGE == cls, "%s: error class %d, expected MPI_ERR_RMA_RANGE", what, cls);
    CHECK(MPI_SUCCESS == rc || MPI_SUCCESS == flush_rc, "%s: reported by the call and by the flush", what);
    return where;
}

/* A region detached while an origin is inside a lock_all epoch that
 * already accessed it: the origin's copy of the target's regions may be
 * stale (the active-message path asks once per epoch), so the TARGET must
 * refuse the put and the get and report MPI_ERR_RMA_RANGE back; nothing is
 * written there or into the get's buffer, and the epoch goes on.  The same
 * for accumulate, get_accumulate, fetch_and_op and compare_and_swap. */
static void detached_in_epoch(void)
{
    MPI_Win win;
    int64_t buf[2 * REG_ELEMS], out = -reg_value(rank, 20, 0), in = -5;
    MPI_Aint *bases = malloc(sizeof(MPI_Aint) * (size_t) size), mine;

    for (int i = 0; i < 2 * REG_ELEMS; ++i) buf[i] = reg_value(rank, 20, i);
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_attach(win, buf, REG_ELEMS * sizeof(int64_t)));                /* A */
    MPI_OK(MPI_Win_attach(win, buf + REG_ELEMS, REG_ELEMS * sizeof(int64_t)));    /* B */
    mine = address_of(buf);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    const MPI_Aint b_at = bases[right] + REG_ELEMS * (MPI_Aint) sizeof(int64_t);

    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Get(&in, 1, MPI_INT64_T, right, b_at, 1, MPI_INT64_T, win));   /* B is known now */
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(in == reg_value(right, 20, REG_ELEMS), "get from B before the detach: %lld", (long long) in);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_detach(win, buf + REG_ELEMS));
    MPI_Barrier(MPI_COMM_WORLD);
    in = -5;
    int put_at = range_error_at_call_or_flush(MPI_Put(&out, 1, MPI_INT64_T, right, b_at, 1, MPI_INT64_T, win), win,
                                              "put to a region detached during the epoch");
    int get_at = range_error_at_call_or_flush(MPI_Get(&in, 1, MPI_INT64_T, right, b_at, 1, MPI_INT64_T, win), win,
                                              "get from a region detached during the epoch");
    CHECK(-5 == in, "the refused get wrote %lld into its buffer", (long long) in);
    /* the accumulate family: the target's accumulate path checks too */
    int64_t one = 1, res = -5, cmp = reg_value(right, 20, REG_ELEMS);
    int acc_at[4];
    acc_at[0] = range_error_at_call_or_flush(MPI_Accumulate(&one, 1, MPI_INT64_T, right, b_at, 1, MPI_INT64_T,
                                                            MPI_SUM, win), win, "accumulate to a detached region");
    acc_at[1] = range_error_at_call_or_flush(MPI_Get_accumulate(&one, 1, MPI_INT64_T, &res, 1, MPI_INT64_T, right,
                                                                b_at, 1, MPI_INT64_T, MPI_SUM, win),
                                             win, "get_accumulate to a detached region");
    acc_at[2] = range_error_at_call_or_flush(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, right, b_at, MPI_SUM, win),
                                             win, "fetch_and_op to a detached region");
    acc_at[3] = range_error_at_call_or_flush(MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT64_T, right, b_at, win),
                                             win, "compare_and_swap to a detached region");
    CHECK(-5 == res, "a refused fetching accumulate wrote %lld into its result buffer", (long long) res);
    for (int k = 0; k < 4; ++k) put_at = 1 == acc_at[k] ? 1 : put_at;
    /* with every peer on the active-message path the origin asked for B's
     * regions once in this epoch, before the detach: the target decided */
    CHECK(!(test_am_path(FLAVOR_DYNAMIC) && size > 1) || (2 == put_at && 2 == get_at),
          "active-message path: a refusal came from the origin (put/accumulates %d, get %d), not the target", put_at, get_at);
    if (getenv("NEWRMA_TEST_VERBOSE"))
        fprintf(stderr, "[rank %d] detached region refused at the %s (put), %s (get)\n", rank,
                1 == put_at ? "origin" : "target", 1 == get_at ? "origin" : "target");
    /* the epoch goes on: region A still works */
    MPI_OK(MPI_Put(&out, 1, MPI_INT64_T, right, bases[right], 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(buf[0] == -reg_value(left, 20, 0), "put to A after the refused ones: %lld", (long long) buf[0]);
    for (int i = REG_ELEMS; i < 2 * REG_ELEMS; ++i)
        CHECK(buf[i] == reg_value(rank, 20, i), "detached element %d was written: %lld", i, (long long) buf[i]);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_detach(win, buf));
    MPI_OK(MPI_Win_free(&win));
    free(bases);
}

/* MPI_Win_shared_query on a dynamic window: not a flavor MPI 4.1 allows. */
static void shared_query_wrong_flavor(void)
{
    test_win_t tw;
    MPI_Aint qsize = -3;
    int qdisp = -3;
    void *qbase = &qdisp;
    test_win_create(&tw, FLAVOR_DYNAMIC, 8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD);
    MPI_OK(MPI_Win_set_errhandler(tw.win, MPI_ERRORS_RETURN));
    MPI_FAILS_WITH(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(tw.win, right, &qsize, &qdisp, &qbase));
    MPI_FAILS_WITH(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(tw.win, MPI_PROC_NULL, &qsize, &qdisp, &qbase));
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    many_regions();
    attach_errors();
    attach_wrong_flavor();
    spanning_regions();
    detached_in_epoch();
    shared_query_wrong_flavor();
    return test_finalize("dynamic_attach");
}
