/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: the node's shared segment of a window.
 *
 * One aggregated allocation per window per node, laid out up front by
 * osc_newrma_shm_layout() (exact sizes, cache-line alignment, page alignment
 * only for alloc_shared_noncontig).  Everything inside the segment refers to
 * other parts of it by offset, never by pointer, since every process maps it
 * at a different address.  See docs/shared-segment.md.
 */

#ifndef OSC_NEWRMA_SHM_H
#define OSC_NEWRMA_SHM_H

#include "ompi_config.h"

#include <stddef.h>
#include <stdint.h>

#include "opal/mca/shmem/shmem.h"
#include "opal/sys/atomic.h"

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;

#define NEWRMA_SHM_MAGIC 0x6e6577726d610001ull /* "newrma" + layout version 1 */

/* Segment header: written by local rank 0 while creating, read-only after. */
typedef struct {
    uint64_t magic;
    uint64_t total_size;
    int32_t nranks;
    int32_t flavor;
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

/* The hot, written-at-run-time word of a target: its passive-target lock.
 * Written by every origin that locks the target, so each gets its own line. */
typedef struct {
    volatile int64_t lock;    /* NEWRMA_RWLOCK_* encoding (osc_newrma_shm.c) */
} osc_newrma_peer_lock_t;

/* Dynamic windows: where the owner's region table is (osc_newrma_dynamic.c).
 * Written only by the owner, read by origins; one line per owner. */
typedef struct {
    volatile int64_t generation;  /* odd while the owner rewrites its table */
    uint64_t table_addr;             /* in the owner's address space */
    uint64_t count;
} osc_newrma_peer_dyn_t;

/* Sizes each process brings to the layout (gathered before the layout). */
typedef struct {
    uint64_t size;
    uint64_t base;
    int32_t disp_unit;
    int32_t pid;
} osc_newrma_peer_input_t;

/* Offsets of every region, identical in every process. */
typedef struct {
    size_t cacheline;
    size_t total_size;
    size_t header_offset;
    size_t info_offset;          /* nranks x osc_newrma_peer_info_t */
    size_t lock_offset;          /* nranks x one line */
    size_t dyn_offset;           /* nranks x one line (dynamic flavor), else 0 bytes */
    size_t data_offset;          /* window memory (allocate/shared flavors) */
    size_t lock_stride;
    size_t dyn_stride;
} osc_newrma_shm_layout_t;

/* A window's mapping of its segment. */
typedef struct {
    osc_newrma_shm_layout_t layout;
    char *base;                  /* where this process mapped it */
    bool is_shared;              /* false: one process, private memory */
    opal_shmem_ds_t ds;
} osc_newrma_shm_t;

/* Compute every region's offset and the exact total size for `nranks`
 * local processes.  `peers` may be NULL for flavors without window memory
 * in the segment.  Pure function: the same inputs give the same layout in
 * every process, which is what lets each process find things by offset. */
int osc_newrma_shm_layout(osc_newrma_shm_layout_t *layout, int nranks, int flavor,
                          const osc_newrma_peer_input_t *peers, bool noncontig,
                          size_t cacheline, size_t pagesize);

/* Create (rank 0), map (everyone) and unlink the segment; collective over
 * the module's communicator.  Fails on every rank if it fails on any. */
int osc_newrma_shm_attach(struct ompi_osc_newrma_module_t *module,
                          const osc_newrma_peer_input_t *peers);
void osc_newrma_shm_detach(osc_newrma_shm_t *shm);

static inline osc_newrma_peer_info_t *osc_newrma_shm_peer(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_peer_info_t *) (shm->base + shm->layout.info_offset) + rank;
}

static inline osc_newrma_peer_lock_t *osc_newrma_shm_lock(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_peer_lock_t *) (shm->base + shm->layout.lock_offset
                                       + (size_t) rank * shm->layout.lock_stride);
}

static inline osc_newrma_peer_dyn_t *osc_newrma_shm_dyn(const osc_newrma_shm_t *shm, int rank)
{
    return (osc_newrma_peer_dyn_t *) (shm->base + shm->layout.dyn_offset
                                      + (size_t) rank * shm->layout.dyn_stride);
}

/* Passive-target reader/writer lock on a target's lock word. */
void osc_newrma_rwlock_acquire(osc_newrma_peer_lock_t *lock, bool exclusive);
void osc_newrma_rwlock_release(osc_newrma_peer_lock_t *lock, bool exclusive);

/* Polite spinning: a short busy phase, then progress + yield, so that
 * oversubscribed runs (more ranks than cores) stay fast. */
void osc_newrma_backoff(unsigned int *spins);

END_C_DECLS

#endif /* OSC_NEWRMA_SHM_H */
