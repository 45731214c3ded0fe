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
 * osc/newrma: the active-message path (mpich-new-rma-design.txt): packets,
 * operation elements, and the entry points of its three files:
 *
 *   osc_newrma_am_ops.c     origin side: operations, the operation table's
 *                           queues, element pools, issuing and completion
 *   osc_newrma_am_sync.c    origin side: the epoch state machine over messages
 *   osc_newrma_am_target.c  target side: packet dispatch, the lock queue,
 *                           applying operations, replies; sending and
 *                           progress over the transports
 *
 * Packets travel through the transports of osc_newrma_transport.h
 * (loopback, node FIFOs, UCX), which these files never name.
 *
 * A window takes this path when one of its peers is not on this node (or
 * every peer is treated as remote: osc_newrma_force_remote).  Every piece of
 * AM state -- origin and target side, all windows -- is guarded by the
 * component's AM lock, which packet handlers also run under, so a handler and
 * an application thread never see each other half-way.  The packet table is
 * in docs/am-protocol.md.
 */

#ifndef OSC_NEWRMA_AM_H
#define OSC_NEWRMA_AM_H

#include "ompi_config.h"

#include <stdint.h>

#include "ompi/request/request.h"

#include "osc_newrma.h"
#include "osc_newrma_transport.h"
#include "osc_newrma_notify_entry.h"

BEGIN_C_DECLS

/* ------------------------------------------------------------------ */
/* packets                                                             */
/* ------------------------------------------------------------------ */

typedef enum {
    /* origin -> target: operations */
    NEWRMA_PKT_PUT = 0,
    NEWRMA_PKT_GET,
    NEWRMA_PKT_ACC,
    NEWRMA_PKT_GET_ACC,          /* also fetch_and_op */
    NEWRMA_PKT_CAS,
    /* origin -> target: synchronization */
    NEWRMA_PKT_LOCK,
    NEWRMA_PKT_SYNC,             /* UNLOCK / FLUSH / DONE with no operation to ride on */
    NEWRMA_PKT_INFO,             /* what is your window's size and disp_unit? */
    /* target -> origin */
    NEWRMA_PKT_POST,
    NEWRMA_PKT_GRANT,
    NEWRMA_PKT_ACK,
    NEWRMA_PKT_REPLY,            /* data of a get / get_accumulate / compare-and-swap */
    NEWRMA_PKT_INFO_REPLY,
    NEWRMA_PKT_KINDS
} osc_newrma_pkt_kind_t;

/* flags: what rides on a packet */
enum {
    NEWRMA_PF_LOCK_SHARED = 0x01,    /* take a shared lock first (single-op packet) */
    NEWRMA_PF_LOCK_EXCL = 0x02,      /* take an exclusive lock first */
    NEWRMA_PF_UNLOCK = 0x04,         /* release the lock once `count` operations are done */
    NEWRMA_PF_FLUSH = 0x08,          /* acknowledge once `count` operations are done */
    NEWRMA_PF_DONE = 0x10,           /* RMA_DONE (PSCW complete): counted once `count` are done */
    NEWRMA_PF_ACK = 0x20,            /* (reply) this reply is also the acknowledgement */
    NEWRMA_PF_TDESC = 0x40,          /* payload starts with the target datatype's description */
    NEWRMA_PF_TRY = 0x80,            /* LOCK: grant now or refuse, do not queue */
};
#define NEWRMA_PF_SYNC (NEWRMA_PF_UNLOCK | NEWRMA_PF_FLUSH | NEWRMA_PF_DONE)
#define NEWRMA_PF_LOCK (NEWRMA_PF_LOCK_SHARED | NEWRMA_PF_LOCK_EXCL)

typedef struct {
    uint8_t kind;                /* osc_newrma_pkt_kind_t */
    uint8_t flags;               /* NEWRMA_PF_* */
    uint16_t op;                 /* accumulate op (Fortran index) */
    int32_t sender;              /* sender's rank in the window */
    uint32_t win;                /* window id, agreed at creation (osc_newrma_am_window_id_agree) */
    uint32_t count;              /* with a SYNC flag: operations of the segment, this one included */
    int64_t disp;                /* target displacement (INFO_REPLY: disp_unit) */
    int64_t gap;                 /* contiguous target: first byte after disp x disp_unit;
                                    INFO_REPLY: window size */
    uint64_t cookie;             /* origin's operation element, echoed in the reply */
    int32_t tcount;              /* target count (with TDESC) */
    int32_t status;              /* replies: OMPI_SUCCESS or an MPI error class */
    uint32_t desc_len;           /* bytes of datatype description at the payload's start */
    uint32_t notify;             /* operations: notification counter index + 1 to increment
                                    once applied (libmpix_newrma); 0: none */
} osc_newrma_am_hdr_t;

/* ------------------------------------------------------------------ */
/* operation elements (design: "op elements")                          */
/* ------------------------------------------------------------------ */

struct osc_newrma_am_request_t;

#define NEWRMA_OP_INLINE 64        /* small payloads are copied into the element */

struct osc_newrma_op_t {
    opal_free_list_item_t super;           /* on its target element's pending list */
    osc_newrma_am_hdr_t hdr;
    const void *payload;                   /* what follows the header */
    size_t payload_len;
    void *owned;                           /* malloc'd payload (packed data, description) */
    struct ompi_osc_newrma_module_t *module;
    osc_newrma_target_t *target;
    /* fetching operations: where the reply's data goes */
    void *result_addr;
    int result_count;
    struct ompi_datatype_t *result_dt;
    struct osc_newrma_am_request_t *request;  /* request-based operation, or NULL */
    uint8_t awaiting;                      /* NEWRMA_OPW_* still to come */
    bool from_window_pool;
    char inline_data[NEWRMA_OP_INLINE];
};
typedef struct osc_newrma_op_t osc_newrma_op_t;
OBJ_CLASS_DECLARATION(osc_newrma_op_t);

enum {
    NEWRMA_OPW_SEND = 1,         /* local completion of the send */
    NEWRMA_OPW_REPLY = 2,        /* the reply's data */
};

/* Requests of MPI_Rput & co. on this path. */
struct osc_newrma_am_request_t {
    ompi_request_t super;
    int pending;                 /* operations still to complete it (1) */
};
typedef struct osc_newrma_am_request_t osc_newrma_am_request_t;
OBJ_CLASS_DECLARATION(osc_newrma_am_request_t);

/* ------------------------------------------------------------------ */
/* per-window AM state                                                 */
/* ------------------------------------------------------------------ */

/* Bounded cache of remote window sizes (for range checks at the origin). */
struct osc_newrma_peer_cache_t {
    int rank;                    /* -1: empty */
    int disp_unit;
    uint64_t size;
};
typedef struct osc_newrma_peer_cache_t osc_newrma_peer_cache_t;

/* ------------------------------------------------------------------ */
/* entry points                                                        */
/* ------------------------------------------------------------------ */

static inline void osc_newrma_am_enter(void) { opal_mutex_lock(&mca_osc_newrma_component.am_lock); }
static inline void osc_newrma_am_leave(void) { opal_mutex_unlock(&mca_osc_newrma_component.am_lock); }

/* window life cycle (osc_newrma_am_target.c) */
int osc_newrma_am_window_init(struct ompi_osc_newrma_module_t *module, void **base, size_t size,
                              int disp_unit);
/* Window ids name a window in packets.  Each process proposes the lowest id
 * not below its next_window_id that none of its windows holds
 * (osc_newrma_am_window_id_propose); creation takes the largest proposal
 * (a collective of the caller's) and osc_newrma_am_window_id_agree makes it
 * the window's on every process, or agrees on another where a window that
 * another thread created meanwhile took it on some process.  Collective over
 * module->comm; every process has the window registered for incoming
 * packets on return, so it is also creation's closing barrier. */
uint32_t osc_newrma_am_window_id_propose(void);
int osc_newrma_am_window_id_agree(struct ompi_osc_newrma_module_t *module, uint32_t id);
/* Before the barrier of MPI_Win_free: every packet this process holds for
 * the window handed over (AM lock not held). */
int osc_newrma_am_window_quiesce(struct ompi_osc_newrma_module_t *module);
void osc_newrma_am_window_fini(struct ompi_osc_newrma_module_t *module);

/* osc_newrma_am_target.c: the packet layer.  Send through the transport
 * that reaches `peer` (to ourselves: queued and run from progress, never
 * inside the sender's call); the transports' send convention: 1 done
 * already, 0 `done` called later, or an error code. */
int osc_newrma_am_send(struct ompi_osc_newrma_module_t *module, int peer, const osc_newrma_am_hdr_t *hdr,
                       const void *payload, size_t len, osc_newrma_transport_done_fn_t done, void *arg);
void osc_newrma_am_fini(void);
/* Incoming packets: osc_newrma_am_receive (osc_newrma_transport.h). */
/* Send a packet the target side builds (copied: the caller may reuse it). */
int osc_newrma_am_send_control(struct ompi_osc_newrma_module_t *module, int peer, const osc_newrma_am_hdr_t *hdr,
                               const void *payload, size_t len);
/* One round of progress from a wait loop (or from an entry point that did
 * not wait, osc_newrma_am_call_leave): every transport, and every few
 * rounds opal_progress with the AM lock released (held on entry and exit). */
void osc_newrma_am_progress_once(void);

/* The poll of an entry point that did not wait (AM lock held). */
void osc_newrma_am_call_poll(void);

/* Progress in every call.  A process may wait for its own window to change
 * by calling, in a loop, entry points that need not wait (MPI_Win_sync, a
 * flush with nothing to complete, MPI_Win_test, an unlock with nothing to
 * send, ...) and no other MPI function, so nothing else polls: those calls
 * serve incoming packets themselves, or the other ranks' operations never
 * arrive.  Every synchronization entry point (osc_newrma_am_sync.c; not
 * fence, whose barrier runs opal_progress) is bracketed by these two: one
 * turn of progress on the way out unless the call took one already (a
 * call that waited has polled; a call the epoch machine refuses leaves at
 * once): the polled transports every call, a whole turn every few calls
 * (osc_newrma_am_call_poll).  The turn releases the lock around
 * opal_progress: nothing may be held across the leave. */
static inline unsigned int osc_newrma_am_call_enter(void)
{
    osc_newrma_am_enter();
    return mca_osc_newrma_component.am_turns;
}

static inline void osc_newrma_am_call_leave(unsigned int turns_at_entry)
{
    if (turns_at_entry == mca_osc_newrma_component.am_turns) {
        osc_newrma_am_call_poll();
    }
    osc_newrma_am_leave();
}

/* osc_newrma_am_ops.c: origin side */
int osc_newrma_am_pools_init(struct ompi_osc_newrma_module_t *module);
void osc_newrma_am_pools_fini(struct ompi_osc_newrma_module_t *module);
osc_newrma_target_t *osc_newrma_am_target_get(struct ompi_osc_newrma_module_t *module, int rank);
void osc_newrma_am_target_release(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *target);
int osc_newrma_am_send_lock(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *target);
int osc_newrma_am_target_complete(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *target,
                                  uint8_t sync_flags, bool wait);
void osc_newrma_am_granted(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *target);
void osc_newrma_am_refused(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *target);
int osc_newrma_am_lock_order(struct ompi_osc_newrma_module_t *module, osc_newrma_target_t *target);
void osc_newrma_am_reply_arrived(const osc_newrma_am_hdr_t *hdr, void *data, size_t len,
                                 const osc_newrma_large_payload_t *large);
void osc_newrma_am_ack_arrived(struct ompi_osc_newrma_module_t *module, const osc_newrma_am_hdr_t *hdr);
extern const ompi_osc_base_module_t ompi_osc_newrma_am_table;
/* A notified operation (osc_newrma_notify.c): sent as one packet whose
 * header carries counter `idx`, handed to the transport before the call
 * returns; a get returns with its data. */
int osc_newrma_am_notified(struct ompi_osc_newrma_module_t *module, const osc_newrma_notify_op_t *op, int idx);

/* osc_newrma_am_sync.c: origin side epochs */
int osc_newrma_am_fence(int assert, struct ompi_win_t *win);
int osc_newrma_am_start(struct ompi_group_t *group, int assert, struct ompi_win_t *win);
int osc_newrma_am_complete(struct ompi_win_t *win);
int osc_newrma_am_post(struct ompi_group_t *group, int assert, struct ompi_win_t *win);
int osc_newrma_am_wait(struct ompi_win_t *win);
int osc_newrma_am_test(struct ompi_win_t *win, int *flag);
int osc_newrma_am_lock_target(int lock_type, int target, int assert, struct ompi_win_t *win);
int osc_newrma_am_unlock(int target, struct ompi_win_t *win);
int osc_newrma_am_lock_all(int assert, struct ompi_win_t *win);
int osc_newrma_am_unlock_all(struct ompi_win_t *win);
int osc_newrma_am_flush(int target, struct ompi_win_t *win);
/* MPI_Win_flush without asking the node route first (the mixed table asked). */
int osc_newrma_am_flush_packets(int target, struct ompi_win_t *win);
int osc_newrma_am_flush_all(struct ompi_win_t *win);
int osc_newrma_am_flush_local(int target, struct ompi_win_t *win);
int osc_newrma_am_flush_local_all(struct ompi_win_t *win);
int osc_newrma_am_sync(struct ompi_win_t *win);
void osc_newrma_am_post_arrived(struct ompi_osc_newrma_module_t *module, int from);

END_C_DECLS

#endif /* OSC_NEWRMA_AM_H */
