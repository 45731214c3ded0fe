#!/bin/sh
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# Generate ./configure for the out-of-tree build.
set -e
cd "$(dirname "$0")"
mkdir -p config
autoreconf --install --force
