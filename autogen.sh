#!/bin/sh
# Generate ./configure for the out-of-tree build.
set -e
cd "$(dirname "$0")"
mkdir -p config
autoreconf --install --force
