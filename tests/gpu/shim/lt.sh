#!/bin/sh
# tests/gpu/shim/lt.sh: a cuBLASLt program (lt_client.c: FP64 products through cublasLtMatmul, an FP32 one, cuBLAS
# calls beside) plainly, then under the shim in both modes and in shadow mode: its results within each mode's
# tolerance, and the stats row cublasLtMatmul shows 5 FP64 calls, 4 emulated, 1 lt-unsupported, none failed
# (the FP32 call and cuBLAS's own cuBLASLt calls are not counted).
#
#   tests/gpu/shim/lt.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: lt.sh BUILD_DIR}" && pwd)
client=$build/tests/gpu/shim/lt_client
out=$build/shim-gpu
mkdir -p "$out"
rc=0
echo "-- native"
env -u LD_PRELOAD "$client" || rc=1
for run in "phase22" "ozaki2" "phase22 OZCRT_COMPARE=1" "ozaki2 OZCRT_COMPARE=1"; do
    set -- $run
    mode=$1
    shift
    echo "-- under the shim: OZCRT_MODE=$mode $*"
    rm -f "$out/lt.stats"
    env OZCRT_MODE=$mode "$@" OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 OZCRT_STATS_FILE="$out/lt.stats" \
        LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" "$client" || rc=1
    cat "$out/lt.stats" 2>/dev/null
    awk '$1 == "cublasLtMatmul" { found = 1; ok = ($2 == 5 && $3 == 4 && $4 == 0 && $7 == "lt-unsupported=1") }
         END { exit !(found && ok) }' "$out/lt.stats" \
        || { echo "FAIL: cublasLtMatmul: not 5 calls, 4 emulated, 1 lt-unsupported (OZCRT_MODE=$mode $*)"; rc=1; }
done
[ $rc -eq 0 ] && echo "cuBLASLt: passed" || echo "cuBLASLt: failed"
exit $rc
