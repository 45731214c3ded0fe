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
 * LD_PRELOAD shim for contrib/cma-refused-tests.sh: process_vm_readv and
 * process_vm_writev fail with EPERM towards any other process (what Yama's
 * ptrace_scope, seccomp or a missing CAP_SYS_PTRACE do), and work on the
 * calling process itself -- so osc/newrma's start-up probe passes and the
 * cross-process probe at window creation fails: the case where create and
 * dynamic windows fall back to the active-message path over the node's
 * FIFOs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
                         const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
    if (pid != getpid()) {
        errno = EPERM;
        return -1;
    }
    return syscall(SYS_process_vm_readv, pid, local, nlocal, remote, nremote, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long nlocal,
                          const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
    if (pid != getpid()) {
        errno = EPERM;
        return -1;
    }
    return syscall(SYS_process_vm_writev, pid, local, nlocal, remote, nremote, flags);
}
