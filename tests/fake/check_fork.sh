#!/bin/sh
# tests/fake/check_fork.sh: after test_fork (children forked, each calling a GEMM and exiting), the stats table is the parent's alone.
# usage: check_fork.sh TEST_FORK STATS_FILE  (environment: the shim preloaded, as the route suite)
set -u
prog=$1
stats=$2
rm -f "$stats"
out=$(OZCRT_STATS=1 OZCRT_STATS_FILE="$stats" "$prog") || { echo "$out"; echo "FAIL: test_fork failed"; exit 1; }
echo "$out"
n=$(printf '%s\n' "$out" | sed -n 's/^parent calls \([0-9]*\)$/\1/p')
[ -n "$n" ] || { echo "FAIL: no call count"; exit 1; }
[ -s "$stats" ] || { echo "FAIL: the parent wrote no stats table"; exit 1; }
cat "$stats"
awk -v n="$n" '$1 == "cublasDgemm_v2" { found = 1; ok = $2 == n } END { exit !(found && ok) }' "$stats" ||
    { echo "FAIL: the table does not count exactly the parent's $n calls"; exit 1; }
echo "PASS: $n parent calls in the table, children wrote nothing and did not hang"
