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
 * osc/newrma: node-path windows served from opal_progress
 * (osc_newrma_progress.c).
 */

#ifndef OSC_NEWRMA_PROGRESS_H
#define OSC_NEWRMA_PROGRESS_H

struct ompi_osc_newrma_module_t;

/* add: list the window if it needs the progress engine (a post ring that
 * can fill, an assist mailbox); remove: unlist it (safe if never listed) */
int osc_newrma_progress_window_add(struct ompi_osc_newrma_module_t *module);
void osc_newrma_progress_window_remove(struct ompi_osc_newrma_module_t *module);
void osc_newrma_progress_fini(void);
/* one answer of `module`'s assist mailbox from the window's own wait loop,
 * serialized with the progress callback (which may run in another thread) */
int osc_newrma_progress_serve(struct ompi_osc_newrma_module_t *module);

#endif
