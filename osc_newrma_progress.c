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
 * osc/newrma: node-path windows this process serves from opal_progress.
 *
 * Two kinds of work need the process's help while it is anywhere in MPI
 * (a barrier, a receive, another window's synchronization):
 *  - active target (osc_newrma_active_target.c): a post ring that can
 *    fill, whose posters wait for the owner to take its notices, and a
 *    fence's dissemination rounds, which the others wait for this process
 *    to pass on after it arrived (a NOPRECEDE fence returns at once);
 *  - the mailbox of a window of user memory on one node
 *    (osc_newrma_mailbox.c): origins hand small operations to the owner
 *    (falling back to single copy when nobody answers), and post shared
 *    copies and relays there for it to join (osc_newrma_shared_copy.c,
 *    osc_newrma_relay.c).  Progress also refreshes the owner's presence
 *    stamp, which tells origins it is inside MPI (a clock reading every
 *    NEWRMA_STAMP_EVERY calls).
 * One list and one progress callback for both, registered while the list is
 * not empty.  The callback never waits: it takes the list's lock with a try
 * (a thread freeing a window may hold it) and each piece of work is a try.
 */

#include "ompi_config.h"

#include "opal/runtime/opal_progress.h"

#include "osc_newrma.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_progress.h"
#include "osc_newrma_active_target.h"

typedef struct {
    opal_list_item_t super;
    ompi_osc_newrma_module_t *module;
    bool drain;                      /* its post ring can fill, or its fence passes rounds on */
    bool assist;                     /* it serves its mailbox */
} served_window_t;
static OBJ_CLASS_INSTANCE(served_window_t, opal_list_item_t, NULL, NULL);

static opal_list_t served_windows;
/* statically initialized: threads creating their first windows at once
 * race to build the list, and this lock decides who does */
static opal_mutex_t served_lock = OPAL_MUTEX_STATIC_INIT;
static bool served_ready = false;
static unsigned int served_assist;       /* windows serving their mailbox */
static unsigned int progress_calls;
static bool served_busy;                 /* single-threaded: serving already (a wait inside
                                          * serving may call opal_progress) */

/* Serve the list, or not now: with threads, whoever holds its lock (a
 * thread adding or freeing a window, or serving); without, a serving call
 * further up this stack.  A progress loop calls this all the time: a
 * mutex's try and release were a third of a waiting target's loop, and
 * the answer to a compare-and-swap waits for the loop to come round. */
static inline bool served_enter(void)
{
    if (opal_using_threads()) {
        return 0 == opal_mutex_trylock(&served_lock);
    }
    if (served_busy) {
        return false;
    }
    served_busy = true;
    return true;
}

static inline void served_leave(void)
{
    if (opal_using_threads()) {
        opal_mutex_unlock(&served_lock);
    } else {
        served_busy = false;
    }
}

static int served_progress(void)
{
    served_window_t *item;
    uint64_t now = 0;
    int count = 0;

    if (!served_enter()) {
        return 0;
    }
    if (served_assist > 0 && 0 == (++progress_calls % NEWRMA_STAMP_EVERY)) {
        now = osc_newrma_clock_ns();
    }
    OPAL_LIST_FOREACH(item, &served_windows, served_window_t) {
        if (item->drain) {
            count += osc_newrma_active_target_progress(item->module);
        }
        if (item->assist) {
            count += osc_newrma_mailbox_serve(item->module, now);
        }
    }
    served_leave();
    return count;
}

int osc_newrma_progress_serve(ompi_osc_newrma_module_t *module)
{
    int count;

    if (!served_enter()) {
        return 0;
    }
    count = osc_newrma_mailbox_serve(module, 0);
    served_leave();
    return count;
}

int osc_newrma_progress_window_add(ompi_osc_newrma_module_t *module)
{
    bool drain = osc_newrma_active_target_needs_progress(module), assist = osc_newrma_mailbox_served(module);
    served_window_t *item;
    int ret = OMPI_SUCCESS;

    if (!drain && !assist) {
        return OMPI_SUCCESS;
    }
    item = OBJ_NEW(served_window_t);
    if (NULL == item) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    item->module = module;
    item->drain = drain;
    item->assist = assist;
    /* (un)registering under the lock: a window added while another thread
     * removes the last one must not be left without the callback (the
     * callback only tries the lock, so it never waits for us) */
    opal_mutex_lock(&served_lock);
    if (!served_ready) {
        OBJ_CONSTRUCT(&served_windows, opal_list_t);
        served_ready = true;
    }
    opal_list_append(&served_windows, &item->super);
    served_assist += assist;
    if (1 == opal_list_get_size(&served_windows)) {
        ret = opal_progress_register(served_progress);
    }
    opal_mutex_unlock(&served_lock);
    if (assist) {
        /* present from now on, not only after the first progress calls */
        (void) osc_newrma_mailbox_serve(module, osc_newrma_clock_ns());
    }
    return ret;
}

void osc_newrma_progress_window_remove(ompi_osc_newrma_module_t *module)
{
    served_window_t *item, *next;

    opal_mutex_lock(&served_lock);
    if (served_ready) {
        OPAL_LIST_FOREACH_SAFE(item, next, &served_windows, served_window_t) {
            if (item->module == module) {
                opal_list_remove_item(&served_windows, &item->super);
                served_assist -= item->assist;
                OBJ_RELEASE(item);
                if (0 == opal_list_get_size(&served_windows)) {
                    (void) opal_progress_unregister(served_progress);
                }
            }
        }
    }
    opal_mutex_unlock(&served_lock);
}

void osc_newrma_progress_fini(void)
{
    opal_mutex_lock(&served_lock);
    if (served_ready) {
        OPAL_LIST_DESTRUCT(&served_windows);
        served_ready = false;
    }
    opal_mutex_unlock(&served_lock);
}
