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
 * osc/newrma: memory regions of dynamic windows (MPI_Win_attach/detach).
 *
 * Each process keeps the regions it attached in a sorted, growable table in
 * its own memory (no fixed cap) and publishes where that table is through
 * its line in the window's segment, guarded by a generation counter (a
 * sequence lock).  An origin validates a target range against the target's
 * table, read with one single-copy syscall and cached for one target, so a
 * window holds no per-peer state.  See docs/rationale.md, "Dynamic
 * windows".
 */

#ifndef OSC_NEWRMA_DYNAMIC_H
#define OSC_NEWRMA_DYNAMIC_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;

typedef struct {
    uint64_t base;
    uint64_t len;
} osc_newrma_region_t;

typedef struct {
    osc_newrma_region_t *regions;   /* sorted by base, non-overlapping */
    size_t count;
    size_t capacity;
    /* one-target cache of a peer's table (origin side) */
    int cached_rank;
    int64_t cached_generation;
    osc_newrma_region_t *cache;
    size_t cache_count;
    size_t cache_capacity;
} osc_newrma_dyn_table_t;

void osc_newrma_dyn_init(osc_newrma_dyn_table_t *dyn);
void osc_newrma_dyn_fini(osc_newrma_dyn_table_t *dyn);

/* MPI_Win_attach / MPI_Win_detach on this process's table */
int osc_newrma_dyn_attach(struct ompi_osc_newrma_module_t *module, void *base, size_t len);
int osc_newrma_dyn_detach(struct ompi_osc_newrma_module_t *module, const void *base);

/* Is [addr, addr + len) covered by regions `target` has attached?  Adjacent
 * regions count as one range.  OMPI_SUCCESS or OMPI_ERR_RMA_RANGE. */
int osc_newrma_dyn_check_range(struct ompi_osc_newrma_module_t *module, int target,
                               uint64_t addr, size_t len);

/* Active-message path: the origin's one-target cache of a peer's table,
 * filled from the peer's answer (osc_newrma_am_ops.c). */
bool osc_newrma_dyn_cache_covers(struct ompi_osc_newrma_module_t *module, int target, uint64_t addr, size_t len);
void osc_newrma_dyn_cache_forget(struct ompi_osc_newrma_module_t *module);
int osc_newrma_dyn_cache_store(struct ompi_osc_newrma_module_t *module, int target, const void *regions,
                               size_t count);

END_C_DECLS

#endif /* OSC_NEWRMA_DYNAMIC_H */
