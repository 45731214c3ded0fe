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
 * Copy speed against where source and destination sit in their pages (4K
 * aliasing), in one process: what placing window memory within its page
 * could gain (docs/shared-segment.md; newrma places every window on a cache
 * line, since placing large ones half a page into a page did not pay in
 * the 2-rank benchmark: docs/tuning.md, row 45).
 * One process, no MPI: a "user" buffer at page offset 0 (posix_memalign,
 * mmap) or 16 (glibc's malloc of a large block) and a "window" at each of
 * the offsets below, copied window <- user (a put) and user <- window (a
 * get), 4 KiB to 4 MiB, best of 20 repetitions each, GB/s.
 *
 *   bench/bin/page_offsets          (pin it: taskset -c 0 bench/bin/page_offsets)
 *
 * Output: "user OFF SIZE: WOFF:PUT/GET ..." per user offset and size.
 */
#include "bench_common.h"

#include <stdint.h>

#define SPAN (8u << 20)

static const size_t sizes[] = { 4096, 16384, 65536, 262144, 4u << 20 };
static const size_t user_offsets[] = { 0x0, 0x10 };
/* 0: page aligned; 8: osc/rdma's window here; 0x108: osc/sm's; 0x380:
 * newrma's before, a line after the segment's head; around half a page */
static const size_t window_offsets[] = { 0x0, 0x8, 0x40, 0x108, 0x380, 0x800, 0x810, 0x840, 0xc00 };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* best GB/s of copying n bytes from src to dst */
static double copy_rate(char *dst, const char *src, size_t n)
{
    int iters = n >= (1u << 20) ? 16 : 256;
    double best = 0;

    for (int r = 0; r < 20; ++r) {
        double t = bench_now();
        for (int i = 0; i < iters; ++i) {
            memcpy(dst, src, n);
            __asm__ volatile("" : : "r"(dst) : "memory"); /* keep every copy */
        }
        double rate = (double) iters * (double) n / (bench_now() - t) / 1e9;
        if (rate > best) best = rate;
    }
    return best;
}

int main(void)
{
    char *user = aligned_alloc(4096, SPAN), *window = aligned_alloc(4096, SPAN);

    if (NULL == user || NULL == window) return 1;
    memset(user, 1, SPAN);     /* written: pages of their own, not the zero page */
    memset(window, 2, SPAN);
    for (size_t u = 0; u < COUNT(user_offsets); ++u) {
        for (size_t z = 0; z < COUNT(sizes); ++z) {
            printf("user %#zx %7zu:", user_offsets[u], sizes[z]);
            for (size_t w = 0; w < COUNT(window_offsets); ++w) {
                char *uw = user + user_offsets[u], *ww = window + window_offsets[w];
                double put = copy_rate(ww, uw, sizes[z]);
                printf(" %#zx:%.0f/%.0f", window_offsets[w], put, copy_rate(uw, ww, sizes[z]));
            }
            printf("\n");
        }
    }
    free(user);
    free(window);
    return 0;
}
