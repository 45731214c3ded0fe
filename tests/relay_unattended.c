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
 * share_policy_choose; osc_newrma_node_policy_relay_pieces).  Open MPI
 * then yields when idle, targets are not asked for small operations, and a
 * relay's hand-over costs a context switch or two: a put or get batch is
 * relayed only from 128 KiB or from 16 pieces (and from 32 KiB in all), or
 * in a PSCW epoch, whose target waits in MPI_Win_wait.  With a core per
 * rank every batch is relayed, as before.  Rank 0 is the target, waiting
 * in MPI_Barrier (inside MPI); rank 1 the origin, under an exclusive lock:
 *   1. alone: 8 B puts, single 64 KiB puts and gets, and batches of 4 puts
 *      of 1 KiB, each + flush -- with more ranks than cores none may be
 *      relayed (MPI_T osc_newrma_relayed_bytes stays), with a core per rank
 *      a 64 KiB one is, eventually;
 *   2. 256 KiB puts and gets, and batches of 64 puts of 1 KiB, + flush:
 *      relayed, eventually (the target may be off its core for a while);
 *   3. a PSCW epoch with one 64 KiB put, until one was relayed.
 * Every byte is checked after each phase.  Where relays are off (the
 * system call copies near memcpy's speed, or active messages carry the
 * window) only the data and the parameters in use are checked, and the
 * test says so.
 *
 * newrma-test: np>=2 only-newrma
 */
#include "common.h"

#define SMALL 8
#define ALONE (64 * 1024)
#define LARGE (256 * 1024)
#define PIECE 1024
#define FEW_PIECES 4
#define MANY_PIECES 64
#define SPAN (LARGE + MANY_PIECES * 2 * PIECE)
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

/* `pieces` puts of PIECE bytes, every other KiB of the target (a batch of
 * as many pieces), or one put of `bytes` */
static void put_pieces(test_win_t *tw, const unsigned char *buf, size_t bytes, int pieces)
{
    if (0 == pieces) {
        MPI_OK(MPI_Put(buf, (int) bytes, MPI_BYTE, 0, test_disp(tw, 0, 0, 1), (int) bytes, MPI_BYTE, tw->win));
        return;
    }
    for (int p = 0 ; p < pieces ; ++p) {
        MPI_OK(MPI_Put(buf + 2 * p * PIECE, PIECE, MPI_BYTE, 0, test_disp(tw, 0, 2 * p * PIECE, 1), PIECE, MPI_BYTE,
                       tw->win));
    }
}

/* what put_pieces left at the target (rank 0, its own memory) */
static int target_holds(const unsigned char *mem, size_t bytes, int pieces, int round)
{
    if (0 == pieces) return matches(mem, bytes, round);
    for (int p = 0 ; p < pieces ; ++p) {
        for (size_t i = 0 ; i < PIECE ; ++i) {
            if (mem[2 * p * PIECE + i] != pattern(round, 2 * p * PIECE + i)) return 0;
        }
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

/* PSCW epochs of one ALONE put, rank 1 to rank 0: 16, or until one was
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
            put_pieces(tw, buf, ALONE, 0);
            MPI_OK(MPI_Win_complete(tw->win));
            relayed = test_pvar_read(pv) > before;
            done = until_relayed ? relayed || (t >= 16 && test_now_s() - start >= RETRY_S) : t >= 16;
        }
        MPI_Bcast(&done, 1, MPI_INT, 1, MPI_COMM_WORLD);
    }
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        CHECK(matches(tw->mem, ALONE, round), "pscw put: wrong data at the target");
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Bcast(&relayed, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Group_free(&g0);
    MPI_Group_free(&g1);
    MPI_Group_free(&world);
    return relayed;
}

static void run(int flavor)
{
    const char *name = flavor_names[flavor];
    unsigned char *buf = malloc(SPAN);
    int relays_on, unattended, alone = 0, large = 0;
    unsigned long long relay_bytes;
    test_pvar_t pv;
    test_win_t tw;

    test_win_create(&tw, flavor, SPAN, 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    /* Read after the first window: the values in use, as the policy chose
     * them from its probe of the system call (made by the first window on
     * the single-copy path).  A call slower than half of memcpy's speed
     * (kernel-bound) shows as shared copies from 64 KiB, and relays must
     * then be on -- from 32 KiB with more ranks than cores. */
    unattended = test_cvar_int("mpi_yield_when_idle") && !test_cvar_int("osc_newrma_assist_oversubscribed");
    relays_on = !test_am_path(flavor) && test_cvar_u64("osc_newrma_assist_share_bytes") == 64 * 1024;
    relay_bytes = test_cvar_u64("osc_newrma_relay_bytes");
    if (!test_am_path(flavor)) {
        CHECK(relays_on == (relay_bytes > 0), "%s: relays from %llu bytes (0: off), the system call %s", name,
              relay_bytes, relays_on ? "kernel-bound" : "fast");
        CHECK(!relays_on || !unattended || 32 * 1024 == relay_bytes,
              "%s: relays from %llu bytes with more ranks than cores, not 32 KiB", name, relay_bytes);
    }
    test_pvar_open(&pv, "osc_newrma_relayed_bytes");

    /* 1: small ones, a single 64 KiB one, a few pieces */
    alone |= transfer(&tw, &pv, buf, SMALL, 0, 0, 64, 0, 1, "8 B puts");
    alone |= transfer(&tw, &pv, buf, PIECE, FEW_PIECES, 0, 64, 0, 2, "4 puts of 1 KiB");
    alone |= transfer(&tw, &pv, buf, ALONE, 0, 0, 32, relays_on && !unattended, 3, "64 KiB puts");
    alone |= transfer(&tw, &pv, buf, ALONE, 0, 1, 32, 0, 4, "64 KiB gets");
    if (relays_on && unattended) {
        CHECK(!alone, "%s: a small batch was relayed with more ranks than cores", name);
    } else if (relays_on) {
        CHECK(alone, "%s: no 64 KiB put was relayed with a core per rank", name);
    }

    /* 2: large ones and many pieces */
    large = transfer(&tw, &pv, buf, LARGE, 0, 0, 16, relays_on, 5, "256 KiB puts");
    CHECK(!relays_on || large, "%s: no 256 KiB put was relayed", name);
    large = transfer(&tw, &pv, buf, LARGE, 0, 1, 16, relays_on, 6, "256 KiB gets");
    CHECK(!relays_on || large, "%s: no 256 KiB get was relayed", name);
    large = transfer(&tw, &pv, buf, PIECE, MANY_PIECES, 0, 16, relays_on, 7, "64 puts of 1 KiB");
    CHECK(!relays_on || large, "%s: no batch of 64 puts was relayed", name);

    /* 3: the target waits for this very epoch */
    large = pscw_transfer(&tw, &pv, buf, relays_on, 8);
    CHECK(!relays_on || large, "%s: no 64 KiB put of a PSCW epoch was relayed", name);

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
        run(FLAVOR_CREATE);
        run(FLAVOR_DYNAMIC);
    }
    MPI_T_finalize();
    return test_finalize("relay_unattended");
}
