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
 * Open MPI 5.0's single-copy framework (opal/mca/smsc) against the copy
 * newrma makes itself for MPI_Win_create / MPI_Win_create_dynamic windows
 * (osc_newrma_single_copy.c: process_vm_readv/writev with a scatter list,
 * no Open MPI layer in between), between 2 ranks on one node:
 *
 *   own_read   one process_vm_readv for the whole copy
 *   smsc_read  MCA_SMSC_CALL(copy_from, ...), one call a contiguous block
 *   own_write  one process_vm_writev
 *   smsc_write MCA_SMSC_CALL(copy_to, ...), one call a block
 *
 * for contiguous copies of 8 B to 4 MiB and strided ones (64 blocks of 8 B
 * to 4 KiB at the peer, as a vector datatype gives), in microseconds per
 * copy: medians over batches; the four methods take turns within each
 * batch, each batch starting with the next one, so that a load change on
 * the machine or a cache left warm by the previous method hits them alike.
 * It also prints which smsc component Open MPI selected and whether it can
 * map a peer's memory (MCA_SMSC_FEATURE_CAN_MAP: load/store, XPMEM only).
 * Every copy's bytes are checked; a wrong byte or a failed call makes the
 * program exit 1.
 *
 * Open MPI 5.0 only (smsc does not exist in 4.1): built against 5.0's
 * internal headers by bench/smsc_copy.sh, which runs it in the Debian 13
 * root (docs/ompi5.md, "Single copy: smsc").
 *
 *   mpirun -np 2 smsc_copy [batches]     (default 15)
 */
#define _GNU_SOURCE
#include "opal_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "opal/mca/smsc/base/base.h"
#include "opal/mca/smsc/smsc.h"

#include "bench_common.h"

#define MAX_BYTES (4u << 20)
#define BATCH_BYTES (16u << 20)   /* bytes one method moves per batch, at most */
#define MAX_BATCH_COPIES 2000
#define MAX_BATCHES 64

enum method { OWN_READ, SMSC_READ, OWN_WRITE, SMSC_WRITE, METHODS };
static const char *const method_name[METHODS] = { "own_read", "smsc_read", "own_write", "smsc_write" };
/* the last one is MAX_BYTES: the target checks all its sink was written */
static const size_t sizes[] = { 8, 64, 512, 4096, 32768, 262144, 1u << 20, MAX_BYTES };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
/* strided copies: MAX_BLOCKS blocks of these sizes */
#define MAX_BLOCKS 64
static const size_t strided_blocks[] = { 8, 64, 512, 4096 };
#define NSTRIDED (sizeof(strided_blocks) / sizeof(strided_blocks[0]))

/* What the origin needs to reach the target's memory. */
struct peer {
    pid_t pid;
    char *source;               /* the target's bytes to read (pattern 2) */
    char *sink;                 /* where the origin writes (pattern 1) */
    mca_smsc_endpoint_t *endpoint;
};

/* The byte pattern of rank r at offset i: no two ranks and no nearby
 * offsets alike, so that a copy from the wrong place shows. */
static char pattern_byte(int r, size_t i)
{
    return (char) ((i * 131 + (size_t) r * 17 + 1) & 0xff);
}

static void fill_pattern(char *buf, size_t n, int r)
{
    for (size_t i = 0; i < n; ++i) {
        buf[i] = pattern_byte(r, i);
    }
}

static size_t pattern_mismatch(const char *buf, size_t n, int r)
{
    for (size_t i = 0; i < n; ++i) {
        if (buf[i] != pattern_byte(r, i)) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* A copy of `blocks` blocks of `block` bytes, `stride` bytes apart on the
 * peer and packed here: contiguous when blocks is 1.  Derived datatypes
 * make strided copies; newrma moves them as scatter lists, one system call
 * for up to IOV_MAX blocks (osc_newrma_usermem.c), where smsc's copy_to and
 * copy_from take one contiguous region a call. */
struct shape {
    size_t block;
    int blocks;
    size_t stride;
};

/* newrma's single copy: one process_vm_readv/writev for the whole scatter
 * list (as osc_newrma_single_copy_transfer; on valid memory the kernel moves
 * all of it, so anything short is a failure here). */
static int own_copy(pid_t pid, char *local, char *remote, struct shape sh, int write)
{
    struct iovec l = { .iov_base = local, .iov_len = sh.block * (size_t) sh.blocks };
    struct iovec r[MAX_BLOCKS];
    for (int k = 0; k < sh.blocks; ++k) {
        r[k] = (struct iovec) { .iov_base = remote + (size_t) k * sh.stride, .iov_len = sh.block };
    }
    ssize_t done = write ? process_vm_writev(pid, &l, 1, r, (unsigned long) sh.blocks, 0)
                         : process_vm_readv(pid, &l, 1, r, (unsigned long) sh.blocks, 0);
    return done == (ssize_t) l.iov_len ? 0 : -1;
}

/* smsc: one call a block */
static int smsc_copy(mca_smsc_endpoint_t *endpoint, char *local, char *remote, struct shape sh, int write)
{
    for (int k = 0; k < sh.blocks; ++k) {
        char *mine = local + (size_t) k * sh.block, *theirs = remote + (size_t) k * sh.stride;
        int rc = write ? MCA_SMSC_CALL(copy_to, endpoint, mine, theirs, sh.block, NULL)
                       : MCA_SMSC_CALL(copy_from, endpoint, mine, theirs, sh.block, NULL);
        if (OPAL_SUCCESS != rc) {
            return -1;
        }
    }
    return 0;
}

static int copy_once(enum method m, const struct peer *p, char *local, struct shape sh)
{
    switch (m) {
    case OWN_READ:
        return own_copy(p->pid, local, p->source, sh, 0);
    case OWN_WRITE:
        return own_copy(p->pid, local, p->sink, sh, 1);
    case SMSC_READ:
        return smsc_copy(p->endpoint, local, p->source, sh, 0);
    case SMSC_WRITE:
        return smsc_copy(p->endpoint, local, p->sink, sh, 1);
    default:
        return -1;
    }
}

/* Seconds per copy of `copies` copies, or a negative value if one failed. */
static double time_copies(enum method m, const struct peer *p, char *local, struct shape sh, int copies)
{
    double t0 = bench_now();
    for (int i = 0; i < copies; ++i) {
        if (0 != copy_once(m, p, local, sh)) {
            return -1.0;
        }
    }
    return (bench_now() - t0) / copies;
}

/* The packed bytes of a shape as they are at the peer in rank r's pattern
 * (what a read must give, and what a write sends: the sink then holds
 * pattern 1 wherever it was written). */
static void fill_packed(char *buf, struct shape sh, int r)
{
    for (int k = 0; k < sh.blocks; ++k) {
        for (size_t i = 0; i < sh.block; ++i) {
            buf[(size_t) k * sh.block + i] = pattern_byte(r, (size_t) k * sh.stride + i);
        }
    }
}

/* First wrong byte of a read, or SIZE_MAX. */
static size_t packed_mismatch(const char *buf, struct shape sh, int r)
{
    for (int k = 0; k < sh.blocks; ++k) {
        for (size_t i = 0; i < sh.block; ++i) {
            if (buf[(size_t) k * sh.block + i] != pattern_byte(r, (size_t) k * sh.stride + i)) {
                return (size_t) k * sh.block + i;
            }
        }
    }
    return SIZE_MAX;
}

/* The selected component (the first of the framework's list after
 * mca_smsc_base_select, which sorts it by priority). */
static const char *selected_component_name(void)
{
    opal_list_t *list = &opal_smsc_base_framework.framework_components;
    if (NULL == mca_smsc || opal_list_is_empty(list)) {
        return "none";
    }
    mca_base_component_list_item_t *cli = (mca_base_component_list_item_t *) opal_list_get_first(list);
    return cli->cli_component->mca_component_name;
}

/* One row of medians for a shape; 0, or 1 after a failed or wrong copy. */
static int measure_shape(struct peer *p, char *local, struct shape sh, int batches)
{
    static double samples[METHODS][MAX_BATCHES];
    size_t bytes = sh.block * (size_t) sh.blocks, fit = BATCH_BYTES / bytes;
    int copies = fit < 4 ? 4 : fit > MAX_BATCH_COPIES ? MAX_BATCH_COPIES : (int) fit;

    for (int b = 0; b < batches; ++b) {
        for (int k = 0; k < METHODS; ++k) {
            int m = (k + b) % METHODS;   /* each method first in turn */
            bool write = OWN_WRITE == m || SMSC_WRITE == m;
            if (write) {
                fill_packed(local, sh, 1);
            } else {
                memset(local, 0, bytes);
            }
            samples[m][b] = time_copies(m, p, local, sh, copies) * 1e6;
            if (samples[m][b] < 0) {
                fprintf(stderr, "%s of %d x %zu bytes failed\n", method_name[m], sh.blocks, sh.block);
                return 1;
            }
            size_t bad = write ? SIZE_MAX : packed_mismatch(local, sh, 2);
            if (SIZE_MAX != bad) {
                fprintf(stderr, "%s of %d x %zu bytes: byte %zu wrong\n", method_name[m], sh.blocks, sh.block, bad);
                return 1;
            }
        }
    }
    double med[METHODS];
    for (int m = 0; m < METHODS; ++m) {
        med[m] = bench_median(samples[m], batches);
    }
    printf("%6d x %-8zu %10.3f %10.3f %10.3f %10.3f %8.3f %8.3f\n", sh.blocks, sh.block, med[OWN_READ],
           med[SMSC_READ], med[OWN_WRITE], med[SMSC_WRITE], med[SMSC_READ] / med[OWN_READ],
           med[SMSC_WRITE] / med[OWN_WRITE]);
    fflush(stdout);
    return 0;
}

/* The table: contiguous copies first, then strided ones (the target's
 * final check needs the contiguous MAX_BYTES write before them: each write
 * leaves pattern 1 where it wrote). */
static int run_origin(struct peer *p, char *local, int batches)
{
    printf("# smsc component: %s, features 0x%llx (CAN_MAP %s, REQUIRE_REGISTRATION %s)\n",
           selected_component_name(), (unsigned long long) (mca_smsc ? mca_smsc->features : 0),
           mca_smsc_base_has_feature(MCA_SMSC_FEATURE_CAN_MAP) ? "yes" : "no",
           mca_smsc_base_has_feature(MCA_SMSC_FEATURE_REQUIRE_REGISTRATION) ? "yes" : "no");
    printf("# microseconds per copy of BLOCKS blocks of BYTES (stride 2 x BYTES at the peer),\n"
           "# median of %d batches; ratio = smsc / own\n", batches);
    printf("%6s   %-8s %10s %10s %10s %10s %8s %8s\n", "blocks", "bytes", method_name[0], method_name[1],
           method_name[2], method_name[3], "read", "write");
    for (size_t s = 0; s < NSIZES; ++s) {
        if (0 != measure_shape(p, local, (struct shape) { sizes[s], 1, sizes[s] }, batches)) {
            return 1;
        }
    }
    for (size_t s = 0; s < NSTRIDED; ++s) {
        struct shape sh = { strided_blocks[s], MAX_BLOCKS, 2 * strided_blocks[s] };
        if (0 != measure_shape(p, local, sh, batches)) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, batches = argc > 1 ? atoi(argv[1]) : 15;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 != size || batches < 1 || batches > MAX_BATCHES) {
        if (0 == rank) {
            fprintf(stderr, "usage: mpirun -np 2 smsc_copy [batches 1..%d]\n", MAX_BATCHES);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* as newrma does for its windows' processes (Yama ptrace_scope 1) */
    (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);

    char *source = malloc(MAX_BYTES), *sink = calloc(1, MAX_BYTES), *local = malloc(MAX_BYTES);
    if (NULL == source || NULL == sink || NULL == local) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fill_pattern(source, MAX_BYTES, 2);
    memset(local, 0, MAX_BYTES);

    /* the target's (rank 1's) pid and addresses to the origin (rank 0) */
    uint64_t mine[3] = { (uint64_t) getpid(), (uint64_t) (uintptr_t) source, (uint64_t) (uintptr_t) sink };
    uint64_t all[2][3];
    MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, MPI_COMM_WORLD);

    int rc = 0;
    if (0 == rank) {
        struct peer p = { .pid = (pid_t) all[1][0], .source = (char *) (uintptr_t) all[1][1],
                          .sink = (char *) (uintptr_t) all[1][2] };
        if (NULL == mca_smsc) {
            fprintf(stderr, "no smsc component was selected\n");
            rc = 1;
        } else {
            /* the target's opal_proc_t: the key smsc finds a peer's pid by (modex) */
            ompi_proc_t *proc = ompi_comm_peer_lookup(&ompi_mpi_comm_world.comm, 1);
            p.endpoint = MCA_SMSC_CALL(get_endpoint, &proc->super);
            if (NULL == p.endpoint) {
                fprintf(stderr, "smsc get_endpoint for rank 1 failed\n");
                rc = 1;
            } else {
                rc = run_origin(&p, local, batches);
                MCA_SMSC_CALL(return_endpoint, p.endpoint);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        /* the contiguous MAX_BYTES writes left pattern 1 everywhere, the
         * strided ones after them the same bytes where they wrote */
        size_t bad = pattern_mismatch(sink, MAX_BYTES, 1);
        if (SIZE_MAX != bad) {
            fprintf(stderr, "rank 1: written byte %zu wrong\n", bad);
            rc = 1;
        }
    }
    int any = 0;
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank) {
        printf(any ? " Found errors\n" : " No Errors\n");
    }
    free(source);
    free(sink);
    free(local);
    MPI_Finalize();
    return any;
}
