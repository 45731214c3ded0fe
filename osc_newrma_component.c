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
 * osc/newrma: the component: MCA parameters, init/finalize, and the
 * query/select pair through which Open MPI offers it every new window.
 */

#include "ompi_config.h"

#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_pvar.h"
#include "opal/runtime/opal.h"
#include "opal/util/bit_ops.h"
#include "opal/util/show_help.h"

#include "ompi/mca/osc/base/base.h"

#include "osc_newrma.h"
#include "osc_newrma_am.h"
#include "osc_newrma_single_copy.h"
#include "osc_newrma_progress.h"
#include "osc_newrma_relay.h"

static int component_register(void);
static int component_init(bool enable_progress_threads, bool enable_mpi_threads);
static int component_finalize(void);
static int component_query(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                           struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor);
static int component_select(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                            struct ompi_communicator_t *comm, struct opal_info_t *info,
                            int flavor, int *model);

ompi_osc_newrma_component_t mca_osc_newrma_component = {
    .super = {
        .osc_version = {
            OMPI_OSC_BASE_VERSION_3_0_0,
            .mca_component_name = "newrma",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_register_component_params = component_register,
        },
        .osc_data = {
            MCA_BASE_METADATA_PARAM_NONE
        },
        .osc_init = component_init,
        .osc_query = component_query,
        .osc_select = component_select,
        .osc_finalize = component_finalize,
    },
};

/* ------------------------------------------------------------------ */
/* MCA parameters                                                      */
/* ------------------------------------------------------------------ */

static void register_uint_scoped(const char *name, const char *description, int level,
                                 mca_base_var_scope_t scope, unsigned int default_value, unsigned int *storage)
{
    *storage = default_value;
    (void) mca_base_component_var_register(&mca_osc_newrma_component.super.osc_version, name, description,
                                           MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL, 0, 0, level, scope, storage);
}

static void register_uint(const char *name, const char *description, int level,
                          unsigned int default_value, unsigned int *storage)
{
    register_uint_scoped(name, description, level, MCA_BASE_VAR_SCOPE_READONLY, default_value, storage);
}

/* A value that shapes a window shared by several processes (a segment's
 * layout, a protocol both sides follow, the path): MCA's GROUP scope, as
 * osc/rdma registers its own.  Windows agree on one value at creation
 * (osc_newrma_shape_agree, the FIFO segment's header) or need it alike
 * (docs/tuning.md, "Values that must match"). */
static void register_group_uint(const char *name, const char *description, int level,
                                unsigned int default_value, unsigned int *storage)
{
    register_uint_scoped(name, description, level, MCA_BASE_VAR_SCOPE_GROUP, default_value, storage);
}

/* returns the variable's index */
static int register_bool(const char *name, const char *description, int level, mca_base_var_scope_t scope,
                         bool default_value, bool *storage)
{
    *storage = default_value;
    return mca_base_component_var_register(&mca_osc_newrma_component.super.osc_version, name, description,
                                           MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, level, scope, storage);
}

static int register_size_scoped(const char *name, const char *description, int level, mca_base_var_scope_t scope,
                                size_t default_value, size_t *storage)
{
    *storage = default_value;
    return mca_base_component_var_register(&mca_osc_newrma_component.super.osc_version, name, description,
                                           MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, level, scope, storage);
}

static int register_size(const char *name, const char *description, int level,
                         size_t default_value, size_t *storage)
{
    return register_size_scoped(name, description, level, MCA_BASE_VAR_SCOPE_READONLY, default_value, storage);
}

/* MPI_T performance variables osc_newrma_packets_<kind>: packets this
 * process sent over the transport, per kind (packets to itself not
 * counted).  Tests read them to check the protocol's message counts. */
static void register_packet_counters(mca_base_component_t *version)
{
    static const char *const kinds[NEWRMA_PKT_KINDS] = {
        [NEWRMA_PKT_PUT] = "put", [NEWRMA_PKT_GET] = "get", [NEWRMA_PKT_ACC] = "acc",
        [NEWRMA_PKT_GET_ACC] = "get_acc", [NEWRMA_PKT_CAS] = "cas", [NEWRMA_PKT_LOCK] = "lock",
        [NEWRMA_PKT_SYNC] = "sync", [NEWRMA_PKT_INFO] = "info", [NEWRMA_PKT_POST] = "post",
        [NEWRMA_PKT_GRANT] = "grant", [NEWRMA_PKT_ACK] = "ack", [NEWRMA_PKT_REPLY] = "reply",
        [NEWRMA_PKT_INFO_REPLY] = "info_reply",
    };
    char name[64], description[160];

    for (int k = 0 ; k < NEWRMA_PKT_KINDS ; ++k) {
        snprintf(name, sizeof(name), "packets_%s", kinds[k]);
        snprintf(description, sizeof(description),
                 "Active-message packets of kind %s this process has sent to other processes", kinds[k]);
        (void) mca_base_component_pvar_register(version, name, description, OPAL_INFO_LVL_4,
                                                MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG,
                                                NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
                                                MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                                NULL, NULL, NULL, &mca_osc_newrma_component.packets_sent[k]);
    }
}

/* MPI_T performance variables of the mechanisms in which a target helps on
 * windows of user memory on one node (osc_newrma_mailbox.c,
 * osc_newrma_shared_copy.c, osc_newrma_relay.c): operations targets applied
 * for this process, requests it took back (no target took them in time),
 * operations its PSCW epochs left to their targets' MPI_Win_wait, bytes
 * targets copied with it or relayed for it; and of the UCX transport:
 * messages that came by rendezvous (osc_newrma_transport_ucx.c). */
static void register_path_counters(mca_base_component_t *version)
{
    static const struct { const char *name, *description; size_t offset; } counters[] = {
        { "assisted_ops", "Small operations of this process (puts, gets, accumulates, fetch_and_op, "
          "compare_and_swap) that their targets applied from their mailboxes (windows of user memory on one "
          "node, target inside MPI)", offsetof(ompi_osc_newrma_component_t, assisted_ops) },
        { "assist_withdrawn", "Requests this process posted in a target's mailbox and took back because the "
          "target did not take them in time: small operations (then done by single copy), shared copies the "
          "target never joined, relays (then copied another way)",
          offsetof(ompi_osc_newrma_component_t, assist_withdrawn) },
        { "assist_left", "Puts and accumulates without result of this process that MPI_Win_complete left in "
          "their targets' mailboxes, for the targets' MPI_Win_wait to apply (windows of user memory on one "
          "node)", offsetof(ompi_osc_newrma_component_t, assist_left) },
        { "shared_copy_bytes", "Bytes of this process's large puts, gets and accumulates that their targets "
          "copied (or reduced) while inside MPI (windows of user memory on one node; the rest the origin did; "
          "see osc_newrma_assist_share_bytes)", offsetof(ompi_osc_newrma_component_t, shared_copy_bytes) },
        { "relayed_bytes", "Bytes of this process's puts, gets and accumulates relayed through shared slots "
          "to targets inside MPI (windows of user memory on one node; see osc_newrma_relay_piece_bytes)",
          offsetof(ompi_osc_newrma_component_t, relayed_bytes) },
        { "fail_injected", "Testing: single copies of this process that osc_newrma_fail_at failed or cut "
          "short", offsetof(ompi_osc_newrma_component_t, fail_injected) },
        { "ucx_rendezvous_received", "UCX active messages this process received by rendezvous (the "
          "others came eagerly; see osc_newrma_ucx_eager_limit)",
          offsetof(ompi_osc_newrma_component_t, ucx_rendezvous_received) },
        { "route_node_ops", "Operations of this process that the node route did as loads and stores: "
          "MPI_Win_allocate windows spanning nodes, to peers on this node",
          offsetof(ompi_osc_newrma_component_t, route_node_ops) },
        { "route_am_ops", "Operations of this process that went by active messages (windows spanning nodes, "
          "and the other windows of the active-message path)", offsetof(ompi_osc_newrma_component_t, route_am_ops) },
        { "route_node_locks", "Passive-target locks this process took in the node's segment itself (MPI_Win_lock "
          "of a peer on this node in an MPI_Win_allocate window spanning nodes; see osc_newrma_node_lock)",
          offsetof(ompi_osc_newrma_component_t, route_node_locks) },
        { "route_native_ops", "Operations of this process done by UCX RMA or atomics without the target's "
          "CPU (windows of the active-message path with osc_newrma_native_rma)",
          offsetof(ompi_osc_newrma_component_t, route_native_ops) },
    };

    for (size_t k = 0 ; k < sizeof(counters) / sizeof(counters[0]) ; ++k) {
        (void) mca_base_component_pvar_register(version, counters[k].name, counters[k].description, OPAL_INFO_LVL_4,
                                                MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG,
                                                NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
                                                MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                                NULL, NULL, NULL,
                                                (char *) &mca_osc_newrma_component + counters[k].offset);
    }
}

static int component_register(void)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    mca_base_component_t *version = &c->super.osc_version;

    /* above osc/sm's (100, fixed, when every rank is on the node) and
     * osc/rdma's (101): among several components that accept a window,
     * newrma takes it instead of a tie settled by load order */
    c->priority = 102;
    (void) mca_base_component_var_register(version, "priority",
        "Priority of osc/newrma among the osc components that accept a window (higher wins)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY, &c->priority);

    register_uint("slots",
        "Number of slots of a window's operation table: target elements are kept in slot "
        "(rank mod slots), so lookups cost O(targets per slot) and a window's memory does not "
        "grow with the communicator size (rounded down to a power of two; minimum 1)",
        OPAL_INFO_LVL_9, 64, &c->slots);
    register_uint("op_pool_local",
        "Operation elements reserved for each window (window-local pool, active-message path)",
        OPAL_INFO_LVL_9, 256, &c->op_pool_local);
    register_uint("op_pool_global",
        "Operation elements shared by all windows (global pool, active-message path)",
        OPAL_INFO_LVL_9, 4096, &c->op_pool_global);
    register_uint("target_pool_local",
        "Target elements reserved for each window (window-local pool)",
        OPAL_INFO_LVL_9, 64, &c->target_pool_local);
    register_uint("target_pool_global",
        "Target elements shared by all windows (global pool)",
        OPAL_INFO_LVL_9, 1024, &c->target_pool_global);
    register_size("piggyback_threshold",
        "Operations queued per target before they are issued instead of waiting to carry the "
        "closing synchronization (RMA_DONE/UNLOCK) piggybacked on the last one",
        OPAL_INFO_LVL_9, 16, &c->piggyback_threshold);
    register_size("single_op_threshold",
        "Largest operation (bytes, basic datatype) sent as one lock+operation+unlock packet when "
        "it is the only operation of a lock epoch",
        OPAL_INFO_LVL_9, 8192, &c->single_op_threshold);
    register_group_uint("lock_qnodes",
        "Queue nodes per process in a window's segment for its passive-target locks: one per "
        "exclusive lock held at once plus one to wait with; past that, an exclusive lock is taken "
        "without queueing (still correct, not fair) (minimum 1)",
        OPAL_INFO_LVL_9, 4, &c->lock_qnodes);
    register_uint("lock_barge_tries",
        "How many times a writer that finds a passive-target lock taken tries to take it again "
        "(spinning, then yielding) before it joins the lock's FIFO queue.  Trying lets whoever runs "
        "take a lock that comes free (a queued writer gets it handed over even while the scheduler "
        "has it off the CPU) and spares the queue's atomics; queued writers are never overtaken, so "
        "no writer waits forever (0: always queue)",
        OPAL_INFO_LVL_9, 64, &c->lock_barge_tries);
    register_uint("lock_quiet_after",
        "After a window's lock_all, exclusive lockers announce themselves (two atomics more per lock) "
        "so that lock_all stays O(1).  A process that takes this many times the number of ranks "
        "exclusive locks without a lock_all of its own tries to end the announcing (the next lock_all "
        "then waits out the writers once, O(ranks)) (0: never)",
        OPAL_INFO_LVL_9, 64, &c->lock_quiet_after);
    register_size("cma_batch_bytes",
        "Single-copy (create/dynamic windows on one node) puts and gets of contiguous data up to this "
        "many bytes are gathered, up to 64 to one target, and issued as one process_vm_writev/readv "
        "at the next synchronization that completes them (0: every operation is its own system call; "
        "MPI_THREAD_MULTIPLE: never batched)",
        OPAL_INFO_LVL_9, 16384, &c->cma_batch_bytes);
    register_size("segment_cache_bytes",
        "A freed window's node segment up to this many bytes stays mapped (one per process) and serves "
        "the next window of the same processes on this node that fits in it: no file, mapping, page "
        "faults or broadcast at creation (0: every window maps a new segment)",
        OPAL_INFO_LVL_9, 4 * 1024 * 1024, &c->segment_cache_bytes);
    register_uint("assist_timeout",
        "MPI_Win_create/create_dynamic windows on one node: microseconds an origin waits for a target "
        "that looks inside MPI (it ran progress lately) to take a request posted in its mailbox -- a "
        "small put, get, accumulate, fetch_and_op or compare_and_swap to apply, or a relay to serve; "
        "past that, the origin takes the request back and does the operation itself (0: this process "
        "asks nothing of its targets -- no hand-overs, shared copies or relays -- but still serves its "
        "own mailbox)",
        OPAL_INFO_LVL_9, 5, &c->assist_timeout);
    register_bool("assist_oversubscribed",
        "Target assistance (assist_timeout, assist_share_bytes) also when Open MPI runs more ranks "
        "than cores (it then yields when idle): off by default, since a target is then often off "
        "its core and waiting for it costs more than single copy",
        OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY, false, &c->assist_oversubscribed);
    register_size("assist_share_bytes",
        "MPI_Win_create/create_dynamic windows on one node: a contiguous put, get or accumulate of at "
        "least this many bytes to a target that is inside MPI is copied by both processes at once, in "
        "4 chunks each takes in turn (the target process_vm_readv's a put's data, writev's a get's, "
        "reduces an accumulate's); a target computing outside MPI leaves it all to the origin.  Below "
        "about 1 MiB one process copies at cache speed, and sharing costs more than it saves.  0: the "
        "origin always copies alone",
        OPAL_INFO_LVL_9, 1024 * 1024, &c->assist_share_bytes);
    register_size("relay_piece_bytes",
        "MPI_Win_create/create_dynamic windows on one node: a group of two or more pieces to one "
        "target -- a batch of small contiguous puts or gets (osc_newrma_cma_batch_bytes) issued at a "
        "completion, or up to 1024 pieces of a non-contiguous put or get -- whose pieces are at most "
        "this many bytes on average goes, if the target is inside MPI, as one stream through shared "
        "slots (this process copies chunks in, the target out, or the reverse for a get) instead of "
        "one process_vm_writev/readv: the kernel's work per piece makes that system call dear for "
        "many small pieces, while larger pieces it moves as fast as a hand-over and a second copy.  "
        "An accumulate or get_accumulate whose target is two runs or more is relayed whatever their "
        "size (the target reduces the chunks out of the slots, instead of two system calls of all "
        "its runs); a single contiguous put, get or accumulate never is.  With more ranks than cores "
        "(without osc_newrma_assist_oversubscribed) only groups of 16 pieces or runs or more are "
        "relayed, or any group in a PSCW epoch its target granted.  0: never; needs "
        "osc_newrma_cma_batch_bytes > 0",
        OPAL_INFO_LVL_9, 256, &c->relay_piece_bytes);
    register_group_uint("post_ring_slots",
        "Most PSCW post notices a process's segment holds before posters wait for it to make "
        "progress (the window uses min(this, number of ranks)) (minimum 1)",
        OPAL_INFO_LVL_9, 64, &c->post_ring_slots);
    register_uint("post_box_origins",
        "PSCW: an MPI_Win_post to at most this many origins is published on the target's own "
        "completion line, which the origins' completions write too (one cache line each way per "
        "epoch); larger posts go through the origins' post rings (0: always the rings; at most 6)",
        OPAL_INFO_LVL_9, NEWRMA_POST_BOX_ORIGINS, &c->post_box_origins);
    register_uint("pscw_early_answers",
        "PSCW: an access epoch that issued no operation to a target answers that target's next "
        "post before it comes, while the target's post box lists the origin; at most this many "
        "posts ahead (0: every epoch waits for its post; at most 1024)",
        OPAL_INFO_LVL_9, 16, &c->pscw_early_answers);
    register_group_uint("fence_flat_ranks",
        "Fence: a window of at most this many processes on a node keeps one arrival word per "
        "process on its barrier line, written with a plain store; larger windows run a "
        "dissemination barrier, ceil(log2 n) rounds of one flag line each (0: always the "
        "dissemination barrier; at most a cache line's worth of words)",
        OPAL_INFO_LVL_9, 8, &c->fence_flat_ranks);
    register_group_uint("accumulate_stripes",
        "Accumulate locks per process in a window's segment: accumulates lock the stripes covering "
        "their bytes ((offset / granularity) mod stripes), so accumulates to different parts of a "
        "window proceed in parallel (rounded down to a power of two; minimum 1)",
        OPAL_INFO_LVL_9, 8, &c->acc_stripes);
    register_size("accumulate_granularity",
        "Default bytes covered by one accumulate lock stripe (rounded up to a power of two); a "
        "window's info key mpi_accumulate_granularity overrides it (minimum 1).  Every stripe an "
        "accumulate covers costs one atomic: a page keeps that small beside the combine itself "
        "at every size",
        OPAL_INFO_LVL_5, 4096, &c->acc_granularity);
    register_group_uint("fifo_depth",
        "Cells of each process's node-local active-message FIFO in a window's FIFO segment: how many "
        "fragments its on-node peers can send it before they keep the rest in a backlog (minimum 2)",
        OPAL_INFO_LVL_9, 64, &c->fifo_depth);
    register_size_scoped("fifo_fragment_size",
        "Bytes of one node-local FIFO cell (rounded up to a cache line; at least a 32-byte cell "
        "header and the 64-byte packet header): packets larger than a cell are sent as fragments",
        OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_GROUP, 1024, &c->fifo_fragment_size);
    register_group_uint("fifo_node_ranks",
        "Testing: treat each run of this many consecutive ranks of a window on a node as one node, the others "
        "as remote, so every window spans nodes (FIFOs and the node route inside a pretend node, UCX "
        "between them); 0: real nodes",
        OPAL_INFO_LVL_9, 0, &c->fifo_node_ranks);

    c->backing_directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    (void) mca_base_component_var_register(version, "backing_directory",
        "Directory of the files that back windows' shared segments (a local memory file system; "
        "files are unlinked as soon as every process has mapped them)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_READONLY,
        &c->backing_directory);

    c->fail_at = "";
    (void) mca_base_component_var_register(version, "fail_at",
        "Testing only: make one single copy (process_vm_readv/writev) of windows of user memory on one "
        "node fail part-way, to check that what it was part of recovers exactly: \"POINT:N\" fails the "
        "Nth copy at POINT in each process after it moved its bytes up to the remote page boundary "
        "nearest below its middle, \"POINT:N:short\" has it "
        "come back short there (the rest then moved).  POINT: share_copy_target, share_copy_origin, "
        "share_reduce_read, share_reduce_result, acc_read, acc_write, cas_read, cas_write, move "
        "(docs/errors.md, \"Failure points\"); empty: none",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY, &c->fail_at);

    register_bool("use_cma",
        "Reach MPI_Win_create and MPI_Win_create_dynamic memory of on-node peers with single-copy "
        "process_vm_readv/writev (if false, newrma declines such windows on more than one process, "
        "unless osc_newrma_force_am is set; if true but the calls are refused, such windows use "
        "the active-message path over the node's FIFOs)",
        OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_GROUP, true, &c->use_cma);

    register_bool("force_remote",
        "Treat every peer as if it were on another node: windows (except allocate_shared) use the "
        "active-message path over UCX, as between nodes (for testing that path on one machine, "
        "e.g. with UCX_TLS=tcp,self UCX_NET_DEVICES=lo)",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_GROUP, false, &c->force_remote);

    register_bool("node_lock",
        "In MPI_Win_allocate windows spanning nodes, node-local origins take a target's passive-target "
        "lock in the node's segment directly and the target's packet handler takes it on behalf of "
        "remote origins, so that lock and unlock to a peer on the node cost no message (the processes "
        "of a node agree: off if off on any; if off, such locks go through the target's packet handler)",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_GROUP, true, &c->node_lock);

    register_bool("node_fence",
        "In MPI_Win_allocate windows spanning nodes, MPI_Win_fence's barrier is hierarchical: a barrier "
        "in each node's segment, an MPI_Barrier of the nodes' leaders, a release line per node "
        "(docs/mixed-windows.md, \"Fence\"); off: an MPI_Barrier over the whole window. The same "
        "value on every process",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_GROUP, true, &c->node_fence);

    register_bool("mixed_table",
        "MPI_Win_allocate windows spanning nodes with several processes on a node call the operations and "
        "flushes through a per-target table (docs/mixed-windows.md, \"Routes and tables\"): node peers' "
        "straight to the node route, the others to the active-message path; off: every call through the "
        "active-message path, which asks the node route first (the same results, more work per call)",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL, true, &c->mixed_table);

    register_bool("native_rma",
        "Windows of the active-message path whose every peer's UCX endpoint reaches MPI_Win_allocate "
        "memory without that peer's CPU (shared memory: UCX_TLS=sm,self) lock with a word in that memory "
        "and do contiguous puts and gets and single-element 4/8-byte integer atomics with UCX RMA "
        "(truly passive targets); other windows and operations stay active messages (if false, UCX's "
        "context is made without RMA and atomics)",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_GROUP, true, &c->native_rma);

    register_bool("native_notify",
        "libmpix_newrma's notified puts (contiguous) and single-element accumulates to a target that both "
        "the window and its counters' companion window reach by the native route (osc_newrma_native_rma) "
        "go as UCX RMA: the operation, a worker fence, then a UCX atomic add on the target's counter, "
        "with no target progress (docs/notified-rma.md, \"Native route\"); false: one active message "
        "carrying data and notification",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_LOCAL, true, &c->native_notify);

    register_bool("force_am",
        "MPI_Win_create and MPI_Win_create_dynamic windows whose processes are all on one node use "
        "the active-message path, its packets carried by FIFOs in a shared segment, instead of "
        "single-copy access (process_vm_readv/writev)",
        OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY, false, &c->force_am);

    register_bool("progress_thread",
        "Serve passive-target operations of the active-message path from a thread of newrma's own, "
        "so they progress while the target computes outside MPI (otherwise they progress whenever "
        "the target is in any MPI call)",
        OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY, false, &c->progress_thread);

    register_size("ucx_eager_limit",
        "Payloads up to this many bytes go to a peer in one eager UCX active message when UCX's "
        "rendezvous to that peer runs over TCP (UCX 1.13 moves rendezvous data through the same "
        "socket after a handshake: slower up to 128 KiB on loopback, faster from 256 KiB); peers with a zero-copy "
        "rendezvous transport (shared memory, RDMA) keep UCX's own threshold. 0: UCX decides always",
        OPAL_INFO_LVL_9, 128 * 1024, &c->ucx_eager_limit);
    register_uint("peer_cache",
        "Remote window sizes and displacement units a window caches (direct-mapped by rank) for its "
        "origin-side range checks on the active-message path; the info keys same_size and "
        "same_disp_unit make the cache unnecessary (minimum 1)",
        OPAL_INFO_LVL_9, 64, &c->peer_cache);

    register_packet_counters(version);
    register_path_counters(version);
    return OMPI_SUCCESS;
}

/* The largest power of two not above `value` (> 0), at most 2^29 (far
 * more slots or stripes than memory could hold): opal_hibit takes an int. */
static unsigned int round_down_to_power_of_two(unsigned int value)
{
    return 1u << opal_hibit(value < (1u << 29) ? (int) value : 1 << 29, 30);
}

/* ------------------------------------------------------------------ */
/* init / finalize                                                     */
/* ------------------------------------------------------------------ */

static int component_init(bool enable_progress_threads, bool enable_mpi_threads)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;
    int ret;

    (void) enable_progress_threads;
    c->thread_multiple = enable_mpi_threads;
#if defined(OSC_NEWRMA_HELP_DIR)
    /* out-of-tree installs keep the help file beside the component */
    (void) opal_show_help_add_dir(OSC_NEWRMA_HELP_DIR);
#endif
    /* minimums: a window must always be able to make progress */
    if (0 == c->slots) {
        c->slots = 1;
    }
    if (0 == c->lock_qnodes) {
        c->lock_qnodes = 1;
    }
    /* a process's busy queue nodes are bits of one 64-bit word */
    if (c->lock_qnodes > 64) {
        c->lock_qnodes = 64;
    }
    if (0 == c->post_ring_slots) {
        c->post_ring_slots = 1;
    }
    if (0 == c->acc_stripes) {
        c->acc_stripes = 1;
    }
    if (c->post_box_origins > NEWRMA_POST_BOX_ORIGINS) {
        c->post_box_origins = NEWRMA_POST_BOX_ORIGINS;
    }
    if (c->pscw_early_answers > 1024) {
        c->pscw_early_answers = 1024;
    }
    /* powers of two: stripes and operation-table slots are picked with a mask */
    c->acc_stripes = round_down_to_power_of_two(c->acc_stripes);
    c->slots = round_down_to_power_of_two(c->slots);
    if (0 == c->acc_granularity) {
        c->acc_granularity = 1;
    }
    if (c->fifo_depth < 2) {
        c->fifo_depth = 2;
    }
    c->cacheline = opal_cache_line_size > 0 ? (size_t) opal_cache_line_size : 64;
    /* the arrival words share the barrier line */
    if (c->fence_flat_ranks > c->cacheline / sizeof(int64_t)) {
        c->fence_flat_ranks = (unsigned int) (c->cacheline / sizeof(int64_t));
    }
    c->single_copy_usable = c->use_cma && osc_newrma_single_copy_init();
    if (!osc_newrma_fail_arm(c->fail_at)) {
        opal_output(0, "osc/newrma: osc_newrma_fail_at \"%s\" names no failure point: ignored", c->fail_at);
    }
    NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "initialized: cache line %lu bytes, single-copy %s",
                   (unsigned long) c->cacheline, c->single_copy_usable ? "usable" : "unavailable");

    if (0 == c->peer_cache) {
        c->peer_cache = 1;
    }
    OBJ_CONSTRUCT(&c->targets, opal_free_list_t);
    ret = opal_free_list_init(&c->targets, sizeof(osc_newrma_target_t), c->cacheline,
                              OBJ_CLASS(osc_newrma_target_t), 0, 0, 16, -1, 16,
                              NULL, 0, NULL, NULL, NULL);
    if (OPAL_SUCCESS != ret) {
        return ret;
    }
    /* the active-message path's shared state */
    OBJ_CONSTRUCT(&c->am_lock, opal_mutex_t);
    OBJ_CONSTRUCT(&c->am_windows, opal_hash_table_t);
    ret = opal_hash_table_init(&c->am_windows, 16);
    if (OPAL_SUCCESS != ret) {
        return ret;
    }
    OBJ_CONSTRUCT(&c->ops, opal_free_list_t);
    ret = opal_free_list_init(&c->ops, sizeof(osc_newrma_op_t), c->cacheline, OBJ_CLASS(osc_newrma_op_t),
                              0, 0, 0, (int) c->op_pool_global, c->op_pool_global < 16 ? (int) c->op_pool_global : 16,
                              NULL, 0, NULL, NULL, NULL);
    return OPAL_SUCCESS == ret ? OMPI_SUCCESS : ret;
}

static int component_finalize(void)
{
    ompi_osc_newrma_component_t *c = &mca_osc_newrma_component;

    osc_newrma_am_fini();
    osc_newrma_shm_cache_flush();
    OBJ_DESTRUCT(&c->ops);
    OBJ_DESTRUCT(&c->am_windows);
    OBJ_DESTRUCT(&c->am_lock);
    osc_newrma_progress_fini();
    osc_newrma_relay_fini();
    OBJ_DESTRUCT(&mca_osc_newrma_component.targets);
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* query / select                                                      */
/* ------------------------------------------------------------------ */

/* Why newrma cannot serve a window, or NULL if it can. */
static const char *cannot_serve(struct ompi_communicator_t *comm, int flavor)
{
    bool remote = mca_osc_newrma_component.force_remote || ompi_group_have_remote_peers(comm->c_local_group);

    if (MPI_WIN_FLAVOR_SHARED == flavor && ompi_group_have_remote_peers(comm->c_local_group)) {
        return "MPI_Win_allocate_shared needs every process on one node";
    }
    if (remote && MPI_WIN_FLAVOR_SHARED != flavor) {
        /* the active-message path serves it, over UCX */
        return OSC_NEWRMA_HAVE_UCX || 1 == ompi_comm_size(comm)
            ? NULL : "peers are off this node and newrma was built without UCX";
    }
    /* without single-copy access, create/dynamic windows go over the node's
     * FIFOs -- unless the user turned it off to have another component
     * serve them */
    if ((MPI_WIN_FLAVOR_CREATE == flavor || MPI_WIN_FLAVOR_DYNAMIC == flavor)
        && ompi_comm_size(comm) > 1 && !mca_osc_newrma_component.use_cma
        && !mca_osc_newrma_component.force_am) {
        return "single-copy access (process_vm_readv/writev) is disabled (osc_newrma_use_cma) "
               "and create/dynamic windows need it (or osc_newrma_force_am)";
    }
    return NULL;
}

/* Open MPI 4.1 aborts selection for every component if a query returns an
 * error code, so a window newrma cannot serve is declined with -1. */
static int component_query(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                           struct ompi_communicator_t *comm, struct opal_info_t *info, int flavor)
{
    const char *reason = cannot_serve(comm, flavor);

    (void) win; (void) base; (void) size; (void) disp_unit; (void) info;
    if (NULL != reason) {
        NEWRMA_VERBOSE(MCA_BASE_VERBOSE_INFO, "declining a window of flavor %d: %s", flavor, reason);
        /* if no other osc component is open, window creation is about to
         * fail with a bare error code: say why */
        if (1 == opal_list_get_size(&ompi_osc_base_framework.framework_components)) {
            opal_show_help("help-osc-newrma.txt", "window not served", true, reason);
        }
        return -1;
    }
    return mca_osc_newrma_component.priority;
}

static int component_select(struct ompi_win_t *win, void **base, size_t size, int disp_unit,
                            struct ompi_communicator_t *comm, struct opal_info_t *info,
                            int flavor, int *model)
{
    const char *reason = cannot_serve(comm, flavor);

    if (NULL != reason) {
        opal_show_help("help-osc-newrma.txt", "window not served", true, reason);
        return OMPI_ERR_NOT_SUPPORTED;
    }
    return ompi_osc_newrma_window_create(win, base, size, disp_unit, comm, info, flavor, model);
}
