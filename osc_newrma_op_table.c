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
 * osc/newrma: a window's operation table (mpich-new-rma-design.txt,
 * "Data structures"), kept at the origin: the slot array of target
 * elements, one per target the origin is in an epoch with (its lock and
 * epoch states, and on the active-message path its queue of operations).
 *
 * A fixed number of slots (MCA parameter osc_newrma_slots) per window; a
 * target element lives in slot rank % slots.  Memory is O(slots + targets the
 * origin is in an epoch with), never O(communicator size).
 */

#include "ompi_config.h"

#include <stddef.h>
#include <string.h>

#include "osc_newrma.h"

/* Every field but the queue of pending operations, which an element always
 * comes back to the pool without (the active-message path drains it): one
 * memset of the fields after it, whose starting values are all zero but the
 * rank's (a field added to the element is reset without a line here). */
static void target_reset(osc_newrma_target_t *target)
{
    _Static_assert(offsetof(osc_newrma_target_t, pending) < offsetof(osc_newrma_target_t, rank),
                   "the reset starts at rank and must not clear the pending list");
    _Static_assert(0 == NEWRMA_LOCK_CALLED && 0 == OMPI_SUCCESS, "a reset element's states are zero");
    memset(&target->rank, 0, sizeof(*target) - offsetof(osc_newrma_target_t, rank));
    target->rank = -1;
}

static void target_construct(osc_newrma_target_t *target)
{
    OBJ_CONSTRUCT(&target->pending, opal_list_t);
    target_reset(target);
}

OBJ_CLASS_INSTANCE(osc_newrma_target_t, opal_free_list_item_t, target_construct, NULL);

/* The slot array is made by the window's first target element: a window
 * used only in fence, PSCW and lock_all epochs (and any window until its
 * first per-target epoch) does without it -- 64 lists are 4 KiB of the
 * window's heap.  Until then (the module starts zeroed) slots is NULL and
 * num_slots 0, so loops over the slots do nothing. */
static int slots_make(ompi_osc_newrma_module_t *module)
{
    /* a power of two (the component rounds it): the slot of a rank is a
     * mask, not a division, on every lock and every operation's epoch check */
    unsigned int n = mca_osc_newrma_component.slots;
    opal_list_t *slots = malloc(sizeof(opal_list_t) * n);

    if (NULL == slots) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (unsigned int i = 0 ; i < n ; ++i) {
        OBJ_CONSTRUCT(&slots[i], opal_list_t);
    }
    module->slots = slots;
    module->num_slots = n;
    return OMPI_SUCCESS;
}

/* An element for the next target: the spare if there is one.  A process
 * that locks one target after another (the common passive-target loop)
 * reuses one element without a trip through the component's pool. */
static osc_newrma_target_t *element_get(ompi_osc_newrma_module_t *module)
{
    osc_newrma_target_t *target = module->spare_target;

    if (NULL != target) {
        module->spare_target = NULL;
        return target;
    }
    return (osc_newrma_target_t *) osc_newrma_free_list_get(&mca_osc_newrma_component.targets);
}

static void element_put(ompi_osc_newrma_module_t *module, osc_newrma_target_t *target)
{
    if (NULL == module->spare_target) {
        module->spare_target = target;
        return;
    }
    osc_newrma_free_list_return(&mca_osc_newrma_component.targets, &target->super);
}

void osc_newrma_slots_fini(ompi_osc_newrma_module_t *module)
{
    if (NULL != module->spare_target) {
        osc_newrma_free_list_return(&mca_osc_newrma_component.targets, &module->spare_target->super);
        module->spare_target = NULL;
    }
    if (NULL == module->slots) {
        return;
    }
    for (unsigned int i = 0 ; i < module->num_slots ; ++i) {
        opal_list_item_t *item;
        while (NULL != (item = opal_list_remove_first(&module->slots[i]))) {
            osc_newrma_free_list_return(&mca_osc_newrma_component.targets, (opal_free_list_item_t *) item);
        }
        OBJ_DESTRUCT(&module->slots[i]);
    }
    free(module->slots);
    module->slots = NULL;
    module->num_slots = 0;
}

static opal_list_t *slot_of(ompi_osc_newrma_module_t *module, int rank)
{
    return &module->slots[(unsigned int) rank & (module->num_slots - 1)];
}

osc_newrma_target_t *osc_newrma_target_find(ompi_osc_newrma_module_t *module, int rank)
{
    osc_newrma_target_t *target;

    if (OPAL_UNLIKELY(NULL == module->slots)) {
        return NULL;
    }
    OPAL_LIST_FOREACH(target, slot_of(module, rank), osc_newrma_target_t) {
        if (target->rank == rank) {
            return target;
        }
    }
    return NULL;
}

osc_newrma_target_t *osc_newrma_target_add(ompi_osc_newrma_module_t *module, int rank)
{
    osc_newrma_target_t *target;

    if (OPAL_UNLIKELY(NULL == module->slots) && OMPI_SUCCESS != slots_make(module)) {
        return NULL;
    }
    target = element_get(module);
    if (NULL == target) {
        return NULL;
    }
    target_reset(target);
    target->rank = rank;
    opal_list_append(slot_of(module, rank), &target->super.super);
    return target;
}

void osc_newrma_target_remove(ompi_osc_newrma_module_t *module, osc_newrma_target_t *target)
{
    opal_list_remove_item(slot_of(module, target->rank), &target->super.super);
    element_put(module, target);
}

int osc_newrma_int_compare(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}
