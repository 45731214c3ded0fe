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
 * osc/newrma: single-copy access to another process's memory on the node
 * (Linux cross-memory attach, process_vm_readv/writev).  This is how
 * MPI_Win_create and MPI_Win_create_dynamic windows, whose memory the user
 * allocated privately, are reached without the target's help.
 */

#ifndef OSC_NEWRMA_SINGLE_COPY_H
#define OSC_NEWRMA_SINGLE_COPY_H

#include "ompi_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

BEGIN_C_DECLS

/* Check that the syscalls exist and work on ourselves.  Called once at
 * component init. */
bool osc_newrma_single_copy_init(void);

/* Let peers reach our memory (Yama ptrace_scope 1: PR_SET_PTRACER_ANY), once
 * per process; called by every process of a window that may take the
 * user-memory path, before the creation's allgather after which peers probe
 * it (osc_newrma_module.c). */
void osc_newrma_single_copy_allow_peers(void);

/* Move bytes between local and remote scatter lists of the same total
 * length.  Both arrays are consumed (modified).  A remote address that is
 * not mapped gives OMPI_ERR_RMA_RANGE, any other failure OMPI_ERROR. */
int osc_newrma_single_copy_transfer(pid_t pid, struct iovec *local, size_t nlocal,
                                    struct iovec *remote, size_t nremote, bool write);

/* Convenience for one contiguous block each side. */
int osc_newrma_single_copy(pid_t pid, void *local, uint64_t remote, size_t len, bool write);

END_C_DECLS

#endif /* OSC_NEWRMA_SINGLE_COPY_H */
