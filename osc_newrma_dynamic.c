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
 * osc/newrma: memory regions of dynamic windows.  See osc_newrma_dynamic.h.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "osc_newrma.h"
#include "osc_newrma_single_copy.h"

void osc_newrma_dyn_init(osc_newrma_dyn_table_t *dyn)
{
    memset(dyn, 0, sizeof(*dyn));
    dyn->cached_rank = -1;
}

void osc_newrma_dyn_fini(osc_newrma_dyn_table_t *dyn)
{
    free(dyn->regions);
    free(dyn->cache);
    osc_newrma_dyn_init(dyn);
}

/* First index whose base is >= addr. */
static size_t lower_bound(const osc_newrma_region_t *regions, size_t count, uint64_t addr)
{
    size_t lo = 0, hi = count;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (regions[mid].base < addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int ensure_capacity(osc_newrma_region_t **array, size_t *capacity, size_t needed)
{
    osc_newrma_region_t *grown;
    size_t new_capacity = *capacity ? *capacity : 16;

    if (needed <= *capacity) {
        return OMPI_SUCCESS;
    }
    while (new_capacity < needed) {
        new_capacity *= 2;
    }
    grown = realloc(*array, new_capacity * sizeof(osc_newrma_region_t));
    if (NULL == grown) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *array = grown;
    *capacity = new_capacity;
    return OMPI_SUCCESS;
}

/* The owner's side of the sequence lock: the generation is odd while the
 * table may be inconsistent (being reallocated or shifted). */
static void publish_begin(ompi_osc_newrma_module_t *module)
{
    if (NEWRMA_PATH_AM == module->path) {
        return;    /* no segment: targets check their own table */
    }
    osc_newrma_peer_dyn_t *line = osc_newrma_shm_dyn(&module->shm, module->rank);
    osc_newrma_store_relaxed(&line->generation, osc_newrma_load_relaxed(&line->generation) + 1);
    osc_newrma_fence_release();    /* the odd generation before the table changes */
}

static void publish_end(ompi_osc_newrma_module_t *module)
{
    if (NEWRMA_PATH_AM == module->path) {
        return;
    }
    osc_newrma_peer_dyn_t *line = osc_newrma_shm_dyn(&module->shm, module->rank);
    osc_newrma_store_relaxed(&line->table_addr, (uint64_t) (uintptr_t) module->dyn.regions);
    osc_newrma_store_relaxed(&line->count, module->dyn.count);
    /* release: the table before the even generation */
    osc_newrma_store_release(&line->generation, osc_newrma_load_relaxed(&line->generation) + 1);
}

int osc_newrma_dyn_attach(ompi_osc_newrma_module_t *module, void *base, size_t len)
{
    osc_newrma_dyn_table_t *dyn = &module->dyn;
    uint64_t addr = (uint64_t) (uintptr_t) base;
    size_t at = lower_bound(dyn->regions, dyn->count, addr);
    int ret;

    /* overlapping an attached region (or attaching the same base twice) */
    if ((at > 0 && dyn->regions[at - 1].base + dyn->regions[at - 1].len > addr)
        || (at < dyn->count && (dyn->regions[at].base == addr || addr + len > dyn->regions[at].base))) {
        return OMPI_ERR_RMA_ATTACH;
    }
    publish_begin(module);
    ret = ensure_capacity(&dyn->regions, &dyn->capacity, dyn->count + 1);
    if (OMPI_SUCCESS == ret) {
        memmove(dyn->regions + at + 1, dyn->regions + at, (dyn->count - at) * sizeof(osc_newrma_region_t));
        dyn->regions[at].base = addr;
        dyn->regions[at].len = len;
        dyn->count++;
    }
    publish_end(module);
    return OMPI_SUCCESS == ret ? OMPI_SUCCESS : OMPI_ERR_RMA_ATTACH;
}

int osc_newrma_dyn_detach(ompi_osc_newrma_module_t *module, const void *base)
{
    osc_newrma_dyn_table_t *dyn = &module->dyn;
    uint64_t addr = (uint64_t) (uintptr_t) base;
    size_t at = lower_bound(dyn->regions, dyn->count, addr);

    if (at == dyn->count || dyn->regions[at].base != addr) {
        return OMPI_ERR_RMA_ATTACH;    /* not a region this process attached */
    }
    publish_begin(module);
    memmove(dyn->regions + at, dyn->regions + at + 1, (dyn->count - at - 1) * sizeof(osc_newrma_region_t));
    dyn->count--;
    publish_end(module);
    return OMPI_SUCCESS;
}

/* The reader's side: copy a peer's table into the window's one-target cache
 * unless the cache already holds this generation. */
static int fetch_peer_table(ompi_osc_newrma_module_t *module, int target)
{
    osc_newrma_dyn_table_t *dyn = &module->dyn;
    osc_newrma_peer_dyn_t *line = osc_newrma_shm_dyn(&module->shm, target);
    pid_t pid = osc_newrma_shm_peer(&module->shm, target)->pid;
    unsigned int spins = 0;

    for (;; osc_newrma_backoff(&spins)) {
        int64_t generation = osc_newrma_load_acquire(&line->generation);   /* the table after it */
        if (generation & 1) {
            continue;
        }
        if (dyn->cached_rank == target && dyn->cached_generation == generation) {
            return OMPI_SUCCESS;
        }
        uint64_t table_addr = osc_newrma_load_relaxed(&line->table_addr);
        size_t count = osc_newrma_load_relaxed(&line->count);
        if (OMPI_SUCCESS != ensure_capacity(&dyn->cache, &dyn->cache_capacity, count)) {
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        dyn->cached_rank = -1;    /* the cache holds nobody's table until the copy is good */
        int ret = osc_newrma_single_copy(pid, dyn->cache, table_addr, count * sizeof(osc_newrma_region_t), false);
        osc_newrma_fence_acquire();    /* the table before the generation again */
        if (osc_newrma_load_relaxed(&line->generation) != generation) {
            continue;    /* the owner changed its table under us: read again */
        }
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
        dyn->cached_rank = target;
        dyn->cached_generation = generation;
        dyn->cache_count = count;
        return OMPI_SUCCESS;
    }
}

static bool regions_cover(const osc_newrma_region_t *regions, size_t count, uint64_t addr, size_t len)
{
    uint64_t end = addr + len;
    size_t at = lower_bound(regions, count, addr + 1);   /* first base > addr */

    if (0 == at || end < addr) {
        return false;
    }
    /* walk adjacent regions: an access may span regions that touch */
    for (--at ; at < count ; ++at) {
        if (regions[at].base > addr || regions[at].base + regions[at].len <= addr) {
            return false;
        }
        addr = regions[at].base + regions[at].len;
        if (addr >= end) {
            return true;
        }
    }
    return false;
}

int osc_newrma_dyn_check_range(ompi_osc_newrma_module_t *module, int target, uint64_t addr, size_t len)
{
    osc_newrma_dyn_table_t *dyn = &module->dyn;
    int ret;

    if (0 == len) {
        return OMPI_SUCCESS;
    }
    if (target == module->rank) {
        return regions_cover(dyn->regions, dyn->count, addr, len) ? OMPI_SUCCESS : OMPI_ERR_RMA_RANGE;
    }
    /* the cache is the window's, shared by its threads */
    OPAL_THREAD_LOCK(&module->lock);
    ret = fetch_peer_table(module, target);
    if (OMPI_SUCCESS == ret && !regions_cover(dyn->cache, dyn->cache_count, addr, len)) {
        ret = OMPI_ERR_RMA_RANGE;
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return ret;
}

/* ------------------------------------------------------------------ */
/* active-message path: the origin's one-target cache is filled from a  */
/* target's reply instead of a single-copy read                         */
/* ------------------------------------------------------------------ */

bool osc_newrma_dyn_cache_covers(ompi_osc_newrma_module_t *module, int target, uint64_t addr, size_t len)
{
    osc_newrma_dyn_table_t *dyn = &module->dyn;

    return 0 == len || (dyn->cached_rank == target && regions_cover(dyn->cache, dyn->cache_count, addr, len));
}

void osc_newrma_dyn_cache_forget(ompi_osc_newrma_module_t *module)
{
    module->dyn.cached_rank = -1;
}

int osc_newrma_dyn_cache_store(ompi_osc_newrma_module_t *module, int target, const void *regions, size_t count)
{
    osc_newrma_dyn_table_t *dyn = &module->dyn;
    int ret = ensure_capacity(&dyn->cache, &dyn->cache_capacity, count);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (count > 0) {
        memcpy(dyn->cache, regions, count * sizeof(osc_newrma_region_t));
    }
    dyn->cache_count = count;
    dyn->cached_rank = target;
    return OMPI_SUCCESS;
}
