/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: relay staging areas (osc_newrma_relay.c).
 *
 * A relay moves a large contiguous put or get of a single-copy window
 * (MPI_Win_create/create_dynamic on one node) through shared memory when
 * its target is inside MPI: the writer copies a chunk into a slot, the
 * reader copies it out, the two streaming through NEWRMA_RELAY_SLOTS slots
 * -- two memcpys at cache speed where the kernel's process_vm_* may copy
 * far slower (docs/architecture.md, "Relays").  The mailbox protocol is
 * osc_newrma_assist.c's; this file only owns the memory:
 *
 *  - each process has one staging area, for all its windows (so no
 *    window's memory grows): a memfd made on its first relay, mapped
 *    shared, named to the target by its fd number and a random cookie;
 *  - a target maps an origin's area through /proc/<pid>/fd/<fd> (the
 *    ptrace permission single copy already needs) and keeps the last few
 *    mappings (NEWRMA_RELAY_PEERS), checked against the cookie so that a
 *    reused pid or fd never reads as the old area.
 */

#ifndef OSC_NEWRMA_RELAY_H
#define OSC_NEWRMA_RELAY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define NEWRMA_RELAY_SLOTS 4
#define NEWRMA_RELAY_SLOT_BYTES (16 * 1024)
/* mappings of other processes' areas a target keeps */
#define NEWRMA_RELAY_PEERS 8
/* the most target segments one relay scatters to or gathers from (a batch
 * of small puts or gets, the blocks of a derived datatype:
 * osc_newrma_ops.c, osc_newrma_acc.c) */
#define NEWRMA_RELAY_SEGS 1024

/* One target segment of a relay: address in the target, length. */
typedef struct {
    uint64_t addr;
    uint64_t len;
} osc_newrma_relay_seg_t;

/* The head of an area: the cookie, the two counters of the relay in
 * progress, each on a line of its own (the writer owns `filled`, the
 * reader `consumed`; the origin zeroes both before it posts a relay), and
 * the relay's target segments, which the origin writes before it posts:
 * the stream of chunks is their bytes in order, as it is the origin's own
 * segments' (the two lists have the same lengths). */
typedef struct {
    uint64_t cookie;
    _Alignas(64) volatile uint64_t filled;      /* chunks published by the writer */
    _Alignas(64) volatile uint64_t consumed;    /* chunks copied out by the reader */
    _Alignas(64) osc_newrma_relay_seg_t segs[NEWRMA_RELAY_SEGS];
} osc_newrma_relay_head_t;

typedef struct {
    int fd;                            /* in the owner's process */
    uint64_t cookie;
    osc_newrma_relay_head_t *head;
    char *slots;                       /* NEWRMA_RELAY_SLOTS * NEWRMA_RELAY_SLOT_BYTES */
} osc_newrma_relay_area_t;

/* This process's area, made on first use; NULL if it cannot be (then
 * relays are off for good in this process). */
const osc_newrma_relay_area_t *osc_newrma_relay_own(void);

/* Process `pid`'s area named by (fd, cookie), mapped or found mapped; NULL
 * if it cannot be mapped or is not the area named. */
const osc_newrma_relay_area_t *osc_newrma_relay_peer(pid_t pid, int fd, uint64_t cookie);

/* the slot of chunk `seq` */
static inline char *osc_newrma_relay_slot(const osc_newrma_relay_area_t *area, uint64_t seq)
{
    return area->slots + (seq % NEWRMA_RELAY_SLOTS) * (uint64_t) NEWRMA_RELAY_SLOT_BYTES;
}

/* Component finalize: every mapping and the own area released. */
void osc_newrma_relay_fini(void);

#endif /* OSC_NEWRMA_RELAY_H */
