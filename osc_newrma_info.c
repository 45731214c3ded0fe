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
 * osc/newrma: the window info keys newrma honors.
 *
 * Each key is subscribed on the window (opal_infosubscribe): the callback
 * parses the user's value into the module and returns the value in effect,
 * which is what MPI_Win_get_info then reports.  Unknown or malformed values
 * are ignored, as the standard says, and the default is reported instead.
 * Keys that shape the window's memory (same_size, same_disp_unit,
 * alloc_shared_noncontig, mpi_minimum_memory_alignment) are fixed at creation: a later MPI_Win_set_info
 * cannot change them, and get_info keeps reporting the value in effect.
 */

#include "ompi_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/info.h"
#include "opal/util/info_subscriber.h"

#include "osc_newrma.h"
#include "osc_newrma_notify_entry.h"

static ompi_osc_newrma_module_t *module_of(opal_infosubscriber_t *obj)
{
    return osc_newrma_module((struct ompi_win_t *) obj);
}

static osc_newrma_info_str_t *bool_string(bool value)
{
    return value ? "true" : "false";
}

/* A boolean value as Open MPI 4.1's opal_info_value_to_bool reads it:
 * "true", "false" or an integer (nonzero: true), on every Open MPI version
 * (5.0 has no such function, and its opal_cstring_to_bool also takes "yes"
 * and "no"). */
static bool parse_bool(const char *value, bool *parsed)
{
    char *end = NULL;
    long number;

    if (0 == strcmp(value, "true") || 0 == strcmp(value, "false")) {
        *parsed = 't' == value[0];
        return true;
    }
    number = strtol(value, &end, 10);
    if (end == value || '\0' != *end) {
        return false;
    }
    *parsed = 0 != number;
    return true;
}

/* Parse a boolean; keep `*field` when the value is malformed. */
static osc_newrma_info_str_t *update_bool(bool *field, const char *value)
{
    bool parsed;

    if (NULL != value && parse_bool(value, &parsed)) {
        *field = parsed;
    }
    return bool_string(*field);
}

/* A window created with no_locks=true has no lock words in its segment: it
 * keeps the hint (locks stay refused) when MPI_Win_set_info takes it back.
 * Active-message windows lock by messages and can take it back. */
static osc_newrma_info_str_t *set_no_locks(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);

    (void) key;
    if (module->created && NEWRMA_PATH_AM != module->path && SIZE_MAX == module->shm.layout.lock_in_rank) {
        return bool_string(true);
    }
    return update_bool(&module->no_locks, value);
}

static osc_newrma_info_str_t *set_same_size(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);
    (void) key;
    return module->created ? bool_string(module->same_size) : update_bool(&module->same_size, value);
}

static osc_newrma_info_str_t *set_same_disp_unit(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);
    (void) key;
    return module->created ? bool_string(module->same_disp_unit)
                           : update_bool(&module->same_disp_unit, value);
}

static osc_newrma_info_str_t *set_alloc_shared_noncontig(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);
    (void) key;
    return module->created ? bool_string(module->alloc_shared_noncontig)
                           : update_bool(&module->alloc_shared_noncontig, value);
}

static osc_newrma_info_str_t *set_accumulate_ops(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);
    (void) key;
    if (NULL != value && 0 == strcmp(value, "same_op")) {
        module->acc_ops = NEWRMA_ACC_OPS_SAME_OP;
    } else if (NULL != value && 0 == strcmp(value, "same_op_no_op")) {
        module->acc_ops = NEWRMA_ACC_OPS_SAME_OP_NO_OP;
    }
    return NEWRMA_ACC_OPS_SAME_OP == module->acc_ops ? "same_op" : "same_op_no_op";
}

/* A positive decimal byte count, the whole string (no sign, no suffix). */
static bool parse_size(const char *value, size_t *parsed)
{
    char *end = NULL;
    unsigned long long number;

    if (NULL == value || '-' == value[0]) {
        return false;
    }
    number = strtoull(value, &end, 10);
    *parsed = (size_t) number;
    return end != value && '\0' == *end && number > 0;
}

/* mpi_accumulate_granularity (MPI 4.1): bytes one accumulate lock stripe
 * covers.  Fixed at creation: every process must map offsets to stripes the
 * same way (creation agrees on one value, osc_newrma_module.c). */
static osc_newrma_info_str_t *set_accumulate_granularity(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);
    size_t parsed;
    (void) key;
    if (!module->created) {
        module->acc_granularity = parse_size(value, &parsed) ? parsed : mca_osc_newrma_component.acc_granularity;
    }
    /* the window's own buffer: windows created or set at once by several
     * threads do not share it (opal copies the value before returning) */
    snprintf(module->acc_granularity_text, sizeof(module->acc_granularity_text), "%lu",
             (unsigned long) module->acc_granularity);
    return module->acc_granularity_text;
}

/* Report the granularity the ranks agreed on (the largest one given). */
int osc_newrma_info_set_granularity(ompi_osc_newrma_module_t *module)
{
    char text[32];
    snprintf(text, sizeof(text), "%lu", (unsigned long) module->acc_granularity);
    return opal_info_set(module->win->super.s_info, "mpi_accumulate_granularity", text);
}

/* Canonical spelling of every accumulate_ordering bit set. */
static char *const ordering_names[16] = {
    "none", "rar", "raw", "rar,raw", "war", "rar,war", "raw,war", "rar,raw,war",
    "waw", "rar,waw", "raw,waw", "rar,raw,waw", "war,waw", "rar,war,waw", "raw,war,waw",
    "rar,raw,war,waw",
};

/* "none" or a comma-separated list of rar, raw, war, waw; -1 if malformed. */
static int parse_ordering(const char *value)
{
    static const char *const words[4] = { "rar", "raw", "war", "waw" };
    int bits = 0;

    if (0 == strcmp(value, "none")) {
        return 0;
    }
    while (*value) {
        size_t len = strcspn(value, ",");
        int i;
        for (i = 0 ; i < 4 ; ++i) {
            if (3 == len && 0 == strncmp(value, words[i], 3)) {
                bits |= 1 << i;
                break;
            }
        }
        if (4 == i) {
            return -1;
        }
        value += len;
        if (',' == *value) {
            ++value;
        }
    }
    return 0 == bits ? -1 : bits;
}

static osc_newrma_info_str_t *set_accumulate_ordering(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    ompi_osc_newrma_module_t *module = module_of(obj);
    int bits = NULL != value ? parse_ordering(value) : -1;
    (void) key;
    if (bits >= 0) {
        module->acc_ordering = bits;
    }
    return ordering_names[module->acc_ordering];
}

/* osc_newrma_notify: where libmpix_newrma finds the component's entry
 * point (osc_newrma_notify_entry.h); read-only, whatever the user sets. */
static osc_newrma_info_str_t *set_notify_entry(opal_infosubscriber_t *obj, osc_newrma_info_str_t *key, osc_newrma_info_str_t *value)
{
    (void) obj;
    (void) key;
    (void) value;
    return osc_newrma_notify_entry_value();
}

int osc_newrma_info_subscribe(ompi_osc_newrma_module_t *module)
{
    static const struct {
        char *key;
        char *default_value;
        opal_key_interest_callback_t *callback;
    } keys[] = {
        { "no_locks", "false", set_no_locks },
        { "accumulate_ordering", "rar,raw,war,waw", set_accumulate_ordering },
        { "accumulate_ops", "same_op_no_op", set_accumulate_ops },
        { "same_size", "false", set_same_size },
        { "same_disp_unit", "false", set_same_disp_unit },
        { "alloc_shared_noncontig", "false", set_alloc_shared_noncontig },
        { "mpi_accumulate_granularity", "", set_accumulate_granularity },
        { OSC_NEWRMA_NOTIFY_INFO_KEY, "", set_notify_entry },
    };
    opal_infosubscriber_t *subscriber = &module->win->super;

    /* the callbacks read the user's values from the window's own copy of
     * the creation info (ompi_win_t::super.s_info) */
    module->acc_ordering = NEWRMA_ACC_ORDER_ALL;
    module->acc_ops = NEWRMA_ACC_OPS_SAME_OP_NO_OP;
    for (size_t i = 0 ; i < sizeof(keys) / sizeof(keys[0]) ; ++i) {
        int ret = opal_infosubscribe_subscribe(subscriber, keys[i].key, keys[i].default_value,
                                               keys[i].callback);
        if (OPAL_SUCCESS != ret) {
            return ret;
        }
        /* Open MPI 4 keeps the user's original string as "__IN_<key>", and
         * MPI_Win_get_info reports that one in preference to the value in
         * effect; drop it so get_info reports what newrma honors.  (A later
         * MPI_Win_set_info saves it again after our callback, which a
         * component cannot prevent in Open MPI 4.1: README, "Selecting and
         * tuning".  Open MPI 5 keeps no original: osc_newrma_compat.h) */
        osc_newrma_info_forget_original(subscriber->s_info, keys[i].key);
    }
    return OMPI_SUCCESS;
}

/* mpi_minimum_memory_alignment (MPI 4.0): the least alignment of the memory
 * MPI_Win_allocate and MPI_Win_allocate_shared return.  A power of two
 * above the component's own alignment (a cache line, opal_cache_line_size)
 * is honored; anything else (not a whole decimal number, zero, negative,
 * not a power of two, at or below ours) is ignored, as Open MPI 5.0's osc
 * components ignore values below their minimum.  Read at creation, not
 * subscribed (osc_newrma_compat.h, osc_newrma_info_get: the key is too long
 * for 4.1's subscriptions); the window's info then holds the alignment in
 * effect, which MPI_Win_get_info reports. */
int osc_newrma_info_read_alignment(ompi_osc_newrma_module_t *module)
{
    static const char key[] = "mpi_minimum_memory_alignment";
    opal_info_t *info = module->win->super.s_info;
    size_t own = mca_osc_newrma_component.cacheline, parsed;
    char value[OPAL_MAX_INFO_VAL + 1];

    module->memory_alignment = own;
    if (NULL != info && osc_newrma_info_get(info, key, value, sizeof(value)) && parse_size(value, &parsed)
        && 0 == (parsed & (parsed - 1)) && parsed > own) {
        module->memory_alignment = parsed;
    }
    if (NULL == info) {
        return OMPI_SUCCESS;
    }
    snprintf(value, sizeof(value), "%lu", (unsigned long) module->memory_alignment);
    return opal_info_set(info, key, value);
}
