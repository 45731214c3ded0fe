/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * osc/newrma: relay staging areas.  See osc_newrma_relay.h.
 *
 * Threads: relays are off under MPI_THREAD_MULTIPLE (osc_newrma_assist.c),
 * so the own area is made by the one thread that calls MPI at a time; the
 * peer mappings are used only by a target serving its mailbox, which holds
 * the serving lock (osc_newrma_progress.c).
 */

#define _GNU_SOURCE
#include "ompi_config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "osc_newrma.h"
#include "osc_newrma_relay.h"

/* head pages (the counters, then the segments), then the slots */
#define NEWRMA_RELAY_HEAD_BYTES (5 * 4096)
#define NEWRMA_RELAY_AREA_BYTES (NEWRMA_RELAY_HEAD_BYTES + NEWRMA_RELAY_SLOTS * NEWRMA_RELAY_SLOT_BYTES)
_Static_assert(sizeof(osc_newrma_relay_head_t) <= NEWRMA_RELAY_HEAD_BYTES, "the relay head fits its pages");

static osc_newrma_relay_area_t own = { .fd = -1 };
static bool own_failed = false;

typedef struct {
    pid_t pid;
    osc_newrma_relay_area_t area;
} relay_peer_t;

static relay_peer_t peers[NEWRMA_RELAY_PEERS];
static unsigned int peers_next = 0;     /* the slot the next new mapping evicts */

static void area_set(osc_newrma_relay_area_t *area, int fd, void *base)
{
    area->fd = fd;
    area->head = (osc_newrma_relay_head_t *) base;
    area->slots = (char *) base + NEWRMA_RELAY_HEAD_BYTES;
    area->cookie = area->head->cookie;
}

static void area_unmap(osc_newrma_relay_area_t *area)
{
    if (NULL != area->head) {
        (void) munmap(area->head, NEWRMA_RELAY_AREA_BYTES);
    }
    *area = (osc_newrma_relay_area_t) { .fd = -1 };
}

/* a cookie no other area of the job is likely to carry */
static uint64_t new_cookie(void)
{
    struct timespec ts;

    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t) getpid() << 40) ^ ((uint64_t) ts.tv_sec << 30) ^ (uint64_t) ts.tv_nsec ^ 1;
}

const osc_newrma_relay_area_t *osc_newrma_relay_own(void)
{
    void *base;
    int fd;

    if (NULL != own.head || own_failed) {
        return NULL != own.head ? &own : NULL;
    }
    own_failed = true;                     /* until it worked */
    fd = memfd_create("osc_newrma_relay", MFD_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    if (0 != ftruncate(fd, NEWRMA_RELAY_AREA_BYTES)
        || MAP_FAILED == (base = mmap(NULL, NEWRMA_RELAY_AREA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))) {
        (void) close(fd);
        return NULL;
    }
    ((osc_newrma_relay_head_t *) base)->cookie = new_cookie();
    area_set(&own, fd, base);
    own_failed = false;
    NEWRMA_VERBOSE(20, "relay staging area: fd %d, %d slots of %d bytes", fd, NEWRMA_RELAY_SLOTS,
                   NEWRMA_RELAY_SLOT_BYTES);
    return &own;
}

/* Map process pid's fd (its relay area) here: NULL if we may not. */
static void *map_peer_fd(pid_t pid, int fd)
{
    char path[64];
    void *base;
    int mine;

    (void) snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) pid, fd);
    mine = open(path, O_RDWR | O_CLOEXEC);
    if (mine < 0) {
        return NULL;
    }
    base = mmap(NULL, NEWRMA_RELAY_AREA_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
    (void) close(mine);                    /* the mapping keeps the memory */
    return MAP_FAILED == base ? NULL : base;
}

const osc_newrma_relay_area_t *osc_newrma_relay_peer(pid_t pid, int fd, uint64_t cookie)
{
    relay_peer_t *slot;
    void *base;

    for (unsigned int k = 0 ; k < NEWRMA_RELAY_PEERS ; ++k) {
        if (NULL != peers[k].area.head && peers[k].pid == pid && peers[k].area.fd == fd) {
            if (peers[k].area.cookie == cookie) {
                return &peers[k].area;
            }
            area_unmap(&peers[k].area);    /* another area under the same names: map anew */
        }
    }
    base = map_peer_fd(pid, fd);
    if (NULL == base) {
        return NULL;
    }
    slot = &peers[peers_next];
    peers_next = (peers_next + 1) % NEWRMA_RELAY_PEERS;
    area_unmap(&slot->area);
    slot->pid = pid;
    area_set(&slot->area, fd, base);
    if (slot->area.cookie != cookie) {     /* the fd names something else now */
        area_unmap(&slot->area);
        return NULL;
    }
    return &slot->area;
}

void osc_newrma_relay_fini(void)
{
    for (unsigned int k = 0 ; k < NEWRMA_RELAY_PEERS ; ++k) {
        area_unmap(&peers[k].area);
    }
    if (NULL != own.head) {
        int fd = own.fd;
        area_unmap(&own);
        (void) close(fd);
    }
    own_failed = false;
}
