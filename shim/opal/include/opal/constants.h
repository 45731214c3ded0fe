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
 * newrma build shim (out-of-tree builds only).
 *
 * Debian's libopenmpi-dev installs Open MPI's "opal/include/opal/constants.h"
 * as "opal/constants.h", but installed headers (e.g. opal/mca/common/ucx)
 * still include it by its source-tree path.  Forward to the installed name.
 */
#ifndef NEWRMA_SHIM_OPAL_INCLUDE_OPAL_CONSTANTS_H
#define NEWRMA_SHIM_OPAL_INCLUDE_OPAL_CONSTANTS_H
#include "opal/constants.h"
#endif
