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
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "opal/prefetch.h"

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

/* Test failure points: the single copies whose failure part-way a shared
 * copy, a mailbox request or an accumulate must survive exactly
 * (docs/errors.md, "Failure points").  osc_newrma_fail_at = "POINT:N"
 * fails the Nth copy at POINT in each process after it moved its bytes up
 * to the remote page boundary nearest below its middle (as a fault at a
 * page does); "POINT:N:short" has it come back short there instead, the
 * rest then moved. */
typedef enum {
    NEWRMA_FAIL_NONE = 0,
    NEWRMA_FAIL_SHARE_COPY_TARGET,     /* a target's chunk of a shared put or get */
    NEWRMA_FAIL_SHARE_COPY_ORIGIN,     /* the origin's chunk of one (or its redo of the target's) */
    NEWRMA_FAIL_SHARE_REDUCE_READ,     /* a target reading a piece of a shared accumulate's elements */
    NEWRMA_FAIL_SHARE_REDUCE_RESULT,   /* a target writing a piece's old values to the origin */
    NEWRMA_FAIL_ACC_READ,              /* an origin reading a piece of the target (accumulate by single copy) */
    NEWRMA_FAIL_ACC_WRITE,             /* an origin writing the combined piece back */
    NEWRMA_FAIL_CAS_READ,              /* compare_and_swap by single copy: reading the old value */
    NEWRMA_FAIL_CAS_WRITE,             /* and writing the new one */
    NEWRMA_FAIL_MOVE,                  /* a contiguous put or get by single copy (alone, or taken back) */
    NEWRMA_FAIL_POINTS
} osc_newrma_fail_point_t;

/* The point armed by osc_newrma_fail_at (NEWRMA_FAIL_NONE: none, always so
 * outside tests). */
extern osc_newrma_fail_point_t osc_newrma_fail_armed;

/* Arm the point `spec` names ("POINT:N[:short]"; NULL or "": none).  False
 * if it names none. */
bool osc_newrma_fail_arm(const char *spec);

/* The armed point's copy: counted, and failed or cut short when it is the Nth. */
int osc_newrma_single_copy_injected(osc_newrma_fail_point_t point, pid_t pid, void *local, uint64_t remote,
                                    size_t len, bool write);

/* osc_newrma_single_copy at failure point `point`: one predictable branch
 * when no point is armed. */
static inline int osc_newrma_single_copy_at(osc_newrma_fail_point_t point, pid_t pid, void *local, uint64_t remote,
                                            size_t len, bool write)
{
    if (OPAL_UNLIKELY(point == osc_newrma_fail_armed)) {
        return osc_newrma_single_copy_injected(point, pid, local, remote, len, write);
    }
    return osc_newrma_single_copy(pid, local, remote, len, write);
}

END_C_DECLS

#endif /* OSC_NEWRMA_SINGLE_COPY_H */
