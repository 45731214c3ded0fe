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
 * osc/newrma: the differences between the Open MPI versions newrma builds
 * against (4.1 and 5.0), keyed on Open MPI's version macros.  This is the
 * only place that tests OMPI_MAJOR_VERSION; everything else uses the names
 * below.
 *
 *  - OSC_NEWRMA_DECLSPEC: what the component exports (4.1:
 *    OMPI_MODULE_DECLSPEC; 5.0 has only OMPI_DECLSPEC);
 *  - the threads headers (5.0 moved opal/threads/ to opal/mca/threads/);
 *  - OSC_NEWRMA_SHMEM_HDR_SIZE: the header opal/shmem puts in front of a
 *    segment's memory (4.1: opal_shmem_seg_hdr_t; 5.0 segments have none);
 *  - osc_newrma_info_str_t: the characters info-subscriber callbacks take
 *    and return (5.0: const char);
 *  - osc_newrma_info_forget_original: 4.1's opal_infosubscribe_subscribe
 *    keeps the user's string of a subscribed key as "__IN_<key>", which
 *    MPI_Win_get_info reports in preference to the value in effect: it is
 *    deleted.  5.0 stores the callback's answer under the key itself and
 *    saves no original: nothing to do;
 *  - osc_newrma_info_get: a key's value copied into a buffer (4.1's
 *    opal_info_get copies, 5.0's hands out a reference-counted string).
 *    For keys newrma reads without subscribing: 4.1 subscribes only keys
 *    of at most 27 characters (it saves "__IN_<key>"), and
 *    mpi_minimum_memory_alignment has 28.
 */

#ifndef OSC_NEWRMA_COMPAT_H
#define OSC_NEWRMA_COMPAT_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stdio.h>

#include "opal/mca/shmem/shmem.h"
#include "opal/util/info.h"
#include "opal/util/info_subscriber.h"

#if OMPI_MAJOR_VERSION >= 5

#include "opal/mca/threads/mutex.h"
#include "opal/mca/threads/threads.h"

#define OSC_NEWRMA_DECLSPEC OMPI_DECLSPEC
#define OSC_NEWRMA_SHMEM_HDR_SIZE ((size_t) 0)

typedef const char osc_newrma_info_str_t;

static inline void osc_newrma_info_forget_original(opal_info_t *info, const char *key)
{
    (void) info;
    (void) key;
}

static inline bool osc_newrma_info_get(opal_info_t *info, const char *key, char *value, size_t len)
{
    opal_cstring_t *string = NULL;
    int flag = 0;

    if (OPAL_SUCCESS != opal_info_get(info, key, &string, &flag) || !flag) {
        return false;
    }
    snprintf(value, len, "%s", string->string);
    OBJ_RELEASE(string);
    return true;
}

#else /* Open MPI 4.x */

#include "opal/threads/mutex.h"
#include "opal/threads/threads.h"

#define OSC_NEWRMA_DECLSPEC OMPI_MODULE_DECLSPEC
#define OSC_NEWRMA_SHMEM_HDR_SIZE sizeof(opal_shmem_seg_hdr_t)

typedef char osc_newrma_info_str_t;

static inline void osc_newrma_info_forget_original(opal_info_t *info, const char *key)
{
    char saved[OPAL_MAX_INFO_KEY + 1];

    snprintf(saved, sizeof(saved), "%s%s", OPAL_INFO_SAVE_PREFIX, key);
    (void) opal_info_delete(info, saved);
}

static inline bool osc_newrma_info_get(opal_info_t *info, const char *key, char *value, size_t len)
{
    int flag = 0;

    return OPAL_SUCCESS == opal_info_get(info, (char *) key, (int) len - 1, value, &flag) && flag;
}

#endif

#endif /* OSC_NEWRMA_COMPAT_H */
