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
 * A distributed hash table on MPI one-sided communication, the motivating
 * example of passive-target-rw-locks-slides.txt: every rank holds one part
 * of the table in an MPI window; a key hashes to a rank and a bucket there.
 *
 *   read:  MPI_Win_lock(SHARED, owner)    MPI_Get bucket(s)   MPI_Win_unlock
 *   write: MPI_Win_lock(EXCLUSIVE, owner) MPI_Get/MPI_Put     MPI_Win_unlock
 *
 * Collisions are resolved by linear probing inside the owner's part.  The
 * owner never has to call MPI for others to use its part (passive target).
 *
 *   dht [inserts-per-rank] [reads-per-rank] [buckets-per-rank]
 *
 * Prints what it did, whether every value read back was right, and the
 * throughput; exits non-zero if any value was wrong.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int64_t key;      /* 0: empty bucket */
    int64_t value;
} bucket_t;

typedef struct {
    MPI_Win win;
    int nranks;
    int64_t buckets;  /* per rank */
} dht_t;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int owner_of(const dht_t *dht, int64_t key) { return (int) (mix((uint64_t) key) % (uint64_t) dht->nranks); }
static int64_t home_of(const dht_t *dht, int64_t key) { return (int64_t) (mix((uint64_t) key * 31 + 7) % (uint64_t) dht->buckets); }
static int64_t value_for(int64_t key) { return key * 2654435761ll + 12345; }

/* Insert or update; returns 0 on success, -1 if the owner's part is full. */
static int dht_write(dht_t *dht, int64_t key, int64_t value)
{
    int owner = owner_of(dht, key);
    int64_t at = home_of(dht, key);
    bucket_t b;
    int ret = -1;

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, owner, 0, dht->win);
    for (int64_t probe = 0; probe < dht->buckets; ++probe, at = (at + 1) % dht->buckets) {
        MPI_Get(&b, sizeof(b), MPI_BYTE, owner, at, sizeof(b), MPI_BYTE, dht->win);
        MPI_Win_flush(owner, dht->win);
        if (0 == b.key || key == b.key) {
            bucket_t nb = { key, value };
            MPI_Put(&nb, sizeof(nb), MPI_BYTE, owner, at, sizeof(nb), MPI_BYTE, dht->win);
            ret = 0;
            break;
        }
    }
    MPI_Win_unlock(owner, dht->win);
    return ret;
}

/* Look up; returns 1 and sets *value if found, 0 if not. */
static int dht_read(dht_t *dht, int64_t key, int64_t *value)
{
    int owner = owner_of(dht, key);
    int64_t at = home_of(dht, key);
    bucket_t b;
    int found = 0;

    MPI_Win_lock(MPI_LOCK_SHARED, owner, 0, dht->win);
    for (int64_t probe = 0; probe < dht->buckets; ++probe, at = (at + 1) % dht->buckets) {
        MPI_Get(&b, sizeof(b), MPI_BYTE, owner, at, sizeof(b), MPI_BYTE, dht->win);
        MPI_Win_flush(owner, dht->win);
        if (key == b.key) { *value = b.value; found = 1; break; }
        if (0 == b.key) break;
    }
    MPI_Win_unlock(owner, dht->win);
    return found;
}

int main(int argc, char **argv)
{
    int rank, errors = 0, all_errors = 0;
    long inserts = argc > 1 ? atol(argv[1]) : 20000;
    long reads = argc > 2 ? atol(argv[2]) : 40000;
    dht_t dht;
    bucket_t *mine;
    char osc_name[64] = "";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dht.nranks);
    dht.buckets = argc > 3 ? atol(argv[3]) : 2 * inserts + 1;

    MPI_Win_allocate((MPI_Aint) (dht.buckets * (int64_t) sizeof(bucket_t)), sizeof(bucket_t),
                     MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &dht.win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, dht.win);
    for (int64_t i = 0; i < dht.buckets; ++i) mine[i].key = 0, mine[i].value = 0;
    MPI_Win_unlock(rank, dht.win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* every rank inserts its own keys, spread over every owner by the hash */
    double t0 = MPI_Wtime();
    for (long i = 0; i < inserts; ++i) {
        int64_t key = (int64_t) rank * inserts + i + 1;
        if (dht_write(&dht, key, value_for(key))) { errors++; break; }
    }
    double t_insert = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* then reads keys inserted by anyone, checking every value */
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t) (rank + 1);
    long total_keys = inserts * dht.nranks;
    t0 = MPI_Wtime();
    for (long i = 0; i < reads && total_keys > 0; ++i) {
        seed = mix(seed + (uint64_t) i);
        int64_t key = (int64_t) (seed % (uint64_t) total_keys) + 1, value = 0;
        if (!dht_read(&dht, key, &value) || value != value_for(key)) errors++;
    }
    double t_read = MPI_Wtime() - t0;

    double times[2] = { t_insert, t_read }, max_times[2];
    MPI_Reduce(times, max_times, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        const char *env = getenv("DHT_OSC_LABEL");
        snprintf(osc_name, sizeof(osc_name), "%s", env ? env : "osc as selected");
        printf("DHT on %d ranks (%s): %ld inserts and %ld reads per rank, %lld buckets per rank\n",
               dht.nranks, osc_name, inserts, reads, (long long) dht.buckets);
        printf("  result: %s (%d wrong or missing values)\n", all_errors ? "WRONG" : "all values correct",
               all_errors);
        printf("  throughput: inserts %.3f Mops/s, reads %.3f Mops/s\n",
               inserts * dht.nranks / max_times[0] / 1e6, reads * dht.nranks / max_times[1] / 1e6);
    }
    MPI_Win_free(&dht.win);
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
