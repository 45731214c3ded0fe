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
 * Batched relays (osc_newrma_usermem.c usermem_batch_issue, osc_newrma_relay.c
 * osc_newrma_relay_move, osc_newrma_node_policy_relay_pieces): on create
 * and dynamic windows, contiguous puts or gets of at most
 * osc_newrma_cma_batch_bytes to one target gather in the window's batch
 * (up to 64), and a batch of two pieces or more that average at most
 * osc_newrma_relay_piece_bytes goes, if the target is inside MPI, as one
 * stream through the origin's relay slots: the target scatters a put's
 * stream into its segments (gathers a get's).  A chunk of the stream may
 * end inside a segment or span many; every byte must land in its place and
 * no byte between segments may move.  A single contiguous put or get is
 * never relayed.  Here the limit is 8000 bytes (relays of larger pieces);
 * tests/relay_batch_all.c runs this file at the default, 256.
 *
 * Operations here: SEGS per epoch (more than a batch holds), of lengths
 * from 1 byte to more than a chunk -- at most osc_newrma_cma_batch_bytes
 * (batched), above it (alone, by single copy) -- at unaligned
 * displacements with gap bytes between them that must stay as they were.
 *   0. the limit, rank 1 to rank 0 waiting in MPI_Barrier: a batch of two
 *      puts of exactly the limit, until relayed; a batch of two puts
 *      averaging one byte more, and one put of 20000 bytes: never relayed
 *      (MPI_T osc_newrma_relayed_bytes); every byte checked;
 *   1. one origin at a time, the target waiting in MPI_Barrier: puts under
 *      an exclusive lock, then gets with flush; batches of small puts alone
 *      first -- of about 3.3 KiB on average: relayed (until one was, needed
 *      with a core per rank) where the limit is at least twice that, never
 *      where it is at most half;
 *   2. with 3 ranks or more, puts and gets to every other rank in turn
 *      under lock_all (each change of target or direction issues a batch);
 *   3. fence epochs in which every rank puts to its right neighbour and
 *      gets from its left at once (batches crossing: a relay whose target
 *      is relaying too is withdrawn and done by single copy);
 *   4. rank 0 computing outside MPI while the others put to it (no relay
 *      taken: single copy).
 *
 * newrma-test: np>=2 only-newrma mca=osc_newrma_assist_oversubscribed:1,osc_newrma_relay_piece_bytes:8000,osc_newrma_assist_share_bytes:0
 */
#include "common.h"

#include <time.h>

#ifndef RELAY_BATCH_NAME
#define RELAY_BATCH_NAME "relay_batch"   /* tests/relay_batch_all.c runs this file at the default limit */
#define RELAY_PIECE_LIMIT 8000           /* osc_newrma_relay_piece_bytes as the metadata line sets it */
#endif

#define SEGS 100
#define GAP 3                 /* bytes between two segments, never written */
#define RETRY_S 2.0

/* lengths, cycled: below, at and above a 16 KiB chunk and the batch limit */
static const size_t lengths[] = { 1, 8, 1000, 16384, 7, 16385, 4096, 70001, 63, 5000, 20000, 16383, 100, 19999 };
#define NLENGTHS (sizeof(lengths) / sizeof(lengths[0]))

static size_t seg_len(int i, int small_only)
{
    size_t len = lengths[(size_t) i % NLENGTHS];
    return small_only && len > 16384 ? 1000 : len;
}

/* where segment i starts in a window (after a gap), and the window size;
 * summed once per layout, not at every byte checked */
static size_t seg_at(int i, int small_only)
{
    static size_t at[2][SEGS + 1];
    if (0 == at[small_only][0]) {
        at[small_only][0] = GAP;
        for (int k = 0 ; k < SEGS ; ++k) at[small_only][k + 1] = at[small_only][k] + seg_len(k, small_only) + GAP;
    }
    return at[small_only][i];
}

static size_t span(void)
{
    return seg_at(SEGS, 0) + 64;
}

/* the mean length of the small layout's segments: every batch of them
 * averages within a factor of two of it */
static size_t small_mean(void)
{
    return (seg_at(SEGS, 1) - GAP * (SEGS + 1)) / SEGS;
}

static unsigned char pattern(int who, int round, size_t at)
{
    return (unsigned char) (1 + (who * 29 + round * 11 + at * 7 + (at >> 9)) % 251);
}

/* fill the segments of `mem` with (who, round)'s pattern, the gaps with 0 */
static void fill(unsigned char *mem, int who, int round, int small_only)
{
    memset(mem, 0, span());
    for (int i = 0 ; i < SEGS ; ++i) {
        size_t at = seg_at(i, small_only);
        for (size_t b = 0 ; b < seg_len(i, small_only) ; ++b) mem[at + b] = pattern(who, round, at + b);
    }
}

/* check that `mem` holds fill(who, round, small_only): segments and gaps */
static void expect(const unsigned char *mem, int who, int round, int small_only, const char *what,
                   const char *flavor)
{
    static unsigned char *want;
    if (NULL == want) want = malloc(span());
    fill(want, who, round, small_only);
    for (size_t b = 0 ; b < span() ; ++b) {
        if (mem[b] != want[b]) {
            CHECK(0, "%s: %s (origin %d, round %d): byte %zu is %d, expected %d (%s)", flavor, what, who, round,
                  b, mem[b], want[b], 0 == want[b] ? "a gap" : "a segment");
            return;
        }
    }
}

/* every segment put from `buf` to (or got from `target` into) the same place */
static void move_all(test_win_t *tw, unsigned char *buf, int target, int put, int small_only)
{
    for (int i = 0 ; i < SEGS ; ++i) {
        size_t at = seg_at(i, small_only);
        int n = (int) seg_len(i, small_only);
        MPI_Aint disp = test_disp(tw, target, (MPI_Aint) at, 1);
        if (put) MPI_OK(MPI_Put(buf + at, n, MPI_BYTE, target, disp, n, MPI_BYTE, tw->win));
        else MPI_OK(MPI_Get(buf + at, n, MPI_BYTE, target, disp, n, MPI_BYTE, tw->win));
    }
}

/* Phase 1, origin `o`: small puts until a batch of them was relayed (when
 * expected; else once, and none may be if forbidden), then every length; rank 0 checks
 * each; then gets. */
static void one_origin(test_win_t *tw, unsigned char *buf, int o, int round, test_pvar_t *pv, int expected,
                       int forbidden, int *relayed, const char *flavor)
{
    int tries = 0, small_relayed = 0;
    unsigned long long before;

    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        memset(tw->mem, 0, span());   /* the gaps of the small layout */
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (o == test_rank) {
        double start = test_now_s();
        fill(buf, o, round, 1);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        do {
            before = test_pvar_read(pv);
            move_all(tw, buf, 0, 1, 1);
            MPI_OK(MPI_Win_flush(0, tw->win));
            small_relayed = test_pvar_read(pv) > before;
        } while (expected && !small_relayed && (++tries < 16 || test_now_s() - start < RETRY_S));
        MPI_OK(MPI_Win_unlock(0, tw->win));
        CHECK(!expected || small_relayed, "%s: no batch of %d small puts was relayed in %d tries", flavor, SEGS,
              tries);
        CHECK(!forbidden || !small_relayed, "%s: a batch of small puts (%zu bytes on average) was relayed", flavor,
              small_mean());
        *relayed += small_relayed;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        expect(tw->mem, o, round, 1, "small puts", flavor);
        memset(tw->mem, 0, span());   /* the gaps of the full layout */
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (o == test_rank) {
        fill(buf, o, round + 1, 0);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        move_all(tw, buf, 0, 1, 0);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        expect(tw->mem, o, round + 1, 0, "puts", flavor);
        fill(tw->mem, 0, round + 2, 0);   /* what the gets read */
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (o == test_rank) {
        memset(buf, 0, span());
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        move_all(tw, buf, 0, 0, 0);
        MPI_OK(MPI_Win_flush(0, tw->win));
        expect(buf, 0, round + 2, 0, "gets", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Phase 2: segment i goes to (comes from) rank (me + 1 + i % (size - 1)):
 * every other rank in turn, so each segment of a window has exactly one
 * writer, origin_of(window's rank, i). */
static int peer_of(int me, int i, int size)
{
    return (me + 1 + i % (size - 1)) % size;
}

static int origin_of(int target, int i, int size)
{
    return (target - 1 - i % (size - 1) + 2 * size) % size;
}

/* check segment i of `mem` against (who, round)'s pattern */
static void expect_seg(const unsigned char *mem, int i, int who, int round, const char *what, const char *flavor)
{
    size_t at = seg_at(i, 0);
    for (size_t b = at ; b < at + seg_len(i, 0) ; ++b) {
        if (mem[b] != pattern(who, round, b)) {
            CHECK(0, "%s: %s, segment %d (rank %d): byte %zu is %d, expected %d", flavor, what, i, who, b, mem[b],
                  pattern(who, round, b));
            return;
        }
    }
}

/* segment i of `buf` put to (got from) peer_of(me, i), in one lock_all epoch */
static void move_round_robin(test_win_t *tw, unsigned char *buf, int size, int put)
{
    MPI_OK(MPI_Win_lock_all(0, tw->win));
    for (int i = 0 ; i < SEGS ; ++i) {
        int t = peer_of(test_rank, i, size), n = (int) seg_len(i, 0);
        MPI_Aint at = (MPI_Aint) seg_at(i, 0), disp = test_disp(tw, t, at, 1);
        if (put) MPI_OK(MPI_Put(buf + at, n, MPI_BYTE, t, disp, n, MPI_BYTE, tw->win));
        else MPI_OK(MPI_Get(buf + at, n, MPI_BYTE, t, disp, n, MPI_BYTE, tw->win));
    }
    MPI_OK(MPI_Win_unlock_all(tw->win));
}

static void round_robin(test_win_t *tw, unsigned char *buf, unsigned char *got, int size, int round,
                        const char *flavor)
{
    unsigned char *mine = tw->mem;

    fill(buf, test_rank, round, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    move_round_robin(tw, buf, size, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, test_rank, 0, tw->win));
    for (int i = 0 ; i < SEGS ; ++i)
        expect_seg(mine, i, origin_of(test_rank, i, size), round, "round-robin put", flavor);
    fill(mine, test_rank, round + 1, 0);   /* what the gets read */
    MPI_OK(MPI_Win_unlock(test_rank, tw->win));
    MPI_Barrier(MPI_COMM_WORLD);

    memset(got, 0, span());
    move_round_robin(tw, got, size, 0);
    for (int i = 0 ; i < SEGS ; ++i)
        expect_seg(got, i, peer_of(test_rank, i, size), round + 1, "round-robin get", flavor);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Phase 3: everyone puts to its right neighbour and gets from its left one
 * in the same fence epochs. */
static void all_at_once(test_win_t *tw, unsigned char *buf, unsigned char *got, int size, int round,
                        const char *flavor)
{
    int right = (test_rank + 1) % size, left = (test_rank + size - 1) % size;

    fill(buf, test_rank, round, 0);
    MPI_OK(MPI_Win_fence(0, tw->win));
    move_all(tw, buf, right, 1, 0);
    MPI_OK(MPI_Win_fence(0, tw->win));
    expect(tw->mem, left, round, 0, "fence puts", flavor);
    memset(got, 0, span());
    move_all(tw, got, left, 0, 0);
    MPI_OK(MPI_Win_fence(0, tw->win));
    /* left's window holds what left-of-left put there */
    expect(got, (left + size - 1) % size, round, 0, "fence gets", flavor);
    MPI_OK(MPI_Win_fence(0, tw->win));
}

/* Phase 4: rank 0 computes until every origin has put and said so. */
static unsigned char *computing_buf;

static void put_to_computing(test_win_t *tw, int origin, int round)
{
    fill(computing_buf, origin, round, 0);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
    move_all(tw, computing_buf, 0, 1, 0);
    MPI_OK(MPI_Win_unlock(0, tw->win));
}

static void target_computing(test_win_t *tw, unsigned char *buf, int size, int round, MPI_Comm origins,
                             const char *flavor)
{
    MPI_Aint counter_at = (MPI_Aint) ((span() - 8) & ~(size_t) 7);

    computing_buf = buf;
    test_target0_computing(tw, counter_at, origins, put_to_computing, round, flavor);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        memset((unsigned char *) tw->mem + counter_at, 0, sizeof(int));   /* not part of the pattern */
        expect(tw->mem, size - 1, round, 0, "puts to a computing target", flavor);
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
}

/* Phase 0: the piece limit `limit`.  Rank 1 puts into rank 0's window,
 * each step in a region of its own: a batch of two puts of `limit` bytes
 * until relayed (when expected), a batch of `limit` and `limit` + 2 bytes
 * and one put of LONE bytes, once each and never relayed; rank 0 checks
 * the regions and the gaps. */
#define LONE 20000
static void piece_limit(test_win_t *tw, unsigned char *buf, size_t limit, test_pvar_t *pv, int expected,
                        const char *flavor)
{
    const size_t lens[] = { limit, limit, limit, limit + 2, LONE };
    size_t at[5], end = GAP;
    int relayed = 0, tries = 0;

    for (int k = 0 ; k < 5 ; ++k) {
        at[k] = end;
        end += lens[k] + GAP;
    }
    if (0 == test_rank) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        memset(tw->mem, 0, span());
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == test_rank) {
        double start = test_now_s();
        unsigned long long before;
        for (size_t b = 0 ; b < end ; ++b) buf[b] = pattern(1, 7, b);
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, tw->win));
        do {   /* steps 0 and 1: two pieces of the limit */
            before = test_pvar_read(pv);
            for (int k = 0 ; k < 2 ; ++k)
                MPI_OK(MPI_Put(buf + at[k], (int) lens[k], MPI_BYTE, 0, test_disp(tw, 0, (MPI_Aint) at[k], 1),
                               (int) lens[k], MPI_BYTE, tw->win));
            MPI_OK(MPI_Win_flush(0, tw->win));
            relayed = test_pvar_read(pv) > before;
        } while (expected && !relayed && (++tries < 16 || test_now_s() - start < RETRY_S));
        CHECK(!expected || relayed, "%s: no batch of 2 puts of %zu bytes (the limit) was relayed in %d tries", flavor,
              limit, tries);
        for (int step = 0 ; step < 2 ; ++step) {   /* two pieces one byte above the limit; one alone */
            before = test_pvar_read(pv);
            for (int k = 2 + 2 * step ; k < (0 == step ? 4 : 5) ; ++k)
                MPI_OK(MPI_Put(buf + at[k], (int) lens[k], MPI_BYTE, 0, test_disp(tw, 0, (MPI_Aint) at[k], 1),
                               (int) lens[k], MPI_BYTE, tw->win));
            MPI_OK(MPI_Win_flush(0, tw->win));
            CHECK(test_pvar_read(pv) == before, "%s: %s was relayed", flavor,
                  0 == step ? "a batch of 2 puts averaging one byte above the limit" : "a single put of 20000 bytes");
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == test_rank) {
        const unsigned char *mem = tw->mem;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, tw->win));
        for (size_t b = 0, k = 0 ; b < end + GAP ; ++b) {
            while (k < 5 && b >= at[k] + lens[k]) ++k;
            unsigned char want = k < 5 && b >= at[k] ? pattern(1, 7, b) : 0;
            if (mem[b] != want) {
                CHECK(0, "%s: piece limit: byte %zu is %d, expected %d", flavor, b, mem[b], want);
                break;
            }
        }
        MPI_OK(MPI_Win_unlock(0, tw->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run(int flavor, int size, int expected)
{
    const char *name = flavor_names[flavor];
    unsigned char *buf = malloc(span()), *got = malloc(span());
    int relayed = 0;
    test_pvar_t pv;
    test_win_t tw;
    MPI_Comm others;

    MPI_Comm_split(MPI_COMM_WORLD, 0 == test_rank, test_rank, &others);
    test_win_create(&tw, flavor, span(), 1, MPI_INFO_NULL, MPI_COMM_WORLD);
    size_t limit = (size_t) test_cvar_u64("osc_newrma_relay_piece_bytes");
    CHECK(RELAY_PIECE_LIMIT == limit, "%s: relays of pieces up to %zu bytes, not %d", name, limit, RELAY_PIECE_LIMIT);
    CHECK(limit >= 2 * small_mean() || 2 * limit <= small_mean(), "%s: the small batches (%zu bytes on average) are "
          "too near the limit %zu to tell", name, small_mean(), limit);
    test_pvar_open(&pv, "osc_newrma_relayed_bytes");
    piece_limit(&tw, buf, limit, &pv, expected, name);
    for (int o = 1 ; o < size ; ++o)
        one_origin(&tw, buf, o, 10 * o, &pv, expected && limit >= 2 * small_mean(), 2 * limit <= small_mean(),
                   &relayed, name);
    MPI_Allreduce(MPI_IN_PLACE, &relayed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == test_rank) printf("%s: %d of %d origins had a batch of small puts relayed\n", name, relayed, size - 1);

    if (size >= 3) {
        for (int round = 0 ; round < 2 ; ++round) round_robin(&tw, buf, got, size, 40 + 2 * round, name);
    }
    test_fence_rounds(&tw, all_at_once, buf, got, size, 50, 3, name);
    if (!test_am_path(flavor)) target_computing(&tw, buf, size, 90, others, name);
    test_assist_cleanup(&tw, &others, &pv, buf, got);
}

int main(int argc, char **argv)
{
    return test_assist_main(&argc, &argv, RELAY_BATCH_NAME, run);
}
