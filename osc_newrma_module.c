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
 * osc/newrma: window creation for the four flavors -- the exchange that
 * makes every process agree on the path, the accumulate granularity and the
 * segment's shape (osc_newrma_shape_agree in osc_newrma_shm.c) -- the
 * choice of the window's function table, shared_query, attach/detach and
 * free.
 *
 * The function table (mpich-adi-rma-function-table.txt) is the first member
 * of the module: Open MPI calls win->w_osc_module->osc_put(...), so copying
 * the right table into the module at creation makes every MPI call on this
 * window go straight to the implementation that fits it, with no global
 * switch and no per-call branch on the window's kind.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompi/errhandler/errcode.h"
#include "ompi/errhandler/errcode-internal.h"
#include "opal/util/show_help.h"

#include "osc_newrma.h"
#include "osc_newrma_acc.h"
#include "osc_newrma_mailbox.h"
#include "osc_newrma_node_policy.h"
#include "osc_newrma_am.h"
#include "osc_newrma_single_copy.h"
#include "osc_newrma_progress.h"
#include "osc_newrma_active_target.h"
#include "osc_newrma_node_route.h"

/* Which table serves a window.  A window with a peer off this node (or
 * with every peer treated as remote, osc_newrma_force_remote) works by
 * active messages; allocate_shared windows are node-local by definition.
 * On one node, memory the component allocates (allocate, allocate_shared)
 * goes in the node segment and is reached by load/store; memory the user
 * brings (create, dynamic) stays where it is and is reached by single-copy
 * syscalls -- or, when `want_am` (agreed by all ranks: osc_newrma_force_am,
 * or single-copy refused somewhere), by active messages over the node's
 * FIFOs. */
static osc_newrma_path_t choose_path(int flavor, bool remote, bool want_am)
{
    if (MPI_WIN_FLAVOR_SHARED == flavor) {
        return NEWRMA_PATH_DIRECT;
    }
    if (remote) {
        return NEWRMA_PATH_AM;
    }
    if (MPI_WIN_FLAVOR_ALLOCATE == flavor) {
        return NEWRMA_PATH_DIRECT;
    }
    return want_am ? NEWRMA_PATH_AM : NEWRMA_PATH_USERMEM;
}

/* Every process of the group answers alike (a group with a process on
 * another node has one for everybody; pretend nodes, osc_newrma_fifo_node_ranks,
 * are agreed on first). */
static bool window_is_remote(struct ompi_communicator_t *comm)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;

    return c->force_remote || c->fifo_node_ranks > 0 || ompi_group_have_remote_peers(comm->c_local_group);
}

/* The MCA values that choose which collectives creation runs
 * (osc_newrma_force_remote: the node path or the active-message path;
 * osc_newrma_fifo_node_ranks: the split into pretend nodes) must be alike
 * on every process, and no later exchange could compare them: processes
 * that differ would run different collectives.  So they are compared
 * first, in one allreduce of each value and its negation (MPI_MAX gives
 * both the largest and the smallest); a mismatch fails creation on every
 * process with a help message. */
static int agree_path_inputs(ompi_osc_newrma_module_t *module, struct ompi_communicator_t *comm)
{
    const ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    int64_t mine[4] = { c->force_remote, -(int64_t) c->force_remote, c->fifo_node_ranks,
                        -(int64_t) c->fifo_node_ranks };
    int64_t all[4];
    int ret;

    if (1 == ompi_comm_size(comm)) {
        return OMPI_SUCCESS;
    }
    ret = comm->c_coll->coll_allreduce(mine, all, 4, MPI_INT64_T, MPI_MAX, comm,
                                       comm->c_coll->coll_allreduce_module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    if (all[0] == -all[1] && all[2] == -all[3]) {
        return OMPI_SUCCESS;
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "rank %d: the window's processes were given different "
                   "osc_newrma_force_remote (%d to %d) or osc_newrma_fifo_node_ranks (%u to %u)", module->rank,
                   (int) -all[1], (int) all[0], (unsigned int) -all[3], (unsigned int) all[2]);
    static bool shown = false;  /* once per process: every window of the job fails alike */
    if (0 == module->rank && !shown) {
        shown = true;
        opal_show_help("help-osc-newrma.txt", "path inputs differ", true, (int) -all[1], (int) all[0],
                       (unsigned int) -all[3], (unsigned int) all[2]);
    }
    return OMPI_ERR_BAD_PARAM;
}

/* This process's vote for the active-message path of a create/dynamic
 * window on one node (the window takes it if any process votes for it). */
static unsigned long wants_am(int flavor, int size)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;

    if (MPI_WIN_FLAVOR_CREATE != flavor && MPI_WIN_FLAVOR_DYNAMIC != flavor) {
        return 0;
    }
    return c->force_am || (size > 1 && !c->single_copy_usable);
}

static const ompi_osc_base_module_t *path_table(osc_newrma_path_t path)
{
    static const ompi_osc_base_module_t *const tables[] = {
        [NEWRMA_PATH_DIRECT] = &ompi_osc_newrma_direct_table,
        [NEWRMA_PATH_USERMEM] = &ompi_osc_newrma_usermem_table,
        [NEWRMA_PATH_AM] = &ompi_osc_newrma_am_table,
    };
    return tables[path];
}

static const char *path_name(osc_newrma_path_t path)
{
    static const char *const names[] = {
        [NEWRMA_PATH_DIRECT] = "direct load/store",
        [NEWRMA_PATH_USERMEM] = "user memory on this node (usermem)",
        [NEWRMA_PATH_AM] = "active messages",
    };
    return names[path];
}

static void set_path(ompi_osc_newrma_module_t *module, osc_newrma_path_t path)
{
    module->path = path;
    memcpy(&module->super, path_table(path), sizeof(module->super));
}

/* The single-copy path's batch of small puts/gets: one per window, not
 * locked, so none with threads (they would share it); no other path has
 * one. */
static int usermem_batch_init(ompi_osc_newrma_module_t *module)
{
    if (NEWRMA_PATH_USERMEM != module->path || osc_newrma_thread_multiple()
        || 0 == mca_osc_newrma_component.cma_batch_bytes) {
        return OMPI_SUCCESS;
    }
    module->usermem_batch = calloc(1, sizeof(*module->usermem_batch));
    if (NULL == module->usermem_batch) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    module->cma_batch_bytes = mca_osc_newrma_component.cma_batch_bytes;
    return OMPI_SUCCESS;
}

/* Release whatever creation got to; safe on a partly built module. */
static void module_destroy(ompi_osc_newrma_module_t *module)
{
    osc_newrma_progress_window_remove(module);
    osc_newrma_am_window_fini(module);
    osc_newrma_shm_detach(&module->shm);
    osc_newrma_slots_fini(module);
    osc_newrma_dyn_fini(&module->dyn);
    osc_newrma_group_cache_release(&module->start_groups);
    osc_newrma_group_cache_release(&module->post_groups);
    free(module->posts_seen);
    free(module->usermem_batch);
    free(module->start_matches);
    free(module->early_origins);
    if (NULL != module->comm) {
        ompi_comm_free(&module->comm);
    }
    if (NULL != module->group) {
        OBJ_RELEASE(module->group);
    }
    OBJ_DESTRUCT(&module->lock);
    OBJ_DESTRUCT(&module->grant_lock);
    free(module);
}

/* May the window take the user-memory path (create or dynamic, another
 * process to reach)? */
static bool window_of_user_memory(const ompi_osc_newrma_module_t *module)
{
    return (MPI_WIN_FLAVOR_CREATE == module->flavor || MPI_WIN_FLAVOR_DYNAMIC == module->flavor) && module->size > 1;
}

/* What each process contributes to the segment's layout and peer info, the
 * address of a word its neighbour reads to test single-copy access, its
 * accumulate granularity and path vote, the shape it was asked for
 * (osc_newrma_shape_t) and its window id proposal: one allgather on the
 * user's communicator. */
static int gather_peer_inputs(ompi_osc_newrma_module_t *module, struct ompi_communicator_t *comm, void *base,
                              size_t size, int disp_unit, osc_newrma_peer_input_t **peers_out)
{
    osc_newrma_peer_input_t mine = {
        .size = size,
        .base = (uint64_t) (uintptr_t) base,
        .disp_unit = disp_unit,
        .pid = (int32_t) getpid(),
        .probe = (uint64_t) (uintptr_t) &module->rank,
        .acc_granularity = module->acc_granularity,
        .wants_am = wants_am(module->flavor, module->size),
        .segment_id = NULL != module->shm.base ? module->shm.id : 0,
        .segment_uses = module->shm.uses,
        .window_id = osc_newrma_am_window_id_propose(),
    };
    osc_newrma_peer_input_t *peers = malloc(sizeof(*peers) * (size_t) module->size);

    osc_newrma_shape_mine(module, &mine.shape);
    *peers_out = peers;
    if (NULL == peers) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    return comm->c_coll->coll_allgather(&mine, sizeof(mine), MPI_BYTE, peers, sizeof(mine), MPI_BYTE,
                                        comm, comm->c_coll->coll_allgather_module);
}

/* Can this process read its neighbour's memory?  Its vote; the segment's
 * mapping reduction decides for all, so that all ranks take the same path
 * (OMPI_ERR_UNREACH on every rank if any could not: the window then goes
 * over the node's FIFOs). */
static int single_copy_reach_vote(ompi_osc_newrma_module_t *module, const osc_newrma_peer_input_t *peers)
{
    int neighbour = (module->rank + 1) % module->size, value = -1;
    int ok = OMPI_SUCCESS == osc_newrma_single_copy(peers[neighbour].pid, &value, peers[neighbour].probe,
                                                    sizeof(value), false)
             && value == neighbour;

    if (!ok) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "could not read the memory of process %d with process_vm_readv (Yama "
                       "ptrace_scope, seccomp or a missing CAP_SYS_PTRACE?): the window uses active "
                       "messages over the node's FIFOs instead", (int) peers[neighbour].pid);
    }
    return ok;
}

/* A rank's window memory in the segment, as MPI hands it to the user: a
 * zero-size rank of a noncontiguous window has none (NULL); in a contiguous
 * one its base is where the next rank's memory starts. */
static void *segment_window_base(ompi_osc_newrma_module_t *module, int rank)
{
    const osc_newrma_peer_info_t *peer = osc_newrma_shm_peer(&module->shm, rank);

    if (0 == peer->size && module->alloc_shared_noncontig) {
        return NULL;
    }
    return module->shm.base + peer->data_offset;
}

/* What every process must see alike: the accumulate granularity (offsets map
 * to stripes the same way everywhere; the largest asked for), whether locks
 * may be used (unless every process said no_locks) and the path. */
static int window_agree(ompi_osc_newrma_module_t *module, uint64_t granularity, bool no_locks, bool want_am,
                        bool remote)
{
    module->no_locks = no_locks;
    module->acc_granularity = granularity;
    module->acc_shift = osc_newrma_acc_shift(granularity);
    set_path(module, choose_path(module->flavor, remote, want_am));
    return osc_newrma_info_set_granularity(module);
}

/* The node path: one allgather decides the path and sizes the segment (with
 * the window memory of allocate flavors), which is then mapped.  Returns
 * OMPI_ERR_UNREACH on every rank when the window must use active messages
 * after all (a vote for them, or single-copy refused somewhere). */
static int node_window_init(ompi_osc_newrma_module_t *module, struct ompi_communicator_t *comm, void **base,
                            size_t size, int disp_unit)
{
    int flavor = module->flavor;
    osc_newrma_peer_input_t *peers = NULL;
    uint64_t granularity = 0;
    bool want_am = false;
    int ret;

    if (module->size > 1) {
        osc_newrma_shm_cache_take(&module->shm);
    }
    /* peers read our memory (the probe word, then the window) only after the
     * allgather below: say they may before it */
    if (window_of_user_memory(module) && !wants_am(flavor, module->size)) {
        osc_newrma_single_copy_allow_peers();
    }
    ret = gather_peer_inputs(module, comm, MPI_WIN_FLAVOR_CREATE == flavor ? *base : NULL,
                             MPI_WIN_FLAVOR_DYNAMIC == flavor ? 0 : size, disp_unit, &peers);
    if (OMPI_SUCCESS != ret) {
        goto out;
    }
    module->am_id = 0;
    for (int i = 0 ; i < module->size ; ++i) {
        granularity = peers[i].acc_granularity > granularity ? peers[i].acc_granularity : granularity;
        want_am |= 0 != peers[i].wants_am;
        /* the window id, should the window take active messages after all */
        module->am_id = peers[i].window_id > module->am_id ? (uint32_t) peers[i].window_id : module->am_id;
    }
    /* the segment's layout and the node path's protocols from values every
     * process agrees on, whatever each was given (a per-process MCA value or
     * info key would give each its own offsets) */
    osc_newrma_shape_agree(&module->shape, peers, module->size);
    module->alloc_shared_noncontig = module->shape.noncontig;
    ret = window_agree(module, granularity, module->shape.no_locks, want_am, false);
    if (OMPI_SUCCESS != ret) {
        goto out;
    }
    if (NEWRMA_PATH_AM == module->path) {
        osc_newrma_shm_cache_keep(&module->shm);
        ret = OMPI_ERR_UNREACH;
        goto out;
    }
    ret = osc_newrma_shm_attach(module, comm, peers,
                                NEWRMA_PATH_USERMEM == module->path && module->size > 1 ? single_copy_reach_vote(module, peers) : 1);
    if (OMPI_SUCCESS == ret) {
        osc_newrma_node_policy_init(module);
        osc_newrma_barrier_init(module);
        ret = osc_newrma_progress_window_add(module);
    }
out:
    free(peers);
    return ret;
}

/* The active-message path: the window's own communicator carries its
 * agreement and, later, whatever the path needs of a communicator.  The
 * window id is the largest proposal (osc_newrma_am_window_id_propose): in
 * the agreement here or, when the node path gave the window up (`agreed`),
 * in its allgather (module->am_id).  Every process has registered the window
 * under its id for incoming packets before anyone may send one
 * (osc_newrma_am_window_id_agree, the closing reduction). */
static int am_window_init(ompi_osc_newrma_module_t *module, struct ompi_communicator_t *comm, void **base,
                          size_t size, int disp_unit, bool agreed)
{
    int ret = ompi_comm_dup(comm, &module->comm);

    if (OMPI_SUCCESS != ret) {
        module->comm = NULL;
        return ret;
    }
    if (!agreed) {
        /* the largest granularity; locks unless every process said no_locks */
        uint64_t agree[3] = { module->acc_granularity, !module->no_locks, osc_newrma_am_window_id_propose() };
        ret = module->comm->c_coll->coll_allreduce(MPI_IN_PLACE, agree, 3, MPI_UINT64_T, MPI_MAX,
                                                   module->comm, module->comm->c_coll->coll_allreduce_module);
        module->am_id = (uint32_t) agree[2];
        ret = OMPI_SUCCESS == ret ? window_agree(module, agree[0], 0 == agree[1], true, true) : ret;
    }
    set_path(module, NEWRMA_PATH_AM);
    ret = OMPI_SUCCESS == ret ? osc_newrma_am_window_init(module, base, size, disp_unit) : ret;
    return OMPI_SUCCESS == ret ? osc_newrma_am_window_id_agree(module, module->am_id) : ret;
}

int ompi_osc_newrma_window_create(struct ompi_win_t *win, void **base, size_t size,
                                  int disp_unit, struct ompi_communicator_t *comm,
                                  struct opal_info_t *info, int flavor, int *model)
{
    ompi_osc_newrma_module_t *module = calloc(1, sizeof(*module));
    int ret;

    (void) info;   /* read through the window's info subscriptions */
    if (NULL == module) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    OBJ_CONSTRUCT(&module->lock, opal_mutex_t);
    OBJ_CONSTRUCT(&module->grant_lock, opal_mutex_t);
    osc_newrma_dyn_init(&module->dyn);
    module->win = win;
    module->flavor = flavor;
    module->state = NEWRMA_WIN_NONE;
    module->rank = ompi_comm_rank(comm);
    module->size = ompi_comm_size(comm);
    module->group = comm->c_local_group;
    OBJ_RETAIN(module->group);
    win->w_osc_module = &module->super;

    ret = osc_newrma_info_subscribe(module);
    ret = OMPI_SUCCESS == ret ? osc_newrma_info_read_alignment(module) : ret;
    if (OMPI_SUCCESS != ret) {
        goto error;
    }
    /* an allocate_shared window takes the node path whatever they say */
    ret = MPI_WIN_FLAVOR_SHARED == flavor ? OMPI_SUCCESS : agree_path_inputs(module, comm);
    if (OMPI_SUCCESS != ret) {
        goto error;
    }
    if (MPI_WIN_FLAVOR_SHARED == flavor || !window_is_remote(comm)) {
        ret = node_window_init(module, comm, base, size, disp_unit);
        if (OMPI_ERR_UNREACH == ret) {
            /* every rank knows: active messages over the node's FIFOs */
            ret = am_window_init(module, comm, base, size, disp_unit, true);
        }
    } else {
        ret = am_window_init(module, comm, base, size, disp_unit, false);
    }
    if (OMPI_SUCCESS != ret) {
        goto error;
    }

    /* allocate flavors hand the memory back; create_dynamic passes no
     * base at all (MPI_BOTTOM as the pointer itself) */
    if (NEWRMA_PATH_DIRECT == module->path) {
        *base = segment_window_base(module, module->rank);
    }
    ret = usermem_batch_init(module);
    if (OMPI_SUCCESS != ret) {
        goto error;
    }
    osc_newrma_node_policy_batch_set(module);
    *model = MPI_WIN_UNIFIED;
    module->created = true;
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "window of %d ranks, flavor %d, %s path, segment %lu bytes",
                   module->size, flavor, path_name(module->path),
                   (unsigned long) module->shm.layout.total_size);
    return OMPI_SUCCESS;

error:
    /* MPI_Win_allocate and its siblings of Open MPI 4.1 report any failure
     * of the component as MPI_ERR_WIN: say what it was */
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_WARN, "window creation failed on rank %d: %s", module->rank,
                   ompi_mpi_errnum_get_string(ompi_errcode_get_mpi_code(ret)));
    win->w_osc_module = NULL;
    module_destroy(module);
    return ret;
}

int ompi_osc_newrma_free(struct ompi_win_t *win)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    int ret = osc_newrma_epoch_check_free(module);

    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* an operation handed to a target is not left in its mailbox */
    ret = osc_newrma_mailbox_flush_pending(module);
    if (OMPI_SUCCESS != ret) {
        return ret;
    }
    /* every packet of the window handed to its receivers before the
     * barrier, so none is lost when a transport's window state goes (the
     * FIFO segment) */
    if (NEWRMA_PATH_AM == module->path) {
        ret = osc_newrma_am_window_quiesce(module);
        if (OMPI_SUCCESS != ret) {
            return ret;
        }
    }
    /* nobody may still be reading or writing our memory when it goes: the
     * window's own communicator or, on the node path, its segment's barrier */
    if (NULL != module->comm && module->size > 1) {
        ret = module->comm->c_coll->coll_barrier(module->comm, module->comm->c_coll->coll_barrier_module);
    } else if (module->shm.is_shared) {
        osc_newrma_barrier(module);
        /* out of the progress list before the segment is unmapped or
         * handed on: another thread's progress must not serve it then */
        osc_newrma_progress_window_remove(module);
        osc_newrma_shm_cache_keep(&module->shm);
    }
    win->w_osc_module = NULL;
    module_destroy(module);
    return ret;
}

/* What MPI_Win_shared_query reports of one rank. */
typedef struct {
    size_t size;
    int disp_unit;
    void *base;
} shared_view_t;

/* `rank`'s memory where this process can load and store it: the segment
 * of a window on the node path (allocate and shared flavors), the node
 * route's segment of an allocate window on the active-message path (the
 * node's processes), our own memory; anything else (another process's
 * user memory, a process off this node or forced remote) is not
 * addressable here: size 0, disp_unit 0 and NULL, as MPI 4.1 says. */
static shared_view_t shared_view(ompi_osc_newrma_module_t *module, int rank)
{
    const shared_view_t none = { 0, 0, NULL };

    if (NEWRMA_PATH_AM != module->path) {
        const osc_newrma_peer_info_t *peer = osc_newrma_shm_peer(&module->shm, rank);

        if (MPI_WIN_FLAVOR_CREATE != module->flavor) {
            return (shared_view_t) { peer->size, peer->disp_unit, segment_window_base(module, rank) };
        }
        return rank == module->rank ? (shared_view_t) { peer->size, peer->disp_unit, (void *) (uintptr_t) peer->base }
                                    : none;
    }
    if (NULL != module->am_node) {
        const osc_newrma_node_peer_t *peer = osc_newrma_node_route_peer(module->am_node, rank);

        if (NULL != peer) {
            return (shared_view_t) { peer->size, peer->disp_unit,
                                     0 == peer->size ? NULL : module->am_node->base + peer->offset };
        }
    }
    return rank == module->rank ? (shared_view_t) { module->am_size, module->am_disp_unit, module->am_base } : none;
}

/* MPI 4.1 allows the query on create, allocate and shared windows (not on
 * dynamic ones); MPI_PROC_NULL names the lowest rank whose memory has bytes
 * and is addressable here. */
int ompi_osc_newrma_shared_query(struct ompi_win_t *win, int rank, size_t *size,
                                 int *disp_unit, void *baseptr)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);
    shared_view_t view = { 0, 0, NULL };

    if (MPI_WIN_FLAVOR_DYNAMIC == module->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    if (MPI_PROC_NULL == rank) {
        for (int r = 0 ; r < module->size && 0 == view.size ; ++r) {
            view = shared_view(module, r);
        }
        if (0 == view.size) {
            view = (shared_view_t) { 0, 0, NULL };
        }
    } else if (rank < 0 || rank >= module->size) {
        return MPI_ERR_RANK;
    } else {
        view = shared_view(module, rank);
    }
    *size = view.size;
    *disp_unit = view.disp_unit;
    *(void **) baseptr = view.base;
    return OMPI_SUCCESS;
}

int ompi_osc_newrma_attach(struct ompi_win_t *win, void *base, size_t len)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);

    if (MPI_WIN_FLAVOR_DYNAMIC != module->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    return osc_newrma_dyn_attach(module, base, len);
}

int ompi_osc_newrma_detach(struct ompi_win_t *win, const void *base)
{
    ompi_osc_newrma_module_t *module = osc_newrma_module(win);

    if (MPI_WIN_FLAVOR_DYNAMIC != module->flavor) {
        return OMPI_ERR_RMA_FLAVOR;
    }
    return osc_newrma_dyn_detach(module, base);
}
