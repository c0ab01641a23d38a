#!/bin/sh
# tests/gpu/shim/legacy.sh: a program on the legacy handle-less API (cublas.h) plainly, then under the shim in
# both modes and in shadow mode: its results within each mode's tolerance (legacy_client.c), and the stats
# show its cublasDgemm calls emulated (three products), none failed.
#
#   tests/gpu/shim/legacy.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: legacy.sh BUILD_DIR}" && pwd)
client=$build/tests/gpu/shim/legacy_client
out=$build/shim-gpu
mkdir -p "$out"
rc=0
echo "-- native"
env -u LD_PRELOAD "$client" || rc=1
for run in "phase22" "ozaki2" "phase22 OZCRT_COMPARE=1"; do
    set -- $run
    mode=$1
    shift
    echo "-- under the shim: OZCRT_MODE=$mode $*"
    rm -f "$out/legacy.stats"
    env OZCRT_MODE=$mode "$@" OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 OZCRT_STATS_FILE="$out/legacy.stats" \
        LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" "$client" || rc=1
    cat "$out/legacy.stats" 2>/dev/null
    awk '$1 == "cublasDgemm" { found = 1; ok = ($3 == 3 && $4 == 0) } END { exit !(found && ok) }' "$out/legacy.stats" \
        || { echo "FAIL: the legacy cublasDgemm calls were not all emulated (OZCRT_MODE=$mode $*)"; rc=1; }
done
[ $rc -eq 0 ] && echo "legacy API: passed" || echo "legacy API: failed"
exit $rc
