#!/usr/bin/env bash
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
# The excerpt of a full bench/rma_bench.sh run that docs/performance.md
# quotes: the floors, every sync table, the 8-byte operation rows of each
# flavor with the best other component named (2 and 4 ranks), bandwidth at
# 2 ranks, window creation and memory.
#
#   bench/perf_excerpt.sh [TABLES]     (default build/bench/rma/tables.txt)
set -eu
tables=${1:-$(cd "$(dirname "$0")/.." && pwd)/build/bench/rma/tables.txt}
[ -r "$tables" ] || { echo "no tables: $tables (run bench/rma_bench.sh first)" >&2; exit 1; }

# print the tables whose header line matches $1, each with its rows
section() {
    awk -v re="$1" '/^$/ { on = 0 } $0 ~ re { if (n++) print ""; on = 1 } on' "$tables"
}

echo '```'
awk '/^machine floors/ { on = 1 } /^$/ && on { exit } on' "$tables"
echo
section '^sync, (allocate|create|dynamic), [24] ranks'
echo '```'
echo
echo '8-byte operations with each synchronization, newrma against the best other component of the'
echo 'row (the other components of the run; "-" where one refused the window):'
echo
echo '```'
for np in 2 4; do
    for flavor in allocate create dynamic; do
        section "^op\\+sync, $flavor, $np ranks" | awk -v f="$flavor" -v np="$np" '
            NR == 1 {   # the components: the header words after "(us)", up to "newrma/best"
                for (i = 1; i <= NF && $i != "(us)"; i++) ;
                n = 0
                for (i++; i <= NF && $i != "newrma/best"; i++) comp[++n] = $i
                printf "%s, %d ranks, 8 B (us)    newrma   best other      newrma/best\n", f, np; next
            }
            $3 == "8B" {   # label: 3 words, then one value per component, newrma first
                best = ""; name = ""
                for (j = 2; j <= n; j++) {
                    v = $(3 + j)
                    if (v != "-" && (best == "" || v + 0 < best + 0)) { best = v; name = comp[j] }
                }
                if (best == "" || $4 == "-") next
                printf "%-12s %-5s %9s %9s %-6s %8.2f\n", $1, $2, $4, best, name, $4 / best
            }'
        echo
    done
done
echo '```'
echo
echo 'Bandwidth, 2 ranks (many operations, one flush; MB/s, higher is better):'
echo
echo '```'
section '^bandwidth, (allocate|create|dynamic), 2 ranks'
echo '```'
echo
echo 'Window creation and memory (P ranks on 2 cores):'
echo
echo '```'
section '^(window create|node memory|malloc heap|shared memory mapped|resident memory)'
echo '```'
