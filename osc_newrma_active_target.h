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
 * osc/newrma: active-target synchronization through the node segment
 * (osc_newrma_active_target.c): the fence's node barrier and the PSCW post
 * and completion notices.
 */

#ifndef OSC_NEWRMA_ACTIVE_TARGET_H
#define OSC_NEWRMA_ACTIVE_TARGET_H

#include <stdbool.h>
#include <stddef.h>

#include "osc_newrma_shm.h"

struct ompi_osc_newrma_module_t;

/* A node barrier in any segment (osc_newrma_node_barrier_t; the caller
 * keeps one thread at a time in these): setup before the words are
 * placed (arrivals, flags, flags_stride, line); arrive at the next
 * episode; test whether every rank of the node arrived at it (and
 * advance the dissemination rounds as far as they go), with the acquire
 * that makes their writes before arriving visible when it says yes. */
void osc_newrma_node_barrier_setup(osc_newrma_node_barrier_t *b, int rank, int size, unsigned int fence_flat_ranks);
void osc_newrma_node_barrier_arrive(osc_newrma_node_barrier_t *b);
bool osc_newrma_node_barrier_test(osc_newrma_node_barrier_t *b);

/* split-phase node barrier of the window (init: once the segment is
 * mapped, before the window is served from progress) */
void osc_newrma_barrier_init(struct ompi_osc_newrma_module_t *module);
void osc_newrma_barrier_arrive(struct ompi_osc_newrma_module_t *module);
void osc_newrma_barrier_wait(struct ompi_osc_newrma_module_t *module);
/* a whole episode: the previous one finished here, arrive, wait for all */
void osc_newrma_barrier(struct ompi_osc_newrma_module_t *module);

/* PSCW (groups as sorted ranks of the window); post_signal accounts the
 * completions its wait expects */
int osc_newrma_post_signal(struct ompi_osc_newrma_module_t *module, const int *origins, size_t count);
/* waits for the posts of the start group's targets not matched yet */
int osc_newrma_start_wait_posts(struct ompi_osc_newrma_module_t *module, const int *targets, size_t count);
/* the start group's match records, all `slot` (NEWRMA_POST_RING for an
 * MPI_MODE_NOCHECK start: its completions go through the counters) */
int osc_newrma_start_matches_reset(struct ompi_osc_newrma_module_t *module, size_t count, int32_t slot);
/* an epoch that issued no operation: answer the posts not seen yet early
 * where the targets' boxes allow it (their match records NEWRMA_POST_EARLY) */
void osc_newrma_complete_early(struct ompi_osc_newrma_module_t *module, const int *targets, size_t count);
void osc_newrma_complete_signal(struct ompi_osc_newrma_module_t *module, const int *targets, size_t count);
bool osc_newrma_completions_arrived(struct ompi_osc_newrma_module_t *module);

/* windows whose post ring can fill are drained from opal_progress
 * (osc_newrma_progress.c): whether this one is, and one drain (if nobody
 * else holds the window's lock); returns the work done */
bool osc_newrma_active_target_needs_progress(const struct ompi_osc_newrma_module_t *module);
int osc_newrma_active_target_progress(struct ompi_osc_newrma_module_t *module);

#endif
