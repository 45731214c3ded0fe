/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: the node's shared segment of a window (layout, creation,
 * mapping, teardown) and the primitives that live in it.
 *
 * Layout rules (ompi-rfc-fragmented-sm-allocations.txt):
 *  - one allocation per window per node, every region's offset and the exact
 *    total computed by one function before anything is allocated;
 *  - cache-line alignment from opal (hwloc), page alignment only where the
 *    user asks for it (alloc_shared_noncontig);
 *  - a line written at run time belongs to one target (locks) or one owner
 *    (dynamic-region directory), so no two writers share a line by accident;
 *  - offsets, not pointers, inside the segment.
 */

#include "ompi_config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/align.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/show_help.h"
#include "opal/util/sys_limits.h"
#include "opal/mca/shmem/base/base.h"

#include "osc_newrma.h"

static size_t align_up(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

/* Window memory that lives in the segment: walks the ranks in order and
 * returns the data region's size; with `fill` it also records each rank's
 * offset in its peer info.  MPI_Win_allocate_shared without
 * alloc_shared_noncontig must be one contiguous array (ranks packed, in rank
 * order); with it, each rank starts on its own page.  MPI_Win_allocate has no
 * contiguity rule, so each rank starts on its own cache line: no false
 * sharing between neighbours' windows. */
static size_t layout_window_data(int nranks, int flavor, const osc_newrma_peer_input_t *peers,
                                 bool noncontig, size_t cacheline, size_t pagesize,
                                 osc_newrma_shm_t *fill)
{
    size_t total = 0;
    size_t rank_alignment = 1;

    if (MPI_WIN_FLAVOR_ALLOCATE == flavor) {
        rank_alignment = cacheline;
    } else if (noncontig) {
        rank_alignment = pagesize;
    }
    for (int i = 0 ; i < nranks ; ++i) {
        total = align_up(total, rank_alignment);
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

int osc_newrma_shm_layout(osc_newrma_shm_layout_t *layout, int nranks, int flavor,
                          const osc_newrma_peer_input_t *peers, bool noncontig,
                          size_t cacheline, size_t pagesize)
{
    size_t offset = 0;

    if (nranks <= 0 || 0 == cacheline || (cacheline & (cacheline - 1))
        || (flavor_has_data(flavor) && NULL == peers)) {
        return OMPI_ERR_BAD_PARAM;
    }
    memset(layout, 0, sizeof(*layout));
    layout->cacheline = cacheline;

    layout->header_offset = offset;
    offset += align_up(sizeof(osc_newrma_shm_header_t), cacheline);

    layout->info_offset = offset;
    offset += align_up((size_t) nranks * sizeof(osc_newrma_peer_info_t), cacheline);

    layout->lock_stride = align_up(sizeof(osc_newrma_peer_lock_t), cacheline);
    layout->lock_offset = offset;
    offset += (size_t) nranks * layout->lock_stride;

    layout->dyn_offset = offset;
    if (MPI_WIN_FLAVOR_DYNAMIC == flavor) {
        layout->dyn_stride = align_up(sizeof(osc_newrma_peer_dyn_t), cacheline);
        offset += (size_t) nranks * layout->dyn_stride;
    }

    if (flavor_has_data(flavor)) {
        offset = align_up(offset, noncontig ? pagesize : cacheline);
        layout->data_offset = offset;
        offset += layout_window_data(nranks, flavor, peers, noncontig, cacheline, pagesize, NULL);
    } else {
        layout->data_offset = offset;
    }

    layout->total_size = align_up(offset, cacheline);
    return OMPI_SUCCESS;
}

/* Fill the read-only parts: header and every peer's info.  Done once, by the
 * creating process, before any other process maps the segment. */
static void shm_fill(osc_newrma_shm_t *shm, int nranks, int flavor,
                     const osc_newrma_peer_input_t *peers, bool noncontig, size_t pagesize)
{
    osc_newrma_shm_header_t *header = (osc_newrma_shm_header_t *) (shm->base + shm->layout.header_offset);

    memset(shm->base, 0, shm->layout.data_offset);
    header->magic = NEWRMA_SHM_MAGIC;
    header->total_size = shm->layout.total_size;
    header->nranks = nranks;
    header->flavor = flavor;

    for (int i = 0 ; i < nranks ; ++i) {
        osc_newrma_peer_info_t *info = osc_newrma_shm_peer(shm, i);
        info->base = peers[i].base;
        info->size = peers[i].size;
        info->disp_unit = peers[i].disp_unit;
        info->pid = peers[i].pid;
    }
    if (flavor_has_data(flavor)) {
        layout_window_data(nranks, flavor, peers, noncontig, shm->layout.cacheline, pagesize, shm);
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
    shm->base = mem;
    shm->is_shared = false;
    return OMPI_SUCCESS;
}

/* opal/shmem puts its own header in front of what it returns; pad so that our
 * base is aligned to `alignment` in every process (mappings are page aligned
 * and the header size is a constant, so the pad is the same everywhere). */
static size_t shmem_pad(size_t alignment)
{
    return OPAL_ALIGN_PAD_AMOUNT(sizeof(opal_shmem_seg_hdr_t), alignment);
}

static int shm_create_file(ompi_osc_newrma_module_t *module, size_t request)
{
    static unsigned int counter = 0;
    char hostname[256];
    char *path = NULL;
    int ret;

    if (0 != gethostname(hostname, sizeof(hostname))) {
        snprintf(hostname, sizeof(hostname), "localhost");
    }
    hostname[sizeof(hostname) - 1] = '\0';
    /* the creator's pid and a per-process counter make the name unique on
     * the node, whatever communicator or job the window belongs to */
    if (0 > asprintf(&path, "%s/osc_newrma.%s.%d.%u", mca_osc_newrma_component.backing_directory,
                     hostname, (int) getpid(), counter++)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    ret = opal_shmem_segment_create(&module->shm.ds, path, request);
    if (OPAL_SUCCESS != ret) {
        opal_show_help("help-osc-newrma.txt", "segment create failed", true,
                       path, (unsigned long) request, mca_osc_newrma_component.backing_directory);
    }
    free(path);
    return ret;
}

/* Collective: the creator's status travels with the descriptor, so every rank
 * learns of a failure and all of them return it. */
static int shm_attach_shared(ompi_osc_newrma_module_t *module, size_t alignment)
{
    osc_newrma_shm_t *shm = &module->shm;
    struct { int status; opal_shmem_ds_t ds; } announce;
    size_t pad = shmem_pad(alignment);
    int attached, all_attached = 0, ret;

    memset(&announce, 0, sizeof(announce));
    if (0 == module->rank) {
        announce.status = shm_create_file(module, shm->layout.total_size + pad);
        announce.ds = shm->ds;
    }
    ret = module->comm->c_coll->coll_bcast(&announce, sizeof(announce), MPI_BYTE, 0, module->comm,
                                           module->comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (OMPI_SUCCESS != announce.status) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    shm->ds = announce.ds;

    char *mapped = opal_shmem_segment_attach(&shm->ds);
    attached = (NULL != mapped);
    if (attached) {
        shm->base = mapped + pad;
        shm->is_shared = true;
    }
    /* after this reduction everyone has mapped (or failed): the file can go,
     * so a job killed from here on leaves nothing in the backing directory */
    ret = module->comm->c_coll->coll_allreduce(&attached, &all_attached, 1, MPI_INT, MPI_MIN,
                                               module->comm, module->comm->c_coll->coll_allreduce_module);
    if (0 == module->rank) {
        opal_shmem_unlink(&shm->ds);
    }
    if (OMPI_SUCCESS == ret && !all_attached) {
        ret = OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OMPI_SUCCESS != ret && attached) {
        opal_shmem_segment_detach(&shm->ds);
        shm->base = NULL;
        shm->is_shared = false;
    }
    return ret;
}

int osc_newrma_shm_attach(ompi_osc_newrma_module_t *module, const osc_newrma_peer_input_t *peers)
{
    osc_newrma_shm_t *shm = &module->shm;
    size_t pagesize = opal_getpagesize();
    size_t alignment = module->alloc_shared_noncontig ? pagesize : mca_osc_newrma_component.cacheline;
    int ret;

    ret = osc_newrma_shm_layout(&shm->layout, module->size, module->flavor, peers,
                                module->alloc_shared_noncontig,
                                mca_osc_newrma_component.cacheline, pagesize);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    NEWRMA_VERBOSE(20, "window segment: %d ranks, %lu bytes (data at offset %lu)",
                   module->size, (unsigned long) shm->layout.total_size,
                   (unsigned long) shm->layout.data_offset);

    if (1 == module->size) {
        ret = shm_attach_private(shm, alignment);
        if (OMPI_SUCCESS == ret) {
            shm_fill(shm, 1, module->flavor, peers, module->alloc_shared_noncontig, pagesize);
        }
        return ret;
    }

    /* Rank 0 fills the read-only parts once everyone has mapped; nobody
     * reads them before the barrier that ends window creation. */
    ret = shm_attach_shared(module, alignment);
    if (OMPI_SUCCESS == ret && 0 == module->rank) {
        shm_fill(shm, module->size, module->flavor, peers, module->alloc_shared_noncontig, pagesize);
    }
    return ret;
}

void osc_newrma_shm_detach(osc_newrma_shm_t *shm)
{
    if (NULL == shm->base) {
        return;
    }
    if (shm->is_shared) {
        opal_shmem_segment_detach(&shm->ds);
    } else {
        free(shm->base);
    }
    shm->base = NULL;
}

/* ------------------------------------------------------------------ */
/* Passive-target lock word                                            */
/* ------------------------------------------------------------------ */

/* Encoding: bit 62 = a writer holds it; low bits = number of readers. */
#define NEWRMA_RWLOCK_WRITER ((int64_t) 1 << 62)
#define NEWRMA_RWLOCK_READER ((int64_t) 1)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    opal_atomic_rmb();
#endif
}

void osc_newrma_backoff(unsigned int *spins)
{
    if (++*spins < 128) {
        cpu_relax();
        return;
    }
    /* past the busy phase: let the rest of MPI progress and give the core
     * away, since the holder may be waiting for it (oversubscription) */
    opal_progress();
    sched_yield();
}

void osc_newrma_rwlock_acquire(osc_newrma_peer_lock_t *lock, bool exclusive)
{
    unsigned int spins = 0;

    if (exclusive) {
        for (;;) {
            int64_t expected = 0;
            if (0 == lock->lock
                && opal_atomic_compare_exchange_strong_64(&lock->lock, &expected,
                                                          NEWRMA_RWLOCK_WRITER)) {
                break;
            }
            osc_newrma_backoff(&spins);
        }
    } else {
        for (;;) {
            int64_t prev = opal_atomic_fetch_add_64(&lock->lock, NEWRMA_RWLOCK_READER);
            if (!(prev & NEWRMA_RWLOCK_WRITER)) {
                break;
            }
            (void) opal_atomic_fetch_add_64(&lock->lock, -NEWRMA_RWLOCK_READER);
            while (lock->lock & NEWRMA_RWLOCK_WRITER) {
                osc_newrma_backoff(&spins);
            }
        }
    }
    /* MEM_SYNC after PROC_SYNC (design, "RMA + shared memory") */
    opal_atomic_mb();
}

void osc_newrma_rwlock_release(osc_newrma_peer_lock_t *lock, bool exclusive)
{
    /* MEM_SYNC before PROC_SYNC: our accesses land before the lock is free */
    opal_atomic_mb();
    (void) opal_atomic_fetch_add_64(&lock->lock, exclusive ? -NEWRMA_RWLOCK_WRITER
                                                           : -NEWRMA_RWLOCK_READER);
}
