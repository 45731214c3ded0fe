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
 * What a relay could reach on the machine it runs on (docs/rationale.md,
 * "Relays"): two processes (fork, pinned to CPUs 0 and 1) stream N
 * bytes from one's private buffer to the other's through K shared slots of
 * S bytes each -- the writer copies a chunk in and publishes its sequence,
 * the reader copies it out and frees the slot -- against one
 * process_vm_readv of the same N bytes (what newrma's single copy does for
 * a create/dynamic window).  No MPI: the floor of the transfer, not of a
 * component.  Best of REPS.
 *
 *   bench/bin/relay_floor [KIB [SLOT_KIB [SLOTS [REPS]]]]   (64 16 4 200)
 * Build: mpicc -O2 -o bench/bin/relay_floor bench/relay_floor.c
 */
#define _GNU_SOURCE
#include "bench_common.h"

#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* each counter alone on its line */
struct relay_ctl {
    _Alignas(64) volatile uint64_t filled;    /* chunks the writer published */
    _Alignas(64) volatile uint64_t consumed;  /* chunks the reader copied out */
    _Alignas(64) volatile uint64_t round;     /* the writer starts round r */
    _Alignas(64) volatile uint64_t done;      /* the reader finished round r */
};

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void) sched_setaffinity(0, sizeof(set), &set);
}

static size_t chunk_len(size_t n, size_t s, uint64_t i)
{
    return (i + 1) * s > n ? n - i * s : s;
}

/* one round of the writer: every chunk into its slot when the slot is free */
static void relay_write(struct relay_ctl *c, char *slots, const char *buf, size_t n, size_t s, int k, uint64_t base)
{
    uint64_t chunks = (n + s - 1) / s;
    for (uint64_t i = 0; i < chunks; ++i) {
        uint64_t seq = base + i;
        while (seq >= __atomic_load_n(&c->consumed, __ATOMIC_ACQUIRE) + (uint64_t) k) continue;
        memcpy(slots + (seq % (uint64_t) k) * s, buf + i * s, chunk_len(n, s, i));
        __atomic_store_n(&c->filled, seq + 1, __ATOMIC_RELEASE);
    }
}

/* one round of the reader: every chunk out of its slot when it is filled */
static void relay_read(struct relay_ctl *c, const char *slots, char *buf, size_t n, size_t s, int k, uint64_t base)
{
    uint64_t chunks = (n + s - 1) / s;
    for (uint64_t i = 0; i < chunks; ++i) {
        uint64_t seq = base + i;
        while (__atomic_load_n(&c->filled, __ATOMIC_ACQUIRE) <= seq) continue;
        memcpy(buf + i * s, slots + (seq % (uint64_t) k) * s, chunk_len(n, s, i));
        __atomic_store_n(&c->consumed, seq + 1, __ATOMIC_RELEASE);
    }
}

int main(int argc, char **argv)
{
    size_t n = (size_t) (argc > 1 ? atol(argv[1]) : 64) << 10, s = (size_t) (argc > 2 ? atol(argv[2]) : 16) << 10;
    int k = argc > 3 ? atoi(argv[3]) : 4, reps = argc > 4 ? atoi(argv[4]) : 200;
    char *shm, *src, *dst;
    struct relay_ctl *c;
    double best_relay = 1e30, best_pvm = 1e30;
    uint64_t chunks;
    pid_t child;

    if (0 == n || 0 == s || k < 1 || reps < 1) {
        fprintf(stderr, "usage: relay_floor [KIB [SLOT_KIB [SLOTS [REPS]]]]\n");
        return 2;
    }
    shm = mmap(NULL, 4096 + (size_t) k * s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    src = malloc(n);
    dst = malloc(n);
    if (MAP_FAILED == shm || NULL == src || NULL == dst) {
        perror("relay_floor");
        return 1;
    }
    memset(shm, 0, 4096 + (size_t) k * s);
    memset(src, 1, n);
    memset(dst, 2, n);
    c = (struct relay_ctl *) shm;
    chunks = (n + s - 1) / s;
    child = fork();
    pin(0 == child ? 1 : 0);
    for (int r = 1; r <= reps; ++r) {
        uint64_t base = (uint64_t) (r - 1) * chunks;
        if (0 == child) {          /* the reader: a target copying a put out */
            while (c->round != (uint64_t) r) continue;
            relay_read(c, shm + 4096, dst, n, s, k, base);
            __atomic_store_n(&c->done, (uint64_t) r, __ATOMIC_RELEASE);
        } else {                   /* the writer: the origin, which times it */
            double t = bench_now();
            __atomic_store_n(&c->round, (uint64_t) r, __ATOMIC_RELEASE);
            relay_write(c, shm + 4096, src, n, s, k, base);
            while (__atomic_load_n(&c->done, __ATOMIC_ACQUIRE) != (uint64_t) r) continue;
            t = bench_now() - t;
            best_relay = t < best_relay ? t : best_relay;
        }
    }
    if (0 == child) {
        return 0;
    }
    (void) waitpid(child, NULL, 0);
    for (int r = 0; r < reps; ++r) {   /* the single copy, on ourselves */
        struct iovec local = { dst, n }, remote = { src, n };
        double t = bench_now();
        if ((ssize_t) n != process_vm_readv(getpid(), &local, 1, &remote, 1, 0)) break;
        t = bench_now() - t;
        best_pvm = t < best_pvm ? t : best_pvm;
    }
    printf("%zu KiB: relay (%d x %zu KiB slots) %.2f us %.1f GB/s; process_vm_readv %.2f us %.1f GB/s\n", n >> 10, k,
           s >> 10, best_relay * 1e6, (double) n / best_relay / 1e9, best_pvm * 1e6, (double) n / best_pvm / 1e9);
    return 0;
}
