#!/bin/sh
# tests/fake/check_per_process.sh: OZCRT_STATS_FILE and OZCRT_LOG_FILE with %p (process id), %h (host name), %%:
# several processes under the shim at once, each table and log in its own file.
# usage: check_per_process.sh PROC_CLIENT OUT_DIR  (environment: the shim preloaded, as the route suite)
set -u
client=$1
dir=$2
fail() { echo "FAIL: $*"; ls -l "$dir"; exit 1; }
rm -rf "$dir"
mkdir -p "$dir" || exit 1
host=$(hostname 2>/dev/null || uname -n)
export OZCRT_STATS=yes OZCRT_LOG=1
export OZCRT_STATS_FILE="$dir/stats.%p.txt" OZCRT_LOG_FILE="$dir/log.%h.%p.100%%.txt"
procs="1 2 3 4 5"
for n in $procs; do
    "$client" "$n" > "$dir/out.$n" 2>&1 &
done
wait
for n in $procs; do
    pid=$(sed -n "s/^pid \([0-9]*\) calls $n\$/\1/p" "$dir/out.$n")
    [ -n "$pid" ] || fail "process $n: $(cat "$dir/out.$n")"
    stats="$dir/stats.$pid.txt"
    [ -s "$stats" ] || fail "no table in $stats"
    awk -v n="$n" '$1 == "cublasDgemm_v2" { found = 1; ok = $2 == n } END { exit !(found && ok) }' "$stats" ||
        { cat "$stats"; fail "$stats does not count exactly process $pid's $n calls"; }
    log="$dir/log.$host.$pid.100%.txt"
    [ -s "$log" ] || fail "no log $log"
    lines=$(grep -c '^ozcrt: cublasDgemm_v2 ' "$log")
    [ "$lines" = "$n" ] || { cat "$log"; fail "$log has $lines call lines, not process $pid's $n"; }
    echo "ok: process $pid ($n calls): $stats, $log"
done
# one table and one log per process, nothing with %p left in a name
[ "$(ls "$dir" | grep -c '^stats\.')" = 5 ] || fail "not 5 tables"
[ "$(ls "$dir" | grep -c '^log\.')" = 5 ] || fail "not 5 logs"
ls "$dir" | grep -q '%p\|%h' && fail "a name was not expanded"
echo "PASS: 5 processes, each table and log in its own file"
