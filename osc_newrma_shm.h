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
 * osc/newrma: the node's shared segment of a window.
 *
 * One aggregated allocation per window per node, laid out up front by
 * osc_newrma_shm_layout() (exact sizes, cache-line alignment, page alignment
 * only for alloc_shared_noncontig and the memory of large windows).
 * Everything inside the segment refers to other parts of it by offset, never
 * by pointer, since every process maps it at a different address.  See
 * docs/shared-segment.md.
 */

#ifndef OSC_NEWRMA_SHM_H
#define OSC_NEWRMA_SHM_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal/mca/shmem/shmem.h"
#include "opal/runtime/opal_progress.h"

#include "osc_newrma_atomic.h"
#include "osc_newrma_compat.h"

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;
struct ompi_communicator_t;

#define NEWRMA_SHM_MAGIC 0x6e6577726d610001ull /* "newrma" + layout version 1 */

/* Segment header: written by local rank 0 while creating, read-only after
 * (but for `refused`, written at creation by processes that refuse a reused
 * segment's single-copy path). */
typedef struct {
    uint64_t magic;
    uint64_t total_size;
    int32_t nranks;
    int32_t flavor;
    uint64_t id;                     /* node-unique: creator pid << 32 | its count */
    uint64_t uses;          /* windows served; set last when it is (re)filled */
    int64_t refused;        /* reuse: someone cannot reach a peer by single-copy */
} osc_newrma_shm_header_t;

/* What every process needs to know about a peer to reach its window memory.
 * Written once, by the creating process, before anyone else maps the segment;
 * read-only afterwards, so several peers share a line without false sharing. */
typedef struct {
    uint64_t data_offset;        /* window memory in the segment (allocate/shared) */
    uint64_t base;               /* window base in the peer's address space (create) */
    uint64_t size;               /* window size in bytes */
    int32_t disp_unit;
    int32_t pid;                 /* for single-copy (CMA) access */
} osc_newrma_peer_info_t;

/* A target's passive-target lock: a reader/writer queue lock after
 * Mellor-Crummey and Scott (osc_newrma_lock.c).  Written by every origin that
 * locks the target, so it has a line of its own. */
typedef struct {
    int64_t state;          /* reader count << 2 | writer active | writer interested */
    int32_t writer_tail;    /* last queued writer's qnode id + 1, 0: none */
    int32_t writer_head;    /* first queued writer's qnode id + 1 */
    int32_t reader_head;    /* waiting readers (a stack of qnode ids + 1) */
} osc_newrma_lock_word_t;

/* A queue node: an origin waits on its own node's line, and a writer keeps
 * its node while it holds the lock (its successor links into it). */
typedef struct {
    int32_t blocked;
    int32_t next;           /* qnode id + 1, 0: none */
} osc_newrma_qnode_t;

/* Dynamic windows: where the owner's region table is (osc_newrma_dynamic.c).
 * Written only by the owner, read by origins. */
typedef struct {
    int64_t generation;     /* odd while the owner rewrites its table */
    uint64_t table_addr;             /* in the owner's address space */
    uint64_t count;
} osc_newrma_peer_dyn_t;

/* The mailbox of a window of user memory (osc_newrma_mailbox.c), through
 * which an origin hands one small operation to a target that is inside MPI
 * (or posts a shared copy or a relay), on one line that every origin may
 * write (claim, post, collect) and the target reads and answers on.  `state` is a sequence
 * number (bumped by every claim, so a stale view cannot be mistaken for a
 * new request) over a NEWRMA_MAILBOX_* state in its low bits. */
typedef struct {
    uint64_t state;                  /* sequence << NEWRMA_MAILBOX_BITS | NEWRMA_MAILBOX_* state */
    uint8_t kind;                    /* NEWRMA_MAILBOX_* (osc_newrma_mailbox.h)
                                      * | NEWRMA_MAILBOX_WANT_RESULT (accumulate: old values back) */
    uint8_t dt_id;                   /* predefined datatype id (ompi_datatype_t.id, < 256) */
    uint8_t op_index;                /* Fortran index of the intrinsic op (predefined: < 256) */
    uint8_t count;                   /* a small operation's elements (<= NEWRMA_MAILBOX_MAX_PAYLOAD) */
    int32_t peer;                    /* a small operation: 1 + the rank whose answer line gets the
                                      * answer, 0: this line's payload; a shared copy or relay:
                                      * the origin's rank */
    uint64_t addr;                   /* first target byte, in the target's address space */
    uint8_t payload[];               /* origin data [| compare]; old values on the way back */
} osc_newrma_mailbox_t;           /* 24 bytes before the payload, as with a 32-bit state */

/* A rank's answer line: where a target answers the request this rank
 * waits for (one at a time), so that the waiting origin spins on a line
 * nobody else touches until the answer is there, and the target frees its
 * mailbox at once instead of after the origin read the answer from it. */
typedef struct {
    uint64_t tag;                    /* the answered request's mailbox state (sequence | DONE),
                                      * written after the payload; cleared by the origin
                                      * before it posts */
    uint8_t payload[];               /* old values, or the compare-and-swap's result */
} osc_newrma_mailbox_answer_t;

/* The target's sign of life: when it last ran newrma's progress (ns of
 * CLOCK_MONOTONIC).  Written by the target only, on a line of its own. */
typedef struct {
    uint64_t stamp;
} osc_newrma_mailbox_presence_t;

/* A rank's completion line (PSCW), written by the origins completing to it
 * and read by the rank in MPI_Win_wait.  It is also the rank's post box: a
 * post to at most NEWRMA_POST_BOX_ORIGINS origins is published here rather
 * than in each origin's ring, and each origin completes by writing its
 * `done` word on the same line -- so a post and its completion move one
 * line back and forth, like a ping-pong, where ring + counter moved two
 * (osc_newrma_active_target.c).  `seq` is a seqlock: odd while the owner rewrites
 * the box, even when published; `done[k]` holds the published seq once
 * origin[k] completed.  Larger posts (and MPI_MODE_NOCHECK epochs) use the
 * ring and the `completes` counter. */
#define NEWRMA_POST_BOX_ORIGINS 6
typedef struct {
    int64_t completes;      /* completions of ring posts, never reset */
    uint32_t seq;           /* owner: odd while writing, even when published */
    uint32_t count;         /* origins in the box (0: none yet) */
    int32_t origin[NEWRMA_POST_BOX_ORIGINS];
    uint32_t done[NEWRMA_POST_BOX_ORIGINS];
} osc_newrma_post_box_t;

/* Window-wide synchronization words, each on a line of its own because
 * different processes write each of them. */
enum {
    NEWRMA_GLOBAL_BARRIER_ARRIVALS = 0,  /* node barrier of small windows: each rank's arrivals,
                                          * never reset (larger windows: unused, their fence
                                          * flags are in the rank blocks) */
    NEWRMA_GLOBAL_LOCKALL_READERS,       /* lock_all holders on the O(1) path */
    NEWRMA_GLOBAL_EXCLUSIVE_WANTED,      /* exclusive lock holders and waiters */
    NEWRMA_GLOBAL_LOCK_MODE,             /* whether exclusive lockers announce themselves */
    NEWRMA_GLOBAL_LINES
};

/* The values that shape a window's segment and protocols on the node path.
 * Each process brings its own (its MCA values and info keys) in the
 * creation's allgather, and the window uses the agreed ones
 * (osc_newrma_shape_agree), so that every process computes the same layout
 * and takes the same fence algorithm even when the processes were given
 * different values. */
typedef struct {
    uint32_t lock_qnodes;            /* max: more queue nodes are always safe */
    uint32_t acc_stripes;            /* max (powers of two, so still one) */
    uint32_t ring_slots;             /* max of the caps on the post ring */
    uint32_t fence_flat_ranks;       /* max, at most a line's worth of words */
    uint32_t no_locks;               /* 1 only if every process said no_locks */
    uint32_t noncontig;              /* 1 only if every process said alloc_shared_noncontig */
    uint64_t cacheline;              /* max */
    uint64_t data_alignment;         /* max: of each rank's window memory (mpi_minimum_memory_alignment) */
} osc_newrma_shape_t;

/* Dissemination rounds of the fence's node barrier for a window of `nranks`
 * processes: ceil(log2 nranks) above fence_flat_ranks (whose windows use
 * the arrival words instead), 0 otherwise.  A function of the agreed shape,
 * so every process lays out the same flags and runs the same barrier. */
static inline unsigned int osc_newrma_barrier_rounds(int nranks, unsigned int fence_flat_ranks)
{
    unsigned int rounds = 0;

    if ((unsigned int) nranks <= fence_flat_ranks) {
        return 0;
    }
    while ((1ull << rounds) < (unsigned long long) nranks) {
        ++rounds;
    }
    return rounds;
}

/* Sizes each process brings to the layout (gathered before the layout). */
typedef struct {
    uint64_t size;
    uint64_t base;
    int32_t disp_unit;
    int32_t pid;
    uint64_t probe;          /* a word the neighbour reads to test single-copy access */
    uint64_t acc_granularity;   /* asked for; the window takes the largest */
    uint64_t wants_am;          /* a vote for active messages (create/dynamic) */
    uint64_t segment_id;        /* the freed segment this process keeps (0: none) */
    uint64_t segment_uses;      /* and how many windows it has served */
    uint64_t window_id;         /* its proposal for the window id, should the window take
                                 * active messages (osc_newrma_am_window_id_propose) */
    osc_newrma_shape_t shape;       /* what it was asked for; the window agrees on one */
} osc_newrma_peer_input_t;

/* What the layout depends on; identical in every process of the window. */
typedef struct {
    int nranks;
    int flavor;
    const osc_newrma_peer_input_t *peers;   /* may be NULL without window memory */
    bool noncontig;                  /* alloc_shared_noncontig */
    bool no_locks;                   /* no lock words or queue nodes */
    unsigned int qnodes;             /* queue nodes per rank */
    unsigned int ring_slots;         /* post notices per rank (PSCW) */
    unsigned int acc_stripes;        /* accumulate locks per rank */
    unsigned int barrier_rounds;     /* fence flags per rank (dissemination barrier; 0: none) */
    size_t cacheline;
    size_t pagesize;
    size_t data_alignment;           /* of each rank's window memory: a power of two (0: the line) */
} osc_newrma_shm_params_t;

/* Offsets of every region; the same in every process. */
typedef struct {
    size_t cacheline;
    size_t total_size;
    size_t header_offset;
    size_t global_offset;            /* NEWRMA_GLOBAL_LINES lines */
    size_t info_offset;              /* nranks x osc_newrma_peer_info_t */
    size_t rank_offset;              /* nranks x rank_stride */
    size_t rank_stride;
    /* inside a rank's block (relative to its start); SIZE_MAX if absent */
    size_t lock_in_rank;             /* one line */
    size_t qnodes_in_rank;           /* qnodes lines */
    size_t post_tail_in_rank;        /* one line: written by posters */
    size_t complete_in_rank;         /* completion line and post box (osc_newrma_post_box_t) */
    size_t dyn_in_rank;              /* owner-written, dynamic windows only */
    size_t ring_in_rank;             /* ring_slots x int64 cells */
    size_t assist_in_rank;           /* create/dynamic: mailbox, presence and answer lines */
    size_t acc_in_rank;              /* acc_stripes lines: accumulate locks */
    size_t barrier_in_rank;          /* barrier_rounds lines: the rank's fence flags */
    unsigned int acc_stripes;
    unsigned int barrier_rounds;
    unsigned int qnodes;
    unsigned int ring_slots;
    size_t data_offset;              /* window memory (allocate/shared flavors) */
    size_t base_alignment;           /* the segment's base: a page if window memory starts on one */
    size_t rank_alignment;           /* each rank's window memory (0: packed, a contiguous array) */
} osc_newrma_shm_layout_t;

/* What unmapping a segment needs: opal/shmem's descriptor without the file's
 * path (4 KiB, of no use once every process has mapped the file and it is
 * unlinked), so that a window does not carry it. */
typedef struct {
    unsigned char *addr;
    size_t size;
    pid_t cpid;
    int id;
    opal_shmem_ds_flag_t flags;
} osc_newrma_mapping_t;

/* A window's mapping of its segment. */
typedef struct {
    osc_newrma_shm_layout_t layout;
    char *base;                      /* where this process mapped it */
    bool is_shared;                  /* false: one process, private memory */
    osc_newrma_mapping_t mapping;
    /* what a later window needs to know to reuse the mapping */
    uint64_t id;                     /* the header's id */
    uint64_t uses;                   /* windows served so far */
    size_t capacity;                 /* bytes usable from base */
    size_t alignment;                /* of base */
    int members;                     /* processes that map it */
} osc_newrma_shm_t;

/* Compute every region's offset and the exact total size.  A pure function
 * of its parameters: the same inputs give the same layout in every process,
 * which is what lets each process find things by offset.  Exported, as the
 * print below, for the layout tests (tests/segment_*.c): the component is
 * built with hidden visibility otherwise. */
OSC_NEWRMA_DECLSPEC int osc_newrma_shm_layout(osc_newrma_shm_layout_t *layout, const osc_newrma_shm_params_t *params);

/* Print a layout, one region a line (the layout tool and verbose output). */
/* One line of a layout printout: a region's name, offset, size and note. */
void osc_newrma_shm_print_region(void (*print)(void *, const char *), void *ctx, const char *name,
                                 size_t offset, size_t bytes, const char *note);

OSC_NEWRMA_DECLSPEC void osc_newrma_shm_layout_print(const osc_newrma_shm_layout_t *layout, int nranks,
                                                      void (*print)(void *ctx, const char *line), void *ctx);

/* Create (rank 0), map (everyone) and unlink the segment; collective over
 * `comm` (the window's).  Fails on every rank if it fails on any.
 * `vote`: this process's answer to a yes/no question decided with the same
 * reduction (single-copy reach); if any process says no, the segment is
 * released and every rank gets OMPI_ERR_UNREACH. */
int osc_newrma_shm_attach(struct ompi_osc_newrma_module_t *module, struct ompi_communicator_t *comm,
                          const osc_newrma_peer_input_t *peers, int vote);
void osc_newrma_shm_detach(osc_newrma_shm_t *shm);
/* Rank 0's part of (re)filling a segment: zero what the layout uses below
 * the window memory, write the header and the peers' info. */
void osc_newrma_shm_fill(osc_newrma_shm_t *shm, int nranks, int flavor, const osc_newrma_peer_input_t *peers);

/* Segment reuse (osc_newrma_shm_reuse.c): a freed window's segment, kept
 * mapped, serves the next window of exactly the same processes on the node.
 * take: move this process's kept segment (if any) into `shm` before the
 * creation's allgather, which reports it; reusable: whether every process
 * reported the same one and the new layout fits (the same answer in every
 * process); reuse: refill it (collective over the window, no MPI calls);
 * keep: after a window is freed (or a taken segment was not reused), keep
 * `shm`'s segment (dropping an older one) or unmap it; flush: unmap at
 * finalize. */
void osc_newrma_shm_cache_take(osc_newrma_shm_t *shm);
bool osc_newrma_shm_reusable(const osc_newrma_shm_t *shm, const osc_newrma_peer_input_t *peers, int nranks,
                             size_t alignment);
int osc_newrma_shm_reuse(struct ompi_osc_newrma_module_t *module, const osc_newrma_peer_input_t *peers, int vote);
void osc_newrma_shm_cache_keep(osc_newrma_shm_t *shm);
void osc_newrma_shm_cache_flush(void);
/* The mapping step alone, for any segment (the FIFO segment of
 * osc_newrma_transport_fifo.c too): communicator rank 0 creates a file of `size`
 * bytes (plus opal/shmem's header), everyone maps it at a base aligned to
 * `alignment`, then it is unlinked.  Collective; fails on every rank if it
 * fails on any.  `fill` (if not NULL) runs in rank 0 on the new segment
 * before anyone else maps it, so what it writes is there for everyone when
 * the call returns.  `*vote` (if not NULL) is this process's yes (1) or no
 * (0), replaced by everyone's verdict (the minimum). */
int osc_newrma_shm_map(struct ompi_communicator_t *comm, size_t size, size_t alignment,
                       osc_newrma_mapping_t *mapping, char **base, void (*fill)(void *ctx, char *base),
                       void *ctx, int *vote);
/* Unmap what osc_newrma_shm_map mapped. */
void osc_newrma_shm_unmap(osc_newrma_mapping_t *mapping);
/* This process's own shape (its MCA values, the window's info keys), and
 * the one every process of the window derives alike from all of them. */
void osc_newrma_shape_mine(const struct ompi_osc_newrma_module_t *module, osc_newrma_shape_t *shape);
void osc_newrma_shape_agree(osc_newrma_shape_t *agreed, const osc_newrma_peer_input_t *peers, int nranks);

static inline osc_newrma_peer_info_t *osc_newrma_shm_peer(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_peer_info_t *) (shm->base + shm->layout.info_offset) + rank;
}

static inline char *osc_newrma_shm_rank_block(const osc_newrma_shm_t *shm, int rank)
{
    return shm->base + shm->layout.rank_offset + (size_t) rank * shm->layout.rank_stride;
}

static inline int64_t *osc_newrma_shm_global(const osc_newrma_shm_t *shm, int which)
{
    return (int64_t *) (shm->base + shm->layout.global_offset
                                 + (size_t) which * shm->layout.cacheline);
}

static inline osc_newrma_lock_word_t *osc_newrma_shm_lock(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_lock_word_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.lock_in_rank);
}

/* queue node `id` = rank * qnodes + index */
static inline osc_newrma_qnode_t *osc_newrma_shm_qnode(const osc_newrma_shm_t *shm, int id)
{
    int rank = id / (int) shm->layout.qnodes, index = id % (int) shm->layout.qnodes;
    return (osc_newrma_qnode_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.qnodes_in_rank
                                   + (size_t) index * shm->layout.cacheline);
}

static inline int64_t *osc_newrma_shm_post_tail(const osc_newrma_shm_t *shm, int rank)
{
    return (int64_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.post_tail_in_rank);
}

static inline osc_newrma_post_box_t *osc_newrma_shm_post_box(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_post_box_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.complete_in_rank);
}

static inline int64_t *osc_newrma_shm_ring(const osc_newrma_shm_t *shm, int rank)
{
    return (int64_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.ring_in_rank);
}

/* accumulate lock `stripe` of `rank` (a spin lock word on a line of its own) */
static inline int32_t *osc_newrma_shm_acc_lock(const osc_newrma_shm_t *shm, int rank, unsigned int stripe)
{
    return (int32_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.acc_in_rank
                                 + (size_t) stripe * shm->layout.cacheline);
}

/* Whom `rank` signals in dissemination round `round`: (rank + 2^round) mod n. */
static inline int osc_newrma_barrier_partner(int rank, unsigned int round, int nranks)
{
    return (int) (((unsigned int) rank + (1u << round)) % (unsigned int) nranks);
}

/* A node barrier (osc_newrma_active_target.c runs it): its words in a
 * segment, and this process's place and state in it.  Two segments have
 * one: a one-node window's (module->barrier) and the node route's of a
 * window spanning nodes (osc_newrma_node_route.h), whose fence runs it as
 * its node phase. */
typedef struct {
    int64_t *arrivals;      /* flat: one arrival word per rank, on one line */
    char *flags;            /* dissemination: rank 0's round-0 flag */
    size_t flags_stride;    /* from one rank's flags to the next rank's */
    size_t line;            /* from one round's flag to the next round's */
    int rank;
    int size;
    bool flat;              /* the arrival words (size <= the agreed fence_flat_ranks) */
    unsigned int rounds;    /* dissemination rounds (osc_newrma_barrier_rounds) */
    int64_t episode;        /* episodes this process has arrived at */
    int next;               /* arrival words: the first rank not yet seen at this
                             * episode; flags: the round waited in (rounds: done) */
} osc_newrma_node_barrier_t;

/* `rank`'s flag of round `round` in barrier `b` (written by rank - 2^round only). */
static inline int64_t *osc_newrma_node_barrier_flag(const osc_newrma_node_barrier_t *b, int rank, unsigned int round)
{
    return (int64_t *) (b->flags + (size_t) rank * b->flags_stride + (size_t) round * b->line);
}

/* `rank`'s fence flag of dissemination round `round`: written by rank
 * (rank - 2^round) mod n only, read by `rank` only, on a line of its own. */
static inline int64_t *osc_newrma_shm_barrier_flag(const osc_newrma_shm_t *shm, int rank, unsigned int round)
{
    return (int64_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.barrier_in_rank
                        + (size_t) round * shm->layout.cacheline);
}

static inline osc_newrma_mailbox_t *osc_newrma_shm_mailbox(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_mailbox_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.assist_in_rank);
}

static inline osc_newrma_mailbox_presence_t *osc_newrma_shm_mailbox_presence(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_mailbox_presence_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.assist_in_rank
                                             + shm->layout.cacheline);
}

static inline osc_newrma_mailbox_answer_t *osc_newrma_shm_mailbox_answer(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_mailbox_answer_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.assist_in_rank
                                           + 2 * shm->layout.cacheline);
}

static inline osc_newrma_peer_dyn_t *osc_newrma_shm_dyn(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_peer_dyn_t *) (osc_newrma_shm_rank_block(shm, rank) + shm->layout.dyn_in_rank);
}

END_C_DECLS

#endif /* OSC_NEWRMA_SHM_H */
