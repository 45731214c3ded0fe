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
 * A 1-D periodic stencil with a halo exchange every iteration, written
 * three ways (issue #36, docs/notified-rma.md):
 *
 *   notified   MPIX_Put_notify of each boundary cell into the neighbour's
 *              ghost slot; the neighbour polls MPIX_Win_notify_get_value
 *   flag       MPI_Put, MPI_Win_flush, MPI_Fetch_and_op(+1) on a flag the
 *              neighbour polls (the hand-made pattern notified RMA replaces)
 *   PSCW       MPI_Win_post/start, MPI_Put, MPI_Win_complete/wait
 *
 * Every rank holds `cells` cells of a ring of size * cells; an iteration
 * sends the two boundary cells to the two neighbours and computes
 * u'[i] = u[i-1] + 3 u[i] + u[i+1] (64-bit, wrapping: exact, so the three
 * ways and a serial run must agree bit for bit).  The notified and flag
 * ways are pipelined (no barrier between iterations): the ghost slots are
 * double-buffered by iteration parity, which is enough because a rank
 * starts iteration it only after its neighbours sent it iteration it-1,
 * i.e. after they read their ghosts of iteration it-2.
 *
 *   notify_halo [iterations] [cells-per-rank]
 *
 * Any number of ranks >= 1 (one rank is its own neighbour), any osc
 * component: libmpix_newrma takes its fallback on windows newrma does not
 * serve.  Prints each way's checksum and time per iteration (the slowest
 * rank's); exits non-zero unless all three match the serial reference.
 * Build: mpicc notify_halo.c -IPREFIX/include -LPREFIX/lib -lmpix_newrma
 */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpix_newrma.h"

enum { FROM_LEFT, FROM_RIGHT };          /* ghost sides */
#define GHOST_WORD(parity, side) ((parity) * 2 + (side))
#define FLAG_WORD(side) (4 + (side))     /* the flag way's counters */
#define WIN_WORDS 6

typedef struct {
    int rank, left, right;
    int cells;
    uint64_t *u, *next;                  /* cells + 2: u[0], u[cells + 1] are the ghosts */
    MPI_Win win;
    uint64_t *mem;                       /* the window: WIN_WORDS words */
} halo_t;

typedef void (*exchange_fn)(halo_t *h, int it);

static void ring_neighbours(int *left, int *right)
{
    int rank, size;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *left = (rank + size - 1) % size;
    *right = (rank + 1) % size;
}

static uint64_t initial(int64_t global_index) { return (uint64_t) global_index * 2654435761u + 1; }

static void stencil(uint64_t *next, const uint64_t *u, int cells)
{
    for (int i = 1; i <= cells; ++i) next[i] = u[i - 1] + 3 * u[i] + u[i + 1];
}

/* sum of (global index + 1) * cell: any misplaced cell changes it */
static uint64_t weighted_sum(const uint64_t *u, int cells, int64_t first)
{
    uint64_t sum = 0;
    for (int i = 1; i <= cells; ++i) sum += (uint64_t) (first + i) * u[i];
    return sum;
}

/* The whole ring on one process: what every way must print. */
static uint64_t serial_checksum(int64_t total, int iterations)
{
    uint64_t *u = malloc(sizeof(uint64_t) * (size_t) (total + 2));
    uint64_t *next = malloc(sizeof(uint64_t) * (size_t) (total + 2)), sum;

    for (int64_t i = 0; i < total; ++i) u[i + 1] = initial(i);
    for (int it = 0; it < iterations; ++it) {
        u[0] = u[total];
        u[total + 1] = u[1];
        stencil(next, u, (int) total);
        uint64_t *t = u; u = next; next = t;
    }
    sum = weighted_sum(u, (int) total, 0);
    free(u);
    free(next);
    return sum;
}

/* A waiting rank may share its core with the rank it waits for (more ranks
 * than cores): give the core away between polls. */
static void wait_turn(void) { sched_yield(); }

/* ---- notified puts ---------------------------------------------------- */

static void exchange_notified(halo_t *h, int it)
{
    int parity = it % 2;
    MPI_Count seen;

    MPIX_Put_notify(&h->u[h->cells], 1, MPI_UINT64_T, h->right, GHOST_WORD(parity, FROM_LEFT), 1, MPI_UINT64_T,
                    h->win, FROM_LEFT);
    MPIX_Put_notify(&h->u[1], 1, MPI_UINT64_T, h->left, GHOST_WORD(parity, FROM_RIGHT), 1, MPI_UINT64_T, h->win,
                    FROM_RIGHT);
    for (int side = FROM_LEFT; side <= FROM_RIGHT; ++side)
        for (MPIX_Win_notify_get_value(h->win, side, &seen); seen < it + 1;
             MPIX_Win_notify_get_value(h->win, side, &seen))
            wait_turn();
}

/* ---- put + flush + flag ------------------------------------------------ */

static void put_then_flag(halo_t *h, const uint64_t *cell, int target, int side, int parity)
{
    const int64_t one = 1;
    int64_t old;

    MPI_Put(cell, 1, MPI_UINT64_T, target, GHOST_WORD(parity, side), 1, MPI_UINT64_T, h->win);
    MPI_Win_flush(target, h->win);
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, FLAG_WORD(side), MPI_SUM, h->win);
    MPI_Win_flush(target, h->win);
}

static int64_t own_flag(halo_t *h, int side)
{
    int64_t value;
    MPI_Fetch_and_op(NULL, &value, MPI_INT64_T, h->rank, FLAG_WORD(side), MPI_NO_OP, h->win);
    MPI_Win_flush(h->rank, h->win);
    return value;
}

static void exchange_flag(halo_t *h, int it)
{
    int parity = it % 2;

    put_then_flag(h, &h->u[h->cells], h->right, FROM_LEFT, parity);
    put_then_flag(h, &h->u[1], h->left, FROM_RIGHT, parity);
    for (int side = FROM_LEFT; side <= FROM_RIGHT; ++side)
        while (own_flag(h, side) < it + 1) wait_turn();
}

/* ---- PSCW -------------------------------------------------------------- */

static MPI_Group neighbours;             /* left and right, once each */

static void exchange_pscw(halo_t *h, int it)
{
    MPI_Win_post(neighbours, 0, h->win);
    MPI_Win_start(neighbours, 0, h->win);
    MPI_Put(&h->u[h->cells], 1, MPI_UINT64_T, h->right, GHOST_WORD(it % 2, FROM_LEFT), 1, MPI_UINT64_T, h->win);
    MPI_Put(&h->u[1], 1, MPI_UINT64_T, h->left, GHOST_WORD(it % 2, FROM_RIGHT), 1, MPI_UINT64_T, h->win);
    MPI_Win_complete(h->win);
    MPI_Win_wait(h->win);
}

static void neighbours_create(void)
{
    MPI_Group world;
    int ranks[2];

    ring_neighbours(&ranks[0], &ranks[1]);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, ranks[0] == ranks[1] ? 1 : 2, ranks, &neighbours);
    MPI_Group_free(&world);
}

/* ---- one way, timed ----------------------------------------------------- */

static void halo_open(halo_t *h, int cells, int passive)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &h->rank);
    ring_neighbours(&h->left, &h->right);
    h->cells = cells;
    h->u = malloc(sizeof(uint64_t) * (size_t) (cells + 2));
    h->next = malloc(sizeof(uint64_t) * (size_t) (cells + 2));
    for (int i = 1; i <= cells; ++i) h->u[i] = initial((int64_t) h->rank * cells + i - 1);
    MPI_Win_allocate(WIN_WORDS * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &h->mem, &h->win);
    memset(h->mem, 0, WIN_WORDS * sizeof(uint64_t));
    MPIX_Win_notify_attach(h->win, 2, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (passive) MPI_Win_lock_all(0, h->win);
}

static uint64_t halo_close(halo_t *h, int passive)
{
    uint64_t mine = weighted_sum(h->u, h->cells, (int64_t) h->rank * h->cells), sum = 0;

    if (passive) MPI_Win_unlock_all(h->win);
    MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Win_free(&h->win);
    free(h->u);
    free(h->next);
    return sum;
}

/* the ghosts of iteration `it` into u[0] and u[cells + 1] */
static void read_ghosts(halo_t *h, int it, int passive)
{
    if (passive) MPI_Win_sync(h->win);   /* the window's memory as MPI last wrote it */
    h->u[0] = h->mem[GHOST_WORD(it % 2, FROM_LEFT)];
    h->u[h->cells + 1] = h->mem[GHOST_WORD(it % 2, FROM_RIGHT)];
}

/* Runs `iterations` of one way; returns the checksum, sets the slowest
 * rank's seconds per iteration. */
static uint64_t run_way(exchange_fn exchange, int passive, int iterations, int cells, double *per_iteration)
{
    halo_t h;
    double start, mine, slowest;

    halo_open(&h, cells, passive);
    start = MPI_Wtime();
    for (int it = 0; it < iterations; ++it) {
        exchange(&h, it);
        read_ghosts(&h, it, passive);
        stencil(h.next, h.u, cells);
        uint64_t *t = h.u; h.u = h.next; h.next = t;
    }
    mine = (MPI_Wtime() - start) / iterations;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *per_iteration = slowest;
    return halo_close(&h, passive);
}

/* The notified way's path on this component, for the header line. */
static const char *notify_path_name(void)
{
    MPI_Win win;
    void *mem;
    int path = -1;

    MPI_Win_allocate(sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPIX_Win_notify_attach(win, 1, MPI_INFO_NULL);
    MPIX_Win_notify_path(win, &path);
    MPI_Win_free(&win);
    return MPIX_NOTIFY_PATH_MEMORY == path ? "memory" : "fallback";
}

int main(int argc, char **argv)
{
    static const struct { const char *name; exchange_fn exchange; int passive; } ways[] = {
        { "notified puts", exchange_notified, 1 },
        { "put + flush + flag", exchange_flag, 1 },
        { "PSCW", exchange_pscw, 0 },
    };
    int iterations = argc > 1 ? atoi(argv[1]) : 2000, cells = argc > 2 ? atoi(argv[2]) : 256;
    int rank, size, wrong = 0;
    const char *label = getenv("HALO_OSC_LABEL");
    uint64_t reference = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (iterations < 1 || cells < 1) {
        if (0 == rank) fprintf(stderr, "usage: notify_halo [iterations >= 1] [cells-per-rank >= 1]\n");
        MPI_Finalize();
        return 2;
    }
    if (0 == rank) {
        reference = serial_checksum((int64_t) size * cells, iterations);
        printf("notify_halo: %s, %d ranks, %d cells per rank, %d iterations; notified path: %s\n",
               label ? label : "osc as selected", size, cells, iterations, notify_path_name());
    } else {
        notify_path_name();
    }
    neighbours_create();
    for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); ++w) {
        double per_iteration;
        uint64_t sum = run_way(ways[w].exchange, ways[w].passive, iterations, cells, &per_iteration);
        if (0 == rank) {
            wrong += sum != reference;
            printf("  %-20s checksum %016llx  %8.2f us/iteration%s\n", ways[w].name, (unsigned long long) sum,
                   per_iteration * 1e6, sum == reference ? "" : "  WRONG");
        }
    }
    if (0 == rank) printf("  serial reference     checksum %016llx  %s\n", (unsigned long long) reference,
                          wrong ? "MISMATCH" : "all three match");
    MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Group_free(&neighbours);
    MPI_Finalize();
    return wrong ? 1 : 0;
}
