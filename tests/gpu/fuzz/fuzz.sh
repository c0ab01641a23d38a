#!/bin/sh
# tests/gpu/fuzz/fuzz.sh: the differential fuzzer on the GPU machine. fuzz_client runs COUNT calls
# of seed SEED natively, then under libozcrt.so in each mode with every call it takes emulated
# (thresholds and the speed rule off), and fuzz_compare.py compares each run with the native one;
# the shim's stats say how many calls were emulated: phase22, ozaki2 in its default (automatic
# precision) and ozaki2 at the fixed 53 bits (FUZZ_RUNS="phase22 ozaki2" picks some). Prints the seed (fuzz_client SEED COUNT OUT
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
# the clients' own output (cuBLAS's messages on bad arguments) goes to a log beside the runs
"$client" "$seed" "$count" "$out/native.txt" >"$out/native.log" 2>&1 \
    || { tail -20 "$out/native.log"; echo "FAIL: the native run"; exit 1; }
rc=0
for run in ${FUZZ_RUNS:-phase22 ozaki2 ozaki2:53}; do
    mode=${run%%:*}
    case $run in *:*) bits=${run#*:} ;; *) bits=auto ;; esac
    tag=$(echo "$run" | tr : -)
    env OZCRT_MODE=$mode OZCRT_BITS=$bits OZCRT_MIN_M=0 OZCRT_MIN_N=0 OZCRT_MIN_K=0 OZCRT_MIN_SPEEDUP=0 \
        OZCRT_STATS=1 OZCRT_STATS_FILE="$out/stats-$tag.txt" \
        LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" \
        "$client" "$seed" "$count" "$out/$tag.txt" >"$out/$tag.log" 2>&1 \
        || { tail -20 "$out/$tag.log"; echo "FAIL: the $run run"; rc=1; continue; }
    python3 "$here/fuzz_compare.py" "$out/native.txt" "$out/$tag.txt" --mode $mode --max-report ${FUZZ_REPORT:-20} \
        >"$out/compare-$tag.txt" || rc=1
    cat "$out/compare-$tag.txt"
    # emulated calls (the stats table's columns: calls, emulated; a grouped call counts once a group)
    # against the calls that succeeded natively (phase22: the real ones; complex products are ozaki2's)
    valid=$(sed -n 's/.*(\([0-9]*\) succeeded natively, \([0-9]*\) of them real).*/\1 \2/p' "$out/compare-$tag.txt")
    awk -v run=$run -v mode=$mode -v valid="$valid" '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { c += $2; e += $3 }
        END { split(valid, v, " "); n = mode == "phase22" ? v[2] : v[1]
              printf "fuzz %s: %d of %d calls emulated; %d of the %d %scalls that succeeded natively (%.0f%%)\n",
                     run, e, c, e, n, mode == "phase22" ? "real " : "", n ? 100 * e / n : 0 }' "$out/stats-$tag.txt"
done
[ $rc -eq 0 ] && echo "fuzz: passed (seed $seed)" || echo "fuzz: failed (seed $seed)"
exit $rc
