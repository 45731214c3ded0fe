#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Test nodes on one machine: N namespaced "nodes", each with its own network
# namespace (one address on a private bridge), hostname and /dev/shm, the
# rest of the file system shared so the build and the test programs are
# visible everywhere.  Open MPI's mpirun starts one orted per node through
# the launch agent below, so ranks on different nodes are remote to each
# other for Open MPI and newrma alike (docs/test-nodes.md).  Root only.
#
#   contrib/test-nodes.sh up [N]        make N nodes (default 2); idempotent:
#                                       nothing to do if exactly these are up
#   contrib/test-nodes.sh down          remove everything up made
#   contrib/test-nodes.sh status        list the nodes (exit 1 if none)
#   contrib/test-nodes.sh mpirun [--per-node K] [MPIRUN ARGS...]
#                                       mpirun across the nodes: K slots per
#                                       node (default 2), ranks placed by node
#                                       (rank r on node r mod N + 1)
#   contrib/test-nodes.sh exec NODE CMD...   run CMD on node NODE (1..N)
#   contrib/test-nodes.sh agent HOST CMD...  the launch agent mpirun calls
#                                       like ssh (plm_rsh_agent)
#   contrib/test-nodes.sh shm-dirs      print each node's /dev/shm as the
#                                       launching namespace sees it
#
# The layout (all of it under names only this script uses):
#   - network namespace newrma-hub: the bridge nrbr0, 10.213.0.1/24, and
#     the host side of every node's veth; mpirun runs here (with its own
#     hostname, newrma-head), so no node is mpirun's own node and every
#     node's ranks are started by an orted inside that node's namespaces
#   - node i: network namespace newrma-node<i> (veth nrnet0, 10.213.0.<10+i>/24,
#     lo), a UTS namespace (hostname newrma-node<i>) and a mount namespace
#     in which /dev/shm is /run/newrma-nodes/node<i>/shm (a tmpfs of its own)
#     and /sys is a sysfs of the node's network namespace (UCX lists network
#     devices there)
#   - /run/newrma-nodes: a private tmpfs holding the namespace files, the
#     nodes' /dev/shm, the hostfiles, bin/mpirun (this script's mpirun
#     subcommand for scripts that call "mpirun": PATH=/run/newrma-nodes/bin:$PATH,
#     NEWRMA_NODES_PER_NODE=K slots per node, default 2), and shared/: a mount point whose later
#     mounts (made in the launching namespace) appear on every node (tests
#     that mount a small tmpfs put it there)
# No address outside 10.213.0.0/24 is configured in any of these namespaces
# and the root namespace gains no interface and no route: traffic between
# nodes cannot leave them.  Open MPI is told the same (oob/btl tcp restricted
# to the subnet, UCX to tcp over nrnet0).
#
# How long it takes: up and down each take well under a second per node
# (a few ip and unshare calls); nothing is downloaded.
set -eu

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
state=/run/newrma-nodes
subnet=10.213.0
hub=newrma-hub
bridge=nrbr0
node_dev=nrnet0

die() { echo "test-nodes: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (namespaces, mounts, interfaces)"; }

node_count() { cat "$state/nodes" 2>/dev/null || echo 0; }
node_addr() { echo "$subnet.$((10 + $1))"; }

# Whether node i is complete: its three namespace files are bound, its veth is up.
node_ok() {
    local i=$1
    [ -e "/run/netns/newrma-node$i" ] \
        && mountpoint -q "$state/node$i/uts" && mountpoint -q "$state/node$i/mnt" \
        && mountpoint -q "$state/node$i/shm" \
        && ip -n "newrma-node$i" -br addr show "$node_dev" 2>/dev/null | grep -q "$(node_addr "$i")/"
}

all_ok() {
    local n=$1 i
    [ "$(node_count)" = "$n" ] && [ -e "/run/netns/$hub" ] && mountpoint -q "$state/head.uts" \
        && mountpoint -q "$state/shared" && [ -x "$state/bin/mpirun" ] || return 1
    for ((i = 1; i <= n; ++i)); do node_ok "$i" || return 1; done
    # no node left over from a larger set
    [ ! -e "/run/netns/newrma-node$((n + 1))" ]
}

# Kill the processes still inside one of our network namespaces (a hung
# orted or rank of an interrupted job), by pid: otherwise the namespace
# outlives its name and keeps its interfaces.
kill_inside() {
    local ns=$1 pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    sleep 0.2
}

cmd_down() {
    need_root
    local ns d
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^newrma-(node[0-9]+|hub)$/ {print $1}'); do
        kill_inside "$ns"
        ip netns del "$ns" 2>/dev/null || true   # the hub's bridge and veths go with it
    done
    if mountpoint -q "$state" 2>/dev/null; then
        for d in "$state"/node* "$state"/head.uts "$state"/shared; do
            [ -e "$d" ] || continue
            for m in "$d"/shm "$d"/mnt "$d"/uts "$d"; do
                mountpoint -q "$m" 2>/dev/null && umount -l "$m"
            done
        done
        umount -l "$state"
    fi
    [ -d "$state" ] && rmdir "$state" 2>/dev/null || true
    return 0
}

cmd_up() {
    need_root
    local n=${1:-2} i
    case "$n" in ''|*[!0-9]*) die "up N: N must be a number" ;; esac
    [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "up N: 1 <= N <= 200"
    if all_ok "$n"; then echo "test-nodes: $n nodes already up"; return 0; fi
    cmd_down
    for tool in ip nsenter unshare mountpoint; do
        command -v "$tool" > /dev/null || die "$tool is missing (contrib/install-deps.sh installs it)"
    done
    trap 'echo "test-nodes: up failed; removing what it made" >&2; cmd_down' ERR

    # the state directory: a private mount, which unshare --mount=FILE needs
    # for its namespace files (a shared one would propagate the bind into
    # the new namespace itself)
    mkdir -p "$state"
    mount -t tmpfs -o mode=0755 newrma-nodes "$state"
    mount --make-private "$state"
    # shared/: the one place whose later mounts reach the nodes (their
    # mount namespaces are made slaves below; every other mount is private)
    mkdir -p "$state/shared"
    mount --bind "$state/shared" "$state/shared"
    mount --make-shared "$state/shared"

    # the hub: bridge with the head's address; mpirun runs here
    ip netns add "$hub"
    ip -n "$hub" link set lo up
    ip -n "$hub" link add "$bridge" type bridge
    ip -n "$hub" addr add "$subnet.1/24" dev "$bridge"
    ip -n "$hub" link set "$bridge" up
    touch "$state/head.uts"
    nsenter --net="/run/netns/$hub" unshare --uts="$state/head.uts" hostname newrma-head

    for ((i = 1; i <= n; ++i)); do
        ip netns add "newrma-node$i"
        ip -n "newrma-node$i" link set lo up
        ip -n "$hub" link add "nrveth$i" type veth peer name "$node_dev" netns "newrma-node$i"
        ip -n "$hub" link set "nrveth$i" master "$bridge" up
        ip -n "newrma-node$i" addr add "$(node_addr "$i")/24" dev "$node_dev"
        ip -n "newrma-node$i" link set "$node_dev" up
        mkdir -p "$state/node$i/shm"
        mount -t tmpfs -o mode=1777 "newrma-node$i-shm" "$state/node$i/shm"
        touch "$state/node$i/uts" "$state/node$i/mnt"
        # slave propagation: mounts under shared/ arrive, nothing goes back
        nsenter --net="/run/netns/newrma-node$i" \
            unshare --uts="$state/node$i/uts" --mount="$state/node$i/mnt" --propagation slave \
            sh -ec "hostname newrma-node$i
                    mount --bind '$state/node$i/shm' /dev/shm
                    mount -t sysfs newrma-node$i-sys /sys"
    done
    # mpirun for scripts that call "mpirun" themselves: PATH=$state/bin:$PATH
    mkdir -p "$state/bin"
    printf '#!/bin/sh\n# contrib/test-nodes.sh up wrote me: mpirun across the test nodes\nexec %q mpirun --per-node "${NEWRMA_NODES_PER_NODE:-2}" "$@"\n' \
        "$self" > "$state/bin/mpirun"
    chmod +x "$state/bin/mpirun"
    echo "$n" > "$state/nodes"
    trap - ERR
    # the bridge forwards a port once it is up (no STP: at once); wait for
    # every port to say so rather than racing the first job
    for ((i = 1; i <= n; ++i)); do
        local tries=0
        until bridge -n "$hub" link show dev "nrveth$i" 2>/dev/null | grep -q 'state forwarding'; do
            tries=$((tries + 1))
            [ $tries -lt 50 ] || { cmd_down; die "the bridge does not forward node $i's port"; }
            sleep 0.1
        done
    done
    echo "test-nodes: $n nodes up: $(for ((i = 1; i <= n; ++i)); do printf 'newrma-node%d=%s ' "$i" "$(node_addr "$i")"; done)"
}

cmd_status() {
    local n i
    n=$(node_count)
    [ "$n" -gt 0 ] && all_ok "$n" || { echo "test-nodes: not up"; return 1; }
    for ((i = 1; i <= n; ++i)); do
        echo "newrma-node$i $(node_addr "$i") /dev/shm=$state/node$i/shm"
    done
}

# node index of a host name as mpirun gives it: the address or the hostname
node_of() {
    local host=$1 n i
    n=$(node_count)
    for ((i = 1; i <= n; ++i)); do
        if [ "$host" = "$(node_addr "$i")" ] || [ "$host" = "newrma-node$i" ]; then echo "$i"; return 0; fi
    done
    return 1
}

# CMD... in every namespace of node i
in_node() {
    local i=$1; shift
    exec nsenter --net="/run/netns/newrma-node$i" --uts="$state/node$i/uts" --mount="$state/node$i/mnt" -- "$@"
}

cmd_agent() {
    [ $# -ge 2 ] || die "agent HOST CMD..."
    local host=$1 i; shift
    i=$(node_of "$host") || die "agent: $host is not a test node (nodes up: $(node_count))"
    # like ssh, the command is one string for a shell: plm_rsh quotes its
    # orted arguments for that shell
    in_node "$i" /bin/sh -c "$*"
}

cmd_exec() {
    [ $# -ge 2 ] || die "exec NODE CMD..."
    local i=$1; shift
    [ -e "/run/netns/newrma-node$i" ] || die "exec: no node $i"
    in_node "$i" "$@"
}

cmd_shm_dirs() {
    local n i
    n=$(node_count)
    for ((i = 1; i <= n; ++i)); do echo "$state/node$i/shm"; done
}

# mpirun of this machine, not a wrapper on PATH that calls this script
real_mpirun() {
    local dir
    IFS=: read -r -a dirs <<< "$PATH"
    for dir in "${dirs[@]}"; do
        [ "$dir" = "$state/bin" ] && continue
        [ -x "$dir/mpirun" ] && { echo "$dir/mpirun"; return 0; }
    done
    die "no mpirun on PATH"
}

cmd_mpirun() {
    local per_node=2 n i hostfile
    if [ "${1:-}" = --per-node ]; then per_node=$2; shift 2; fi
    n=$(node_count)
    [ "$n" -gt 0 ] && all_ok "$n" || die "the nodes are not up (contrib/test-nodes.sh up)"
    hostfile=$state/hosts.$per_node
    if [ ! -e "$hostfile" ]; then
        for ((i = 1; i <= n; ++i)); do echo "$(node_addr "$i") slots=$per_node"; done > "$hostfile.new"
        mv "$hostfile.new" "$hostfile"
    fi
    # Everything through the environment, so that the same parameters on
    # the command line win instead of being rejected as given twice.
    # Hosts: the hostfile (mpirun's own node is not in it: no ranks there).
    export OMPI_MCA_orte_default_hostfile=$hostfile
    # one orted per node, each started by mpirun itself through the agent
    # (a tree spawn would call the agent from inside a node, which cannot
    # see the other nodes' namespace files)
    export OMPI_MCA_plm_rsh_agent="$self agent" OMPI_MCA_plm_rsh_no_tree_spawn=1
    # rank r on node r mod N + 1; every node's hwloc sees the same cores, so
    # binding would put each node's first rank on core 0
    export OMPI_MCA_rmaps_base_mapping_policy=node OMPI_MCA_hwloc_base_binding_policy=none
    # traffic on the bridge only; UCX's shared-memory transports would take
    # the nodes for one machine (it sees one host), so tcp over nrnet0
    export OMPI_MCA_oob_tcp_if_include=$subnet.0/24 OMPI_MCA_btl_tcp_if_include=$subnet.0/24
    export UCX_TLS=tcp,self UCX_NET_DEVICES=$node_dev
    # The nodes share this machine's cores, but each orted sees every core
    # and only its own ranks, so none can tell that the job has more ranks
    # than cores; what mpirun does by itself on one node, it is told here:
    # idle waits yield (without it a rank spinning in a wait keeps the peer
    # whose progress it waits for off the core for a whole time slice).
    if [ $((n * per_node)) -gt "$(nproc)" ]; then
        export OMPI_MCA_mpi_yield_when_idle=1
    fi
    exec nsenter --net="/run/netns/$hub" --uts="$state/head.uts" -- "$(real_mpirun)" "$@"
}

case "${1:-}" in
    up) shift; cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    agent) shift; cmd_agent "$@" ;;
    exec) shift; cmd_exec "$@" ;;
    mpirun) shift; cmd_mpirun "$@" ;;
    shm-dirs) cmd_shm_dirs ;;
    -h|--help|'') awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" | sed -n '8,$p' ;;
    *) die "unknown subcommand $1 (see --help)" ;;
esac
