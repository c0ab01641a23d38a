#!/bin/sh
# tests/gpu/fuzz/fuzz.sh: the differential fuzzer on the GPU machine. fuzz_client runs COUNT calls
# of seed SEED natively, then under libozcrt.so in each mode with every call it takes emulated
# (thresholds and the speed rule off), and fuzz_compare.py compares each run with the native one;
# the shim's stats say how many calls were emulated. Prints the seed (fuzz_client SEED COUNT OUT
# --only INDEX replays a call), one summary line per mode.
#
#   tests/gpu/fuzz/fuzz.sh BUILD_DIR [COUNT [SEED]]      SEED default: drawn now
set -u
build=$(cd "${1:?usage: fuzz.sh BUILD_DIR [COUNT [SEED]]}" && pwd)
count=${2:-2000}
seed=${3:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
here=$(cd "$(dirname "$0")" && pwd)
client=$build/tests/gpu/fuzz/fuzz_client
out=$build/fuzz-gpu
mkdir -p "$out"
echo "fuzz: seed $seed, $count calls"
"$client" "$seed" "$count" "$out/native.txt" || { echo "FAIL: the native run"; exit 1; }
rc=0
for mode in phase22 ozaki2; do
    env OZCRT_MODE=$mode OZCRT_BITS=53 OZCRT_MIN_M=0 OZCRT_MIN_N=0 OZCRT_MIN_K=0 OZCRT_MIN_SPEEDUP=0 \
        OZCRT_STATS=1 OZCRT_STATS_FILE="$out/stats-$mode.txt" \
        LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" \
        "$client" "$seed" "$count" "$out/$mode.txt" || { echo "FAIL: the $mode run"; rc=1; continue; }
    python3 "$here/fuzz_compare.py" "$out/native.txt" "$out/$mode.txt" --mode $mode || rc=1
    # emulated calls among those the shim saw (the stats table's columns: calls, emulated)
    awk -v mode=$mode '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { c += $2; e += $3 }
        END { printf "fuzz %s: %d of %d calls emulated\n", mode, e, c }' "$out/stats-$mode.txt"
done
[ $rc -eq 0 ] && echo "fuzz: passed (seed $seed)" || echo "fuzz: failed (seed $seed)"
exit $rc
