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
 * osc/newrma: relays -- puts, gets and accumulates of windows of user
 * memory on one node streamed through shared slots (see
 * osc_newrma_relay.h): the memfd areas, the origin side (post the relay in
 * the target's mailbox, osc_newrma_mailbox.c, then stream) and the target
 * side (osc_newrma_mailbox_serve dispatches a posted relay here).  When to
 * relay: osc_newrma_node_policy.h.
 *
 * Threads: relays are off under MPI_THREAD_MULTIPLE
 * (osc_newrma_node_policy.c), so the own area is made by the one thread
 * that calls MPI at a time; the peer mappings are used only by a target
 * serving its mailbox, which holds the serving lock
 * (osc_newrma_progress.c).
 */

#define _GNU_SOURCE
#include "ompi_config.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/op/op.h"
#include "opal/runtime/opal_progress.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_datatype.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_relay.h"

/* head pages (the counters, then the segments), then the slots */
#define NEWRMA_RELAY_HEAD_BYTES (5 * 4096)
#define NEWRMA_RELAY_AREA_BYTES (NEWRMA_RELAY_HEAD_BYTES + NEWRMA_RELAY_SLOTS * NEWRMA_RELAY_SLOT_BYTES)
_Static_assert(sizeof(osc_newrma_relay_head_t) <= NEWRMA_RELAY_HEAD_BYTES, "the relay head fits its pages");

static osc_newrma_relay_area_t own = { .fd = -1 };
static bool own_failed = false;

typedef struct {
    pid_t pid;
    osc_newrma_relay_area_t area;
} relay_peer_t;

static relay_peer_t peers[NEWRMA_RELAY_PEERS];
static unsigned int peers_next = 0;     /* the slot the next new mapping evicts */

static void area_set(osc_newrma_relay_area_t *area, int fd, void *base)
{
    area->fd = fd;
    area->head = (osc_newrma_relay_head_t *) base;
    area->slots = (char *) base + NEWRMA_RELAY_HEAD_BYTES;
    area->cookie = area->head->cookie;
}

static void area_unmap(osc_newrma_relay_area_t *area)
{
    if (NULL != area->head) {
        (void) munmap(area->head, NEWRMA_RELAY_AREA_BYTES);
    }
    *area = (osc_newrma_relay_area_t) { .fd = -1 };
}

/* a cookie no other area of the job is likely to carry */
static uint64_t new_cookie(void)
{
    struct timespec ts;

    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t) getpid() << 40) ^ ((uint64_t) ts.tv_sec << 30) ^ (uint64_t) ts.tv_nsec ^ 1;
}

const osc_newrma_relay_area_t *osc_newrma_relay_own(void)
{
    void *base;
    int fd;

    if (NULL != own.head || own_failed) {
        return NULL != own.head ? &own : NULL;
    }
    own_failed = true;                     /* until it worked */
    fd = memfd_create("osc_newrma_relay", MFD_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    if (0 != ftruncate(fd, NEWRMA_RELAY_AREA_BYTES)
        || MAP_FAILED == (base = mmap(NULL, NEWRMA_RELAY_AREA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))) {
        (void) close(fd);
        return NULL;
    }
    ((osc_newrma_relay_head_t *) base)->cookie = new_cookie();
    area_set(&own, fd, base);
    own_failed = false;
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "relay staging area: fd %d, %d slots of %d bytes", fd, NEWRMA_RELAY_SLOTS,
                   NEWRMA_RELAY_SLOT_BYTES);
    return &own;
}

/* Map process pid's fd (its relay area) here: NULL if we may not. */
static void *map_peer_fd(pid_t pid, int fd)
{
    char path[64];
    void *base;
    int mine;

    (void) snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
    mine = open(path, O_RDWR | O_CLOEXEC);
    if (mine < 0) {
        return NULL;
    }
    base = mmap(NULL, NEWRMA_RELAY_AREA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
    (void) close(mine);                    /* the mapping keeps the memory */
    return MAP_FAILED == base ? NULL : base;
}

const osc_newrma_relay_area_t *osc_newrma_relay_peer(pid_t pid, int fd, uint64_t cookie)
{
    relay_peer_t *slot;
    void *base;

    for (unsigned int k = 0 ; k < NEWRMA_RELAY_PEERS ; ++k) {
        if (NULL != peers[k].area.head && peers[k].pid == pid && peers[k].area.fd == fd) {
            if (peers[k].area.cookie == cookie) {
                return &peers[k].area;
            }
            area_unmap(&peers[k].area);    /* another area under the same names: map anew */
        }
    }
    base = map_peer_fd(pid, fd);
    if (NULL == base) {
        return NULL;
    }
    slot = &peers[peers_next];
    peers_next = (peers_next + 1) % NEWRMA_RELAY_PEERS;
    area_unmap(&slot->area);
    slot->pid = pid;
    area_set(&slot->area, fd, base);
    if (slot->area.cookie != cookie) {     /* the fd names something else now */
        area_unmap(&slot->area);
        return NULL;
    }
    return &slot->area;
}

void osc_newrma_relay_fini(void)
{
    for (unsigned int k = 0 ; k < NEWRMA_RELAY_PEERS ; ++k) {
        area_unmap(&peers[k].area);
    }
    if (NULL != own.head) {
        int fd = own.fd;
        area_unmap(&own);
        (void) close(fd);
    }
    own_failed = false;
}

/* ------------------------------------------------------------------ */
/* the protocol: chunks, cursors and waits; the origin side           */
/* ------------------------------------------------------------------ */

/* A relay's payload: the size, the number of target segments (in the
 * area's head), and the origin's area by its names. */
typedef struct {
    uint64_t bytes;
    uint64_t cookie;
    int32_t fd;
    uint32_t nsegs;
} assist_relay_t;

static inline uint64_t relay_chunks(uint64_t bytes)
{
    return (bytes + NEWRMA_RELAY_SLOT_BYTES - 1) / NEWRMA_RELAY_SLOT_BYTES;
}

/* the length of chunk i (the last one may be short) */
static inline size_t relay_chunk_len(uint64_t bytes, uint64_t i)
{
    return osc_newrma_chunk_len(bytes, i * NEWRMA_RELAY_SLOT_BYTES, NEWRMA_RELAY_SLOT_BYTES);
}

/* Where one side of a relay is in its own segments: the stream of chunks
 * is their bytes in order, so a chunk may end inside a segment or span
 * several (a batch of small puts). */
typedef struct {
    const struct iovec *seg;   /* the current segment */
    size_t off;                /* bytes of it already streamed */
} relay_cursor_t;

/* What to do with one piece of a chunk: `here` in a segment, `at` bytes
 * into the chunk, `len` bytes. */
typedef void (*relay_piece_fn_t)(void *ctx, char *here, size_t at, size_t len);

/* Walk the next `len` bytes of the stream over the segments, piece by
 * piece (a piece ends where a segment does), and move on. */
static void relay_cursor_walk(relay_cursor_t *c, size_t len, relay_piece_fn_t fn, void *ctx)
{
    for (size_t at = 0 ; at < len ;) {
        size_t left = c->seg->iov_len - c->off, piece = left < len - at ? left : len - at;

        fn(ctx, (char *) c->seg->iov_base + c->off, at, piece);
        at += piece;
        c->off += piece;
        if (c->off == c->seg->iov_len) {
            ++c->seg;
            c->off = 0;
        }
    }
}

static void piece_to_slot(void *slot, char *here, size_t at, size_t len)
{
    osc_newrma_copy_bytes((char *) slot + at, here, len);
}

static void piece_from_slot(void *slot, char *here, size_t at, size_t len)
{
    osc_newrma_copy_bytes(here, (char *) slot + at, len);
}

/* Copy the next `len` bytes of the stream between `slot` and the segments
 * (into the slot if `to_slot`), and move on. */
static void relay_cursor_copy(relay_cursor_t *c, char *slot, size_t len, bool to_slot)
{
    relay_cursor_walk(c, len, to_slot ? piece_to_slot : piece_from_slot, slot);
}

/* One step of any wait of a relay, on either side: spin, then give the
 * core away (the other side may need it) -- but never opal_progress: it
 * serves our mailbox, and an origin that took another origin's relay from
 * inside its own relay's wait could wait on that origin while it does the
 * same (two processes relaying to each other at once).  With a core per
 * process, spin as long as other waits run progress: the other side is
 * copying a chunk, and a yield (a system call) noticed its end late.  On
 * an oversubscribed node only the busy phase: the other side may be
 * waiting for our core. */
static inline void relay_pause(unsigned int *spins)
{
    unsigned int limit = opal_progress_yield_when_idle ? NEWRMA_BUSY_SPINS : NEWRMA_BUSY_SPINS + NEWRMA_PROGRESS_SPINS;

    ++*spins;
    if (*spins < limit) {
        osc_newrma_cpu_relax();
    } else {
        (void) sched_yield();
    }
}

typedef enum {
    RELAY_READY,      /* the counter got there */
    RELAY_WITHDRAWN,  /* the target did not take the request in time: taken back */
    RELAY_CROSSED,    /* taken back at once: another origin's relay waits for us */
    RELAY_REFUSED,    /* the target took it and gave up at once (it cannot map our area) */
} relay_wait_t;

/* One relay in flight, as its origin's waits see it: the target's mailbox
 * and our request's sequence there, our own mailbox (where another
 * origin's relay may be waiting for us), the withdrawal deadline (0: not
 * set yet). */
typedef struct {
    osc_newrma_mailbox_t *box;
    const osc_newrma_mailbox_t *own;
    uint64_t mine;
    uint64_t deadline;
} relay_link_t;

/* Is another origin's relay waiting in our own mailbox?  Then two relays
 * may be crossing: neither process serves while it relays, so each would
 * wait out the other's timeout. */
static inline bool relay_crossing(const osc_newrma_mailbox_t *own)
{
    /* (another origin may be writing it) */
    uint8_t kind = osc_newrma_load_relaxed(&own->kind) & ~NEWRMA_MAILBOX_WANT_RESULT;

    return NEWRMA_MAILBOX_POSTED == (osc_newrma_load_relaxed(&own->state) & NEWRMA_MAILBOX_MASK)
           && (NEWRMA_MAILBOX_RELAY_PUT == kind || NEWRMA_MAILBOX_RELAY_GET == kind || NEWRMA_MAILBOX_RELAY_ACC == kind);
}

/* Wait until the other side's counter reaches `at_least`.  While the
 * request is only posted, up to osc_newrma_assist_timeout (from the first
 * wait of the relay), then withdraw it -- at once if a relay is waiting
 * for us meanwhile (the caller copies by system call, and our waits serve
 * that relay later); once taken, as long as it takes: the target copies
 * until it is done. */
static relay_wait_t relay_wait(relay_link_t *link, const uint64_t *counter, uint64_t at_least)
{
    unsigned int turns = 0, spins = 0;

    while (osc_newrma_load_acquire(counter) < at_least) {
        uint64_t state = osc_newrma_load_acquire(&link->box->state);
        uint64_t posted = link->mine | NEWRMA_MAILBOX_POSTED;
        relay_wait_t give_up = RELAY_READY;

        if ((link->mine | NEWRMA_MAILBOX_DONE) == state) {
            /* the target advances the counters before it says DONE */
            return osc_newrma_load_acquire(counter) >= at_least ? RELAY_READY : RELAY_REFUSED;
        }
        if (posted == state && relay_crossing(link->own)) {
            give_up = RELAY_CROSSED;
        } else if (posted == state && 0 == ++turns % NEWRMA_MAILBOX_CLOCK_SPINS) {
            uint64_t now = osc_newrma_clock_ns();
            if (0 == link->deadline) {
                link->deadline = now + 1000ull * mca_osc_newrma_component.assist_timeout;
            }
            give_up = now > link->deadline ? RELAY_WITHDRAWN : RELAY_READY;
        }
        if (RELAY_READY != give_up
            && osc_newrma_cas_relaxed(&link->box->state, &posted, link->mine | NEWRMA_MAILBOX_FREE)) {
            return give_up;
        }
        relay_pause(&spins);
    }
    return RELAY_READY;
}

/* Stream the chunks: a put's into the slots as they free up, a get's out
 * of them as they fill. */
static relay_wait_t relay_stream(const osc_newrma_relay_area_t *area, relay_link_t *link, bool write,
                                 const struct iovec *local, uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    uint64_t chunks = relay_chunks(bytes);
    relay_cursor_t at = { .seg = local, .off = 0 };
    relay_wait_t got = RELAY_READY;

    for (uint64_t i = 0 ; i < chunks && RELAY_READY == got ; ++i) {
        char *slot = osc_newrma_relay_slot(area, i);
        if (write) {
            got = relay_wait(link, &head->consumed, i >= NEWRMA_RELAY_SLOTS ? i + 1 - NEWRMA_RELAY_SLOTS : 0);
            if (RELAY_READY == got) {
                relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), true);
                osc_newrma_store_release(&head->filled, i + 1);
            }
        } else {
            got = relay_wait(link, &head->filled, i + 1);
            if (RELAY_READY == got) {
                relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), false);
                osc_newrma_store_release(&head->consumed, i + 1);
            }
        }
    }
    /* a put is complete when the target has copied its last chunk out */
    return write && RELAY_READY == got ? relay_wait(link, &head->consumed, chunks) : got;
}

/* Claim the target's mailbox and post relay `req` of `nsegs` target
 * segments (written into our area's head first), `bytes` in all: the
 * area, the posted sequence and the presence stamp seen.
 * OMPI_ERR_WOULD_BLOCK: not posted (target absent, no area, mailbox busy). */
static int relay_post(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                      const struct iovec *remote, unsigned int nsegs, size_t bytes,
                      const osc_newrma_relay_area_t **area, relay_link_t *link, uint64_t *stamp)
{
    const osc_newrma_relay_area_t *own;
    assist_relay_t init;
    int ret = osc_newrma_mailbox_flush_pending(module);   /* the mailbox may hold our own request */

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (!osc_newrma_mailbox_target_present(module, target, stamp) || NULL == (own = osc_newrma_relay_own())) {
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* nobody uses the area between relays: the last one's target said
     * DONE after its last access, or never took it */
    osc_newrma_store_relaxed(&own->head->filled, 0);   /* published by the post */
    osc_newrma_store_relaxed(&own->head->consumed, 0);
    for (unsigned int i = 0 ; i < nsegs ; ++i) {
        own->head->segs[i] = (osc_newrma_relay_seg_t) { .addr = (uint64_t) (uintptr_t) remote[i].iov_base,
                                                        .len = remote[i].iov_len };
    }
    init = (assist_relay_t) { .bytes = bytes, .cookie = own->cookie, .fd = own->fd, .nsegs = nsegs };
    *area = own;
    *link = (relay_link_t) { .box = osc_newrma_shm_mailbox(&module->shm, target),
                             .own = osc_newrma_shm_mailbox(&module->shm, module->rank) };
    return OMPI_SUCCESS == osc_newrma_mailbox_post(module, target, req, &init, sizeof(init), &link->mine)
           ? OMPI_SUCCESS : OMPI_ERR_WOULD_BLOCK;
}

/* After the stream: a withdrawn relay is not done (the target never took
 * it); else wait for DONE and free the mailbox -- a refused one is not
 * done either, and the window stops relaying. */
static int relay_finish(ompi_osc_newrma_module_t *module, int target, const relay_link_t *link, uint64_t stamp,
                        relay_wait_t got, size_t bytes)
{
    if (RELAY_WITHDRAWN == got || RELAY_CROSSED == got) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "relay of %zu bytes to rank %d: %s, withdrawn", bytes, target,
                       RELAY_CROSSED == got ? "another relay waits for us" : "not taken in time");
        if (RELAY_WITHDRAWN == got) {   /* a crossing target is present: no miss */
            osc_newrma_store_relaxed(&module->assist_miss_stamp, stamp);
        }
        (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.assist_withdrawn, 1);
        return OMPI_ERR_WOULD_BLOCK;
    }
    /* the target says DONE right after its last chunk (or at once, refusing) */
    for (unsigned int spins = 0 ;
         (link->mine | NEWRMA_MAILBOX_DONE) != osc_newrma_load_acquire(&link->box->state) ;) {
        relay_pause(&spins);
    }
    osc_newrma_store_release(&link->box->state, link->mine | NEWRMA_MAILBOX_FREE);
    if (RELAY_REFUSED == got) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "relay to rank %d refused (it cannot map this process's relay area): "
                       "no more relays on this window", target);
        module->assist_relay_piece_bytes = 0;   /* that target cannot reach us: no more tries */
        return OMPI_ERR_WOULD_BLOCK;
    }
    (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.relayed_bytes, (uint64_t) bytes);
    return OMPI_SUCCESS;
}

static inline uint64_t relay_acc_chunks(uint64_t bytes)
{
    return (bytes + NEWRMA_RELAY_ACC_CHUNK - 1) / NEWRMA_RELAY_ACC_CHUNK;
}

static inline size_t relay_acc_chunk_len(uint64_t bytes, uint64_t i)
{
    return osc_newrma_chunk_len(bytes, i * NEWRMA_RELAY_ACC_CHUNK, NEWRMA_RELAY_ACC_CHUNK);
}

/* chunk i's old values, out of its slot into `old` */
static void relay_acc_old(const osc_newrma_relay_area_t *area, char *old, uint64_t bytes, uint64_t i)
{
    osc_newrma_copy_bytes(old + i * NEWRMA_RELAY_ACC_CHUNK, osc_newrma_relay_slot(area, i) + NEWRMA_RELAY_ACC_CHUNK,
                          relay_acc_chunk_len(bytes, i));
}

/* The origin's side of a relayed accumulate: each chunk of elements into
 * its slot as the slot frees up -- and, for a get_accumulate, the old
 * values the target left in the slot out first (a slot frees up when the
 * target has reduced its chunk); the last slots' old values at the end. */
static relay_wait_t relay_stream_acc(const osc_newrma_relay_area_t *area, relay_link_t *link, const char *origin,
                                     char *old, uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    uint64_t chunks = relay_acc_chunks(bytes);
    relay_wait_t got = RELAY_READY;

    for (uint64_t i = 0 ; i < chunks && RELAY_READY == got ; ++i) {
        got = relay_wait(link, &head->consumed, i >= NEWRMA_RELAY_SLOTS ? i + 1 - NEWRMA_RELAY_SLOTS : 0);
        if (RELAY_READY != got) {
            break;
        }
        if (NULL != old && i >= NEWRMA_RELAY_SLOTS) {
            relay_acc_old(area, old, bytes, i - NEWRMA_RELAY_SLOTS);
        }
        if (NULL != origin) {   /* MPI_NO_OP has no elements */
            osc_newrma_copy_bytes(osc_newrma_relay_slot(area, i), origin + i * NEWRMA_RELAY_ACC_CHUNK,
                                  relay_acc_chunk_len(bytes, i));
        }
        osc_newrma_store_release(&head->filled, i + 1);
    }
    if (RELAY_READY == got) {
        got = relay_wait(link, &head->consumed, chunks);
    }
    for (uint64_t i = chunks > NEWRMA_RELAY_SLOTS ? chunks - NEWRMA_RELAY_SLOTS : 0 ;
         RELAY_READY == got && NULL != old && i < chunks ; ++i) {
        relay_acc_old(area, old, bytes, i);
    }
    return got;
}

/* Any relay, origin side: post `req`, stream (a put's or get's `local`
 * segments; an accumulate's elements at local->iov_base, NULL for
 * MPI_NO_OP, and old values into `old`), finish. */
static int relay_run(ompi_osc_newrma_module_t *module, int target, const osc_newrma_mailbox_request_t *req,
                     const struct iovec *local, char *old, const struct iovec *remote, unsigned int nsegs, size_t bytes)
{
    const osc_newrma_relay_area_t *area;
    relay_link_t link;
    uint64_t stamp;
    relay_wait_t got;
    int ret = relay_post(module, target, req, remote, nsegs, bytes, &area, &link, &stamp);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    got = NEWRMA_MAILBOX_RELAY_ACC == req->kind
        ? relay_stream_acc(area, &link, (const char *) local->iov_base, old, bytes)
        : relay_stream(area, &link, NEWRMA_MAILBOX_RELAY_PUT == req->kind, local, bytes);
    return relay_finish(module, target, &link, stamp, got, bytes);
}

int osc_newrma_relay_move(ompi_osc_newrma_module_t *module, int target, bool write, const struct iovec *local,
                          const struct iovec *remote, unsigned int nsegs, size_t bytes)
{
    osc_newrma_mailbox_request_t req = { .kind = write ? NEWRMA_MAILBOX_RELAY_PUT : NEWRMA_MAILBOX_RELAY_GET,
                                         .count = (uint32_t) module->rank };

    return relay_run(module, target, &req, local, NULL, remote, nsegs, bytes);
}

int osc_newrma_relay_accumulate(ompi_osc_newrma_module_t *module, int target, const void *origin, void *old,
                                const struct iovec *remote, unsigned int nsegs, size_t bytes,
                                struct ompi_op_t *op, struct ompi_datatype_t *dt)
{
    osc_newrma_mailbox_request_t req = { .kind = NEWRMA_MAILBOX_RELAY_ACC, .want_result = NULL != old,
                                         .dt_id = (uint16_t) dt->id, .op_index = op->o_f_to_c_index,
                                         .count = (uint32_t) module->rank };
    struct iovec elements = { .iov_base = (void *) origin, .iov_len = bytes };

    return relay_run(module, target, &req, &elements, (char *) old, remote, nsegs, bytes);
}

/* ------------------------------------------------------------------ */
/* target side                                                         */
/* ------------------------------------------------------------------ */

/* A relay's target segments, out of the origin's area into `segs` (our
 * own copy: the origin does not touch them before DONE, but nothing it
 * wrote is trusted beyond adding up to the relay's size). */
static bool relay_segs_read(const osc_newrma_relay_head_t *head, uint32_t nsegs, uint64_t bytes,
                            struct iovec *segs)
{
    uint64_t total = 0;

    for (uint32_t i = 0 ; i < nsegs ; ++i) {
        osc_newrma_relay_seg_t seg = head->segs[i];
        if (0 == seg.len || seg.len > bytes - total) {
            return false;
        }
        total += seg.len;
        segs[i] = (struct iovec) { .iov_base = (void *) (uintptr_t) seg.addr, .iov_len = seg.len };
    }
    return total == bytes;
}

/* Copy a put's chunks out of the slots into our segments, or a get's from
 * our segments into them, as they fill or free up (the origin copies its
 * side meanwhile; relay_pause: spin, then yield). */
static void serve_relay_stream(const osc_newrma_relay_area_t *area, bool put, const struct iovec *segs,
                               uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    relay_cursor_t at = { .seg = segs, .off = 0 };
    uint64_t chunks = relay_chunks(bytes);

    for (uint64_t i = 0 ; i < chunks ; ++i) {
        char *slot = osc_newrma_relay_slot(area, i);
        unsigned int spins = 0;
        if (put) {
            while (osc_newrma_load_acquire(&head->filled) <= i) {
                relay_pause(&spins);
            }
            relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), false);
            osc_newrma_store_release(&head->consumed, i + 1);
        } else {
            while (i >= osc_newrma_load_acquire(&head->consumed) + NEWRMA_RELAY_SLOTS) {
                relay_pause(&spins);
            }
            relay_cursor_copy(&at, slot, relay_chunk_len(bytes, i), true);
            osc_newrma_store_release(&head->filled, i + 1);
        }
    }
}

/* A relayed accumulate at the target: each chunk of the origin's elements
 * reduced into our memory as it arrives (the origin holds the stripes of
 * the whole span for us), a get_accumulate's old values left in the
 * slot's second half first. */
typedef struct {
    struct ompi_op_t *op;
    struct ompi_datatype_t *dt;
    size_t esize;
    bool want_old;
} relay_reduce_t;

/* The request's operation and type, checked (it is a copy read before it
 * was taken). */
static bool relay_reduce_setup(const osc_newrma_mailbox_request_t *req, relay_reduce_t *r)
{
    if (req->dt_id >= OMPI_DATATYPE_MPI_MAX_PREDEFINED) {
        return false;
    }
    r->dt = (struct ompi_datatype_t *) ompi_datatype_basicDatatypes[req->dt_id];
    r->op = (struct ompi_op_t *) opal_pointer_array_get_item(ompi_op_f_to_c_table, req->op_index);
    r->esize = NULL != r->dt ? r->dt->super.size : 0;
    r->want_old = req->want_result;
    return NULL != r->op && 0 != r->esize && 0 == NEWRMA_RELAY_ACC_CHUNK % r->esize;
}

/* one piece of a chunk reduced into our segment (whole elements: chunks
 * and segments both end on element boundaries) */
typedef struct {
    const relay_reduce_t *r;
    char *slot;
} relay_reduce_piece_t;

static void piece_reduce(void *ctx, char *here, size_t at, size_t len)
{
    const relay_reduce_piece_t *p = (const relay_reduce_piece_t *) ctx;

    osc_newrma_acc_combine(p->r->op, p->r->dt, here, p->slot + at,
                           p->r->want_old ? p->slot + NEWRMA_RELAY_ACC_CHUNK + at : NULL, len / p->r->esize,
                           p->r->esize);
}

static void serve_relay_reduce(const osc_newrma_relay_area_t *area, const relay_reduce_t *r,
                               const struct iovec *segs, uint64_t bytes)
{
    osc_newrma_relay_head_t *head = area->head;
    relay_cursor_t at = { .seg = segs, .off = 0 };
    uint64_t chunks = relay_acc_chunks(bytes);

    for (uint64_t i = 0 ; i < chunks ; ++i) {
        relay_reduce_piece_t piece = { .r = r, .slot = osc_newrma_relay_slot(area, i) };
        unsigned int spins = 0;
        while (osc_newrma_load_acquire(&head->filled) <= i) {
            relay_pause(&spins);
        }
        relay_cursor_walk(&at, relay_acc_chunk_len(bytes, i), piece_reduce, &piece);
        osc_newrma_store_release(&head->consumed, i + 1);
    }
}

/* an accumulate's segments hold whole elements */
static bool relay_segs_whole(const struct iovec *segs, uint32_t nsegs, size_t esize)
{
    for (uint32_t i = 0 ; i < nsegs ; ++i) {
        if (0 != segs[i].iov_len % esize) {
            return false;
        }
    }
    return true;
}

/* Serve a relay: map the origin's area and read its segments (or refuse:
 * DONE at once, nothing copied), then stream -- an accumulate's segments
 * are reduced into, not copied to. */
int osc_newrma_relay_serve(ompi_osc_newrma_module_t *module, osc_newrma_mailbox_t *box, uint64_t posted,
                           const osc_newrma_mailbox_request_t *req, const void *posted_payload)
{
    const assist_relay_t *relay = posted_payload;
    uint64_t bytes = relay->bytes, cookie = relay->cookie;
    uint64_t taken = (posted & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_TAKEN;
    uint32_t nsegs = relay->nsegs;
    uint64_t done = (posted & ~NEWRMA_MAILBOX_MASK) | NEWRMA_MAILBOX_DONE;
    int origin = (int) req->count, fd = relay->fd;
    bool is_acc = NEWRMA_MAILBOX_RELAY_ACC == req->kind;
    struct iovec segs[NEWRMA_RELAY_SEGS];
    const osc_newrma_relay_area_t *area;
    relay_reduce_t reduce;
    bool usable;

    if (origin < 0 || origin >= module->size || origin == module->rank || 0 == bytes || 0 == nsegs
        || nsegs > NEWRMA_RELAY_SEGS || (is_acc && !relay_reduce_setup(req, &reduce))) {
        return 0;
    }
    area = osc_newrma_relay_peer(osc_newrma_shm_peer(&module->shm, origin)->pid, fd, cookie);
    if (!osc_newrma_cas_acquire(&box->state, &posted, taken)) {
        return 0;
    }
    usable = NULL != area && relay_segs_read(area->head, nsegs, bytes, segs)
             && (!is_acc || relay_segs_whole(segs, nsegs, reduce.esize));
    if (usable && is_acc) {
        serve_relay_reduce(area, &reduce, segs, bytes);
    } else if (usable) {
        serve_relay_stream(area, NEWRMA_MAILBOX_RELAY_PUT == req->kind, segs, bytes);
    }
    osc_newrma_store_release(&box->state, done);
    /* still inside MPI after a long copy: say so, or the origin's next
     * relay would find the stamp stale */
    osc_newrma_mailbox_stamp(module, osc_newrma_clock_ns());
    return 1;
}
