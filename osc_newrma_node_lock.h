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
 * osc/newrma: the node lock of a window spanning nodes, and its proxy
 * (docs/mixed-windows.md, "Built: the node lock"; osc_newrma_node_lock,
 * on by default).
 *
 * Each process of a node has a reader/writer lock word in the node
 * route's segment (one cache line each, after the stripes).  A node-local
 * origin's MPI_Win_lock of a peer on its node takes that word itself, when
 * its first operation needs the lock (lazy, in lock-call order, as the
 * active-message path takes its locks), and its unlock releases it: no
 * message either way.  Remote origins -- and the target itself and lock_all
 * holders, which lock through the target's handler -- are represented by the
 * handler: while its lock queue has holders, it holds the word as their
 * *proxy*, in the same mode (one shared hold for every shared holder).  So
 * one lock per target excludes both kinds of origins.
 *
 * The handler never waits: it tries the word when it would grant, and if
 * the word is taken it leaves the request queued and tries again from
 * progress.  A node-local origin waits by polling the transports (the
 * holder it waits for may be the proxy, released only by a packet its own
 * process must serve, or a process that waits for a packet of ours).
 *
 * Word: reader count << 16 | waiting node-local writers << 2 | PROXY_WANTS
 * | WRITER.  Fairness: node-local readers enter only while no writer holds
 * or waits (writer preference); node-local origins step back while the
 * proxy announces that it waits (PROXY_WANTS, set when a holder blocked
 * it); the proxy lets waiting node-local writers in first before it
 * announces, and takes no new shared holder in while one waits.  So
 * neither side starves the other.
 */

#ifndef OSC_NEWRMA_NODE_LOCK_H
#define OSC_NEWRMA_NODE_LOCK_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stdint.h>

BEGIN_C_DECLS

struct ompi_osc_newrma_module_t;
struct osc_newrma_target_t;

/* Does the node lock apply to MPI_Win_lock of `t` in this epoch (a
 * per-target lock, not NOCHECK, of a peer on our node other than
 * ourselves, in a window whose node agreed to the node lock)? */
bool osc_newrma_node_lock_applies(struct ompi_osc_newrma_module_t *module, const struct osc_newrma_target_t *t);

/* Take `t`'s node lock in t->lock_type, polling the transports while it is
 * held by another (AM lock held; released by progress turns); `t` is then
 * GRANTED and node_locked. */
void osc_newrma_node_lock_take(struct ompi_osc_newrma_module_t *module, struct osc_newrma_target_t *t);

/* Release it (its operations are complete: they were loads and stores). */
void osc_newrma_node_lock_give(struct ompi_osc_newrma_module_t *module, struct osc_newrma_target_t *t);

/* The proxy (target side, AM lock held).  May the handler grant a lock of
 * this mode (exclusive or shared) now, as far as the node is concerned?
 * Yes if the proxy holds the word in that mode already or takes it now;
 * `queued`: the request waits in the handler's queue if not, so the proxy
 * announces itself and tries again from progress. */
bool osc_newrma_node_proxy_take(struct ompi_osc_newrma_module_t *module, bool exclusive, bool queued);
/* The handler's last holder left. */
void osc_newrma_node_proxy_give(struct ompi_osc_newrma_module_t *module);
/* Windows whose proxy waits for the word (progress tries them again). */
bool osc_newrma_node_proxy_waiting(void);
bool osc_newrma_node_proxy_waits(const struct ompi_osc_newrma_module_t *module);
/* Window free: the proxy holds nothing and waits for nothing any more. */
void osc_newrma_node_proxy_fini(struct ompi_osc_newrma_module_t *module);

END_C_DECLS

#endif /* OSC_NEWRMA_NODE_LOCK_H */
