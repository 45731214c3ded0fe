/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: passive-target locks in the node segment (osc_newrma_lock.c).
 */

#ifndef OSC_NEWRMA_LOCK_H
#define OSC_NEWRMA_LOCK_H

#include <stdbool.h>

struct ompi_osc_newrma_module_t;

/* Take the lock `held` describes (rank, exclusive; NOCHECK takes none and
 * only orders memory); blocks until granted.  Sets held->ticket (an
 * exclusive holder's queue node and whether it announced itself), which
 * the release needs back.  Both return OMPI_SUCCESS. */
int osc_newrma_lock_acquire(struct ompi_osc_newrma_module_t *module, struct osc_newrma_lock_record_t *held);
int osc_newrma_lock_release(struct ompi_osc_newrma_module_t *module, const struct osc_newrma_lock_record_t *held);

/* Shared access to every rank at once, O(1). */
void osc_newrma_lock_all_acquire(struct ompi_osc_newrma_module_t *module);
void osc_newrma_lock_all_release(struct ompi_osc_newrma_module_t *module);

#endif
