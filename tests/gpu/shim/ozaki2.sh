#!/bin/sh
# tests/gpu/shim/ozaki2.sh: PyTorch and CuPy clients under the shim in the ozaki2 mode (thresholds 0):
# results at FP64 accuracy, and the stats show the calls emulated, none failed.
#
#   tests/gpu/shim/ozaki2.sh BUILD_DIR [complex]
#
# Default: the float64 clients (ozaki2_clients.py) in the mode's default, automatic precision.
# complex: the complex128 clients (ozaki2_complex_clients.py), the same default (OZCRT_BITS
# overrides it in both: e.g. 53).
set -u
build=$(cd "${1:?usage: ozaki2.sh BUILD_DIR [complex]}" && pwd)
what=${2:-real}
here=$(cd "$(dirname "$0")" && pwd)
out=$build/shim-gpu
mkdir -p "$out"
stats=$out/ozaki2-$what.stats
rm -f "$stats"
if [ "$what" = complex ]; then
    script=ozaki2_complex_clients.py bits=${OZCRT_BITS:-auto}
    eps="cublasZgemm_v2 cublasZgemmStridedBatched cublasGemmEx cublasGemmStridedBatchedEx"
else
    script=ozaki2_clients.py bits=${OZCRT_BITS:-auto}
    eps="cublasDgemm_v2 cublasDgemmStridedBatched cublasGemmEx cublasGemmStridedBatchedEx cublasLtMatmul"
fi
OZCRT_MODE=ozaki2 OZCRT_BITS=$bits OZCRT_MIN_M=0 OZCRT_MIN_N=0 OZCRT_MIN_K=0 OZCRT_MIN_SPEEDUP=0 OZCRT_STATS=1 \
    OZCRT_STATS_FILE="$stats" LD_PRELOAD="$build/interpose/libozcrt.so${LD_PRELOAD:+:$LD_PRELOAD}" \
    "${PYTHON:-python3}" "$here/$script"
rc=$?
cat "$stats" 2>/dev/null
# the entry points these clients reach (field-notes.md): each emulated, none failed
for ep in $eps; do
    awk -v ep="$ep" '$1 == ep { found = 1; ok = ($3 > 0 && $4 == 0) } END { exit !(found && ok) }' "$stats" \
        || { echo "FAIL: $ep not emulated in the ozaki2 mode (or failed)"; rc=1; }
done
# automatic precision: the GPU counted a plan for every product of the auto calls (a call's batch
# items are products each: at least as many plans as calls)
case $bits in auto*)
    kind=real z=""
    [ "$what" = complex ] && kind=complex z="-complex"
    calls=$(sed -n "s/.* ozaki2$z(auto)=\([0-9]*\).*/\1/p" "$stats")
    plans=$(grep "^automatic plans of $kind products" "$stats" | tr ',' '\n' | sed -n 's/.*[=:] *\([0-9]*\)$/\1/p' |
        awk '{ s += $1 } END { print s + 0 }')
    echo "automatic precision: ${calls:-0} calls, $plans plans counted on the GPU"
    [ "${calls:-0}" -gt 0 ] && [ "$plans" -ge "${calls:-0}" ] ||
        { echo "FAIL: fewer $kind plans counted on the GPU ($plans) than auto calls (${calls:-0})"; rc=1; } ;;
esac
[ $rc -eq 0 ] && echo "ozaki2 $what clients: passed" || echo "ozaki2 $what clients: failed"
exit $rc
