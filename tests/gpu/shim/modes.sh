#!/bin/sh
# tests/gpu/shim/modes.sh: a client plainly, then under the shim in each mode and in shadow mode: its results within each mode's tolerance (the client's own checks), and its entry point's stats row as expected (scripts/gpu-check runs each). Last line passed or failed.
#
#   tests/gpu/shim/modes.sh BUILD_DIR legacy|lt
#
# legacy: legacy_client.c, a program on the legacy handle-less API (cublas.h),
#         in phase22, ozaki2 and phase22 shadow mode: the stats row
#         cublasDgemm shows its three products emulated, none failed.
# lt:     lt_client.c (FP64 products through cublasLtMatmul, an FP32 one,
#         cuBLAS calls beside), in phase22, ozaki2 and both in shadow mode:
#         the row cublasLtMatmul shows 5 FP64 calls, 4 emulated, 1
#         lt-unsupported, none failed (the FP32 call and cuBLAS's own
#         cuBLASLt calls are not counted).
set -u
build=$(cd "${1:?usage: modes.sh BUILD_DIR legacy|lt}" && pwd)
check=${2:?usage: modes.sh BUILD_DIR legacy|lt}
out=$build/shim-gpu
mkdir -p "$out"
# row_ok STATS: the stats row is as expected
case $check in
legacy)
    client=$build/tests/gpu/shim/legacy_client label="legacy API"
    runs="phase22|ozaki2|phase22 OZCRT_COMPARE=1"
    want="the legacy cublasDgemm calls were not all emulated"
    row_ok() { awk '$1 == "cublasDgemm" { found = 1; ok = ($3 == 3 && $4 == 0) } END { exit !(found && ok) }' "$1"; }
    ;;
lt)
    client=$build/tests/gpu/shim/lt_client label="cuBLASLt"
    runs="phase22|ozaki2|phase22 OZCRT_COMPARE=1|ozaki2 OZCRT_COMPARE=1"
    want="cublasLtMatmul: not 5 calls, 4 emulated, 1 lt-unsupported"
    row_ok() {
        awk '$1 == "cublasLtMatmul" { found = 1; ok = ($2 == 5 && $3 == 4 && $4 == 0 && $7 == "lt-unsupported=1") }
             END { exit !(found && ok) }' "$1"
    }
    ;;
*)
    echo "modes.sh: unknown check $check" >&2
    exit 2
    ;;
esac
stats=$out/$check.stats
rc=0
echo "-- native"
env -u LD_PRELOAD "$client" || rc=1
old_ifs=$IFS
IFS='|'
set -- $runs
IFS=$old_ifs
for run in "$@"; do
    # shellcheck disable=SC2086 # a mode and its extra assignments
    set -- $run
    mode=$1
    shift
    echo "-- under the shim: OZCRT_MODE=$mode $*"
    rm -f "$stats"
    env OZCRT_MODE=$mode "$@" OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 OZCRT_STATS_FILE="$stats" \
        LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" "$client" || rc=1
    cat "$stats" 2>/dev/null
    row_ok "$stats" || { echo "FAIL: $want (OZCRT_MODE=$mode $*)"; rc=1; }
done
[ $rc -eq 0 ] && echo "$label: passed" || echo "$label: failed"
exit $rc
