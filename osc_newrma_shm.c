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
 * osc/newrma: the node's shared segment of a window (the shape the
 * window's processes agree on, layout, creation -- a name taken with
 * O_EXCL, its space reserved so that a full backing directory fails
 * creation instead of faulting later -- mapping, teardown); the allgather
 * that carries each process's shape is osc_newrma_module.c's, reuse of a
 * freed segment osc_newrma_shm_reuse.c's, the waits on what lives in it
 * osc_newrma_wait.c's.
 *
 * Layout rules (ompi-rfc-fragmented-sm-allocations.txt):
 *  - one allocation per window per node, every region's offset and the exact
 *    total computed by one function before anything is allocated;
 *  - cache-line alignment from opal (hwloc); page alignment only where the
 *    user asks for it (alloc_shared_noncontig);
 *  - a line written at run time belongs to one target (locks) or one owner
 *    (dynamic-region directory), so no two writers share a line by accident;
 *  - offsets, not pointers, inside the segment.
 */

#include "ompi_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opal/align.h"
#include "opal/util/error.h"
#include "opal/util/show_help.h"
#include "opal/util/sys_limits.h"
#include "opal/mca/shmem/base/base.h"
#include "ompi/runtime/mpiruntime.h"

#include "osc_newrma.h"

static size_t align_up(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* What each rank's window memory starts on.  MPI_Win_allocate_shared without
 * alloc_shared_noncontig must be one contiguous array (ranks packed, in rank
 * order: 0, nothing between them; the array starts on the data alignment);
 * with it, each rank starts on its own page.  MPI_Win_allocate has no
 * contiguity rule: each rank starts on its own cache line (no false sharing
 * between neighbours' windows).  mpi_minimum_memory_alignment raises both
 * (params->data_alignment); in a contiguous array only the first rank's base
 * is sure to have it (the next ones start where the previous ends). */
static size_t rank_alignment(const osc_newrma_shm_params_t *params)
{
    if (MPI_WIN_FLAVOR_ALLOCATE == params->flavor) {
        return max_size(params->cacheline, params->data_alignment);
    }
    return params->noncontig ? max_size(params->pagesize, params->data_alignment) : 0;
}

/* What the window memory region, and so the segment's base, is aligned
 * to: a page where ranks start on their own pages, the data alignment
 * where that is more. */
static size_t data_region_alignment(const osc_newrma_shm_params_t *params)
{
    return max_size(params->noncontig ? params->pagesize : params->cacheline, params->data_alignment);
}

/* Window memory that lives in the segment: walks the ranks in order and
 * returns the data region's size; with `fill` it also records each rank's
 * offset in its peer info. */
static size_t layout_window_data(int nranks, const osc_newrma_peer_input_t *peers, size_t alignment,
                                 osc_newrma_shm_t *fill)
{
    size_t total = 0;

    for (int i = 0 ; i < nranks ; ++i) {
        total = 0 == alignment ? total : align_up(total, alignment);
        if (NULL != fill) {
            osc_newrma_shm_peer(fill, i)->data_offset = fill->layout.data_offset + total;
        }
        total += peers[i].size;
    }
    return total;
}

static bool flavor_has_data(int flavor)
{
    return MPI_WIN_FLAVOR_ALLOCATE == flavor || MPI_WIN_FLAVOR_SHARED == flavor;
}

/* Lay out one rank's block: the lines other processes write into (each on
 * a line of its own: they have different writers), the owner's words, and
 * the ring of post notices.  Returns the block's size. */
static size_t layout_rank_block(osc_newrma_shm_layout_t *layout, const osc_newrma_shm_params_t *params)
{
    size_t line = params->cacheline, offset = 0;

    layout->lock_in_rank = layout->qnodes_in_rank = SIZE_MAX;
    layout->qnodes = 0;
    if (!params->no_locks) {
        layout->lock_in_rank = offset;
        offset += align_up(sizeof(osc_newrma_lock_word_t), line);
        layout->qnodes = params->qnodes;
        layout->qnodes_in_rank = offset;
        offset += (size_t) params->qnodes * align_up(sizeof(osc_newrma_qnode_t), line);
    }
    layout->post_tail_in_rank = offset;
    offset += line;
    layout->complete_in_rank = offset;
    offset += align_up(sizeof(osc_newrma_post_box_t), line);
    layout->acc_stripes = params->acc_stripes;
    layout->acc_in_rank = offset;
    offset += (size_t) params->acc_stripes * line;

    /* The fence's dissemination flags (windows above fence_flat_ranks):
     * one per round, each written by one other rank and read by the owner
     * alone, so each gets a line (a round's writer must not take the line
     * the owner polls for another round). */
    layout->barrier_rounds = params->barrier_rounds;
    layout->barrier_in_rank = offset;
    offset += (size_t) params->barrier_rounds * line;

    /* The dynamic-region directory: written by its owner only, read by
     * every origin (a line of its own, so no other word's writes evict it
     * from their caches). */
    layout->dyn_in_rank = SIZE_MAX;
    if (MPI_WIN_FLAVOR_DYNAMIC == params->flavor) {
        layout->dyn_in_rank = offset;
        offset += align_up(sizeof(osc_newrma_peer_dyn_t), line);
    }

    /* Target-assisted accumulates: windows of user memory only (allocate
     * flavors are load/store for everyone).  The mailbox is written by
     * origins, the presence stamp by the owner, the answer line by the
     * targets answering the owner: three lines. */
    layout->assist_in_rank = SIZE_MAX;
    if (!flavor_has_data(params->flavor)) {
        layout->assist_in_rank = offset;
        offset += 3 * line;
    }

    layout->ring_slots = params->ring_slots;
    layout->ring_in_rank = offset;
    offset += align_up((size_t) params->ring_slots * sizeof(int64_t), line);
    return offset;
}

int osc_newrma_shm_layout(osc_newrma_shm_layout_t *layout, const osc_newrma_shm_params_t *params)
{
    size_t line = params->cacheline, offset = 0;
    int nranks = params->nranks;

    if (nranks <= 0 || 0 == line || (line & (line - 1)) || params->ring_slots < 1 || params->acc_stripes < 1
        || (!params->no_locks && params->qnodes < 1)
        || (flavor_has_data(params->flavor) && NULL == params->peers)) {
        return OMPI_ERR_BAD_PARAM;
    }
    memset(layout, 0, sizeof(*layout));
    layout->cacheline = line;

    layout->header_offset = offset;
    offset += align_up(sizeof(osc_newrma_shm_header_t), line);

    layout->global_offset = offset;
    offset += NEWRMA_GLOBAL_LINES * line;

    layout->info_offset = offset;
    offset += align_up((size_t) nranks * sizeof(osc_newrma_peer_info_t), line);

    layout->rank_offset = offset;
    layout->rank_stride = layout_rank_block(layout, params);
    offset += (size_t) nranks * layout->rank_stride;

    layout->base_alignment = line;
    if (flavor_has_data(params->flavor)) {
        layout->base_alignment = data_region_alignment(params);
        layout->rank_alignment = rank_alignment(params);
        offset = align_up(offset, layout->base_alignment);
    }
    layout->data_offset = offset;
    if (flavor_has_data(params->flavor)) {
        offset += layout_window_data(nranks, params->peers, layout->rank_alignment, NULL);
    }
    layout->total_size = align_up(offset, line);
    return OMPI_SUCCESS;
}

void osc_newrma_shm_print_region(void (*print)(void *, const char *), void *ctx, const char *name,
                                 size_t offset, size_t bytes, const char *note)
{
    char text[512];
    snprintf(text, sizeof(text), "  %-22s offset %8lu  %8lu bytes  %s", name, (unsigned long) offset,
             (unsigned long) bytes, note);
    print(ctx, text);
}

void osc_newrma_shm_layout_print(const osc_newrma_shm_layout_t *l, int nranks,
                                 void (*print)(void *ctx, const char *line), void *ctx)
{
    char text[256];
    size_t block_end = l->rank_offset + (size_t) nranks * l->rank_stride;

    snprintf(text, sizeof(text), "segment of %d ranks: %lu bytes in all, cache line %lu, rank block %lu bytes",
             nranks, (unsigned long) l->total_size, (unsigned long) l->cacheline, (unsigned long) l->rank_stride);
    print(ctx, text);
    osc_newrma_shm_print_region(print, ctx, "header", l->header_offset, l->global_offset - l->header_offset,
                 "written once by rank 0");
    osc_newrma_shm_print_region(print, ctx, "window-wide sync", l->global_offset, l->info_offset - l->global_offset,
                 "barrier arrivals (a word per rank; small windows) | lock_all holders | exclusive lockers");
    osc_newrma_shm_print_region(print, ctx, "peer info", l->info_offset, l->rank_offset - l->info_offset,
                 "base, size, disp unit, pid per rank; written once by rank 0");
    osc_newrma_shm_print_region(print, ctx, "rank blocks", l->rank_offset, block_end - l->rank_offset, "one per rank:");
    if (SIZE_MAX != l->lock_in_rank) {
        osc_newrma_shm_print_region(print, ctx, "  lock word", l->lock_in_rank, l->cacheline, "written by origins locking the rank");
        snprintf(text, sizeof(text), "%u x 1 line, the rank's queue nodes", l->qnodes);
        osc_newrma_shm_print_region(print, ctx, "  queue nodes", l->qnodes_in_rank, (size_t) l->qnodes * l->cacheline, text);
    }
    osc_newrma_shm_print_region(print, ctx, "  post tail", l->post_tail_in_rank, l->cacheline, "written by ranks posting to it");
    osc_newrma_shm_print_region(print, ctx, "  completes", l->complete_in_rank, l->acc_in_rank - l->complete_in_rank,
                                 "post box; written by ranks completing to it");
    snprintf(text, sizeof(text), "%u x 1 line, written by ranks accumulating to it", l->acc_stripes);
    osc_newrma_shm_print_region(print, ctx, "  accumulate locks", l->acc_in_rank, (size_t) l->acc_stripes * l->cacheline, text);
    if (l->barrier_rounds > 0) {
        snprintf(text, sizeof(text), "%u x 1 line, round k written by rank - 2^k only", l->barrier_rounds);
        osc_newrma_shm_print_region(print, ctx, "  fence flags", l->barrier_in_rank,
                                     (size_t) l->barrier_rounds * l->cacheline, text);
    }
    if (SIZE_MAX != l->dyn_in_rank) {
        osc_newrma_shm_print_region(print, ctx, "  dynamic directory", l->dyn_in_rank,
                     align_up(sizeof(osc_newrma_peer_dyn_t), l->cacheline),
                     "attached regions; written by the owner only");
    }
    if (SIZE_MAX != l->assist_in_rank) {
        osc_newrma_shm_print_region(print, ctx, "  assist mailbox", l->assist_in_rank, l->cacheline,
                     "one small accumulate handed to the rank; written by origins");
        osc_newrma_shm_print_region(print, ctx, "  assist presence", l->assist_in_rank + l->cacheline, l->cacheline,
                     "when the rank last ran progress; written by the owner only");
        osc_newrma_shm_print_region(print, ctx, "  assist answer", l->assist_in_rank + 2 * l->cacheline, l->cacheline,
                     "the answer to the rank's own request; written by its target");
    }
    snprintf(text, sizeof(text), "%u post notices", l->ring_slots);
    osc_newrma_shm_print_region(print, ctx, "  post ring", l->ring_in_rank, l->rank_stride - l->ring_in_rank, text);
    osc_newrma_shm_print_region(print, ctx, "window memory", l->data_offset, l->total_size - l->data_offset,
                 "allocate/allocate_shared windows");
}

/* Fill the read-only parts: header and every peer's info.  Done by the
 * creating process before any other process maps the segment (or, reused,
 * before the others read it). */
void osc_newrma_shm_fill(osc_newrma_shm_t *shm, int nranks, int flavor, const osc_newrma_peer_input_t *peers)
{
    osc_newrma_shm_header_t *header = (osc_newrma_shm_header_t *) (shm->base + shm->layout.header_offset);

    header->magic = NEWRMA_SHM_MAGIC;
    header->total_size = shm->layout.total_size;
    header->nranks = nranks;
    header->flavor = flavor;
    header->id = shm->id;

    for (int i = 0 ; i < nranks ; ++i) {
        osc_newrma_peer_info_t *info = osc_newrma_shm_peer(shm, i);
        info->base = peers[i].base;
        info->size = peers[i].size;
        info->disp_unit = peers[i].disp_unit;
        info->pid = peers[i].pid;
    }
    if (flavor_has_data(flavor)) {
        layout_window_data(nranks, peers, shm->layout.rank_alignment, shm);
    }
}

/* One process: no file, private aligned memory with the same layout, so the
 * rest of the component cannot tell the difference. */
static int shm_attach_private(osc_newrma_shm_t *shm, size_t alignment)
{
    void *mem = NULL;

    if (0 != posix_memalign(&mem, alignment, shm->layout.total_size)) {
        opal_show_help("help-osc-newrma.txt", "private alloc failed", true,
                       (unsigned long) shm->layout.total_size, strerror(ENOMEM));
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memset(mem, 0, shm->layout.total_size);
    shm->base = mem;
    shm->is_shared = false;
    return OMPI_SUCCESS;
}

/* opal/shmem of Open MPI 4 puts its own header in front of what it returns
 * (5.0's has none: OSC_NEWRMA_SHMEM_HDR_SIZE is 0); pad so that our base is
 * aligned to `alignment` in every process (mappings are aligned to a page, or
 * to `alignment` when that is more, and the header size is a constant, so
 * the pad is the same everywhere). */
static size_t shmem_pad(size_t alignment)
{
    return OPAL_ALIGN_PAD_AMOUNT(OSC_NEWRMA_SHMEM_HDR_SIZE, alignment);
}

/* Does opal/shmem create its segment at the path it is given?  Only its
 * mmap component does (posix names its own shm_open object with O_EXCL,
 * sysv uses IPC_PRIVATE; neither reserves the space); a file relocated by
 * shmem_mmap_relocate_backing_file is caught after creation. */
static bool shmem_uses_our_path(void)
{
    return NULL != opal_shmem_base_component
        && 0 == strcmp(opal_shmem_base_component->base_version.mca_component_name, "mmap");
}

/* Take a name nobody on the node has: O_EXCL, so two threads, or a stale
 * file of a dead process whose pid came round again, never share a file.
 * Returns the open descriptor, or -1 with errno set. */
static int shm_take_name(char **path, const char *hostname)
{
    static unsigned int counter = 0;
    int fd = -1;

    for (int tries = 0 ; tries < 1024 && fd < 0 ; ++tries) {
        free(*path);
        *path = NULL;
        /* the creator's pid and a per-process counter make the name unique
         * on the node, whatever communicator or job the window belongs to */
        if (0 > asprintf(path, "%s/osc_newrma.%s.%d.%u", mca_osc_newrma_component.backing_directory, hostname,
                         (int) getpid(), osc_newrma_fetch_add_relaxed(&counter, 1))) {
            *path = NULL;
            errno = ENOMEM;
            return -1;
        }
        fd = open(*path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0 && EEXIST != errno) {
            return -1;
        }
    }
    return fd;
}

/* Reserve the file's blocks: ftruncate alone leaves a sparse file, and a
 * backing directory that fills up later turns the first touch of a page
 * into SIGBUS.  Returns 0 or an errno value. */
static int shm_reserve(int fd, off_t bytes)
{
    int err;

    do {
        err = posix_fallocate(fd, 0, bytes);
    } while (EINTR == err);
    return err;
}

static bool shm_directory_full(size_t bytes)
{
    struct statvfs fs;

    return 0 == statvfs(mca_osc_newrma_component.backing_directory, &fs)
        && (uint64_t) fs.f_bavail * fs.f_frsize < bytes;
}

/* Both messages name the file, the size, the directory and its MCA
 * parameter; a full directory is MPI_ERR_NO_MEM. */
static int shm_create_failed(const char *path, size_t bytes, bool no_space, const char *why)
{
    /* also in the framework's output: Open MPI 4.1's launcher now and then
     * loses a help message (and logs an error of its show_help instead) */
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "segment of %lu bytes in %s: %s (help message \"%s\")",
                   (unsigned long) bytes, mca_osc_newrma_component.backing_directory, why,
                   no_space ? "segment no space" : "segment create failed");
    opal_show_help("help-osc-newrma.txt", no_space ? "segment no space" : "segment create failed", true,
                   NULL != path ? path : mca_osc_newrma_component.backing_directory, (unsigned long) bytes,
                   mca_osc_newrma_component.backing_directory, why);
    return no_space ? MPI_ERR_NO_MEM : OMPI_ERR_OUT_OF_RESOURCE;
}

/* The segment file, `request` bytes for us behind opal/shmem's header (if any).
 * Returns MPI_ERR_NO_MEM when the backing directory cannot hold it (the
 * class every rank then reports, osc_newrma_shm_map).  The space is
 * reserved after opal/shmem created the file: its mmap component checks
 * the free space itself first, and would count a reservation made before
 * as used. */
static int shm_create_file(opal_shmem_ds_t *ds, size_t request)
{
    size_t bytes = request + OSC_NEWRMA_SHMEM_HDR_SIZE;
    char hostname[256];
    char *path = NULL;
    int ret, err, fd = -1;

    if (0 != gethostname(hostname, sizeof(hostname))) {
        snprintf(hostname, sizeof(hostname), "localhost");
    }
    hostname[sizeof(hostname) - 1] = '\0';
    if (shmem_uses_our_path()) {
        fd = shm_take_name(&path, hostname);
        if (fd < 0) {
            err = errno;
            ret = shm_create_failed(path, bytes, ENOSPC == err || EDQUOT == err, strerror(err));
            free(path);
            return ret;
        }
    } else if (0 > asprintf(&path, "%s/osc_newrma.%s.%d", mca_osc_newrma_component.backing_directory, hostname,
                            (int) getpid())) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* opal's mmap component opens the file we named (without O_EXCL); a
     * directory already too full is told in our words alone */
    ret = shm_directory_full(bytes) ? OPAL_ERR_OUT_OF_RESOURCE : opal_shmem_segment_create(ds, path, request);
    if (OPAL_SUCCESS != ret) {
        bool full = shm_directory_full(bytes);
        ret = shm_create_failed(path, bytes, full, full ? strerror(ENOSPC) : opal_strerror(ret));
    } else if (fd >= 0 && 0 == strcmp(ds->seg_name, path) && 0 != (err = shm_reserve(fd, (off_t) bytes))) {
        ret = shm_create_failed(path, bytes, ENOSPC == err || EFBIG == err || EDQUOT == err, strerror(err));
        opal_shmem_unlink(ds);
        opal_shmem_segment_detach(ds);
    }
    if (fd >= 0) {
        close(fd);
        /* failed, or relocated by shmem_mmap_relocate_backing_file: the
         * file we named is not the segment */
        if (OMPI_SUCCESS != ret || 0 != strcmp(ds->seg_name, path)) {
            (void) unlink(path);
        }
    }
    free(path);
    return ret;
}

/* Rank 0: create the file, map it and fill it; the status travels with the
 * descriptor. */
static int shm_create_and_fill(opal_shmem_ds_t *ds, size_t size, size_t pad, char **mapped,
                               void (*fill)(void *ctx, char *base), void *ctx)
{
    int ret = shm_create_file(ds, size + pad);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    *mapped = opal_shmem_segment_attach(ds);
    if (NULL == *mapped) {
        opal_shmem_unlink(ds);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (NULL != fill) {
        fill(ctx, *mapped + pad);
    }
    return OMPI_SUCCESS;
}

/* What unmapping needs, without the descriptor's 4 KiB path. */
static void mapping_note(osc_newrma_mapping_t *mapping, const opal_shmem_ds_t *ds)
{
    mapping->cpid = ds->seg_cpid;
    mapping->flags = ds->flags;
    mapping->id = ds->seg_id;
    mapping->size = ds->seg_size;
    mapping->addr = ds->seg_base_addr;
}

void osc_newrma_shm_unmap(osc_newrma_mapping_t *mapping)
{
    opal_shmem_ds_t ds;

    memset(&ds, 0, sizeof(ds));
    ds.seg_cpid = mapping->cpid;
    ds.flags = mapping->flags;
    ds.seg_id = mapping->id;
    ds.seg_size = mapping->size;
    ds.seg_base_addr = mapping->addr;
    opal_shmem_segment_detach(&ds);
    mapping->addr = NULL;
}

/* opal/shmem maps a segment at any page; window memory aligned to more than
 * a page (mpi_minimum_memory_alignment) needs the mapping aligned to it,
 * which no offset inside can give in every process.  Move the mapping
 * (mremap) into a reservation of `alignment` more bytes, at its first
 * aligned address, and release the rest of the reservation.  Returns the new
 * start, or NULL with the old mapping left as it was. */
static char *mapping_move_aligned(char *start, size_t length, size_t alignment)
{
    size_t bytes = align_up(length, (size_t) opal_getpagesize()), span = bytes + alignment;
    char *reserve = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    char *target, *moved;

    if (MAP_FAILED == reserve) {
        return NULL;
    }
    target = (char *) align_up((uintptr_t) reserve, alignment);
    /* the system call itself: Open MPI 4.1's memory patcher intercepts
     * mremap() and returned NULL for this move (the old range held nothing
     * a registration cache could know of: it was mapped a moment ago) */
    moved = (char *) syscall(SYS_mremap, start, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (target > reserve) {
        munmap(reserve, (size_t) (target - reserve));
    }
    munmap(target + bytes, (size_t) (reserve + span - (target + bytes)));
    if (MAP_FAILED == moved) {
        munmap(target, bytes);
        return NULL;
    }
    return moved;
}

/* This process's mapping moved onto `alignment` (opal/shmem's own header,
 * if any, stays in front of what it returned); false: left where it was. */
static bool mapping_align(opal_shmem_ds_t *ds, char **mapped, size_t alignment)
{
    size_t in_front = (size_t) (*mapped - (char *) ds->seg_base_addr);
    char *moved;

    if (0 == (uintptr_t) ds->seg_base_addr % alignment) {
        return true;
    }
    moved = mapping_move_aligned((char *) ds->seg_base_addr, ds->seg_size, alignment);
    if (NULL == moved) {
        return false;
    }
    ds->seg_base_addr = (unsigned char *) moved;
    *mapped = moved + in_front;
    return true;
}

/* Collective: the creator's status travels with the descriptor, so every rank
 * learns of a failure and all of them return it. */
int osc_newrma_shm_map(struct ompi_communicator_t *comm, size_t size, size_t alignment,
                       osc_newrma_mapping_t *mapping, char **base, void (*fill)(void *ctx, char *base),
                       void *ctx, int *vote)
{
    struct { int status; opal_shmem_ds_t ds; } announce;
    size_t pad = shmem_pad(alignment);
    char *mapped = NULL;
    bool aligned;
    int mine[2], all[2] = { 0, 0 }, ret;

    *base = NULL;
    memset(&announce, 0, sizeof(announce));
    if (0 == ompi_comm_rank(comm)) {
        announce.status = shm_create_and_fill(&announce.ds, size, pad, &mapped, fill, ctx);
    }
    ret = comm->c_coll->coll_bcast(&announce, sizeof(announce), MPI_BYTE, 0, comm,
                                   comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (OMPI_SUCCESS != announce.status) {
        /* the creator's reason on every rank (MPI_ERR_NO_MEM: a full
         * backing directory) */
        return announce.status;
    }
    if (0 != ompi_comm_rank(comm)) {
        mapped = opal_shmem_segment_attach(&announce.ds);
    }
    aligned = NULL == mapped || alignment <= (size_t) opal_getpagesize()
              || mapping_align(&announce.ds, &mapped, alignment);
    /* after this reduction everyone has mapped (or failed): the file can go,
     * so a job killed from here on leaves nothing in the backing directory;
     * the vote rides along */
    mine[0] = NULL != mapped && aligned;
    mine[1] = NULL == vote || *vote;
    ret = comm->c_coll->coll_allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm, comm->c_coll->coll_allreduce_module);
    if (0 == ompi_comm_rank(comm)) {
        opal_shmem_unlink(&announce.ds);
    }
    if (OMPI_SUCCESS == ret && !all[0]) {
        ret = OMPI_ERR_OUT_OF_RESOURCE;
    } else if (OMPI_SUCCESS == ret && !all[1]) {
        ret = OMPI_ERR_UNREACH;
    }
    if (NULL != vote) {
        *vote = all[1];
    }
    if (NULL != mapped) {
        mapping_note(mapping, &announce.ds);
    }
    if (OMPI_SUCCESS != ret) {
        if (NULL != mapped) {
            osc_newrma_shm_unmap(mapping);
        }
        return ret;
    }
    *base = mapped + pad;
    return OMPI_SUCCESS;
}

typedef struct {
    osc_newrma_shm_t *shm;
    ompi_osc_newrma_module_t *module;
    const osc_newrma_peer_input_t *peers;
} shm_fill_ctx_t;

static void shm_fill_created(void *ctx, char *base)
{
    static uint32_t created = 0;
    shm_fill_ctx_t *c = ctx;

    c->shm->base = base;
    c->shm->id = (uint64_t) (uint32_t) getpid() << 32 | (osc_newrma_fetch_add_relaxed(&created, 1) + 1);
    osc_newrma_shm_fill(c->shm, c->module->size, c->module->flavor, c->peers);
    c->shm->base = NULL;
}

/* Write-fault the pages of [first, end) into this process's page tables. */
static void shm_populate_for_write(const char *first, const char *end)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t) first & ~(uintptr_t) (opal_getpagesize() - 1);

    (void) madvise((void *) page, (uintptr_t) end - page, MADV_POPULATE_WRITE);
#else
    (void) first;
    (void) end;
#endif
}

/* Map the parts of the segment this process uses whatever it communicates
 * with -- the header, the window-wide lines, the peer table and its own
 * lines -- before it reads any of them.  On a read fault Linux maps up to 16
 * neighbouring pages of a shared file that are in the page cache
 * (fault-around), and the other ranks' blocks, which their owners have
 * written by then, are those neighbours: a first read of the header charged
 * every process for the whole control area (P = 32: 10 pages where it needs
 * 2).  A write fault maps exactly the pages asked for.  Its own lines are
 * its rank block less the accumulate stripes: only origins accumulating to
 * it touch those, and mapping them would also put them in the page cache.
 * The fence flags it signals in other ranks' blocks (one per dissemination
 * round) it only ever writes, so they would fault in one page each anyway:
 * mapped here, at creation, rather than in the first fence.  Other ranks'
 * blocks are mapped when this process first talks to them.
 * Only an optimization: a kernel without MADV_POPULATE_WRITE (before 5.14)
 * refuses it and the pages fault in as before. */
static void shm_map_own_parts(const osc_newrma_shm_t *shm, int rank, int nranks)
{
    const osc_newrma_shm_layout_t *l = &shm->layout;
    const char *block = osc_newrma_shm_rank_block(shm, rank);
    const char *stripes = block + l->acc_in_rank;

    shm_populate_for_write(shm->base, shm->base + l->rank_offset);
    shm_populate_for_write(block, stripes);
    shm_populate_for_write(stripes + (size_t) l->acc_stripes * l->cacheline, block + l->rank_stride);
    for (unsigned int round = 0 ; round < l->barrier_rounds ; ++round) {
        int partner = osc_newrma_barrier_partner(rank, round, nranks);
        const char *flag = (const char *) osc_newrma_shm_barrier_flag(shm, partner, round);
        shm_populate_for_write(flag, flag + l->cacheline);
    }
}

/* What a later window checks before it reuses the mapping. */
static void shm_note_mapping(osc_newrma_shm_t *shm, int members, size_t alignment)
{
    shm->id = ((osc_newrma_shm_header_t *) (shm->base + shm->layout.header_offset))->id;
    shm->uses = 1;
    shm->capacity = shm->layout.total_size;
    shm->alignment = alignment;
    shm->members = members;
}

static void print_verbose(void *ctx, const char *line)
{
    (void) ctx;
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_DEBUG, "%s", line);
}

void osc_newrma_shape_mine(const ompi_osc_newrma_module_t *module, osc_newrma_shape_t *shape)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;

    *shape = (osc_newrma_shape_t) {
        .lock_qnodes = c->lock_qnodes,
        .acc_stripes = c->acc_stripes,
        .ring_slots = c->post_ring_slots,
        .fence_flat_ranks = c->fence_flat_ranks,
        .no_locks = module->no_locks,
        .noncontig = module->alloc_shared_noncontig,
        .cacheline = c->cacheline,
        .data_alignment = module->memory_alignment,
    };
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

/* Every value has one answer that keeps the window correct whatever each
 * process was given: sizes and counts take the largest (more queue nodes,
 * stripes, ring slots or a longer line never break anything, and every
 * process then indexes the same way); the info keys that remove something
 * (no_locks: the lock words; alloc_shared_noncontig: the contiguous array)
 * remove it only if every process asked, since a process that did not ask
 * may lock, or count on one contiguous array.  A pure function of the
 * gathered records, so every process gets the same answer. */
void osc_newrma_shape_agree(osc_newrma_shape_t *agreed, const osc_newrma_peer_input_t *peers, int nranks)
{
    *agreed = peers[0].shape;
    for (int i = 1 ; i < nranks ; ++i) {
        const osc_newrma_shape_t *s = &peers[i].shape;
        agreed->lock_qnodes = max_u32(agreed->lock_qnodes, s->lock_qnodes);
        agreed->acc_stripes = max_u32(agreed->acc_stripes, s->acc_stripes);
        agreed->ring_slots = max_u32(agreed->ring_slots, s->ring_slots);
        agreed->fence_flat_ranks = max_u32(agreed->fence_flat_ranks, s->fence_flat_ranks);
        agreed->no_locks = agreed->no_locks && s->no_locks;
        agreed->noncontig = agreed->noncontig && s->noncontig;
        agreed->cacheline = agreed->cacheline > s->cacheline ? agreed->cacheline : s->cacheline;
        agreed->data_alignment = agreed->data_alignment > s->data_alignment ? agreed->data_alignment
                                                                           : s->data_alignment;
    }
    /* the arrival words share the barrier line */
    if (agreed->fence_flat_ranks > agreed->cacheline / sizeof(int64_t)) {
        agreed->fence_flat_ranks = (uint32_t) (agreed->cacheline / sizeof(int64_t));
    }
}

int osc_newrma_shm_attach(ompi_osc_newrma_module_t *module, struct ompi_communicator_t *comm,
                          const osc_newrma_peer_input_t *peers, int vote)
{
    osc_newrma_shm_t *shm = &module->shm;
    size_t pagesize = opal_getpagesize();
    size_t alignment;
    int ret;

    osc_newrma_shm_params_t params = {
        .nranks = module->size,
        .flavor = module->flavor,
        .peers = peers,
        /* the agreed shape (node_window_init), never this process's own
         * values: every process must compute the same offsets */
        .noncontig = module->shape.noncontig,
        .no_locks = module->shape.no_locks,
        .qnodes = module->shape.lock_qnodes,
        /* one post notice per possible poster up to the cap: O(n) per rank */
        .ring_slots = (unsigned int) module->size < module->shape.ring_slots ? (unsigned int) module->size
                                                                              : module->shape.ring_slots,
        .acc_stripes = module->shape.acc_stripes,
        .barrier_rounds = osc_newrma_barrier_rounds(module->size, module->shape.fence_flat_ranks),
        .cacheline = module->shape.cacheline,
        .pagesize = pagesize,
        .data_alignment = module->shape.data_alignment,
    };

    ret = osc_newrma_shm_layout(&shm->layout, &params);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    alignment = shm->layout.base_alignment;
    if (ompi_osc_base_framework.framework_verbose >= MCA_BASE_VERBOSE_DEBUG && 0 == module->rank) {
        osc_newrma_shm_layout_print(&shm->layout, module->size, print_verbose, NULL);
    }

    if (1 == module->size) {
        ret = shm_attach_private(shm, alignment);
        if (OMPI_SUCCESS == ret) {
            osc_newrma_shm_fill(shm, 1, module->flavor, peers);
        }
        return ret;
    }

    /* a segment kept from a freed window of the same processes (taken before
     * the allgather that reported it) serves without a new mapping; one that
     * does not fit goes back */
    if (osc_newrma_shm_reusable(shm, peers, module->size, alignment)) {
        return osc_newrma_shm_reuse(module, peers, vote);
    }
    osc_newrma_shm_cache_keep(shm);

    /* Rank 0 fills the read-only parts before anyone else maps the segment:
     * they are there for everyone when the mapping's reduction returns, and
     * window creation needs no closing barrier. */
    shm_fill_ctx_t ctx = { .shm = shm, .module = module, .peers = peers };
    ret = osc_newrma_shm_map(comm, shm->layout.total_size, alignment, &shm->mapping, &shm->base,
                             shm_fill_created, &ctx, &vote);
    shm->is_shared = OMPI_SUCCESS == ret;
    if (shm->is_shared) {
        shm_map_own_parts(shm, module->rank, module->size);
        shm_note_mapping(shm, module->size, alignment);
    }
    return ret;
}

void osc_newrma_shm_detach(osc_newrma_shm_t *shm)
{
    if (NULL == shm->base) {
        return;
    }
    if (shm->is_shared) {
        osc_newrma_shm_unmap(&shm->mapping);
    } else {
        free(shm->base);
    }
    shm->base = NULL;
}
