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
 * The node segment's layout (osc_newrma_shm_layout), checked for every rank
 * count from 1 to 64 and every flavor / option combination:
 *   - every region lies inside the segment, regions do not overlap;
 *   - every region starts on a cache line; window memory of noncontiguous
 *     shared windows on a page, and the segment's base on a page for them
 *     (the total checks where: its model places every rank);
 *   - every run-time-written word that has a different writer (lock word,
 *     each queue node, post tail, completion counter, fence flag, window-wide
 *     sync words) has a cache line of its own;
 *   - windows above 8 ranks (fence_flat_ranks' default) have ceil(log2 n)
 *     fence flags per rank, smaller ones none;
 *   - the total is exact: the sum of the regions, rounded to a line, and
 *     grows O(n) per rank (the rank block does not depend on n beyond the
 *     capped post ring and the fence flags' log2 n lines);
 *   - no_locks removes the lock line and queue nodes.
 * And the FIFO segment's layout (osc_newrma_fifo_layout), for 1 to 64 ranks,
 * depths 2..65, requested cell sizes 0..1100 bytes, 64- and 128-byte lines,
 * single- and multi-threaded:
 *   - every region on a cache line, inside the segment, disjoint;
 *   - the header (read-only wrapper) on no line written at run time;
 *   - per receiver: the producers' enqueue ticket, the receiver's words and
 *     every cell on lines of their own (different writers); the receiver's
 *     two words share a line unless thread_multiple;
 *   - a cell holds the cell header plus a whole packet header, is whole
 *     lines, and is no bigger than asked for, rounded up to a line;
 *   - the total is exact: header line + n x (2 or 3 lines + depth x cell),
 *     O(n) for the node and O(1) per rank;
 *   - depth < 2, a zero or non-power-of-two line size are refused.
 * With arguments it prints the layout for those rank counts instead:
 *   segment_layout print N [N...]
 *
 * One process only (np=1 is its maximum): it computes the layouts of every
 * rank count itself, without MPI communication or a window.
 * newrma-test: only-newrma links-component np=1
 */
#include "ompi_config.h"
#include "ompi/constants.h"
#include "osc_newrma_shm.h"
#include "osc_newrma_transport_fifo.h"
#include "osc_newrma_am.h"

#include "common.h"

#define LINE 64
#define PAGE 4096
#define LARGE 65536             /* some ranks' windows larger than a page: still on a cache line */

static int check_disjoint_lines(size_t *starts, int count, const char *what, int n)
{
    int bad = 0;
    for (int i = 0; i < count; ++i)
        for (int j = i + 1; j < count; ++j)
            if (starts[i] / LINE == starts[j] / LINE) {
                CHECK(0, "n=%d: %s: words %d and %d share a cache line", n, what, i, j);
                bad++;
            }
    return bad;
}

static void check_layout(int n, int flavor, bool noncontig, bool no_locks, bool large)
{
    osc_newrma_peer_input_t *peers = calloc((size_t) n, sizeof(*peers));
    osc_newrma_shm_layout_t l;
    size_t data = 0;
    for (int i = 0; i < n; ++i) {
        peers[i].size = large && 0 == i % 3 ? (uint64_t) LARGE + 8 * (uint64_t) i : (uint64_t) (i * 37 % 5) * 1000 + 8;
        data = (MPI_WIN_FLAVOR_ALLOCATE == flavor) ? ((data + LINE - 1) / LINE * LINE)
             : noncontig ? ((data + PAGE - 1) / PAGE * PAGE) : data;
        data += peers[i].size;
    }
    unsigned int ring = n < 64 ? (unsigned) n : 64;
    osc_newrma_shm_params_t p = { .nranks = n, .flavor = flavor, .peers = peers, .noncontig = noncontig,
                                  .no_locks = no_locks, .qnodes = 4,
                                  .ring_slots = ring, .acc_stripes = 8,
                                  .barrier_rounds = osc_newrma_barrier_rounds(n, 8),
                                  .cacheline = LINE, .pagesize = PAGE };
    int ret = osc_newrma_shm_layout(&l, &p);
    CHECK(OMPI_SUCCESS == ret, "n=%d flavor %d: layout failed", n, flavor);
    if (OMPI_SUCCESS != ret) { free(peers); return; }

    /* alignment and order of the top-level regions */
    size_t tops[] = { l.header_offset, l.global_offset, l.info_offset, l.rank_offset, l.data_offset };
    for (int i = 0; i < 5; ++i) {
        CHECK(tops[i] % LINE == 0, "n=%d: region %d at %zu not line aligned", n, i, tops[i]);
        if (i) CHECK(tops[i] >= tops[i - 1], "n=%d: region %d before region %d", n, i, i - 1);
    }
    CHECK(l.info_offset - l.global_offset == NEWRMA_GLOBAL_LINES * LINE, "n=%d: global lines", n);
    CHECK(l.rank_offset - l.info_offset >= (size_t) n * sizeof(osc_newrma_peer_info_t), "n=%d: info too small", n);
    CHECK(l.rank_offset - l.info_offset < (size_t) n * sizeof(osc_newrma_peer_info_t) + LINE, "n=%d: info not exact", n);
    CHECK(l.rank_stride % LINE == 0, "n=%d: rank block %zu not whole lines", n, l.rank_stride);

    /* inside a rank block: remotely written words on lines of their own */
    size_t words[32]; int count = 0;
    if (!no_locks) {
        CHECK(l.lock_in_rank != SIZE_MAX && l.qnodes == 4, "n=%d: lock region missing", n);
        words[count++] = l.lock_in_rank;
        for (unsigned q = 0; q < l.qnodes; ++q) words[count++] = l.qnodes_in_rank + q * LINE;
    } else {
        CHECK(l.lock_in_rank == SIZE_MAX && l.qnodes == 0, "n=%d: no_locks still has lock lines", n);
    }
    words[count++] = l.post_tail_in_rank;
    words[count++] = l.complete_in_rank;
    CHECK(l.acc_stripes == 8, "n=%d: accumulate stripes", n);
    for (unsigned a = 0; a < l.acc_stripes; ++a) words[count++] = l.acc_in_rank + a * LINE;
    if (MPI_WIN_FLAVOR_DYNAMIC == flavor) {
        CHECK(l.dyn_in_rank != SIZE_MAX, "n=%d: dynamic directory missing", n);
        words[count++] = l.dyn_in_rank;
    } else {
        CHECK(l.dyn_in_rank == SIZE_MAX, "n=%d: dynamic directory in a %d window", n, flavor);
    }
    /* the fence's dissemination flags: ceil(log2 n) above the flat
     * words' 8 ranks, none below; each has its own writer */
    unsigned int rounds = 0;
    while (n > 8 && (1 << rounds) < n) ++rounds;
    CHECK(l.barrier_rounds == rounds, "n=%d: %u fence flags, expected %u", n, l.barrier_rounds, rounds);
    for (unsigned k = 0; k < l.barrier_rounds; ++k) words[count++] = l.barrier_in_rank + k * LINE;
    words[count++] = l.ring_in_rank;
    check_disjoint_lines(words, count, "rank block", n);
    CHECK(l.ring_in_rank + ring * sizeof(int64_t) <= l.rank_stride, "n=%d: ring outside block", n);
    CHECK(l.rank_stride - (l.ring_in_rank + ring * sizeof(int64_t)) < LINE, "n=%d: rank block not exact", n);

    /* window memory and the exact total */
    bool has_data = MPI_WIN_FLAVOR_ALLOCATE == flavor || MPI_WIN_FLAVOR_SHARED == flavor;
    size_t blocks_end = l.rank_offset + (size_t) n * l.rank_stride;
    if (has_data && noncontig) CHECK(l.data_offset % PAGE == 0, "n=%d: noncontig data not page aligned", n);
    size_t base_alignment = has_data && noncontig ? PAGE : LINE;
    CHECK(l.base_alignment == base_alignment, "n=%d flavor %d: base aligned to %zu, expected %zu", n, flavor,
          l.base_alignment, base_alignment);
    if (has_data) CHECK(l.data_offset % base_alignment == 0, "n=%d: data region at %zu not aligned to %zu", n,
                        l.data_offset, base_alignment);
    if (!has_data) CHECK(l.data_offset == blocks_end, "n=%d: data region without window memory", n);
    size_t expect = has_data ? l.data_offset + data : blocks_end;
    expect = (expect + LINE - 1) / LINE * LINE;
    CHECK(l.total_size == expect, "n=%d flavor %d: total %zu, expected exactly %zu", n, flavor, l.total_size, expect);
    free(peers);
}

static void print_line(void *ctx, const char *line) { (void) ctx; printf("%s\n", line); }

static void check_fifo_layout(int n, unsigned depth, size_t cell, size_t line, bool mt)
{
    osc_newrma_fifo_params_t p = { .nranks = n, .depth = depth, .cell_size = cell, .cacheline = line,
                                   .thread_multiple = mt };
    osc_newrma_fifo_layout_t l;
    char what[96];
    snprintf(what, sizeof(what), "fifo n=%d depth=%u cell=%zu line=%zu mt=%d", n, depth, cell, line, mt);
    int ret = osc_newrma_fifo_layout(&l, &p);
    CHECK(OMPI_SUCCESS == ret, "%s: layout failed", what);
    if (OMPI_SUCCESS != ret) return;

    size_t smallest = sizeof(osc_newrma_fifo_cell_t) + sizeof(osc_newrma_am_hdr_t);
    size_t want_cell = ((cell > smallest ? cell : smallest) + line - 1) / line * line;
    CHECK(l.cell_size == want_cell, "%s: cell %zu bytes, expected %zu", what, l.cell_size, want_cell);
    CHECK(l.depth == depth, "%s: depth %u", what, l.depth);
    CHECK(l.header_offset % line == 0 && l.rank_offset % line == 0 && l.rank_stride % line == 0,
          "%s: regions not line aligned", what);
    CHECK(l.rank_offset >= l.header_offset + sizeof(osc_newrma_fifo_header_t), "%s: header overlaps", what);
    CHECK(l.rank_offset - l.header_offset == line, "%s: header is not exactly one line", what);
    /* inside a block: ticket | owner words | cells, each on its own lines */
    CHECK(l.enqueue_in_rank % line == 0 && l.dequeue_in_rank % line == 0 && l.cells_in_rank % line == 0,
          "%s: block regions not line aligned", what);
    CHECK(l.enqueue_in_rank / line != l.dequeue_in_rank / line, "%s: ticket and dequeue share a line", what);
    CHECK(l.enqueue_in_rank / line != l.backlog_in_rank / line, "%s: ticket and backlog word share a line", what);
    CHECK(l.cells_in_rank > l.dequeue_in_rank && l.cells_in_rank > l.backlog_in_rank
          && l.cells_in_rank > l.enqueue_in_rank, "%s: cells before the words", what);
    CHECK(l.backlog_in_rank + sizeof(int64_t) <= l.cells_in_rank, "%s: backlog word overlaps the cells", what);
    if (mt) CHECK(l.dequeue_in_rank / line != l.backlog_in_rank / line, "%s: MT owner words share a line", what);
    else CHECK(l.dequeue_in_rank / line == l.backlog_in_rank / line, "%s: owner words should share a line", what);
    size_t words_lines = mt ? 3 : 2;
    CHECK(l.cells_in_rank == words_lines * line, "%s: %zu bytes before the cells, expected %zu", what,
          l.cells_in_rank, words_lines * line);
    CHECK(l.rank_stride == l.cells_in_rank + (size_t) depth * l.cell_size, "%s: block not exact", what);
    CHECK(l.total_size == line + (size_t) n * l.rank_stride, "%s: total %zu not exact", what, l.total_size);
}

static void check_fifo_layouts(void)
{
    static const size_t cells[] = { 0, 1, 95, 96, 97, 128, 255, 256, 257, 1100 };
    for (int n = 1; n <= 64; ++n)
        for (unsigned depth = 2; depth <= 65; depth += (depth < 4 ? 1 : 21))
            for (size_t c = 0; c < sizeof(cells) / sizeof(cells[0]); ++c)
                for (int mt = 0; mt < 2; ++mt) {
                    check_fifo_layout(n, depth, cells[c], 64, mt);
                    check_fifo_layout(n, depth, cells[c], 128, mt);
                }
    /* O(1) per rank: the block does not depend on n */
    osc_newrma_fifo_params_t p = { .nranks = 4, .depth = 64, .cell_size = 256, .cacheline = LINE };
    osc_newrma_fifo_layout_t a, b;
    osc_newrma_fifo_layout(&a, &p);
    p.nranks = 400;
    osc_newrma_fifo_layout(&b, &p);
    CHECK(a.rank_stride == b.rank_stride, "FIFO block grows with n: %zu vs %zu", a.rank_stride, b.rank_stride);
    /* refused parameters */
    p.depth = 1;
    CHECK(OMPI_SUCCESS != osc_newrma_fifo_layout(&a, &p), "FIFO depth 1 accepted");
    p.depth = 2; p.cacheline = 0;
    CHECK(OMPI_SUCCESS != osc_newrma_fifo_layout(&a, &p), "FIFO cache line 0 accepted");
    p.cacheline = 96;
    CHECK(OMPI_SUCCESS != osc_newrma_fifo_layout(&a, &p), "FIFO cache line 96 accepted");
    p.cacheline = LINE; p.nranks = 0;
    CHECK(OMPI_SUCCESS != osc_newrma_fifo_layout(&a, &p), "FIFO of 0 ranks accepted");
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    if (argc > 2 && 0 == strcmp(argv[1], "print")) {
        for (int a = 2; a < argc; ++a) {
            int n = atoi(argv[a]);
            osc_newrma_peer_input_t *peers = calloc((size_t) n, sizeof(*peers));
            for (int i = 0; i < n; ++i) peers[i].size = 4096;
            osc_newrma_shm_params_t p = { .nranks = n, .flavor = MPI_WIN_FLAVOR_ALLOCATE, .peers = peers,
                                          .qnodes = 4, .ring_slots = n < 64 ? (unsigned) n : 64, .acc_stripes = 8,
                                          .barrier_rounds = osc_newrma_barrier_rounds(n, 8),
                                          .cacheline = LINE, .pagesize = PAGE };
            osc_newrma_shm_layout_t l;
            if (OMPI_SUCCESS == osc_newrma_shm_layout(&l, &p)) {
                printf("MPI_Win_allocate, %d local ranks, 4096 bytes each:\n", n);
                osc_newrma_shm_layout_print(&l, n, print_line, NULL);
                printf("  control bytes per rank: %zu\n\n", (l.data_offset) / (size_t) n);
            }
            free(peers);
            osc_newrma_fifo_params_t fp = { .nranks = n, .depth = 64, .cell_size = 1024, .cacheline = LINE };
            osc_newrma_fifo_layout_t fl;
            if (OMPI_SUCCESS == osc_newrma_fifo_layout(&fl, &fp)) {
                printf("FIFO segment of an active-message window, %d local ranks (defaults):\n", n);
                osc_newrma_fifo_layout_print(&fl, n, print_line, NULL);
                printf("  bytes per rank: %zu\n\n", fl.total_size / (size_t) n);
            }
        }
        MPI_Finalize();
        return 0;
    }
    int flavors[] = { MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC };
    for (int n = 1; n <= 64; ++n)
        for (int f = 0; f < 4; ++f)
            for (int opt = 0; opt < 8; ++opt)
                check_layout(n, flavors[f], opt & 1, opt & 2, opt & 4);

    /* O(n) per rank: the control part per rank is the same at 64 and 640
     * ranks (the post ring is capped); only the fence's flags, not given
     * here, add ceil(log2 n) lines (checked above) */
    osc_newrma_shm_params_t p = { .nranks = 64, .flavor = MPI_WIN_FLAVOR_CREATE, .qnodes = 4, .ring_slots = 64, .acc_stripes = 8,
                                  .cacheline = LINE, .pagesize = PAGE };
    osc_newrma_shm_layout_t a, b;
    osc_newrma_shm_layout(&a, &p);
    p.nranks = 640;
    osc_newrma_shm_layout(&b, &p);
    CHECK(a.rank_stride == b.rank_stride, "rank block grows with n: %zu vs %zu", a.rank_stride, b.rank_stride);
    check_fifo_layouts();
    return test_finalize("segment_layout");
}
