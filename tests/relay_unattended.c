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
 * Relays with more ranks than cores, at the defaults (osc_newrma_node_policy.c,
 * osc_newrma_node_policy_relay_pieces).  Open MPI then yields when idle,
 * targets are not asked for small operations, and a relay's hand-over
 * costs a context switch or two: a group of small pieces is relayed only
 * from NEWRMA_RELAY_UNATTENDED_PIECES (16) pieces, or in a PSCW epoch,
 * whose target waits in MPI_Win_wait.  With a core per rank a group of 2
 * small pieces is relayed.  Whatever the count of ranks, a single put or
 * get is never relayed, nor a group of pieces larger than
 * osc_newrma_relay_piece_bytes (256) on average.  Rank 0 is the target,
 * waiting in MPI_Barrier (inside MPI); rank 1 the origin, under an
 * exclusive lock, each transfer + flush:
 *   1. never relayed: single 8 B and 64 B puts, single 64 B and 64 KiB
 *      gets, single 64 KiB puts, batches of 16 puts of 1 KiB (MPI_T
 *      osc_newrma_relayed_bytes stays);
 *   2, 3. batches of 15 and of 16 puts of 64 B in turn, until 8 of 16 were
 *      relayed (the target may be off its core for a while): a batch of
 *      16 must be, and one of 15 never with more ranks than cores, at
 *      least once with a core per rank (16 pairs where relays are off);
 *   4. PSCW epochs of 2 puts of 64 B, until a batch was relayed (16 where
 *      relays are off).
 * Every byte is checked after each phase.  Where active messages carry the
 * window only the data is checked, and the test says so.
 *
 * newrma-test: np>=2 only-newrma
 */
#include "common.h"

#define SMALL 8
#define ALONE (64 * 1024)
#define TINY 64                /* pieces below the relay's piece limit, above the mailbox's */
#define KIB 1024               /* pieces above it */
#define UNATTENDED_PIECES 16   /* NEWRMA_RELAY_UNATTENDED_PIECES */
#define SPAN (ALONE + UNATTENDED_PIECES * 2 * KIB)
#define RETRY_S 5.0

static unsigned char pattern(int round, size_t i)
{
    return (unsigned char) (round * 31 + i * 7 + 1);
}

static void fill(unsigned char *buf, size_t bytes, int round)
{
    for (size_t i = 0 ; i < bytes ; ++i) buf[i] = pattern(round, i);
}

static int matches(const unsigned char *buf, size_t bytes, int round)
{
    for (size_t i = 0 ; i < bytes ; ++i) {
        if (buf[i] != pattern(round, i)) return 0;
    }
    return 1;
}

/* `pieces` puts of `bytes` each, every other `bytes` of the target (a
 * batch of as many pieces), or, if `pieces` is 0, one put of `bytes` */
static void put_pieces(test_win_t *tw, const unsigned char *buf, size_t bytes, int pieces)
{
    if (0 == pieces) {
        MPI_OK(MPI_Put(buf, (int) bytes, MPI_BYTE, 0, test_disp(tw, 0, 0, 1), (int) bytes, MPI_BYTE, tw->win));
        return;
    }
    for (int p = 0 ; p < pieces ; ++p) {
        MPI_Aint at = (MPI_Aint) (2 * (size_t) p * bytes);
        MPI_OK(MPI_Put(buf + at, (int) bytes, MPI_BYTE, 0, test_disp(tw, 0, at, 1), (int) bytes, MPI_BYTE, tw->win));
    }
}

/* what put_pieces left at the target (rank 0, its own memory): the pieces,
 * and zeros between them */
static int target_holds(const unsigned char *mem, size_t bytes, int pieces, int round)
{
    if (0 == pieces) return matches(mem, bytes, round);
    for (size_t i = 0 ; i < 2 * (size_t) pieces * bytes ; ++i) {
        unsigned char want = (i / bytes) % 2 ? 0 : pattern(round, i);
        if (mem[i] != want) return 0;
    }
    return 1;
}

/* One kind of transfer from rank 1 to (or from) rank 0, repeated: `times`
 * times, or until one was relayed if `until_relayed` (then for up to
 * RETRY_S seconds, and at least `times` tries).  Returns on rank 1 whether any was relayed, and checks
 * the data everywhere. */
static int transfer(test_win_t *tw, test_pvar_t *pv, unsigned char *buf, size_t bytes, int pieces, int get,
                    int times, int until_relayed, int round, const char *what)
{
    int relayed = 0, ok = 1;

    if (0 == test_rank && !get) memset(tw->mem, 0, SPAN);
    if (0 == test_rank && get) fill(tw->mem, SPAN, round);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    if (1 == test_rank) {
        double start = test_now_s();
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        for (int t = 0 ; until_relayed ? !relayed && (t < times || test_now_s() - start < RETRY_S) : t < times ; ++t) {
            unsigned long long before = test_pvar_read(pv);
            if (get) {
                memset(buf, 0, SPAN);
                MPI_OK(MPI_Get(buf, (int) bytes, MPI_BYTE, 0, test_disp(tw, 0, 0, 1), (int) bytes, MPI_BYTE, tw->win));
            } else {
                fill(buf, SPAN, round);
                put_pieces(tw, buf, bytes, pieces);
            }
            MPI_OK(MPI_Win_flush(0, tw->win));
            relayed |= test_pvar_read(pv) > before;
            ok = ok && (!get || matches(buf, bytes, round));
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
        CHECK(ok, "%s: a get brought wrong data", what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank && !get) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        CHECK(target_holds(tw->mem, bytes, pieces, round), "%s: wrong data at the target", what);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
    return relayed;
}

/* Batches of UNATTENDED_PIECES - 1 and of UNATTENDED_PIECES TINY puts,
 * rank 1 to rank 0, in turn (each + flush), until ENOUGH of the larger
 * were relayed (for up to RETRY_S seconds, and at least 16 pairs): the
 * smaller batches meet the target as present as the larger ones did.
 * Without relays (`relays_on` 0: active messages carry the window, or
 * assistance is off) 16 pairs: none can be relayed, and waiting for one
 * would buy nothing checked.
 * Returns in *few and *full how many of each were relayed (on every rank),
 * and checks the data at the target. */
#define ENOUGH 8
static void paired_batches(test_win_t *tw, test_pvar_t *pv, unsigned char *buf, int round, int relays_on, int *few,
                           int *full)
{
    int counts[2] = { 0, 0 };

    if (0 == test_rank) memset(tw->mem, 0, SPAN);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    if (1 == test_rank) {
        double start = test_now_s();
        fill(buf, SPAN, round);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        for (int t = 0 ; counts[1] < ENOUGH && (t < 16 || (relays_on && test_now_s() - start < RETRY_S)) ; ++t) {
            for (int k = 0 ; k < 2 ; ++k) {
                unsigned long long before = test_pvar_read(pv);
                put_pieces(tw, buf, TINY, UNATTENDED_PIECES - 1 + k);
                MPI_OK(MPI_Win_flush(0, tw->win));
                counts[k] += test_pvar_read(pv) > before;
            }
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        CHECK(target_holds(tw->mem, TINY, UNATTENDED_PIECES, round), "batches of 64 B: wrong data at the target");
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Bcast(counts, 2, MPI_INT, 1, MPI_COMM_WORLD);
    *few = counts[0];
    *full = counts[1];
}

/* PSCW epochs of 2 TINY puts, rank 1 to rank 0: 16, or until a batch was
 * relayed if `until_relayed` (as in transfer). */
static int pscw_transfer(test_win_t *tw, test_pvar_t *pv, unsigned char *buf, int until_relayed, int round)
{
    MPI_Group world, g0, g1;
    int zero = 0, one = 1, relayed = 0, done = 0;
    double start = test_now_s();

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &zero, &g0);
    MPI_Group_incl(world, 1, &one, &g1);
    if (0 == test_rank) memset(tw->mem, 0, SPAN);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, tw->win));
    fill(buf, SPAN, round);
    for (int t = 0 ; !done ; ++t) {
        if (0 == test_rank) {
            MPI_OK(MPI_Win_post(g1, 0, tw->win));
            MPI_OK(MPI_Win_wait(tw->win));
        } else if (1 == test_rank) {
            unsigned long long before = test_pvar_read(pv);
            MPI_OK(MPI_Win_start(g0, 0, tw->win));
            put_pieces(tw, buf, TINY, 2);
            MPI_OK(MPI_Win_complete(tw->win));
            relayed = test_pvar_read(pv) > before;
            done = until_relayed ? relayed || (t >= 16 && test_now_s() - start >= RETRY_S) : t >= 16;
        }
        MPI_Bcast(&done, 1, MPI_INT, 1, MPI_COMM_WORLD);
    }
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        CHECK(target_holds(tw->mem, TINY, 2, round), "pscw puts: wrong data at the target");
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&world);
    return relayed;
}

static void run(int flavor, int size)
{
    const char *name = flavor_names[flavor];
    unsigned char *buf = malloc(SPAN);
    int relays_on, unattended, attended_expected, relayed, few, full;
    test_pvar_t pv;
    test_win_t tw;

    test_win_create(&tw, flavor, SPAN, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    unattended = test_cvar_int("mpi_yield_when_idle") && !test_cvar_int("osc_newrma_assist_oversubscribed");
    relays_on = !test_am_path(flavor) && test_cvar_int("osc_newrma_assist_timeout") > 0;
    /* with a core per rank the target is inside MPI whenever it waits */
    attended_expected = relays_on && !unattended && size <= sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(256 == test_cvar_u64("osc_newrma_relay_piece_bytes"), "%s: relays of pieces up to %llu bytes, not the "
          "default 256", name, test_cvar_u64("osc_newrma_relay_piece_bytes"));
    test_pvar_open(&pv, "osc_newrma_relayed_bytes");

    /* 1: never relayed */
    relayed = transfer(&tw, &pv, buf, SMALL, 0, 0, 64, 0, 1, "8 B puts");
    CHECK(!relayed, "%s: a single 8 B put was relayed", name);
    relayed = transfer(&tw, &pv, buf, ALONE, 0, 0, 32, 0, 2, "64 KiB puts");
    CHECK(!relayed, "%s: a single 64 KiB put was relayed", name);
    relayed = transfer(&tw, &pv, buf, ALONE, 0, 1, 32, 0, 3, "64 KiB gets");
    CHECK(!relayed, "%s: a single 64 KiB get was relayed", name);
    relayed = transfer(&tw, &pv, buf, KIB, UNATTENDED_PIECES, 0, 32, 0, 4, "16 puts of 1 KiB");
    CHECK(!relayed, "%s: a batch of 16 puts of 1 KiB was relayed", name);
    relayed = transfer(&tw, &pv, buf, TINY, 0, 0, 64, 0, 8, "64 B puts");
    CHECK(!relayed, "%s: a single 64 B put was relayed", name);
    relayed = transfer(&tw, &pv, buf, TINY, 0, 1, 64, 0, 9, "64 B gets");
    CHECK(!relayed, "%s: a single 64 B get was relayed", name);

    /* 2, 3: one piece short of the unattended minimum, and the minimum */
    paired_batches(&tw, &pv, buf, 5, relays_on, &few, &full);
    CHECK(!relays_on || full > 0, "%s: no batch of 16 puts of 64 B was relayed", name);
    if (relays_on && unattended) {
        CHECK(0 == few, "%s: %d batches of 15 puts of 64 B were relayed with more ranks than cores (and %d of 16)",
              name, few, full);
    } else {
        CHECK(!attended_expected || few > 0, "%s: no batch of 15 puts of 64 B was relayed with a core per rank",
              name);
    }

    /* 4: the target waits for this very epoch */
    relayed = pscw_transfer(&tw, &pv, buf, relays_on, 7);
    CHECK(!relays_on || relayed, "%s: no batch of 2 puts of 64 B of a PSCW epoch was relayed", name);

    if (0 == test_rank) {
        printf("%s: %s%s\n", name, relays_on ? "relays on" : "relays off here: data checked only",
               unattended ? ", more ranks than cores" : ", a core per rank");
    }
    test_win_free(&tw);
    test_pvar_close(&pv);
    free(buf);
}

int main(int argc, char **argv)
{
    int size, provided;

    test_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (size >= 2) {
        run(FLAVOR_CREATE, size);
        run(FLAVOR_DYNAMIC, size);
    }
    MPI_T_finalize();
    return test_finalize("relay_unattended");
}
