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
 * osc/newrma: single copy -- another process's memory on the node read or
 * written with one process_vm_readv/writev (Linux cross-memory attach), no
 * help from that process.  The base mechanism of windows of user memory on
 * one node (osc_newrma_usermem.c); the others there (mailbox, shared copy,
 * relay) fall back to it.  See osc_newrma_single_copy.h.
 */

#include "ompi_config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/uio.h>

#include "ompi/constants.h"
#include "mpi.h"

#include "opal/util/sys_limits.h"

#include "osc_newrma.h"
#include "osc_newrma_single_copy.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

bool osc_newrma_single_copy_init(void)
{
    uint64_t probe_src = 0x6e6577726d61ull, probe_dst = 0;
    struct iovec local = { .iov_base = &probe_dst, .iov_len = sizeof(probe_dst) };
    struct iovec remote = { .iov_base = &probe_src, .iov_len = sizeof(probe_src) };

    /* reading ourselves needs no ptrace permission: no prctl here */
    if ((ssize_t) sizeof(probe_dst) != process_vm_readv(getpid(), &local, 1, &remote, 1, 0)) {
        return false;
    }
    return probe_dst == probe_src;
}

/* Under Yama ptrace_scope=1 a peer may only read or write our memory if we
 * say so.  Failure is harmless: the cross-process probe at window creation
 * decides. */
static void allow_ptracers(void)
{
#if defined(PR_SET_PTRACER) && defined(PR_SET_PTRACER_ANY)
    (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

void osc_newrma_single_copy_allow_peers(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    /* once per process; a second thread creating a window meanwhile waits
     * until it is done, so its peers too read only after it */
    (void) pthread_once(&once, allow_ptracers);
}

/* Drop `bytes` from the front of a scatter list. */
static void iov_consume(struct iovec **iov, size_t *count, size_t bytes)
{
    while (*count > 0 && bytes >= (*iov)->iov_len) {
        bytes -= (*iov)->iov_len;
        ++*iov;
        --*count;
    }
    if (*count > 0 && bytes > 0) {
        (*iov)->iov_base = (char *) (*iov)->iov_base + bytes;
        (*iov)->iov_len -= bytes;
    }
}

int osc_newrma_single_copy_transfer(pid_t pid, struct iovec *local, size_t nlocal,
                                    struct iovec *remote, size_t nremote, bool write)
{
    for (;;) {
        /* skipping empty entries first means a zero return is no progress */
        iov_consume(&local, &nlocal, 0);
        iov_consume(&remote, &nremote, 0);
        if (0 == nlocal || 0 == nremote) {
            break;
        }
        unsigned long nl = nlocal < IOV_MAX ? nlocal : IOV_MAX;
        unsigned long nr = nremote < IOV_MAX ? nremote : IOV_MAX;
        ssize_t done = write ? process_vm_writev(pid, local, nl, remote, nr, 0)
                             : process_vm_readv(pid, local, nl, remote, nr, 0);
        if (done < 0 && EINTR == errno) {
            continue;
        }
        if (done < 0) {
            return EFAULT == errno ? OMPI_ERR_RMA_RANGE : OMPI_ERROR;
        }
        if (0 == done) {
            return OMPI_ERROR;
        }
        iov_consume(&local, &nlocal, (size_t) done);
        iov_consume(&remote, &nremote, (size_t) done);
    }
    return OMPI_SUCCESS;
}

int osc_newrma_single_copy(pid_t pid, void *local, uint64_t remote, size_t len, bool write)
{
    struct iovec liov = { .iov_base = local, .iov_len = len };
    struct iovec riov = { .iov_base = (void *) (uintptr_t) remote, .iov_len = len };

    if (0 == len) {
        return OMPI_SUCCESS;
    }
    return osc_newrma_single_copy_transfer(pid, &liov, 1, &riov, 1, write);
}

/* ------------------------------------------------------------------ */
/* test failure points (osc_newrma_fail_at)                            */
/* ------------------------------------------------------------------ */

osc_newrma_fail_point_t osc_newrma_fail_armed = NEWRMA_FAIL_NONE;
static uint64_t fail_countdown;   /* copies at the armed point until the one that fails */
static bool fail_short;           /* it comes back short instead of failing */

static const char *const fail_point_names[NEWRMA_FAIL_POINTS] = {
    [NEWRMA_FAIL_SHARE_COPY_TARGET] = "share_copy_target", [NEWRMA_FAIL_SHARE_COPY_ORIGIN] = "share_copy_origin",
    [NEWRMA_FAIL_SHARE_REDUCE_READ] = "share_reduce_read", [NEWRMA_FAIL_SHARE_REDUCE_RESULT] = "share_reduce_result",
    [NEWRMA_FAIL_ACC_READ] = "acc_read", [NEWRMA_FAIL_ACC_WRITE] = "acc_write", [NEWRMA_FAIL_CAS_READ] = "cas_read",
    [NEWRMA_FAIL_CAS_WRITE] = "cas_write", [NEWRMA_FAIL_MOVE] = "move",
};

bool osc_newrma_fail_arm(const char *spec)
{
    char name[32], mode[8] = "";
    unsigned long long n = 0;

    osc_newrma_fail_armed = NEWRMA_FAIL_NONE;
    if (NULL == spec || '\0' == spec[0]) {
        return true;
    }
    if (sscanf(spec, "%31[a-z_]:%llu:%7s", name, &n, mode) < 2 || 0 == n
        || ('\0' != mode[0] && 0 != strcmp(mode, "short"))) {
        return false;
    }
    for (int p = NEWRMA_FAIL_NONE + 1 ; p < NEWRMA_FAIL_POINTS ; ++p) {
        if (0 == strcmp(name, fail_point_names[p])) {
            fail_countdown = n;
            fail_short = '\0' != mode[0];
            osc_newrma_fail_armed = (osc_newrma_fail_point_t) p;
            return true;
        }
    }
    return false;
}

/* How much of a copy gets through before the injected failure: up to the
 * last page boundary of the remote side at or before its middle, as the
 * kernel stops at the page it cannot reach (so an aligned element is never
 * torn). */
static size_t injected_part(uint64_t remote, size_t len)
{
    uint64_t page = (uint64_t) opal_getpagesize(), boundary = (remote + len / 2) & ~(page - 1);

    return boundary > remote ? (size_t) (boundary - remote) : 0;
}

int osc_newrma_single_copy_injected(osc_newrma_fail_point_t point, pid_t pid, void *local, uint64_t remote,
                                    size_t len, bool write)
{
    size_t half = injected_part(remote, len);
    int ret;

    /* threads: a lost count only moves the failure to another copy */
    if (0 == fail_countdown || 0 != --fail_countdown) {
        return osc_newrma_single_copy(pid, local, remote, len, write);
    }
    (void) osc_newrma_fetch_add_relaxed(&mca_osc_newrma_component.fail_injected, 1);
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "test failure point %s: a copy of %zu bytes %s after %zu",
                   fail_point_names[point], len, fail_short ? "comes back short" : "fails", half);
    ret = osc_newrma_single_copy(pid, local, remote, half, write);
    if (OMPI_SUCCESS != ret || !fail_short) {
        return OMPI_SUCCESS != ret ? ret : OMPI_ERROR;
    }
    return osc_newrma_single_copy(pid, (char *) local + half, remote + half, len - half, write);
}
