#!/bin/sh
# tests/fake/check_fork.sh: after test_fork (children forked, each calling a GEMM and exiting), the stats table is the parent's alone; with a %p in OZCRT_STATS_FILE each child writes its own, of its own call.
# usage: check_fork.sh TEST_FORK STATS_FILE  (environment: the shim preloaded, as the route suite)
set -u
prog=$1
stats=$2
# dgemm_calls FILE: the cublasDgemm_v2 row's calls
dgemm_calls() { awk '$1 == "cublasDgemm_v2" { print $2 }' "$1"; }

rm -f "$stats"
out=$(OZCRT_STATS=1 OZCRT_STATS_FILE="$stats" "$prog") || { echo "$out"; echo "FAIL: test_fork failed"; exit 1; }
echo "$out"
n=$(printf '%s\n' "$out" | sed -n 's/^parent calls \([0-9]*\)$/\1/p')
[ -n "$n" ] || { echo "FAIL: no call count"; exit 1; }
[ -s "$stats" ] || { echo "FAIL: the parent wrote no stats table"; exit 1; }
cat "$stats"
[ "$(dgemm_calls "$stats")" = "$n" ] || { echo "FAIL: the table does not count exactly the parent's $n calls"; exit 1; }
echo "PASS: $n parent calls in the table, children wrote nothing and did not hang"

# a file per process: the parent's with its calls, one a child with its one call
dir=$stats.per-process
rm -rf "$dir"
mkdir -p "$dir"
out=$(OZCRT_STATS=1 OZCRT_STATS_FILE="$dir/stats.%p.txt" "$prog") || { echo "$out"; echo "FAIL: test_fork (%p) failed"; exit 1; }
n=$(printf '%s\n' "$out" | sed -n 's/^parent calls \([0-9]*\)$/\1/p')
pid=$(printf '%s\n' "$out" | sed -n 's/^parent pid \([0-9]*\)$/\1/p')
[ -n "$n" ] && [ -n "$pid" ] || { echo "$out"; echo "FAIL: no call count or pid (%p)"; exit 1; }
[ "$(dgemm_calls "$dir/stats.$pid.txt" 2>/dev/null)" = "$n" ] ||
    { echo "FAIL: stats.$pid.txt does not count exactly the parent's $n calls"; exit 1; }
children=0
for f in "$dir"/stats.*.txt; do
    [ "$f" = "$dir/stats.$pid.txt" ] && continue
    [ "$(dgemm_calls "$f")" = 1 ] || { cat "$f"; echo "FAIL: $f does not count its child's one call"; exit 1; }
    children=$((children + 1))
done
[ "$children" -eq 50 ] || { echo "FAIL: $children children's tables, want 50"; exit 1; }
echo "PASS: stats.%p.txt: the parent's $n calls in its own, each of the 50 children its one call in its own"
