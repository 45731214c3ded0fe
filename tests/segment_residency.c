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
 * A process maps only the parts of a window's node segment that it uses,
 * not its neighbours' rank blocks:
 *  - after creating an MPI_Win_allocate_shared window (which has a node
 *    segment in every mode) and running fence, lock_all and lock-self epochs
 *    without operations, in every process but rank 0 (which switched the
 *    lock mode, below) every page of the segment present in this process's page
 *    tables (/proc/self/pagemap) must hold part of the segment's head
 *    (opal/shmem's header, newrma's header, the window-wide lines, the peer
 *    table) or one of this rank's own lines (its rank block less the
 *    accumulate stripes, which only origins accumulating to it touch, and
 *    the fence flags it signals in other blocks: windows above
 *    fence_flat_ranks);
 *  - the window's memory, untouched, is not mapped either.
 * Linux maps up to 16 neighbouring pages of a shared file on a read fault
 * (fault-around); newrma write-faults the parts it uses before it reads
 * them, so that a process is not charged for its neighbours' pages.  The
 * accumulate stripes are made 64 lines per rank (unless the mode sets them)
 * so that rank blocks span pages.
 * The layout comes from osc_newrma_shm_layout() with this run's parameters;
 * the segment's base is found from rank 0's window memory and checked by the
 * header's magic number.  The window is on MPI_COMM_WORLD, which must be
 * on one node (across nodes no such window exists).
 *
 * newrma-test: only-newrma links-component np>=2 mca=osc_newrma_accumulate_stripes:64 one-node
 */
#include "ompi_config.h"
#include "ompi/constants.h"
#include "opal/runtime/opal.h"
#include "osc_newrma_shm.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "common.h"

#define PER_RANK 64

static int rank, size;

/* the start and end of the mapping that holds `addr`, from /proc/self/maps */
static int mapping_of(uintptr_t addr, uintptr_t *start, uintptr_t *end)
{
    char line[1024];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (NULL == f) return 0;
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned long a, b;
        found = 2 == sscanf(line, "%lx-%lx", &a, &b) && a <= addr && addr < b;
        if (found) { *start = a; *end = b; }
    }
    fclose(f);
    return found;
}

/* whether the page at `addr` is in this process's page tables */
static int page_present(int pagemap, uintptr_t addr, size_t page)
{
    uint64_t entry = 0;
    if (sizeof(entry) != pread(pagemap, &entry, sizeof(entry), (off_t) (addr / page * sizeof(entry)))) return -1;
    return (int) (entry >> 63);
}

static int overlaps(uintptr_t a, uintptr_t a_end, uintptr_t b, uintptr_t b_end)
{
    return a < b_end && b < a_end;
}

/* the layout of this run's window, computed as the component does */
static int window_layout(osc_newrma_shm_layout_t *l)
{
    osc_newrma_peer_input_t *peers = calloc((size_t) size, sizeof(*peers));
    unsigned int qnodes = (unsigned) test_cvar_int("osc_newrma_lock_qnodes");
    unsigned int ring = (unsigned) test_cvar_int("osc_newrma_post_ring_slots");
    unsigned int stripes = (unsigned) test_cvar_int("osc_newrma_accumulate_stripes");
    unsigned int flat = (unsigned) test_cvar_int("osc_newrma_fence_flat_ranks");
    size_t line = opal_cache_line_size > 0 ? (size_t) opal_cache_line_size : 64;
    for (int i = 0; i < size; ++i) { peers[i].size = PER_RANK; peers[i].disp_unit = 1; }
    ring = ring < 1 ? 1 : ring;
    osc_newrma_shm_params_t p = {
        .nranks = size, .flavor = MPI_WIN_FLAVOR_SHARED, .peers = peers,
        .qnodes = qnodes < 1 ? 1 : qnodes,
        .ring_slots = (unsigned) size < ring ? (unsigned) size : ring,
        .acc_stripes = stripes < 1 ? 1 : stripes,
        /* the component caps the flat words at a line's worth */
        .barrier_rounds = osc_newrma_barrier_rounds(size, flat < line / 8 ? flat : (unsigned) (line / 8)),
        .cacheline = line,
        .pagesize = (size_t) sysconf(_SC_PAGESIZE),
    };
    int ret = osc_newrma_shm_layout(l, &p);
    free(peers);
    return ret;
}

int main(int argc, char **argv)
{
    MPI_Win win;
    MPI_Aint bytes;
    int disp;
    char *mine, *first;
    osc_newrma_shm_layout_t l;
    const size_t page = (size_t) sysconf(_SC_PAGESIZE);

    test_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_am_path(FLAVOR_SHARED);   /* MPI_T up */

    MPI_OK(MPI_Win_allocate_shared(PER_RANK, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
    MPI_OK(MPI_Win_shared_query(win, 0, &bytes, &disp, &first));
    /* Synchronizations that touch only the window-wide lines and our own.
     * Rank 0's lock_all comes first and alone: the first lock_all switches
     * the window's lock mode, and the process that switches reads every
     * rank's lock word, as it must -- which also puts every rank block in
     * the page cache, so that a later read fault anywhere in the control
     * area would map them all.  Rank 0 is not checked. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    if (0 == rank) {
        MPI_OK(MPI_Win_lock_all(0, win));
        MPI_OK(MPI_Win_unlock_all(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 != rank) {
        MPI_OK(MPI_Win_lock_all(0, win));
        MPI_OK(MPI_Win_unlock_all(win));
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Win_sync(win));
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK(OMPI_SUCCESS == window_layout(&l), "the layout of %d ranks failed", size);
    const uintptr_t base = (uintptr_t) first - l.data_offset;
    uintptr_t start = 0, end = 0;
    CHECK(mapping_of((uintptr_t) first, &start, &end), "no mapping holds the window memory at %p", (void *) first);
    CHECK(start <= base && base < start + page && end - start >= l.total_size,
          "segment base %#lx (window memory %p - data offset %zu) is not in the first page of mapping %#lx-%#lx",
          (unsigned long) base, (void *) first, l.data_offset, (unsigned long) start, (unsigned long) end);
    if (start <= base && base < start + page) {
        const osc_newrma_shm_header_t *header = (const osc_newrma_shm_header_t *) (base + l.header_offset);
        CHECK(NEWRMA_SHM_MAGIC == header->magic && size == (int) header->nranks,
              "no newrma header at the computed base %#lx: the layout differs from the component's",
              (unsigned long) base);
    }

    /* what this process may have mapped: the head of the segment (from the
     * mapping's start: opal/shmem's header is in front of ours) and its own
     * lines; anything else is a neighbour's */
    const uintptr_t block = base + l.rank_offset + (size_t) rank * l.rank_stride;
    const uintptr_t stripes = block + l.acc_in_rank, stripes_end = stripes + (size_t) l.acc_stripes * l.cacheline;
    int pagemap = open("/proc/self/pagemap", O_RDONLY);
    CHECK(pagemap >= 0, "cannot open /proc/self/pagemap");
    int present = 0, foreign = 0;
    for (uintptr_t p = start; pagemap >= 0 && p < base + l.total_size; p += page) {
        int in = page_present(pagemap, p, page);
        CHECK(in >= 0, "cannot read the pagemap entry of %#lx", (unsigned long) p);
        if (in <= 0) continue;
        ++present;
        int allowed = overlaps(p, p + page, start, base + l.rank_offset)
                   || overlaps(p, p + page, block, stripes) || overlaps(p, p + page, stripes_end, block + l.rank_stride);
        for (unsigned k = 0; k < l.barrier_rounds; ++k) {
            const uintptr_t flag = base + l.rank_offset + (size_t) ((rank + (1 << k)) % size) * l.rank_stride
                                 + l.barrier_in_rank + k * l.cacheline;
            allowed = allowed || overlaps(p, p + page, flag, flag + l.cacheline);
        }
        if (!allowed && 0 != rank) {
            ++foreign;
            CHECK(0, "rank %d of %d: page %lu of the segment is mapped (offset %ld from the base): neither the head "
                  "(%zu bytes) nor its own lines (block at %zu, stripes %zu..%zu, block end %zu)", rank, size,
                  (unsigned long) ((p - start) / page), (long) (p - base), l.rank_offset,
                  (size_t) (block - base), (size_t) (stripes - base), (size_t) (stripes_end - base),
                  (size_t) (block + l.rank_stride - base));
        }
    }
    if (pagemap >= 0) close(pagemap);
    if (0 == rank) {
        printf("segment of %zu bytes (%zu pages), rank block %zu bytes: rank 0 (not checked) maps %d page(s)\n", l.total_size,
               (l.total_size + page - 1) / page, l.rank_stride, present);
    }

    MPI_Win_free(&win);
    return test_finalize("segment_residency");
}
