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
 * The machine's floors for on-node RMA, measured without MPI between two
 * processes (fork), pinned to CPUs 0 and 1 when there are two:
 *   pingpong    round trip of one cache line: each side stores a counter
 *               the other spins on (what a fence or a PSCW round must at
 *               least cost: one notice each way)                       [us]
 *   atomic      one atomic fetch-add on a line the other process just
 *               changed, transfer included: half the round trip of a
 *               ping-pong whose every hand-over is a fetch-add        [us]
 *   pingpong_1cpu  the ping-pong with both processes on CPU 0, each
 *               yielding the CPU while it waits (no spinning: the other
 *               side cannot run until it does): two context switches, the
 *               floor of a round trip between two processes that share a
 *               core, as ranks do when they outnumber the cores       [us]
 *   pvm_writev  one process_vm_writev of 8 B into the other process
 *               (the floor of an operation on a create/dynamic window that
 *               is reached by a single-copy system call)               [us]
 *   pvm_readv   the same with process_vm_readv                         [us]
 *   memcpy      bandwidth of memcpy at each size, buffers reused (cache
 *               hot, like the benchmark's)                 [MB/s, 1e6 B/s]
 * Medians over batches.  Output lines as bench/rma_bench.c's:
 *   row 0 floor - NAME BYTES VALUE
 *   floors quick|full
 */
#define _GNU_SOURCE
#include "bench_common.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_BATCHES 64

/* one cache line each, so that the flag is alone on its line */
struct shared {
    _Alignas(64) volatile uint64_t flag;
    _Alignas(64) volatile uint64_t pvm_target; /* the child's, written by the parent's syscalls */
    _Alignas(64) volatile int stop;
};

static struct shared *sh;
static int batches;
static double batch_s;

static void pin(int cpu)
{
    cpu_set_t set;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* how a round trip hands the line over */
enum handover { STORE, ATOMIC, YIELD };

static void wait_for(uint64_t want, enum handover how)
{
    while (sh->flag != want) {
        if (YIELD == how) sched_yield();
        else __builtin_ia32_pause();
    }
}

/* the child's side of n round trips starting at counter `from` */
static void pong(uint64_t from, long n, enum handover how)
{
    int atomic = ATOMIC == how;
    for (long i = 0; i < n; ++i) {
        wait_for(from + 2 * (uint64_t) i + 1, how);
        if (atomic) __atomic_fetch_add(&sh->flag, 1, __ATOMIC_ACQ_REL);
        else __atomic_store_n(&sh->flag, from + 2 * (uint64_t) i + 2, __ATOMIC_RELEASE);
    }
}

/* the parent's side: seconds for n round trips */
static double ping(uint64_t from, long n, enum handover how)
{
    int atomic = ATOMIC == how;
    double t0 = bench_now();
    for (long i = 0; i < n; ++i) {
        if (atomic) __atomic_fetch_add(&sh->flag, 1, __ATOMIC_ACQ_REL);
        else __atomic_store_n(&sh->flag, from + 2 * (uint64_t) i + 1, __ATOMIC_RELEASE);
        wait_for(from + 2 * (uint64_t) i + 2, how);
    }
    return bench_now() - t0;
}

/* Median round trip in microseconds.  The parent tells the child the
 * batch size through a pipe (outside the timing), so both sides agree. */
static double pingpong(int to_child, enum handover how)
{
    long n = YIELD == how ? 1000 : 20000;
    double t[MAX_BATCHES];
    for (int b = -1; b < batches; ++b) { /* b = -1: warm-up and calibration */
        uint64_t from = sh->flag;
        long msg[3] = { n, how, (long) from };
        if (write(to_child, msg, sizeof(msg)) != sizeof(msg)) return -1;
        double s = ping(from, n, how);
        if (b < 0) {
            long want = (long) (batch_s / (s / (double) n));
            n = want < 100 ? 100 : want;
        } else {
            t[b] = s / (double) n * 1e6;
        }
    }
    return bench_median(t, batches);
}

/* the child: runs the round trips it is told about until the pipe closes */
static void child(int from_parent)
{
    long msg[3]; /* iterations, hand-over, starting counter */
    pin(1);
    while (read(from_parent, msg, sizeof(msg)) == sizeof(msg)) {
        pin(YIELD == msg[1] ? 0 : 1); /* the parent's CPU for the yielding hand-over */
        pong((uint64_t) msg[2], msg[0], (enum handover) msg[1]);
    }
    _exit(0);
}

/* median microseconds of one 8-byte process_vm_writev (or readv) into the child */
static double pvm(pid_t pid, int write_it)
{
    uint64_t v = 1;
    struct iovec local = { &v, sizeof(v) }, remote = { (void *) &sh->pvm_target, sizeof(v) };
    double t[MAX_BATCHES];
    long n = 500;
    for (int b = 0; b < batches; ++b) {
        double t0 = bench_now();
        for (long i = 0; i < n; ++i) {
            ssize_t got = write_it ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                                   : process_vm_readv(pid, &local, 1, &remote, 1, 0);
            if (got != (ssize_t) sizeof(v)) return -1;
        }
        t[b] = (bench_now() - t0) / (double) n * 1e6;
    }
    return bench_median(t, batches);
}

/* seconds for n memcpy of `bytes` */
static double copies(size_t bytes, char *dst, const char *src, long n)
{
    double t0 = bench_now();
    for (long i = 0; i < n; ++i) {
        memcpy(dst, src, bytes);
        __asm__ volatile("" ::"r"(dst) : "memory"); /* keep every copy */
    }
    return bench_now() - t0;
}

/* median MB/s of memcpy of `bytes` between two reused buffers */
static double copy_bw(size_t bytes, char *dst, const char *src)
{
    double t[MAX_BATCHES], s;
    long n = 1;
    while ((s = copies(bytes, dst, src, n)) < batch_s / 8) n *= 2; /* calibration, warm-up */
    n = (long) (batch_s / (s / (double) n)) + 1;
    for (int b = 0; b < batches; ++b) t[b] = (double) bytes * (double) n / copies(bytes, dst, src, n) / 1e6;
    return bench_median(t, batches);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && 0 == strcmp(argv[1], "quick"), fds[2];
    static const size_t sizes[] = { 1024, 4096, 16384, 65536, 262144, 1u << 20, 4u << 20 };

    /* many short batches: a batch that another process's time slice lands
     * in is an outlier the median drops (the machine may be shared) */
    batches = quick ? 21 : 51;
    batch_s = 0.5e-3;
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == sh || 0 != pipe(fds)) return 1;
    pid_t pid = fork();
    if (0 == pid) {
        close(fds[1]);
        child(fds[0]);
    }
    close(fds[0]);
    pin(0);
    printf("row 0 floor - pingpong 0 %.4f\n", pingpong(fds[1], STORE));
    printf("row 0 floor - atomic 0 %.4f\n", pingpong(fds[1], ATOMIC) / 2);
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) /* else every ping-pong above shared the CPU already */
        printf("row 0 floor - pingpong_1cpu 0 %.4f\n", pingpong(fds[1], YIELD));
    double w = pvm(pid, 1), r = pvm(pid, 0);
    if (w < 0) printf("row 0 floor - pvm_writev 8 -\nnote 0 process_vm_writev refused\n");
    else printf("row 0 floor - pvm_writev 8 %.4f\nrow 0 floor - pvm_readv 8 %.4f\n", w, r);
    close(fds[1]);
    waitpid(pid, NULL, 0);

    char *a = malloc(4u << 20), *b = malloc(4u << 20);
    memset(a, 1, 4u << 20);
    memset(b, 2, 4u << 20);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k)
        printf("row 0 floor - memcpy %zu %.1f\n", sizes[k], copy_bw(sizes[k], b, a));
    printf("done\n");
    return 0;
}
