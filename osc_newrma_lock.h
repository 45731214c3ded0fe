/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: passive-target locks in the node segment (osc_newrma_lock.c).
 */

#ifndef OSC_NEWRMA_LOCK_H
#define OSC_NEWRMA_LOCK_H

#include <stdbool.h>

struct ompi_osc_newrma_module_t;

/* Take target's lock; blocks until granted.  Returns the holder's ticket
 * (an exclusive holder's queue node and whether it announced itself),
 * which the release needs back. */
int osc_newrma_lock_acquire(struct ompi_osc_newrma_module_t *module, int target, bool exclusive);
void osc_newrma_lock_release(struct ompi_osc_newrma_module_t *module, int target, bool exclusive,
                             int ticket);

/* Shared access to every rank at once, O(1). */
void osc_newrma_lock_all_acquire(struct ompi_osc_newrma_module_t *module);
void osc_newrma_lock_all_release(struct ompi_osc_newrma_module_t *module);

#endif
