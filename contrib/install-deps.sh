#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Install what a fresh Debian 12 machine lacks to build and test newrma (and to
# plot the benchmarks: gnuplot-nox; to check memory: valgrind; for the test
# nodes of contrib/test-nodes.sh: iproute2, and util-linux's nsenter and
# unshare, which every Debian system has).
# Idempotent: does nothing when everything is already there.
set -eu
packages="libopenmpi-dev openmpi-bin libucx-dev libhwloc-dev autoconf automake libtool make gcc bc gnuplot-nox valgrind iproute2 util-linux"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
fi
