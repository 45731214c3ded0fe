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
 * osc/newrma: active-target synchronization between the processes of a
 * window through its node segment: the fence's node barrier and the PSCW
 * post and completion notices (the epochs' states are osc_newrma_sync.c's).
 *
 * Node barrier (fence).  The same code serves two segments: a one-node
 * window's (module->barrier, its words in the window's segment) and the
 * node route's of a window spanning nodes, whose fence runs it as its node
 * phase (osc_newrma_node_route_fence); an osc_newrma_node_barrier_t says
 * where the words are and holds this process's state in it.
 * A window (or node) of at most osc_newrma_fence_flat_ranks
 * processes keeps one arrival word per rank on the window's barrier line:
 * a process stores the episode it arrives at in its own word (a plain
 * store) and waits until every word has reached its episode -- one line
 * visited by each writer, which beats a line per rank at these sizes.
 * Larger windows run a dissemination barrier (Hensgen, Finkel and Manber):
 * ceil(log2 n) rounds; in round k rank i stores the episode into its round-k
 * flag at rank (i + 2^k) mod n, a line in that rank's block that only i
 * writes and only that rank reads, and waits for its own round-k flag to
 * reach the episode before it signals round k + 1.  After the last round
 * every rank's arrival has reached every rank (for any n, not only powers
 * of two), and the critical path is one line hand-off per round, on lines
 * nobody else touches: O(log n), where one counter for all took n locked
 * adds in turn on one line that every waiter polled.  Flags only grow
 * (never reset), and a wait is for ">= episode": a partner done with this
 * episode may already signal the next one.  Memory order: round k's signal
 * is a release store, and a flag seen by a relaxed poll is followed by an
 * acquire fence before the next round's release store.  Each hop is then a
 * release/acquire pair that happens-after the previous one, so
 * happens-before runs along every chain of rounds; since every rank's
 * round-0 store reaches every rank along such a chain, the final acquire
 * covers every rank's writes before its arrival.  (Without the fence in
 * between, a relaxed load passed on by a release store carries nothing
 * on: the chain would break at the first relay.)  docs/rationale.md,
 * "Fence", has the step counts.  Arriving and waiting are separate steps
 * (arriving is the first store; waiting polls, and signals each later
 * round as its flag shows up -- and so does the progress engine, for a
 * process that arrived and went elsewhere in MPI), so a fence that opens
 * an epoch (MPI_MODE_NOPRECEDE) arrives and returns, and only the first
 * operation that needs the others waits (the design's nonblocking fence).
 * Episodes follow each other, so a process finishes waiting for episode e
 * before it arrives at e+1 (osc_newrma_fence); that wait is free unless e
 * was left unfinished.
 *
 * PSCW notices, two ways:
 *  - post box (a post to at most NEWRMA_POST_BOX_ORIGINS origins): the
 *    target publishes the origins in the box on its own completion line;
 *    MPI_Win_start reads each target's box, and MPI_Win_complete answers
 *    by writing its `done` word there.  A post and its completion move the
 *    same line to and fro, as a cache-line ping-pong does.
 *  - ring (larger posts): MPI_Win_post puts the target's rank in a bounded
 *    ring of each origin in its group; MPI_Win_start takes from its own ring
 *    the notices of its group's targets and keeps any early notice (a target
 *    that already posted for a later epoch) until a later start;
 *    MPI_Win_complete adds one to the target's completion counter.
 * MPI_Win_wait waits for every box slot of its post to be done and the
 * counter to reach the ring posts' origins.  A target has at most one post
 * outstanding (it posts again only after its wait), so an origin finds it
 * in exactly one of the two places.  Work is O(group); memory is one line
 * and a ring of at most osc_newrma_post_ring_slots entries per rank, no
 * P x P table.  A completion through the counter is never early: an
 * origin adds to it only after that target's ring post for the same epoch.
 * An epoch that issued no operation may answer a box post before it comes
 * ("early completions", below; docs/rationale.md, "PSCW").
 *
 * The design's MEM_SYNC around each PROC_SYNC is a release before the
 * signal and an acquire after it is seen (osc_newrma_atomic.h: the signal
 * is a release store or read-modify-write, and it is seen by an acquire
 * load, or by relaxed polls and an acquire fence after them).  Here the
 * PROC_SYNC is itself a store or atomic in the segment, so that pair is what
 * publishes everything before the signal to everyone who sees it; no step
 * needs a store ordered before a later load (the one thing a full barrier
 * adds), and on x86 a full barrier stalls until the signal's own cache line
 * transfer is done.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "osc_newrma.h"
#include "osc_newrma_active_target.h"
#include "osc_newrma_mailbox.h"
#include "opal/runtime/opal_progress.h"

/* ------------------------------------------------------------------ */
/* node barrier                                                        */
/* ------------------------------------------------------------------ */

/* Dissemination round `round`: tell rank (rank + 2^round) mod n that we
 * reached `episode` through its flag of that round, which nobody else
 * writes.  MEM_SYNC before PROC_SYNC: release -- in round 0 it publishes
 * our own writes, in later rounds also what the acquire after the previous
 * round's flag made visible to us (the header's transitivity argument). */
static void barrier_signal(const osc_newrma_node_barrier_t *b, unsigned int round, int64_t episode)
{
    int partner = osc_newrma_barrier_partner(b->rank, round, b->size);

    osc_newrma_store_release(osc_newrma_node_barrier_flag(b, partner, round), episode);
}

void osc_newrma_node_barrier_setup(osc_newrma_node_barrier_t *b, int rank, int size, unsigned int fence_flat_ranks)
{
    b->rank = rank;
    b->size = size;
    /* small barriers: one arrival word per rank, all on one line; larger
     * ones: the dissemination flags.  The agreed threshold: the two must
     * never be mixed. */
    b->flat = (unsigned int) size <= fence_flat_ranks;
    b->rounds = osc_newrma_barrier_rounds(size, fence_flat_ranks);
    b->episode = 0;
    /* before the first arrival there is no round to pass on: the progress
     * callback's quick look (below) then has nothing to try */
    osc_newrma_store_relaxed(&b->next, (int) b->rounds);
}

/* `next` is also read without the caller's lock, by the progress
 * callback's quick look, hence its atomics. */
void osc_newrma_node_barrier_arrive(osc_newrma_node_barrier_t *b)
{
    b->episode++;
    osc_newrma_store_relaxed(&b->next, 0);
    /* MEM_SYNC before PROC_SYNC: release */
    if (b->flat) {
        osc_newrma_store_release(&b->arrivals[b->rank], b->episode);
    } else if (b->rounds > 0) {
        barrier_signal(b, 0, b->episode);
    }
}

/* Every rank's arrival word has reached this episode.  Ranks already seen
 * are not read again (next). */
static bool barrier_words_done(osc_newrma_node_barrier_t *b)
{
    int next = osc_newrma_load_relaxed(&b->next);

    for (; next < b->size; ++next) {
        if (osc_newrma_load_relaxed(&b->arrivals[next]) < b->episode) {
            break;
        }
    }
    osc_newrma_store_relaxed(&b->next, next);
    return next == b->size;
}

/* Advance the dissemination rounds as far as the flags allow: round k is
 * done once our round-k flag reached the episode (>=: a partner that
 * already finished this episode may be a round into the next one; each
 * flag has one writer and only grows), and then we signal round k + 1.
 * next is the round we wait in. */
static bool barrier_flags_done(osc_newrma_node_barrier_t *b)
{
    const int64_t episode = b->episode;
    unsigned int round = (unsigned int) osc_newrma_load_relaxed(&b->next);

    for (; round < b->rounds && 0 < episode; ++round) {
        if (osc_newrma_load_relaxed(osc_newrma_node_barrier_flag(b, b->rank, round)) < episode) {
            break;
        }
        /* MEM_SYNC after this round's PROC_SYNC, before the next round's
         * release: what the sender saw must be visible to whom we tell */
        osc_newrma_fence_acquire();
        if (round + 1 < b->rounds) {
            barrier_signal(b, round + 1, episode);
        }
    }
    osc_newrma_store_relaxed(&b->next, (int) round);
    return round == b->rounds || 0 == episode;      /* (episode 0: never arrived) */
}

bool osc_newrma_node_barrier_test(osc_newrma_node_barrier_t *b)
{
    if (!(b->flat ? barrier_words_done(b) : barrier_flags_done(b))) {
        return false;
    }
    osc_newrma_fence_acquire();            /* MEM_SYNC after PROC_SYNC: the arrivals polled relaxed */
    return true;
}

/* The window's barrier state changes under the window's lock: several
 * threads may wait at once (the grant of a fence epoch to their first
 * operations), and the progress engine advances the dissemination rounds
 * of a window whose process is elsewhere in MPI
 * (osc_newrma_active_target_progress). */
void osc_newrma_barrier_arrive(ompi_osc_newrma_module_t *module)
{
    OPAL_THREAD_LOCK(&module->lock);
    osc_newrma_node_barrier_arrive(&module->barrier);
    OPAL_THREAD_UNLOCK(&module->lock);
}

/* One look: is the current episode complete here? */
static bool barrier_done(ompi_osc_newrma_module_t *module)
{
    bool done;

    OPAL_THREAD_LOCK(&module->lock);
    done = osc_newrma_node_barrier_test(&module->barrier);
    OPAL_THREAD_UNLOCK(&module->lock);
    return done;
}

void osc_newrma_barrier_init(ompi_osc_newrma_module_t *module)
{
    osc_newrma_node_barrier_t *b = &module->barrier;

    osc_newrma_node_barrier_setup(b, module->rank, module->size, module->shape.fence_flat_ranks);
    b->arrivals = osc_newrma_shm_global(&module->shm, NEWRMA_GLOBAL_BARRIER_ARRIVALS);
    b->flags = b->rounds > 0 ? osc_newrma_shm_rank_block(&module->shm, 0) + module->shm.layout.barrier_in_rank
                             : NULL;
    b->flags_stride = module->shm.layout.rank_stride;
    b->line = module->shm.layout.cacheline;
}

/* Rounds of the current episode still to go: the progress callback's cue. */
static inline bool barrier_rounds_pending(const osc_newrma_node_barrier_t *b)
{
    return (unsigned int) osc_newrma_load_relaxed(&b->next) < b->rounds;
}

void osc_newrma_barrier_wait(ompi_osc_newrma_module_t *module)
{
    unsigned int spins = 0;

    while (!barrier_done(module)) {
        osc_newrma_mailbox_backoff(module, &spins);
    }
}

/* Episodes follow each other, so an episode nobody waited for (a NOPRECEDE
 * fence) must end here before this process arrives at the next one. */
void osc_newrma_barrier(ompi_osc_newrma_module_t *module)
{
    osc_newrma_barrier_wait(module);
    osc_newrma_barrier_arrive(module);
    osc_newrma_barrier_wait(module);
}

/* ------------------------------------------------------------------ */
/* PSCW: post notices                                                  */
/* ------------------------------------------------------------------ */

static int ring_drain(ompi_osc_newrma_module_t *module);
static void ring_drain_locked(ompi_osc_newrma_module_t *module);

/* A ring cell is one 64-bit word: the lap of the ticket it serves in the
 * high half, the posting rank + 1 in the low half (0: empty).  Ticket t
 * may fill its cell once the cell reads "empty, lap t / slots"; the owner
 * consumes ticket h once it reads "lap h / slots, rank r + 1" and leaves
 * "empty, next lap" behind (a bounded MPMC queue after Vyukov, with one
 * consumer).  Posters therefore never read the owner's head, and the owner
 * never touches the tail: a post-and-take costs the transfer of the cell's
 * line each way and nothing else.  A zeroed segment is every cell empty
 * for lap 0. */
static inline int64_t ring_cell(int64_t ticket, int64_t slots, int32_t value_plus_one)
{
    return (int64_t) (((uint64_t) (ticket / slots) << 32) | (uint32_t) value_plus_one);
}

/* A ring that cannot fill needs no "empty" mark: posters do not read their
 * cell, and the owner compares the lap.  Not writing it keeps the line the
 * poster writes next out of the owner's store buffer: the owner's next
 * locked instruction (a completion) would wait for that write's transfer. */
static inline bool ring_can_fill(const ompi_osc_newrma_module_t *module)
{
    return module->shm.layout.ring_slots < (unsigned int) module->size;
}

static void ring_push(ompi_osc_newrma_module_t *module, int origin, int value)
{
    const osc_newrma_shm_t *shm = &module->shm;
    int64_t slots = shm->layout.ring_slots;
    int64_t ticket = osc_newrma_fetch_add_relaxed(osc_newrma_shm_post_tail(shm, origin), 1);
    int64_t *cell = &osc_newrma_shm_ring(shm, origin)[ticket % slots];
    unsigned int spins = 0;

    /* A ring with a cell for every rank cannot be full: a rank has at most
     * one notice per origin not yet taken (it posts again only after this
     * origin completed with it, and the origin takes notices in ticket
     * order), so the cell is free and the poster need not read it -- one
     * line transfer less per PSCW round.
     * A smaller ring: a cell still holding the previous lap's notice is a
     * full ring, so wait for the origin to take it (back-pressure).
     * Meanwhile we take our own: ranks that all post to each other before
     * starting (all-to-all PSCW with rings smaller than the group) would
     * otherwise wait for each other forever. */
    while (ring_can_fill(module) && osc_newrma_load_relaxed(cell) != ring_cell(ticket, slots, 0)) {
        ring_drain_locked(module);
        osc_newrma_backoff(&spins);
    }
    osc_newrma_store_release(cell, ring_cell(ticket, slots, value + 1));   /* MEM_SYNC before PROC_SYNC */
}

/* Is the owner's next cell filled (for the head's lap)?  (Polled while
 * start waits, so its cell and empty value are kept, not divided out.) */
static inline bool ring_ready(const ompi_osc_newrma_module_t *module)
{
    return osc_newrma_load_relaxed(&osc_newrma_shm_ring(&module->shm, module->rank)[module->post_head_cell])
           > module->post_head_empty;
}

static void ring_head_advance(ompi_osc_newrma_module_t *module)
{
    int64_t slots = module->shm.layout.ring_slots;

    module->post_head++;
    module->post_head_cell = module->post_head % slots;
    module->post_head_empty = ring_cell(module->post_head, slots, 0);
}


/* Move every notice in our ring to the private list of notices not yet
 * matched by a start. */
static int ring_drain(ompi_osc_newrma_module_t *module)
{
    int64_t *ring = osc_newrma_shm_ring(&module->shm, module->rank);
    int64_t slots = module->shm.layout.ring_slots;

    while (ring_ready(module)) {
        int64_t cell = module->post_head_cell;
        if (module->posts_seen_count == module->posts_seen_capacity) {
            size_t capacity = module->posts_seen_capacity ? 2 * module->posts_seen_capacity : 16;
            int *grown = realloc(module->posts_seen, capacity * sizeof(int));
            if (NULL == grown) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            module->posts_seen = grown;
            module->posts_seen_capacity = capacity;
        }
        /* acquire: MEM_SYNC after PROC_SYNC, the poster's release */
        module->posts_seen[module->posts_seen_count++] = (int32_t) (uint32_t) osc_newrma_load_acquire(&ring[cell]) - 1;
        if (ring_can_fill(module)) {
            osc_newrma_store_relaxed(&ring[cell], ring_cell(module->post_head + slots, slots, 0));
        }
        ring_head_advance(module);
    }
    return OMPI_SUCCESS;
}

static void ring_drain_locked(ompi_osc_newrma_module_t *module)
{
    OPAL_THREAD_LOCK(&module->lock);
    (void) ring_drain(module);
    OPAL_THREAD_UNLOCK(&module->lock);
}

/* ------------------------------------------------------------------ */
/* rings and fence rounds from the progress engine                     */
/* ------------------------------------------------------------------ */

/* A ring smaller than the number of ranks can fill: a poster then waits
 * for the origin to take its notices.  The origin may be anywhere in MPI
 * by then (a barrier, a receive), so such a window's ring is drained from
 * opal_progress too (osc_newrma_progress.c); no other window's is.
 * Likewise a window whose fence runs the dissemination rounds: a process
 * that arrived at a fence and went on (NOPRECEDE) and is now elsewhere in
 * MPI -- a receive, another window's fence -- must still pass the later
 * rounds on, or the others wait for it (forever, if what it waits for
 * comes from them). */
bool osc_newrma_active_target_needs_progress(const ompi_osc_newrma_module_t *module)
{
    return ring_can_fill(module) || module->shm.layout.barrier_rounds > 0;
}

int osc_newrma_active_target_progress(ompi_osc_newrma_module_t *module)
{
    bool drain = ring_can_fill(module), relay = barrier_rounds_pending(&module->barrier);
    int count = 0;

    if ((drain || relay) && 0 == opal_mutex_trylock(&module->lock)) {
        if (drain && ring_ready(module)) {
            (void) ring_drain(module);
            count = 1;
        }
        if (relay) {
            unsigned int before = (unsigned int) osc_newrma_load_relaxed(&module->barrier.next);
            (void) barrier_flags_done(&module->barrier);
            count += before != (unsigned int) osc_newrma_load_relaxed(&module->barrier.next);
        }
        opal_mutex_unlock(&module->lock);
    }
    return count;
}

/* ------------------------------------------------------------------ */
/* PSCW: the post box                                                  */
/* ------------------------------------------------------------------ */

static inline bool post_box_fits(size_t count)
{
    return count <= mca_osc_newrma_component.post_box_origins;
}

/* Early completions.  A slot's done word is the seq of the last post its
 * origin answered; a slot is pending while done is behind the box's seq
 * (compared as a signed difference, so the odd "not yet" mark, seq - 1, is
 * behind and a 32-bit wrap does not matter).  An origin whose epoch issued
 * no operation to a target may answer that target's *next* posts before
 * they come, if the target's box lists it with every post so far answered:
 * it adds 2 to its done word by compare-and-swap, at most
 * osc_newrma_pscw_early_answers posts ahead of the box.  A re-arm (seq + 2)
 * then finds that slot answered still, while done is not behind.  Every
 * other post first closes the box: the seq made odd, and every slot's done
 * word exchanged for it, so an origin's racing compare-and-swap either
 * landed before -- the target then keeps that origin's answers ahead, which
 * count for its next posts to that origin -- or fails, and the origin waits
 * for the post.  An epoch with operations always waits (they need the
 * exposure). */

/* How many posts done word d is ahead of seq s: 0 at it, -1 behind it
 * (pending, the odd mark included) */
static inline int32_t box_ahead(uint32_t d, uint32_t s)
{
    int32_t diff = (int32_t) (d - s);
    return diff < 0 ? -1 : diff / 2;
}

/* Room for what a close may take out: at most one per box slot. */
static int early_reserve(ompi_osc_newrma_module_t *module)
{
    size_t need = module->early_count + NEWRMA_POST_BOX_ORIGINS;

    if (need > module->early_capacity) {
        osc_newrma_early_answers_t *grown = realloc(module->early_origins, 2 * need * sizeof(*grown));
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        module->early_origins = grown;
        module->early_capacity = 2 * need;
    }
    return OMPI_SUCCESS;
}

/* How many of our next posts to `origin` it answered early (taken out of
 * the box when it was closed); takes up to `most` of them. */
static uint32_t early_take(ompi_osc_newrma_module_t *module, int origin, uint32_t most)
{
    for (size_t i = 0 ; i < module->early_count ; ++i) {
        osc_newrma_early_answers_t *kept = &module->early_origins[i];
        if (kept->origin == origin) {
            uint32_t taken = kept->posts < most ? kept->posts : most;
            kept->posts -= taken;
            if (0 == kept->posts) {
                *kept = module->early_origins[--module->early_count];
            }
            return taken;
        }
    }
    return 0;
}

/* Close our box (a post other than a re-arm follows): no origin may
 * complete into the listed layout any more; early completions already in
 * it are kept (early_reserve made room). */
static void post_box_close(ompi_osc_newrma_module_t *module)
{
    osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, module->rank);
    uint32_t seq = osc_newrma_load_relaxed(&box->seq), closed = seq + 1, count;

    module->post_box_current = false;
    if (seq & 1) {
        return;                            /* closed already */
    }
    osc_newrma_store_relaxed(&box->seq, closed);
    osc_newrma_fence_release();            /* the seqlock: the odd seq before the box's words */
    count = osc_newrma_load_relaxed(&box->count);
    for (uint32_t k = 0 ; k < count ; ++k) {
        /* acquire: an early answer's epoch */
        int32_t ahead = box_ahead(osc_newrma_exchange_acq_rel(&box->done[k], closed), seq);
        if (ahead > 0) {
            module->early_origins[module->early_count++] = (osc_newrma_early_answers_t) {
                .origin = osc_newrma_load_relaxed(&box->origin[k]), .posts = (uint32_t) ahead };
        }
    }
}

/* Publish a post in our own box (the seqlock's writer), closed first.
 * Nobody else writes the box meanwhile: every origin of the previous post
 * has written its done word (our MPI_Win_wait returned), a closed box
 * takes no early completion, and the new post's origins wait for the even
 * seq.  The listed slots' done words get the odd seq, which no origin ever
 * writes, so no stale value -- however old -- can read as done for the new
 * post; an origin that answered it early gets the new seq (and more, as
 * many posts as it answered ahead). */
static void post_box_publish(ompi_osc_newrma_module_t *module, const int *origins, size_t count)
{
    osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, module->rank);
    uint32_t writing;

    post_box_close(module);
    writing = osc_newrma_load_relaxed(&box->seq);
    osc_newrma_fence_release();            /* the seqlock: the odd seq before the box's words
                                            * (the close may have been an earlier one) */
    for (size_t k = 0 ; k < count ; ++k) {
        uint32_t answered = 0 != module->early_count ? early_take(module, origins[k], UINT32_MAX) : 0;
        osc_newrma_store_relaxed(&box->origin[k], origins[k]);
        /* answered ahead: the new seq and the next answered - 1 posts */
        osc_newrma_store_relaxed(&box->done[k], 0 != answered ? writing + 2 * answered - 1 : writing);
    }
    osc_newrma_store_relaxed(&box->count, (uint32_t) count);
    /* release: the box before its even seq, and MEM_SYNC before PROC_SYNC */
    osc_newrma_store_release(&box->seq, writing + 1);
    module->post_box_current = true;
}

/* Post again to the origins the box already lists (the same group as the
 * last post, the usual case: one store instead of the seqlock's rewrite).
 * Our last wait saw every listed slot done, i.e. done[k] == seq (or
 * ahead: answered early since), so the next even seq makes each of them
 * pending again but those answered ahead, and a reader sees either the old
 * post (all done: no match) or the new one -- never a mix. */
static void post_box_republish(ompi_osc_newrma_module_t *module)
{
    osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, module->rank);

    /* MEM_SYNC before PROC_SYNC: release */
    osc_newrma_store_release(&box->seq, osc_newrma_load_relaxed(&box->seq) + 2);
}

/* Our slot in `target`'s box and what it held, by a seqlock read: false
 * unless the box lists us and its seq was even and unchanged around it.
 * (In line: a start's poll for its posts, and a call per poll was a
 * measurable part of an empty PSCW round.) */
typedef struct {
    uint32_t seq;
    uint32_t slot;
    uint32_t done;
} post_box_view_t;

static inline __opal_attribute_always_inline__ bool post_box_read(const ompi_osc_newrma_module_t *module,
                                                                   int target, post_box_view_t *view)
{
    const osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, target);
    /* the seqlock's reader: acquire (the box's words after the seq, and
     * MEM_SYNC after PROC_SYNC), relaxed loads of the words, an acquire
     * fence before the seq is read again (the words before it) */
    uint32_t seq = osc_newrma_load_acquire(&box->seq), count;

    if (seq & 1) {
        return false;
    }
    count = osc_newrma_load_relaxed(&box->count);
    for (uint32_t k = 0 ; k < count && k < NEWRMA_POST_BOX_ORIGINS ; ++k) {
        if (osc_newrma_load_relaxed(&box->origin[k]) == module->rank) {
            *view = (post_box_view_t) { .seq = seq, .slot = k, .done = osc_newrma_load_relaxed(&box->done[k]) };
            osc_newrma_fence_acquire();
            return osc_newrma_load_relaxed(&box->seq) == seq;
        }
    }
    return false;
}

/* Has `target` published a post naming us that we have not answered yet? */
static bool post_box_take(ompi_osc_newrma_module_t *module, int target, osc_newrma_post_match_t *match)
{
    post_box_view_t view;

    if (!post_box_read(module, target, &view) || box_ahead(view.done, view.seq) >= 0) {
        return false;
    }
    *match = (osc_newrma_post_match_t) { .slot = (int32_t) view.slot, .seq = view.seq };
    return true;
}

/* Answer `target`'s next post before it comes (an epoch that issued no
 * operation): possible while its box lists us with every post so far
 * answered and fewer than osc_newrma_pscw_early_answers answered ahead;
 * the compare-and-swap fails if the box was closed or re-written since. */
static bool post_box_complete_early(ompi_osc_newrma_module_t *module, int target)
{
    osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, target);
    post_box_view_t view;
    int32_t ahead;

    if (!post_box_read(module, target, &view)) {
        return false;
    }
    ahead = box_ahead(view.done, view.seq);
    return ahead >= 0 && (uint32_t) ahead < mca_osc_newrma_component.pscw_early_answers
           && osc_newrma_cas_acq_rel(&box->done[view.slot], &view.done, view.done + 2);
}

void osc_newrma_complete_early(ompi_osc_newrma_module_t *module, const int *targets, size_t count)
{
    for (size_t i = 0 ; i < count ; ++i) {
        osc_newrma_post_match_t *match = &module->start_matches[i];
        if (NEWRMA_POST_UNSEEN == match->slot && post_box_complete_early(module, targets[i])) {
            match->slot = NEWRMA_POST_EARLY;
        }
    }
}

int osc_newrma_post_signal(ompi_osc_newrma_module_t *module, const int *origins, size_t count)
{
    if (post_box_fits(count) && module->post_box_current) {
        post_box_republish(module);
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != early_reserve(module)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (post_box_fits(count)) {
        post_box_publish(module, origins, count);
        return OMPI_SUCCESS;
    }
    /* the ring: an origin that answered this post early gets no notice */
    post_box_close(module);
    for (size_t i = 0 ; i < count ; ++i) {
        if (0 != module->early_count && 0 != early_take(module, origins[i], 1)) {
            continue;
        }
        ring_push(module, origins[i], module->rank);
        module->completes_expected++;
    }
    return OMPI_SUCCESS;
}

/* Size the start group's match records and set them all to `slot`. */
int osc_newrma_start_matches_reset(ompi_osc_newrma_module_t *module, size_t count, int32_t slot)
{
    if (count > module->start_matches_capacity) {
        size_t capacity = count > 8 ? count : 8;
        osc_newrma_post_match_t *grown = realloc(module->start_matches, capacity * sizeof(*grown));
        if (NULL == grown) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        module->start_matches = grown;
        module->start_matches_capacity = capacity;
    }
    for (size_t i = 0 ; i < count ; ++i) {
        module->start_matches[i] = (osc_newrma_post_match_t) { .slot = slot };
    }
    return OMPI_SUCCESS;
}

/* Take our ring's notices and match those of start targets not seen yet;
 * keep the others, in order, for a later start. */
static int ring_match(ompi_osc_newrma_module_t *module, const int *targets, size_t count, size_t *unseen)
{
    size_t kept = 0;
    int ret;

    OPAL_THREAD_LOCK(&module->lock);
    ret = ring_drain(module);
    OPAL_THREAD_UNLOCK(&module->lock);
    for (size_t i = 0 ; i < module->posts_seen_count ; ++i) {
        int rank = module->posts_seen[i];
        const int *found = bsearch(&rank, targets, count, sizeof(int), osc_newrma_int_compare);
        osc_newrma_post_match_t *match = NULL != found ? &module->start_matches[found - targets] : NULL;

        if (NULL != match && NEWRMA_POST_UNSEEN == match->slot) {
            match->slot = NEWRMA_POST_RING;
            --*unseen;
        } else {
            module->posts_seen[kept++] = rank;
        }
    }
    module->posts_seen_count = kept;
    return ret;
}

/* Wait for the post of every target of the start group (sorted ranks)
 * whose match record says it is not seen yet. */
int osc_newrma_start_wait_posts(ompi_osc_newrma_module_t *module, const int *targets, size_t count)
{
    size_t unseen = 0;
    unsigned int spins = 0;
    int ret = OMPI_SUCCESS;
    bool look_in_ring = true;    /* notices kept from earlier drains may match */

    for (size_t i = 0 ; i < count ; ++i) {
        unseen += NEWRMA_POST_UNSEEN == module->start_matches[i].slot;
    }

    while (OMPI_SUCCESS == ret) {
        for (size_t i = 0 ; i < count ; ++i) {
            if (NEWRMA_POST_UNSEEN == module->start_matches[i].slot
                && post_box_take(module, targets[i], &module->start_matches[i])) {
                --unseen;
            }
        }
        /* After the first look only a new notice can match, so the poll
         * stays one load -- unless the progress engine drains this ring
         * too (into posts_seen, behind our back). */
        if (unseen > 0 && (look_in_ring || ring_ready(module))) {
            ret = ring_match(module, targets, count, &unseen);
            look_in_ring = ring_can_fill(module);
        }
        if (0 == unseen) {
            break;
        }
        osc_newrma_backoff(&spins);
    }
    /* MEM_SYNC after PROC_SYNC: the box's seq and the ring's cells were read with acquire */
    return ret;
}

/* ------------------------------------------------------------------ */
/* PSCW: completions                                                   */
/* ------------------------------------------------------------------ */

void osc_newrma_complete_signal(ompi_osc_newrma_module_t *module, const int *targets, size_t count)
{
    /* MEM_SYNC before PROC_SYNC: each signal is a release */
    for (size_t i = 0 ; i < count ; ++i) {
        osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, targets[i]);
        const osc_newrma_post_match_t *match = &module->start_matches[i];

        if (match->slot >= 0) {
            osc_newrma_store_release(&box->done[match->slot], match->seq);
        } else if (NEWRMA_POST_RING == match->slot) {
            (void) osc_newrma_fetch_add_release(&box->completes, 1);
        }
    }
}

bool osc_newrma_completions_arrived(ompi_osc_newrma_module_t *module)
{
    const osc_newrma_post_box_t *box = osc_newrma_shm_post_box(&module->shm, module->rank);
    uint32_t seq = osc_newrma_load_relaxed(&box->seq), count = osc_newrma_load_relaxed(&box->count);

    /* a ring post leaves the box as the last box post left it: all done */
    if (osc_newrma_load_relaxed(&box->completes) < module->completes_expected) {
        return false;
    }
    for (uint32_t k = 0 ; k < count ; ++k) {
        /* ahead: answered, and our next posts early */
        if (box_ahead(osc_newrma_load_relaxed(&box->done[k]), seq) < 0) {
            return false;
        }
    }
    osc_newrma_fence_acquire();            /* MEM_SYNC after PROC_SYNC: the signals polled relaxed */
    return true;
}
