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
 * Helpers shared by the benchmark programs in bench/: medians, a clock,
 * window flavors (create / allocate / dynamic) opened the same way for
 * every osc component, and error text.  Only the MPI API: no component's
 * internals, so that every component takes the same path.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* median of n values (sorts v in place); the upper median for even n */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t) n, sizeof(double), bench_cmp_double);
    return v[n / 2];
}

/* seconds on a monotonic clock: usable without MPI_Init (bench/floors.c) */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* An operation buffer of `bytes`, every double 1.0 (summable by the
 * accumulate rows), or NULL.  It is written, not calloc'ed: calloc's large
 * blocks are fresh mappings, and pages that are only read map the kernel's
 * one zero page, so a put from them reads one cached 4 KiB page over and
 * over -- that measured every component's 1-4 MiB put bandwidth at up to
 * twice what a real buffer gives, and bimodal from run to run. */
static inline void *bench_filled(size_t bytes)
{
    double *buf = malloc(bytes);
    if (NULL != buf)
        for (size_t i = 0; i < bytes / sizeof(double); ++i) buf[i] = 1.0;
    return buf;
}

enum bench_flavor { BENCH_ALLOCATE, BENCH_CREATE, BENCH_DYNAMIC, BENCH_NFLAVORS };
static const char *const bench_flavor_name[] = { "allocate", "create", "dynamic" };

/* flavor by name, or -1 */
static inline int bench_flavor_parse(const char *s)
{
    for (int f = 0; f < BENCH_NFLAVORS; ++f)
        if (0 == strcmp(s, bench_flavor_name[f])) return f;
    return -1;
}

/* One window of any flavor.  disp[r] is where rank r's memory starts as a
 * target displacement: 0 for create/allocate, the attached region's
 * address for dynamic windows (exchanged once at creation, as a program
 * would). */
struct bench_win {
    enum bench_flavor flavor;
    MPI_Win win;
    void *base;      /* this rank's window memory */
    void *own;       /* memory we allocated ourselves (create, dynamic) */
    MPI_Aint *disp;  /* per rank, dynamic only; NULL otherwise */
};

/* Open a window of `bytes` per rank on comm, collectively.  create and
 * dynamic windows use `mem` if not NULL, else page-aligned memory of our
 * own (like allocate's, so that only the flavor differs); a dynamic window
 * gets `bytes` attached and the addresses exchanged, unless bytes is 0.
 * Returns MPI_SUCCESS or the first error; on error nothing is left open on
 * this rank.  The error handler of comm must be MPI_ERRORS_RETURN for a
 * refusing component to come back here. */
static inline int bench_win_open(struct bench_win *w, enum bench_flavor f, size_t bytes, void *mem, MPI_Comm comm)
{
    int rc, size;

    memset(w, 0, sizeof(*w));
    w->flavor = f;
    MPI_Comm_size(comm, &size);
    if (BENCH_ALLOCATE == f)
        return MPI_Win_allocate((MPI_Aint) bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win);
    if (NULL == mem) {
        if (0 != posix_memalign(&w->own, 4096, bytes ? bytes : 1)) return MPI_ERR_NO_MEM;
        memset(w->own, 0, bytes);
        mem = w->own;
    }
    w->base = mem;
    if (BENCH_CREATE == f) {
        rc = MPI_Win_create(mem, (MPI_Aint) bytes, 1, MPI_INFO_NULL, comm, &w->win);
    } else {
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win);
        if (MPI_SUCCESS == rc && bytes > 0) {
            MPI_Aint mine;
            w->disp = malloc(sizeof(MPI_Aint) * (size_t) size);
            rc = MPI_Win_attach(w->win, mem, (MPI_Aint) bytes);
            MPI_Get_address(mem, &mine);
            if (MPI_SUCCESS == rc) rc = MPI_Allgather(&mine, 1, MPI_AINT, w->disp, 1, MPI_AINT, comm);
            if (MPI_SUCCESS != rc) MPI_Win_free(&w->win);
        }
    }
    if (MPI_SUCCESS != rc) {
        free(w->own);
        free(w->disp);
        w->own = NULL;
        w->disp = NULL;
    }
    return rc;
}

/* target displacement of rank r's window memory + off */
static inline MPI_Aint bench_win_disp(const struct bench_win *w, int r, MPI_Aint off)
{
    return (w->disp ? w->disp[r] : 0) + off;
}

/* Free the window, collectively.  A dynamic window's memory is detached
 * only after every rank is past its last epoch (the barrier). */
static inline int bench_win_close(struct bench_win *w, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    if (BENCH_DYNAMIC == w->flavor && NULL != w->disp) {
        MPI_Barrier(comm);
        rc = MPI_Win_detach(w->win, w->base);
    }
    int rc2 = MPI_Win_free(&w->win);
    free(w->own);
    free(w->disp);
    w->own = NULL;
    w->disp = NULL;
    return MPI_SUCCESS != rc ? rc : rc2;
}

/* error text of an MPI error code, in a static buffer */
static inline const char *bench_errstr(int rc)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_SUCCESS != MPI_Error_string(rc, msg, &len)) snprintf(msg, sizeof(msg), "error %d", rc);
    for (int i = 0; i < len; ++i)
        if ('\n' == msg[i]) msg[i] = ' ';
    return msg;
}

/* The start of a two-rank loop program (bench/lock_loop.c,
 * bench/target_wait.c): MPI_Init, this rank, and an allocate window of
 * 4096 bytes (displacement unit disp_unit) that returns errors.  With args_ok false or
 * fewer than two ranks, rank 0 prints usage and every rank aborts. */
static inline void bench_loop_start(int *argc, char ***argv, int args_ok, const char *usage, int disp_unit,
                                    int *rank, void *base, MPI_Win *win)
{
    int size;

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || !args_ok) {
        if (0 == *rank) fprintf(stderr, "usage: %s\n", usage);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Win_allocate(4096, disp_unit, MPI_INFO_NULL, MPI_COMM_WORLD, base, win);
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
}

/* The end of a loop benchmark (bench/lock_loop.c, bench/target_wait.c):
 * rank 0 prints its fastest repetition (us per iteration) or the error,
 * then the window is freed and MPI finalized.  Returns main's exit code. */
static inline int bench_loop_finish(int rank, int rc, double best_seconds, MPI_Win *win)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        if (MPI_SUCCESS != rc) printf("error %d\n", rc);
        else printf("%.4f\n", best_seconds * 1e6);
    }
    MPI_Win_free(win);
    MPI_Finalize();
    return MPI_SUCCESS == rc ? 0 : 1;
}

#endif
