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
 * osc/newrma: one-sided communication for Open MPI.
 *
 * The component's shared declarations: the component object with its MCA
 * parameters, the window module (whose first member is the window's own
 * function table), the epoch states of the design and the entry points each
 * source file provides.  See docs/architecture.md.
 */

#ifndef OSC_NEWRMA_H
#define OSC_NEWRMA_H

#include "ompi_config.h"

#include <sys/uio.h>

#include "opal/class/opal_free_list.h"
#include "opal/class/opal_hash_table.h"
#include "opal/class/opal_list.h"
#include "opal/mca/shmem/shmem.h"
#include "opal/util/output.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/group/group.h"
#include "ompi/mca/osc/osc.h"
#include "ompi/mca/osc/base/base.h"
#include "ompi/win/win.h"

#include "osc_newrma_compat.h"
#include "osc_newrma_shm.h"
#include "osc_newrma_wait.h"
#include "osc_newrma_dynamic.h"

/* Items of Open MPI's free lists pass from the thread that returns them to
 * the thread that gets them through opal_lifo: a memory fence, then a
 * compare-and-swap of the list head.  That orders the returner's writes
 * before the getter's, but ThreadSanitizer (configure
 * --enable-thread-sanitizer, contrib/thread-check-tests.sh) does not model
 * fences and would report every reuse of an element as a race.  These
 * wrappers state the hand-over to it; in other builds they are the plain
 * free-list calls. */
#if defined(__SANITIZE_THREAD__)                      /* GCC */
#define OSC_NEWRMA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)                    /* clang */
#define OSC_NEWRMA_TSAN 1
#endif
#endif
#if defined(OSC_NEWRMA_TSAN)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define OSC_NEWRMA_HANDOVER_ACQUIRE(item) __tsan_acquire((void *) (item))
#define OSC_NEWRMA_HANDOVER_RELEASE(item) __tsan_release((void *) (item))
#else
#define OSC_NEWRMA_HANDOVER_ACQUIRE(item) do { } while (0)
#define OSC_NEWRMA_HANDOVER_RELEASE(item) do { } while (0)
#endif

static inline opal_free_list_item_t *osc_newrma_free_list_get(opal_free_list_t *list)
{
    opal_free_list_item_t *item = opal_free_list_get(list);
    if (NULL != item) {
        OSC_NEWRMA_HANDOVER_ACQUIRE(item);
    }
    return item;
}

static inline void osc_newrma_free_list_return(opal_free_list_t *list, opal_free_list_item_t *item)
{
    OSC_NEWRMA_HANDOVER_RELEASE(item);
    opal_free_list_return(list, item);
}

BEGIN_C_DECLS

/* ------------------------------------------------------------------ */
/* Component                                                           */
/* ------------------------------------------------------------------ */

struct ompi_osc_newrma_component_t {
    ompi_osc_base_component_t super;

    /* MCA parameters (see osc_newrma_component.c for descriptions) */
    int priority;
    unsigned int slots;
    unsigned int op_pool_local;
    unsigned int op_pool_global;
    unsigned int target_pool_local;
    unsigned int target_pool_global;
    size_t piggyback_threshold;
    size_t single_op_threshold;
    unsigned int fifo_depth;
    size_t fifo_fragment_size;
    unsigned int lock_qnodes;
    unsigned int lock_quiet_after;
    unsigned int lock_barge_tries;       /* tries at a taken lock before a writer queues */
    unsigned int post_ring_slots;
    unsigned int post_box_origins;       /* PSCW posts to at most this many use the post box */
    unsigned int pscw_early_answers;     /* posts an empty epoch may answer before they come */
    unsigned int fence_flat_ranks;       /* fences of windows this small: an arrival word per rank */
    unsigned int acc_stripes;
    size_t acc_granularity;
    size_t cma_batch_bytes;
    size_t segment_cache_bytes;
    unsigned int assist_timeout;         /* us an origin waits for a target to take a request */
    bool assist_oversubscribed;          /* assist even when ranks outnumber cores */
    size_t assist_share_bytes;           /* contiguous puts/gets from this size: copied by both */
    size_t relay_piece_bytes;            /* groups of pieces this small on average: relayed (0: never) */
    char *backing_directory;
    char *fail_at;               /* testing: the single copy to fail (osc_newrma_single_copy.h) */
    uint64_t fail_injected;      /* copies failed or cut short by it (MPI_T pvar) */
    bool use_cma;
    bool thread_multiple;        /* MPI_THREAD_MULTIPLE granted (osc_newrma_thread_multiple) */
    bool force_remote;           /* every peer takes the active-message path */
    bool node_lock;              /* mixed windows: the node lock and its proxy (osc_newrma_node_route.h) */
    bool mixed_table;            /* mixed windows: the per-target table (osc_newrma_mixed.c) */
    bool node_fence;             /* mixed windows: the hierarchical fence (osc_newrma_node_route.h) */
    bool force_am;               /* create/dynamic windows on one node too (over FIFOs) */
    unsigned int fifo_node_ranks;   /* tests: pretend nodes of this many ranks (0: real nodes) */
    bool progress_thread;        /* serve AM packets from a thread of our own */
    size_t ucx_eager_limit;      /* payloads sent eagerly where UCX's rendezvous runs over TCP */
    unsigned int peer_cache;     /* remote window sizes cached per window */
    bool native_rma;             /* UCX RMA and atomics where they need no target CPU (osc_newrma_native_rma.h) */
    bool native_notify;          /* notified puts and accumulates by that route too (docs/notified-rma.md) */

    /* runtime state */
    size_t cacheline;            /* alignment unit of the shared segment */
    bool single_copy_usable;             /* process_vm_{read,write}v works here */
    opal_free_list_t targets;    /* target elements (osc_newrma_target_t) */

    /* active-message path (osc_newrma_am_*.c) */
    opal_mutex_t am_lock;        /* guards every piece of AM state (and the one-time choice of
                                  * the node policy's records, osc_newrma_node_policy.c) */
    opal_free_list_t ops;        /* global pool of operation elements */
    unsigned int targets_in_use; /* target elements taken from the global pool */
    opal_hash_table_t am_windows;   /* window id -> module, for incoming packets */
    uint32_t next_window_id;     /* no window id below it was agreed on by this process since the
                                  * last wrap (osc_newrma_am_window_id_agree) */
    unsigned int am_turns;       /* turns of progress taken (osc_newrma_am_progress_once): tells
                                  * an entry point whether it polled (osc_newrma_am_call_leave) */
    uint64_t packets_sent[16];   /* per osc_newrma_pkt_kind_t (MPI_T pvar) */
    uint64_t assisted_ops;       /* operations targets applied for us (MPI_T pvar) */
    uint64_t assist_withdrawn;   /* requests no target took in time (MPI_T pvar) */
    uint64_t assist_left;        /* requests MPI_Win_complete left to their targets (MPI_T pvar) */
    uint64_t ucx_rendezvous_received;  /* UCX messages that came by rendezvous (MPI_T pvar) */
    uint64_t route_node_ops;           /* operations of windows spanning nodes done by the node route (MPI_T pvar) */
    uint64_t route_am_ops;             /* operations queued on the active-message path (MPI_T pvar) */
    uint64_t route_node_locks;         /* node locks taken by node-local origins (MPI_T pvar) */
    uint64_t route_native_ops;         /* operations done by UCX RMA or atomics (MPI_T pvar) */
    uint64_t shared_copy_bytes;  /* bytes of our puts/gets that their targets copied (MPI_T pvar) */
    uint64_t relayed_bytes;      /* bytes of our puts/gets relayed through shared slots (MPI_T pvar) */
};
typedef struct ompi_osc_newrma_component_t ompi_osc_newrma_component_t;

OMPI_DECLSPEC extern ompi_osc_newrma_component_t mca_osc_newrma_component;

/* Did MPI_Init_thread grant MPI_THREAD_MULTIPLE?  As the osc framework told
 * the component at MPI_Init, not ompi_mpi_thread_multiple: Open MPI 4.1's
 * MPI_T_init_thread overwrites that with the level MPI_T is asked for, so
 * after MPI_T_init_thread(MPI_THREAD_SINGLE) every new window would share
 * its per-window state (the single-copy batch, the mailbox hand-off)
 * among threads without a lock. */
static inline bool osc_newrma_thread_multiple(void)
{
    return mca_osc_newrma_component.thread_multiple;
}

/* ------------------------------------------------------------------ */
/* Epoch states (mpich-new-rma-design.txt, "Epoch States")             */
/* ------------------------------------------------------------------ */

/* Window (access-epoch) states; which call is legal in which, and where it
 * leads: the epoch machine's table (osc_newrma_epoch.c).  The order
 * matters: every state at or above NEWRMA_WIN_FENCE_GRANTED lets an
 * operation through to any target (osc_newrma_epoch_access); the ones
 * below need a closer look (PER_TARGET: locked targets only, PSCW_GRANTED:
 * group members only, PSCW_ISSUED: group members once their posts are
 * seen, FENCE_ISSUED: the fence's barrier must complete first). */
typedef enum {
    NEWRMA_WIN_NONE = 0,
    NEWRMA_WIN_PER_TARGET,
    NEWRMA_WIN_PSCW_ISSUED,
    NEWRMA_WIN_PSCW_GRANTED,
    NEWRMA_WIN_FENCE_ISSUED,
    NEWRMA_WIN_FENCE_GRANTED,
    NEWRMA_WIN_LOCK_ALL_CALLED,
    NEWRMA_WIN_LOCK_ALL_ISSUED,
    NEWRMA_WIN_LOCK_ALL_GRANTED,
} osc_newrma_win_state_t;

/* Per-target lock states, meaningful in PER_TARGET and LOCK_ALL_CALLED. */
typedef enum {
    NEWRMA_LOCK_CALLED = 0,
    NEWRMA_LOCK_ISSUED,
    NEWRMA_LOCK_GRANTED,
} osc_newrma_lock_state_t;

/* One passive-target lock a process holds on an on-node target: what
 * unlock needs to give it back.  in_use false: the record is free. */
typedef struct osc_newrma_lock_record_t {
    bool in_use;
    bool nocheck;                /* MPI_MODE_NOCHECK: no lock was taken */
    bool exclusive;
    /* exclusive, and no other thread of this process can issue operations
     * (no MPI_THREAD_MULTIPLE): nobody else reaches the target's window by
     * RMA, so accumulates there need no stripe lock (osc_newrma_alone_at) */
    bool alone;
    int rank;
    int ticket;                  /* osc_newrma_lock_acquire's, for the release */
    /* the target's lock word, kept by the acquire: the release does not
     * compute its place in the segment again (NULL with NOCHECK) */
    osc_newrma_lock_word_t *word;
} osc_newrma_lock_record_t;

/* A target element: what the origin knows about one target it is in a
 * per-target epoch with (design, "Data structures" (2)).  Kept in the
 * window's slot array; allocated from the component's free list. */
struct osc_newrma_target_t {
    opal_free_list_item_t super;
    /* active-message path: operation elements not issued yet (the operation
     * table's per-target list; empty whenever the element is reset) */
    opal_list_t pending;
    /* from here to the end: what a reset zeroes (osc_newrma_op_table.c) */
    int rank;
    osc_newrma_lock_state_t lock_state;
    int lock_type;               /* MPI_LOCK_SHARED / MPI_LOCK_EXCLUSIVE */
    int lock_assert;             /* MPI_MODE_NOCHECK or 0 */
    int lock_ticket;             /* what the lock holder gives back at unlock (osc_newrma_lock.c) */

    /* active-message path: the operation table's per-target part */
    unsigned int npending;
    uint32_t issued;             /* operations sent since the last synchronization packet */
    int32_t waiting;             /* acknowledgements and replies still to come */
    int32_t sending;             /* sends not locally complete yet */
    int32_t acks_pending;        /* synchronizations sent, not answered yet */
    int status;                  /* first error the target reported */
    bool from_window_pool;
    bool urgent;                 /* a queued operation must not wait for a synchronization */
    bool denied;                 /* a tried lock_all lock was refused */
    bool tried;                  /* the lock in flight was only tried (answered at once) */
    uint64_t lock_seq;           /* MPI_Win_lock call order (lazy locks keep it) */
    bool window_locked;          /* lock_all's window protocol holds this target's lock */
    bool node_locked;            /* we hold this node peer's node lock (osc_newrma_node_route.h) */
    int32_t busy;                /* threads waiting on this element (not reclaimable) */
    int native_lock;             /* native route: the lock word held (MPI_LOCK_SHARED/EXCLUSIVE) or 0 */
    bool native_unlocking;       /* native route: release the lock word once the operations are done */
    uint32_t native_issued;      /* native route: puts and gets not flushed yet */
};
typedef struct osc_newrma_target_t osc_newrma_target_t;
OBJ_CLASS_DECLARATION(osc_newrma_target_t);

/* ------------------------------------------------------------------ */
/* Window module                                                       */
/* ------------------------------------------------------------------ */

/* accumulate_ordering bits */
enum {
    NEWRMA_ACC_ORDER_RAR = 1,
    NEWRMA_ACC_ORDER_RAW = 2,
    NEWRMA_ACC_ORDER_WAR = 4,
    NEWRMA_ACC_ORDER_WAW = 8,
    NEWRMA_ACC_ORDER_ALL = 15,
};

/* accumulate_ops values */
typedef enum {
    NEWRMA_ACC_OPS_SAME_OP_NO_OP = 0,
    NEWRMA_ACC_OPS_SAME_OP,
} osc_newrma_acc_ops_t;

/* How a window reaches its targets' memory; picks the function table. */
typedef enum {
    NEWRMA_PATH_DIRECT = 0,      /* every window buffer is in the node segment */
    NEWRMA_PATH_USERMEM,             /* user memory: single-copy process_vm_*v */
    NEWRMA_PATH_AM,              /* active messages (peers off this node, or forced) */
} osc_newrma_path_t;

/* The last group given to start (or post) and its sorted communicator
 * ranks.  Applications repeat the same group epoch after epoch; the group is
 * retained, so a pointer match means the same (immutable) group and the
 * translation is skipped. */
typedef struct {
    struct ompi_group_t *group;
    int *ranks;
    size_t count;
} osc_newrma_group_cache_t;

/* A put, get or accumulate handed to a target's mailbox and not completed
 * yet (osc_newrma_mailbox.c; at most one per window, single-threaded
 * windows). */
typedef struct {
    bool active;
    uint8_t kind;                        /* NEWRMA_MAILBOX_PUT / _GET / _ACC */
    int target;
    uint64_t mine;                       /* the request's sequence */
    uint64_t stamp;                      /* the presence stamp it was posted on */
    void *local;                         /* a get's origin buffer */
    uint64_t taddr;
    size_t bytes;
    /* a put's or accumulate's data as it was at the call: if the request is
     * withdrawn, the single-copy path sends this, not whatever the caller's
     * buffer holds by then (programs reuse it, and other components copy
     * small origin data at the call too) */
    _Alignas(16) uint8_t data[64];
    /* an accumulate, as the single-copy path needs it if withdrawn */
    struct ompi_op_t *op;
    struct ompi_datatype_t *dt;
    int count;
    ptrdiff_t disp;
} osc_newrma_mailbox_pending_t;

/* operations one single-copy batch holds (each a local and a remote iovec) */
#define NEWRMA_USERMEM_BATCH 64

/* How an origin saw a target's post (osc_newrma_active_target.c), which tells
 * MPI_Win_complete how to answer it: the target's post box slot `slot` at
 * box sequence `seq`, or a notice in our ring (NEWRMA_POST_RING: answered
 * through the target's completion counter); NEWRMA_POST_EARLY: an empty
 * epoch already answered the target's next post before it came. */
enum { NEWRMA_POST_EARLY = -3, NEWRMA_POST_UNSEEN = -2, NEWRMA_POST_RING = -1 };
typedef struct {
    int32_t slot;
    uint32_t seq;
} osc_newrma_post_match_t;

/* A target's record of posts an origin answered before they came, taken
 * out of its post box when it was closed (osc_newrma_active_target.c) */
typedef struct {
    int origin;
    uint32_t posts;
} osc_newrma_early_answers_t;

struct ompi_osc_newrma_module_t {
    /* The window's function table.  Copied at creation from the table that
     * fits this window (osc_newrma_module.c); never changed afterwards. */
    ompi_osc_base_module_t super;

    struct ompi_win_t *win;
    /* private duplicate of the user's, on the active-message path only: the
     * node path synchronizes through its segment and keeps no communicator
     * (a duplicate costs collectives at creation and per-peer PML state) */
    struct ompi_communicator_t *comm;
    struct ompi_group_t *group;          /* the window's processes (retained) */
    int rank;
    int size;
    int flavor;
    osc_newrma_path_t path;

    /* the node's shared segment of this window and where things are in it */
    osc_newrma_shm_t shm;

    /* dynamic windows: the regions this process has attached */
    osc_newrma_dyn_table_t dyn;

    bool created;                        /* creation finished (info keys fixed) */

    /* info keys, as honored (osc_newrma_info.c) */
    bool no_locks;
    bool same_size;
    bool same_disp_unit;
    bool alloc_shared_noncontig;
    /* what shapes the segment and the node path's protocols, as every
     * process agreed at creation (osc_newrma_shape_agree): the layout and
     * the fence algorithm come from it, never from this process's MCA values */
    osc_newrma_shape_t shape;
    int acc_ordering;                    /* NEWRMA_ACC_ORDER_* bits */
    /* single-copy puts/gets not issued yet (osc_newrma_usermem.c): contiguous,
     * at most cma_batch_bytes each, one target and one direction; issued as
     * one relay (a target inside MPI, small pieces: osc_newrma_node_policy_relay_pieces) or one
     * process_vm_writev/readv when the batch is full or changes target
     * or direction, and by every call that completes operations.  Its 2 KiB
     * of iovecs only in windows on the single-copy path (NULL elsewhere). */
    size_t cma_batch_bytes;              /* 0: no batching */
    struct osc_newrma_usermem_batch_t {
        int target;
        bool write;
        unsigned int count;
        size_t bytes;                    /* in all */
        struct iovec local[NEWRMA_USERMEM_BATCH], remote[NEWRMA_USERMEM_BATCH];
    } *usermem_batch;
    /* the user-memory path's mechanisms: limits set by the node policy
     * (osc_newrma_node_policy.c), state of the mailbox (osc_newrma_mailbox.c) */
    size_t assist_max_bytes;             /* payload this process may ask for; 0: it asks nothing */
    size_t assist_serve_bytes;           /* payload of our own mailbox; 0: none (nothing to serve) */
    bool assist_attended;                /* ask targets that look present (else only PSCW hand-offs) */
    uint64_t assist_miss_stamp;          /* a presence stamp that did not answer (atomic) */
    uint64_t assist_box_hint;            /* the state the mailbox of assist_box_hint_target was
                                          * left in by our last claim (atomic; a guess, see
                                          * assist_claim: a torn pair only fails a CAS) */
    int32_t assist_box_hint_target;      /* 1 + that target, 0: none (atomic) */
    bool assist_answer_busy;             /* a thread waits for an answer on our line (atomic) */
    uint64_t assist_trusted;             /* target << 32 | answers still trusted without reading
                                          * the clock (atomic; see target_present) */
    size_t assist_move_bytes;            /* puts/gets up to this size may be handed over (0: none) */
    size_t assist_share_bytes;           /* puts/gets from this size may be shared (SIZE_MAX: none) */
    size_t assist_relay_piece_bytes;     /* groups of pieces this small on average are relayed (0: none) */
    unsigned int assist_relay_min_pieces; /* and only groups of this many pieces or runs (or PSCW granted) */
    osc_newrma_mailbox_pending_t assist_pending;
    uint64_t assist_stamp_written;       /* target side: the last stamp we wrote */
    size_t acc_granularity;              /* bytes one accumulate lock stripe covers */
    char acc_granularity_text[24];       /* the same, as the info callback reports it */
    size_t memory_alignment;             /* of allocated window memory: a power of two, a cache
                                          * line at least (mpi_minimum_memory_alignment) */
    unsigned int acc_shift;              /* log2 of that rounded up: a stripe is offset >> acc_shift */
    osc_newrma_acc_ops_t acc_ops;

    /* epoch state (the epoch machine, osc_newrma_epoch.c, moves it) */
    osc_newrma_win_state_t state;
    bool fence_epoch_used;               /* an RMA call since the last fence */
    int lock_all_assert;
    unsigned int lock_count;             /* targets locked in PER_TARGET (kept by the machine) */
    /* direct table: the lock on the first target of a per-target epoch is
     * recorded here, not in a target element (osc_newrma_sync.c) */
    osc_newrma_lock_record_t first_lock;
    unsigned int num_slots;
    opal_list_t *slots;                  /* target elements, rank % num_slots; NULL before the first */
    osc_newrma_target_t *spare_target;   /* the last element removed, kept for the next (NULL: none) */

    /* fence: the node barrier in the window's segment (node path) */
    osc_newrma_node_barrier_t barrier;

    /* passive target: which of this process's queue nodes are in use */
    uint64_t qnodes_busy;
    unsigned int announced_locks;        /* exclusive locks announced since our last lock_all */

    /* PSCW: the start group of the current access epoch, as sorted ranks of
     * the window's communicator (O(group), freed at epoch end); post notices
     * taken from the ring but not matched by a start yet; completions the
     * exposure epochs so far expect */
    const int *start_ranks;              /* borrowed from start_groups */
    size_t start_count;
    osc_newrma_post_match_t *start_matches;   /* per start rank: where its post was seen */
    size_t start_matches_capacity;
    osc_newrma_group_cache_t start_groups, post_groups;
    bool exposure_active;                /* an exposure epoch (post .. wait/test) is open */
    bool post_box_current;               /* our post box lists post_groups' ranks, every slot done */
    int *posts_seen;
    size_t posts_seen_count;
    size_t posts_seen_capacity;
    int64_t post_head;                   /* next ticket of our post ring to take (owner only) */
    int64_t post_head_cell;              /* its cell: post_head % ring slots */
    int64_t post_head_empty;             /* that cell's value while the ticket is not posted yet */
    int64_t completes_expected;
    /* origins that answered our next posts before they came (empty
     * epochs), as taken out of the box when it was closed: each record
     * counts for that many of our next posts to its origin */
    osc_newrma_early_answers_t *early_origins;
    size_t early_count;
    size_t early_capacity;

    opal_mutex_t lock;                   /* serializes epoch changes */
    opal_mutex_t grant_lock;             /* one thread awaits a started epoch's posts */

    /* active-message path (osc_newrma_am_*.c), all under the AM lock */
    uint32_t am_id;                      /* window id in packets, agreed at creation */
    bool am_registered;                  /* am_id is this window's in the component's am_windows */
    char *am_base;                       /* this process's window memory */
    void *am_owned;                      /* ... when the window allocated it */
    uint64_t am_size;
    int am_disp_unit;
    opal_free_list_t am_ops;             /* window-local pool of operation elements */
    unsigned int am_targets_local;       /* target elements taken from the window's share */
    struct osc_newrma_peer_cache_t *am_peers;   /* remote sizes, direct-mapped */
    uint64_t am_info_replies;            /* answers to INFO so far (waiters watch it) */
    /* libmpix_newrma's counters of this process (the notified-RMA message
     * path, osc_newrma_notify.c): incremented by the packet handler */
    int64_t *notify_counters;
    int notify_count;
    /* ... and the companion window they live in, when newrma serves it:
     * the native route increments a target's counter there by UCX atomics */
    struct ompi_osc_newrma_module_t *notify_companion;
    uint64_t am_lock_calls;              /* MPI_Win_lock calls so far (lock order) */
    bool am_lock_all_window;             /* lock_all uses the window protocol */
    int am_window_answers;               /* its grants / acknowledgements so far */
    int am_window_refusals;              /* its tried locks refused so far */
    int am_lock_shared;                  /* target side: shared holders */
    bool am_lock_excl;                   /* target side: exclusive holder */
    opal_list_t am_lock_waiters;         /* target side: queued lock requests */
    opal_hash_table_t am_origins;        /* target side: origins with work in flight */
    int64_t am_dones;                    /* target side: RMA_DONEs counted (PSCW) */
    struct osc_newrma_fifo_t *am_fifo;   /* node-local FIFOs (osc_newrma_transport_fifo.c), or NULL */
    struct osc_newrma_node_route_t *am_node;   /* node-local peers' memory (osc_newrma_node_route.c), or NULL */
    struct osc_newrma_native_t *native;   /* UCX RMA to every peer (osc_newrma_native_rma.c), or NULL */
    struct osc_newrma_route_t *routes;   /* per target of a mixed window (osc_newrma_mixed.c), or NULL */
};
typedef struct ompi_osc_newrma_module_t ompi_osc_newrma_module_t;

/* Where `key` is in the ascending array `sorted` of `n` ranks: its index,
 * or -1.  O(log n): start groups and a node's window ranks. */
static inline int osc_newrma_rank_index(const int *sorted, size_t n, int key)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] == key) {
            return (int) mid;
        }
        if (sorted[mid] < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -1;
}

static inline ompi_osc_newrma_module_t *osc_newrma_module(struct ompi_win_t *win)
{
    return (ompi_osc_newrma_module_t *) win->w_osc_module;
}

/* Traces on the osc framework's output stream, as Open MPI's other osc
 * components do: `--mca osc_base_verbose N` shows warnings from 20
 * (MCA_BASE_VERBOSE_WARN), window creation and the paths chosen from 40
 * (_INFO), every epoch and operation from 60 (_TRACE), segment layouts and
 * protocol details from 80 (_DEBUG), single packets at 100 (_MAX).  The
 * level is compared in line, so a trace point costs a load and a branch
 * when it prints nothing. */
#define NEWRMA_VERBOSE(level, ...)                                                              \
    do {                                                                                        \
        if (OPAL_UNLIKELY(ompi_osc_base_framework.framework_verbose >= (level))) {              \
            opal_output(ompi_osc_base_framework.framework_output, "osc/newrma: " __VA_ARGS__);  \
        }                                                                                       \
    } while (0)

/* One trace line per RMA operation, at MCA_BASE_VERBOSE_TRACE. */
#define NEWRMA_TRACE_OP(module, what, target, disp, count, dt)                                  \
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_TRACE, "%s: window %p \"%s\", rank %d -> %d, disp %ld, %d x %s", \
                   (what), (void *) (module)->win, (module)->win->w_name, (module)->rank, (target),   \
                   (long) (disp), (count), (dt)->name)

/* ------------------------------------------------------------------ */
/* Entry points by file                                                */
/* ------------------------------------------------------------------ */

/* osc_newrma_module.c: creation (from component select) and teardown */
int ompi_osc_newrma_window_create(struct ompi_win_t *win, void **base, size_t size,
                                  int disp_unit, struct ompi_communicator_t *comm,
                                  struct opal_info_t *info, int flavor, int *model);
int ompi_osc_newrma_free(struct ompi_win_t *win);
int ompi_osc_newrma_shared_query(struct ompi_win_t *win, int rank, size_t *size,
                                 int *disp_unit, void *baseptr);
int ompi_osc_newrma_attach(struct ompi_win_t *win, void *base, size_t len);
int ompi_osc_newrma_detach(struct ompi_win_t *win, const void *base);

/* osc_newrma_info.c: the info keys newrma honors and returns */
int osc_newrma_info_subscribe(ompi_osc_newrma_module_t *module);
int osc_newrma_info_set_granularity(ompi_osc_newrma_module_t *module);
int osc_newrma_info_read_alignment(ompi_osc_newrma_module_t *module);

/* osc_newrma_sync.c: synchronization of the node paths (the epoch machine
 * that decides what is legal: osc_newrma_epoch.h) */
int ompi_osc_newrma_fence(int assert, struct ompi_win_t *win);
int ompi_osc_newrma_start(struct ompi_group_t *group, int assert, struct ompi_win_t *win);
int ompi_osc_newrma_complete(struct ompi_win_t *win);
/* MPI_Win_complete in two steps, for a table that has work between them
 * (answers owed after the signal, still inside the epoch): signal the
 * targets (OMPI_ERR_RMA_SYNC outside a PSCW access epoch), then close. */
int osc_newrma_complete_signal_epoch(ompi_osc_newrma_module_t *module);
void osc_newrma_complete_close_epoch(ompi_osc_newrma_module_t *module);
int ompi_osc_newrma_post(struct ompi_group_t *group, int assert, struct ompi_win_t *win);
int ompi_osc_newrma_wait(struct ompi_win_t *win);
int ompi_osc_newrma_test(struct ompi_win_t *win, int *flag);
int ompi_osc_newrma_lock(int lock_type, int target, int assert, struct ompi_win_t *win);
int ompi_osc_newrma_unlock(int target, struct ompi_win_t *win);
int ompi_osc_newrma_lock_all(int assert, struct ompi_win_t *win);
int ompi_osc_newrma_unlock_all(struct ompi_win_t *win);
int ompi_osc_newrma_sync(struct ompi_win_t *win);
int ompi_osc_newrma_flush(int target, struct ompi_win_t *win);
int ompi_osc_newrma_flush_all(struct ompi_win_t *win);
int ompi_osc_newrma_flush_local(int target, struct ompi_win_t *win);
int ompi_osc_newrma_flush_local_all(struct ompi_win_t *win);

/* Is `target` the one the epoch's first lock (in the module) holds? */
static inline bool osc_newrma_first_lock_is(const ompi_osc_newrma_module_t *module, int target)
{
    return module->first_lock.in_use && module->first_lock.rank == target;
}

/* Does this process alone reach target's window by RMA now (an exclusive
 * lock, see osc_newrma_lock_record_t.alone)?  MPI makes accumulates atomic
 * only against other accumulates, and under an exclusive lock there are
 * none from anyone else.  (Only the epoch's first lock is looked at: the
 * lock almost every program holds alone.) */
static inline bool osc_newrma_alone_at(const ompi_osc_newrma_module_t *module, int target)
{
    return module->first_lock.alone && module->first_lock.rank == target;
}

/* MPI_Win_complete's legality check and wait for the posts (answering
 * some early if the epoch issued no operation) */
int osc_newrma_complete_grant(ompi_osc_newrma_module_t *module);

/* PSCW groups, shared by both paths (osc_newrma_sync.c) */
int osc_newrma_group_cache_fill(ompi_osc_newrma_module_t *module, osc_newrma_group_cache_t *cache,
                                struct ompi_group_t *group);

/* The sorted communicator ranks of `group`, borrowed from `cache` (valid
 * until the next call with the same cache).  In line: every PSCW epoch
 * asks, and almost every one hits. */
static inline int osc_newrma_group_ranks(ompi_osc_newrma_module_t *module, osc_newrma_group_cache_t *cache,
                                         struct ompi_group_t *group, const int **ranks_out, size_t *count_out)
{
    if (OPAL_UNLIKELY(group != cache->group)) {
        int ret = osc_newrma_group_cache_fill(module, cache, group);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
    }
    *ranks_out = cache->ranks;
    *count_out = cache->count;
    return OMPI_SUCCESS;
}
void osc_newrma_group_cache_release(osc_newrma_group_cache_t *cache);
void osc_newrma_start_group_clear(ompi_osc_newrma_module_t *module);

/* qsort/bsearch comparison of ints */
int osc_newrma_int_compare(const void *a, const void *b);

/* osc_newrma_op_table.c: the slot array of target elements (made with the first one) */
void osc_newrma_slots_fini(ompi_osc_newrma_module_t *module);
osc_newrma_target_t *osc_newrma_target_find(ompi_osc_newrma_module_t *module, int rank);
osc_newrma_target_t *osc_newrma_target_add(ompi_osc_newrma_module_t *module, int rank);
void osc_newrma_target_remove(ompi_osc_newrma_module_t *module, osc_newrma_target_t *target);

/* the node path's function tables (osc_newrma_ops.c, osc_newrma_usermem.c) */
extern const ompi_osc_base_module_t ompi_osc_newrma_direct_table;
extern const ompi_osc_base_module_t ompi_osc_newrma_usermem_table;
/* osc_newrma_usermem.c: complete the put or get handed to a target and
 * issue the single-copy batch (what every completing call does first) */
int osc_newrma_usermem_complete_pending(ompi_osc_newrma_module_t *module);

/* osc_newrma_notify.c: the entry point of libmpix_newrma (notified RMA):
 * the info value that publishes it on every window */
char *osc_newrma_notify_entry_value(void);

END_C_DECLS

/* the epoch machine's in-line checks need the window module above */
#include "osc_newrma_epoch.h"

#endif /* OSC_NEWRMA_H */
