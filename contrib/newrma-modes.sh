#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# The run modes shared by tests/run.sh and contrib/mpich-rma-suite.sh
# (sourced).  newrma_mode_args MODE prints the mpirun arguments of a mode:
#   default         newrma's defaults, peers on one node (direct and
#                   single-copy paths)
#   minimum         every pool, slot array, queue, ring, stripe count and
#                   cache at its minimum MCA value: slower, must never deadlock
#                   (PSCW post box at 1 origin, not 0: posts to one origin
#                   take the box, larger ones the rings, so epochs mix both;
#                   fence arrival words at 2 ranks, the dissemination
#                   barrier above)
#   remote          osc_newrma_force_remote: every peer remote, the
#                   active-message path over UCX's TCP transport on loopback
#   remote-minimum  both
#   remote-sm       every peer remote, over UCX's shared-memory transports
#   fifo            osc_newrma_force_am: create/dynamic windows on one node
#                   take the active-message path, over the node-local FIFOs
#   fifo-minimum    fifo and minimum (FIFOs of 2 cells: constant back-pressure)
# and the node modes: real (namespaced) nodes on this machine, made by
# contrib/test-nodes.sh (root; docs/test-nodes.md), mpirun starting one
# orted per node, ranks placed by node (rank r on node r mod 2 + 1); each
# has a fixed rank count (newrma_mode_nodes), peers on the other node take
# the active-message path over UCX tcp on the nodes' bridge, peers on the
# same node the node paths:
#   nodes2x2        2 nodes x 2 ranks: ranks 0,2 on node 1, 1,3 on node 2
#   nodes2x1        2 nodes x 1 rank: every peer on the other node
newrma_modes="default minimum remote remote-minimum remote-sm fifo fifo-minimum"
# tests/run.sh's modes unless told (--mode, --all-modes): all but fifo, which
# runs the same newrma code as fifo-minimum with larger FIFOs, and remote-sm
# (the native route; CI runs it at 3 ranks on its own); this keeps CI for two
# Open MPI versions under an hour (README, "Tests")
newrma_default_modes="default minimum remote remote-minimum fifo-minimum"
newrma_node_modes="nodes2x2 nodes2x1"
# "NODES RANKS_PER_NODE" of a node mode; fails for the other modes
newrma_mode_nodes() {
    case "$1" in
        nodes2x2) echo "2 2" ;;
        nodes2x1) echo "2 1" ;;
        *) return 1 ;;
    esac
}
newrma_minimum_args="--mca osc_newrma_slots 1 --mca osc_newrma_lock_qnodes 1 --mca osc_newrma_post_ring_slots 1 \
 --mca osc_newrma_op_pool_local 1 --mca osc_newrma_op_pool_global 1 --mca osc_newrma_target_pool_local 1 \
 --mca osc_newrma_target_pool_global 1 --mca osc_newrma_peer_cache 1 --mca osc_newrma_piggyback_threshold 1 \
 --mca osc_newrma_accumulate_stripes 1 --mca osc_newrma_fifo_depth 2 --mca osc_newrma_segment_cache_bytes 0 --mca osc_newrma_lock_quiet_after 1 --mca osc_newrma_assist_timeout 1 --mca osc_newrma_post_box_origins 1 --mca osc_newrma_fence_flat_ranks 2 --mca osc_newrma_pscw_early_answers 1"
newrma_remote_args="--mca osc_newrma_force_remote 1 -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo"
newrma_fifo_args="--mca osc_newrma_force_am 1"
newrma_mode_args() {
    case "$1" in
        default) ;;
        minimum) echo "$newrma_minimum_args" ;;
        remote) echo "$newrma_remote_args" ;;
        remote-minimum) echo "$newrma_remote_args $newrma_minimum_args" ;;
        remote-sm) echo "--mca osc_newrma_force_remote 1 -x UCX_TLS=sm,self" ;;
        fifo) echo "$newrma_fifo_args" ;;
        fifo-minimum) echo "$newrma_fifo_args $newrma_minimum_args" ;;
        # contrib/test-nodes.sh's mpirun gives the placement and transports
        nodes2x2|nodes2x1) ;;
        *) echo "unknown mode $1 (one of: $newrma_modes $newrma_node_modes)" >&2; return 2 ;;
    esac
}
# The mpirun arguments of a mode that runs on this machine as one node: the
# scripts that start mpirun themselves (checkers, soaks) refuse a node mode
# instead of running it on one node under its name.
newrma_one_node_mode_args() {
    if newrma_mode_nodes "$1" > /dev/null; then
        echo "mode $1 runs across test nodes: only tests/run.sh and contrib/mpich-rma-suite.sh run it" >&2
        return 2
    fi
    newrma_mode_args "$1"
}
