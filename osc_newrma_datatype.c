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
 * osc/newrma: scatter lists of datatypes.  See osc_newrma_datatype.h.
 */

#include "ompi_config.h"

#include <stdlib.h>

#include "opal/datatype/opal_convertor.h"

#include "osc_newrma_datatype.h"

int osc_newrma_datatype_iovecs(struct ompi_datatype_t *dt, int count, const void *addr,
                           const osc_newrma_layout_t *layout, struct iovec *single,
                           struct iovec **iov, size_t *n)
{
    opal_convertor_t convertor;
    size_t capacity = 64, used = 0;
    struct iovec *list;
    int done = 0;

    if (layout->contiguous) {
        single->iov_base = (char *) addr + layout->gap;
        single->iov_len = layout->bytes;
        *iov = single;
        *n = 1;
        return OMPI_SUCCESS;
    }
    list = malloc(capacity * sizeof(struct iovec));
    if (NULL == list) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&convertor, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, (size_t) count,
                                             addr, 0, &convertor);
    while (!done) {
        uint32_t chunk;
        size_t length;
        if (used == capacity) {
            struct iovec *grown = realloc(list, 2 * capacity * sizeof(struct iovec));
            if (NULL == grown) {
                OBJ_DESTRUCT(&convertor);
                free(list);
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            list = grown;
            capacity *= 2;
        }
        chunk = (uint32_t) (capacity - used);
        done = opal_convertor_raw(&convertor, list + used, &chunk, &length);
        used += chunk;
    }
    OBJ_DESTRUCT(&convertor);
    *iov = list;
    *n = used;
    return OMPI_SUCCESS;
}
